"""The API reference's own check: every public module, class, function, method and property
has a docstring and an entry in the reference.

Run when Sphinx has read every page (``env-check-consistency``); each gap is a
warning, so ``sphinx -W`` fails on it. Public means: in a public module
(:func:`.packages.public_modules`), defined there (not imported), named
without a leading ``_`` and, where the module has ``__all__``, listed in it;
for a class, its methods and properties defined in the class body (inherited
docstrings count: an override of a documented method is documented). An object
a package exports may be documented at its public path instead
(``trajopt.Problem.solve`` for ``trajopt.problem.Problem.solve``).
"""
from __future__ import annotations

import importlib
import inspect
from typing import Iterator

from sphinx.util import logging

from .packages import canonical, public_modules

logger = logging.getLogger(__name__)


def _defined_members(module) -> Iterator[tuple[str, object]]:
    """``(name, object)`` of the public classes and functions defined in ``module``."""
    listed = getattr(module, "__all__", None)
    for name, obj in vars(module).items():
        if name.startswith("_") or (listed is not None and name not in listed):
            continue
        if (inspect.isclass(obj) or inspect.isfunction(obj)) and obj.__module__ == module.__name__:
            yield name, obj


def _class_members(cls) -> Iterator[tuple[str, object]]:
    """``(name, attribute)`` of the public methods and properties defined in the body of ``cls``."""
    for name, raw in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(raw, (staticmethod, classmethod)):
            raw = raw.__func__
        if inspect.isfunction(raw) or isinstance(raw, property):
            yield name, getattr(cls, name)


def public_objects() -> Iterator[tuple[str, str, object]]:
    """``(kind, dotted name, object)`` of everything :mod:`.coverage` requires to be documented."""
    for module_name in public_modules():
        module = importlib.import_module(module_name)
        yield "module", module_name, module
        for name, obj in _defined_members(module):
            dotted = f"{module_name}.{name}"
            yield ("class" if inspect.isclass(obj) else "function"), dotted, obj
            if inspect.isclass(obj):
                for member, attribute in _class_members(obj):
                    yield "method", f"{dotted}.{member}", attribute


def check_api_coverage(app, env) -> None:
    """Warn about each public object without a docstring or without an entry in the reference."""
    documented = env.get_domain("py").objects
    for kind, dotted, obj in public_objects():
        if not (inspect.getdoc(obj) or "").strip():
            logger.warning("undocumented public %s %s: give it a docstring", kind, dotted, type="trajopt", subtype="coverage")
        elif dotted not in documented and canonical(dotted) not in documented:
            logger.warning("public %s %s has no entry in the API reference", kind, dotted, type="trajopt", subtype="coverage")
