"""The documentation's own Sphinx extension (``docs/conf.py`` loads it).

- :mod:`.api_pages`: the reference's page of every public module;
- :mod:`.public_names`: the ``public-name`` directive, the entry of a name at
  the path users import it by (``trajopt.Problem``);
- :mod:`.coverage`: every public object has a docstring and an entry in the
  API reference (a warning per gap, so ``-W`` fails the build);
- :mod:`.numpy_sections`: napoleon for docstrings, not for constants' comments;
- :mod:`.xref`: references to re-exported, imported and other libraries' names;
- :mod:`.exports_table`: the ``package-exports`` directive of the package pages;
- :mod:`.scraper`: the sphinx-gallery scraper of the files a tutorial writes.
"""
from __future__ import annotations

from .api_pages import write_api_pages
from .coverage import check_api_coverage
from .exports_table import PackageExports
from .public_names import PublicName, register_aliases
from .numpy_sections import add_napoleon_settings, numpy_sections
from .xref import resolve_missing_reference


def setup(app):
    """Register the directive and the event handlers."""
    add_napoleon_settings(app)
    app.connect("builder-inited", write_api_pages)
    app.connect("autodoc-process-docstring", numpy_sections)
    app.add_directive("package-exports", PackageExports)
    app.add_directive("public-name", PublicName)
    app.connect("env-updated", register_aliases)
    app.connect("missing-reference", resolve_missing_reference)
    app.connect("env-check-consistency", check_api_coverage)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
