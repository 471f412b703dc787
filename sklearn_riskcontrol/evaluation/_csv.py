"""Reading and validating CSV tables, with messages a person can act on.

The command line (through :mod:`sklearn_riskcontrol.cli._io`) and the long-table reader
:func:`sklearn_riskcontrol.evaluation.read_long_table` read every CSV file through
:func:`read_table`, so that every error names the file, the column and the row, in one
convention: **row k** is the k-th data row counted from 1, which is **line k + 1 of the file**
when the file has a header line (line k without one). Cells are read as text, so a non-numeric
cell is reported with its text (not as NaN), duplicate column names are seen in the raw header
(pandas would silently rename them ``name.1``) and tables are written back exactly as they were
read.
"""

import csv
import os

import numpy as np

__all__ = ["Table", "read_table", "check_unique", "all_numbers"]


def _quoted(names, limit=12):
    """``'a', 'b', ...`` for a message, cut after ``limit`` names."""
    shown = ", ".join(repr(str(n)) for n in names[:limit])
    return shown + (f", ... ({len(names)} in all)" if len(names) > limit else "")


class Table:
    """Text cells of a CSV file, with the file's name and header for error messages.

    Parameters
    ----------
    path : str
        File name, as given on the command line.
    columns : list of str
        Column names (``"1"``, ``"2"``, ... when the file has no header line).
    cells : ndarray of str, shape (n_rows, n_columns)
        Cell text with surrounding spaces removed; ``""`` is an empty cell.
    header : bool
        Whether the file's first line names the columns.

    Examples
    --------
    >>> import numpy as np
    >>> t = Table("losses.csv", ["loss"], np.array([["0.5"], ["abc"]], dtype=object), header=True)
    >>> t.where(1, "loss")
    "losses.csv, column 'loss', row 2 (line 3 of the file, counting the header)"
    >>> t.numbers("loss", what="losses", low=0, high=1)
    Traceback (most recent call last):
    ...
    ValueError: losses.csv, column 'loss', row 2 (line 3 of the file, counting the header): 'abc' is not a number; losses must lie in [0, 1].
    """

    def __init__(self, path, columns, cells, header):
        self.path, self.columns, self.cells, self.header = str(path), list(columns), cells, header
        self._position = {name: j for j, name in enumerate(self.columns)}  # names are unique

    @property
    def n_rows(self):
        return self.cells.shape[0]

    def row(self, row, label=None):
        """``row k (line k + 1 of the file, ...)`` for the 0-based data row ``row``."""
        line = f"line {row + 1 + self.header} of the file"
        line += ", counting the header" if self.header else ""
        return f"row {row + 1} ({label + ', ' if label else ''}{line})"

    def where(self, row, column, label=None):
        """File, column and row of a cell (0-based ``row``), for a message."""
        return f"{self.path}, column {column!r}, {self.row(row, label)}"

    def index(self, name):
        """Position of the column ``name``; a missing column lists the columns present."""
        if name not in self._position:
            raise ValueError(
                f"{self.path} has no column {name!r}; its columns are: {_quoted(self.columns)}. "
                "Pass the right column name, or fix the header line."
            )
        return self._position[name]

    def text(self, name):
        """Cell text of the column ``name``."""
        return self.cells[:, self.index(name)]

    def frame(self):
        """The table as a pandas DataFrame of text, to write it back unchanged."""
        import pandas as pd

        return pd.DataFrame(self.cells, columns=self.columns)

    def numbers(self, columns, *, what, low=-np.inf, high=np.inf, positive=False,
                allow_empty=False, hint=None, row_labels=None):
        """Numbers of one column (1-d) or of a list of columns (2-d, rows x columns).

        Every cell must be a finite number in ``[low, high]`` (``> 0`` with ``positive``);
        with ``allow_empty`` an empty cell becomes NaN. The first bad cell in reading order
        raises a ``ValueError`` naming the file, column, row (and ``row_labels[row]``), the
        cell's text and what ``what`` must be (plus ``hint``).
        """
        single = isinstance(columns, str)
        names = [columns] if single else list(columns)
        cells = self.cells[:, [self.index(c) for c in names]]
        empty = cells == ""
        values, text_ok = _to_float(np.where(empty, "nan", cells))
        with np.errstate(invalid="ignore"):
            bad = ~text_ok | ~np.isfinite(values) | (values < low) | (values > high)
            if positive:
                bad |= values <= 0
        if allow_empty:
            bad &= ~empty
        if bad.any():
            i, j = (int(k) for k in np.argwhere(bad)[0])
            label = None if row_labels is None else row_labels[i]
            where, cell = self.where(i, names[j], label), cells[i, j]
            if empty[i, j]:
                problem = f"{where} is empty"
            elif not text_ok[i, j]:
                problem = f"{where}: {cell!r} is not a number"
            elif not np.isfinite(values[i, j]):
                problem = f"{where}: {cell!r} is not a finite number"
            else:
                problem = f"{where}: {cell!r} is out of range"
            rule = _rule(low, high, positive)
            raise ValueError(f"{problem}; {what} must {rule}{'; ' + hint if hint else ''}.")
        return values[:, 0] if single else values


def _rule(low, high, positive):
    if positive:
        return "be numbers > 0"
    if low > -np.inf and high < np.inf:
        return f"lie in [{low:g}, {high:g}]"
    return "be finite numbers"


def _to_float(cells):
    """Float values of text cells and a mask of the cells that are numbers at all."""
    try:
        return cells.astype(float), np.ones(cells.shape, dtype=bool)
    except ValueError:  # some cell is not a number: find which, cell by cell (error path only)
        parse = np.frompyfunc(_float_or_none, 1, 1)(cells)
        ok = np.array([v is not None for v in parse.ravel()]).reshape(cells.shape)
        return np.where(ok, parse, np.nan).astype(float), ok


def all_numbers(cells):
    """Whether every non-empty text cell is a number (empty cells are missing values).

    Examples
    --------
    >>> import numpy as np
    >>> all_numbers(np.array(["1", "", "0.5"], dtype=object)), all_numbers(np.array(["a", "1"]))
    (True, False)
    """
    return bool(_to_float(cells[cells != ""].astype(object))[1].all())


def _float_or_none(text):
    try:
        return float(text)
    except ValueError:
        return None


def read_table(path, *, header=True, rows="row"):
    """Read a CSV file as text cells, rejecting empty files and duplicate column names.

    Parameters
    ----------
    path : str
        CSV file name.
    header : bool, default=True
        Whether the first line names the columns.
    rows : str, default="row"
        What one data row is (e.g. ``"calibration point"``), for the message on an empty file.

    Returns
    -------
    table : Table

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> _ = open(path, "w").write("model,q1,q1\\na,1,0\\n")
    >>> read_table(path)
    Traceback (most recent call last):
    ...
    ValueError: ...t.csv: the header names the column 'q1' twice (columns 2 and 3); rename one so that every column name is unique.
    """
    # The csv module keeps each cell's exact text and is faster than pandas on text cells.
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:  # -sig: drop Excel's BOM
            lines = [[cell.strip() for cell in line] for line in csv.reader(f)]
    except csv.Error as exc:
        raise ValueError(f"{path} is not a valid CSV table: {exc}.") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text ({exc.reason}); save it as UTF-8.") from None
    # Blank lines at the end are not rows; blank lines inside stay rows so line numbers hold.
    while lines and not any(lines[-1]):
        lines.pop()
    if not lines:
        size = "0 bytes" if os.path.getsize(path) == 0 else "only blank lines"
        raise ValueError(
            f"{path} is empty ({size}): it needs {'a header line and ' if header else ''}one "
            f"line per {rows}."
        )
    width = len(lines[0])
    for k, line in enumerate(lines):
        if len(line) > width and any(line[width:]):
            raise ValueError(
                f"{path} is not a valid CSV table: line {k + 1} has {len(line)} fields but "
                f"line 1 has {width}; quote cells that contain a comma."
            )
    cells = np.empty((len(lines), width), dtype=object)
    cells[:] = [line[:width] + [""] * (width - len(line)) for line in lines]  # pad short lines
    if header:
        columns, cells = list(cells[0]), cells[1:]
        _check_unique_columns(path, columns)
    else:
        columns = [str(j + 1) for j in range(width)]
    if cells.shape[0] == 0:
        raise ValueError(
            f"{path} has {'a header but ' if header else ''}no data rows: it needs one line "
            f"per {rows}."
        )
    return Table(path, columns, cells, header)


def _first_repeat(names):
    """``(i, j)``, the positions of the first name that occurs again, or None."""
    seen = {}
    for j, name in enumerate(names):
        if name in seen:
            return seen[name], j
        seen[name] = j
    return None


def _check_unique_columns(path, columns):
    repeat = _first_repeat(columns)
    if repeat is not None:
        i, j = repeat
        raise ValueError(
            f"{path}: the header names the column {columns[j]!r} twice (columns {i + 1} "
            f"and {j + 1}); rename one so that every column name is unique."
        )


def check_unique(table, names, what):
    """Reject a repeated name among ``names`` (one per data row of ``table``), e.g. model names.

    Examples
    --------
    >>> import numpy as np
    >>> t = Table("s.csv", ["model", "q1"], np.array([["a", "1"], ["a", "0"]], dtype=object),
    ...           header=True)
    >>> check_unique(t, ["a", "a"], "model name")
    Traceback (most recent call last):
    ...
    ValueError: s.csv: the model name 'a' appears twice, in row 1 (line 2 of the file, counting the header) and row 2 (line 3 of the file, counting the header); model names must be unique.
    """
    repeat = _first_repeat(names)
    if repeat is not None:
        i, j = repeat
        raise ValueError(
            f"{table.path}: the {what} {names[j]!r} appears twice, in {table.row(i)} "
            f"and {table.row(j)}; {what}s must be unique."
        )
