"""Terrains for legged robots: height, normal, foot regions and swing envelopes, numeric and CasADi.

- :class:`Terrain` (:mod:`.base`): the interface every terrain answers
  (height, normal, the convex foot region under a point, the regions near
  it, the envelope a swinging foot clears, its solids);
- :class:`BlockTerrain` (:mod:`.blocks`) and its constructors :func:`flat`,
  :func:`stairs`, :func:`stepping_stones`, :func:`stone_lanes`,
  :func:`boxes`, :func:`gap`; :class:`Slope` (:mod:`.slope`);
  :class:`HeightMap` (:mod:`.height_map`, bilinear);
- :class:`Surface` (:mod:`.surface`): one foot region, and the parameter-vector
  functions an optimal-control problem calls on its feet (surface height,
  normal, region rows), on numpy and CasADi alike;
- :class:`SwingProfile` (:mod:`.profile`): the smooth upper envelope of the
  terrain along a swing, and its clearance function;
- :mod:`.geometry`: the solids (prisms, planes, height grids) MuJoCo, the
  viewer and the plots draw.

World frame, metres, ``z`` up; the flat ground of the other problems is ``flat(0.0)``.
"""
from .base import SWING_HALF_WIDTH, Terrain
from .blocks import BlockTerrain, boxes, flat, gap, stairs, stepping_stones, stone_lanes
from .geometry import HeightGrid, Plane, Prism
from .height_map import HeightMap
from .profile import SwingProfile, smoothstep
from .slope import Slope
from .surface import Surface

__all__ = [
    "BlockTerrain",
    "HeightGrid",
    "HeightMap",
    "Plane",
    "Prism",
    "SWING_HALF_WIDTH",
    "Slope",
    "Surface",
    "SwingProfile",
    "Terrain",
    "boxes",
    "flat",
    "gap",
    "smoothstep",
    "stairs",
    "stepping_stones",
    "stone_lanes",
]
