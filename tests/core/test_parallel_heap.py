"""Parallel tasks run with glibc's adaptive heap thresholds in processes started with
``MALLOC_TRIM_THRESHOLD_`` (Dask workers): large NumPy temporaries then reuse heap pages instead
of faulting fresh ``mmap`` pages in on every use, and the process's own setting is restored."""

import os
import platform
import subprocess
import sys
import textwrap

import pytest

glibc_only = pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
    reason="glibc's mallopt only",
)

_PROBE = textwrap.dedent("""
    import resource
    import numpy as np
    from sklearn_riskcontrol import _parallel as P

    def faults(n=200):
        start = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for _ in range(n):
            a = np.ones(400_000)  # 3.2 MB: above the 128 KiB mmap threshold
            a.sum()
            del a
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - start

    before = faults()
    with P._task_heap():
        with P._task_heap():  # nested tasks (a pilot unit inside a task) are fine
            faults()  # warm the heap once
            inside = faults()
        nested_left = P._heap_users  # the outer task still holds the setting
    after = faults()
    print(P._LIBC is not None, before, inside, after, nested_left, P._heap_users)
""")


def _probe(**env):
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                         env={**os.environ, **env}, check=True).stdout.split()
    return (out[0] == "True", *map(int, out[1:]))


@glibc_only
def test_pinned_thresholds_get_adaptive_heap_inside_tasks_only():
    active, before, inside, after, held, users = _probe(MALLOC_TRIM_THRESHOLD_="65536")
    assert active and held == 1 and users == 0
    # Outside a task every 3.2 MB temporary faults its ~780 pages in afresh; inside, the pages
    # are reused. After the task the worker's setting is back (memory returns to the system).
    assert before > 200 * 500 and after > 200 * 500
    assert inside < before / 20


def test_untouched_without_pinned_thresholds():
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    out = subprocess.run([sys.executable, "-c", "from sklearn_riskcontrol import _parallel as P;"
                          "print(P._LIBC is None)"], capture_output=True, text=True, env=env,
                         check=True).stdout.strip()
    assert out == "True"
    active, *_ = _probe(MALLOC_TRIM_THRESHOLD_="65536", MALLOC_TOP_PAD_=str(32 << 20))
    assert not active  # the user already chose a heap pad: leave the allocator alone
