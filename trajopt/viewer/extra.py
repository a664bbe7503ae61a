"""The ``viz`` extra: the viewer's third-party packages, imported only here.

:func:`require_viz` imports them and turns a missing one into
:class:`~trajopt.extras.MissingExtraError`, whose message is one line naming
the extra to install (the CLI prints it as is, with no traceback);
:func:`check_viz` finds them without importing them (a check before a long solve).
"""
from __future__ import annotations

from types import ModuleType

from ..extras import MissingExtraError, check_extra, require_extra

__all__ = ["INSTALL_HINT", "MissingExtraError", "VIZ_MODULES", "check_viz", "require_viz"]

#: Import names of the packages the ``viz`` extra installs (meshcat brings u-msgpack-python).
VIZ_MODULES = ("meshcat", "umsgpack", "trimesh", "fast_simplification")
#: How a user installs them.
INSTALL_HINT = 'pip install -e ".[viz]"'
_PURPOSE = "the 3D viewer"


def check_viz() -> None:
    """Raise :class:`MissingExtraError` unless every module of :data:`VIZ_MODULES` can be found (none is imported)."""
    check_extra("viz", VIZ_MODULES, _PURPOSE)


def require_viz(*names: str) -> dict[str, ModuleType]:
    """Import ``names`` (default: all of :data:`VIZ_MODULES`); raise :class:`MissingExtraError`
    naming the ``viz`` extra if one is missing. Import only what a caller needs: meshcat takes
    ~0.2 s to import and trimesh ~0.5 s."""
    return require_extra("viz", names or VIZ_MODULES, _PURPOSE)
