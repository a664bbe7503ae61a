"""Spatial (6D) algebra on CasADi SX expressions, Featherstone-style, pinocchio's order.

- A motion (twist) ``m = [v; w]`` (6 x 1): linear velocity of the frame origin,
  then angular velocity, both in that frame's axes.
- A force (wrench) ``f = [f; n]`` (6 x 1): force, then moment about the frame origin.
- A transform ``X = (R, p)`` (3x3, 3x1) is the placement ``A_M_B`` of frame B in
  frame A: ``x_A = R x_B + p``. ``act_*`` maps B coordinates to A coordinates
  (``A_X_B m``, ``A_X*_B f``), ``inv_act_*`` maps A to B.
- A rigid-body inertia is ``(mass, h, I)``, ``h = mass c`` the first moment and
  ``I`` the rotational inertia about the frame ORIGIN (not the centre of mass),
  so that ``I m = [mass v + w x h; I w + h x v]``; sums of inertias are sums of
  the three fields (composite bodies).
- An articulated-body inertia is a symmetric 6x6 ``[[A, B], [B^T, C]]`` (force =
  ``A v + B w``, moment ``= B^T v + C w``).

Inputs may be numpy constants or SX; results are SX (casadi DM when every input
is numeric, numpy for :meth:`RigidInertia.matrix`).
Symmetric results reuse one SX node for ``(i, j)`` and ``(j, i)``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import casadi as ca
import numpy as np

from lie import skew

#: Placement ``(R, p)`` of a frame B in a frame A (``x_A = R x_B + p``).
Transform = tuple[Any, Any]


def compose(a: Transform, b: Transform) -> Transform:
    """``A_M_C = A_M_B * B_M_C`` for ``a = A_M_B``, ``b = B_M_C``."""
    Ra, pa = a
    Rb, pb = b
    return ca.mtimes(Ra, Rb), ca.mtimes(Ra, pb) + pa


def act_motion(X: Transform, m: Any) -> ca.SX:
    """Motion(s) in B coordinates -> A coordinates: ``w_A = R w``, ``v_A = R v + p x w_A``.

    ``m`` is 6 x 1 or 6 x n (one motion per column), like every ``*act*`` below.
    """
    R, p = X
    w = ca.mtimes(R, m[3:, :])
    return ca.vertcat(ca.mtimes(R, m[:3, :]) + ca.mtimes(skew(p), w), w)


def inv_act_motion(X: Transform, m: Any) -> ca.SX:
    """Motion(s) in A coordinates -> B coordinates: ``w_B = R^T w``, ``v_B = R^T (v - p x w)``."""
    R, p = X
    w = m[3:, :]
    return ca.vertcat(ca.mtimes(R.T, m[:3, :] - ca.mtimes(skew(p), w)), ca.mtimes(R.T, w))


def act_force(X: Transform, f: Any) -> ca.SX:
    """Force(s) in B coordinates -> A coordinates: ``f_A = R f``, ``n_A = R n + p x f_A``."""
    R, p = X
    lin = ca.mtimes(R, f[:3, :])
    return ca.vertcat(lin, ca.mtimes(R, f[3:, :]) + ca.mtimes(skew(p), lin))


def cross_motion(v: Any, m: Any) -> ca.SX:
    """Motion cross product ``v x m = [w x m_v + v x m_w; w x m_w]`` for ``v = [v; w]``."""
    w = v[3:]
    return ca.vertcat(ca.cross(w, m[:3]) + ca.cross(v[:3], m[3:]), ca.cross(w, m[3:]))


def cross_force(v: Any, f: Any) -> ca.SX:
    """Force cross product ``v x* f = [w x f; w x n + v x f]`` for ``v = [v; w]``."""
    w = v[3:]
    return ca.vertcat(ca.cross(w, f[:3]), ca.cross(w, f[3:]) + ca.cross(v[:3], f[:3]))


def axis_rotation(axis: np.ndarray, angle: Any) -> ca.SX:
    """Rotation by ``angle`` about the constant unit ``axis`` (3x3).

    Rodrigues: ``R = cos I + sin [a]x + (1 - cos) a a^T``. For ``a = +-e_k``
    the cheap form (ones and zeros on row/column ``k``) is built directly.
    """
    c, s = ca.cos(angle), ca.sin(angle)
    aligned = np.flatnonzero(np.abs(axis) == 1.0)
    if aligned.size == 1:
        k = int(aligned[0])
        s = s * float(axis[k])
        i, j = (k + 1) % 3, (k + 2) % 3
        R = ca.SX.eye(3)
        R[i, i], R[i, j], R[j, i], R[j, j] = c, -s, s, c
        return R
    return c * np.eye(3) + s * skew(axis) + (1 - c) * np.outer(axis, axis)


def symmetric(n: int, entry: Callable[[int, int], Any]) -> ca.SX:
    """Symmetric n x n SX matrix from ``entry(i, j)`` for ``i <= j`` (each computed once)."""
    rows: list[list[Any]] = [[None] * n for _ in range(n)]
    for i in range(n):
        for j in range(i, n):
            rows[i][j] = rows[j][i] = entry(i, j)
    return ca.vertcat(*[ca.horzcat(*row) for row in rows])


def _sym_abt(A: Any, B: Any) -> ca.SX:
    """``A B^T`` (3x3) when it is known to be symmetric (only ``i <= j`` computed)."""
    A, B = (ca.DM(x) if isinstance(x, np.ndarray) else x for x in (A, B))
    return symmetric(3, lambda i, j: ca.dot(A[i, :], B[j, :]))


def act_articulated(X: Transform, IA: Any) -> ca.SX:
    """Articulated inertia in B coordinates -> A coordinates: ``A_X*_B IA B_X_A`` (6x6).

    Rotation first (``A' = R A R^T``, ``B' = R B R^T``, ``C' = R C R^T``), then the
    shift by ``p`` with ``P = [p]x``: ``A_A = A'``, ``B_A = B' - A'P`` and
    ``C_A = C' + N + N^T`` with ``N = P (B' - A'P / 2)``
    (``= C' - B'^T P + P B' - P A' P``).
    """
    R, p = X
    A1 = _sym_abt(ca.mtimes(R, IA[:3, :3]), R)
    B1 = ca.mtimes(ca.mtimes(R, IA[:3, 3:]), R.T)
    C1 = _sym_abt(ca.mtimes(R, IA[3:, 3:]), R)
    P = skew(p)
    K = ca.mtimes(A1, P)
    B2 = B1 - K
    N = ca.mtimes(P, B1 - 0.5 * K)
    C2 = symmetric(3, lambda i, j: C1[i, j] + N[i, j] + N[j, i])
    return ca.vertcat(ca.horzcat(A1, B2), ca.horzcat(B2.T, C2))


@dataclass(frozen=True)
class RigidInertia:
    """Rigid-body spatial inertia about a frame origin, in that frame's axes.

    ``mass`` (scalar), ``h = mass * com`` (3,), ``I`` rotational inertia about
    the origin (3x3). Numeric (numpy) or SX fields.
    """

    mass: Any
    h: Any
    I: Any

    @classmethod
    def from_com(cls, mass: float, com: np.ndarray, inertia_com: np.ndarray) -> "RigidInertia":
        """From pinocchio's parameters: ``I = I_com + mass (|c|^2 I3 - c c^T)`` (parallel axis).

        Written so that ``I`` is exactly symmetric in floating point.
        """
        inertia = inertia_com + mass * (np.dot(com, com) * np.eye(3) - np.outer(com, com))
        return cls(float(mass), mass * com, inertia)

    def apply(self, m: Any) -> ca.SX:
        """Momentum ``I m = [mass v + w x h; I w + h x v]`` of the motion ``m = [v; w]``."""
        v, w = m[:3], m[3:]
        return ca.vertcat(self.mass * v + ca.cross(w, self.h), ca.mtimes(self.I, w) + ca.cross(self.h, v))

    def act(self, X: Transform) -> "RigidInertia":
        """Inertia in B coordinates -> A coordinates for ``X = A_M_B``.

        ``h_A = R h + mass p``; ``I_A = R I R^T - (r p^T + p r^T) - mass p p^T
        + (2 r.p + mass |p|^2) I3`` with ``r = R h`` (parallel axis theorem).
        """
        R, p = X
        r = ca.mtimes(R, self.h)
        IR = _sym_abt(ca.mtimes(R, self.I), R)
        diag = 2 * ca.dot(r, p) + self.mass * ca.dot(p, p)
        I = symmetric(
            3,
            lambda i, j: IR[i, j] - r[i] * p[j] - p[i] * r[j] - self.mass * p[i] * p[j] + (diag if i == j else 0),
        )
        return RigidInertia(self.mass, r + self.mass * p, I)

    def __add__(self, other: "RigidInertia") -> "RigidInertia":
        I = symmetric(3, lambda i, j: self.I[i, j] + other.I[i, j])
        return RigidInertia(self.mass + other.mass, self.h + other.h, I)

    def matrix(self) -> Any:
        """The 6x6 matrix ``[[mass I3, -[h]x], [[h]x, I]]`` (numpy if numeric)."""
        H = skew(self.h)
        if isinstance(H, np.ndarray) and isinstance(self.I, np.ndarray):
            return np.block([[self.mass * np.eye(3), -H], [H, self.I]])
        return ca.vertcat(ca.horzcat(self.mass * ca.SX.eye(3), -H), ca.horzcat(H, self.I))
