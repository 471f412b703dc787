"""``python -m sklearn_riskcontrol best-model``: identify the best model of a score table.

The table holds one row per model and one column per example (scores in [0, 1], e.g. 1 =
correct; an empty cell = that model was not run on that example), or is a long table with one
row per (model, example) pair (CSV, JSON Lines or Parquet; a missing row = not available),
read by :func:`sklearn_riskcontrol.tables.read_long_table`. The chosen strategy reveals
only the cells it pays for, up to ``--budget`` of them, and reports the model it identifies as
best, with PULSE's simultaneous confidence intervals (vacuous ones flagged). Every table is
read (and every bad cell reported) by :mod:`sklearn_riskcontrol.cli._io`.
"""

import argparse
import sys
import warnings

import numpy as np

from ._io import (
    SCORE_HIGH,
    SCORE_LOW,
    add_long_options,
    align_side,
    is_long,
    long_scores,
    wide_scores,
)

__all__ = ["add_parser", "run"]

_STRATEGIES = {
    "pulse": "PULSE",
    "ucbe": "UCBE",
    "ucbe-lrf": "UCBELRF",
    "uniform": "UniformSampling",
    "naive": "NaivePooling",
}

_EPILOG = """\
examples:
  # the best of the models in scores.csv (rows = models, first column = model names),
  # scoring at most 20% of the cells, with 95% simultaneous confidence intervals
  python -m sklearn_riskcontrol best-model --scores scores.csv --budget 0.2

  # PULSE with other models' scores on the same examples as side information
  python -m sklearn_riskcontrol best-model --scores scores.csv --side-scores history.csv \\
      --budget 5000 --batch-size 32 --refit-every 20 --rank 4 --output estimates.csv

  # the UCB-E baseline (no predictions, no confidence intervals), with progress lines
  python -m sklearn_riskcontrol best-model --scores scores.csv --strategy ucbe --budget 0.2 -v

  # record every revealed cell in run.db; the same command again continues (and replays) the run
  python -m sklearn_riskcontrol best-model --scores scores.csv --budget 0.2 --store run.db

  # a long table, one row per (model, example): columns model, example, score (found by name)
  python -m sklearn_riskcontrol best-model --scores runs.jsonl --budget 0.2
  python -m sklearn_riskcontrol best-model --scores runs.parquet --long --model-column llm \
      --example-column question_id --score-column correct --budget 0.2
"""


def add_parser(subparsers):
    """Register the ``best-model`` command on ``subparsers``."""
    p = subparsers.add_parser(
        "best-model",
        help="identify the best model of a models x examples score table within a budget "
             "(PULSE, UCB-E, UCB-E-LRF)",
        description=(
            "Best-model identification under an evaluation budget.\n\n"
            "Reads a CSV score table (one row per model, one column per example; scores in\n"
            "[0, 1], higher = better, e.g. 1 = correct; an empty cell = not available) or a\n"
            "long table (one row per model and example: CSV, JSON Lines or Parquet), reveals\n"
            "only the cells the strategy pays for, and prints the model identified as best, its\n"
            "estimated mean score and the evaluations used. PULSE (default) also gives\n"
            "confidence intervals that hold for all models at once with probability >= 1 - delta;\n"
            "an interval spanning at least 99% of the score range [0, 1] is flagged as vacuous."
        ),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--scores", required=True,
                   help="score table: a CSV with rows = models and columns = examples, or a "
                        "long table (.csv, .jsonl, .parquet) with one row per model and example")
    p.add_argument("--side-scores", default=None,
                   help="CSV of other models' scores on the same examples (same columns); "
                        "used by pulse, naive and ucbe-lrf")
    p.add_argument("--header", action=argparse.BooleanOptionalAction, default=True,
                   help="first line of each CSV names the examples (default: yes)")
    p.add_argument("--model-names", choices=["auto", "first-column", "none"], default="auto",
                   help="first-column: the first column names the models; auto (default): so "
                        "if it holds text or its header is empty; none: rows are numbered")
    add_long_options(p, "model", "score")
    p.add_argument("--score-column", default="score",
                   help="long tables: column of the scores (default: score)")
    p.add_argument("--strategy", choices=list(_STRATEGIES), default="pulse",
                   help="pulse (default), ucbe, ucbe-lrf, or the baselines uniform and naive")
    p.add_argument("--budget", default="0.1",
                   help="evaluations allowed: an integer counts cells, a decimal in (0, 1] is a "
                        "fraction of the available cells (default: 0.1)")
    p.add_argument("--batch-size", type=int, default=None,
                   help="examples scored per step (default: the strategy's, 64 or 32)")
    p.add_argument("--refit-every", type=int, default=None,
                   help="pulse/naive: refit the low-rank model every this many steps "
                        "(default: 1000)")
    p.add_argument("--rank", type=int, default=None,
                   help="pulse/naive/ucbe-lrf: rank of the low-rank model (default: 8, 8, 1)")
    p.add_argument("--delta", type=float, default=None,
                   help="pulse: failure probability of the confidence intervals (default: 0.05)")
    p.add_argument("--random-state", type=int, default=0,
                   help="seed of the example sampling and tie-breaking (default: 0)")
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="progress lines (-vv: about 100 per run)")
    p.add_argument("--output", default=None,
                   help="write per-model estimates, evaluations and intervals to this CSV")
    p.add_argument("--store", default=None,
                   help="SQLite file recording every revealed cell (created if absent); rerunning "
                        "the same command with it continues the stored run and reads stored cells "
                        "back; a store written for another table is refused")
    return p


# --------------------------------------------------------------------------------------------
def _parse_budget(text):
    try:
        value = int(text) if text.strip().lstrip("+").isdigit() else float(text)
    except ValueError:
        raise ValueError(
            f"--budget must be an integer (evaluations) or a decimal in (0, 1] (a fraction of "
            f"the cells); got {text!r}."
        ) from None
    return value


def _strategy(args, fractional):
    from .. import bandits

    est = getattr(bandits, _STRATEGIES[args.strategy])()
    params = est.get_params()
    options = {
        "budget": _parse_budget(args.budget),
        "random_state": args.random_state,
        "verbose": args.verbose,
        "batch_size": args.batch_size,
        "refit_every": args.refit_every,
        "rank": args.rank,
    }
    for name, value in list(options.items()):
        if value is None:
            del options[name]
        elif name not in params:
            flag = "--" + name.replace("_", "-")
            raise ValueError(f"{flag} does not apply to --strategy {args.strategy}.")
    if "fractional_scores" in params:
        options["fractional_scores"] = fractional
    return est.set_params(**options)


def _write_summary(est, names, path, available, delta, ci, stream, long=False):
    from ..bandits._pulse import vacuous_intervals

    best = int(est.best_index_)
    used, total = int(est.n_evaluations_), int(available.sum())
    where = f"model {best + 1} of {path}" if long else f"row {best + 1} of {path}"
    line = (f"best model: {names[best]} ({where}); estimated mean score "
            f"{float(est.means_[best]):.4f}")
    if est.n_evaluations_per_model_[best] >= available[best]:
        line += " (exact: all its examples were scored)"
    else:
        line += " (a realization"
        if ci is not None:
            line += f"; {1 - delta:.0%} interval [{ci[best, 0]:.4f}, {ci[best, 1]:.4f}]"
            line += ", vacuous" if vacuous_intervals(ci)[best] else ""
        line += ")"
    lines = [line, f"evaluations used: {used} of {total} available cells ({used / total:.1%}); "
                   f"strategy {type(est).__name__}"]
    if ci is None:
        lines.append("no confidence interval: only PULSE (--strategy pulse) gives valid ones; "
                     f"{type(est).__name__}'s estimate is the mean of the cells it scored")
    else:
        lines.append(f"guarantee: with probability >= {1 - delta:g}, every model's mean lies in "
                     f"its interval, simultaneously over all {len(names)} models (the intervals "
                     "are realizations)")
        n_vacuous = int(vacuous_intervals(ci).sum())
        if n_vacuous:
            fixes = [f"raise --budget (now {used} evaluations)"]
            if est.batch_size > 1:
                fixes.append(f"lower --batch-size (now {est.batch_size})")
            fixes.append(f"raise --delta (now {delta:g})")
            lines.append(
                f"note: {n_vacuous} of {len(names)} intervals are vacuous: they span at least "
                f"99% of the score range [{SCORE_LOW:g}, {SCORE_HIGH:g}], so the guarantee says "
                f"nothing about those models; to tighten them, {', '.join(fixes[:-1])} or "
                f"{fixes[-1]}"
            )
    print("\n".join(lines), file=stream)


def run(args):
    """Run ``best-model`` on parsed arguments (bad input raises ``ValueError``/``OSError``)."""
    import pandas as pd

    from .._validation import RiskControlWarning, check_level
    from ..bandits import MatrixOracle
    from ..bandits._pulse import vacuous_intervals

    if args.delta is not None and args.strategy != "pulse":
        raise ValueError("--delta sets PULSE's confidence intervals; use --strategy pulse.")
    delta = check_level(0.05 if args.delta is None else args.delta, "delta")
    long = is_long(args, args.scores, args.score_column)
    if long:
        S, names, columns = long_scores(args, args.scores)
    else:
        S, names, columns = wide_scores(args.scores, args.header, args.model_names)
    side = None
    if args.side_scores is not None and is_long(args, args.side_scores, args.score_column):
        side, _, side_columns = long_scores(args, args.side_scores)
        side = align_side(side, side_columns, columns, args.side_scores)
    elif args.side_scores is not None:
        if long:
            raise ValueError(f"--scores {args.scores} is a long table, so --side-scores must be "
                             "one too (with the same model, example and score columns).")
        side, _, side_columns = wide_scores(args.side_scores, args.header, args.model_names)
        if side.shape[1] != S.shape[1] or (args.header and side_columns != columns):
            raise ValueError(
                f"--side-scores must have the same example columns as --scores, in the same "
                f"order ({S.shape[1]} columns); got {side.shape[1]}."
            )
    observed = S[~np.isnan(S)]
    fractional = bool(np.any((observed != 0) & (observed != 1)))
    if side is not None:
        s = side[~np.isnan(side)]
        fractional = fractional or bool(np.any((s != 0) & (s != 1)))
    est = _strategy(args, fractional)
    try:
        oracle = MatrixOracle(S, missing="exclude")
    except ValueError as exc:
        raise ValueError(f"{args.scores}: {exc}") from None
    if args.store is not None:  # the table was validated above; now open the store
        oracle = MatrixOracle(S, missing="exclude", store=args.store, model_ids=names,
                              example_ids=list(columns) if args.header or long else None)
    available = np.sum(~np.isnan(S), axis=1)
    est.fit(oracle, side_scores=side)
    ci = None
    if args.strategy == "pulse":
        with warnings.catch_warnings():
            # the summary flags vacuous intervals itself, with the command-line options to change
            warnings.filterwarnings("ignore", message=".*vacuous", category=RiskControlWarning)
            ci = est.confidence_intervals(delta)
    if args.output is not None:
        out = pd.DataFrame({
            "model": names,
            "estimate": est.means_,
            "evaluations": est.n_evaluations_per_model_,
            "available": available,
            "best": np.arange(len(names)) == est.best_index_,
        })
        if ci is not None:
            out["ci_low"], out["ci_high"] = ci[:, 0], ci[:, 1]
            out["ci_vacuous"] = vacuous_intervals(ci)
        out.to_csv(args.output, index=False)
    _write_summary(est, names, args.scores, available, delta, ci, sys.stdout, long)
    if args.store is not None:
        n_stored = oracle.store_.summary()[0]
        print(f"store {args.store}: {oracle.n_reused_} cells read back, {oracle.n_purchased_} "
              f"newly revealed, {n_stored} stored in all", file=sys.stdout)
        oracle.store_.close()
