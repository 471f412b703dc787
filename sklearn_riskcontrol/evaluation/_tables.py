"""Evaluation results in the shape users have: long tables and LLM-harness sample files.

Evaluation pipelines rarely write a models x examples matrix. They write **long tables**, one row
per (model, example) with the score (and maybe a judge's score and a cost), as a pandas
DataFrame, CSV, JSON Lines or Parquet file; or **per-example sample files**, one JSON object
per line per example, as LLM evaluation harnesses do. :func:`read_long_table` and
:func:`read_harness_samples` turn both into a :class:`LongTable`: the dense score matrix (NaN
where a cell is missing) with the model and example ids, which
:meth:`~sklearn_riskcontrol.evaluation.MatrixOracle.from_long` and every best-model strategy's
``fit`` accept directly (see :doc:`/running_evaluations`).

This module sits on top of the array layer, as the command line does: it reads files, and the
command line's ``bandits`` and ``autoeval select`` read long tables through it (via
``cli/_io.py``, which also detects them). CSV files are read by the reader of the command
line's wide tables (``_tables.read_table``), so a bad cell is reported the same way everywhere:
file, column and row counted from 1 (with the line of the file).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ._csv import _quoted, _rule, read_table
from .._typing import BoolArray

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["LongTable", "read_long_table", "read_harness_samples", "read_inspect_log"]

_FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet",
            ".pq": "parquet"}
_PARQUET_HINT = ('reading Parquet files needs pyarrow: pip install "sklearn-riskcontrol[parquet]" '
                 "(or pip install pyarrow)")


class LongTable:
    """A long evaluation table pivoted to dense (models x examples) matrices.

    Returned by :func:`read_long_table` and :func:`read_harness_samples`; not built by hand.

    Attributes
    ----------
    model_ids : ndarray of shape (n_models,)
        Model ids, in the order of their first row in the source.
    example_ids : ndarray of shape (n_examples,)
        Example ids, in the order of their first row in the source.
    scores : ndarray of shape (n_models, n_examples)
        ``scores[i, j]`` is the score of model ``model_ids[i]`` on example ``example_ids[j]``;
        NaN where the source has no row (or an empty score) for that cell.
    judge_scores : ndarray of shape (n_models, n_examples) or None
        The judge's score of each cell (NaN = missing), when a judge column was read.
    cost : ndarray of shape (n_models, n_examples) or None
        The cost of each cell (NaN = missing), when a cost column was read.
    source : str
        What was read (a file name, ``"DataFrame"``, or the number of sample files).

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_riskcontrol.evaluation import read_long_table
    >>> t = read_long_table(pd.DataFrame({"model": ["a", "a", "b"], "example": [1, 2, 2],
    ...                                   "score": [1.0, 0.0, 1.0]}))
    >>> t
    LongTable(2 models x 2 examples, 3 of 4 cells present, from DataFrame)
    >>> t.scores
    array([[ 1.,  0.],
           [nan,  1.]])
    >>> t.to_frame()
      model  example  score
    0     a        1    1.0
    1     a        2    0.0
    2     b        2    1.0
    """

    def __init__(
        self,
        model_ids: Sequence[Any],
        example_ids: Sequence[Any],
        scores: ArrayLike,
        judge_scores: ArrayLike | None = None,
        cost: ArrayLike | None = None,
        source: str = "",
    ) -> None:
        self.model_ids = np.asarray(model_ids)
        self.example_ids = np.asarray(example_ids)
        self.scores = scores
        self.judge_scores = judge_scores
        self.cost = cost
        self.source = str(source)

    @property
    def shape(self) -> tuple[int, int]:
        """``(n_models, n_examples)``."""
        return self.scores.shape

    def present(self) -> BoolArray:
        """Boolean mask of the cells with a score (``~isnan(scores)``)."""
        return ~np.isnan(self.scores)

    def to_frame(self) -> pd.DataFrame:
        """The table back in long form: one row per cell with a score (or a judge score).

        Rows are in model order, then example order; the columns are ``model``, ``example``,
        ``score`` and, when read, ``judge_score`` and ``cost``.
        """
        import pandas as pd

        keep = self.present()
        if self.judge_scores is not None:
            keep |= ~np.isnan(self.judge_scores)
        i, j = np.nonzero(keep)
        out = {"model": self.model_ids[i], "example": self.example_ids[j],
               "score": self.scores[i, j]}
        if self.judge_scores is not None:
            out["judge_score"] = self.judge_scores[i, j]
        if self.cost is not None:
            out["cost"] = self.cost[i, j]
        return pd.DataFrame(out)

    def __repr__(self):
        n_m, n_e = self.scores.shape
        return (f"LongTable({n_m} models x {n_e} examples, {int(self.present().sum())} of "
                f"{n_m * n_e} cells present, from {self.source})")


# -------------------------------------------------------------------------------------- sources
class _Source:
    """Raw columns of one source plus how to name a row or a cell of it in a message."""

    def __init__(self, name, columns, n_rows, row, where=None, hint=""):
        self.name, self.columns, self.n_rows, self.row = name, columns, n_rows, row
        self._where = where
        self.hint = hint  # added to the message on a repeated (model, example) pair

    def where(self, row, column):
        if self._where is not None:
            return self._where(row, column)
        return f"{self.name}, column {column!r}, {self.row(row)}"

    def column(self, name, what, option=None):
        """The column ``name``; a missing one is named, with ``option`` (default: the Python
        argument ``what=``) as the way to choose another."""
        if name not in self.columns:
            present = [str(c) for c in self.columns]
            raise ValueError(
                f"{self.name} has no column {name!r} ({what}); its columns are: "
                f"{_quoted(present)}. Pass the right column name ({option or f'`{what}=`'})."
            )
        return self.columns[name]


def _from_frame(frame):
    cols = {c: np.asarray(frame[c]) for c in frame.columns}
    index = frame.index

    def row(k):
        return f"row {k + 1} (index {index[k]!r})"

    return _Source("DataFrame", cols, len(frame), row)


def _from_csv(path):
    table = read_table(path, rows="(model, example) pair")
    cols = {c: table.cells[:, k] for k, c in enumerate(table.columns)}
    return _Source(str(path), cols, table.n_rows, table.row, table.where)


def _json_lines(path):
    """Objects of a JSON Lines file with their 1-based line numbers (blank lines skipped)."""
    records, lines = [], []
    try:
        with open(path, encoding="utf-8-sig") as f:
            for k, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}, line {k}: not valid JSON ({exc.msg} at column "
                                     f"{exc.colno}); JSON Lines files hold one JSON object per "
                                     "line.") from None
                if not isinstance(obj, dict):
                    raise ValueError(f"{path}, line {k}: expected a JSON object {{...}}, got "
                                     f"{type(obj).__name__}; JSON Lines files hold one JSON "
                                     "object per line.")
                records.append(obj)
                lines.append(k)
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text ({exc.reason}); save it as UTF-8.") from None
    if not records:
        raise ValueError(f"{path} has no JSON object: it needs one line per (model, example).")
    return records, lines


def _from_jsonl(path):
    records, lines = _json_lines(path)
    names = list(dict.fromkeys(key for r in records for key in r))
    cols = {}
    for name in names:
        col = np.empty(len(records), dtype=object)
        col[:] = [r.get(name) for r in records]
        cols[name] = col

    def row(k):
        return f"row {k + 1} (line {lines[k]} of the file)"

    return _Source(str(path), cols, len(records), row)


def _from_parquet(path):
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise ImportError(f"{path}: {_PARQUET_HINT}.", name="pyarrow") from None
    import pandas as pd

    frame = pd.read_parquet(path)
    return _Source(str(path), {c: np.asarray(frame[c]) for c in frame.columns}, len(frame),
                   lambda k: f"row {k + 1}")


def _open_source(source, format):
    import pandas as pd

    if isinstance(source, pd.DataFrame):
        if format is not None:
            raise ValueError("`format` applies to file paths; a DataFrame is read as it is.")
        return _from_frame(source)
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(f"`source` must be a pandas DataFrame or a file path (CSV, JSON Lines, "
                        f"Parquet); got {type(source).__name__}.")
    path = os.fspath(source)
    if format is None:
        ext = os.path.splitext(path)[1].lower()
        if ext not in _FORMATS:
            raise ValueError(
                f"{path}: cannot tell the format from the extension {ext or '(none)'!r}; name "
                "the file .csv, .jsonl or .parquet, or pass format='csv', 'jsonl' or 'parquet'."
            )
        format = _FORMATS[ext]
    readers = {"csv": _from_csv, "jsonl": _from_jsonl, "parquet": _from_parquet}
    if format not in readers:
        raise ValueError(f"`format` must be 'csv', 'jsonl', 'parquet' or None (from the file "
                         f"extension); got {format!r}.")
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file.")
    return readers[format](path)


# ----------------------------------------------------------------------------- cells to arrays
def _is_missing(col):
    """Mask of missing cells: None, NaN, empty text."""
    import pandas as pd

    missing = np.asarray(pd.isna(col), dtype=bool)
    if col.dtype == object or col.dtype.kind in "US":
        rest = np.flatnonzero(~missing)  # pd.NA == "" is ambiguous: compare the others only
        missing[rest] = np.asarray(col[rest] == "", dtype=bool)
    return missing


def _numbers(src, column, what, low=-np.inf, high=np.inf):
    """Float values of a column (missing cells: NaN); the first bad cell raises a ValueError.

    Numbers and numeric text are read as numbers, ``true``/``false`` as 1/0.
    """
    import pandas as pd

    raw = src.column(column, what)
    if raw.dtype.kind in "biuf":
        values = raw.astype(float)
        missing = np.isnan(values)
        text_ok = np.ones(raw.shape, dtype=bool)
    else:
        missing = _is_missing(raw)
        obj = np.where(missing, np.nan, raw.astype(object))
        values = np.array(pd.to_numeric(pd.Series(obj, dtype=object), errors="coerce"),
                          dtype=float)
        text_ok = missing | ~np.isnan(values)
    with np.errstate(invalid="ignore"):
        bad = ~text_ok | (~missing & (~np.isfinite(values) | (values < low) | (values > high)))
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        cell = raw[k].item() if isinstance(raw[k], np.generic) else raw[k]
        if not text_ok[k]:
            problem = f"{cell!r} is not a number"
        elif not np.isfinite(values[k]):
            problem = f"{cell!r} is not a finite number"
        else:
            problem = f"{cell!r} is out of range"
        rule = "be numbers >= 0" if (low, high) == (0, np.inf) else _rule(low, high, False)
        raise ValueError(f"{src.where(k, column)}: {problem}; {what} must {rule} (an empty "
                         "cell = missing).")
    values[missing] = np.nan
    return values


def _codes(src, column, what):
    """Integer codes and ids (order of first appearance) of an id column."""
    import pandas as pd

    raw = src.column(column, what)
    missing = _is_missing(raw)
    if missing.any():
        k = int(np.flatnonzero(missing)[0])
        raise ValueError(f"{src.where(k, column)} is empty; every row needs its {what}.")
    codes, uniques = pd.factorize(raw, sort=False)
    return codes, np.asarray(uniques)


def _pivot(src, i, j, n_models, n_examples, values, duplicates, labels, choices):
    """Dense matrices from row codes ``i, j``; ``values`` maps names to per-row arrays;
    ``choices`` names the other ``duplicates`` settings in a message (empty: not offered)."""
    flat = i.astype(np.int64) * n_examples + j
    order = np.argsort(flat, kind="stable")
    sf = flat[order]
    repeat = np.zeros(flat.size, dtype=bool)
    repeat[order[1:]] = sf[1:] == sf[:-1]  # rows whose cell occurred earlier in the file
    size = n_models * n_examples
    out = {}
    if repeat.any() and duplicates == "error":
        k = int(np.flatnonzero(repeat)[0])
        first = int(np.flatnonzero(flat == flat[k])[0])
        model, example = labels(i[k], j[k])
        raise ValueError(
            f"{src.name}: the (model, example) pair ({model!r}, {example!r}) appears twice, in "
            f"{src.row(first)} and {src.row(k)}; {src.hint}remove the repeated row{choices}."
        )
    if repeat.any() and duplicates == "mean":
        for name, v in values.items():
            ok = ~np.isnan(v)
            total = np.bincount(flat[ok], weights=v[ok], minlength=size)
            count = np.bincount(flat[ok], minlength=size)
            with np.errstate(invalid="ignore", divide="ignore"):
                cell = total if name == "cost" else total / count
            cell[count == 0] = np.nan
            out[name] = cell.reshape(n_models, n_examples)
        return out
    keep = np.ones(flat.size, dtype=bool)
    if repeat.any():  # "last": the last row of each cell wins
        last = np.ones(flat.size, dtype=bool)
        last[order[:-1]] = sf[:-1] != sf[1:]
        keep = last
    for name, v in values.items():
        cell = np.full(size, np.nan)
        cell[flat[keep]] = v[keep]
        out[name] = cell.reshape(n_models, n_examples)
    return out


def _long(src, model, example, score, judge_score, cost, duplicates, low=-np.inf,
          high=np.inf, options=None, nouns=None):
    """The LongTable of a source, in the caller's words. ``options`` maps the argument names
    (``model``, ``example``, ``score``, ``judge_score``, ``duplicates``) to the caller's ways to
    set them (the command line's options); None: the Python arguments. A ``duplicates`` without
    one is not offered as a fix. ``nouns`` names what the ``score`` and ``judge_score`` columns
    hold (default: those argument names)."""
    if options is None:
        options, choices = {}, (", or pass duplicates='mean' (average the scores, add up the "
                                "costs) or duplicates='last'")
    else:
        flag = options.get("duplicates")
        choices = f", or pass {flag} mean (average the scores) or {flag} last" if flag else ""
    if duplicates not in ("error", "mean", "last"):
        raise ValueError(f"`duplicates` must be 'error', 'mean' or 'last'; got {duplicates!r}.")
    if src.n_rows == 0:
        raise ValueError(f"{src.name} has no rows: it needs one row per (model, example).")
    noun = {"score": "score", "judge_score": "judge_score", **(nouns or {})}
    for column, what in ((model, "model"), (example, "example"), (score, "score"),
                         (judge_score, "judge_score"), (cost, "cost")):
        if column is not None:  # all there before any cell is read
            src.column(column, noun.get(what, what), options.get(what))
    i, model_ids = _codes(src, model, "model")
    j, example_ids = _codes(src, example, "example")
    values = {"score": _numbers(src, score, noun["score"], low, high)}
    if judge_score is not None:
        values["judge_score"] = _numbers(src, judge_score, noun["judge_score"], low, high)
    if cost is not None:
        values["cost"] = _numbers(src, cost, "cost", 0, np.inf)
    cells = _pivot(src, i, j, len(model_ids), len(example_ids), values, duplicates,
                   lambda a, b: (model_ids[a], example_ids[b]), choices)
    return LongTable(model_ids, example_ids, cells["score"], cells.get("judge_score"),
                     cells.get("cost"), src.name)


def read_long_table(
    source: pd.DataFrame | str | os.PathLike[str],
    *,
    model: str = "model",
    example: str = "example",
    score: str = "score",
    judge_score: str | None = None,
    cost: str | None = None,
    format: str | None = None,
    duplicates: str = "error",
) -> LongTable:
    """Read a long evaluation table (one row per model and example) as dense matrices.

    Parameters
    ----------
    source : pandas.DataFrame, str or path-like
        The table, or a file: CSV (``.csv``, with a header line), JSON Lines (``.jsonl`` or
        ``.ndjson``, one JSON object per row) or Parquet (``.parquet``; needs pyarrow,
        ``pip install "sklearn-riskcontrol[parquet]"``).
    model, example, score : str, default="model", "example", "score"
        Columns holding the model id, the example id and the score. Ids may be text or
        numbers; an empty id is an error. An empty (or NaN) score is a missing cell.
    judge_score : str or None, default=None
        Column with an auto-evaluator's (LLM judge's) score of the same cell, e.g. for
        R-AutoEval+ (rows with a judge score but no score are unlabeled examples).
    cost : str or None, default=None
        Column with the cost of each evaluation (numbers >= 0).
    format : {"csv", "jsonl", "parquet"} or None, default=None
        File format; ``None`` takes it from the file extension.
    duplicates : {"error", "mean", "last"}, default="error"
        Several rows for one (model, example) pair: ``"error"`` raises a ``ValueError`` naming
        the first repeated pair and its two rows; ``"mean"`` averages the scores (and judge
        scores) of the pair's rows and adds up their costs (every row was paid for);
        ``"last"`` keeps the last row.

    Returns
    -------
    table : LongTable
        ``model_ids`` and ``example_ids`` in the order of their first row, ``scores`` (models x
        examples, NaN = missing cell), ``judge_scores`` and ``cost`` (when read).

    Raises
    ------
    ValueError
        A missing column (the message lists the columns present), an empty id, a score,
        judge score or cost that is not a finite number (a negative cost), a repeated pair:
        each message names the file (or ``DataFrame``), the column and the row, counted from 1
        (with the line of the file for CSV and JSON Lines).
    ImportError
        A Parquet file without pyarrow installed.

    Notes
    -----
    The pivot is vectorised (``pandas.factorize`` and NumPy fancy indexing), so a table of
    millions of rows is read in about a second. Scores are not required to lie in [0, 1] here;
    :class:`~sklearn_riskcontrol.evaluation.MatrixOracle` (and the strategies) do require it.

    Examples
    --------
    A JSON Lines file with two models, three examples and one missing cell:

    >>> import json, os, tempfile
    >>> from sklearn_riskcontrol.evaluation import read_long_table
    >>> path = os.path.join(tempfile.mkdtemp(), "runs.jsonl")
    >>> rows = [("gpt-a", "q1", 1), ("gpt-a", "q2", 0), ("gpt-a", "q3", 1),
    ...         ("llama-b", "q1", 0), ("llama-b", "q3", 1)]
    >>> with open(path, "w") as f:
    ...     for m, e, s in rows:
    ...         print(json.dumps({"model": m, "example": e, "score": s}), file=f)
    >>> t = read_long_table(path)
    >>> t.model_ids.tolist(), t.example_ids.tolist()
    (['gpt-a', 'llama-b'], ['q1', 'q2', 'q3'])
    >>> t.scores
    array([[ 1.,  0.,  1.],
           [ 0., nan,  1.]])

    Any strategy fits on it directly (missing cells are excluded from each model's mean, and a
    RiskControlWarning says that the two models' means are then over different examples):

    >>> from sklearn_riskcontrol.evaluation import MatrixOracle
    >>> from sklearn_riskcontrol.bandits import UniformSampling
    >>> oracle = MatrixOracle.from_long(t, missing="exclude")
    >>> UniformSampling(budget=1.0, batch_size=1, random_state=0).fit(oracle).means_
    array([0.6667, 0.5   ])

    Errors name the file, the column and the row:

    >>> with open(path, "a") as f:
    ...     print(json.dumps({"model": "llama-b", "example": "q2", "score": "n/a"}), file=f)
    >>> read_long_table(path)
    Traceback (most recent call last):
    ...
    ValueError: ...runs.jsonl, column 'score', row 6 (line 6 of the file): 'n/a' is not a number; score must be finite numbers (an empty cell = missing).
    """
    src = _open_source(source, format)
    return _long(src, model, example, score, judge_score, cost, duplicates)


# ----------------------------------------------------------------------------- harness samples
# lm-evaluation-harness writes <output_path>/<model_name_sanitized>/samples_<task>_<date_id>.jsonl
# with date_id = datetime.now().isoformat() with ':' replaced by '-'.
_LM_EVAL_NAME = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.\-]+)$")
_MAPPING_KEYS = ("model", "example", "task", "score", "judge_score", "cost", "filter")


def _get(record, field):
    """``record[field]``; a dotted field (``"metrics.acc"``) looks into nested objects."""
    if field in record:
        return record[field]
    value = record
    for part in field.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def _path_list(paths, what):
    """``paths`` (one path or several) as a list of strings; ``what`` ends the TypeError's
    sentence ``"`<argument>` must be ..."``."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    try:
        return [os.fspath(p) for p in paths]
    except TypeError:
        raise TypeError(f"{what}; got {paths!r}.") from None


def _sample_files(paths_or_dir):
    items = _path_list(paths_or_dir, "`paths_or_dir` must be a directory, a file path or a "
                                     "list of file paths")
    files = []
    for p in items:
        if os.path.isdir(p):
            found = sorted(
                os.path.join(root, name) for root, _, names in os.walk(p) for name in names
                if name.endswith(".jsonl")
            )
            if not found:
                raise ValueError(f"{p}: no .jsonl sample file in this directory (or below).")
            files.extend(found)
        elif os.path.exists(p):
            files.append(p)
        else:
            raise FileNotFoundError(f"{p}: no such file or directory.")
    if not files:
        raise ValueError("`paths_or_dir` is empty: pass a directory or sample files.")
    return files


def read_harness_samples(
    paths_or_dir: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    metric: str,
    model_from: str | Callable[[str], str] = "directory",
    example_key: str = "doc_id",
    mapping: Mapping[str, Any] | None = None,
    filter: str | None = None,
    duplicates: str = "error",
) -> LongTable:
    """Read the per-example sample files of LLM evaluation harnesses as one long table.

    Harnesses log one JSON object per line and per example, with the example's id and the
    metric values of that example. lm-evaluation-harness (``--log_samples``) writes
    ``<output_path>/<model>/samples_<task>_<date>.jsonl``, each line like::

        {"doc_id": 0, "doc": {...}, "target": "B", "resps": [...], "filtered_resps": [...],
         "filter": "none", "metrics": ["acc"], "acc": 1.0}

    Column mapping (the long table's columns, and where each comes from):

    ============  ==========================================================================
    model         ``model_from``: the sample file's directory (``"directory"``, the
                  lm-evaluation-harness layout), the file name without ``.jsonl``
                  (``"filename"``), ``callable(path) -> str``, or a field (``mapping["model"]``)
    task          the ``<task>`` of an lm-evaluation-harness file name
                  ``samples_<task>_<date>.jsonl``, or a field (``mapping["task"]``); none
                  otherwise
    example       ``"<task>/<example_key>"`` (e.g. ``"arc_easy/17"``) when there is a task, so
                  that several tasks make one pool of examples; ``str(<example_key>)``
                  otherwise
    score         the field ``metric`` (e.g. ``"acc"``, ``"exact_match"``); ``true``/``false``
                  count as 1/0
    judge_score   ``mapping["judge_score"]``, if given
    cost          ``mapping["cost"]``, if given
    ============  ==========================================================================

    Fields may be dotted paths into nested objects (``"stats.exact_match"``), so other
    harnesses (HELM-like per-instance records, OpenAI evals, your own logs) are read through
    ``mapping``.

    Parameters
    ----------
    paths_or_dir : str, path-like or list of them
        Sample files, or directories searched (recursively) for ``*.jsonl`` files.
    metric : str
        Field holding the example's score (higher = better). A missing field or ``null`` is a
        missing cell.
    model_from : {"directory", "filename"} or callable, default="directory"
        Where the model id comes from when ``mapping`` has no ``"model"`` field (see above).
    example_key : str, default="doc_id"
        Field holding the example's id within its task.
    mapping : dict or None, default=None
        Fields for the keys ``"model"``, ``"task"``, ``"example"`` (overrides ``example_key``),
        ``"score"`` (overrides ``metric``), ``"judge_score"``, ``"cost"`` and ``"filter"``
        (default ``"filter"``).
    filter : str or None, default=None
        Keep only the lines whose filter field equals this. lm-evaluation-harness writes one
        line per example *and filter* when a task has several (e.g. ``"strict-match"`` and
        ``"flexible-extract"`` for gsm8k); without ``filter`` they are repeated pairs.
    duplicates : {"error", "mean", "last"}, default="error"
        As in :func:`read_long_table` (``"mean"`` averages repeated samples of one example).

    Returns
    -------
    table : LongTable
        Models in the order of their first file, examples in the order of their first line.

    Raises
    ------
    ValueError
        A line that is not a JSON object, a line without ``example_key``, a metric value that is
        not a number, a repeated (model, example) pair: each names the file, the field and the
        line.

    Examples
    --------
    Two models, each with a sample file of one task, in lm-evaluation-harness's layout:

    >>> import json, os, tempfile
    >>> from sklearn_riskcontrol.evaluation import read_harness_samples
    >>> out = tempfile.mkdtemp()
    >>> for model, accs in [("org__model-a", [1, 0, 1]), ("org__model-b", [1, 1, 1])]:
    ...     os.makedirs(os.path.join(out, model))
    ...     name = os.path.join(out, model, "samples_arc_easy_2024-05-01T10-00-00.123.jsonl")
    ...     with open(name, "w") as f:
    ...         for doc_id, acc in enumerate(accs):
    ...             line = {"doc_id": doc_id, "filter": "none", "metrics": ["acc"], "acc": acc}
    ...             print(json.dumps(line), file=f)
    >>> t = read_harness_samples(out, metric="acc")
    >>> t.model_ids.tolist(), t.example_ids.tolist()
    (['org__model-a', 'org__model-b'], ['arc_easy/0', 'arc_easy/1', 'arc_easy/2'])
    >>> t.scores
    array([[1., 0., 1.],
           [1., 1., 1.]])

    Other layouts through ``mapping``: one file per model, the id in ``"id"`` and the metric
    nested in ``"stats"``:

    >>> path = os.path.join(out, "gpt-x.jsonl")
    >>> with open(path, "w") as f:
    ...     print(json.dumps({"id": "q1", "stats": {"exact_match": 1.0}}), file=f)
    >>> read_harness_samples(path, metric="stats.exact_match", model_from="filename",
    ...                      mapping={"example": "id"}).to_frame()
      model example  score
    0 gpt-x      q1    1.0
    """
    mapping = {} if mapping is None else dict(mapping)
    unknown = sorted(set(mapping) - set(_MAPPING_KEYS))
    if unknown:
        raise ValueError(f"`mapping` has unknown keys {unknown}; its keys are "
                         f"{list(_MAPPING_KEYS)}.")
    if not isinstance(metric, str) and "score" not in mapping:
        raise TypeError(f"`metric` must be the name of a field, e.g. 'acc'; got {metric!r}.")
    if not (callable(model_from) or model_from in ("directory", "filename")):
        raise ValueError("`model_from` must be 'directory', 'filename' or a callable "
                         f"path -> model id; got {model_from!r}.")
    fields = {"example": mapping.get("example", example_key),
              "score": mapping.get("score", metric)}
    for key in ("judge_score", "cost", "model", "task"):
        if key in mapping:
            fields[key] = mapping[key]
    filter_field = mapping.get("filter", "filter")

    cols = {k: [] for k in ("model", "example", "score", "judge_score", "cost")}
    where_file, where_line = [], []
    for path in _sample_files(paths_or_dir):
        records, lines = _json_lines(path)
        if filter is not None:
            kept = [k for k, r in enumerate(records) if _get(r, filter_field) == filter]
            records, lines = [records[k] for k in kept], [lines[k] for k in kept]
        stem = os.path.basename(path)[: -len(".jsonl")] if path.endswith(".jsonl") else \
            os.path.splitext(os.path.basename(path))[0]
        match = _LM_EVAL_NAME.match(stem)
        if "model" not in fields:
            if callable(model_from):
                file_model = str(model_from(path))
            elif model_from == "directory":
                file_model = os.path.basename(os.path.dirname(os.path.abspath(path)))
            else:
                file_model = stem
        file_task = match.group("task") if match else None
        for r, line in zip(records, lines):
            doc = _get(r, fields["example"])
            if doc is None or doc == "":
                raise ValueError(
                    f"{path}, line {line}: no field {fields['example']!r} (the example id); "
                    "pass example_key= (or mapping={'example': ...}) naming the id field."
                )
            task = _get(r, fields["task"]) if "task" in fields else file_task
            cols["example"].append(str(doc) if task is None else f"{task}/{doc}")
            cols["model"].append(_get(r, fields["model"]) if "model" in fields else file_model)
            for key in ("score", "judge_score", "cost"):
                if key in fields:
                    cols[key].append(_get(r, fields[key]))
        where_file.extend([path] * len(records))
        where_line.extend(lines)
    if not where_line:
        raise ValueError(f"no sample line kept (filter={filter!r}): check `filter`.")

    if all(v is None for v in cols["score"]):
        first = _json_lines(_sample_files(paths_or_dir)[0])[0][0]
        raise ValueError(
            f"no sample line has the field {fields['score']!r} (the score, `metric`); the "
            f"first line's fields are: {_quoted(list(first))}."
        )
    names = {"model": fields.get("model", "model"), "example": fields["example"]}
    for key in ("score", "judge_score", "cost"):
        if key in fields:
            names[key] = fields[key]
    arrays = {}
    for key, field in names.items():
        values = cols[key]
        if key in ("score", "judge_score"):  # true/false -> 1/0
            values = [float(v) if isinstance(v, bool) else v for v in values]
        arr = np.empty(len(values), dtype=object)
        arr[:] = values
        arrays[field] = arr

    def row(k):
        return f"{where_file[k]}, line {where_line[k]}"

    def where(k, column):
        return f"{where_file[k]}, field {column!r}, line {where_line[k]}"

    files = sorted(set(where_file))
    name = files[0] if len(files) == 1 else f"{len(files)} sample files"
    hint = "" if filter is not None else (
        "if the lines differ by their filter field (one line per example and filter), pass "
        "filter=...; or "
    )
    src = _Source(name, arrays, len(where_line), row, where, hint)
    return _long(src, names["model"], names["example"], names["score"],
                 names.get("judge_score"), names.get("cost"), duplicates)


# --------------------------------------------------------------------------------- Inspect AI
_INSPECT_HINT = ('reading Inspect AI logs needs inspect_ai: pip install '
                 '"sklearn-riskcontrol[inspect]" (or pip install inspect_ai)')
# Inspect's CORRECT, INCORRECT, PARTIAL and NOANSWER values, as losses.
_INSPECT_LOSSES = {"C": 0.0, "I": 1.0, "P": 0.5, "N": 1.0}
_INSPECT_COLUMNS = ("model", "example", "epoch", "task", "error", "log")
# Files Inspect keeps in a log directory that are not logs (its listing manifest, eval sets).
_INSPECT_NOT_LOGS = ("logs.json", "eval-set.json")
_LISTED = 5  # rows named in a warning


def _inspect_files(path):
    """Log files of ``path`` (a file, a folder searched recursively, or a list of them) and the
    ``.json`` files of folders skipped because Inspect would not list them as logs."""
    items = _path_list(path, "`path` must be an Inspect log file (.eval or .json), a folder "
                             "of them or a list of them")
    if not items:
        raise ValueError("`path` is empty: pass an Inspect log file or a folder of them.")
    files, skipped = [], []
    # Inspect names .json logs <ISO timestamp>_<task>_<id>.json; other .json files in a folder
    # (notes, results, its logs.json manifest) are not logs.
    stamped = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}")
    for p in items:
        if os.path.isdir(p):
            found = []
            for root, _, names in os.walk(p):
                for name in names:
                    full = os.path.join(root, name)
                    if name.endswith(".eval") or (name.endswith(".json")
                                                  and stamped.match(name)):
                        found.append(full)
                    elif name.endswith(".json") and name not in _INSPECT_NOT_LOGS:
                        skipped.append(full)
            if not found:
                raise ValueError(f"{p}: no Inspect log in this folder (or below): Inspect "
                                 "writes .eval files, or .json files named "
                                 "<date>T<time>_<task>_<id>.json.")
            files.extend(sorted(found))
        elif os.path.exists(p):
            files.append(p)
        else:
            raise FileNotFoundError(f"{p}: no such file or directory.")
    return files, sorted(skipped)


def _read_one_log(path, read_eval_log):
    import inspect_ai

    try:
        return read_eval_log(path)
    except Exception as exc:  # zip, JSON and validation errors of a file that is no log
        first = (str(exc).strip().splitlines() or [""])[0]
        raise ValueError(
            f"{path} is not an Inspect AI log that inspect_ai {inspect_ai.__version__} can read "
            f"({type(exc).__name__}: {first}); pass .eval or .json files written by Inspect "
            "(inspect eval ... --log-dir)."
        ) from exc


def _flat_values(value):
    """``[(suffix, value)]`` of one score value: ``("", v)`` for a scalar, ``("/key", v)`` for
    each item of a dict value (a scorer that returns several values)."""
    if isinstance(value, dict):
        return [(f"/{k}", v) for k, v in value.items()]
    return [("", value)]


def _loss_rule(name, scorer, score_range, mapping):
    """The rule turning scorer ``name``'s values into losses: ``(function, description)``;
    ``scorer`` is the scorer whose ``mapping`` and ``score_range`` entries apply."""
    if scorer in mapping:
        rule = mapping[scorer]
        if callable(rule):
            return rule, "your mapping (a function)"
        if isinstance(rule, Mapping):
            table = dict(rule)
            missing = object()

            def lookup(v):
                out = table.get(v, missing) if not isinstance(v, (list, dict)) else missing
                if out is missing:
                    raise ValueError(f"the value {v!r} is not a key of mapping[{scorer!r}] "
                                     f"(its keys: {list(table)})")
                return out

            return lookup, "your mapping (a dict)"
        raise TypeError(f"mapping[{scorer!r}] must be a function value -> loss or a dict "
                        f"{{value: loss}}; got {type(rule).__name__}.")
    rng = score_range.get(scorer) if isinstance(score_range, Mapping) else score_range
    if rng is not None:
        try:
            low, high = (float(x) for x in rng)
        except (TypeError, ValueError):
            raise ValueError(f"score_range for {scorer!r} must be a pair (low, high); got "
                             f"{rng!r}.") from None
        if not (np.isfinite(low) and np.isfinite(high) and low < high):
            raise ValueError(f"score_range for {scorer!r} must be finite with low < high; got "
                             f"{rng!r}.")
    else:
        low = high = None

    def standard(v):
        if isinstance(v, str):
            if v in _INSPECT_LOSSES:
                return _INSPECT_LOSSES[v]
            raise ValueError(f"the text value {v!r} is not one of Inspect's C, I, P, N; pass "
                             f"mapping={{{scorer!r}: {{{v!r}: <loss>, ...}}}}")
        if isinstance(v, (bool, np.bool_)):
            return 0.0 if v else 1.0
        if isinstance(v, (int, float, np.number)):
            if np.isnan(v):
                return np.nan
            if low is None:
                raise ValueError(
                    f"the value {v!r} is a number and scorer {scorer!r} has no declared range; "
                    f"pass score_range={{{scorer!r}: (low, high)}} (higher = better: loss = "
                    f"(high - value) / (high - low)), or a mapping")
            if not low <= v <= high:
                raise ValueError(f"the value {v!r} is outside score_range ({low:g}, {high:g}) "
                                 f"of {scorer!r}")
            return (high - float(v)) / (high - low)
        raise ValueError(f"the value {v!r} ({type(v).__name__}) has no standard loss; pass "
                         f"mapping={{{scorer!r}: function value -> loss}}")

    if low is None:
        text = "C -> 0, I -> 1, P -> 0.5, N -> 1, True -> 0, False -> 1"
    else:
        text = f"loss = ({high:g} - value) / ({high:g} - {low:g}); C/I/P/N as usual"
    return standard, text


def read_inspect_log(
    path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    score_range: tuple[float, float] | Mapping[str, tuple[float, float]] | None = None,
    mapping: Mapping[str, Callable[[Any], float] | Mapping[Any, float]] | None = None,
    epochs: str = "rows",
    model_from: str = "auto",
) -> pd.DataFrame:
    """Read Inspect AI evaluation logs as a long loss table: one row per (model, sample, epoch).

    `Inspect AI <https://inspect.aisi.org.uk>`_ writes one log per task and model (``.eval``, or
    ``.json`` with ``--log-format json``), holding every sample's scores: one score per scorer
    (``match``, ``model_graded_qa``, ...). This reads them with Inspect's own reader
    (``inspect_ai.log.read_eval_log``, so any log version Inspect reads is read) and turns each
    score into a loss in [0, 1], in the long shape that :func:`read_long_table` and the
    command line (``autoeval certify --loss-column``/``--judge-column``, ``autoeval select``,
    ``compare``, ``bandits``) take. The ground-truth label and the judge are two scorers, chosen
    by their column names (e.g. ``match`` as the label and ``model_graded_qa`` as the judge).

    Losses (lower is better), per scorer, the first rule that applies:

    1. ``mapping[scorer]``: your function ``value -> loss``, or a dict ``{value: loss}``;
    2. Inspect's text values: ``"C"`` (correct) -> 0, ``"I"`` (incorrect) -> 1, ``"P"``
       (partial) -> 0.5, ``"N"`` (no answer) -> 1 (a non-answer counts as a failure);
       ``True`` -> 0, ``False`` -> 1;
    3. numbers, with a declared ``score_range=(low, high)`` (higher = better):
       ``loss = (high - value) / (high - low)``. A number without a declared range is an error:
       whether 1 is good or bad is not in the log.

    A scorer whose value is a dict (several values) gives one column per key,
    ``"<scorer>/<key>"`` (``mapping`` and ``score_range`` entries of ``"<scorer>"`` apply to
    each). A NaN value (Inspect's ``Score.unscored()``, e.g. a judge's reply without a grade)
    or a scorer absent from a sample is a missing loss (NaN).

    Parameters
    ----------
    path : str, path-like or list of them
        An Inspect log file (``.eval`` or ``.json``), a folder searched recursively for logs
        (every ``.eval`` file and the ``.json`` files named as Inspect names logs,
        ``<date>T<time>_<task>_<id>.json``), or a list of files and folders.
    score_range : (low, high), dict or None, default=None
        Range of the numeric scores, higher = better: one pair for every scorer, or a dict
        ``{scorer: (low, high)}``.
    mapping : dict or None, default=None
        ``{scorer: function or dict}``: your own rule from a score value to a loss in [0, 1]
        (``None`` or NaN = missing). It wins over the standard rules.
    epochs : {"rows", "mean"}, default="rows"
        Samples run for several epochs (``inspect eval --epochs``): ``"rows"`` keeps one row per
        epoch, with its number in ``epoch``; ``"mean"`` averages each sample's losses over its
        epochs (the epochs with a loss), one row per (model, sample), and replaces ``epoch`` by
        ``n_epochs``, the number of epochs read. The epochs of one sample are not independent
        draws: every method of this library that assumes i.i.d. rows needs one row per sample
        (``"mean"``, or ``read_long_table(..., duplicates="mean")``); with ``"rows"``,
        ``example`` is the cluster of each row, the cluster ids a clustered test takes
        (``autoeval certify --groups example``; ``groups_labeled=`` in Python).
    model_from : {"auto", "eval", "output"}, default="auto"
        The ``model`` of a row: ``"eval"``, the log's model (``eval.model``, e.g.
        ``"openai/gpt-4o"``); ``"output"``, the model that wrote the sample's output
        (``output.model``; the log's model for a sample without output); ``"auto"``, the log's
        model, unless the samples of one log have outputs of several models (a solver that
        routes samples to several models): then that log's rows take ``"output"``, with a
        warning, so that models are never pooled silently.

    Returns
    -------
    table : pandas.DataFrame
        One row per (model, sample, epoch), in the order of the files (sorted within a
        folder) and of the samples in each log, with the columns

        ============  ======================================================================
        model         the model (see ``model_from``)
        example       the sample id (``"<task>/<id>"`` when the logs hold several tasks)
        epoch         the epoch, from 1 (``n_epochs`` with ``epochs="mean"``)
        <scorer>      one column per scorer, named as the scorer: its loss in [0, 1] or NaN
        task          the task's name
        error         the error message of a sample that failed (None otherwise)
        log           the log file of the row
        ============  ======================================================================

        ``table.attrs["loss_rules"]`` says which rule made each scorer column.

    Raises
    ------
    ImportError
        ``inspect_ai`` is not installed (``pip install "sklearn-riskcontrol[inspect]"``).
    ValueError
        A file that is not an Inspect log, a folder without a log, a score value that no rule
        turns into a loss in [0, 1] (the message names the log, model, sample, epoch, scorer
        and value, and how to declare a rule), a ``mapping`` or ``score_range`` key that is
        no scorer of the logs, a scorer named like one of the table's other columns, the same
        (model, sample, epoch) in two logs (pass the files to read).

    Warns
    -----
    RiskControlWarning
        Samples that ended with an error (kept, with NaN losses and the message in ``error``),
        scores that are missing (kept as NaN), logs of runs that did not finish, logs whose
        samples come from several models, ``.json`` files of a folder skipped as not logs.
        Each warning says how many rows and names the first ones. Nothing is dropped: a NaN
        label loss is read as an *unlabeled* row by ``autoeval certify``, so drop the rows you
        do not want (``table[table.error.isna()]``) before.

    See Also
    --------
    read_long_table : the same long shape, from a DataFrame or a file.
    read_harness_samples : lm-evaluation-harness sample files (and other JSON Lines logs).

    Notes
    -----
    Scores are read from the samples, not from Inspect's reduced per-epoch results, so
    no reducer is applied. Score values are Python objects of any type (text, numbers, dicts),
    turned into losses one by one; parsing the log with Inspect's reader takes nearly all the
    time (measured once on a busy 2-core machine: a 10,000-sample log, 20 s in
    ``read_eval_log``, under 1 s for the rest).
    Inspect's ``exclude_fields`` (skipping the transcripts) made the reading slower, not
    faster, with inspect_ai 0.3.285, so the whole log is read.

    Examples
    --------
    The test suite keeps small logs written by Inspect itself (two models, two epochs, scorers
    ``match`` and ``model_graded_qa``; regenerated by ``tools/make_inspect_fixtures.py``):

    >>> import os, warnings
    >>> from sklearn_riskcontrol.evaluation import read_inspect_log, read_long_table
    >>> logs = os.path.join("tests", "evaluation", "data", "inspect", "qa")
    >>> with warnings.catch_warnings(record=True) as caught:  # doctest: +SKIP
    ...     warnings.simplefilter("always")
    ...     table = read_inspect_log(logs)
    >>> table.columns.tolist()  # doctest: +SKIP
    ['model', 'example', 'epoch', 'match', 'model_graded_qa', 'task', 'error', 'log']
    >>> table.iloc[:5, :5]  # doctest: +SKIP
              model example  epoch  match  model_graded_qa
    0  canned/alpha      q1      1    0.0              0.0
    1  canned/alpha      q2      1    0.0              0.0
    2  canned/alpha      q3      1    0.0              0.0
    3  canned/alpha      q4      1    1.0              NaN
    4  canned/alpha      q5      1    1.0              0.0
    >>> for w in caught:  # doctest: +SKIP
    ...     print(str(w.message)[:75])
    1 of 20 rows are samples that ended with an error and have no score: mo...
    scorer 'model_graded_qa' has no score for 2 of 20 rows (NaN cells) that ...

    One row per sample, the epochs averaged, is what :func:`read_long_table` and the
    command line read:

    >>> means = read_inspect_log(logs, epochs="mean")  # doctest: +SKIP
    >>> read_long_table(means, score="match",  # doctest: +SKIP
    ...                 judge_score="model_graded_qa").scores
    array([[0. , 0. , 0. , 1. , 1. ],
           [1. , 0.5, 0. , 0. , 1. ]])
    """
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise ImportError(f"read_inspect_log: {_INSPECT_HINT}.", name="inspect_ai") from None
    import pandas as pd

    if epochs not in ("rows", "mean"):
        raise ValueError(f"`epochs` must be 'rows' (one row per epoch) or 'mean' (averaged "
                         f"per sample); got {epochs!r}.")
    if model_from not in ("auto", "eval", "output"):
        raise ValueError(f"`model_from` must be 'auto', 'eval' or 'output'; got "
                         f"{model_from!r}.")
    mapping = {} if mapping is None else dict(mapping)
    if score_range is not None and not isinstance(score_range, Mapping):
        score_range = tuple(score_range)
    files, skipped = _inspect_files(path)
    if skipped:
        _warn(f"skipped {len(skipped)} .json file(s) not named as Inspect names its logs "
              f"(<date>T<time>_<task>_<id>.json): {_quoted(skipped[:_LISTED])}"
              f"{'...' if len(skipped) > _LISTED else ''}; pass a file explicitly to read it.")

    rows = {k: [] for k in _INSPECT_COLUMNS}
    values = {}  # score column -> raw values, one per row (None where absent)
    scorer_of = {}  # score column -> the scorer it comes from
    n = 0
    for file in files:
        log = _read_one_log(file, read_eval_log)
        samples = log.samples or []
        if log.status != "success":
            _warn(f"{file}: the run has status {log.status!r} (it did not finish), "
                  f"{len(samples)} sample(s) read; samples it did not run are absent.")
        if not samples:
            continue
        eval_model = str(log.eval.model)
        outputs = [s.output.model if (s.output is not None and s.output.choices) else None
                   for s in samples]
        seen = list(dict.fromkeys(m for m in outputs if m))
        use_output = model_from == "output" or (model_from == "auto" and len(seen) > 1)
        if model_from == "auto" and len(seen) > 1:
            _warn(f"{file}: the samples of this log (model {eval_model!r}) were answered by "
                  f"{len(seen)} models ({_quoted(seen)}, their output.model): each row's model "
                  "is the model of its output, so that they are not pooled "
                  f"({outputs.count(None)} sample(s) without output keep {eval_model!r}); "
                  "pass model_from='eval' to pool them.")
        for s, out_model in zip(samples, outputs):
            rows["model"].append(out_model if (use_output and out_model) else eval_model)
            rows["example"].append(s.id)
            rows["epoch"].append(int(s.epoch))
            rows["task"].append(str(log.eval.task))
            rows["error"].append(None if s.error is None else str(s.error.message))
            rows["log"].append(file)
            for scorer, score in (s.scores or {}).items():
                for suffix, v in _flat_values(score.value):
                    col = f"{scorer}{suffix}"
                    if col not in values:
                        values[col] = [None] * n
                        scorer_of[col] = scorer
                    values[col].append(v)
            n += 1
            for col in values:
                if len(values[col]) < n:
                    values[col].append(None)
    if n == 0:
        raise ValueError(f"no sample in {_quoted(files[:_LISTED])}: the logs hold no sample "
                         "(runs with --no-log-samples, or runs that never started).")
    scorers = list(dict.fromkeys(scorer_of.values()))
    for option, given in (("mapping", mapping), ("score_range", score_range)):
        unknown = [k for k in (given if isinstance(given, Mapping) else ()) if k not in scorers]
        if unknown:
            raise ValueError(f"`{option}` names the scorer {unknown[0]!r}, which no sample of "
                             f"the logs has; their scorers are: {_quoted(scorers)}.")
    clash = sorted(set(values) & set(_INSPECT_COLUMNS + ("n_epochs",)))
    if clash:
        raise ValueError(f"a scorer is named {clash[0]!r}, like a column of the table; "
                         "rename the scorer (Scorer(name=...)) or read the log with "
                         "inspect_ai.log.read_eval_log.")
    frame = pd.DataFrame({k: rows[k] for k in ("model", "example", "epoch")})
    tasks = list(dict.fromkeys(rows["task"]))
    if len(tasks) > 1:
        frame["example"] = [f"{t}/{e}" for t, e in zip(rows["task"], rows["example"])]

    def who(k):
        return (f"model {frame['model'].iat[k]!r} sample {rows['example'][k]!r} epoch "
                f"{frame['epoch'].iat[k]} ({rows['log'][k]})")

    rules = {}
    for col, raw in values.items():
        rule, rules[col] = _loss_rule(col, scorer_of[col], score_range or {}, mapping)
        raw = np.asarray(raw + [None] * (n - len(raw)), dtype=object)
        loss = np.full(n, np.nan)
        # None (no score) and NaN (Inspect's Score.unscored()) are missing, whatever the rule
        present = np.array([v is not None and not (isinstance(v, float) and np.isnan(v))
                            for v in raw])
        for k in np.flatnonzero(present):  # values are Python objects of any kind
            try:
                v = rule(raw[k])
                v = np.nan if v is None else float(v)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{who(k)}, scorer {col!r}: {exc}.") from None
            if not (np.isnan(v) or 0.0 <= v <= 1.0):
                raise ValueError(f"{who(k)}, scorer {col!r}: the value {raw[k]!r} gives the "
                                 f"loss {v!r}, outside [0, 1]; fix mapping or score_range.")
            loss[k] = v
        frame[col] = loss
    frame["task"], frame["error"], frame["log"] = rows["task"], rows["error"], rows["log"]

    keys = list(zip(frame["model"], frame["example"], frame["epoch"]))
    repeated = np.flatnonzero(frame[["model", "example", "epoch"]].duplicated().to_numpy())
    if repeated.size:
        k = int(repeated[0])
        first = keys.index(keys[k])
        raise ValueError(
            f"model {frame['model'].iat[k]!r} sample {rows['example'][k]!r} epoch "
            f"{frame['epoch'].iat[k]} is in two logs, {rows['log'][first]} and "
            f"{rows['log'][k]} (a run and its rerun?); pass the log files to read instead of "
            "their folder."
        )
    failed = np.flatnonzero(frame["error"].notna().to_numpy())
    if failed.size:
        listed = "; ".join(f"{who(k)}: {frame['error'].iat[k]}" for k in failed[:_LISTED])
        _warn(f"{failed.size} of {n} rows are samples that ended with an error and have no "
              f"score: {listed}{'; ...' if failed.size > _LISTED else ''}. They are kept with "
              "NaN losses and the message in the 'error' column: rerun them (inspect "
              "eval-retry) or drop them (table[table.error.isna()]); never read them as passes.")
    ok = frame["error"].isna().to_numpy()
    for col in values:
        gap = np.flatnonzero(ok & np.isnan(frame[col].to_numpy()))
        if gap.size:
            listed = "; ".join(who(k) for k in gap[:_LISTED])
            _warn(f"scorer {col!r} has no score for {gap.size} of {n} rows (NaN cells) that "
                  f"did not fail: {listed}{'; ...' if gap.size > _LISTED else ''} (unscored, "
                  "e.g. a judge reply without a grade, or not scored by this scorer).")

    if epochs == "mean":
        frame = _mean_epochs(frame, list(values))
    frame.attrs["loss_rules"] = rules
    return frame


def _mean_epochs(frame, scores):
    """One row per (model, example): the epochs' mean loss per scorer, ``n_epochs`` read."""
    import pandas as pd

    keys = ["model", "example"]
    grouped = frame.groupby(keys, sort=False, dropna=False)
    out = grouped[scores].mean() if scores else grouped.size().to_frame().iloc[:, :0]
    out.insert(0, "n_epochs", grouped.size())
    first = grouped[["task", "log"]].first()
    errors = grouped["error"].agg(lambda e: "; ".join(e.dropna().astype(str)) or None)
    out = pd.concat([out, first.iloc[:, :1], errors, first.iloc[:, 1:]], axis=1)
    return out.reset_index()


def _warn(message):
    import warnings

    from .._validation import RiskControlWarning

    warnings.warn(message, RiskControlWarning, stacklevel=3)
