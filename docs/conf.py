"""Sphinx configuration of the reliquant documentation site (built from docs/).

Build: ``sphinx-build -W --keep-going -b html docs docs/_build/html`` (docs/development.md).
Pages are the markdown files of docs/ (MyST); the API reference (docs/api/) is generated from
the docstrings of every name in each package's ``__all__``; the examples gallery runs every
script of examples/ at build time and shows its output and figures.
"""

from __future__ import annotations

import inspect
import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
REPO = DOCS.parent
sys.path.insert(0, str(REPO / "src"))  # the checkout's package, installed or not
os.environ.setdefault("RELIQUANT_NO_PROGRESS", "1")  # no progress bars in executed examples
os.environ.setdefault("MPLBACKEND", "Agg")

project = "reliquant"
author = "the reliquant developers"
copyright = "the reliquant developers"  # noqa: A001 - Sphinx's name

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.napoleon",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "api/generated/*.examples", "auto_examples/*.ipynb"]

# MyST: `#anchor` links to headings (as on GitHub), $...$ left alone (the pages are plain
# GitHub markdown), every link to a page or heading checked at build time (-W).
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence"]

# API reference: one stub page per public name (docs/api/<package>.rst lists them).
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": False, "no-value": True}
napoleon_google_docstring = False  # the docstrings use numpy's sections (Parameters, ...)
napoleon_numpy_docstring = True
autodoc_typehints = "signature"
autodoc_member_order = "bysource"
add_module_names = False

# Examples gallery: every examples/*.py runs at build time (each in seconds on a CPU); a
# failing example fails the build.
sphinx_gallery_conf = {
    "examples_dirs": str(REPO / "examples"),
    "gallery_dirs": str(DOCS / "auto_examples"),
    "filename_pattern": r"/plot_",
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "matplotlib_animations": False,
    "show_memory": False,
    "line_numbers": False,
    "plot_gallery": "True",
}

html_theme = "pydata_sphinx_theme"
html_title = "reliquant"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_static_path: list[str] = []
html_show_sourcelink = False


def _modules_as_literal(lines: list[str]) -> None:
    """A package docstring's ``Modules`` section (a two-column plain-text table of its modules)
    rendered as it is written: a rubric and a literal block."""
    for i in range(len(lines) - 1):
        if lines[i].strip() == "Modules" and set(lines[i + 1].strip()) == {"-"}:
            end = i + 2
            while end < len(lines) and lines[end].strip():
                end += 1
            table = ["    " + line for line in lines[i + 2 : end]]
            lines[i:end] = [".. rubric:: Modules", "", "::", "", *table]
            return


def _process_docstring(app, what, name, obj, options, lines) -> None:  # noqa: ARG001
    if what == "module":
        _modules_as_literal(lines)
    elif what == "data" and obj is not None:
        # a constant without a docstring of its own: not its type's (dict's, int's) docstring
        inherited = inspect.cleandoc(type(obj).__doc__ or "")
        if "\n".join(lines).strip() == inherited.strip():
            lines[:] = [f"A constant: ``{type(obj).__name__}`` (see the module's description)."]


def setup(app) -> None:
    app.connect("autodoc-process-docstring", _process_docstring, priority=400)
