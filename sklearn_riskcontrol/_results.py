"""Results as data: strict JSON values, ``to_dict`` / ``to_frame`` / ``to_html``, HTML reports.

One home for what turns a result into something a machine or a person reads:

* :func:`jsonable` turns NumPy values, tuples and nested results into plain JSON values; NaN and
  infinities become ``None`` and each is listed, with the reason, in a ``nulls`` list (strict JSON
  has neither);
* :class:`ResultMixin` gives the result dataclasses of the method packages ``to_dict()``,
  ``to_html()`` and, when the class names the per-row fields in ``_frame_columns``,
  ``to_frame()``;
* :func:`render_report` writes a report document (the command line's JSON object, or the one a
  result's ``to_html`` makes) as one self-contained HTML page: inline CSS, intervals drawn as
  inline SVG, no script and nothing loaded from the network; every string is escaped.
"""

import dataclasses
import html
import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["jsonable", "ResultMixin", "render_report"]

# Why a number is missing from the JSON, by its value, when the caller gives no reason.
_NULL_REASONS = {
    "nan": "not a number: not computed or not applicable (e.g. a pair that was not tested)",
    "inf": "+infinity: not representable in strict JSON",
    "-inf": "-infinity: not representable in strict JSON",
}


def _null_kind(x):
    return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")


def jsonable(value, nulls=None, path="", reasons=None):
    """Return ``value`` as plain JSON values (dict, list, str, int, float, bool, None).

    Parameters
    ----------
    value : object
        Numbers, strings, booleans, ``None``, NumPy scalars and arrays, lists, tuples, dicts
        and results with ``to_dict``.
    nulls : list or None
        When given, each NaN or infinity replaced by ``None`` is appended to it as
        ``{"path": ..., "value": "nan" | "inf" | "-inf", "reason": ...}``.
    path : str
        JSON path of ``value`` (used in ``nulls``).
    reasons : dict or None
        ``{key: reason}``: the reason recorded for a non-finite number under that key (the
        last key of its path); other keys get a generic reason.

    Returns
    -------
    object
        A value :func:`json.dumps` writes with ``allow_nan=False``.

    Examples
    --------
    >>> import json
    >>> import numpy as np
    >>> nulls = []
    >>> out = jsonable({"p": np.array([0.5, np.nan]), "ok": np.bool_(True)}, nulls)
    >>> json.dumps(out, allow_nan=False)
    '{"p": [0.5, null], "ok": true}'
    >>> nulls[0]["path"], nulls[0]["value"]
    ('p[1]', 'nan')
    """
    reasons = reasons or {}

    def walk(x, where, key):
        if hasattr(x, "to_dict") and not isinstance(x, (dict, np.ndarray)):
            x = x.to_dict()
        if isinstance(x, dict):
            return {str(k): walk(v, f"{where}.{k}" if where else str(k), str(k))
                    for k, v in x.items()}
        if isinstance(x, np.ndarray):
            x = x.tolist()
        if isinstance(x, (list, tuple)):
            return [walk(v, f"{where}[{i}]", key) for i, v in enumerate(x)]
        if isinstance(x, np.generic):
            x = x.item()
        if isinstance(x, float) and not math.isfinite(x):
            kind = _null_kind(x)
            if nulls is not None:
                nulls.append({"path": where, "value": kind,
                              "reason": reasons.get(key, _NULL_REASONS[kind])})
            return None
        if x is None or isinstance(x, (bool, int, float, str)):
            return x
        return str(x)

    return walk(value, path, path.rsplit(".", 1)[-1])


class ResultMixin:
    """``to_dict``, ``to_frame`` and ``to_html`` of a result dataclass, from its fields.

    A class lists the fields that hold one value per row (candidate, model, grid point) in
    ``_frame_columns``; square matrices (model x model) among them become one row per ordered
    pair ``(a, b)``, ``a != b``. Without ``_frame_columns`` the result is not tabular and
    ``to_frame`` raises ``TypeError``.
    """

    _frame_columns = ()

    def to_dict(self) -> dict:
        """The result as a JSON-serialisable dict (strict JSON: NaN and infinities are None).

        Returns
        -------
        dict
            ``{"type": class name, <field>: value, ..., "nulls": [...]}``: every field of the
            result, arrays as lists, nested results as dicts; ``nulls`` lists each NaN or
            infinity written as ``None``, with its path and reason (an empty list when none).

        Examples
        --------
        >>> import json
        >>> import numpy as np
        >>> from sklearn_riskcontrol.autoeval import rautoeval_test
        >>> res = rautoeval_test(np.zeros(40), alpha=0.3, delta=0.1, method="eval")
        >>> d = res.to_dict()
        >>> d["type"], d["certified"], d["alpha"]
        ('RAutoEvalResult', True, 0.3)
        >>> _ = json.dumps(d, allow_nan=False)
        """
        nulls = []
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out = {"type": type(self).__name__}
        out.update(jsonable(fields, nulls))
        out["nulls"] = nulls
        return out

    def to_frame(self) -> "pd.DataFrame":
        """The per-row fields of the result as a :class:`pandas.DataFrame`.

        Returns
        -------
        pandas.DataFrame
            One row per candidate / model / grid point (per ordered pair of models for
            model x model matrices, with the columns ``a`` and ``b``), one column per field.

        Raises
        ------
        TypeError
            When the result has no per-row fields (use :meth:`to_dict`).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn_riskcontrol.autoeval import rautoeval_select
        >>> H = np.zeros((2, 40)); H[1, :10] = 1
        >>> sel = rautoeval_select(H, alpha=0.1, delta=0.1, method="eval")
        >>> sel.to_frame()[["certified", "tested"]]
           certified  tested
        0       True    True
        1      False    True
        """
        import pandas as pd

        if not self._frame_columns:
            raise TypeError(f"{type(self).__name__} is not tabular (no per-row fields); use "
                            "to_dict() instead.")
        columns = {name: np.asarray(getattr(self, name)) for name in self._frame_columns
                   if getattr(self, name) is not None}
        if any(c.ndim == 2 for c in columns.values()):
            k = next(c.shape[0] for c in columns.values() if c.ndim == 2)
            a, b = (x.ravel() for x in np.indices((k, k)))
            off = a != b
            out = {"a": a[off], "b": b[off]}
            for name, c in columns.items():
                if c.ndim == 2:
                    out[name] = c.ravel()[off]
                else:  # one value per model: model a's and model b's
                    out[f"{name}_a"], out[f"{name}_b"] = c[a[off]], c[b[off]]
            return pd.DataFrame(out)
        return pd.DataFrame(columns)

    def _report_document(self):
        """The report document of :func:`render_report` (see :meth:`to_html`)."""
        d = self.to_dict()
        scalars = {k: v for k, v in d.items() if not isinstance(v, (list, dict))
                   and k != "type"}
        rows = []
        if self._frame_columns:
            frame = self.to_frame()
            rows = jsonable(frame.to_dict(orient="records"))
        intervals = []
        if {"low", "high"} <= set(d):
            intervals.append({"name": d["type"], "low": d["low"], "high": d["high"]})
        return {"command": d["type"], "decision": str(self),
                "guarantee": _first_paragraph(type(self).__doc__),
                "alpha": scalars.get("alpha"), "delta": scalars.get("delta"),
                "facts": scalars, "rows": rows, "intervals": intervals}

    def to_html(self) -> str:
        """The result as one self-contained HTML page (inline CSS and SVG, no script).

        Returns
        -------
        str
            The page: the result's summary, the class's statement of what it guarantees, its
            fields, its per-row table and its interval drawn on [0, 1] (when it has one).
            Every string is escaped.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn_riskcontrol.autoeval import rautoeval_confidence_interval
        >>> page = rautoeval_confidence_interval(np.zeros(40), delta=0.1, method="eval").to_html()
        >>> page.startswith("<!DOCTYPE html>"), "<svg" in page, "<script" in page
        (True, True, False)
        """
        return render_report(self._report_document())


def _first_paragraph(doc):
    """The first paragraph of a docstring after its summary line (what the class guarantees),
    or the summary line alone."""
    parts = [" ".join(p.split()) for p in (doc or "").strip().split("\n\n")]
    keep = [p for p in parts[1:2] if p and not p.endswith("---")]
    return " ".join(parts[:1] + keep)


# ------------------------------------------------------------------------------------- the page
_CSS = """
body{font:15px/1.45 system-ui,sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.6em}
.decision{font-size:1.15em;padding:.6em .8em;border-radius:6px;background:#eef}
.pass{background:#e3f6e3;border-left:6px solid #2a2}
.fail{background:#fbe9e7;border-left:6px solid #c33}
.guarantee{padding:.5em .8em;background:#f6f6f6;border-left:4px solid #888}
table{border-collapse:collapse;font-size:.92em;margin:.5em 0}
td,th{border:1px solid #ccc;padding:.25em .5em;text-align:left}th{background:#f0f0f0}
.muted{color:#666;font-size:.9em}svg text{font:12px system-ui,sans-serif}
"""


def _cell(v):
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, dict) and {"low", "high"} <= set(v):
        level = "" if v.get("level") is None else f" ({v['level']:.0%})"
        return f"[{_cell(v['low'])}, {_cell(v['high'])}]{level}"
    if isinstance(v, (dict, list)):
        return ", ".join(f"{k}={_cell(x)}" for k, x in v.items()) if isinstance(v, dict) \
            else ", ".join(_cell(x) for x in v)
    return "" if v is None else str(v)


def _table(rows):
    """An HTML table of a list of dicts (columns: the union of their keys, in order)."""
    if not rows:
        return "<p class='muted'>(no rows)</p>"
    cols = list(dict.fromkeys(k for r in rows for k in r))
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_cell(r.get(c)))}</td>" for c in cols)
                   + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _svg(intervals, alpha=None, low=0.0, high=1.0, label="risk"):
    """Intervals as horizontal bars on [low, high], one line each, with alpha marked."""
    drawn = [iv for iv in intervals if iv.get("low") is not None and iv.get("high") is not None]
    if not drawn:
        return "<p class='muted'>(no interval to draw)</p>"
    lo = min([low] + [iv["low"] for iv in drawn])
    hi = max([high] + [iv["high"] for iv in drawn])
    left, width, step = 200, 520, 26
    height = step * len(drawn) + 40

    def x(v):
        return left + width * (v - lo) / ((hi - lo) or 1.0)

    parts = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{left + width + 60}' "
             f"height='{height}' role='img' aria-label='{html.escape(label)} intervals'>",
             f"<line x1='{left}' y1='{height - 25}' x2='{left + width}' y2='{height - 25}' "
             "stroke='#999'/>"]
    for t in np.linspace(lo, hi, 5):
        parts.append(f"<text x='{x(t):.1f}' y='{height - 8}' text-anchor='middle'>{t:.3g}</text>")
    if alpha is not None and lo <= alpha <= hi:
        parts.append(f"<line x1='{x(alpha):.1f}' y1='5' x2='{x(alpha):.1f}' "
                     f"y2='{height - 25}' stroke='#c33' stroke-dasharray='4 3'/>"
                     f"<text x='{x(alpha) + 4:.1f}' y='14' fill='#c33'>alpha</text>")
    for i, iv in enumerate(drawn):
        y = 20 + step * i
        name = html.escape(str(iv.get("name", "")))[:60]
        parts.append(f"<text x='{left - 8}' y='{y + 4}' text-anchor='end'>{name}</text>"
                     f"<line x1='{x(iv['low']):.1f}' y1='{y}' x2='{x(iv['high']):.1f}' "
                     f"y2='{y}' stroke='#246' stroke-width='6' stroke-linecap='round'/>")
        if iv.get("estimate") is not None:
            parts.append(f"<circle cx='{x(iv['estimate']):.1f}' cy='{y}' r='4' fill='#fa0'/>")
    parts.append("</svg>")
    return "".join(parts)


def render_report(doc):
    """One self-contained HTML page of a report document.

    Parameters
    ----------
    doc : dict
        Keys (all optional but ``decision``): ``command`` (title), ``decision`` (text),
        ``gate`` (``{"passed": bool, "rule": str}``), ``guarantee`` (text), ``alpha``,
        ``delta``, ``rows`` (list of dicts: the per-model table), ``intervals`` (list of
        ``{"name", "low", "high"[, "estimate"]}``), ``interval_scale`` (``{"low", "high",
        "label"}``, default [0, 1] "risk"), ``facts`` (dict), ``messages`` and ``warnings``
        (lists of text). The command line's ``--json`` object is such a document.

    Returns
    -------
    str
        The HTML page: no script, no external resource; every string of ``doc`` escaped.

    Examples
    --------
    >>> page = render_report({"command": "demo", "decision": "<b>certified</b>"})
    >>> "&lt;b&gt;certified&lt;/b&gt;" in page, "<b>certified" in page
    (True, False)
    """
    esc = html.escape
    gate = doc.get("gate") or {}
    passed = gate.get("passed")
    klass = "" if passed is None else (" pass" if passed else " fail")
    scale = doc.get("interval_scale") or {}
    out = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
           "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
           "style-src 'unsafe-inline'; img-src data:\">",
           f"<title>{esc(str(doc.get('command', 'report')))}</title><style>{_CSS}</style>"
           "</head><body>",
           f"<h1>sklearn-riskcontrol: {esc(str(doc.get('command', 'report')))}</h1>",
           f"<p class='decision{klass}' id='decision'>{esc(str(doc.get('decision', '')))}</p>"]
    if gate:
        out.append(f"<p><b>Gate:</b> {'passed' if passed else 'not passed'}: "
                   f"{esc(str(gate.get('rule', '')))}</p>")
    if doc.get("guarantee"):
        out.append(f"<h2>Guarantee</h2><p class='guarantee'>{esc(str(doc['guarantee']))}</p>")
    levels = {k: doc.get(k) for k in ("alpha", "delta", "labels_used")
              if doc.get(k) is not None}
    facts = dict(levels, **(doc.get("facts") or {}))
    if facts:
        out.append("<h2>Settings and totals</h2>" + _table([facts]))
    if doc.get("rows"):
        # long texts (forecasts, messages) go below the table, one line per row
        short = [{k: v for k, v in r.items() if not (isinstance(v, str) and len(v) > 60)}
                 for r in doc["rows"]]
        notes = [f"{r.get('name', '')}: {k}: {v}" for r in doc["rows"] for k, v in r.items()
                 if isinstance(v, str) and len(v) > 60]
        out.append("<h2>Per model</h2>" + _table(short))
        if notes:
            out.append("<ul>" + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    if doc.get("intervals"):
        out.append(f"<h2>Intervals ({esc(str(scale.get('label', 'risk')))})</h2>"
                   + _svg(doc["intervals"], doc.get("alpha"), scale.get("low", 0.0),
                          scale.get("high", 1.0), scale.get("label", "risk"))
                   + "<p class='muted'>Each bar is one realization (one draw of the data); the "
                   "guarantee above is about how often intervals computed this way miss.</p>")
    for title, key in (("Messages", "messages"), ("Warnings", "warnings")):
        if doc.get(key):
            out.append(f"<h2>{title}</h2><ul>"
                       + "".join(f"<li>{esc(str(m))}</li>" for m in doc[key]) + "</ul>")
    out.append("</body></html>")
    return "\n".join(out)
