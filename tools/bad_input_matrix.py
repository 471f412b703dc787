"""Run every cell of the bad-input matrix and write doc/bad_inputs.rst.

Usage: ``python tools/bad_input_matrix.py [--check]``. The table lives in
``tests/package/test_bad_inputs.py``; ``--check`` exits 1 if the committed page is out of date.
"""

import importlib.util
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load_table_module():
    path = ROOT / "tests" / "package" / "test_bad_inputs.py"
    spec = importlib.util.spec_from_file_location("test_bad_inputs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv):
    import matplotlib

    matplotlib.use("Agg")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = load_table_module()
        text = module.render_rst()
    if "FAILS" in text:
        print("some cells fail: run pytest tests/package/test_bad_inputs.py", file=sys.stderr)
    if "--check" in argv:
        same = module.DOC_PATH.read_text() == text
        print("up to date" if same else "doc/bad_inputs.rst is out of date")
        return 0 if same else 1
    module.DOC_PATH.write_text(text)
    print(f"wrote {module.DOC_PATH.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
