"""``python -m sklearn_riskcontrol bandits``: identify the best model of a score table.

The table holds one row per model and one column per example (scores in [0, 1], e.g. 1 =
correct; an empty cell = that model was not run on that example), or is a long table with one
row per (model, example) pair (CSV, JSON Lines or Parquet; a missing row = not available),
read by :func:`sklearn_riskcontrol.evaluation.read_long_table`. The chosen strategy reveals
only the cells it pays for, up to ``--budget`` of them, and reports the model it identifies as
best, with the simultaneous confidence intervals of PULSE and UCB-E (vacuous ones flagged).
Models scored on different examples are compared as they are, with a warning, or on the
examples they all have (``--common-examples``). Every table is read (and every bad cell
reported) by :mod:`sklearn_riskcontrol.cli._io`.
"""

import argparse
import re
import sys
import warnings

import numpy as np

from ._io import (
    SCORE_HIGH,
    SCORE_LOW,
    add_long_options,
    align_side,
    document,
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
_DELTA = 0.05  # default failure probability of the printed intervals

# What the keys of the store's run configuration (MatrixOracle's) are on the command line.
_STORE_KEYS = {
    "oracle": "kind of run",
    "n_models": "number of models",
    "n_examples": "number of examples",
    "model_ids": "model names",
    "example_ids_sha256": "example ids",
    "scores_sha256": "scores",
}

_EPILOG = """\
examples:
  # the best of the models in scores.csv (rows = models, first column = model names),
  # scoring at most 20% of the cells, with 95% simultaneous confidence intervals
  python -m sklearn_riskcontrol bandits --scores scores.csv --budget 0.2

  # PULSE with other models' scores on the same examples as side information
  python -m sklearn_riskcontrol bandits --scores scores.csv --side-scores history.csv \\
      --budget 5000 --batch-size 32 --refit-every 20 --rank 4 --output estimates.csv

  # the UCB-E baseline (observed scores only; anytime-valid intervals), with progress lines
  python -m sklearn_riskcontrol bandits --scores scores.csv --strategy ucbe --budget 0.2 -v

  # record every revealed cell in run.db; the same command again continues (and replays) the run
  python -m sklearn_riskcontrol bandits --scores scores.csv --budget 0.2 --store run.db

  # a long table, one row per (model, example): columns model, example, score (found by name)
  python -m sklearn_riskcontrol bandits --scores runs.jsonl --budget 0.2
  python -m sklearn_riskcontrol bandits --scores runs.parquet --long --model-column llm \\
      --example-column question_id --score-column correct --budget 0.2

  # models run on different examples: compare them on the examples they all have
  python -m sklearn_riskcontrol bandits --scores runs.jsonl --common-examples
"""


def add_parser(subparsers):
    """Register the ``bandits`` command on ``subparsers``."""
    p = subparsers.add_parser(
        "bandits",
        help="identify the best model of a models x examples score table within a budget "
             "(PULSE, UCB-E, UCB-E-LRF)",
        description=(
            "Best-model identification under an evaluation budget.\n\n"
            "Reads a CSV score table (one row per model, one column per example; scores in\n"
            "[0, 1], higher = better, e.g. 1 = correct; an empty cell = not available) or a\n"
            "long table (one row per model and example: CSV, JSON Lines or Parquet), reveals\n"
            "only the cells the strategy pays for, and prints the model identified as best, its\n"
            "estimated mean score and the evaluations used. PULSE (default) and UCB-E also give\n"
            "anytime-valid confidence intervals that hold for all models at once with\n"
            "probability >= 1 - delta; an interval spanning at least 99% of the score range\n"
            "[0, 1] is flagged as vacuous. Models scored on different examples are compared as\n"
            "they are, with a warning, unless --common-examples keeps the examples they all have."
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
    p.add_argument("--duplicates", choices=["error", "mean", "last"], default="error",
                   help="long tables: several rows for one model and example are an error "
                        "(default), or their scores are averaged (mean), or the last row counts")
    p.add_argument("--common-examples", action="store_true",
                   help="compare the models on the examples every model has a score for (the "
                        "others are dropped); without it, models scored on different examples "
                        "are compared on their own examples, with a warning")
    p.add_argument("--strategy", choices=list(_STRATEGIES), default="pulse",
                   help="pulse (default), ucbe, ucbe-lrf, or the baselines uniform and naive")
    p.add_argument("--budget", default="0.1",
                   help="evaluations allowed: an integer counts cells, a decimal in (0, 1] is a "
                        "fraction of the available cells (default: 0.1)")
    p.add_argument("--batch-size", type=int, default=None,
                   help="examples scored per step (default: the strategy's, 64 or 32)")
    who, default = _defaults("refit_every")
    p.add_argument("--refit-every", type=int, default=None,
                   help=f"{who}: refit the low-rank model every this many steps (default: "
                        f"{default}; auto spreads a fixed number of refits over the run)")
    who, default = _defaults("rank")
    p.add_argument("--rank", type=int, default=None,
                   help=f"{who}: rank of the low-rank model (default: {default})")
    p.add_argument("--delta", type=float, default=None,
                   help=f"{'/'.join(_with_intervals())}: failure probability of the confidence "
                        f"intervals (default: {_DELTA:g})")
    p.add_argument("--random-state", type=int, default=0,
                   help="seed of the example sampling and tie-breaking (default: 0)")
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="progress lines (-vv: about 100 per run)")
    p.add_argument("--output", default=None,
                   help="write per-model estimates, evaluations and intervals to this CSV")
    p.add_argument("--store", default=None,
                   help="SQLite file recording every revealed cell (created if absent); rerunning "
                        "the same command with it continues the stored run and reads stored cells "
                        "back; a store written for another table, or a file that is not a "
                        "store, is refused (and left unchanged)")
    return p


# --------------------------------------------------------------------------------------------
def _classes():
    """The strategy classes by command-line name."""
    from .. import bandits

    return {name: getattr(bandits, cls) for name, cls in _STRATEGIES.items()}


def _defaults(param):
    """The strategies taking ``param`` and its default, for the help (read from the estimators,
    so that the help says what runs)."""
    params = {name: cls().get_params() for name, cls in _classes().items()}
    found = {name: p[param] for name, p in params.items() if param in p}
    values = {str(v) for v in found.values()}
    text = values.pop() if len(values) == 1 else ", ".join(f"{v} for {k}" for k, v in found.items())
    return "/".join(found), text


def _with_intervals():
    """The strategies that give confidence intervals."""
    return [name for name, cls in _classes().items() if hasattr(cls, "confidence_intervals")]


def _store_mismatch(args, exc):
    """A store-mismatch error in command-line words, what differs first."""
    order = list(_STORE_KEYS)
    what = []
    for key in sorted(exc.keys, key=lambda k: order.index(k) if k in order else len(order)):
        text = _STORE_KEYS.get(key, repr(key))
        if key in ("n_models", "n_examples"):
            text += f" ({exc.stored.get(key)} in the store, {exc.given.get(key)} now)"
        what.append(text)
    what = " and ".join([", ".join(what[:-1]), what[-1]] if len(what) > 1 else what)
    table = f"--scores {args.scores}" + (" (its common examples)" if args.common_examples else "")
    return (f"--store {args.store} holds the cells of another run: the {what or 'configuration'}"
            f" differ from those of {table}; pass a new --store file, or rerun the stored run's "
            "command to continue it.")


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


def _write_summary(est, names, args, available, delta, ci, long, n_examples):
    """Print the summary (on standard output, as always) and return its lines and the
    guarantee sentence (None without intervals)."""
    from ..bandits import vacuous_intervals

    best, path = int(est.best_index_), args.scores
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
    if args.common_examples:
        kept = est.oracle_.n_examples
        lines.append(f"compared on the examples every model has: {kept} of {n_examples} "
                     f"({n_examples - kept} dropped by --common-examples)")
    guarantee = None
    if ci is None:
        lines.append(f"no confidence interval: --strategy {args.strategy} gives none ("
                     f"{' and '.join(_with_intervals())} do)")
    else:
        guarantee = (f"with probability >= {1 - delta:g}, every model's mean lies in its "
                     f"interval, simultaneously over all {len(names)} models (the intervals are "
                     "realizations)")
        lines.append(f"guarantee: {guarantee}")
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
    print("\n".join(lines))
    return lines, guarantee


def _certified_best(ci, best):
    """Whether the simultaneous intervals single out ``best``: its lower end above every other
    model's upper end (then it is the best model whenever the intervals all hold)."""
    others = np.delete(ci, best, axis=0)
    return bool(others.size == 0 or ci[best, 0] > others[:, 1].max())


def _read(args, long):
    """The score matrix, model names, example columns and side scores (or None) of the files."""
    if long:
        S, names, columns = long_scores(args, args.scores)
    else:
        if args.duplicates != "error":
            raise ValueError("--duplicates applies to long tables; a wide table has one cell "
                             "per model and example.")
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
    unscored = np.flatnonzero(np.isnan(S).all(axis=1))
    if unscored.size:
        others = f" (nor do {unscored.size - 1} other models)" if unscored.size > 1 else ""
        raise ValueError(f"{args.scores}: model {names[unscored[0]]!r} has no score on any "
                         f"example{others}; drop the models without scores, or score them.")
    return S, names, columns, side


def _common_examples(args, S, columns, side):
    """The examples every model has (``--common-examples``): S, columns and side restricted."""
    keep = ~np.isnan(S).any(axis=0)
    if not keep.any():
        raise ValueError(f"--common-examples: no example of {args.scores} has a score from every "
                         "model, so there is nothing to compare the models on.")
    side = None if side is None else side[:, keep]
    return S[:, keep], [c for c, k in zip(columns, keep) if k], side


# The strategies' own messages name their Python parameters; say them as the command's options.
_CLI_WORDS = [
    (r"The '(\w+)' parameter of \w+ must", lambda m: f"{_flag(m.group(1))} must"),
    (r"n_warmup \* batch_size", lambda m: "its warm-up batches x --batch-size"),
    (r"lower batch_size / n_warmup", lambda m: "lower --batch-size"),
    (r"`(budget|batch_size|refit_every|rank)`", lambda m: _flag(m.group(1))),
]


def _flag(name):
    return "--" + name.replace("_", "-")


def _in_cli_words(message):
    """A strategy's error message with its parameter names replaced by the command's options."""
    for pattern, repl in _CLI_WORDS:
        message = re.sub(pattern, repl, message)
    return message


def run(args):
    """Run ``bandits`` on parsed arguments and return the result document (bad input raises
    ``ValueError``/``OSError``)."""
    import pandas as pd

    from .._validation import RiskControlWarning, check_level, warn
    from ..evaluation import MatrixOracle
    from ..bandits import vacuous_intervals
    from ..evaluation._oracles import different_example_sets
    from ..evaluation._store import ConfigMismatchError

    with_intervals = _with_intervals()
    if args.delta is not None and args.strategy not in with_intervals:
        raise ValueError(f"--delta sets the confidence intervals, which only --strategy "
                         f"{' and '.join(with_intervals)} give.")
    delta = check_level(_DELTA if args.delta is None else args.delta, "delta")
    long = is_long(args, args.scores, args.score_column)
    S, names, columns, side = _read(args, long)
    n_examples = S.shape[1]
    if args.common_examples:
        S, columns, side = _common_examples(args, S, columns, side)
    sets = different_example_sets(~np.isnan(S), [f"model {n!r}" for n in names])
    if sets is not None:
        text, common = sets
        fix = (f" Pass --common-examples to compare them on the {common} example"
               f"{'s' * (common > 1)} they all have.")
        warn(text + "." + (fix if common else ""))
    observed = S[~np.isnan(S)]
    fractional = bool(np.any((observed != 0) & (observed != 1)))
    if side is not None:
        s = side[~np.isnan(side)]
        fractional = fractional or bool(np.any((s != 0) & (s != 1)))
    est = _strategy(args, fractional)
    with warnings.catch_warnings():
        if sets is not None:  # said above; MatrixOracle says it again with the Python fix
            warnings.filterwarnings("ignore", message=re.escape(sets[0]),
                                    category=RiskControlWarning)
        try:
            oracle = MatrixOracle(S, missing="exclude", model_ids=names)
        except ValueError as exc:
            raise ValueError(f"{args.scores}: {exc}") from None
        if args.store is not None:  # the table was validated above; now open the store
            try:
                oracle = MatrixOracle(S, missing="exclude", store=args.store, model_ids=names,
                                      example_ids=list(columns) if args.header or long else None)
            except ConfigMismatchError as exc:
                raise ValueError(_store_mismatch(args, exc)) from None
    available = np.sum(~np.isnan(S), axis=1)
    try:
        est.fit(oracle, side_scores=side)
    except ValueError as exc:
        raise ValueError(_in_cli_words(str(exc))) from None
    ci = None
    if args.strategy in with_intervals:
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
    lines, guarantee = _write_summary(est, names, args, available, delta, ci, long, n_examples)
    if args.store is not None:
        n_stored = oracle.store_.summary()[0]
        lines.append(f"store {args.store}: {oracle.n_reused_} cells read back, "
                     f"{oracle.n_purchased_} newly revealed, {n_stored} stored in all")
        print(lines[-1], file=sys.stdout)
        oracle.store_.close()
    best = int(est.best_index_)
    certified = ci is not None and _certified_best(ci, best)
    rows = [{"name": n, "estimate": float(est.means_[k]),
             "evaluations": int(est.n_evaluations_per_model_[k]),
             "available": int(available[k]), "best": k == best,
             "interval": None if ci is None else
             dict({"low": ci[k, 0], "high": ci[k, 1], "level": 1 - delta},
                  vacuous=bool(vacuous_intervals(ci)[k]))}
            for k, n in enumerate(names)]
    return document(
        "bandits",
        decision=lines[0] + ("; certified best: its interval lies above every other model's"
                             if certified else
                             "; not certified best: the intervals do not single it out"),
        passed=certified,
        rule="passes when the identified model is certified best: its simultaneous interval "
             "lies above every other model's",
        guarantee=guarantee or lines[-1], alpha=None, delta=delta if ci is not None else np.nan,
        rows=rows, messages=lines, labels_used=int(est.n_evaluations_),
        intervals=[dict(r["interval"], name=r["name"], estimate=r["estimate"])
                   for r in rows if r["interval"]],
        interval_scale={"low": SCORE_LOW, "high": SCORE_HIGH, "label": "mean score"},
        facts={"strategy": type(est).__name__},
        reasons={"alpha": "best-model identification has no risk level",
                 "delta": "this strategy gives no confidence intervals"})
