"""Unit quaternions: products, attitude Jacobian, rotation matrices, axis-angle.

Conventions (docs/conventions.md): ``q = [qw, qx, qy, qz]``, Hamilton product, ``q``
rotates body vectors into the world, ``p_world = quat_to_rot(q) @ p_body``.
``q1 * q2 = L_mult(q1) @ q2 = R_mult(q2) @ q1``. With ``H = [0; I3]`` the
attitude Jacobian is ``G(q) = L_mult(q) @ H`` and ``qdot = 0.5 G(q) w`` for the
body angular velocity ``w``.

Every function accepts numpy (returns numpy) or CasADi SX/MX (returns the same).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import _backend as B

#: ``H = [0; I3]`` (4x3): embeds a 3-vector as a pure quaternion.
H = np.vstack([np.zeros((1, 3)), np.eye(3)])
#: ``T = diag(1, -1, -1, -1)``: ``quat_conj(q) = T @ q``.
T = np.diag([1.0, -1.0, -1.0, -1.0])

#: Default switch-over angle (rad) to Taylor series near the zero rotation.
SMALL_ANGLE = 1e-4
#: Tolerance on ``| |q| - 1 |`` where a numeric unit quaternion is required.
UNIT_TOL = 1e-6


def check_unit_quaternion(q: Any, name: str = "q") -> None:
    """Raise ``ValueError`` unless a numeric ``q`` (4,) has unit norm to :data:`UNIT_TOL`.

    Symbolic ``q`` is never checked (only its shape).
    """
    q = B.vector(B.rotation_argument(q, "quat"), 4, name)
    if not B.is_symbolic(q):
        nrm = float(np.linalg.norm(q))
        if abs(nrm - 1.0) > UNIT_TOL:
            raise ValueError(f"{name}: expected a unit quaternion [qw, qx, qy, qz], got norm {nrm:.9g}")


def skew(v: Any) -> Any:
    """Skew-symmetric matrix ``[v]x`` with ``skew(a) @ b = a x b`` (3x3)."""
    v = B.vector(v, 3, "v")
    return B.block([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def quat_conj(q: Any) -> Any:
    """Conjugate ``[qw, -qx, -qy, -qz]`` (the inverse of a unit quaternion)."""
    q = B.vector(B.rotation_argument(q, "quat"), 4, "q")
    return B.vcat([q[0], -q[1], -q[2], -q[3]])


def L_mult(q: Any) -> Any:
    """Left-multiplication matrix: ``quat_mult(q, p) = L_mult(q) @ p`` (4x4)."""
    q = B.vector(B.rotation_argument(q, "quat"), 4, "q")
    w, x, y, z = q[0], q[1], q[2], q[3]
    return B.block([[w, -x, -y, -z], [x, w, -z, y], [y, z, w, -x], [z, -y, x, w]])


def R_mult(q: Any) -> Any:
    """Right-multiplication matrix: ``quat_mult(p, q) = R_mult(q) @ p`` (4x4)."""
    q = B.vector(B.rotation_argument(q, "quat"), 4, "q")
    w, x, y, z = q[0], q[1], q[2], q[3]
    return B.block([[w, -x, -y, -z], [x, w, z, -y], [y, -z, w, x], [z, y, -x, w]])


def quat_mult(q1: Any, q2: Any) -> Any:
    """Hamilton product ``q1 * q2`` (4,)."""
    q2 = B.vector(B.rotation_argument(q2, "quat"), 4, "q2")
    return L_mult(q1) @ q2


def attitude_jacobian(q: Any) -> Any:
    """Attitude Jacobian ``G(q) = L_mult(q) @ H`` (4x3); ``qdot = 0.5 G(q) w``."""
    return L_mult(q) @ H


def quat_to_rot(q: Any) -> Any:
    """Rotation matrix (body to world) of a unit quaternion (3x3).

    Uses the homogeneous form ``R = H^T L(q) R(q)^T H``, exact for unit ``q``.
    """
    q = B.vector(B.rotation_argument(q, "quat"), 4, "q")
    w, x, y, z = q[0], q[1], q[2], q[3]
    return B.block(
        [
            [w * w + x * x - y * y - z * z, 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), w * w - x * x + y * y - z * z, 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z],
        ]
    )


def rot_to_quat(R: Any) -> Any:
    """Unit quaternion (``qw >= 0``) of an orthonormal rotation matrix.

    Shepperd's method: of the four candidate formulas the one with the largest
    pivot (``1 + tr R``, or ``1 + 2 R_ii - tr R``) is used, so no division by a
    small number happens for any rotation, including 180 degree turns.
    """
    R = B.matrix(B.rotation_argument(R, "matrix"), (3, 3), "R")
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    pivots = [1 + tr, 1 + 2 * R[0, 0] - tr, 1 + 2 * R[1, 1] - tr, 1 + 2 * R[2, 2] - tr]

    def candidate(i: int) -> Any:
        s = B.sqrt(B.if_else(pivots[i] > 1e-12, pivots[i], 1.0))  # = 2|q_i|, safe branch
        if i == 0:
            return B.vcat([s / 2, (R[2, 1] - R[1, 2]) / (2 * s), (R[0, 2] - R[2, 0]) / (2 * s), (R[1, 0] - R[0, 1]) / (2 * s)])
        if i == 1:
            return B.vcat([(R[2, 1] - R[1, 2]) / (2 * s), s / 2, (R[0, 1] + R[1, 0]) / (2 * s), (R[0, 2] + R[2, 0]) / (2 * s)])
        if i == 2:
            return B.vcat([(R[0, 2] - R[2, 0]) / (2 * s), (R[0, 1] + R[1, 0]) / (2 * s), s / 2, (R[1, 2] + R[2, 1]) / (2 * s)])
        return B.vcat([(R[1, 0] - R[0, 1]) / (2 * s), (R[0, 2] + R[2, 0]) / (2 * s), (R[1, 2] + R[2, 1]) / (2 * s), s / 2])

    cands = [candidate(i) for i in range(4)]
    # pick the largest pivot: compare pairwise, ties go to the lower index
    best01 = B.if_else(pivots[0] >= pivots[1], cands[0], cands[1])
    p01 = B.if_else(pivots[0] >= pivots[1], pivots[0], pivots[1])
    best23 = B.if_else(pivots[2] >= pivots[3], cands[2], cands[3])
    p23 = B.if_else(pivots[2] >= pivots[3], pivots[2], pivots[3])
    q = B.if_else(p01 >= p23, best01, best23)
    return q * B.sign(q[0])


def axis_angle_to_quat(phi: Any, tol: float = SMALL_ANGLE) -> Any:
    """Quaternion ``exp(phi) = [cos(|phi|/2), sin(|phi|/2) phi/|phi|]`` (4,).

    ``phi`` is a rotation vector (axis times angle, radians). Below ``|phi| <
    tol`` Taylor series in ``|phi|^2`` replace the ratios, so values and first
    derivatives are finite (and exact to round-off) at and near zero, also
    under CasADi differentiation.
    """
    phi = B.vector(B.rotation_argument(phi, "rotvec"), 3, "phi")
    th2 = B.dot(phi, phi)
    small = th2 < tol * tol
    th = B.sqrt(B.if_else(small, 1.0, th2))  # safe: never sqrt(0) in a used branch
    c_exact, s_exact = B.cos(th / 2), B.sin(th / 2) / th
    c_taylor = 1 - th2 / 8 + th2 * th2 / 384
    s_taylor = 0.5 - th2 / 48 + th2 * th2 / 3840
    c = B.if_else(small, c_taylor, c_exact)
    s = B.if_else(small, s_taylor, s_exact)
    return B.vcat([c, s * phi])


def quat_to_axis_angle(q: Any, tol: float = SMALL_ANGLE, shortest: bool = True) -> Any:
    """Rotation vector ``phi`` (3,) of a quaternion, shortest path: ``|phi| <= pi``.

    ``q`` and ``-q`` give the same ``phi`` (the sign is flipped when ``qw < 0``).
    ``phi = 2 atan2(|v|, w) v / |v|`` for ``q = [w, v]``; below ``|v| < tol``
    the ratio uses its series ``(2/w)(1 - |v|^2/(3 w^2))`` so values and first
    derivatives are finite near the identity.

    With ``shortest=False`` the sign of ``q`` is kept: ``qw < 0`` gives an
    angle ``|phi|`` in ``(pi, 2 pi)``, so ``phi`` is continuous along a
    continuous quaternion path through ``qw = 0`` (singular at ``q = [-1, 0,
    0, 0]``, a turn by ``2 pi``; the series is used only near ``qw = +1``).
    """
    q = B.vector(B.rotation_argument(q, "quat"), 4, "q")
    s = B.sign(q[0]) if shortest else 1.0
    w, v = s * q[0], s * q[1:4]
    n2 = B.dot(v, v)
    small = n2 < tol * tol if shortest else B.logical_and(n2 < tol * tol, w > 0)
    n = B.sqrt(B.if_else(small, 1.0, n2))
    w_safe = B.if_else(small, w, 1.0)
    ratio_exact = 2 * B.atan2(n, w) / n
    ratio_taylor = (2 / w_safe) * (1 - n2 / (3 * w_safe * w_safe))
    return B.if_else(small, ratio_taylor, ratio_exact) * v


def quat_error(q: Any, q0: Any) -> Any:
    """Rotation vector (3,) from ``q0`` to ``q`` in the body frame of ``q0``: ``axis_angle(conj(q0) * q)``, ``|.| <= pi``."""
    return quat_to_axis_angle(quat_mult(quat_conj(q0), q))


def quat_angle(q: Any, q0: Any) -> Any:
    """Angle (rad, in ``[0, pi]``) between the attitudes ``q0`` and ``q``: ``|quat_error(q, q0)|``, e.g. a replay's drift from its plan."""
    return B.norm(quat_error(q, q0))
