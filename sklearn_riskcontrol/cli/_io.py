"""The command line's input and output: every table a subcommand reads or writes goes through here.

Reading
    Wide CSV tables are read by :func:`sklearn_riskcontrol.evaluation._csv.read_table` (cells kept as
    text; every error names the file, the column and the 1-based row with its line of the file);
    long tables (one row per model/candidate and example: CSV, JSON Lines or Parquet) by the
    readers of :mod:`sklearn_riskcontrol.evaluation`. On top of them this module holds what the
    subcommands need:

    * :func:`read_table`, :func:`losses`: one CSV table, and its losses in [0, 1];
    * :func:`add_long_options`, :func:`is_long`: the ``--long`` option and its detection;
    * :func:`wide_losses`, :func:`long_losses`: candidates x examples loss matrices of
      ``autoeval select`` (ids of the other files matched to ``--labeled`` by
      :func:`positions`);
    * :func:`wide_scores`, :func:`long_scores`, :func:`align_side`: the models x examples score
      matrices of ``bandits``.

Writing
    :func:`write_csv` writes a result table (``-`` = standard output);
    :func:`one_line_warnings` shows warnings as single ``warning: ...`` lines (and records them
    for the JSON object); :func:`say` prints the summary lines on standard error.

Output that machines act on
    :func:`add_output_options` adds ``--json``, ``--gate`` and ``--report`` to a command;
    each command's ``run`` returns its result document, built by :func:`document`, which
    :func:`finish` turns into the strict JSON object of ``schema/v1.json`` (printed with
    ``--json``), the HTML report (``--report``) and the exit status (``--gate``).

Every message here is part of the command line's output: tests compare them to the letter.
"""

import contextlib
import csv
import json
import os
import sys
import warnings

import numpy as np

from .._results import jsonable, render_report

from ..evaluation._csv import all_numbers, check_unique, read_table
from ..evaluation._tables import _FORMATS, _long, _open_source

__all__ = [
    "SCORE_LOW", "SCORE_HIGH", "read_table", "losses", "write_csv", "one_line_warnings",
    "add_long_options", "is_long", "wide_losses", "positions", "long_losses", "wide_scores",
    "long_scores", "align_side", "SCHEMA_VERSION", "add_output_options", "say", "document",
    "interval", "finish",
]

# Version of the JSON object of --json (sklearn_riskcontrol/cli/schema/v<N>.json): raised when
# a field is removed or changes meaning; new fields may be added within a version.
SCHEMA_VERSION = 1
_WARNINGS = []  # the warnings shown by one_line_warnings during the current command
_NESTED = []  # one entry per one_line_warnings block entered (the outermost clears _WARNINGS)

# Score range of the bandits tables; an interval covering all of it says nothing.
SCORE_LOW, SCORE_HIGH = 0.0, 1.0


# ------------------------------------------------------------------------ one CSV table, output
def losses(table, columns):
    """Losses in [0, 1] of one column (1-d) or of candidate columns (rows x candidates)."""
    return table.numbers(columns, what="losses", low=0, high=1)


def write_csv(frame, output):
    """Write a result table to the file ``output`` (``"-"``: standard output), without index."""
    frame.to_csv(sys.stdout if output == "-" else output, index=False)


def _print_warning(message, category, filename, lineno, file=None, line=None):
    text = " ".join(str(message).split())
    _WARNINGS.append(text)
    print(f"warning: {text}", file=sys.stderr)


@contextlib.contextmanager
def one_line_warnings():
    """Show warnings as single ``warning: ...`` lines on standard error (no source context).

    Each distinct warning is shown once; NumPy's ``RuntimeWarning`` noise is hidden.

    Examples
    --------
    >>> import contextlib, sys, warnings
    >>> with contextlib.redirect_stderr(sys.stdout), one_line_warnings():
    ...     warnings.warn("nothing certified:\\n  raise alpha")
    warning: nothing certified: raise alpha
    """
    if not _NESTED:
        _WARNINGS.clear()
    _NESTED.append(True)
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.showwarning = _print_warning
        try:
            yield
        finally:
            _NESTED.pop()


# ---------------------------------------------------------------------------------- long tables
def add_long_options(parser, what, value_column):
    """The options of long tables (``--long`` and the column names)."""
    import argparse

    parser.add_argument(
        "--long", action=argparse.BooleanOptionalAction, default=None,
        help=f"long tables, one row per {what} and example (default: yes for .jsonl and "
             f".parquet files and for a CSV whose header has the {what}, example and "
             f"{value_column} columns)")
    parser.add_argument("--model-column", default="model",
                        help=f"long tables: column of the {what} ids (default: model)")
    parser.add_argument("--example-column", default="example",
                        help="long tables: column of the example ids (default: example)")
    return parser


def _is_long_header(path, model, example, value):
    """Whether ``path`` reads as a long table: a JSON Lines or Parquet file, or a CSV file
    whose header line has the three long columns."""
    if _FORMATS.get(os.path.splitext(str(path))[1].lower()) in ("jsonl", "parquet"):
        return True
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            header = [cell.strip() for cell in next(csv.reader(f), [])]
    except (OSError, UnicodeDecodeError, csv.Error):
        return False  # the reader reports the problem
    return {model, example, value} <= set(header)


def _long_options(**others):
    """The long-table reader's messages in command-line words: the options of its arguments
    (the id columns' and ``others``; ``duplicates`` is offered only where it has an option)."""
    return {"model": "--model-column", "example": "--example-column", **others}


def is_long(args, path, value_column):
    """Whether ``path`` is read as a long table (``--long``/``--no-long``, or detected)."""
    if args.long is not None:
        return args.long
    return _is_long_header(path, args.model_column, args.example_column, value_column)


# ------------------------------------------------------------------- autoeval select: losses
def wide_losses(path, columns=None, groups=None):
    """Wide loss table as (candidates, examples) plus the column names; with ``groups`` (a
    column name) also that column's text (the cluster ids), which is then no candidate."""
    table = read_table(path, rows="example")
    names = table.columns
    ids = None
    if groups is not None:
        ids = table.text(groups)  # a missing column: the reader's message
        names = [c for c in names if c != groups]
    if columns is not None and names != columns:
        raise ValueError(
            f"{path} must have the same candidate columns as --labeled, in the same order "
            f"({columns}); got {names}."
        )
    out = losses(table, names).T, names
    return out if groups is None else out + (ids,)


def positions(have, want, path, what):
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


def long_losses(args, path, column, names=None, examples=None, judge=None):
    """Candidates x examples losses of a long table (complete), ids matched to --labeled.

    Returns the losses of ``column``, those of ``judge`` (None when not read or absent), the
    candidate names, the example ids and the judge losses of the *unlabeled* examples of the
    file (None when there are none): with ``judge``, an example whose ``column`` is empty for
    every candidate (and whose ``judge`` is not) is unlabeled, as in
    :func:`~sklearn_riskcontrol.evaluation.read_long_table`.
    """
    src = _open_source(path, None)
    if judge is not None and judge not in src.columns:
        judge = None
    option, noun = (("--loss-column", "loss") if column == args.loss_column
                    else ("--judge-column", "judge loss"))
    t = _long(src, args.model_column, args.example_column, column, judge, None, "error",
              low=0, high=1, options=_long_options(score=option, judge_score="--judge-column"),
              nouns={"score": noun, "judge_score": "judge loss"})
    models = [str(m) for m in t.model_ids]
    ids = [str(e) for e in t.example_ids]
    rows = np.arange(len(models)) if names is None else positions(models, names, path,
                                                                   "candidate")
    scores, judges, unlabeled = t.scores, t.judge_scores, None
    if judge is not None and examples is None:
        empty = np.isnan(scores).all(axis=0) & ~np.isnan(judges).any(axis=0)
        if empty.any():
            unlabeled = judges[np.ix_(rows, np.flatnonzero(empty))]
            ids = [e for e, skip in zip(ids, empty) if not skip]
            scores, judges = scores[:, ~empty], judges[:, ~empty]
    cols = np.arange(len(ids)) if examples is None else positions(ids, examples, path,
                                                                  "example")
    out = []
    for M, col in ((scores, column), (judges, judge)):
        if M is None:
            out.append(None)
            continue
        M = M[np.ix_(rows, cols)]
        if np.isnan(M).any():
            i, j = (int(k) for k in np.argwhere(np.isnan(M))[0])
            raise ValueError(
                f"{path}: no {col!r} value for candidate {models[rows[i]]!r} on example "
                f"{ids[cols[j]]!r}; every candidate needs a loss on every example of a file"
                + (" (an example with no loss for any candidate is unlabeled)."
                   if unlabeled is not None or (judge is not None and examples is None) else ".")
            )
        out.append(M)
    return out[0], out[1], (models if names is None else names), \
        (ids if examples is None else examples), unlabeled


# --------------------------------------------------------------------------- bandits: scores
def wide_scores(path, header, model_names):
    """Score matrix (NaN = not available), model names and example columns of a CSV table."""
    table = read_table(path, header=header, rows="model")
    first = table.cells[:, 0]
    if model_names == "auto":
        unnamed = header and table.columns[0] == ""
        model_names = "first-column" if unnamed or not all_numbers(first) else "none"
    columns = table.columns
    if model_names == "first-column":
        names = list(first)
        check_unique(table, names, "model name")
        columns = columns[1:]
        if not columns:
            raise ValueError(f"{path} has model names but no example column.")
    else:  # models are named by their data row, counted from 1 as in every message
        names = [str(i + 1) for i in range(table.n_rows)]
    labels = [f"model {n!r}" for n in names] if model_names == "first-column" else None
    values = table.numbers(columns, what="scores", low=SCORE_LOW, high=SCORE_HIGH,
                           allow_empty=True, hint="empty = not available", row_labels=labels)
    return values, names, columns


def long_scores(args, path):
    """Score matrix, model ids and example ids (as text) of a long table."""
    if args.model_names != "auto":
        raise ValueError("--model-names applies to wide tables; a long table names the models "
                         "in --model-column.")
    if not args.header:
        raise ValueError("a long table needs a header line naming its columns; drop "
                         "--no-header, or pass --no-long for a wide table.")
    t = _long(_open_source(path, None), args.model_column, args.example_column,
              args.score_column, None, None, args.duplicates, low=SCORE_LOW, high=SCORE_HIGH,
              options=_long_options(score="--score-column", duplicates="--duplicates"))
    return t.scores, [str(m) for m in t.model_ids], [str(e) for e in t.example_ids]


def align_side(side, side_examples, examples, path):
    """Columns of a long side table put in the order of the main table's examples."""
    where = {e: k for k, e in enumerate(side_examples)}
    pos = np.array([where.get(e, -1) for e in examples])
    if (pos < 0).all():
        raise ValueError(f"--side-scores {path} shares no example id with --scores; the "
                         "example columns must hold the same ids.")
    out = np.full((side.shape[0], len(examples)), np.nan)
    out[:, pos >= 0] = side[:, pos[pos >= 0]]
    return out


# ------------------------------------------------------------------- JSON, gate and report
def add_output_options(parser):
    """``--json``, ``--gate`` and ``--report`` (every subcommand has them)."""
    parser.add_argument(
        "--json", action="store_true",
        help="print one JSON object (schema sklearn_riskcontrol/cli/schema/v1.json) on "
             "standard output and nothing else: the summary, and the table when --output is "
             "-, go to standard error")
    parser.add_argument(
        "--gate", action="store_true",
        help="exit 0 when what was asked is certified, 1 when not (2: bad input, as always)")
    parser.add_argument("--report", default=None, metavar="FILE.html",
                        help="write a self-contained HTML report of the result to this file")
    return parser


def say(lines):
    """Print the summary lines on standard error and return them (for the JSON object)."""
    print("\n".join(lines), file=sys.stderr)
    return list(lines)


def interval(low, high, level):
    """An interval of the JSON object: ``{"low", "high", "level"}`` (level: its coverage
    probability, 1 - delta)."""
    return {"low": low, "high": high, "level": level}


def document(command, *, decision, passed, rule, guarantee, alpha, delta, rows, messages,
             labels_used=None, intervals=(), interval_scale=None, facts=None, reasons=None):
    """A command's result document: the fields of the JSON object before strict conversion.

    ``passed``/``rule``: the ``--gate`` verdict and what it means; ``rows``: one dict per model
    (candidate, pair, test row or round); ``intervals``: what the report draws (``{"name",
    "low", "high"}`` on ``interval_scale``, default the risk scale [0, 1]); ``reasons``: why a
    non-finite number of a given key is null in the JSON object.
    """
    return {
        "command": command, "decision": decision,
        "gate": {"passed": bool(passed), "rule": rule},
        # a level the command has not: NaN, so that the JSON object lists it in nulls, with
        # the reason given in ``reasons``
        "guarantee": guarantee, "alpha": np.nan if alpha is None else alpha,
        "delta": np.nan if delta is None else delta,
        "labels_used": labels_used, "rows": list(rows), "intervals": list(intervals),
        "interval_scale": interval_scale or {"low": 0.0, "high": 1.0, "label": "risk"},
        "facts": facts or {}, "messages": list(messages), "reasons": reasons or {},
    }


def finish(doc, args):
    """Print the JSON object (``--json``), write the report (``--report``) and return the exit
    status: with ``--gate`` 0 when the document's gate passed and 1 when not, else 0."""
    nulls = []
    out = {"schema_version": SCHEMA_VERSION}
    out.update(jsonable({k: v for k, v in doc.items() if k != "reasons"}, nulls,
                        reasons=doc.get("reasons")))
    out["warnings"] = list(_WARNINGS)
    out["nulls"] = nulls
    if getattr(args, "report", None):
        with open(args.report, "w", encoding="utf-8") as f:
            f.write(render_report(out))
    if getattr(args, "json", False):
        print(json.dumps(out, allow_nan=False, indent=1))
    return (0 if out["gate"]["passed"] else 1) if getattr(args, "gate", False) else 0
