"""``python -m sklearn_riskcontrol autoeval {certify,select,compare,monitor,label}``: loss tables.

For users whose losses are already computed (e.g. an LLM graded by humans on a few questions and
by an LLM judge on many): no Python needed. Rows are processed in file order, which must be a
random order (or pass ``--shuffle SEED``).

certify
    ``--labeled`` CSV, one row per human-labeled example: the loss with the true label
    (``--loss-column``, default ``loss``) and the loss with the judge's label
    (``--judge-column``, default ``judge_loss``); a row whose loss is empty is an unlabeled
    example (its judge loss is used), so one file can hold both. ``--unlabeled`` CSV, one row
    per unlabeled example, with the judge's loss. Prints a one-row CSV (certified, p-value,
    labels needed, ...) and a summary on standard error. When ``--labeled`` has a model column
    (``--model-column``, default ``model``) each model is certified on its own rows, one row
    per model (``--model NAME`` picks one); rows of different models are never pooled.

    Or Inspect AI logs, ``--inspect-log PATH`` (a log or a folder of them) instead of
    ``--labeled``: ``--label-scorer`` names the ground-truth scorer and ``--judge-scorer`` the
    judge's; a sample with a label score is labeled, one without is unlabeled (read by
    :mod:`sklearn_riskcontrol.cli._inspect`, which says how errors, missing grades and epochs
    are handled).
select
    Wide tables, one column per candidate (same columns in every file, in testing order):
    ``--labeled`` (losses with true labels), ``--judge-labeled`` (judge losses on the same
    examples) and ``--unlabeled`` (judge losses on unlabeled examples). Prints one row per
    candidate (p-value, tested, certified, selected).

    Or long tables (``--long``, detected for ``.jsonl``/``.parquet`` files and for CSV headers
    with the model, example and loss columns), one row per (candidate, example), read by
    :func:`sklearn_riskcontrol.evaluation.read_long_table`: ``--labeled`` holds ``--loss-column``
    (and, optionally, ``--judge-column``, which then replaces ``--judge-labeled``);
    ``--judge-labeled`` and ``--unlabeled`` hold ``--judge-column``. Candidates are tested in
    the order of their first row in ``--labeled``; rows of the other files are matched by
    candidate and example id.
compare
    The tables of ``select`` (wide or long), one column per model: which models are certified
    better than which (every ordered pair, or each model against ``--baseline``), by paired
    tests on the same examples with Holm's procedure (family-wise error <= delta). Prints one
    row per pair tested (p-value, certified); with two models also the interval for
    ``risk(A) - risk(B)``.

monitor
    ``--stream`` CSV, one row per production row in the order they arrived: the loss with the
    true label (``--loss-column``; empty where the row was not labeled) and, optionally, the
    judge's loss on every row (``--judge-column``; without that column: labels only).
    :class:`~sklearn_riskcontrol.autoeval.RiskMonitor` raises an alarm when the evidence that
    the risk exceeds ``--alpha`` reaches ``1 / delta``; with a judge, ``--label-rate`` is the
    probability with which each row was sent for labeling. Prints one row per model (alarm, its
    row, labels, the final confidence bounds); rows are never shuffled (the order is the
    stream's), and rows of different models (``--model-column``) are monitored separately.

label
    Active labeling of a pool (:class:`~sklearn_riskcontrol.autoeval.ActiveLabelingSession`):
    ``--pool`` CSV, one row per pool item with the judge's loss (``--judge-column``); the
    session lives in ``--store`` (a SQLite file), so each call continues it. ``--labels`` CSV
    (optional): the losses of rows proposed earlier (``--row-column``, the 1-based data row of
    the pool, and ``--loss-column``). Prints the status on standard error and, unless done, the
    next ``--k`` rows to label as CSV (``row``, plus ``--id-column`` when the pool has it).
    Model selection: several judge columns (``--judge-column a,b``, one per candidate, in the
    order of the fixed sequence) and as many loss columns in ``--labels``
    (``--loss-column loss_a,loss_b``); ``--procedure`` and ``--cost`` as in ``select``.

Every table is read (and every bad cell reported) by :mod:`sklearn_riskcontrol.cli._io`.
"""

import warnings

import numpy as np

from ._inspect import add_inspect_options, check_inspect_options, inspect_losses
from ._io import (
    add_long_options,
    document,
    interval,
    is_long,
    long_losses,
    losses,
    one_line_warnings,
    read_table,
    say,
    wide_losses,
    write_csv,
)

__all__ = ["add_parser", "run"]


def add_parser(subparsers):
    """Register the ``autoeval`` command (``certify``, ``select``, ``compare``) on ``subparsers``."""
    p = subparsers.add_parser(
        "autoeval",
        help="certify risk <= alpha / select a model from CSV loss tables (R-AutoEval+)",
        description=(
            "R-Eval, R-AutoEval and R-AutoEval+ on precomputed losses in [0, 1]: certify that a "
            "model's risk is at most alpha with probability 1 - delta from a few human-labeled "
            "losses plus an auto-evaluator's (LLM judge's) losses, or select the cheapest "
            "certified candidate (family-wise error <= delta). Rows are used in file order: "
            "shuffle them first, or pass --shuffle SEED."
        ),
    )
    sub = p.add_subparsers(dest="autoeval_command", required=True, metavar="ACTION")

    c = sub.add_parser(
        "certify", help="test H0: risk > alpha for one model",
        description="Test H0: risk > alpha for one model; certified = H0 rejected at level delta.",
    )
    c.add_argument("--labeled", default=None,
                   help="CSV, one row per human-labeled example (true-label and judge losses); "
                        "a row with an empty loss is an unlabeled example (or --inspect-log)")
    c.add_argument("--unlabeled", default=None,
                   help="CSV, one row per unlabeled example (judge loss); omit for R-Eval")
    c.add_argument("--loss-column", default="loss",
                   help="loss with the true label in --labeled (default: loss)")
    c.add_argument("--judge-column", default=None, action="append", metavar="COLUMN",
                   help="loss with the judge's label, in both files (default: judge_loss); "
                        "several judges: repeat the option or separate the columns with commas")
    c.add_argument("--model-column", default="model",
                   help="column of model ids: when --labeled has it, each model is certified "
                        "on its own rows, one output row per model (default: model)")
    c.add_argument("--model", default=None, metavar="NAME",
                   help="certify only this model (a value of --model-column)")
    c.add_argument("--ci", action="store_true",
                   help="add a two-sided (1 - delta) confidence interval for the risk (WSR)")
    _common(c)
    add_inspect_options(c)

    s = sub.add_parser(
        "select", help="select the cheapest certified model among candidates (FST/Bonferroni)",
        description=(
            "One test per candidate column; fixed-sequence testing (in column order, stops at "
            "the first failure) or Bonferroni. Every certified candidate has risk <= alpha with "
            "probability 1 - delta jointly; the cheapest certified one is selected."
        ),
    )
    _loss_table_options(s, "candidate")
    s.add_argument("--procedure", choices=["fst", "bonferroni"], default="fst",
                   help="fst: in column order, stop at the first failure (default); bonferroni")
    s.add_argument("--cost", default=None,
                   help="comma-separated costs, one per candidate column (e.g. model sizes); "
                        "default: the last certified candidate in column order")
    s.add_argument("--n-jobs", type=int, default=None, help="candidates tested in parallel")
    _common(s)

    m = sub.add_parser(
        "compare", help="which models are certified better than which (paired, Holm)",
        description=(
            "Paired tests of risk(A) < risk(B) - margin on the same examples, for every ordered "
            "pair of model columns (or each model against --baseline); Holm's procedure keeps "
            "the probability that any certified pair is wrong at most delta. With two models "
            "the (1 - delta) interval for risk(A) - risk(B) is printed too."
        ),
    )
    _loss_table_options(m, "model")
    m.add_argument("--baseline", default=None, metavar="MODEL",
                   help="compare each model with this one only (a model column name)")
    m.add_argument("--margin", type=float, default=0.0,
                   help="certify risk(A) < risk(B) - margin; negative: non-inferiority "
                        "(default: 0)")
    _common(m, alpha=False)

    w = sub.add_parser(
        "monitor", help="alarm when a deployed model's risk rises above alpha (judge + labels)",
        description=(
            "Monitor a stream of production rows, in file order: raise an alarm when the "
            "evidence that the risk exceeds alpha reaches 1/delta. If the risk of every row "
            "stays at most alpha, the alarm ever fires with probability at most delta."
        ),
    )
    w.add_argument("--stream", required=True,
                   help="CSV, one row per production row in arrival order: the true-label loss "
                        "(empty where not labeled) and, optionally, the judge's loss")
    w.add_argument("--loss-column", default="loss",
                   help="loss with the true label, empty where not labeled (default: loss)")
    w.add_argument("--judge-column", default="judge_loss",
                   help="the judge's loss on every row; without this column the monitor uses "
                        "the labels alone (default: judge_loss)")
    w.add_argument("--label-rate", type=float, default=None,
                   help="with a judge: the probability with which each row was sent for "
                        "labeling, decided before its label was seen (required with a judge)")
    w.add_argument("--model-column", default="model",
                   help="column of model ids: each model's rows are monitored on their own "
                        "(default: model)")
    w.add_argument("--half-life", type=float, default=30,
                   help="half-life in labels of the estimates that size the bets (default: 30)")
    w.add_argument("--alpha", type=float, required=True, help="tolerated risk in (0, 1)")
    w.add_argument("--delta", type=float, default=0.1,
                   help="false-alarm probability over the whole stream (default: 0.1)")
    w.add_argument("--output", default="-", help="output CSV path (default: standard output)")
    _add_label_parser(sub)
    return p


def _add_label_parser(sub):
    a = sub.add_parser(
        "label", help="propose which pool rows to label; certify the pool's risk (active)",
        description=(
            "Active labeling: proposes the next rows of --pool to label (strata by the judge's "
            "loss), reads their losses from --labels and reports whether the risk over the pool "
            "is certified below alpha. The session is kept in --store: run the command again "
            "with the labels of the proposed rows. If the pool's risk is at least alpha, it is "
            "ever certified with probability at most delta."
        ),
    )
    a.add_argument("--pool", required=True,
                   help="CSV, one row per pool item, with the judge's loss in [0, 1]")
    a.add_argument("--judge-column", default="judge_loss",
                   help="the judge's loss in --pool (default: judge_loss); comma-separated "
                        "columns, one per candidate, select among candidates")
    a.add_argument("--store", required=True,
                   help="SQLite file holding the session (created on the first call)")
    a.add_argument("--labels", default=None,
                   help="CSV of the losses of proposed rows: --row-column and --loss-column")
    a.add_argument("--row-column", default="row",
                   help="in --labels: the 1-based data row of --pool (default: row)")
    a.add_argument("--loss-column", default="loss",
                   help="in --labels: the loss with the true label (default: loss); in a "
                        "selection, one comma-separated column per candidate")
    a.add_argument("--id-column", default=None,
                   help="a column of --pool copied into the proposals (e.g. the question id)")
    a.add_argument("--k", type=int, default=10, help="rows to propose (default: 10)")
    a.add_argument("--max-labels", type=int, required=True, help="label budget")
    a.add_argument("--sampling", choices=["active", "uniform"], default="active",
                   help="active: strata by the judge (default); uniform: plain random order")
    a.add_argument("--seed", type=int, default=0, help="seed of the draws (default: 0)")
    a.add_argument("--alpha", type=float, required=True, help="tolerated risk in (0, 1)")
    a.add_argument("--delta", type=float, default=0.1,
                   help="failure probability in (0, 1) (default: 0.1)")
    a.add_argument("--output", default="-",
                   help="CSV of the proposed rows (default: standard output)")
    a.add_argument("--procedure", choices=["fst", "bonferroni"], default="fst",
                   help="selection: fixed sequence in the --judge-column order (default) or "
                        "Bonferroni")
    a.add_argument("--cost", default=None,
                   help="selection: comma-separated cost per candidate, the cheapest certified "
                        "is selected (default: the last certified)")


def _loss_table_options(p, noun):
    """The loss tables of ``select`` and ``compare`` (read by :func:`_loss_tables`): wide files,
    one column per ``noun``, or long files."""
    p.add_argument("--labeled", required=True,
                   help=f"CSV of true-label losses: one column per {noun}, one row per example")
    p.add_argument("--judge-labeled", default=None, action="append",
                   help="CSV of judge losses on the same examples (same columns); several "
                        "judges (compare only): repeat the option, one file per judge")
    p.add_argument("--unlabeled", default=None, action="append",
                   help="CSV of judge losses on unlabeled examples (same columns); several "
                        "judges: repeat the option, one file per judge, in the order of "
                        "--judge-labeled")
    add_long_options(p, noun, "loss")
    p.add_argument("--loss-column", default="loss",
                   help="long tables: true-label losses in --labeled (default: loss)")
    p.add_argument("--judge-column", default=None, action="append", metavar="COLUMN",
                   help="long tables: judge losses in --judge-labeled and --unlabeled, or in "
                        "--labeled when --judge-labeled is omitted (default: judge_loss); "
                        "several judges (compare only): repeat the option or separate the "
                        "columns with commas")


def _common(p, alpha=True):
    if alpha:
        p.add_argument("--alpha", type=float, required=True, help="tolerated risk in (0, 1)")
    p.add_argument("--delta", type=float, default=0.1,
                   help="failure probability in (0, 1) (default: 0.1)")
    p.add_argument("--method", choices=["plus", "autoeval", "eval"], default="plus",
                   help="plus: R-AutoEval+ (default); autoeval: R-AutoEval; eval: labels only")
    p.add_argument("--betting", choices=["up", "wsr"], default="up",
                   help="universal portfolio (default) or WSR bets")
    p.add_argument("--n-rho", type=int, default=10,
                   help="reliance factors of R-AutoEval+ (default: 10)")
    p.add_argument("--shuffle", type=int, default=None, metavar="SEED",
                   help="shuffle labeled and unlabeled rows (separately) with this seed")
    p.add_argument("--output", default="-", help="output CSV path (default: standard output)")
    p.add_argument("--groups", default=None, metavar="COLUMN",
                   help="cluster id column (e.g. the document of a question), in --labeled and "
                        "--unlabeled: clusters are the draws, the risk is per item, --shuffle "
                        "shuffles clusters; a cluster is wholly labeled or unlabeled (wide "
                        "tables for select/compare)")


def _select_long(args):
    """Loss tables of long files; examples of --labeled without any loss are unlabeled."""
    H, G, names, examples, U = long_losses(
        args, args.labeled, args.loss_column,
        judge=args.judge_column if args.judge_labeled is None else None,
    )
    if args.method == "eval":
        return H, None, None, names
    if G is None and args.judge_labeled is None:
        raise ValueError(
            f"--method {args.method} needs judge losses on the labeled examples: a "
            f"{args.judge_column!r} column in --labeled, or --judge-labeled; or use "
            "--method eval."
        )
    if G is None:
        G = long_losses(args, args.judge_labeled, args.judge_column, names, examples)[0]
    if args.unlabeled is not None:
        more = long_losses(args, args.unlabeled, args.judge_column, names)[0]
        U = more if U is None else np.concatenate([U, more], axis=1)
    return H, G, U, names


def _no_unlabeled(args, what=""):
    """The method run without unlabeled rows: R-Eval, said in the command line's words when
    another method was asked for."""
    if args.method != "eval":
        why = ("no --unlabeled file, and no row of --labeled with an empty loss"
               if getattr(args, "inspect_log", None) is None else
               f"every sample has a --label-scorer {args.label_scorer!r} score")
        warnings.warn(f"{what}no unlabeled rows ({why}): --method {args.method} reduces to "
                      "R-Eval (labels only).", stacklevel=2)
    return "eval"


def _shuffled_clusters(rng, ids, *arrays):
    """Shuffle whole clusters: the rows (last axis) of each array and the ids ``ids``, ordered
    by a random order of the clusters (rows of a cluster keep their order; no ``rng``: as
    given)."""
    if rng is None or ids is None:
        return (ids,) + arrays
    _, codes = np.unique(ids, return_inverse=True)
    rank = rng.permutation(int(codes.max()) + 1) if ids.size else np.zeros(0, dtype=int)
    perm = np.argsort(rank[codes.ravel()], kind="stable")
    return (ids[perm],) + tuple(None if a is None else a[..., perm] for a in arrays)


def _shuffled(rng, *arrays):
    """The same permutation of the last axis of each array (None passes through)."""
    if rng is None or all(a is None for a in arrays):
        return arrays
    n = next(a.shape[-1] for a in arrays if a is not None)
    perm = rng.permutation(n)
    return tuple(None if a is None else a[..., perm] for a in arrays)


def _model_rows(table, args, flag):
    """``{model: row indices}`` of a certify table, in order of first row (``None``: the table
    has no model column, every row is one model's)."""
    if args.model_column not in table.columns:
        return None
    ids = table.text(args.model_column)
    if (ids == "").any():
        k = int(np.flatnonzero(ids == "")[0])
        raise ValueError(f"{table.where(k, args.model_column)} is empty; every row of {flag} "
                         "needs its model id.")
    names, first, codes = np.unique(ids, return_index=True, return_inverse=True)
    order = np.argsort(first)
    return {str(names[k]): np.flatnonzero(codes == k) for k in order}


def _certify_losses(args):
    """``[(model or None, h, g, u)]``: each model's labeled losses, judge losses on them and
    judge losses on its unlabeled rows (rows of --labeled with an empty loss, then
    --unlabeled), read from Inspect logs with --inspect-log. Rows of different models are never
    pooled."""
    if getattr(args, "inspect_log", None) is not None:
        out, args.source_facts = inspect_losses(args)
        return out
    lab = read_table(args.labeled, rows="labeled example")
    present = [c for c in args.judge_columns if c in lab.columns]
    judge = args.judge_column if present else None
    if args.method != "eval" or present:
        for c in args.judge_columns:
            lab.index(c)  # the reader's message: the column is missing
    h = lab.numbers(args.loss_column, what="losses", low=0, high=1, allow_empty=judge is not None,
                    hint=None if judge is None else "an empty loss marks an unlabeled row, "
                    f"which needs a {judge!r} value")
    g = None
    if judge is not None:
        cols = []
        for col in args.judge_columns:
            gc = lab.numbers(col, what="judge losses", low=0, high=1, allow_empty=True)
            unlabeled = np.isnan(h)
            bad = np.isnan(gc) & (unlabeled | (args.method != "eval"))
            if bad.any():
                k = int(np.flatnonzero(bad)[0])
                need = ("a labeled row needs its judge loss too" if not unlabeled[k] else
                        "a row needs a loss (labeled) or a judge loss (unlabeled)")
                raise ValueError(f"{lab.where(k, col)} is empty; {need}.")
            cols.append(gc)
        g = _judge_stack(cols)
    unl = None
    if args.unlabeled is not None and args.method != "eval":
        unl = read_table(args.unlabeled, rows="unlabeled example")
    groups = _model_rows(lab, args, "--labeled")
    unl_groups = None if unl is None else _model_rows(unl, args, "--unlabeled")
    if args.model is not None:
        if groups is None:
            raise ValueError(f"--model {args.model} was given but --labeled has no "
                             f"{args.model_column!r} column (--model-column).")
        if args.model not in groups:
            raise ValueError(f"--labeled has no row of model {args.model!r}; its "
                             f"{args.model_column!r} column holds {list(groups)}.")
        groups = {args.model: groups[args.model]}
    if unl_groups is not None and groups is None and len(unl_groups) > 1:
        raise ValueError(
            f"--unlabeled holds {len(unl_groups)} models in its {args.model_column!r} column "
            f"({list(unl_groups)}) but --labeled has no such column: add it to --labeled so "
            "that each model is certified on its own rows.")
    if unl is not None and unl_groups is None and groups is not None and len(groups) > 1:
        raise ValueError(
            f"--labeled holds {len(groups)} models in its {args.model_column!r} column "
            f"({list(groups)}) but --unlabeled has no such column, so its rows cannot be "
            "given to one model: add the column to --unlabeled (or pass --model NAME for a "
            "file that holds only that model's rows).")
    u_all = None if unl is None else _judge_stack([losses(unl, c) for c in args.judge_columns])
    ids_lab = None if args.groups is None else lab.text(args.groups)
    ids_unl = None if args.groups is None or unl is None else unl.text(args.groups)
    out = []
    for name, rows in ({None: np.arange(lab.n_rows)} if groups is None else groups).items():
        hm = h[rows]
        keep = ~np.isnan(hm)
        if args.method == "eval":
            out.append((name, hm[keep], None, None,
                        None if ids_lab is None else ids_lab[rows][keep], None))
            continue
        gm = g[..., rows]  # a judge column exists: checked above for every method but R-Eval
        parts = [gm[..., ~keep]]
        id_parts = [] if ids_lab is None else [ids_lab[rows][~keep]]
        if unl is not None:
            take = (slice(None) if unl_groups is None else
                    unl_groups.get(name, np.zeros(0, dtype=int)))
            parts.append(u_all[..., take])
            if ids_unl is not None:
                id_parts.append(ids_unl[take])
        um = np.concatenate(parts, axis=-1)
        gl = None if ids_lab is None else ids_lab[rows][keep]
        gu = None if ids_lab is None else np.concatenate(id_parts)
        some = um.shape[-1] > 0
        out.append((name, hm[keep], gm[..., keep], um if some else None, gl,
                    gu if some else None))
    return out


def _cluster_options(gl, gu):
    """``groups_labeled`` / ``groups_unlabeled`` of the array functions (none without
    --groups)."""
    return {} if gl is None else dict(groups_labeled=gl, groups_unlabeled=gu)


def _judge_stack(columns):
    """One judge's losses as they are, several judges' stacked on a new first axis: (judges,
    examples) or (judges, models, examples); the examples stay on the last axis (see
    :func:`_shuffled`)."""
    return columns[0] if len(columns) == 1 else np.stack(columns)


def _examples_first(x):
    """Judge losses as the array functions take them: (examples,) or (examples, judges)."""
    return None if x is None else x.T


def _judge_options(args):
    """Normalize the repeatable judge options: ``args.judge_columns`` (names, commas split;
    ``args.judge_column`` its first), and for ``select``/``compare`` ``args.judge_files`` /
    ``args.unlabeled_files`` (``args.judge_labeled`` / ``args.unlabeled`` their first)."""
    option, given = "--judge-column", args.judge_column
    if getattr(args, "judge_scorer", None) is not None:
        option, given = "--judge-scorer", args.judge_scorer
    names = [c.strip() for item in (given or ["judge_loss"])
             for c in item.split(",") if c.strip()]
    if not names:
        raise ValueError(f"{option} is empty: name at least one judge.")
    if len(set(names)) < len(names):
        raise ValueError(f"{option} names a judge twice: {names}.")
    args.judge_columns, args.judge_column = names, names[0]
    if args.autoeval_command == "certify":
        return
    args.judge_files = args.judge_labeled or []
    args.unlabeled_files = args.unlabeled or []
    args.judge_labeled = args.judge_files[0] if args.judge_files else None
    args.unlabeled = args.unlabeled_files[0] if args.unlabeled_files else None


def _forecast(args, h, g, u, method):
    """For a model not certified: the labels a labeling session would likely need in all (the
    median of :func:`~sklearn_riskcontrol.autoeval.plan_labels`' forecast from these rows, within
    a budget of 10 times the labels used, at least 1000, and at most the judged pool), or None,
    and the forecast in words."""
    from ..autoeval import plan_labels

    if args.groups is not None or (g is not None and g.ndim > 1):
        return None, "no forecast with --groups or several judges"
    try:
        budget = max(10 * h.size, 1000)
        if u is not None:  # each labeled round takes its own block of the judged pool
            budget = min(budget, u.shape[-1])
        plan = plan_labels(h, g, u, alpha=args.alpha, delta=args.delta, method=method,
                           max_labels=budget, n_simulations=100, random_state=0)
    except ValueError as exc:
        return None, f"no forecast: {exc}"
    return (plan.median if np.isfinite(plan.median) else None), str(plan)


def _run_certify(args, rng):
    import pandas as pd

    from ..autoeval import rautoeval_confidence_interval, rautoeval_test

    rows, summaries, entries = [], [], []
    per_model = _certify_losses(args)
    for name, h, g, u, gl, gu in per_model:
        method = args.method
        if u is None:
            method = _no_unlabeled(args, "" if name is None else f"model {name!r}: ")
        if h.size == 0:
            of = "" if name is None else f" of model {name!r}"
            if getattr(args, "inspect_log", None) is not None:
                raise ValueError(f"no sample{of} has a --label-scorer {args.label_scorer!r} "
                                 "score: certifying needs labeled samples.")
            raise ValueError(f"--labeled has no labeled row{of} (every {args.loss_column!r} "
                             "cell is empty).")
        if gl is None:
            h, g = _shuffled(rng, h, g)
            (u,) = _shuffled(rng, u)
        else:
            gl, h, g = _shuffled_clusters(rng, gl, h, g)
            gu, u = _shuffled_clusters(rng, gu, u)
        clusters = _cluster_options(gl, gu)
        g, u = _examples_first(g), _examples_first(u)
        res = rautoeval_test(h, g, u, alpha=args.alpha, delta=args.delta, method=method,
                             betting=args.betting, n_rho=args.n_rho, **clusters)
        row = {} if name is None else {"model": name}
        row.update({
            "certified": res.certified,
            "pvalue": res.pvalue,
            "labels_needed": None if res.stopping_index is None else res.stopping_index + 1,
            "n_labeled": h.size,
            "n_unlabeled": 0 if u is None else u.shape[0],
            "block_size": res.block_size,
            "method": res.method,
            "alpha": args.alpha,
            "delta": args.delta,
        })
        if args.ci:
            ci = rautoeval_confidence_interval(h, g, u, delta=args.delta, method=res.method,
                                               n_rho=args.n_rho, **clusters)
            row.update(ci_low=ci.low, ci_high=ci.high)
        rows.append(row)
        summaries.append(_certify_summary(args, res, row, name))
        entry = {"name": name, "certified": bool(res.certified), "pvalue": res.pvalue,
                 "evalue": float(np.exp(res.log_evalue)), "labels_needed": row["labels_needed"],
                 "n_labeled": int(h.size), "n_unlabeled": row["n_unlabeled"],
                 "method": res.method,
                 "interval": (interval(row["ci_low"], row["ci_high"], 1 - args.delta)
                              if args.ci else None)}
        if (getattr(args, "json", False) or getattr(args, "report", None)) and not res.certified:
            entry["labels_forecast"], entry["labels_forecast_text"] = _forecast(
                args, h, g, u, res.method)
        entries.append(entry)
    frame = pd.DataFrame(rows)
    frame["labels_needed"] = frame["labels_needed"].astype("Int64")  # an empty cell, not NaN
    write_csv(frame, args.output)
    guarantee = _certify_guarantee(args, len(rows))
    dropped = (getattr(args, "source_facts", None) or {}).get("samples_dropped")
    if dropped:
        guarantee += (f"; about the samples that do not end with an error (--sample-errors "
                      f"drop left {dropped} out)")
    lines = say(summaries + [guarantee])
    n_ok = sum(e["certified"] for e in entries)
    who = (f"{n_ok} of {len(entries)} models certified" if len(entries) > 1 or
           entries[0]["name"] is not None else
           ("certified" if n_ok else "NOT certified"))
    return document(
        "autoeval certify", decision=f"{who}: risk <= {args.alpha:g} at delta = "
        f"{args.delta:g} (a realization)", passed=n_ok == len(entries),
        rule="passes when every model is certified (risk <= alpha)",
        guarantee=guarantee.removeprefix("guarantee: "), alpha=args.alpha, delta=args.delta,
        rows=entries, messages=lines, labels_used=sum(e["n_labeled"] for e in entries),
        intervals=[dict(e["interval"], name=e["name"] or "risk") for e in entries
                   if e["interval"]], facts=getattr(args, "source_facts", None),
        reasons={"evalue": "the e-value overflows a float"})


def _certify_summary(args, res, row, name):
    """What was certified for one model (a realization)."""
    a, d = f"{args.alpha:g}", f"{args.delta:g}"
    who = "" if name is None else f"model {name!r}: "
    data = f"{row['n_labeled']} labeled + {row['n_unlabeled']} unlabeled rows"
    if res.certified:
        lines = [f"{who}certified: risk <= {a} (p-value {float(res.pvalue):.4g} from {data}; "
                 "the p-value and the verdict are realizations)"]
    else:
        lines = [f"{who}NOT certified: these rows do not show risk <= {a} at level delta = {d} "
                 f"(p-value {float(res.pvalue):.4g} from {data}); this is no evidence that the "
                 f"risk exceeds {a}"]
    if "ci_low" in row:
        lines.append(f"{who}interval [{float(row['ci_low']):.4f}, {float(row['ci_high']):.4f}] "
                     f"(a realization): with probability >= {1 - args.delta:g} over the draw, "
                     "the interval computed this way contains the risk")
    return "\n".join(lines)


def _certify_guarantee(args, n_models):
    a, d = f"{args.alpha:g}", f"{args.delta:g}"
    text = (f"guarantee: P(certified while the risk is > {a}) <= {d}, over the draw of the "
            "labeled and unlabeled rows (i.i.d. rows, in a random order)")
    if n_models > 1:
        text += (f", for each model separately: with {n_models} models, the chance that some "
                 f"model is wrongly certified can reach {n_models} x {d}; for a joint guarantee "
                 "use 'autoeval select --procedure bonferroni'")
    return text


def _loss_tables(args, rng):
    """``(H, G, U, names, clusters)`` of ``select`` and ``compare``: (models, examples) tables
    of the true-label losses, the judge's on the same examples and on unlabeled ones (None when
    absent), from wide or long files, shuffled by ``--shuffle``; ``clusters``: the
    ``groups_labeled`` / ``groups_unlabeled`` options (``{}`` without ``--groups``)."""
    if args.groups is None:
        H, G, U, names = _loss_tables_of(args)
        H, G = _shuffled(rng, H, G)
        (U,) = _shuffled(rng, U)
        return H, G, U, names, {}
    if max(len(args.judge_columns), len(args.judge_files), len(args.unlabeled_files)) > 1:
        raise ValueError("--groups takes one judge for now: pass one --judge-column / "
                         "--judge-labeled / --unlabeled.")
    if is_long(args, args.labeled, args.loss_column):
        raise ValueError("--groups reads a cluster id column of wide tables (one column per "
                         "model plus the --groups column); write the tables wide, or use "
                         "'autoeval certify' per model.")
    H, names, gl = wide_losses(args.labeled, groups=args.groups)
    G = U = gu = None
    if args.method != "eval":
        if args.judge_labeled is None:
            raise ValueError(f"--method {args.method} needs --judge-labeled (judge losses on "
                             "the labeled examples); or use --method eval.")
        G, _, gj = wide_losses(args.judge_labeled, names, groups=args.groups)
        if G.shape != H.shape or not np.array_equal(gj, gl):
            raise ValueError("--judge-labeled must hold the examples of --labeled, in the same "
                             f"order, with the same {args.groups!r} ids.")
        if args.unlabeled is not None:
            U, _, gu = wide_losses(args.unlabeled, names, groups=args.groups)
    gl, H, G = _shuffled_clusters(rng, gl, H, G)
    gu, U = _shuffled_clusters(rng, gu, U)
    return H, G, U, names, _cluster_options(gl, gu if U is not None else None)


def _loss_tables_of(args):
    """The unshuffled ``(H, G, U, names)`` of :func:`_loss_tables` without ``--groups``."""
    G = U = None
    if is_long(args, args.labeled, args.loss_column):
        if len(args.judge_columns) > 1 or len(args.judge_files) > 1 \
                or len(args.unlabeled_files) > 1:
            return _several_long(args)
        H, G, U, names = _select_long(args)
    else:
        H, names = wide_losses(args.labeled)
    if args.method != "eval" and G is None:
        if args.judge_labeled is None:
            raise ValueError(
                f"--method {args.method} needs --judge-labeled (judge losses on the labeled "
                "examples); or use --method eval."
            )
        if args.unlabeled_files and len(args.unlabeled_files) != len(args.judge_files):
            raise ValueError(
                f"{len(args.judge_files)} --judge-labeled file(s) but "
                f"{len(args.unlabeled_files)} --unlabeled file(s): give one of each per judge, "
                "in the same order."
            )
        Gs = [wide_losses(path, names)[0] for path in args.judge_files]
        for G in Gs:
            if G.shape != H.shape:
                raise ValueError(
                    f"--judge-labeled has {G.shape[1]} rows but --labeled has {H.shape[1]}: "
                    "both hold the same labeled examples."
                )
        G = _judge_stack(Gs)
        if args.unlabeled_files:
            U = _judge_stack([wide_losses(path, names)[0] for path in args.unlabeled_files])
    return H, G, U, names


def _several_long(args):
    """Long tables with several judges: one judge-loss column per judge (``--judge-column``,
    read judge by judge), as (judges, models, examples) tables."""
    import argparse

    if len(args.judge_files) > 1 or len(args.unlabeled_files) > 1:
        raise ValueError("With long tables several judges are judge-loss columns "
                         "(--judge-column a,b), not several --judge-labeled / --unlabeled "
                         "files.")
    parts = []
    for col in args.judge_columns:
        one = argparse.Namespace(**vars(args))
        one.judge_column = col
        parts.append(_select_long(one))
    H, _, _, names = parts[0]
    G = None if parts[0][1] is None else _judge_stack([p[1] for p in parts])
    U = None if parts[0][2] is None else _judge_stack([p[2] for p in parts])
    return H, G, U, names


def _run_select(args, rng):
    import pandas as pd

    from ..autoeval import rautoeval_select

    H, G, U, names, clusters = _loss_tables(args, rng)
    if G is not None and G.ndim == 3:
        raise ValueError(
            "select takes one judge: pass one --judge-column / --judge-labeled (several judges "
            "are supported by certify and compare)."
        )
    cost = _parse_cost(args.cost, names)
    method = args.method if U is not None else _no_unlabeled(args)
    sel = rautoeval_select(H, G, U, alpha=args.alpha, delta=args.delta,
                           procedure=args.procedure, cost=cost, method=method,
                           betting=args.betting, n_rho=args.n_rho, n_jobs=args.n_jobs,
                           **clusters)
    out = pd.DataFrame({
        "candidate": names,
        "pvalue": sel.pvalues,
        "tested": sel.tested,
        "certified": sel.certified,
        "selected": np.arange(len(names)) == (-1 if sel.selected is None else sel.selected),
    })
    if cost is not None:
        out["cost"] = cost
    write_csv(out, args.output)
    a, d = f"{args.alpha:g}", f"{args.delta:g}"
    guarantee = (f"P(some certified candidate has risk > {a}) <= {d} (family-wise error, "
                 f"{args.procedure}), over the draw of the rows (i.i.d. rows, in a random order)")
    if sel.selected is None:
        decision = (f"nothing certified at alpha={a}, delta={d} ({args.procedure}): no candidate "
                    f"was shown to have risk <= {a}; this is no evidence that they all exceed it")
        lines = say([decision])
    else:
        decision = (f"selected {names[sel.selected]!r}: {int(sel.certified.sum())} of "
                    f"{len(names)} candidates certified with risk <= {a} (which ones is a "
                    "realization)")
        lines = say([decision, f"guarantee: {guarantee}"])
    entries = [dict(zip(("name", "pvalue", "tested", "certified", "selected"), r))
               for r in zip(names, out["pvalue"], out["tested"], out["certified"],
                            out["selected"])]
    for k, e in enumerate(entries):
        r = sel.results[k]
        e["evalue"] = np.nan if r is None else float(np.exp(r.log_evalue))
        if cost is not None:
            e["cost"] = cost[k]
    return document(
        "autoeval select", decision=decision, passed=sel.selected is not None,
        rule="passes when a candidate is selected (certified with risk <= alpha)",
        guarantee=guarantee, alpha=args.alpha, delta=args.delta, rows=entries, messages=lines,
        labels_used=int(H.shape[1]),
        reasons={"pvalue": "not tested (fixed-sequence testing stopped before it)",
                 "evalue": "not tested (fixed-sequence testing stopped before it), or the "
                           "e-value overflows a float"})


def _run_compare(args, rng):
    import pandas as pd

    from ..autoeval import rautoeval_compare, rautoeval_difference_interval

    H, G, U, names, clusters = _loss_tables(args, rng)
    if len(names) < 2:
        raise ValueError(f"--labeled has {len(names)} model column(s): comparing needs at least 2.")
    baseline = None
    if args.baseline is not None:
        if args.baseline not in names:
            raise ValueError(f"--baseline {args.baseline!r} is not a model of --labeled; its "
                             f"models are {list(names)}.")
        baseline = list(names).index(args.baseline)
    method = args.method if U is not None else _no_unlabeled(args)
    # (examples, models), or (examples, models, judges) for several judges
    tables = [None if t is None else t.T for t in (H, G, U)]
    res = rautoeval_compare(*tables, delta=args.delta, baseline=baseline, margin=args.margin,
                            method=method, betting=args.betting, n_rho=args.n_rho, **clusters)
    tested = np.argwhere(~np.isnan(res.pvalues))
    out = pd.DataFrame({
        "model_a": [names[i] for i, _ in tested],
        "model_b": [names[j] for _, j in tested],
        "pvalue": [res.pvalues[i, j] for i, j in tested],
        "certified": [bool(res.better[i, j]) for i, j in tested],
        "mean_loss_a": [res.mean_loss[i] for i, _ in tested],
        "mean_loss_b": [res.mean_loss[j] for _, j in tested],
    })
    lines, drawn = [], []
    if len(names) == 2:
        ci = rautoeval_difference_interval(*tables, delta=args.delta, method=method, **clusters)
        drawn.append({"name": f"risk({names[0]}) - risk({names[1]})", "low": ci.low,
                      "high": ci.high})
        out["diff_low"] = [ci.low if i == 0 else -ci.high for i, _ in tested]
        out["diff_high"] = [ci.high if i == 0 else -ci.low for i, _ in tested]
        lines.append(f"risk({names[0]}) - risk({names[1]}) in [{ci.low:.4f}, {ci.high:.4f}] "
                     f"(a realization): with probability >= {1 - args.delta:g} over the draw, "
                     "the interval computed this way contains the difference")
    write_csv(out, args.output)
    gap = ("" if not args.margin else
           f" {'-' if args.margin > 0 else '+'} {abs(args.margin):g}")
    pairs = res.certified_pairs()
    if pairs:
        lines += [f"certified: risk({names[i]}) < risk({names[j]}){gap}" for i, j in pairs]
    else:
        lines.append("no pair certified: these examples do not separate the models at level "
                     f"delta = {args.delta:g}; this is no evidence that they are equal")
    guarantee = (
        f"P(some certified pair is wrong) <= {args.delta:g} (Holm over {len(tested)} ordered "
        "pairs), over the draw of the examples (i.i.d. examples, in a random order, the same "
        "examples for every model)")
    decision = (lines[-1] if not pairs else
                f"{len(pairs)} of {len(tested)} ordered pairs certified (a realization): "
                + "; ".join(f"risk({names[i]}) < risk({names[j]}){gap}" for i, j in pairs))
    lines = say(lines + [f"guarantee: {guarantee}"])
    entries = []
    for k, (i, j) in enumerate(tested):
        e = {"name": f"{names[i]} vs {names[j]}", "model_a": names[i], "model_b": names[j],
             "pvalue": out["pvalue"][k], "certified": bool(out["certified"][k]),
             "mean_loss_a": out["mean_loss_a"][k], "mean_loss_b": out["mean_loss_b"][k],
             "interval": None}
        if drawn:
            e["interval"] = interval(out["diff_low"][k], out["diff_high"][k], 1 - args.delta)
        entries.append(e)
    return document(
        "autoeval compare", decision=decision, passed=bool(pairs),
        rule="passes when the comparison is decided: at least one ordered pair is certified "
             "(model A's risk below model B's)",
        guarantee=guarantee, alpha=None, delta=args.delta, rows=entries, messages=lines,
        labels_used=int(H.shape[-1]), intervals=drawn,
        interval_scale={"low": -1.0, "high": 1.0, "label": "difference of risks"},
        facts={"margin": args.margin},
        reasons={"alpha": "compare tests differences of risks, with no alpha"})


def _run_monitor(args):
    import pandas as pd

    from ..autoeval import RiskMonitor

    table = read_table(args.stream, rows="stream row")
    judge = args.judge_column in table.columns
    h = table.numbers(args.loss_column, what="losses", low=0, high=1, allow_empty=True,
                      hint="an empty loss marks a row that was not labeled")
    g = losses(table, args.judge_column) if judge else None
    if judge and args.label_rate is None:
        raise ValueError(
            f"--label-rate is required with a judge column ({args.judge_column!r}): the "
            "probability with which each row was sent for labeling. Without it, drop the judge "
            "column (or name another with --judge-column) to monitor with the labels alone.")
    groups = _model_rows(table, args, "--stream") or {None: np.arange(table.n_rows)}
    rows, lines = [], []
    for name, idx in groups.items():
        mon = RiskMonitor(alpha=args.alpha, delta=args.delta, label_rate=args.label_rate,
                          half_life=args.half_life)
        mon.fit(None if g is None else g[idx], h[idx])
        low, high = mon.confidence_sequence()
        alarm_row = None if mon.alarm_index_ is None else int(idx[mon.alarm_index_]) + 1
        row = {} if name is None else {"model": name}
        row.update(alarm=mon.alarm_, alarm_row=alarm_row, n_rows=mon.n_rows_,
                   n_labels=mon.n_labels_, mode=mon.mode_, risk_low=low[-1],
                   risk_high=high[-1], alpha=args.alpha, delta=args.delta)
        rows.append(row)
        who = "" if name is None else f"model {name!r}: "
        lines.append(
            f"{who}ALARM at data row {alarm_row} of {args.stream}: the evidence that the risk "
            f"exceeded alpha = {args.alpha:g} reached 1/delta = {1 / args.delta:g}" if mon.alarm_
            else
            f"{who}no alarm over {mon.n_rows_} rows ({mon.n_labels_} labeled): no evidence at "
            f"level delta = {args.delta:g} that the risk exceeded alpha = {args.alpha:g}")
    frame = pd.DataFrame(rows)
    frame["alarm_row"] = frame["alarm_row"].astype("Int64")  # an empty cell, not NaN
    write_csv(frame, args.output)
    guarantee = (
        f"if the risk of every row (given the rows before it) stays at most alpha, an "
        f"alarm fires with probability at most {args.delta:g} over the whole stream"
        + (", per model" if len(groups) > 1 else "")
        + ("; rows labeled with probability at least --label-rate, decided before the label"
           if judge else "; whether a row is labeled must not depend on its label"))
    decision = (f"{int(frame['alarm'].sum())} of {len(rows)} monitored streams raised an alarm"
                if len(rows) > 1 else lines[0])
    lines = say(lines + [f"guarantee: {guarantee}. risk_low/risk_high: the running confidence "
                         "bounds after the last row (one draw)"])
    entries = [{"name": r.get("model"), "alarm": bool(r["alarm"]), "alarm_row": r["alarm_row"],
                "n_rows": int(r["n_rows"]), "n_labels": int(r["n_labels"]), "mode": r["mode"],
                "interval": interval(r["risk_low"], r["risk_high"], 1 - args.delta)}
               for r in rows]
    return document(
        "autoeval monitor", decision=decision, passed=not frame["alarm"].any(),
        rule="passes when no alarm fired (no evidence that the risk exceeded alpha)",
        guarantee=guarantee, alpha=args.alpha, delta=args.delta, rows=entries, messages=lines,
        labels_used=sum(e["n_labels"] for e in entries),
        intervals=[dict(e["interval"], name=e["name"] or "risk") for e in entries])


def _parse_cost(text, names):
    """``--cost``: comma-separated numbers, one per candidate (``None`` when not given)."""
    if text is None:
        return None
    try:
        cost = [float(c) for c in text.split(",")]
    except ValueError:
        raise ValueError(f"--cost must be comma-separated numbers; got {text!r}.") from None
    if len(cost) != len(names):
        raise ValueError(f"--cost has {len(cost)} values for {len(names)} candidate columns.")
    return cost


def _run_label(args):
    import pandas as pd

    from ..autoeval import ActiveLabelingSession

    pool = read_table(args.pool, rows="pool row")
    names = [c.strip() for c in args.judge_column.split(",")]
    select = len(names) > 1
    loss_cols = [c.strip() for c in args.loss_column.split(",")]
    if len(loss_cols) != len(names):
        raise ValueError(
            f"--loss-column names {len(loss_cols)} column(s) for {len(names)} judge column(s): "
            "give one loss column of --labels per candidate, in the order of --judge-column "
            "(e.g. --judge-column judge_a,judge_b --loss-column loss_a,loss_b).")
    if not select and (args.cost is not None or args.procedure != "fst"):
        raise ValueError("--procedure and --cost select among candidates: give one judge "
                         "column per candidate (--judge-column a,b).")
    g = (np.stack([losses(pool, c) for c in names], axis=1) if select
         else losses(pool, names[0]))
    ids = None if args.id_column is None else pool.text(args.id_column)
    extra = dict(procedure=args.procedure, cost=_parse_cost(args.cost, names)) if select else {}
    with ActiveLabelingSession(g, alpha=args.alpha, delta=args.delta,
                               max_labels=args.max_labels, sampling=args.sampling,
                               store=args.store, random_state=args.seed, **extra) as session:
        if args.labels is not None:
            lab = read_table(args.labels)
            rows = lab.numbers(args.row_column, what="pool rows (1-based data rows)", low=1,
                               high=pool.n_rows)
            if not np.array_equal(rows, np.round(rows)):
                raise ValueError(f"{args.labels}, column {args.row_column!r}: pool rows must "
                                 "be whole numbers (1-based data rows of --pool).")
            h = [lab.numbers(c, what="losses", low=0, high=1) for c in loss_cols]
            session.add(rows.astype(np.int64) - 1, np.stack(h, axis=1) if select else h[0])
        status = session.status_
        lines = [str(status)]
        left = args.max_labels - status.n_labels
        if select and status.selected is not None:
            lines.append(f"selected {names[status.selected]!r}")
        if status.done or left == 0:
            proposed = np.empty(0, dtype=np.int64)
        else:
            proposed = session.propose(min(args.k, left))
            lines.append(f"label the {proposed.size} proposed rows (written to "
                         f"{'standard output' if args.output == '-' else args.output}), then "
                         "run this command again with their losses in --labels")
    frame = pd.DataFrame({"row": proposed + 1})
    if ids is not None:
        frame[args.id_column] = ids[proposed]
    write_csv(frame, args.output)
    if select:
        guarantee = (
            "the risk certified is each candidate's mean loss over the rows of --pool; with "
            f"probability at least 1 - {args.delta:g} no candidate whose risk is at least alpha "
            f"is ever certified (family-wise, {args.procedure}; label only proposed rows; any "
            "stopping time)")
        rule = "passes when a candidate is selected (pool risk certified below alpha)"
        entries = [{"name": name, "certified": bool(status.certified[c]),
                    "impossible": bool(status.impossible[c]),
                    "selected": status.selected == c, "pvalue": st.pvalue,
                    "n_labels": int(status.n_labels), "n_proposed": int(proposed.size)}
                   for c, (name, st) in enumerate(zip(names, status.candidates))]
        passed = status.selected is not None
    else:
        guarantee = (
            "the risk certified is the mean loss over the rows of --pool; if it is at least "
            f"alpha, the session is ever certified with probability at most {args.delta:g} "
            "(label only proposed rows; any stopping time)")
        rule = "passes when the risk over the pool is certified below alpha"
        entries = [{"name": "pool", "decision": status.decision,
                    "certified": bool(status.certified), "pvalue": status.pvalue,
                    "n_labels": int(status.n_labels), "n_proposed": int(proposed.size)}]
        passed = status.certified
    lines = say(lines + [f"guarantee: {guarantee}"])
    return document(
        "autoeval label", decision=lines[0], passed=passed, rule=rule,
        guarantee=guarantee, alpha=args.alpha, delta=args.delta, rows=entries, messages=lines,
        labels_used=int(status.n_labels),
        facts={"proposed_rows": (proposed + 1).tolist(), "pool_rows": int(pool.n_rows)})


def run(args):
    """Run ``autoeval certify`` / ``select`` / ``compare`` / ``monitor`` / ``label`` on parsed
    arguments; return the result document (:func:`._io.document`).

    Bad input raises ``ValueError`` / ``TypeError`` / ``OSError`` (the main entry point turns
    them into a one-line error and exit status 2); warnings (nothing certified, no unlabeled
    data) are printed to standard error as ``warning: ...`` lines.
    """
    from .._validation import check_level

    if args.autoeval_command != "compare":
        check_level(args.alpha, "alpha")
    check_level(args.delta, "delta")
    if args.autoeval_command == "certify":
        check_inspect_options(args)
    if args.autoeval_command not in ("monitor", "label"):  # they have one --judge-column
        _judge_options(args)
    rng = None if getattr(args, "shuffle", None) is None else np.random.default_rng(args.shuffle)
    with one_line_warnings():
        if args.autoeval_command == "monitor":
            return _run_monitor(args)
        if args.autoeval_command == "label":
            return _run_label(args)
        if args.autoeval_command == "certify":
            return _run_certify(args, rng)
        if args.autoeval_command == "select":
            return _run_select(args, rng)
        return _run_compare(args, rng)
