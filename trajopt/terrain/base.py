"""The terrain interface: height, normal, foot regions, swing envelopes and solids.

Every terrain answers, in the world frame (metres, ``z`` up):

- :meth:`Terrain.height` and :meth:`Terrain.normal` at horizontal points: the
  exact surface (the top of whatever is there) and its upward unit normal;
- :meth:`Terrain.region_at` and :meth:`Terrain.regions_near`: the convex foot
  regions (:class:`~.surface.Surface`: a height patch over a convex polygon,
  shrunk by a margin from its edges) a foot at a point stands on, or may step
  to; ``None``/none where the terrain gives no footing (a pit, a gap);
- :meth:`Terrain.swing_profile`: the smooth upper envelope
  (:class:`~.profile.SwingProfile`) a foot swinging between two points must
  clear;
- :meth:`Terrain.solids`: its shapes (:mod:`.geometry`) for MuJoCo, the viewer and plots.

The CasADi side lives in the parameter-vector functions of :mod:`.surface`
and :mod:`.profile`, which an optimal-control problem evaluates on the feet
of its robot.

Two widths shape the regions and envelopes: ``Terrain.ramp`` (the
envelope's ramp, ``w`` of :mod:`.profile`) and ``Terrain.margin`` (how far
a foothold keeps from a region's edges; at least ``ramp`` where an edge rises
right next to a region, as a stair's riser does, so that a foot standing at
the edge of its region is not under the envelope of the step next to it).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, List, Optional, Sequence

import numpy as np

from lie import _backend as B

from .geometry import Solid
from .profile import SwingProfile
from .surface import Surface

#: Default half width [m] of a swing's corridor: how far a swinging foot may stray sideways from
#: the straight line between its nominal footholds while the envelope applies.
SWING_HALF_WIDTH = 0.08
#: Envelopes look this far [m] before the start and past the end of a swing.
SWING_OVERHANG = 0.3


def as_points(xy: Any, name: str = "xy") -> np.ndarray:
    """Horizontal points (K, 2) from (2,) or (K, 2); ``ValueError`` naming ``name`` otherwise."""
    P = B.check_finite(B.numeric_array(xy, name), name)
    P = P.reshape(1, 2) if P.shape == (2,) else P
    if P.ndim != 2 or P.shape[1] != 2:
        raise ValueError(f"{name}: expected shape (2,) or (K, 2), got {np.shape(xy)}")
    return P


def swing_frame(start: Any, end: Any, heading: float = 0.0) -> tuple:
    """``(start (2,), unit direction (2,), length)`` of a swing between horizontal points; a swing in
    place (shorter than 1e-9 m) points along ``heading`` (rad)."""
    a, b = B.vector(start, None, "start")[:2], B.vector(end, None, "end")[:2]
    d = b - a
    length = float(np.linalg.norm(d))
    u = d / length if length > 1e-9 else np.array([np.cos(heading), np.sin(heading)])
    return a, u, length


class Terrain(ABC):
    """A terrain (module docstring). Subclasses: :class:`~.blocks.BlockTerrain`,
    :class:`~.slope.Slope`, :class:`~.height_map.HeightMap`."""

    #: A short name ("stairs", "slope", ...) for titles and messages.
    name: str = "terrain"

    def __init__(self, ramp: float = 0.04, margin: Optional[float] = None) -> None:
        self.ramp = B.real(ramp, "ramp", lower=0.0, strict=True)
        self.margin = self.ramp + 0.01 if margin is None else B.real(margin, "margin", lower=0.0)

    # ------------------------------------------------------------ the surface
    @abstractmethod
    def height(self, xy: Any) -> np.ndarray:
        """Terrain height (K,) [m] at horizontal points ``xy`` (2,) or (K, 2)."""

    @abstractmethod
    def normal(self, xy: Any) -> np.ndarray:
        """Upward unit normals (K, 3) of the terrain at ``xy`` (vertical faces count as their top)."""

    @property
    def flat_height(self) -> Optional[float]:
        """The height of a terrain that is one horizontal plane everywhere, else ``None``."""
        return None

    # ------------------------------------------------------------ foot regions
    @abstractmethod
    def region_at(self, xy: Any, margin: Optional[float] = None) -> Optional[Surface]:
        """The foot region under the point ``xy`` (2,), shrunk by ``margin`` (default ``self.margin``);
        ``None`` where the terrain gives no footing. The point may lie outside the shrunk region."""

    @abstractmethod
    def regions_near(self, xy: Any, radius: float, margin: Optional[float] = None) -> List[Surface]:
        """Every foot region (shrunk by ``margin``) with a point within ``radius`` [m] of ``xy`` (2,)."""

    # ------------------------------------------------------------ swings
    @abstractmethod
    def swing_profile(self, start: Any, end: Any, half_width: float = SWING_HALF_WIDTH, heading: float = 0.0) -> SwingProfile:
        """The envelope of a swing from ``start`` toward ``end`` (horizontal points, or 3D with ``z`` ignored)."""

    # ------------------------------------------------------------ drawing
    @abstractmethod
    def solids(self) -> List[Solid]:
        """The terrain's shapes (:mod:`.geometry`)."""

    def describe(self) -> str:
        """One line: what the terrain is."""
        return self.name

    def __repr__(self) -> str:
        return f"<Terrain {self.describe()}>"

    # ------------------------------------------------------------ helpers
    def _margin(self, margin: Optional[float]) -> float:
        return self.margin if margin is None else B.real(margin, "margin", lower=0.0)


def nearest_regions(regions: Sequence[Surface], xy: np.ndarray) -> List[tuple]:
    """``(distance, closest point (2,), region)`` of each non-empty region, nearest first."""
    out = []
    for region in regions:
        try:
            p = region.closest_point(xy)
        except ValueError:  # a region shrunk to nothing
            continue
        out.append((float(np.linalg.norm(p - xy)), p, region))
    return sorted(out, key=lambda item: item[0])
