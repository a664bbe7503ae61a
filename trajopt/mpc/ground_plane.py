"""The ground of a receding horizon: one plane, flat or inclined (a slope).

The legged horizon (:class:`~trajopt.mpc.legged.LeggedMPC`) plans on the plane

    z = c + g_x x + g_y y,     normal n = (-g_x, -g_y, 1) / sqrt(1 + g_x^2 + g_y^2),

whose slope ``(g_x, g_y)`` is known (the terrain's) and whose offset ``c`` is
estimated at every tick from the stance feet (``c = mean(p_z - g_x p_x - g_y
p_y)``: on a soft ground the feet sink a few millimetres, and a plant's
ground may sit anywhere). The horizon reads from it:

- the friction pyramid about the normal: a foot force ``f`` is written in the
  plane's frame ``R^T f`` (:attr:`GroundPlane.rotation`: tangents ``t1``,
  ``t2`` and ``n`` as columns, :func:`trajopt.terrain.surface.surface_tangents`);
- the touchdown height: ``p_z - g_x p_x - g_y p_y = c`` (:meth:`GroundPlane.relative_height`);
- the base's reference: ``standing_height`` above the plane at its ``(x, y)``,
  its ``z`` axis along ``n`` and its ``x`` axis the heading tilted into the plane
  (:func:`trajopt.legged.terrain_plan.base_rotation`, as the offline plans on
  a terrain stand);
- the swing feet's targets on the plane.

:meth:`GroundPlane.of_terrain` takes a terrain whose ground is one plane (the
flat ground, :class:`trajopt.terrain.Slope`) and refuses the others (stairs,
stones, gaps, height maps: their footholds need foot regions, which this
horizon does not plan) in one line.
"""
from __future__ import annotations

from typing import Any, Optional

import casadi as ca
import numpy as np

from ..legged.terrain_plan import base_rotation
from ..terrain.surface import surface_tangents


class GroundPlane:
    """The plane ``z = c + g_x x + g_y y`` of slope ``gradient`` ``(g_x, g_y)`` and nominal offset ``offset`` ``c`` (m)."""

    def __init__(self, gradient: Any = (0.0, 0.0), offset: float = 0.0) -> None:
        gradient = np.asarray(gradient, dtype=float).reshape(-1)
        if gradient.shape != (2,) or not np.isfinite(gradient).all() or not np.isfinite(offset):
            raise ValueError(f"gradient: expected the plane's finite slope (g_x, g_y), got {gradient!r} and offset {offset!r}")
        self.gradient, self.offset = gradient, float(offset)
        self.normal = np.array([-gradient[0], -gradient[1], 1.0]) / np.sqrt(1.0 + gradient @ gradient)
        #: the plane's frame (3, 3): tangents t1, t2 and the normal as columns
        self.rotation = np.column_stack([*surface_tangents(self.normal), self.normal]) if self.inclined else np.eye(3)

    #: footholds anywhere on the plane (:class:`~trajopt.mpc.terrain_ground.TerrainGround` has foot regions)
    has_regions = False

    @property
    def inclined(self) -> bool:
        """Whether the plane is not horizontal."""
        return bool(np.any(self.gradient))

    @property
    def tilts_base(self) -> bool:
        """Whether the base's reference tilts with the ground: on an inclined plane."""
        return self.inclined

    @classmethod
    def of_terrain(cls, terrain: Optional[Any]) -> "GroundPlane":
        """The plane of ``terrain`` (``None``: the flat ground at ``z = 0``); ``ValueError`` for a terrain
        that is not one plane (module docstring)."""
        if terrain is None:
            return cls()
        if terrain.flat_height is not None:
            return cls(offset=terrain.flat_height)
        coefficients = getattr(terrain, "coefficients", None)
        if coefficients is None or len(terrain.solids()) != 1:
            raise ValueError(f"terrain: {getattr(terrain, 'name', type(terrain).__name__)} is not one plane (its footholds need its foot regions)")
        return cls(coefficients[1:3], coefficients[0])

    def height(self, xy: Any, offset: Optional[float] = None) -> Any:
        """The plane's height (K,) at horizontal points ``xy`` (K, 2) or (2,), with ``offset`` for ``c`` (default the nominal one)."""
        xy = np.asarray(xy, dtype=float)
        c = self.offset if offset is None else offset
        return c + xy[..., 0] * self.gradient[0] + xy[..., 1] * self.gradient[1]

    def relative_height(self, p: Any) -> Any:
        """``p_z - g_x p_x - g_y p_y`` of a point ``p`` (3,) (numpy or CasADi): ``c`` for a point on the plane."""
        if not self.inclined:
            return p[2]
        return p[2] - self.gradient[0] * p[0] - self.gradient[1] * p[1]

    def local_force(self, f: Any) -> Any:
        """A WORLD force ``f`` (3,) in the plane's frame, ``R^T f`` (numpy or CasADi): tangential, tangential, normal."""
        if not self.inclined:
            return f
        return ca.mtimes(ca.DM(self.rotation.T), f) if isinstance(f, (ca.SX, ca.MX, ca.DM)) else self.rotation.T @ np.asarray(f)

    def offset_of(self, points: np.ndarray) -> float:
        """The offset ``c`` (m) of the plane through ``points`` (K, 3) in the least-squares sense (their mean relative height)."""
        points = np.atleast_2d(np.asarray(points, dtype=float))
        return float(np.mean(points[:, 2] - points[:, :2] @ self.gradient))

    def holding_ratio(self) -> float:
        """The friction ratio standing on the plane takes: gravity's larger component along a tangent of
        :attr:`rotation` over its component along the normal (0 on flat ground; ``tan(angle)`` on a slope
        along ``x``), to compare with a pyramid's coefficient."""
        along = np.abs(self.rotation[2, :])  # e_z in the plane's frame
        return float(max(along[0], along[1]) / along[2])

    def base_frames(self, xy: np.ndarray, headings: np.ndarray) -> tuple:
        """The plane's height (K,) under base positions ``xy`` (K, 2) and the base's reference rotations (K, 3, 3)
        at ``headings`` (K,) (:meth:`base_rotation`)."""
        return self.height(xy), base_rotation(self.normal, np.atleast_1d(np.asarray(headings, dtype=float)))

    def footholds(self, xy: np.ndarray, offset: float) -> np.ndarray:
        """The footholds (K, 3) of targets ``xy`` (K, 2): the points of the plane (offset ``offset``) above them."""
        xy = np.asarray(xy, dtype=float)
        return np.column_stack([xy, self.height(xy, offset)])

    def base_rotation(self, heading: float) -> np.ndarray:
        """The base's reference rotation (3, 3) at ``heading`` (rad): ``z`` along the normal, ``x`` the heading tilted into the plane."""
        return base_rotation(self.normal, heading)
