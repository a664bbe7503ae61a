"""Solid shapes of a terrain, for the simulators and viewers that draw or collide with it.

A :class:`~trajopt.terrain.Terrain` lists its solids (:meth:`Terrain.solids`)
as these plain records (world frame, metres); :mod:`trajopt.mujoco` turns them
into MuJoCo geoms, :mod:`trajopt.viewer` into meshes, the plots into outlines:

- :class:`Prism`: a vertical prism over a convex polygon (counter-clockwise
  ``vertices`` (V, 2)) from ``bottom`` to ``top`` (a block, a stair, a stone);
  :attr:`Prism.box` gives centre, half sizes and yaw when it is a rectangle;
- :class:`Plane`: the half-space below the plane through ``point`` with
  upward unit ``normal`` (a floor, a slope);
- :class:`HeightGrid`: heights ``heights[i, j]`` at ``(x0 + i dx, y0 + j dy)``
  over a solid base at ``bottom`` (a height map).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

import numpy as np


@dataclass(frozen=True, eq=False)
class Prism:
    """A vertical prism over a convex counter-clockwise polygon ``vertices`` (V, 2), ``bottom < top`` [m]."""

    vertices: np.ndarray
    bottom: float
    top: float
    name: str = "block"

    @property
    def box(self) -> Optional[tuple]:
        """``(centre (3,), half sizes (3,), yaw)`` when the polygon is a rectangle, else ``None``."""
        V = np.asarray(self.vertices, dtype=float)
        if len(V) != 4:
            return None
        e0, e1 = V[1] - V[0], V[2] - V[1]
        if abs(e0 @ e1) > 1e-9 * np.linalg.norm(e0) * np.linalg.norm(e1) or np.linalg.norm(V[2] - V[3] - e0) > 1e-9:
            return None
        centre = np.r_[V.mean(axis=0), 0.5 * (self.bottom + self.top)]
        half = 0.5 * np.array([np.linalg.norm(e0), np.linalg.norm(e1), self.top - self.bottom])
        return centre, half, float(np.arctan2(e0[1], e0[0]))


@dataclass(frozen=True, eq=False)
class Plane:
    """The solid below the plane through ``point`` (3,) with upward unit ``normal`` (3,)."""

    point: np.ndarray
    normal: np.ndarray
    name: str = "ground"

    def rotation(self) -> np.ndarray:
        """A rotation (3, 3) whose third column is the normal and whose first lies in the world x-z plane."""
        n = np.asarray(self.normal, dtype=float)
        x = np.array([n[2], 0.0, -n[0]])
        x = x / np.linalg.norm(x) if np.linalg.norm(x) > 1e-12 else np.array([1.0, 0.0, 0.0])
        return np.column_stack([x, np.cross(n, x), n])


@dataclass(frozen=True, eq=False)
class HeightGrid:
    """Heights (nx, ny) [m] at ``(origin[0] + i spacing[0], origin[1] + j spacing[1])`` over a base at ``bottom``."""

    heights: np.ndarray
    origin: np.ndarray
    spacing: np.ndarray
    bottom: float
    name: str = "height map"

    @property
    def extent(self) -> tuple:
        """``(x_min, x_max, y_min, y_max)`` of the grid."""
        nx, ny = np.shape(self.heights)
        return (self.origin[0], self.origin[0] + (nx - 1) * self.spacing[0], self.origin[1], self.origin[1] + (ny - 1) * self.spacing[1])


Solid = Union[Prism, Plane, HeightGrid]
