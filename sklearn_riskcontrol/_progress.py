"""Progress reports of long computations, shared by every estimator with a ``verbose`` option.

``verbose=0``: silent. ``verbose >= 1``: a tqdm bar on standard error when tqdm is installed
(the ``progress`` extra) and the session is interactive (a terminal or a notebook), else one line
on standard output at about every 10% of the work (every 1% for ``verbose >= 2``), which reads
well in logs. Reporting never touches the computation, so results do not depend on
``verbose``.
"""

import sys
import time

__all__ = ["Progress", "progress"]


def _tqdm():
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm


def _interactive():
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty()) or "ipykernel" in sys.modules


class Progress:
    """Report how many of ``total`` units of work are done.

    Parameters
    ----------
    total : int
        Units of work of the whole computation (candidates, evaluations, rounds, ...).
    verbose : int, default=0
    desc : str, default=""
        Name shown in front of each report (e.g. the estimator's class name).
    unit : str, default="it"
        What a unit is, e.g. ``"evaluations"``.
    use_tqdm : bool or None, default=None
        ``None``: use tqdm if it is installed and the session is interactive.

    Examples
    --------
    >>> from sklearn_riskcontrol._progress import Progress
    >>> with Progress(4, verbose=1, desc="demo", unit="steps", use_tqdm=False) as bar:
    ...     for i in range(1, 5):
    ...         bar.update(i, last=i)          # doctest: +ELLIPSIS
    [demo] steps 1/4 (25%)  last 1  ...s
    [demo] steps 2/4 (50%)  last 2  ...s
    [demo] steps 3/4 (75%)  last 3  ...s
    [demo] steps 4/4 (100%)  last 4  ...s
    """

    def __init__(self, total, *, verbose=0, desc="", unit="it", use_tqdm=None):
        self.total = max(int(total), 1)
        self.verbose = int(verbose or 0)
        self.desc = desc
        self.unit = unit
        if use_tqdm is None:
            use_tqdm = _interactive()
        self._use_bar = bool(self.verbose) and use_tqdm and _tqdm() is not None
        self._bar = None
        self._next = 0
        self._start = time.perf_counter()

    def due(self, done):
        """Whether :meth:`update` with ``done`` would report (to skip computing its ``info``)."""
        return bool(self.verbose) and (done >= self._next or done >= self.total)

    def update(self, done, **info):
        """Set the number of units done; ``info`` (name -> value) is shown next to it."""
        if not self.due(done):
            return
        steps = 100 if self._use_bar or self.verbose >= 2 else 10
        every = max(self.total // steps, 1)
        self._next = (done // every + 1) * every
        text = "  ".join(f"{k.replace('_', ' ')} {_fmt(v)}" for k, v in info.items())
        if self._use_bar:
            if self._bar is None:
                self._bar = _tqdm()(total=self.total, desc=self.desc, unit=f" {self.unit}")
            if text:
                self._bar.set_postfix_str(text, refresh=False)
            self._bar.update(done - self._bar.n)
            if done >= self.total:
                self.close()
            return
        print(
            f"[{self.desc}] {self.unit} {done}/{self.total} ({100 * done // self.total}%)"
            + (f"  {text}" if text else "")
            + f"  {time.perf_counter() - self._start:.1f}s",
            file=sys.stdout,
            flush=True,
        )

    def close(self):
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __getstate__(self):  # a live tqdm bar cannot be pickled; the report just restarts
        state = self.__dict__.copy()
        state["_bar"] = None
        return state


def _fmt(value):
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def progress(iterable, *, verbose=0, total=None, desc="", unit="it"):
    """Yield the items of ``iterable``, reporting after each one (see :class:`Progress`)."""
    if not verbose:
        yield from iterable
        return
    with Progress(len(iterable) if total is None else total, verbose=verbose, desc=desc,
                  unit=unit) as bar:
        for i, item in enumerate(iterable, 1):
            yield item
            bar.update(i)
