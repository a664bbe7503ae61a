"""``.. public-name:: PACKAGE.NAME``: the reference entry of a name at the path users import it by.

``from trajopt import Problem``: the reference documents ``Problem`` as
``trajopt.Problem`` (its canonical public path, :func:`.packages.public_paths`)
on the page of package ``trajopt``, in full (``autoclass``, ``autofunction``,
or for a constant its ``#:`` comment and value), headed by the module that
defines it ("Defined in trajopt.problem"). The defining name
(``trajopt.problem.Problem``) is registered as an alias of that entry (the
Python domain's ``:canonical:``), so references to it, and the defining
module's page, link there; the module's own page does not document it again
(:mod:`.api_pages` excludes it). At another public path of the object
(``trajopt.solvers.solve`` beside ``trajopt.solve``) the entry is a short one
that links to the canonical entry.
"""
from __future__ import annotations

import importlib
import inspect

from docutils import nodes
from docutils.statemachine import StringList
from sphinx import addnodes
from sphinx.pycode import ModuleAnalyzer
from sphinx.util.docutils import SphinxDirective
from sphinx.util.inspect import object_description
from sphinx.util.nodes import nested_parse_with_titles

from .packages import defining_module, definition, public_paths


def _kind(obj) -> str:
    if inspect.isclass(obj):
        return "exception" if issubclass(obj, BaseException) else "class"
    return "function" if inspect.isroutine(obj) else "data"


def module_ref(module: str) -> str:
    """A link to a module's page, or its name as text when the module is private (no page)."""
    if any(part.startswith("_") for part in module.split(".")):
        return f"``{module}``"
    return f":py:mod:`{module}`"


def _comment(dotted: str) -> list[str]:
    """The ``#:`` comment of the constant defined as ``dotted``."""
    module, name = dotted.rsplit(".", 1)
    try:
        return list(ModuleAnalyzer.for_module(module).find_attr_docs().get(("", name), []))
    except Exception:
        return []


class PublicName(SphinxDirective):
    """The directive (module docstring); its one argument is the public dotted name."""

    required_arguments = 1

    def _parse(self, lines: list[str]) -> list[nodes.Node]:
        container = nodes.container()
        nested_parse_with_titles(self.state, StringList(lines, source=self.get_source_info()[0]), container)
        return container.children

    def _instance_attributes(self, cls, public: str, desc) -> None:
        """The annotated instance attributes (``self.log: List[TickRecord] = []``) of ``cls``: an
        ``automodule`` of the defining module documents them, an ``autoclass`` at another path not."""
        try:
            analyzer = ModuleAnalyzer.for_module(cls.__module__)
            analyzer.analyze()
        except Exception:
            return
        objects = self.env.get_domain("py").objects
        package_name, name = public.rsplit(".", 1)
        lines = []
        for (owner, attribute), annotation in analyzer.annotations.items():
            if owner != cls.__qualname__ or attribute.startswith("_") or f"{public}.{attribute}" in objects:
                continue
            lines += [f".. py:attribute:: {name}.{attribute}", f"   :module: {package_name}", f"   :type: {annotation}", ""]
            lines += [f"   {line}" for line in analyzer.attr_docs.get((owner, attribute), [])] + [""]
        content = next(iter(desc.findall(addnodes.desc_content)), None)
        if lines and content is not None:
            content.extend(self._parse(lines))

    def run(self) -> list[nodes.Node]:
        public = self.arguments[0]
        package_name, name = public.rsplit(".", 1)
        obj = getattr(importlib.import_module(package_name), name)
        defined = definition(importlib.import_module(package_name), name)
        home = defining_module(defined)
        canonical = public_paths().get(defined, (public,))[0]
        kind = _kind(obj)
        domain = self.env.get_domain("py")
        if public != canonical:
            # an alias entry: its own anchor, but not a second description of the object (a short
            # reference ``SolverSettings`` finds the one non-aliased entry, trajopt.SolverSettings)
            result = self._parse([
                f".. py:{kind}:: {name}",
                f"   :module: {package_name}",
                "   :no-index:",
                "",
                f"   Re-export of :py:obj:`{canonical}` (defined in {module_ref(home)}).",
            ])
            signature = next((n for node in result for n in node.findall(addnodes.desc_signature)), None)
            if signature is not None:
                signature["ids"].append(public)
                self.state.document.note_explicit_target(signature)
                if public not in domain.objects:
                    domain.note_object(public, kind, public, aliased=True, location=signature)
            return result
        if kind in ("class", "exception"):
            lines = [f".. autoclass:: {public}"]  # autodoc adds ``:canonical: <defining name>``
        elif kind == "function":
            lines = [f".. autofunction:: {public}"]
        else:
            lines = [f".. py:data:: {name}", f"   :module: {package_name}"]
            value = object_description(obj).replace("\n", " ")
            lines += [f"   :value: {value}", ""] + [f"   {line}" for line in _comment(defined)]
        result = self._parse(lines)
        desc = next((n for node in result for n in node.findall(addnodes.desc)), None)
        if desc is None:
            return result
        if kind in ("class", "exception"):
            self._instance_attributes(obj, public, desc)
        if home != package_name:
            content = next(iter(desc.findall(addnodes.desc_content)), None)
            if content is not None:
                note = self._parse([f"Defined in {module_ref(home)}."])
                for node in note:
                    node["classes"].append("defined-in")
                content[0:0] = note
        return result


def register_aliases(app, env) -> None:
    """``env-updated`` handler: the defining name of each object documented at a public path is an
    alias of that entry (what the Python domain's ``:canonical:`` does for a class), also after an
    incremental build re-read the defining module's page after the package's."""
    domain = env.get_domain("py")
    objects = domain.objects
    for defined, paths in public_paths().items():
        entry = objects.get(paths[0])
        if entry is None or entry.aliased or defined in objects:
            continue
        objects[defined] = type(entry)(entry.docname, entry.node_id, entry.objtype, True)
