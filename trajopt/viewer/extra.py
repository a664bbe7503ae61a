"""The ``viz`` extra: the viewer's third-party packages, imported only here.

:func:`require_viz` imports them and turns a missing one into
:class:`MissingExtraError`, whose message is one line naming the extra to
install (the CLI prints it as is, with no traceback); :func:`check_viz` finds
them without importing them (a check before a long solve).
"""
from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

#: Import names of the packages the ``viz`` extra installs (meshcat brings u-msgpack-python).
VIZ_MODULES = ("meshcat", "umsgpack", "trimesh", "fast_simplification")
#: How a user installs them.
INSTALL_HINT = 'pip install -e ".[viz]"'


class MissingExtraError(ImportError):
    """An optional dependency of the 3D viewer is not installed (one-line message)."""


def _missing(name: str) -> MissingExtraError:
    return MissingExtraError(f"the 3D viewer needs the 'viz' extra ({name!r} is not installed): {INSTALL_HINT}")


def check_viz() -> None:
    """Raise :class:`MissingExtraError` unless every module of :data:`VIZ_MODULES` can be found (none is imported)."""
    for name in VIZ_MODULES:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):  # ValueError: a module entry without a spec (sys.modules[name] = None)
            found = False
        if not found:
            raise _missing(name)


def require_viz(*names: str) -> dict[str, ModuleType]:
    """Import ``names`` (default: all of :data:`VIZ_MODULES`); raise :class:`MissingExtraError`
    naming the ``viz`` extra if one is missing. Import only what a caller needs: meshcat takes
    ~0.2 s to import and trimesh ~0.5 s."""
    modules = {}
    for name in names or VIZ_MODULES:
        try:
            modules[name] = importlib.import_module(name)
        except ImportError as err:
            raise _missing(err.name or name) from None
    return modules
