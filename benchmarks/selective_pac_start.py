"""Where the SDR default puts its level: the candidates of issue 25's third round, side by side.

The default of ``concentration_threshold(target="sdr")`` is Wiens' fallback over the calibration
scores with weights fixed on the scores' *ranks* (see its docstring). Which ranks get the
weight decides which models it serves: all of ``delta`` on the first rankable threshold is
fixed-sequence testing (best when only the safest few percent can be deployed), ``delta / K``
on each of ``K`` thresholds is Bonferroni (best when the safest scores hold the errors). This
script measures the candidates that were compared before the current default was chosen, on
the cases of ``selective_pac.py`` (same models, splits and MAPIE controllers; ``--cases``), each
as the fallback over the score grid with these rank weights (the grid opens at the first rank
whose cumulative weight could reject with no error; a threshold carries the weights of the ranks
it adds):

* ``previous``: 0.7 on the first rank that can reject at 0.7 delta, not below rank n / 5; 0.3 on
  the ranks round(k n / 100) with weights 0.95**j (the default before the third round);
* ``default``: the package's default in this checkout (0.7 on that rank, not below n / 20; 0.3
  spread equally over the ranks round(k n / 50)); the script checks that its own weights
  reproduce it (``rank weights`` below) on every split;
* ``two starts``: 0.5 on the first rank that can reject at 0.5 delta, not below n / 20, 0.2 on
  the first that can at 0.2 delta, not below n / 5, 0.3 equally on round(k n / 50) (the
  candidate the pre-registered rule chose: it lost held-out case 32 by .31);
* ``share .5``: as the default with 0.5 instead of 0.7.

MAPIE: the best mean of Bonferroni, Holm and fixed sequence (split fixed sequence is left out
here for time; ``selective_pac.py`` runs it). Printed per case: mean share of test points
deployed over the splits, the paired difference to MAPIE's best and its standard error.
Every row has the same PAC guarantee (the weights are fixed before the labels are seen).

    python benchmarks/selective_pac_start.py                    # cases 1-35, 100 splits
    python benchmarks/selective_pac_start.py --cases 11,16,24,32
    python benchmarks/selective_pac_start.py --quick            # cases 11 and 24, 10 splits
"""

import argparse
import time
import warnings

import numpy as np
from _common import optional
from selective_pac import CASES, DELTA, _Data, _mapie, _selected, _splits, run_case

from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.evalues.ltt import binomial_pvalues
from sklearn_riskcontrol.evalues.testing import fallback
from sklearn_riskcontrol.selective import concentration_threshold

MAPIE_FWER = ("bonferroni", "bonferroni_holm", "fixed_sequence")
FIRST_HELD_OUT = 26  # cases 26-35 were added before any candidate ran on them


def rank_weights(n, alpha, starts, coarse, decay=1.0):
    """Weights on the ranks 1..n: ``share`` on the first rank that can reject at ``share *
    delta`` with no error, not below ``round(floor * n)``, per ``(share, floor)`` in ``starts``;
    the rest on the ranks ``round(k n / coarse)`` with weights ``decay**j``."""
    w = np.zeros(n)
    zero = binomial_pvalues(np.zeros(n), np.arange(1, n + 1), alpha)
    for share, floor in starts:
        can = zero <= share * DELTA
        if can.any():
            w[max(int(np.argmax(can)), round(floor * n) - 1)] += share
    ranks = np.unique(np.round(np.arange(1, coarse + 1) * n / coarse)).astype(np.int64)
    ranks = ranks[ranks >= 1]
    tail = decay ** np.arange(ranks.size)
    w[ranks - 1] += (1.0 - sum(s for s, _ in starts)) * tail / tail.sum()
    return w / w.sum()


def fallback_threshold(L, S, alpha, w):
    """The fallback over the score grid with rank weights ``w`` (binomial p-values)."""
    order = np.argsort(S, kind="stable")
    s, cum_loss = S[order], np.cumsum(L[order])
    ends = np.r_[np.flatnonzero(s[1:] != s[:-1]), s.size - 1]  # last rank of each tie block
    cum_w = np.cumsum(w)[ends]
    opens = binomial_pvalues(np.zeros(ends.size), ends + 1, alpha) <= DELTA * cum_w
    if not opens.any():
        return -np.inf
    ends, cum_w = ends[opens], cum_w[opens]  # the weight below the first point moves up to it
    rejected = fallback(binomial_pvalues(cum_loss[ends], ends + 1, alpha), DELTA,
                        np.diff(np.r_[0.0, cum_w]))
    return s[ends[rejected]].max() if rejected.any() else -np.inf


CANDIDATES = {
    "previous": ([(0.7, 0.2)], 100, 0.95),
    "default (rank weights)": ([(0.7, 0.05)], 50, 1.0),
    "two starts": ([(0.5, 0.05), (0.2, 0.2)], 50, 1.0),
    "share .5": ([(0.5, 0.05)], 50, 1.0),
}


def _candidate(starts, coarse, decay):
    def run(p, cal, test, alpha):
        L, S = p.loss[cal], p.score[cal]
        t = fallback_threshold(L, S, alpha, rank_weights(L.size, alpha, starts, coarse, decay))
        return p.score[test] <= t
    return run


def _package_default(p, cal, test, alpha):
    res = concentration_threshold(p.loss[cal], p.score[cal], alpha, target="sdr", delta=DELTA)
    return res.decide(p.score[test])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default="all")
    parser.add_argument("--splits", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="cases 11 and 24, 10 splits")
    args = parser.parse_args(argv)
    cases, splits_count = (("11,24", 10) if args.quick else (args.cases, args.splits))
    risk_control = optional("mapie.risk_control", "compare", "the MAPIE rows are left out")
    warnings.simplefilter("ignore", RiskControlWarning)
    data = _Data(0)
    methods = [("default", _package_default)] + [
        (name, _candidate(*spec)) for name, spec in CANDIDATES.items()]
    if risk_control is not None:
        methods += [(f"MAPIE {f}", _mapie(risk_control, f, {"binary": True}))
                    for f in MAPIE_FWER]
    print(f"delta = {DELTA}; {splits_count} splits; mean share deployed (paired difference to "
          "MAPIE's best of Bonferroni, Holm, fixed sequence, +- 1 s.e.)")
    t0 = time.perf_counter()
    for case in _selected(cases):
        label, name, model, alpha, _ = case
        held_out = CASES.index(case) >= FIRST_HELD_OUT - 1
        problem = data.problem(name, model)
        if isinstance(problem, str):
            print(f"- {label}: skipped ({problem})")
            continue
        splits = _splits(problem.score.size, splits_count, 0)
        res = run_case(problem, splits, alpha, methods)
        ours = res["default"][0]
        same = res["default (rank weights)"][0]
        if not np.array_equal(ours, same):
            raise SystemExit(f"{label}: the rank weights do not reproduce the package default")
        mapie = {m: r[0] for m, r in res.items() if m.startswith("MAPIE")}
        best = max(mapie, key=lambda m: mapie[m].mean()) if mapie else None
        cells = []
        for name_ in ["default", "previous", "two starts", "share .5"]:
            dep = res[name_][0]
            if best is None:
                cells.append(f"{name_} {dep.mean():.3f}")
                continue
            diff = dep - mapie[best]
            se = diff.std(ddof=1) / np.sqrt(diff.size)
            cells.append(f"{name_} {dep.mean():.3f} ({diff.mean():+.3f} +- {se:.3f})")
        tail = f" | MAPIE {best[6:]} {mapie[best].mean():.3f}" if best else " | no MAPIE"
        mark = " (held out in round 3)" if held_out else ""
        print(f"- {label}{mark}: " + "; ".join(cells) + tail, flush=True)
    print(f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
