"""Command-line interface (``python -m sklearn_riskcontrol --help``).

Subcommands work on CSV tables so that users with precomputed losses and scores (for example
from LLM evaluations) need no Python code. Bad input gives a one-line error and exit status 2.
"""

import argparse
import sys

import numpy as np

from . import _cli_autoeval, _cli_bandits
from ._tables import one_line_warnings
from .online._learners import ANYTIME_DEFAULT_DELTA, STRATEGIES


def _add_score_parser(sub):
    p = sub.add_parser(
        "score",
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


def _add_sps_parser(sub):
    p = sub.add_parser(
        "sps",
        help="online prediction-set thresholds (SPS and baselines) from a CSV stream of scores",
        description=(
            "Online prediction sets with semi-bandit feedback. Reads a CSV with one row per "
            "round, in stream order, and replays it honestly: round t publishes a threshold "
            "tau_t (the set holds the labels with score >= tau_t) and the learner sees the true "
            "label's score only if it is in the set, otherwise just a miss. Writes the table "
            "with the columns `threshold` (tau_t; -inf = full set) and `covered`. Default "
            "input: a column with the true label's score at each round. With --label-column, "
            "the other columns are the scores of every candidate (e.g. retrieved documents) and "
            "`set_size` is added."
        ),
    )
    p.add_argument("--input", required=True, help="CSV with one row per round, in stream order")
    p.add_argument("--alpha", type=float, required=True,
                   help="tolerated miscoverage in (0, 1); target coverage is 1 - alpha")
    p.add_argument("--strategy", choices=list(STRATEGIES), default="sps",
                   help="threshold learner (default: sps); the others are the paper's baselines")
    p.add_argument("--horizon", type=int, default=None,
                   help="number of rounds T the guarantee is set up for (>= the number of rows; "
                        "the paper's algorithm with T = rows); default: anytime schedule")
    p.add_argument("--delta", type=float, default=None,
                   help="probability that SPS's guarantee fails at some round "
                        "(default: 2 / horizon, or 0.01 without a horizon)")
    p.add_argument("--score-column", default="score",
                   help="column with the true label's score at each round (default: score)")
    p.add_argument("--label-column", default=None,
                   help="candidate-score mode: column naming the true candidate's column at each "
                        "round (empty = not among the candidates, always a miss)")
    p.add_argument("--candidate-columns", default=None,
                   help="candidate-score mode: comma-separated candidate columns "
                        "(default: every column but the label column)")
    p.add_argument("--learning-rate", type=float, default=None,
                   help="ACI's level step (default 0.005) or DLR's step scale (default 1.0)")
    p.add_argument("--initial-threshold", type=float, default=None,
                   help="DLR's first threshold (default 0.0)")
    p.add_argument("--n-explore", type=int, default=None,
                   help="exploration rounds of etc / conservative_etc "
                        "(default: ceil(horizon ** (2/3)))")
    p.add_argument("--output", default="-", help="output CSV path (default: standard output)")


def _build_parser():
    parser = argparse.ArgumentParser(
        prog="python -m sklearn_riskcontrol",
        description="Finite-sample risk control for evaluating, selecting and deploying models.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo = sub.add_parser(
        "demo", help="run every method on bundled real data and print what was certified/deployed"
    )
    demo.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    demo.add_argument("--quick", action="store_true", help="smaller data, for smoke tests")
    _add_score_parser(sub)
    _add_sps_parser(sub)
    _cli_autoeval.add_parser(sub)
    _cli_bandits.add_parser(sub)
    return parser


_GUARANTEE = {
    "mdr": "for every test row, E[risk x deploy] <= {a}",
    "sdr": "E[sum of the deployed rows' risks / max(1, number deployed)] <= {a}",
}


def _run_score(args):
    from ._tables import read_table
    from ._validation import check_level
    from .evalues import boost_evalues, ebh, mdr_decisions, mdr_evalues, sdr_evalues

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
    out = test.frame().assign(evalue=evalues, deploy=deploy)
    out.to_csv(sys.stdout if args.output == "-" else args.output, index=False)
    draws = ("exchangeable calibration and test rows" if w is None else
             "calibration and test rows exchangeable after reweighting by --weight-column")
    print(
        f"deployed on {int(deploy.sum())} of {len(deploy)} test rows (a realization for these "
        f"files)\nguarantee ({args.target.upper()} <= {args.alpha:g}): "
        f"{_GUARANTEE[args.target].format(a=f'{args.alpha:g}')}, in expectation over the "
        f"calibration and test draws ({draws}); it does not bound the realized risk of this "
        "one file's deployed rows",
        file=sys.stderr,
    )


def _label_key(text):
    """Column name a label cell refers to (``3.0``, as pandas writes labels, means ``"3"``)."""
    try:
        number = float(text)
    except ValueError:
        return text
    return str(int(number)) if number.is_integer() else text


def _candidate_scores(table, args):
    """Candidate-score matrix and the true candidate's score per round (-inf: not a candidate)."""
    labels = table.text(args.label_column)
    if args.candidate_columns:
        names = [c.strip() for c in args.candidate_columns.split(",") if c.strip()]
    else:
        names = [c for c in table.columns if c != args.label_column]
    if not names:
        raise ValueError(f"{table.path} has no candidate columns besides {args.label_column!r}.")
    S = table.numbers(names, what="candidate scores")
    position = {c: j for j, c in enumerate(names)}
    true_scores = np.full(table.n_rows, -np.inf)
    for i, text in enumerate(labels):
        if text == "":
            continue  # the true candidate is not among the columns: always missed
        j = position.get(text, position.get(_label_key(text)))
        if j is None:
            raise ValueError(
                f"{table.where(i, args.label_column)}: label {text!r} is not a candidate column "
                f"(candidates: {names[:5]}{' ...' if len(names) > 5 else ''}); leave it empty if "
                "the true candidate is not among them."
            )
        true_scores[i] = S[i, j]
    return S, true_scores


def _run_sps(args):
    from ._tables import read_table
    from ._validation import check_level
    from .online import make_learner, simulate_thresholds

    check_level(args.alpha, "alpha")
    table = read_table(args.input, rows="round")
    S = None
    if args.label_column is None:
        scores = table.numbers(args.score_column, what="scores")
    else:
        S, scores = _candidate_scores(table, args)
    options = {
        "strategy": args.strategy,
        "horizon": args.horizon,
        "delta": args.delta,
        "learning_rate": args.learning_rate,
        "initial_threshold": args.initial_threshold,
        "n_explore": args.n_explore,
    }
    if np.isfinite(scores).all():
        thresholds = simulate_thresholds(scores, args.alpha, **options)
    else:  # rounds whose true candidate is missing: replayed as misses (score -inf)
        thresholds = make_learner(options.pop("strategy"), args.alpha, **options).replay(scores)
    covered = np.isfinite(scores) & (scores >= thresholds)  # -inf: true label not offered
    out = table.frame().assign(threshold=thresholds, covered=covered)
    lines = [
        f"realized coverage {covered.mean():.4f} over {len(covered)} rounds (the fraction of "
        f"these rounds whose set held the true label; target {1 - args.alpha:g}, strategy "
        f"{args.strategy}); final threshold {float(thresholds[-1]):.6g}"
    ]
    if S is not None:
        set_size = np.sum(S >= thresholds[:, None], axis=1)
        out = out.assign(set_size=set_size)
        lines[0] += f"; average set size {set_size.mean():.3f} of {S.shape[1]} candidates"
        missing = int(np.sum(~np.isfinite(scores)))
        if missing > args.alpha * len(scores):
            lines.append(
                f"note: {missing} of {len(scores)} rounds have no true candidate among the "
                "columns and are misses whatever the set, so the realized coverage of these "
                f"rounds cannot reach {1 - args.alpha:g}"
            )
    out.to_csv(sys.stdout if args.output == "-" else args.output, index=False)
    if args.strategy == "sps":
        if args.delta is not None:
            delta = args.delta
        else:
            delta = ANYTIME_DEFAULT_DELTA if args.horizon is None else 2.0 / args.horizon
        lines.append(
            f"guarantee (i.i.d. rounds): with probability >= {max(0.0, 1 - delta):.6g}, at "
            f"every round the published set has coverage >= {1 - args.alpha:g} (probability "
            "that it holds the next label, given the past; tau_t <= tau* at all rounds); the "
            "realized coverage above can fall below the target by chance"
        )
    else:
        lines.append(
            f"no guarantee claimed: {args.strategy} is a baseline; only --strategy sps has a "
            "per-round coverage guarantee"
        )
    print("\n".join(lines), file=sys.stderr)


def main(argv=None):
    """Entry point; returns the exit status."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    try:
        with one_line_warnings():
            if args.command == "demo":
                from .demo import run_demo

                run_demo(seed=args.seed, quick=args.quick)
            elif args.command == "score":
                _run_score(args)
            elif args.command == "sps":
                _run_sps(args)
            elif args.command == "autoeval":
                _cli_autoeval.run(args)
            elif args.command == "best-model":
                _cli_bandits.run(args)
    except (ValueError, TypeError, OSError, ImportError) as exc:
        if isinstance(exc, ImportError) and exc.name != "pyarrow":  # a Parquet input only
            raise
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"error: {message}", file=sys.stderr)
        return 2
    return 0
