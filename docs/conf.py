"""Sphinx configuration of the trajopt-toolkit documentation.

Build (from the repository root, with the ``docs`` extra installed)::

    python -m sphinx -W -b html docs docs/_build/html

``TRAJOPT_DOCS_QUICK=1`` runs the short version of each tutorial (CI does);
without it they run in full.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent))  # the project's packages, as the tutorials import them
sys.path.insert(0, str(DOCS / "_ext"))
os.environ.setdefault("MPLBACKEND", "Agg")

from trajopt import __version__  # noqa: E402
from trajopt_docs.scraper import PAGES_DIR  # noqa: E402

project = "trajopt-toolkit"
author = "the trajopt-toolkit developers"
copyright = "trajopt-toolkit developers"
release = version = __version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx_gallery.gen_gallery",
    "sphinxarg.ext",
    "trajopt_docs",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
# the galleries' sources, and the index of the one-page getting-started gallery (the page itself is in the toctree)
exclude_patterns = ["_build", str(PAGES_DIR), "tutorials", "getting_started", "auto_getting_started/index.rst"]
templates_path = []

# every reference must resolve (trajopt_docs.xref renders other libraries' names as text)
nitpicky = True
# quotes and ellipses only: "--robot" in the command-line reference stays two hyphens
smartquotes_action = "qe"

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

autodoc_default_options = {"members": True, "undoc-members": True, "show-inheritance": True, "member-order": "bysource"}
autodoc_typehints = "description"
autodoc_typehints_format = "short"
autodoc_preserve_defaults = True
autodoc_mock_imports: list[str] = []
napoleon_google_docstring = False
napoleon_numpy_docstring = True

sphinx_gallery_conf = {
    "examples_dirs": ["getting_started", "tutorials"],
    "gallery_dirs": ["auto_getting_started", "auto_tutorials"],
    "filename_pattern": r".*\.py$",
    "within_subsection_order": "FileNameSortKey",
    "image_scrapers": ("trajopt_docs.scraper.output_files", "matplotlib"),
    "abort_on_example_error": True,
    "remove_config_comments": True,
    "download_all_examples": False,
    "write_computation_times": False,
    "show_signature": False,
    "capture_repr": (),
}
(DOCS / PAGES_DIR).mkdir(exist_ok=True)
html_extra_path = [str(PAGES_DIR)]

html_theme = "furo"
html_title = f"trajopt-toolkit {release}"
html_static_path = ["_static"]
html_css_files = ["trajopt.css"]
html_show_sourcelink = True
