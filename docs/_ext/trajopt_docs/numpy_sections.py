"""NumPy-style sections (``Parameters``, ``Returns``) in docstrings, through napoleon, except in constants' comments.

napoleon reads the first line of an attribute's or a constant's docstring
as ``type: description``; the project's ``#:`` comments are sentences
(``#: Leg roles in the order ...: FL, FR, HL, HR``), so those are left as
written and napoleon converts the docstrings of modules, classes and
functions only.
"""
from __future__ import annotations

from sphinx.ext.napoleon import Config, _process_docstring

#: Docstrings napoleon leaves alone.
PROSE_ONLY = ("attribute", "data", "property")


def numpy_sections(app, what, name, obj, options, lines) -> None:
    """``autodoc-process-docstring`` handler: napoleon's conversion unless ``what`` is in :data:`PROSE_ONLY`."""
    if what not in PROSE_ONLY:
        _process_docstring(app, what, name, obj, options, lines)


def add_napoleon_settings(app) -> None:
    """Register napoleon's configuration values, which :func:`numpy_sections` reads."""
    values = Config._config_values  # a dict before Sphinx 8.2, then (name, default, rebuild, types) tuples
    entries = values.items() if isinstance(values, dict) else ((v[0], v[1:]) for v in values)
    for name, (default, rebuild, *_types) in entries:
        app.add_config_value(name, default, rebuild)
