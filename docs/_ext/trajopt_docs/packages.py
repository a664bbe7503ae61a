"""The project's public modules and the names each package re-exports.

A module is public when no part of its dotted name starts with ``_``. A
package's exports are its ``__all__``, or, without one, the names its
``__init__.py`` imports from its own submodules (``from .so3 import exp as
so3_exp`` exports ``so3_exp``). Only the standard library and the project
are imported here: the documentation build and its checks share this list.
"""
from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path
from types import ModuleType

#: The packages the API reference documents.
ROOTS = ("lie", "models", "trajopt", "problems")

def is_ours(dotted: str) -> bool:
    """Whether a dotted name lies in one of :data:`ROOTS`."""
    return dotted.split(".", 1)[0] in ROOTS


def public_modules() -> list[str]:
    """Every public module of :data:`ROOTS` (packages included), sorted."""
    names = []
    for root in ROOTS:
        package = importlib.import_module(root)
        names.append(root)
        for info in pkgutil.walk_packages(package.__path__, prefix=root + "."):
            if any(part.startswith("_") for part in info.name.split(".")):
                continue
            names.append(info.name)
    return sorted(names)


def _relative_imports(package: ModuleType) -> dict[str, tuple[str, str]]:
    """``exported name -> (source module, name there)`` for the ``from .x import y`` lines of a package."""
    source = Path(inspect.getfile(package)).read_text()
    found: dict[str, tuple[str, str]] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            for alias in node.names:
                found[alias.asname or alias.name] = (f"{package.__name__}.{node.module}", alias.name)
    return found


def exports(package: ModuleType) -> list[str]:
    """The names ``package`` re-exports from its submodules, in the order it lists them."""
    imported = _relative_imports(package)
    listed = getattr(package, "__all__", None)
    names = list(listed) if listed is not None else list(imported)
    return [n for n in names if n in imported and not n.startswith("_")]


def definition(package: ModuleType, name: str) -> str:
    """The dotted name under which ``package.name`` is defined, following re-exports down the tree.

    Classes and functions say where they are defined (``__module__``, ``__qualname__``); other
    objects (constants, instances) are followed through the ``from .x import y`` lines.
    """
    obj = getattr(package, name)
    if (inspect.isclass(obj) or inspect.isfunction(obj)) and is_ours(obj.__module__):
        return f"{obj.__module__}.{obj.__qualname__}"
    module_name, source_name = _relative_imports(package).get(name, (package.__name__, name))
    module = importlib.import_module(module_name)
    if hasattr(module, "__path__") and source_name in _relative_imports(module):
        return definition(module, source_name)
    return f"{module_name}.{source_name}"
