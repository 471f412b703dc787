"""End-to-end demo on bundled data (``python -m sklearn_riskcontrol demo``).

Each section runs one family of methods and prints what was deployed / covered / certified /
identified together with the guarantee the number carries; a closing summary repeats the
headline numbers. Every printed number is one realization (one draw of the data, one stream, one
run); the guarantees are statements about expectations or probabilities over such draws, and
each line says which. Data: diamonds and letter recognition (bundled, see
``datasets/data/ATTRIBUTION.md``) and the package's own score-matrix simulator.

One module per section, named after its method package, each with a ``<package>_section``
function that prints the section and returns its summary lines: :mod:`.selective` (SCoRE),
:mod:`.online` (SPS), :mod:`.autoeval` (R-AutoEval+) and :mod:`.bandits` (best-model
identification); :func:`run_demo` (here) runs them in that order.
"""

import time

from threadpoolctl import threadpool_limits

from .autoeval import autoeval_section
from .bandits import bandits_section
from .online import online_section
from .selective import selective_section

__all__ = ["run_demo"]


def run_demo(seed=0, quick=False):
    """Run every method end to end and print a short report with each number's guarantee.

    Returns the summary lines (what each number guarantees), as printed.
    """
    start = time.perf_counter()
    print(f"sklearn-riskcontrol demo (seed={seed})\n")
    # One BLAS/OpenMP thread: the demo's models are small, and on a busy machine (shared CI)
    # oversubscribed threads make it 10-20x slower.
    with threadpool_limits(limits=1):
        summary = selective_section(seed, quick)
        print()
        summary += online_section(seed, quick)
        print()
        summary += autoeval_section(seed, quick)
        print()
        summary.append(bandits_section(seed))
    print("\nSummary: what each number guarantees")
    for line in summary:
        print(f"  {line}")
    print(f"\ndone in {time.perf_counter() - start:.1f} s")
    return summary
