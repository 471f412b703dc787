"""Check that a built documentation page shows typeset math in a headless browser, offline;
or (``--report``) that an HTML report of the command line renders.

Renders the page with headless Chromium (Debian's ``chromium`` package), with every host name
made unresolvable so that nothing can come from a CDN, dumps the DOM after scripts ran and checks
that MathJax typeset every formula: each ``math`` element of the page holds an ``mjx-container``,
no formula failed to parse (``mjx-merror``) and no raw TeX delimiter is left in the text.

Usage (after ``python -m sphinx -W -b html doc doc/_build/html``)::

    python tools/check_docs_render.py [PAGE.html] [--chromium PATH]

With ``--report REPORT.html --expect TEXT`` (a report written by ``python -m sklearn_riskcontrol
... --report REPORT.html``) the same rendering checks instead that the page shows its decision
(the element ``#decision`` holds ``TEXT``) and its intervals (an ``svg``), runs no script and
refers to nothing outside itself (no ``src``/``href`` but ``data:`` or ``#`` links).

Exits 0 when the math is typeset (the report renders), 1 when it is not, 2 when the page or
Chromium is missing.
"""

import argparse
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_PAGE = ROOT / "doc" / "_build" / "html" / "user_guide" / "selective.html"
TEX_DELIMITERS = ("\\(", "\\)", "\\[", "\\]")


class _MathCensus(HTMLParser):
    """Count math elements, MathJax containers and errors; keep the visible text."""

    def __init__(self):
        super().__init__()
        self.math = self.containers = self.errors = 0
        self.text = []
        self._in_code = 0  # inside <script>/<style>, whose text is not shown

    def handle_starttag(self, tag, attrs):
        classes = (dict(attrs).get("class") or "").split()
        self.math += "math" in classes
        self.containers += tag == "mjx-container"
        self.errors += tag == "mjx-merror"
        self._in_code += tag in ("script", "style")

    def handle_endtag(self, tag):
        self._in_code -= tag in ("script", "style")

    def handle_data(self, data):
        if not self._in_code:
            self.text.append(data)


def check_typeset(dom):
    r"""Return the problems found in a rendered DOM (an empty list when all math is typeset).

    Parameters
    ----------
    dom : str
        HTML of the page after its scripts ran (Chromium's ``--dump-dom``).

    Returns
    -------
    list of str
        One sentence per problem.

    Examples
    --------
    >>> check_typeset('<span class="math"><mjx-container class="MathJax"></mjx-container></span>')
    []
    >>> for problem in check_typeset('<span class="math">\\(x\\)</span>'):
    ...     print(problem)
    no formula was typeset: 1 math elements, 0 mjx-container elements (MathJax did not run)
    1 lines still show raw TeX, e.g. '\\(x\\)'
    >>> check_typeset("<p>no math here</p>")
    ['the page has no math element: pick a page with formulas']
    """
    census = _MathCensus()
    census.feed(dom)
    if census.math == 0:
        return ["the page has no math element: pick a page with formulas"]
    problems = []
    if census.containers < census.math:
        problems.append(
            f"{'no' if census.containers == 0 else 'not every'} formula was typeset: "
            f"{census.math} math elements, {census.containers} mjx-container elements"
            + (" (MathJax did not run)" if census.containers == 0 else "")
        )
    if census.errors:
        problems.append(f"{census.errors} formulas failed to parse (mjx-merror)")
    raw = [line.strip() for line in "".join(census.text).splitlines()
           if any(d in line for d in TEX_DELIMITERS)]
    if raw:
        problems.append(f"{len(raw)} lines still show raw TeX, e.g. {raw[0][:80]!r}")
    return problems


class _ReportCensus(HTMLParser):
    """The decision's text, the scripts, the svg elements and every outside reference."""

    def __init__(self):
        super().__init__()
        self.decision, self.scripts, self.svgs, self.outside = [], 0, 0, []
        self._in_decision = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.scripts += tag == "script"
        self.svgs += tag == "svg"
        if self._in_decision or attrs.get("id") == "decision":
            self._in_decision += 1
        for name in ("src", "href", "srcset", "action", "formaction", "poster", "data"):
            ref = (attrs.get(name) or "").strip()
            if ref and not ref.startswith(("data:", "#")):
                self.outside.append(f"<{tag} {name}={ref!r}>")
        if "url(" in (attrs.get("style") or ""):
            self.outside.append(f"<{tag} style=...url(...)>")

    def handle_endtag(self, tag):
        self._in_decision = max(0, self._in_decision - 1)

    def handle_data(self, data):
        if self._in_decision:
            self.decision.append(data)


def check_report(dom, expect):
    """Return the problems of a rendered report (an empty list when it renders as it should).

    Parameters
    ----------
    dom : str
        The report as Chromium shows it (``--dump-dom`` after rendering).
    expect : str
        Text the decision (the element with ``id="decision"``) must contain.

    Returns
    -------
    list of str
        The problems: a wrong decision, no drawing, a script, an outside reference.

    Examples
    --------
    >>> check_report("<p id='decision'>certified</p><svg></svg>", "certified")
    []
    >>> for problem in check_report("<p id='decision'>x</p><img src='http://a/b.png'>", "ok"):
    ...     print(problem)
    the decision reads 'x', not 'ok'
    no interval was drawn (no svg element)
    the page refers to 1 outside resources, e.g. <img src='http://a/b.png'>
    """
    census = _ReportCensus()
    census.feed(dom)
    problems = []
    decision = " ".join("".join(census.decision).split())
    if expect not in decision:
        problems.append(f"the decision reads {decision!r}, not {expect!r}")
    if census.svgs == 0:
        problems.append("no interval was drawn (no svg element)")
    if census.scripts:
        problems.append(f"the page has {census.scripts} script elements")
    if census.outside:
        problems.append(f"the page refers to {len(census.outside)} outside resources, e.g. "
                        f"{census.outside[0]}")
    return problems


def render(page, chromium, budget_ms=10000, timeout=120):
    """Return the DOM of ``page`` after headless Chromium ran its scripts, with no network."""
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", f"--user-data-dir={profile}",
             # No host name resolves: a script or font from a CDN cannot load.
             "--host-resolver-rules=MAP * ~NOTFOUND",
             f"--virtual-time-budget={budget_ms}", "--dump-dom", page.resolve().as_uri()],
            capture_output=True, text=True, timeout=timeout,
        )
    if proc.returncode != 0 or not proc.stdout.strip():
        tail = "\n".join(proc.stderr.splitlines()[-20:])
        raise RuntimeError(f"{chromium} exited {proc.returncode} rendering {page}:\n{tail}")
    return proc.stdout


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("page", nargs="?", type=Path, default=DEFAULT_PAGE,
                        help="built HTML page with formulas (default: %(default)s)")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium",
                        help="Chromium executable (default: %(default)s)")
    parser.add_argument("--report", type=Path, default=None, metavar="REPORT.html",
                        help="check this command-line report instead of a docs page")
    parser.add_argument("--expect", default="",
                        help="with --report: text the report's decision must contain")
    args = parser.parse_args(argv)
    if args.report is not None:  # a command-line report: its decision, intervals, no network
        page, missing = args.report, ("write it with `python -m sklearn_riskcontrol ... "
                                      "--report FILE.html`")
        check = lambda dom: check_report(dom, args.expect)  # noqa: E731
        budget, fail = 2000, f"the report {args.report} does not render as it should"
        ok = f"the report {args.report} renders offline, with its decision and intervals"
    else:
        page, missing = args.page, ("build the docs first with "
                                    "`python -m sphinx -W -b html doc doc/_build/html`")
        check, budget = check_typeset, 10000
        fail = f"math in {args.page} does not render offline"
        ok = f"every formula in {args.page} was typeset by MathJax, offline"
    if not page.is_file():
        print(f"error: {page} does not exist; {missing}", file=sys.stderr)
        return 2
    if not Path(args.chromium).is_file():
        print(f"error: Chromium not found at {args.chromium}; install it "
              "(`apt-get install chromium`) or pass --chromium PATH", file=sys.stderr)
        return 2
    try:
        problems = check(render(page, args.chromium, budget_ms=budget))
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        problems = [str(exc)]
    if problems:
        print(f"FAIL: {fail}:", file=sys.stderr)
        for problem in problems:
            print(f"  - {problem}", file=sys.stderr)
        return 1
    print(f"OK: {ok}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
