"""Optional dependencies (the ``setup.cfg`` extras): found or imported only by the subpackage that needs them.

A missing one is a :class:`MissingExtraError` whose message is one line
naming the extra to install (the CLI prints it as is, with no traceback).
:func:`check_extra` finds the modules without importing them (a check before
long work); :func:`require_extra` imports them.
"""
from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType
from typing import Dict, Sequence


class MissingExtraError(ImportError):
    """An optional dependency is not installed (one-line message naming the extra)."""


def missing_extra(extra: str, module: str, purpose: str) -> MissingExtraError:
    """The error for ``module`` of extra ``extra`` missing, needed by ``purpose`` (e.g. "the 3D viewer")."""
    return MissingExtraError(f"{purpose} needs the {extra!r} extra ({module!r} is not installed): pip install -e \".[{extra}]\"")


def check_extra(extra: str, modules: Sequence[str], purpose: str) -> None:
    """Raise :class:`MissingExtraError` unless every module of ``modules`` can be found (none is imported)."""
    for name in modules:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):  # ValueError: a module entry without a spec (sys.modules[name] = None)
            found = False
        if not found:
            raise missing_extra(extra, name, purpose)


def require_extra(extra: str, modules: Sequence[str], purpose: str) -> Dict[str, ModuleType]:
    """Import ``modules``; raise :class:`MissingExtraError` naming ``extra`` if one is missing."""
    imported = {}
    for name in modules:
        try:
            imported[name] = importlib.import_module(name)
        except ImportError as err:
            raise missing_extra(extra, err.name or name, purpose) from None
    return imported
