"""The built documentation works offline: no remote script, and MathJax typesets the formulas.

The checks on the built site run when ``doc/_build/html`` exists (after the README's docs
command; .ci/run runs this file after building); the render check also needs Debian's
``chromium``. The checker's own logic is tested on small DOMs without either.
"""

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "doc" / "_build" / "html"
TOOL = ROOT / "tools" / "check_docs_render.py"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
BUILD_HINT = "run `python -m sphinx -W -b html doc doc/_build/html`"

_spec = importlib.util.spec_from_file_location("check_docs_render", TOOL)
check_docs_render = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_docs_render)

# A <script> whose src is absolute (http:, https:) or protocol-relative (//host/...).
REMOTE_SCRIPT = re.compile(r"""<script\b[^>]*\bsrc=["']?((?:https?:)?//[^"'\s>]+)""", re.I)
SCRIPT_SRC = re.compile(r"""<script\b[^>]*\bsrc=["']?([^"'\s>]+)""", re.I)

needs_site = pytest.mark.skipif(not SITE.is_dir(), reason=f"docs not built: {BUILD_HINT}")


def _pages():
    return sorted(SITE.rglob("*.html"))


@needs_site
def test_no_built_page_loads_a_script_from_the_network():
    offenders = [
        f"{page.relative_to(SITE)}: {url}"
        for page in _pages()
        for url in REMOTE_SCRIPT.findall(page.read_text(encoding="utf-8"))
    ]
    assert not offenders, (
        "pages load scripts from the network (stale pages? rebuild from `rm -rf doc/_build`):\n"
        + "\n".join(offenders)
    )


@needs_site
def test_every_page_with_math_loads_a_mathjax_shipped_in_the_site():
    math_pages = [p for p in _pages() if 'class="math' in p.read_text(encoding="utf-8")]
    assert math_pages, "no built page has a formula: the math pages are missing from the site"
    for page in math_pages:
        sources = SCRIPT_SRC.findall(page.read_text(encoding="utf-8"))
        mathjax = [s for s in sources if "mathjax" in s.lower()]
        assert mathjax, f"{page.relative_to(SITE)} has formulas but loads no MathJax"
        for src in mathjax:
            assert (page.parent / src.split("?")[0]).resolve().is_file(), (
                f"{page.relative_to(SITE)} loads {src}, which is not in the built site"
            )


@needs_site
@pytest.mark.skipif(not Path(CHROMIUM).is_file(), reason="needs Debian's chromium package")
def test_math_is_typeset_in_headless_chromium_without_network():
    proc = subprocess.run([sys.executable, str(TOOL), "--chromium", CHROMIUM],
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_checker_accepts_typeset_math_and_reports_what_is_not():
    typeset = '<span class="math"><mjx-container class="MathJax"></mjx-container></span>'
    assert check_docs_render.check_typeset(typeset) == []
    half = typeset + '<div class="math">\\[x^2\\]</div><script>var s = "\\(";</script>'
    assert check_docs_render.check_typeset(half) == [
        "not every formula was typeset: 2 math elements, 1 mjx-container elements",
        "1 lines still show raw TeX, e.g. '\\\\[x^2\\\\]'",
    ]
    broken = '<span class="math"><mjx-container><mjx-merror></mjx-merror></mjx-container></span>'
    assert check_docs_render.check_typeset(broken) == ["1 formulas failed to parse (mjx-merror)"]
