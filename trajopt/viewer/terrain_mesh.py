"""A terrain as a triangle mesh for the viewer (:mod:`trajopt.terrain`'s solids).

:func:`terrain_mesh` draws each solid of :meth:`trajopt.terrain.Terrain.solids`
(world frame, metres, ``z`` up):

- a :class:`~trajopt.terrain.Plane` (the floor, a slope, the pit under
  stepping stones) as a square slab of ``edge`` (m) centred under
  ``centre`` (x, y), its top face on the plane;
- a :class:`~trajopt.terrain.Prism` (a stair, a stone, a box) as its
  polygon extruded from ``bottom`` to ``top``;
- a :class:`~trajopt.terrain.HeightGrid` as two triangles per grid cell
  through its heights (the viewer draws the cell's bilinear surface by its
  diagonal split, exact at the grid points).

Floors a foot may not stand on (the ``"pit"`` plane) are drawn darker.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..terrain import HeightGrid, Plane, Prism
from . import shapes
from .shapes import TriangleMesh

#: Colours (RGBA) of the terrain's solids: where feet may stand, and a floor they may not.
TERRAIN_COLOR = (0.80, 0.76, 0.68, 1.0)
PIT_COLOR = (0.35, 0.33, 0.30, 1.0)
#: Brightness of a prism's sides and bottom relative to its top.
SIDE_SHADE = 0.75
#: Thickness of a plane's slab per metre of its edge.
SLAB_THICKNESS = 0.01


def terrain_mesh(terrain: Any, centre: Sequence[float], edge: float) -> TriangleMesh:
    """The terrain's solids as one mesh (module docstring); planes cut to the ``edge`` (m) square around ``centre`` (x, y)."""
    centre = np.asarray(centre, dtype=float)[:2]
    parts = []
    for solid in terrain.solids():
        if isinstance(solid, Plane):
            parts.append(_plane_slab(solid, centre, float(edge)))
        elif isinstance(solid, Prism):
            parts.append(prism_mesh(solid.vertices, solid.bottom, solid.top, TERRAIN_COLOR))
        elif isinstance(solid, HeightGrid):
            parts.append(height_grid_mesh(solid))
        else:
            raise TypeError(f"terrain: cannot draw a solid of type {type(solid).__name__}")
    return shapes.merge(parts)


def _plane_slab(plane: Plane, centre: np.ndarray, edge: float) -> TriangleMesh:
    """A slab ``edge`` wide whose top face lies on ``plane``, under ``centre``."""
    n, p = np.asarray(plane.normal, dtype=float), np.asarray(plane.point, dtype=float)
    z = p[2] - (n[0] * (centre[0] - p[0]) + n[1] * (centre[1] - p[1])) / n[2]
    thickness = SLAB_THICKNESS * edge
    T = np.eye(4)
    T[:3, :3] = plane.rotation()
    T[:3, 3] = np.r_[centre, z] - 0.5 * thickness * T[:3, 2]
    color = PIT_COLOR if plane.name == "pit" else TERRAIN_COLOR
    return shapes.box((edge, edge, thickness), color).transformed(T)


def prism_mesh(vertices: Any, bottom: float, top: float, color: Sequence[float]) -> TriangleMesh:
    """The prism over a convex counter-clockwise polygon ``vertices`` (V, 2) from ``bottom`` to ``top`` (m),
    faces outward; each face has its own vertices (the viewer shades it flat) and the sides are
    :data:`SIDE_SHADE` darker than the top, so that a step's edge shows."""
    V = np.asarray(vertices, dtype=float)
    n = len(V)
    points = [np.c_[V, np.full(n, top)], np.c_[V[::-1], np.full(n, bottom)]]  # top and bottom, counter-clockwise seen from outside
    faces = [(0, i, i + 1) for i in range(1, n - 1)] + [(n, n + i, n + i + 1) for i in range(1, n - 1)]
    for i in range(n):
        a, b, o = V[i], V[(i + 1) % n], 2 * n + 4 * i
        points.append(np.array([[*a, bottom], [*b, bottom], [*b, top], [*a, top]]))
        faces += [(o, o + 1, o + 2), (o, o + 2, o + 3)]
    shades = np.r_[np.ones(n), np.full(5 * n, SIDE_SHADE)][:, None]  # sides and bottom darker: edges show
    return TriangleMesh(np.vstack(points), np.array(faces), color, shades * np.asarray(color, dtype=float)[:3])


def height_grid_mesh(grid: HeightGrid) -> TriangleMesh:
    """The surface through a height grid's points, two triangles per cell."""
    H = np.asarray(grid.heights, dtype=float)
    nx, ny = H.shape
    X, Y = np.meshgrid(grid.origin[0] + grid.spacing[0] * np.arange(nx), grid.origin[1] + grid.spacing[1] * np.arange(ny), indexing="ij")
    points = np.c_[X.ravel(), Y.ravel(), H.ravel()]
    index = np.arange(nx * ny).reshape(nx, ny)
    a, b, c, d = index[:-1, :-1].ravel(), index[1:, :-1].ravel(), index[1:, 1:].ravel(), index[:-1, 1:].ravel()
    faces = np.concatenate([np.c_[a, b, c], np.c_[a, c, d]])
    return TriangleMesh(points, faces, TERRAIN_COLOR)
