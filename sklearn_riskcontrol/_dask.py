"""What the library's parallel calls do differently when joblib's backend is Dask's.

Both keep down the bytes that pass through the Dask scheduler. With the smaller results of
:mod:`._parcel`, on 2 local workers they took ``rautoeval_select`` from 1.27-1.42x to
1.51x and the model selector (128 candidates) from 1.34x to 1.54x (CHANGELOG.md and
benchmarks/RESULTS.md):

* :func:`sent_once`: arguments shared by every task go to every worker once, before the tasks.
* :func:`direct_results`: with a cluster started by this process, results come straight from
  the workers instead of through the scheduler.
"""

import numbers
import threading
from contextlib import contextmanager

from joblib.parallel import get_active_backend

__all__ = ["dask_client", "direct_results", "sent_once"]

_direct_lock = threading.Lock()
_direct_users = {}  # id(client) -> number of calls running with direct results


def dask_client():
    """The ``distributed.Client`` of the active joblib backend when it is Dask's, else None."""
    backend, _ = get_active_backend()
    if type(backend).__name__ != "DaskDistributedBackend":
        return None
    return getattr(backend, "client", None)


def sent_once(client, shared):
    """``shared``, with its non-scalar arguments replaced by futures of copies on every worker.

    Otherwise joblib scatters only the objects Dask's ``sizeof`` deems large, to one worker,
    and every task's message carries the others (a tester template with its fitted
    auto-evaluator: the scheduler, in the calling process, unpickles and pickles it again for
    each task). Measured on 2 workers: the model selector's speed-up went from 1.43x to 1.50x.
    """
    if client is None:
        return shared
    send = [i for i, arg in enumerate(shared)
            if not isinstance(arg, (numbers.Number, str, bytes, type(None)))]
    if not send:
        return shared
    futures = client.scatter([shared[i] for i in send], broadcast=True, hash=False)
    out = list(shared)
    for i, future in zip(send, futures):
        out[i] = future
    return tuple(out)


@contextmanager
def direct_results(client):
    """Fetch results from the workers directly for the duration of the call, when the client's
    cluster was started by this process (``Client(LocalCluster(...))``, ``Client()``) and its
    ``direct_to_workers`` was left unset.

    Dask's default relays results through the scheduler (workers may be unreachable from a
    remote client): that costs the worker an extra in-band pickle copy and the calling process
    three passes over the bytes. Local workers are always reachable. Measured on 2 workers
    (median of 9): ``rautoeval_select`` 1.34x -> 1.43x, the model selector 1.41x -> 1.46x.
    """
    key = id(client)
    with _direct_lock:  # calls running at once in threads: the last to finish unsets it
        ours = client is not None and _is_local(client) and (
            key in _direct_users or client.direct_to_workers is None)
        if ours:
            _direct_users[key] = _direct_users.get(key, 0) + 1
            client.direct_to_workers = True
    if not ours:
        yield
        return
    try:
        yield
    finally:
        with _direct_lock:
            _direct_users[key] -= 1
            if not _direct_users[key]:
                del _direct_users[key]
                client.direct_to_workers = None


def _is_local(client):
    from distributed import LocalCluster

    return isinstance(getattr(client, "cluster", None), LocalCluster)
