"""``python -m sklearn_riskcontrol autoeval {certify,select}``: R-AutoEval+ on CSV loss tables.

For users whose losses are already computed (e.g. an LLM graded by humans on a few questions and
by an LLM judge on many): no Python needed. Rows are processed in file order, which must be a
random order (or pass ``--shuffle SEED``).

certify
    ``--labeled`` CSV, one row per human-labeled example: the loss with the true label
    (``--loss-column``, default ``loss``) and the loss with the judge's label
    (``--judge-column``, default ``judge_loss``); ``--unlabeled`` CSV, one row per unlabeled
    example, with the judge's loss. Prints a one-row CSV (certified, p-value, labels needed, ...)
    and a one-line summary on standard error.
select
    Wide tables, one column per candidate (same columns in every file, in testing order):
    ``--labeled`` (losses with true labels), ``--judge-labeled`` (judge losses on the same
    examples) and ``--unlabeled`` (judge losses on unlabeled examples). Prints one row per
    candidate (p-value, tested, certified, selected).

    Or long tables (``--long``, detected for ``.jsonl``/``.parquet`` files and for CSV headers
    with the model, example and loss columns), one row per (candidate, example), read by
    :func:`sklearn_riskcontrol.tables.read_long_table`: ``--labeled`` holds ``--loss-column``
    (and, optionally, ``--judge-column``, which then replaces ``--judge-labeled``);
    ``--judge-labeled`` and ``--unlabeled`` hold ``--judge-column``. Candidates are tested in
    the order of their first row in ``--labeled``; rows of the other files are matched by
    candidate and example id.
"""

import sys

import numpy as np

from ._tables import one_line_warnings
from .tables import _add_long_options

__all__ = ["add_parser", "run"]


def add_parser(subparsers):
    """Register the ``autoeval`` command (with ``certify`` and ``select``) on ``subparsers``."""
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
    c.add_argument("--labeled", required=True,
                   help="CSV, one row per human-labeled example (true-label and judge losses)")
    c.add_argument("--unlabeled", default=None,
                   help="CSV, one row per unlabeled example (judge loss); omit for R-Eval")
    c.add_argument("--loss-column", default="loss",
                   help="loss with the true label in --labeled (default: loss)")
    c.add_argument("--judge-column", default="judge_loss",
                   help="loss with the judge's label, in both files (default: judge_loss)")
    c.add_argument("--ci", action="store_true",
                   help="add a two-sided (1 - delta) confidence interval for the risk (WSR)")
    _common(c)

    s = sub.add_parser(
        "select", help="select the cheapest certified model among candidates (FST/Bonferroni)",
        description=(
            "One test per candidate column; fixed-sequence testing (in column order, stops at "
            "the first failure) or Bonferroni. Every certified candidate has risk <= alpha with "
            "probability 1 - delta jointly; the cheapest certified one is selected."
        ),
    )
    s.add_argument("--labeled", required=True,
                   help="CSV of true-label losses: one column per candidate, one row per example")
    s.add_argument("--judge-labeled", default=None,
                   help="CSV of judge losses on the same examples (same columns)")
    s.add_argument("--unlabeled", default=None,
                   help="CSV of judge losses on unlabeled examples (same columns)")
    s.add_argument("--procedure", choices=["fst", "bonferroni"], default="fst",
                   help="fst: in column order, stop at the first failure (default); bonferroni")
    s.add_argument("--cost", default=None,
                   help="comma-separated costs, one per candidate column (e.g. model sizes); "
                        "default: the last certified candidate in column order")
    s.add_argument("--n-jobs", type=int, default=None, help="candidates tested in parallel")
    _add_long_options(s, "candidate", "loss")
    s.add_argument("--loss-column", default="loss",
                   help="long tables: true-label losses in --labeled (default: loss)")
    s.add_argument("--judge-column", default="judge_loss",
                   help="long tables: judge losses in --judge-labeled and --unlabeled, or in "
                        "--labeled when --judge-labeled is omitted (default: judge_loss)")
    _common(s)
    return p


def _common(p):
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


# --------------------------------------------------------------------------------------------
def _losses(table, columns):
    """Losses in [0, 1] of one column (1-d) or of candidate columns (rows x candidates)."""
    return table.numbers(columns, what="losses", low=0, high=1)


def _table(path, columns=None):
    """Wide loss table as (candidates, examples) plus the column names."""
    from ._tables import read_table

    table = read_table(path, rows="example")
    if columns is not None and table.columns != columns:
        raise ValueError(
            f"{path} must have the same candidate columns as --labeled, in the same order "
            f"({columns}); got {table.columns}."
        )
    return _losses(table, table.columns).T, table.columns


def _is_long(args):
    from .tables import _is_long_header

    if args.long is not None:
        return args.long
    return _is_long_header(args.labeled, args.model_column, args.example_column,
                           args.loss_column)


def _positions(have, want, path, what):
    """Positions in ``have`` of the ids ``want`` (the same ids, any order)."""
    index = {h: k for k, h in enumerate(have)}
    absent = [w for w in want if w not in index]
    if absent:
        raise ValueError(f"{path} has no row for the {what} {absent[0]!r} of --labeled "
                         f"({len(absent)} {what}s missing); every file holds the same {what}s.")
    if len(have) > len(want):
        extra = next(h for h in have if h not in set(want))
        raise ValueError(f"{path} has the {what} {extra!r}, which --labeled does not have.")
    return np.array([index[w] for w in want])


def _long_losses(args, path, column, names=None, examples=None, judge=None):
    """Candidates x examples losses of a long table (complete), ids matched to --labeled."""
    from .tables import _long, _open_source

    src = _open_source(path, None)
    if judge is not None and judge not in src.columns:
        judge = None
    t = _long(src, args.model_column, args.example_column, column, judge, None, "error",
              low=0, high=1)
    models = [str(m) for m in t.model_ids]
    ids = [str(e) for e in t.example_ids]
    rows = np.arange(len(models)) if names is None else _positions(models, names, path,
                                                                    "candidate")
    cols = np.arange(len(ids)) if examples is None else _positions(ids, examples, path,
                                                                   "example")
    out = []
    for M, col in ((t.scores, column), (t.judge_scores, judge)):
        if M is None:
            out.append(None)
            continue
        M = M[np.ix_(rows, cols)]
        if np.isnan(M).any():
            i, j = (int(k) for k in np.argwhere(np.isnan(M))[0])
            raise ValueError(
                f"{path}: no {col!r} value for candidate {models[rows[i]]!r} on example "
                f"{ids[cols[j]]!r}; every candidate needs a loss on every example of a file."
            )
        out.append(M)
    return out[0], out[1], (models if names is None else names), \
        (ids if examples is None else examples)


def _select_long(args):
    H, G, names, examples = _long_losses(
        args, args.labeled, args.loss_column,
        judge=args.judge_column if args.method != "eval" and args.judge_labeled is None else None,
    )
    U = None
    if args.method != "eval":
        if G is None and args.judge_labeled is None:
            raise ValueError(
                f"--method {args.method} needs judge losses on the labeled examples: a "
                f"{args.judge_column!r} column in --labeled, or --judge-labeled; or use "
                "--method eval."
            )
        if G is None:
            G = _long_losses(args, args.judge_labeled, args.judge_column, names, examples)[0]
        if args.unlabeled is not None:
            U = _long_losses(args, args.unlabeled, args.judge_column, names)[0]
    return H, G, U, names


def _shuffled(rng, *arrays):
    """The same permutation of the last axis of each array (None passes through)."""
    if rng is None:
        return arrays
    n = next(a.shape[-1] for a in arrays if a is not None)
    perm = rng.permutation(n)
    return tuple(None if a is None else a[..., perm] for a in arrays)


def _write(frame, output):
    frame.to_csv(sys.stdout if output == "-" else output, index=False)


def _run_certify(args, rng):
    import pandas as pd

    from ._tables import read_table
    from .evalues import rautoeval_confidence_interval, rautoeval_test

    lab = read_table(args.labeled, rows="labeled example")
    h = _losses(lab, args.loss_column)
    g = u = None
    if args.method != "eval":
        g = _losses(lab, args.judge_column)
        if args.unlabeled is not None:
            u = _losses(read_table(args.unlabeled, rows="unlabeled example"), args.judge_column)
    h, g = _shuffled(rng, h, g)
    (u,) = _shuffled(rng, u)
    res = rautoeval_test(h, g, u, alpha=args.alpha, delta=args.delta, method=args.method,
                         betting=args.betting, n_rho=args.n_rho)
    row = {
        "certified": res.certified,
        "pvalue": res.pvalue,
        "labels_needed": None if res.stopping_index is None else res.stopping_index + 1,
        "n_labeled": h.size,
        "n_unlabeled": 0 if u is None else u.size,
        "block_size": res.block_size,
        "method": res.method,
        "alpha": args.alpha,
        "delta": args.delta,
    }
    if args.ci:
        ci = rautoeval_confidence_interval(h, g, u, delta=args.delta, method=res.method,
                                           n_rho=args.n_rho)
        row.update(ci_low=ci.low, ci_high=ci.high)
    _write(pd.DataFrame([row]), args.output)
    print(_certify_summary(args, res, row), file=sys.stderr)


def _certify_summary(args, res, row):
    """What was certified (a realization) and what the guarantee is about."""
    a, d = f"{args.alpha:g}", f"{args.delta:g}"
    data = f"{row['n_labeled']} labeled + {row['n_unlabeled']} unlabeled rows"
    if res.certified:
        lines = [f"certified: risk <= {a} (p-value {float(res.pvalue):.4g} from {data}; the "
                 "p-value and the verdict are realizations)"]
    else:
        lines = [f"NOT certified: these rows do not show risk <= {a} at level delta = {d} "
                 f"(p-value {float(res.pvalue):.4g} from {data}); this is no evidence that the "
                 f"risk exceeds {a}"]
    lines.append(f"guarantee: P(certified while the risk is > {a}) <= {d}, over the draw of "
                 "the labeled and unlabeled rows (i.i.d. rows, in a random order)")
    if "ci_low" in row:
        lines.append(f"interval [{float(row['ci_low']):.4f}, {float(row['ci_high']):.4f}] (a "
                     f"realization): with probability >= {1 - args.delta:g} over the draw, the "
                     "interval computed this way contains the risk")
    return "\n".join(lines)


def _run_select(args, rng):
    import pandas as pd

    from .evalues import rautoeval_select

    G = U = None
    if _is_long(args):
        H, G, U, names = _select_long(args)
    else:
        H, names = _table(args.labeled)
    if args.method != "eval" and G is None:
        if args.judge_labeled is None:
            raise ValueError(
                f"--method {args.method} needs --judge-labeled (judge losses on the labeled "
                "examples); or use --method eval."
            )
        G, _ = _table(args.judge_labeled, names)
        if G.shape != H.shape:
            raise ValueError(
                f"--judge-labeled has {G.shape[1]} rows but --labeled has {H.shape[1]}: both "
                "hold the same labeled examples."
            )
        if args.unlabeled is not None:
            U, _ = _table(args.unlabeled, names)
    cost = None
    if args.cost is not None:
        try:
            cost = [float(c) for c in args.cost.split(",")]
        except ValueError:
            msg = f"--cost must be comma-separated numbers; got {args.cost!r}."
            raise ValueError(msg) from None
        if len(cost) != len(names):
            raise ValueError(f"--cost has {len(cost)} values for {len(names)} candidate columns.")
    H, G = _shuffled(rng, H, G)
    (U,) = _shuffled(rng, U)
    sel = rautoeval_select(H, G, U, alpha=args.alpha, delta=args.delta,
                           procedure=args.procedure, cost=cost, method=args.method,
                           betting=args.betting, n_rho=args.n_rho, n_jobs=args.n_jobs)
    out = pd.DataFrame({
        "candidate": names,
        "pvalue": sel.pvalues,
        "tested": sel.tested,
        "certified": sel.certified,
        "selected": np.arange(len(names)) == (-1 if sel.selected is None else sel.selected),
    })
    if cost is not None:
        out["cost"] = cost
    _write(out, args.output)
    a, d = f"{args.alpha:g}", f"{args.delta:g}"
    if sel.selected is None:
        print(f"nothing certified at alpha={a}, delta={d} ({args.procedure}): no candidate was "
              f"shown to have risk <= {a}; this is no evidence that they all exceed it",
              file=sys.stderr)
    else:
        print(f"selected {names[sel.selected]!r}: {int(sel.certified.sum())} of {len(names)} "
              f"candidates certified with risk <= {a} (which ones is a realization)\n"
              f"guarantee: P(some certified candidate has risk > {a}) <= {d} (family-wise "
              f"error, {args.procedure}), over the draw of the rows (i.i.d. rows, in a random "
              "order)",
              file=sys.stderr)


def run(args):
    """Run ``autoeval certify`` / ``autoeval select`` on parsed arguments.

    Bad input raises ``ValueError`` / ``TypeError`` / ``OSError`` (the main entry point turns
    them into a one-line error and exit status 2); warnings (nothing certified, no unlabeled
    data) are printed to standard error as ``warning: ...`` lines.
    """
    from ._validation import check_level

    check_level(args.alpha, "alpha")
    check_level(args.delta, "delta")
    rng = None if args.shuffle is None else np.random.default_rng(args.shuffle)
    with one_line_warnings():
        if args.autoeval_command == "certify":
            _run_certify(args, rng)
        else:
            _run_select(args, rng)
