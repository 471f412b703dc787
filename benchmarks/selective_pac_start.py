"""Where the SDR default puts its level: the candidates of issue 25's third to fifth rounds.

The default of ``concentration_threshold(target="sdr")`` is Wiens' fallback over the calibration
scores with weights fixed on the scores' *ranks* (see its docstring). Which ranks get the
weight decides which models it serves: all of ``delta`` on the first rankable threshold is
fixed-sequence testing (best when only the safest few percent can be deployed), ``delta / K``
on each of ``K`` thresholds is Bonferroni (best when the safest scores hold the errors). This
script measures the candidates on the cases of ``selective_pac.py`` (same models, splits and
MAPIE controllers; ``--cases``), each as the fallback over the score grid with these rank
weights (the grid opens at the first rank whose cumulative weight could reject with no error;
a threshold carries the weights of the ranks it adds):

* ``third round``: the default of the third round: 0.7 on the first rank that can reject at
  0.7 delta, not below n / 20; 0.3 spread equally over the ranks round(k n / 50); threshold at
  the last certified calibration score;
* ``fourth round``: 0.7 on the first *threshold* (last rank of a tie block) not below n / 20
  whose deployed count could reject at delta (0.7 + the coarse weight up to it), so a tie
  block just short of the third round's rank still gets the share; the coarse 0.3 as before;
  the threshold reported at the right end of the last certified interval (just below the next
  calibration score, +inf after the largest: the same calibration points, so the same
  p-value);
* ``two starts``: as the fourth round with 0.6 at n / 20, 0.15 on the first such threshold not
  below n / 5 and 0.25 on the coarse ranks (the fourth round's other candidate);
* ``default``: the package's default in this checkout (fifth round): the fourth round's rule
  with the start also not below the rows scored <= 0.01 when every score lies in [0, 1] (the
  model's >= 99%-confident predictions, MAPIE's first threshold). The script checks that its
  own weights (``default (rank weights)``) reproduce the package default on every split.

MAPIE: the best mean of Bonferroni, Holm and fixed sequence (split fixed sequence is left out
here for time; ``selective_pac.py`` runs it). Printed per case: mean share of test points
deployed over the splits, the paired difference to MAPIE's best and its standard error.
Every row has the same PAC guarantee (the weights are fixed before the labels are seen).

    python benchmarks/selective_pac_start.py                    # cases 1-55, 100 splits
    python benchmarks/selective_pac_start.py --cases 11,32,36
    python benchmarks/selective_pac_start.py --quick            # cases 11 and 32, 10 splits
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
FIRST_HELD_OUT = 46  # cases 46-55 were added before the fifth round's candidate ran on them


def rank_weights(s, alpha, starts, coarse, blocks, confident=None):
    """Weights on the ranks 1..n of the sorted scores ``s``: ``1 - sum(shares)`` equally on the
    ranks ``round(k n / coarse)``; per ``(share, floor)`` in ``starts`` the share on the first
    rank not below ``round(floor * n)`` that could reject with no error at ``share * delta``,
    or with ``blocks`` on the first last-rank-of-a-tie-block that could at ``delta (share +
    the coarse weight up to it)``; with ``confident`` and scores in [0, 1], not below the rows
    scored ``<= confident``."""
    n = s.size
    w = np.zeros(n)
    zero = binomial_pvalues(np.zeros(n), np.arange(1, n + 1), alpha)
    ranks = np.unique(np.round(np.arange(1, coarse + 1) * n / coarse)).astype(np.int64)
    ranks = ranks[ranks >= 1]
    w[ranks - 1] = (1.0 - sum(share for share, _ in starts)) / ranks.size
    ends = np.r_[np.flatnonzero(s[1:] != s[:-1]), n - 1] if blocks else np.arange(n)
    level = DELTA * np.cumsum(w)[ends] if blocks else 0.0
    low = 0
    if confident is not None and s[0] >= 0 and s[-1] <= 1:
        low = int(np.searchsorted(s, confident, side="right"))
    for share, floor in starts:
        can = (zero[ends] <= DELTA * share + level) & (ends + 1 >= max(round(floor * n), low))
        w[ends[np.argmax(can)] if can.any() else n - 1] += share
    return w / w.sum()


def fallback_threshold(L, S, alpha, starts, coarse, fourth, confident=None):
    """The fallback over the score grid with the rank weights above (binomial p-values); with
    ``fourth``, block-aware starts and the threshold at the right end of the certified
    interval."""
    order = np.argsort(S, kind="stable")
    s, cum_loss = S[order], np.cumsum(L[order])
    w = rank_weights(s, alpha, starts, coarse, fourth, confident)
    ends = np.r_[np.flatnonzero(s[1:] != s[:-1]), s.size - 1]  # last rank of each tie block
    cum_w = np.cumsum(w)[ends]
    opens = binomial_pvalues(np.zeros(ends.size), ends + 1, alpha) <= DELTA * cum_w
    if not opens.any():
        return -np.inf
    ends, cum_w = ends[opens], cum_w[opens]  # the weight below the first point moves up to it
    rejected = fallback(binomial_pvalues(cum_loss[ends], ends + 1, alpha), DELTA,
                        np.diff(np.r_[0.0, cum_w]))
    if not rejected.any():
        return -np.inf
    last = np.flatnonzero(rejected)[-1]
    if not fourth:
        return s[ends[last]]
    return np.nextafter(s[ends[last] + 1], -np.inf) if last + 1 < ends.size else np.inf


CANDIDATES = {  # (starts, coarse ranks, blocks and right end, confident rows' score)
    "third round": ([(0.7, 0.05)], 50, False, None),
    "fourth round": ([(0.7, 0.05)], 50, True, None),
    "two starts": ([(0.6, 0.05), (0.15, 0.2)], 50, True, None),
    "default (rank weights)": ([(0.7, 0.05)], 50, True, 0.01),
}


def _candidate(starts, coarse, fourth, confident):
    def run(p, cal, test, alpha):
        L, S = p.loss[cal], p.score[cal]
        return p.score[test] <= fallback_threshold(L, S, alpha, starts, coarse, fourth,
                                                   confident)
    return run


def _package_default(p, cal, test, alpha):
    res = concentration_threshold(p.loss[cal], p.score[cal], alpha, target="sdr", delta=DELTA)
    return res.decide(p.score[test])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default="all")
    parser.add_argument("--splits", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="cases 11 and 32, 10 splits")
    args = parser.parse_args(argv)
    cases, splits_count = (("11,32", 10) if args.quick else (args.cases, args.splits))
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
        for name_ in ["default", "third round", "fourth round", "two starts"]:
            dep = res[name_][0]
            if best is None:
                cells.append(f"{name_} {dep.mean():.3f}")
                continue
            diff = dep - mapie[best]
            se = diff.std(ddof=1) / np.sqrt(diff.size)
            cells.append(f"{name_} {dep.mean():.3f} ({diff.mean():+.3f} +- {se:.3f})")
        tail = f" | MAPIE {best[6:]} {mapie[best].mean():.3f}" if best else " | no MAPIE"
        mark = " (held out in round 5)" if held_out else ""
        print(f"- {label}{mark}: " + "; ".join(cells) + tail, flush=True)
    print(f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
