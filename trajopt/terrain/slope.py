"""An inclined plane: a slope of constant angle rising along a heading.

``Slope(angle, heading, origin)``: the plane through ``origin`` (3,) that
rises by ``tan(angle)`` per metre along the horizontal direction
``(cos heading, sin heading)`` and is level across it::

    h(x, y) = z0 + tan(angle) ((x - x0) cos heading + (y - y0) sin heading)

so ``angle > 0`` climbs along the heading (a robot facing ``+x`` walks up a
slope with ``heading = 0``). Its normal is
``(-sin(angle) cos heading, -sin(angle) sin heading, cos(angle))`` everywhere.
The whole plane is one unbounded foot region, and a swing's envelope is the
plane itself (no steps, no corridor). ``|angle| < 60 deg``.
"""
from __future__ import annotations

from typing import Any, List, Optional

import numpy as np

from lie import _backend as B

from .base import SWING_HALF_WIDTH, Terrain, as_points, swing_frame
from .geometry import Plane, Solid
from .profile import SwingProfile
from .surface import Surface

#: Steepest slope accepted (rad).
MAX_ANGLE = np.radians(60.0)


class Slope(Terrain):
    """An inclined plane (module docstring); ``angle`` and ``heading`` in radians, ``origin`` (3,) [m]."""

    def __init__(self, angle: float, heading: float = 0.0, origin: Any = (0.0, 0.0, 0.0), ramp: float = 0.04, margin: Optional[float] = 0.0) -> None:
        super().__init__(ramp, margin)
        self.angle = B.real(angle, "angle")
        if abs(self.angle) >= MAX_ANGLE:
            raise ValueError(f"angle: expected |angle| < {np.degrees(MAX_ANGLE):g} deg, got {np.degrees(self.angle):g} deg")
        self.heading = B.real(heading, "heading")
        self.origin = B.vector(origin, 3, "origin")
        g = np.tan(self.angle) * np.array([np.cos(self.heading), np.sin(self.heading)])
        self.coefficients = np.array([self.origin[2] - g @ self.origin[:2], g[0], g[1], 0.0])
        self.name = f"slope of {np.degrees(self.angle):g} deg"

    @property
    def flat_height(self) -> Optional[float]:
        return float(self.origin[2]) if self.angle == 0 else None

    @property
    def surface(self) -> Surface:
        """The whole plane as one (unbounded) foot region."""
        return Surface(self.coefficients, name=self.name)

    def height(self, xy: Any) -> np.ndarray:
        return self.surface.height(as_points(xy))

    def normal(self, xy: Any) -> np.ndarray:
        return self.surface.normal(as_points(xy))

    def region_at(self, xy: Any, margin: Optional[float] = None) -> Optional[Surface]:
        as_points(xy)
        return self.surface

    def regions_near(self, xy: Any, radius: float, margin: Optional[float] = None) -> List[Surface]:
        as_points(xy)
        return [self.surface]

    def swing_profile(self, start: Any, end: Any, half_width: float = SWING_HALF_WIDTH, heading: float = 0.0) -> SwingProfile:
        a, u, _ = swing_frame(start, end, heading)
        return SwingProfile(a, u, self.coefficients[:3], np.zeros((0, 2)), self.ramp, np.inf)

    def solids(self) -> List[Solid]:
        return [Plane(self.origin.copy(), self.normal(self.origin[:2])[0], self.name)]

    def describe(self) -> str:
        return f"{self.name} rising along heading {np.degrees(self.heading):g} deg through {np.round(self.origin, 4).tolist()}"
