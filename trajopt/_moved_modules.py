"""The solver modules' old import paths, kept for one release (0.1 -> 0.2) with a ``DeprecationWarning``.

Version 0.1 kept the backends at the top of :mod:`trajopt`
(``trajopt.solver``, ``trajopt.nlp_solver``, ``trajopt.ipopt_solver``, ...);
they now live in :mod:`trajopt.solvers` (:data:`MOVED`). Importing an old
path warns once and gives a module that forwards every attribute to the new
one, so ``from trajopt.nlp_solver import NlpSolver`` still returns the
class itself. The names exported by :mod:`trajopt` did not move.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from typing import Any, Optional, Sequence

#: Old module path -> new module path.
MOVED = {
    "trajopt.solver": "trajopt.solvers.registry",
    "trajopt.nlp_solver": "trajopt.solvers.base",
    "trajopt.ipopt_solver": "trajopt.solvers.ipopt",
    "trajopt.fatrop_solver": "trajopt.solvers.fatrop",
    "trajopt.sqp_solver": "trajopt.solvers.sqp",
    "trajopt.solver_options": "trajopt.solvers.options",
    "trajopt.watchdog": "trajopt.solvers.watchdog",
    "trajopt.stage_layout": "trajopt.solvers.stage_layout",
    "trajopt.interrupt": "trajopt.solvers.interrupt",
    "trajopt.derivatives": "trajopt.solvers.derivatives",
}


class _Forwarder(importlib.abc.Loader):
    """Creates the old module: a plain module whose missing attributes are read from the new one."""

    def exec_module(self, module: types.ModuleType) -> None:
        new = MOVED[module.__name__]
        warnings.warn(f"{module.__name__} moved to {new}; the old path goes away in trajopt 0.2", DeprecationWarning, stacklevel=2)
        target = importlib.import_module(new)
        module.__getattr__ = lambda name: getattr(target, name)  # type: ignore[method-assign]
        module.__dir__ = lambda: dir(target)  # type: ignore[method-assign]
        module.__doc__ = f"Moved to :mod:`{new}`."


class _MovedFinder(importlib.abc.MetaPathFinder):
    """Finds the old paths of :data:`MOVED` (and nothing else)."""

    def find_spec(self, fullname: str, path: Optional[Sequence[str]], target: Any = None) -> Optional[importlib.machinery.ModuleSpec]:
        return importlib.machinery.ModuleSpec(fullname, _Forwarder()) if fullname in MOVED else None


def install_moved_modules() -> None:
    """Register the finder of the old paths (once per process)."""
    if not any(isinstance(finder, _MovedFinder) for finder in sys.meta_path):
        sys.meta_path.append(_MovedFinder())
