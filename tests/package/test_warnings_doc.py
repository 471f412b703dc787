"""doc/warnings.rst quotes the messages the library really emits."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _source_text():
    # Join implicitly concatenated string literals ("abc "\n    f"def") so a message split over
    # source lines reads as one string, then fold white space.
    text = "\n".join(p.read_text() for p in (ROOT / "sklearn_riskcontrol").rglob("*.py"))
    text = re.sub(r"\"\s*\n\s*[rf]?\"", "", text)
    return " ".join(text.split())


def _documented_messages():
    rst = (ROOT / "doc" / "warnings.rst").read_text()
    for field in re.findall(r":Message: (.+?)\n:When:", rst, re.S):
        yield " ".join(field.replace("``", "").split())


@pytest.mark.parametrize("message", list(_documented_messages()), ids=lambda m: m[:40])
def test_documented_message_occurs_in_the_code(message):
    # The page shows the variable parts of a message as "..."; the code has f-string fields
    # there (class names, counts). Every quoted message must share a long literal run with the
    # code, so a message reworded in the code and not on the page (or made up) is caught.
    source = _source_text()
    fragments = [f.strip(" .,:;()[]") for f in re.split(r"\.\.\.|;", message)]
    fragments = [f for f in fragments if len(f) >= 20]
    assert fragments, message
    assert any(f in source for f in fragments), (
        f"doc/warnings.rst quotes a message the code does not emit: {message!r}"
    )


def test_the_page_documents_each_warning_call_site_family():
    rst = (ROOT / "doc" / "warnings.rst").read_text()
    n_documented = rst.count(":Message:")
    assert n_documented >= 16
