"""The project's public modules, the names each package re-exports and their public paths.

A module is public when no part of its dotted name starts with ``_``. A
package's public names are its ``__all__``, or, without one, the names its
``__init__.py`` imports from its own submodules (``from .so3 import exp as
so3_exp`` exports ``so3_exp``); its exports are those of them defined
elsewhere (in a submodule, or loaded from one on first use).

An object listed by several packages (``trajopt.solve``, ``trajopt.solvers.solve``,
defined as ``trajopt.solvers.registry.solve``) has one *canonical* public path,
the shortest (:func:`public_paths`): the reference documents it there in full
and names its defining module; its other public paths are short entries that
link to it, and its defining name is an alias of the canonical entry.
Only the standard library and the project are imported here: the
documentation build and its checks share these lists.
"""
from __future__ import annotations

import ast
import functools
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


def listed_names(package: ModuleType) -> list[str]:
    """The public names of ``package``: its ``__all__`` (dunder names such as ``__version__``
    included), or without one the names it imports from its submodules; no other ``_`` name."""
    listed = getattr(package, "__all__", None)
    names = list(listed) if listed is not None else list(_relative_imports(package))
    return [n for n in names if not n.startswith("_") or (listed is not None and n.startswith("__") and n.endswith("__"))]


def exports(package: ModuleType) -> list[str]:
    """The public names ``package`` re-exports from its submodules, in the order it lists them."""
    return [n for n in listed_names(package) if not n.startswith("_") and definition(package, n) != f"{package.__name__}.{n}"]


def _root_rank(dotted: str) -> int:
    root = dotted.split(".", 1)[0]
    return ROOTS.index(root) if root in ROOTS else len(ROOTS)


@functools.lru_cache(maxsize=None)
def public_paths() -> dict[str, tuple[str, ...]]:
    """``defining dotted name -> public paths`` of every name a public package lists, canonical first.

    The canonical path is the shortest (``trajopt.solve`` before ``trajopt.solvers.solve``); an
    object a package defines and lists itself (``trajopt.transcription.get_transcription``) has
    its defining name among its public paths. A listed name that is also the name of a submodule
    (the function ``trajopt.sim.simulate`` of module ``trajopt.sim.simulate``) is no public path:
    one dotted name cannot be both entries, and the module keeps it.
    """
    paths: dict[str, list[str]] = {}
    modules = public_modules()
    for module_name in modules:
        module = importlib.import_module(module_name)
        if not hasattr(module, "__path__"):
            continue
        for name in listed_names(module):
            if f"{module_name}.{name}" in modules:
                continue  # a name that is also a submodule's (trajopt.sim.simulate): the module keeps the path
            paths.setdefault(definition(module, name), []).append(f"{module_name}.{name}")
    return {d: tuple(sorted(set(p), key=lambda path: (path.count("."), _root_rank(path), path))) for d, p in paths.items()}


@functools.lru_cache(maxsize=None)
def defined_as() -> dict[str, str]:
    """``public path -> defining dotted name`` (the inverse of :func:`public_paths`)."""
    return {path: d for d, paths in public_paths().items() for path in paths}


def canonical(dotted: str) -> str:
    """The canonical public path of the object defined (or documented) as ``dotted``; for a member of
    a re-exported class, its path under the class's public path; else ``dotted`` itself."""
    dotted = defined_as().get(dotted, dotted)
    paths = public_paths()
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        head = ".".join(parts[:cut])
        if head in paths:
            return ".".join([paths[head][0], *parts[cut:]])
    return dotted


def moved_members(module_name: str) -> dict[str, str]:
    """``member name -> canonical public path`` of the objects ``module_name`` defines and the
    reference documents at another (public) path."""
    found = {}
    for d, paths in public_paths().items():
        home, _, name = d.rpartition(".")
        if home == module_name and paths[0] != d:
            found[name] = paths[0]
    # the names its __all__ lists but imports (trajopt.viewer.extra lists trajopt.extras.MissingExtraError)
    module = importlib.import_module(module_name)
    for name in getattr(module, "__all__", None) or ():
        obj = getattr(module, name, None)
        if name not in found and not name.startswith("_") and (inspect.isclass(obj) or inspect.isfunction(obj)):
            paths = public_paths().get(f"{obj.__module__}.{obj.__qualname__}")
            if paths and paths[0] != f"{module_name}.{name}":
                found[name] = paths[0]
    return found


def defining_module(dotted: str) -> str:
    """The module part of a defining dotted name (``trajopt.problem.Problem -> trajopt.problem``)."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        return ".".join(parts[:cut])
    return dotted


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
