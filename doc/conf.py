"""Sphinx configuration for sklearn-riskcontrol.

Build (from the repository root, offline, warnings are errors):

    python -m sphinx -W -b html doc doc/_build/html

Nothing is fetched at build time (no intersphinx inventories, no remote images or fonts) nor when a
page is read: MathJax is copied into the site by ``sphinx-mathjax-offline`` (docs extra), so
formulas render without a network (checked by tools/check_docs_render.py and
tests/package/test_docs_offline.py).
"""

import os
from datetime import date

# Examples are executed during the build: never open a window.
os.environ.setdefault("MPLBACKEND", "Agg")

import sklearn_riskcontrol  # noqa: E402  (installed, e.g. `pip install -e ".[docs]"`)

# -- Project ----------------------------------------------------------------------------------
project = "sklearn-riskcontrol"
author = "sklearn-riskcontrol developers"
copyright = f"{date.today().year}, {author}"
release = sklearn_riskcontrol.__version__
version = ".".join(release.split(".")[:2])

# -- General ----------------------------------------------------------------------------------
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    # Copies MathJax 3 into _static/mathjax and points mathjax_path there: no CDN.
    "sphinx-mathjax-offline",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

root_doc = "index"
exclude_patterns = [
    "_build",
    "Thumbs.db",
    ".DS_Store",
    "**.ipynb_checkpoints",
    "**sg_execution_times.rst",  # left over from builds before write_computation_times=False
]
templates_path = ["_templates"]  # autosummary/class.rst, autosummary/function.rst
default_role = "literal"  # single backticks render as code, never as unresolved references

# autodoc / autosummary: stub pages are written to doc/generated/ (see api.rst).
autosummary_generate = True
# The one-line summaries in the API tables stop at the first ". "; our docstrings cite the papers
# ("paper eq. 4.1", "Sec. 5.2"), so teach autosummary these abbreviations too.
import sphinx.ext.autosummary as _autosummary  # noqa: E402

_autosummary.WELL_KNOWN_ABBREVIATIONS = tuple(
    sorted(
        set(_autosummary.WELL_KNOWN_ABBREVIATIONS)
        | {"eq.", "eqs.", "Eq.", "Sec.", "Prop.", "Thm.", "Alg.", "App.", "Cor.", "Def."}
    )
)
autosummary_imported_members = False
autodoc_typehints = "none"

# numpydoc: do not generate member tables for classes (they duplicate the autosummary stubs and
# produce "toctree contains reference to nonexisting document" warnings for attributes).
numpydoc_show_class_members = False
numpydoc_show_inherited_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# -- Examples gallery (every file named plot_*.py is executed) --------------------------------
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": "plot_",
    "ignore_pattern": r"__init__\.py",
    "image_scrapers": ("matplotlib",),
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "download_all_examples": False,
    # The timing pages load jQuery and DataTables from CDNs: the site must work offline.
    "write_computation_times": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    # Link functions used in examples to their API pages; no remote inventories are fetched.
    "doc_module": ("sklearn_riskcontrol",),
    "reference_url": {"sklearn_riskcontrol": None},
    "backreferences_dir": "generated/backreferences",
}

# -- HTML -------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"{project} {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_prev_next": True,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"index": [], "install": []}
html_static_path = []
html_show_sourcelink = False


# -- Hooks ------------------------------------------------------------------------------------
def _skip_sklearn_routing_members(app, what, name, obj, skip, options):
    """Leave members inherited from scikit-learn out of our class pages.

    ``get_metadata_routing``, the ``set_*_request`` methods and mixin methods such as
    ``ClassifierMixin.score`` are documented by scikit-learn; their docstrings cross-reference
    scikit-learn's own user guide and glossary, which do not exist here (unresolved references
    under -W).
    """
    if name == "get_metadata_routing" or (name.startswith("set_") and name.endswith("_request")):
        return True
    if (getattr(obj, "__module__", None) or "").startswith("sklearn."):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_sklearn_routing_members)
