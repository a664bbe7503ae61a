"""``.. package-exports:: PACKAGE``: a table of the names a package exports, linked to their entries.

A user imports ``from trajopt import Problem``; the reference documents
``Problem`` as ``trajopt.Problem`` (:mod:`.public_names`), below the table on
the package's page. The table lists the package's public names with the first
line of each docstring (for a constant, of its ``#:`` comment) and links each
name to its entry at the public path.
"""
from __future__ import annotations

import importlib
import inspect

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.pycode import ModuleAnalyzer
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

from .packages import canonical, defined_as, definition, listed_names


def _summary(dotted: str, obj) -> str:
    """The first line of the docstring of ``obj`` (documented as ``dotted``), or of its ``#:`` comment."""
    if inspect.isclass(obj) or inspect.isroutine(obj):
        doc = inspect.getdoc(obj) or ""
    else:
        module, name = dotted.rsplit(".", 1)
        doc = "\n".join(ModuleAnalyzer.for_module(module).find_attr_docs().get(("", name), []))
    return doc.strip().split("\n", 1)[0] if doc.strip() else ""


class PackageExports(SphinxDirective):
    """The directive (module docstring); its one argument is the package's dotted name."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        package = importlib.import_module(self.arguments[0])
        names = [n for n in listed_names(package) if not n.startswith("_")]
        if not names:
            return []
        lines = [".. list-table::", "   :widths: 30 70", "   :class: package-exports", ""]
        for name in names:
            target = definition(package, name)
            public = f"{package.__name__}.{name}"
            lines.append(f"   * - :py:obj:`{name} <{public if public in defined_as() else canonical(target)}>`")
            lines.append(f"     - {_summary(target, getattr(package, name))}")
        container = nodes.container()
        nested_parse_with_titles(self.state, StringList(lines, source=self.get_source_info()[0]), container)
        return container.children
