"""A height map: heights on a regular grid, interpolated bilinearly.

``HeightMap(heights, spacing, origin)``: ``heights[i, j]`` [m] is the height
at ``(x_i, y_j) = (origin[0] + i dx, origin[1] + j dy)``. Inside cell
``[x_i, x_i+1] x [y_j, y_j+1]``, with ``a = (x - x_i) / dx`` and
``b = (y - y_j) / dy``,

    h = (1 - a)(1 - b) h_ij + a (1 - b) h_i+1,j + (1 - a) b h_i,j+1 + a b h_i+1,j+1,

which is ``c0 + c1 x + c2 y + c3 x y`` in world coordinates (a
:class:`~.surface.Surface` patch). Outside the grid the height is that of the
nearest grid point on its border (coordinates clamped). The normal is
``(-dh/dx, -dh/dy, 1)`` normalized (within a cell; on a cell edge, the cell
above and right of it).

Foot regions are single cells, shrunk by the margin (so ``margin`` must stay
below half a cell). A swing's envelope is the height map itself (no steps,
no corridor): in CasADi the bilinear interpolation is ``casadi.interpolant``
(``"linear"``) on clamped coordinates, whose value and first derivatives are
exact; its second derivatives are taken as zero, so IPOPT's Hessian misses the
cross term ``d2h/dxdy`` of the cells a swinging foot crosses (the constraint
itself is exact).
"""
from __future__ import annotations

from typing import Any, List, Optional

import casadi as ca
import numpy as np

from lie import _backend as B

from .base import SWING_HALF_WIDTH, Terrain, as_points, swing_frame
from .geometry import HeightGrid, Solid
from .profile import SwingProfile
from .surface import Surface

#: How far below the lowest height [m] the drawn and simulated solid reaches.
BASE_DEPTH = 0.2


class HeightMap(Terrain):
    """Bilinear height map (module docstring): ``heights`` (nx, ny) [m], ``spacing`` (dx, dy) or one value [m], ``origin`` (2,) [m]."""

    def __init__(self, heights: Any, spacing: Any = 0.1, origin: Any = (0.0, 0.0), ramp: float = 0.04, margin: Optional[float] = 0.005, name: str = "height map") -> None:
        super().__init__(ramp, margin)
        H = B.check_finite(B.numeric_array(heights, "heights"), "heights")
        if H.ndim != 2 or min(H.shape) < 2:
            raise ValueError(f"heights: expected a 2D grid of at least 2 x 2 heights, got shape {H.shape}")
        d = np.broadcast_to(B.numeric_array(spacing, "spacing"), (2,)).astype(float)
        if not (np.isfinite(d).all() and (d > 0).all()):
            raise ValueError(f"spacing: expected positive grid spacings (dx, dy), got {spacing!r}")
        if not self.margin < 0.5 * d.min():
            raise ValueError(f"margin: expected less than half a cell ({0.5 * d.min():g} m), got {self.margin:g}")
        self.heights, self.spacing, self.origin = H.copy(), d.copy(), B.vector(origin, 2, "origin")
        self.name = name
        nx, ny = H.shape
        self.x = self.origin[0] + d[0] * np.arange(nx)
        self.y = self.origin[1] + d[1] * np.arange(ny)
        self._interpolant = ca.interpolant("height_map", "linear", [self.x, self.y], H.ravel(order="F"))

    @property
    def flat_height(self) -> Optional[float]:
        return float(self.heights[0, 0]) if np.all(self.heights == self.heights[0, 0]) else None

    # ------------------------------------------------------------ surface
    def _cell(self, P: np.ndarray) -> tuple:
        """Cell indices (K,), (K,) and clamped points (K, 2) of points."""
        Q = np.column_stack([np.clip(P[:, 0], self.x[0], self.x[-1]), np.clip(P[:, 1], self.y[0], self.y[-1])])
        i = np.clip(np.floor((Q[:, 0] - self.x[0]) / self.spacing[0]).astype(int), 0, len(self.x) - 2)
        j = np.clip(np.floor((Q[:, 1] - self.y[0]) / self.spacing[1]).astype(int), 0, len(self.y) - 2)
        return i, j, Q

    def cell_coefficients(self, i: int, j: int) -> np.ndarray:
        """``(c0, c1, c2, c3)`` of cell ``(i, j)``'s bilinear patch in world coordinates (module docstring)."""
        xs, ys = self.x[[i, i + 1]], self.y[[j, j + 1]]
        corners = [(xs[a], ys[b], self.heights[i + a, j + b]) for a in (0, 1) for b in (0, 1)]
        M = np.array([[1.0, x, y, x * y] for x, y, _ in corners])
        return np.linalg.solve(M, np.array([h for _, _, h in corners]))

    def height(self, xy: Any) -> np.ndarray:
        i, j, Q = self._cell(as_points(xy))
        a = (Q[:, 0] - self.x[i]) / self.spacing[0]
        b = (Q[:, 1] - self.y[j]) / self.spacing[1]
        H = self.heights
        return (1 - a) * (1 - b) * H[i, j] + a * (1 - b) * H[i + 1, j] + (1 - a) * b * H[i, j + 1] + a * b * H[i + 1, j + 1]

    def normal(self, xy: Any) -> np.ndarray:
        P = as_points(xy)
        i, j, Q = self._cell(P)
        out = np.zeros((len(P), 3))
        for k in range(len(P)):
            out[k] = self._cell_region(i[k], j[k], 0.0).normal(Q[k])[0]
        return out

    def interpolated_height(self, x: Any, y: Any) -> Any:
        """The bilinear height at ``(x, y)``: numpy (this class's formula) or CasADi (``casadi.interpolant``)."""
        if not B.is_symbolic(x, y):
            return self.height(np.column_stack([np.ravel(x), np.ravel(y)]))
        xc = ca.fmin(ca.fmax(x, self.x[0]), self.x[-1])
        yc = ca.fmin(ca.fmax(y, self.y[0]), self.y[-1])
        return self._interpolant(ca.vertcat(xc, yc))

    # ------------------------------------------------------------ foot regions
    def _cell_region(self, i: int, j: int, margin: float) -> Surface:
        x0, x1, y0, y1 = self.x[i], self.x[i + 1], self.y[j], self.y[j + 1]
        A = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
        b = np.array([x1, -x0, y1, -y0]) - margin
        vertices = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
        return Surface(self.cell_coefficients(i, j), A, b, f"cell ({i}, {j})", vertices)

    def region_at(self, xy: Any, margin: Optional[float] = None) -> Optional[Surface]:
        i, j, _ = self._cell(as_points(xy))
        return self._cell_region(int(i[0]), int(j[0]), self._margin(margin))

    def regions_near(self, xy: Any, radius: float, margin: Optional[float] = None) -> List[Surface]:
        p, m = as_points(xy)[0], self._margin(margin)
        i_lo, j_lo, _ = self._cell((p - radius)[None])
        i_hi, j_hi, _ = self._cell((p + radius)[None])
        out = []
        for i in range(int(i_lo[0]), int(i_hi[0]) + 1):
            for j in range(int(j_lo[0]), int(j_hi[0]) + 1):
                region = self._cell_region(i, j, m)
                if np.linalg.norm(region.closest_point(p) - p) <= radius:
                    out.append(region)
        return out

    # ------------------------------------------------------------ swings
    def swing_profile(self, start: Any, end: Any, half_width: float = SWING_HALF_WIDTH, heading: float = 0.0) -> SwingProfile:
        a, u, _ = swing_frame(start, end, heading)
        return SwingProfile(a, u, np.zeros(3), np.zeros((0, 2)), self.ramp, np.inf, base=self.interpolated_height)

    def solids(self) -> List[Solid]:
        return [HeightGrid(self.heights.copy(), self.origin.copy(), self.spacing.copy(), float(self.heights.min()) - BASE_DEPTH, self.name)]

    def describe(self) -> str:
        nx, ny = self.heights.shape
        return f"{self.name}: {nx} x {ny} heights {self.heights.min():.3g}..{self.heights.max():.3g} m, spacing {self.spacing[0]:g} x {self.spacing[1]:g} m"
