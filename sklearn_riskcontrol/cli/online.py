"""``python -m sklearn_riskcontrol online``: online prediction-set thresholds from a CSV stream.

Replays a CSV with one row per round, in stream order, honestly (semi-bandit feedback: the true
label's score is seen only when it is in the published set) with SPS or one of the paper's
baselines, and writes the table with the columns ``threshold`` and ``covered`` (and
``set_size`` in candidate-score mode); a summary on standard error states the guarantee.
"""

import numpy as np

from ..online import STRATEGIES
from ._io import document, read_table, say, write_csv

__all__ = ["add_parser", "run"]


def add_parser(subparsers):
    """Register the ``online`` command on ``subparsers``."""
    p = subparsers.add_parser(
        "online",
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
    return p


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


def run(args):
    """Run ``online`` on parsed arguments and return the result document (bad input raises
    ``ValueError``/``OSError``)."""
    from .._validation import check_level
    from ..online import make_learner, simulate_thresholds

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
    write_csv(out, args.output)
    failure = float("nan")
    if args.strategy == "sps":
        failure = make_learner("sps", args.alpha, horizon=args.horizon,
                               delta=args.delta).failure_probability
        guarantee = (
            f"(i.i.d. rounds): with probability >= {max(0.0, 1 - failure):.6g}, at every round "
            f"the published set has coverage >= {1 - args.alpha:g} (probability that it holds "
            "the next label, given the past; tau_t <= tau* at all rounds); the realized "
            "coverage above can fall below the target by chance")
        lines.append(f"guarantee {guarantee}")
        guarantee = "i.i.d. rounds" + guarantee[len("(i.i.d. rounds)"):]
    else:
        guarantee = (f"no guarantee claimed: {args.strategy} is a baseline; only --strategy sps "
                     "has a per-round coverage guarantee")
        lines.append(guarantee)
    lines = say(lines)
    rows = [{"name": str(k + 1), "threshold": t, "covered": bool(c)}
            for k, (t, c) in enumerate(zip(thresholds.tolist(), covered.tolist()))]
    if S is not None:
        for r, size in zip(rows, set_size.tolist()):
            r["set_size"] = size
    rate = float(covered.mean())
    return document(
        "online", decision=lines[0], passed=args.strategy == "sps" and rate >= 1 - args.alpha,
        rule="passes when the strategy has a coverage guarantee (sps) and the realized coverage "
             "of these rounds reaches 1 - alpha (one realization)",
        guarantee=guarantee, alpha=args.alpha, delta=failure, rows=rows, messages=lines,
        labels_used=int(covered.size),
        facts={"strategy": args.strategy, "realized_coverage": rate},
        reasons={"threshold": "-infinity: the full set (every label) was published",
                 "delta": "no guarantee claimed for this strategy"})
