"""Cross-references to names as users import them, and to other libraries.

Docstrings and type hints name objects the way code reaches them:
``trajopt.solve`` (a re-export of ``trajopt.solvers.base.solve``), ``Problem``
inside a module that imported it, ``np.ndarray``. Sphinx resolves only the
dotted name under which an object is documented, so this handler of
``missing-reference`` finds the object a target names (absolute, or relative
to the module and class the reference sits in), and:

- when it belongs to the project, links to its documented entry (found by
  its defining module and qualified name, or else by identity among the
  documented names); when it has none, leaves the reference unresolved, so
  ``sphinx -W`` (with ``nitpicky``) fails on it;
- when it belongs to another library (numpy, CasADi, pinocchio, the standard
  library), renders the name as plain text: the build reads no other
  project's inventory (nothing is downloaded). So does a private name of
  ours (a type hint's ``_Interrupts``): it has no entry to link to.

A docstring shown at a public path (``trajopt.Problem``, written in
``trajopt.problem``) names objects as its own module sees them: the
candidates include the defining class and module of the entry it sits in.
References to a defining name (``trajopt.problem.Problem.solve``) lead to the
entry at the public path (:func:`.packages.canonical`).

A bare name a module imports only for type checking (``if TYPE_CHECKING:
from distributed import Client``) is followed to the module it comes from.

A target that names no importable object is looked up last by its ending
among the documented names (``Solution.evaluate`` written in another
package): it links when exactly one of the project's entries ends so, and
otherwise stays unresolved, so a typo or an ambiguous name fails the build.
"""
from __future__ import annotations

import ast
import builtins
import importlib
import inspect
from pathlib import Path
from typing import Any, Optional

from sphinx import addnodes
from sphinx.util import logging

from .packages import canonical, defined_as, is_ours

logger = logging.getLogger(__name__)

_MISSING = object()


def _import_path(dotted: str) -> Any:
    """The object at ``dotted`` (a module, then attributes), or ``_MISSING``."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except Exception:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr, _MISSING)
            if obj is _MISSING:
                return _MISSING
        return obj
    obj = getattr(builtins, parts[0], _MISSING)
    for attr in parts[1:]:
        if obj is _MISSING:
            break
        obj = getattr(obj, attr, _MISSING)
    return obj


def _type_checking_imports(module: str) -> dict[str, str]:
    """``name -> dotted source`` of the ``from x import y`` lines under ``if TYPE_CHECKING:`` in ``module``."""
    obj = _import_path(module)
    source = getattr(obj, "__file__", None) if inspect.ismodule(obj) else None
    if not source or not source.endswith(".py"):
        return {}
    found: dict[str, str] = {}
    for node in ast.parse(Path(source).read_text()).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for line in node.body:
                if isinstance(line, ast.ImportFrom) and line.module and line.level == 0:
                    for alias in line.names:
                        found[alias.asname or alias.name] = f"{line.module}.{alias.name}"
    return found


def _enclosing_definition(node) -> Optional[str]:
    """The defining dotted name of the re-exported object whose entry holds ``node`` (its docstring
    sits at ``trajopt.Problem`` but was written in ``trajopt.problem``), if it is one."""
    parent = node.parent
    while parent is not None:
        if isinstance(parent, addnodes.desc):
            for signature in parent.findall(addnodes.desc_signature):
                public = f"{signature.get('module') or ''}.{signature.get('fullname') or ''}".strip(".")
                if public in defined_as():
                    return defined_as()[public]
                break
        parent = parent.parent
    return None


def _candidates(target: str, module: Optional[str], cls: Optional[str], node=None) -> list[str]:
    """Dotted names ``target`` may mean: inside the class, inside the module, absolute, and a
    member of the one class of the module that has it (a module docstring's ``:meth:`dynamics```);
    in the entry of a re-exported object, inside the class and the module that define it."""
    target = target.lstrip(".~")
    names = []
    if module and cls:
        names.append(f"{module}.{cls}.{target}")
    if module:
        names.append(f"{module}.{target}")
    names.append(target)
    defined = _enclosing_definition(node) if node is not None else None
    if defined is not None:
        obj = _import_path(defined)
        home = _owner(obj) or defined.rsplit(".", 1)[0]
        if inspect.isclass(obj):
            names.append(f"{defined}.{target}")
        names.append(f"{home}.{target}")
        if "." not in target and target in _type_checking_imports(home):
            names.append(_type_checking_imports(home)[target])
    if module and "." not in target and target in _type_checking_imports(module):
        names.append(_type_checking_imports(module)[target])
    owner = _import_path(module) if module else _MISSING
    if inspect.ismodule(owner):
        first = target.split(".", 1)[0]
        classes = [name for name, obj in vars(owner).items() if inspect.isclass(obj) and obj.__module__ == module and hasattr(obj, first)]
        if len(classes) == 1:
            names.append(f"{module}.{classes[0]}.{target}")
    return names


def _owner(obj: Any) -> Optional[str]:
    """The module that defines a module, class, function or property; ``None`` for data."""
    if inspect.ismodule(obj):
        return obj.__name__
    if isinstance(obj, property):
        obj = obj.fget
    if inspect.isclass(obj) or inspect.isroutine(obj):
        owner = getattr(obj, "__module__", None)
        return owner if isinstance(owner, str) else None
    return None


def _documented_name(obj: Any, tried: str, objects: dict) -> Optional[str]:
    """The name under which ``obj`` (reached as ``tried``) is documented, if it is."""
    if inspect.ismodule(obj):
        return obj.__name__ if obj.__name__ in objects else None
    qualname = getattr(obj.fget if isinstance(obj, property) else obj, "__qualname__", None)
    if isinstance(qualname, str) and _owner(obj):
        name = f"{_owner(obj)}.{qualname}"
        if name in objects:
            return name
        if canonical(name) in objects:  # a member of a class documented at its public path
            return canonical(name)
    if tried in objects:
        return tried
    # a constant or a method reached through a re-exported class: compare what the documented names hold
    last = tried.rsplit(".", 1)[-1]
    for name in objects:
        if name.rsplit(".", 1)[-1] == last and is_ours(name) and _import_path(name) is obj:
            return name
    return None


def _instance_attribute(tried: str, objects: dict) -> Optional[str]:
    """The documented name of an instance attribute (set in ``__init__``) reached through its class."""
    if "." not in tried:
        return None
    parent, attribute = tried.rsplit(".", 1)
    cls = _import_path(parent)
    if not inspect.isclass(cls) or not is_ours(cls.__module__):
        return None
    for base in cls.__mro__:
        name = f"{base.__module__}.{base.__qualname__}.{attribute}"
        if name in objects:
            return name
        if canonical(name) in objects:
            return canonical(name)
    return None


def resolve_missing_reference(app, env, node, contnode):
    """``missing-reference`` handler (module docstring)."""
    if node.get("refdomain") != "py":
        return None
    domain = env.get_domain("py")
    for tried in _candidates(node["reftarget"], node.get("py:module"), node.get("py:class"), node):
        obj = _import_path(tried)
        if obj is _MISSING:
            name = _instance_attribute(tried, domain.objects)
            if name is not None:
                return domain.resolve_xref(env, node["refdoc"], app.builder, "obj", name, node, contnode)
            continue
        owner = _owner(obj)
        home = owner if owner is not None else tried
        if not is_ours(home) or tried.rsplit(".", 1)[-1].startswith("_"):
            return contnode  # another library's name or a private name of ours: plain text
        name = _documented_name(obj, tried, domain.objects)
        if name is None:
            return None  # ours but not documented: stays a broken reference
        return domain.resolve_xref(env, node["refdoc"], app.builder, "obj", name, node, contnode)
    suffix = "." + node["reftarget"].lstrip(".~")
    matches = [name for name in domain.objects if name.endswith(suffix) and is_ours(name)]
    if len({canonical(name) for name in matches}) == 1:  # one object, at several public paths
        matches = [canonical(matches[0])] if canonical(matches[0]) in domain.objects else matches[:1]
    if len(matches) == 1:
        return domain.resolve_xref(env, node["refdoc"], app.builder, "obj", matches[0], node, contnode)
    return None
