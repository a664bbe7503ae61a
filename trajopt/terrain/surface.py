"""A foot region: a patch of terrain surface over a convex polygon, numerically and as CasADi rows.

A :class:`Surface` is where a stance foot may stand. Its height over the world
``(x, y)`` plane is the bilinear patch

    z = h(x, y) = c0 + c1 x + c2 y + c3 x y           (world frame, m)

(a horizontal block top has ``c1 = c2 = c3 = 0``, an inclined plane ``c3 = 0``,
a height-map cell all four), and its region is the convex polygon
``{(x, y) : A [x; y] <= b}`` (rows of ``A`` unit outward normals, so ``b``
shrinks by a margin m to ``b - m``; no rows: unbounded). The upward unit
normal at ``(x, y)`` is

    n = (-dh/dx, -dh/dy, 1) / norm((-dh/dx, -dh/dy, 1)),   dh/dx = c1 + c3 y,  dh/dy = c2 + c3 x.

An optimal-control problem holds a stance foot ``p`` on its surface through
the module functions :func:`surface_height`, :func:`surface_normal` and
:func:`region_rows`, which read a parameter vector (:meth:`Surface.params`:
``[c0, c1, c2, c3, a_1x, a_1y, b_1, ..., a_Mx, a_My, b_M]``, padded to ``M``
rows with the always-satisfied row ``0 x + 0 y <= 1``) and run on numpy
arrays and CasADi SX/MX alike: the same formulas the numeric checks use.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np
import quadprog

from lie import _backend as B

#: Entries of a surface's parameter vector before its region rows.
HEIGHT_COEFFICIENTS = 4
#: Entries per region row ``(a_x, a_y, b)``.
ROW_SIZE = 3
#: The padding row ``0 x + 0 y <= 1`` (always satisfied, no gradient).
PADDING_ROW = (0.0, 0.0, 1.0)


@dataclass(frozen=True, eq=False)
class Surface:
    """A foot region (module docstring): height coefficients ``c`` (4,), region ``A`` (M, 2), ``b`` (M,).

    ``name`` says which terrain feature it is (messages, plots); ``vertices``
    (V, 2), counter-clockwise, outline a bounded region for drawing (empty when
    unbounded).
    """

    c: np.ndarray
    A: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    b: np.ndarray = field(default_factory=lambda: np.zeros(0))
    name: str = "surface"
    vertices: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))

    def __post_init__(self) -> None:
        c = B.check_finite(B.numeric_array(self.c, "c").reshape(-1), "c")
        A = B.numeric_array(self.A, "A").reshape(-1, 2)
        b = B.numeric_array(self.b, "b").reshape(-1)
        if c.shape != (HEIGHT_COEFFICIENTS,):
            raise ValueError(f"c: expected {HEIGHT_COEFFICIENTS} height coefficients (c0, c1, c2, c3), got shape {c.shape}")
        if A.shape[0] != b.shape[0]:
            raise ValueError(f"A, b: expected one b per row of A, got {A.shape[0]} rows and {b.shape[0]} values")
        B.check_finite(A, "A")
        B.check_finite(b, "b")
        norms = np.linalg.norm(A, axis=1)
        if (np.abs(norms - 1.0) > 1e-9).any():
            raise ValueError(f"A: expected unit row normals, got norms {norms}")
        object.__setattr__(self, "c", c)
        object.__setattr__(self, "A", A)
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "vertices", B.numeric_array(self.vertices, "vertices").reshape(-1, 2))

    # ------------------------------------------------------------ numeric
    @property
    def bounded(self) -> bool:
        """True when the region has rows (a bounded or half-bounded polygon)."""
        return self.A.shape[0] > 0

    @property
    def horizontal(self) -> bool:
        """True when the surface is a horizontal plane (``c1 = c2 = c3 = 0``)."""
        return not np.any(self.c[1:])

    def height(self, xy: Any) -> np.ndarray:
        """Surface height ``h(x, y)`` (K,) [m] at points ``xy`` (2,) or (K, 2)."""
        P = _points(xy)
        return surface_height(self.c, P[:, 0], P[:, 1])

    def normal(self, xy: Any) -> np.ndarray:
        """Upward unit normals (K, 3) at points ``xy`` (2,) or (K, 2)."""
        P = _points(xy)
        return np.stack(surface_normal(self.c, P[:, 0], P[:, 1]), axis=-1)

    def margin_to_edge(self, xy: Any) -> np.ndarray:
        """Signed distance (K,) [m] from each point to the region's boundary: positive inside, ``inf`` when unbounded."""
        P = _points(xy)
        if not self.bounded:
            return np.full(len(P), np.inf)
        return np.min(self.b[None, :] - P @ self.A.T, axis=1)

    def contains(self, xy: Any, margin: float = 0.0, tol: float = 1e-12) -> np.ndarray:
        """Whether each point (K,) lies in the region shrunk by ``margin`` (to ``tol``)."""
        return self.margin_to_edge(xy) >= margin - tol

    def shrunk(self, margin: float) -> "Surface":
        """The same surface over its region shrunk by ``margin`` [m] (each row's ``b`` minus it)."""
        return Surface(self.c, self.A, self.b - float(margin), self.name, self.vertices)

    def closest_point(self, xy: Any) -> np.ndarray:
        """The point (2,) of the region closest to ``xy`` (a convex projection; ``xy`` itself inside).

        Raises ``ValueError`` when the region is empty (e.g. shrunk by more than its half width).
        """
        p = B.vector(xy, 2, "xy")
        if not self.bounded or self.contains(p)[0]:
            return p.copy()
        try:
            return quadprog.solve_qp(np.eye(2), p, -self.A.T, -self.b)[0]
        except ValueError:
            raise ValueError(f"{self.name}: its foot region is empty (rows A = {self.A.tolist()}, b = {self.b.tolist()})") from None

    def point(self, xy: Any) -> np.ndarray:
        """The surface point (3,) above ``xy`` (2,)."""
        p = B.vector(xy, 2, "xy")
        return np.array([p[0], p[1], float(self.height(p)[0])])

    def params(self, rows: Optional[int] = None) -> np.ndarray:
        """Parameter vector (4 + 3 rows,) of this surface (module docstring), padded to ``rows`` region rows."""
        rows = self.A.shape[0] if rows is None else int(rows)
        if rows < self.A.shape[0]:
            raise ValueError(f"rows: {self.name} has {self.A.shape[0]} region rows, cannot pack it into {rows}")
        table = np.tile(np.asarray(PADDING_ROW), (rows, 1))
        table[: self.A.shape[0], :2], table[: self.A.shape[0], 2] = self.A, self.b
        return np.concatenate([self.c, table.ravel()])


def _points(xy: Any) -> np.ndarray:
    P = B.numeric_array(xy, "xy")
    P = P.reshape(1, 2) if P.shape == (2,) else P
    if P.ndim != 2 or P.shape[1] != 2:
        raise ValueError(f"xy: expected shape (2,) or (K, 2), got {np.shape(xy)}")
    return B.check_finite(P, "xy")


# ------------------------------------------------------------------ expressions on parameter vectors
def surface_height(params: Any, x: Any, y: Any) -> Any:
    """``h(x, y) = c0 + c1 x + c2 y + c3 x y`` of a surface parameter vector (numpy or CasADi)."""
    return params[0] + params[1] * x + params[2] * y + params[3] * x * y


def surface_slope(params: Any, x: Any, y: Any) -> tuple:
    """``(dh/dx, dh/dy)`` of a surface parameter vector at ``(x, y)`` (numpy or CasADi)."""
    return params[1] + params[3] * y, params[2] + params[3] * x


def surface_normal(params: Any, x: Any, y: Any) -> tuple:
    """Upward unit normal ``(n_x, n_y, n_z)`` of a surface parameter vector at ``(x, y)`` (numpy or CasADi)."""
    gx, gy = surface_slope(params, x, y)
    scale = 1.0 / B.sqrt(1.0 + gx * gx + gy * gy)
    return -gx * scale, -gy * scale, scale + 0.0 * x


def surface_tangents(normal: Any) -> tuple:
    """Two unit tangents ``(t1, t2)`` orthogonal to a unit ``normal`` (3,) (numpy or CasADi column).

    ``t1 = (n_z, 0, -n_x) / |.|`` (the world ``x`` axis tilted into the
    surface; defined for every normal with ``n_z > 0``) and ``t2 = n x t1``;
    for ``n = e_z`` they are ``e_x`` and ``e_y``.
    """
    nx, nz = normal[0], normal[2]
    scale = 1.0 / B.sqrt(nx * nx + nz * nz)
    t1 = B.vcat([nz * scale, 0.0 * nz, -nx * scale])
    return t1, B.cross(normal, t1)


def region_rows(params: Any, x: Any, y: Any, rows: int) -> list:
    """``a_j x + a_j y - b_j`` (j = 1..rows; <= 0 inside the region) of a surface parameter vector."""
    out = []
    for j in range(rows):
        ax, ay, b = (params[HEIGHT_COEFFICIENTS + ROW_SIZE * j + i] for i in range(ROW_SIZE))
        out.append(ax * x + ay * y - b)
    return out


def params_size(rows: int) -> int:
    """Length of a surface parameter vector with ``rows`` region rows."""
    return HEIGHT_COEFFICIENTS + ROW_SIZE * rows


def polygon_halfspaces(vertices: Any, name: str = "vertices") -> tuple:
    """``(A, b)`` of the convex polygon with counter-clockwise ``vertices`` (V, 2): ``A p <= b`` inside.

    Raises ``ValueError`` naming ``name`` unless the vertices (at least 3,
    distinct) turn left at every corner (a strictly convex counter-clockwise polygon).
    """
    V = B.check_finite(B.numeric_array(vertices, name), name)
    if V.ndim != 2 or V.shape[1] != 2 or V.shape[0] < 3:
        raise ValueError(f"{name}: expected at least 3 polygon vertices of shape (V, 2), got {V.shape}")
    edges = np.roll(V, -1, axis=0) - V
    lengths = np.linalg.norm(edges, axis=1)
    if (lengths < 1e-9).any():
        raise ValueError(f"{name}: repeated vertex at index {int(np.argmin(lengths))}")
    turns = edges[:, 0] * np.roll(edges, -1, axis=0)[:, 1] - edges[:, 1] * np.roll(edges, -1, axis=0)[:, 0]
    if (turns <= 1e-12).any():
        raise ValueError(f"{name}: expected a convex polygon with counter-clockwise vertices; corner {int(np.argmin(turns))} does not turn left")
    A = np.column_stack([edges[:, 1], -edges[:, 0]]) / lengths[:, None]  # outward normals of a CCW polygon
    return A, np.einsum("ij,ij->i", A, V)
