"""``python -m sklearn_riskcontrol selective``: SCoRE deploy decisions from CSV tables.

Reads a calibration CSV (one row per labeled point: its risk in [0, 1] and its score, smaller =
safer) and a test CSV (one row per test point: its score), and writes the test table with the
columns ``evalue`` and ``deploy``; a summary on standard error states the guarantee (MDR or SDR).
"""

from ._io import document, read_table, say, write_csv

__all__ = ["add_parser", "run"]

_GUARANTEE = {
    "mdr": "for every test row, E[risk x deploy] <= {a}",
    "sdr": "E[sum of the deployed rows' risks / max(1, number deployed)] <= {a}",
}


def add_parser(subparsers):
    """Register the ``selective`` command on ``subparsers``."""
    p = subparsers.add_parser(
        "selective",
        help="SCoRE deploy decisions from CSV tables of calibration risks/scores and test scores",
        description=(
            "Selective deployment with SCoRE. Reads a calibration CSV (one row per labeled point: "
            "its risk in [0, 1] and its score, smaller = safer) and a test CSV (one row per test "
            "point: its score), and writes the test table with a `deploy` column (and `evalue`)."
        ),
    )
    p.add_argument("--calibration", required=True, help="CSV with the calibration rows")
    p.add_argument("--test", required=True, help="CSV with the test rows")
    p.add_argument("--alpha", type=float, required=True, help="target risk level in (0, 1)")
    p.add_argument(
        "--target", choices=["mdr", "sdr"], default="sdr",
        help="mdr: E[risk * deploy] <= alpha per point; sdr: risk among deployed <= alpha (default)",
    )
    p.add_argument("--boosting", choices=["none", "hete", "homo"], default="homo",
                   help="e-value boosting for SDR (default: homo, as SCoRESDR)")
    p.add_argument("--risk-column", default="risk", help="calibration risk column (default: risk)")
    p.add_argument("--score-column", default="score", help="score column in both files (default: score)")
    p.add_argument("--weight-column", default=None,
                   help="covariate-shift density ratio column in both files (optional)")
    p.add_argument("--seed", type=int, default=0, help="seed of the boosting draws (default: 0)")
    p.add_argument("--output", default="-", help="output CSV path (default: standard output)")
    return p


def run(args):
    """Run ``selective`` on parsed arguments and return the result document (bad input raises
    ``ValueError``/``OSError``)."""
    from .._validation import check_level
    from ..evalues.testing import boost_evalues, ebh
    from ..selective import mdr_decisions, mdr_evalues, sdr_evalues

    check_level(args.alpha, "alpha")
    cal = read_table(args.calibration, rows="calibration point")
    test = read_table(args.test, rows="test point")
    L = cal.numbers(args.risk_column, what="risks", low=0, high=1)
    S = cal.numbers(args.score_column, what="scores")
    T = test.numbers(args.score_column, what="scores")
    w = v = None
    if args.weight_column:
        what = "covariate-shift weights (density ratios)"
        w = cal.numbers(args.weight_column, what=what, positive=True)
        v = test.numbers(args.weight_column, what=what, positive=True)
    if args.target == "mdr":
        evalues = mdr_evalues(L, S, T, args.alpha, w, v)
        deploy = mdr_decisions(L, S, T, args.alpha, None, w, v)
    else:
        evalues = sdr_evalues(L, S, T, args.alpha, w, v)
        boosting = None if args.boosting == "none" else args.boosting
        deploy = ebh(boost_evalues(evalues, boosting, random_state=args.seed), args.alpha)
    write_csv(test.frame().assign(evalue=evalues, deploy=deploy), args.output)
    draws = ("exchangeable calibration and test rows" if w is None else
             "calibration and test rows exchangeable after reweighting by --weight-column")
    decision = (f"deployed on {int(deploy.sum())} of {len(deploy)} test rows (a realization "
                "for these files)")
    guarantee = (f"{args.target.upper()} <= {args.alpha:g}: "
                 f"{_GUARANTEE[args.target].format(a=f'{args.alpha:g}')}, in expectation over "
                 f"the calibration and test draws ({draws}); it does not bound the realized risk "
                 "of this one file's deployed rows")
    lines = say([decision, f"guarantee ({guarantee.replace(': ', '): ', 1)}"])
    rows = [{"name": str(k + 1), "evalue": e, "deploy": bool(d)}
            for k, (e, d) in enumerate(zip(evalues.tolist(), deploy.tolist()))]
    return document(
        "selective", decision=decision, passed=bool(deploy.any()),
        rule="passes when at least one test row is deployed (the guarantee holds for any "
             "number deployed, including none)",
        guarantee=guarantee, alpha=args.alpha, delta=None, rows=rows, messages=lines,
        labels_used=int(L.size), facts={"target": args.target, "n_deployed": int(deploy.sum())},
        reasons={"delta": "SCoRE's guarantee is in expectation, with no failure probability",
                 "evalue": "an infinite e-value (the row is deployed at any level)"})
