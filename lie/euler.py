"""ZYX Euler angles ``e = (yaw, pitch, roll)``, ordered as in OCS2.

``euler_zyx_to_rot(e) = Rz(yaw) Ry(pitch) Rx(roll)`` (body to world): turn
about world z by yaw, then about the new y by pitch, then about the new x by
roll. :func:`rot_to_euler_zyx` returns yaw and roll in ``(-pi, pi]`` and pitch
in ``[-pi/2, pi/2]``.

At ``pitch = +-pi/2`` (gimbal lock) yaw and roll turn about the same axis
and the rotation fixes only ``roll -+ yaw``: :func:`rot_to_euler_zyx` then
takes yaw from the (round-off sized) first column, 0 when it is exactly zero,
and roll to match, so the angles always reproduce the matrix; its derivative
is singular there, as is the rate matrix :func:`euler_zyx_rate_matrix`
(``1/cos(pitch)``), whose numeric form raises.

Every function accepts numpy (returns numpy) or CasADi SX/MX (returns the same type).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import _backend as B
from .quaternion import check_unit_quaternion, quat_mult, quat_to_rot


def _angles(e: Any) -> tuple[Any, Any, Any]:
    e = B.vector(B.rotation_argument(e, "euler_zyx"), 3, "e")
    return e[0], e[1], e[2]


def yaw_to_rot(yaw: Any) -> Any:
    """Rotation ``Rz(yaw)`` (3x3) by ``yaw`` (rad) about the z axis; a numpy array of angles (...) gives (..., 3, 3)."""
    if B.is_symbolic(yaw):
        c, s = B.cos(yaw), B.sin(yaw)
        return B.block([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    yaw = np.asarray(yaw, dtype=float)
    c, s = np.cos(yaw), np.sin(yaw)
    R = np.zeros(yaw.shape + (3, 3))
    R[..., 0, 0], R[..., 0, 1], R[..., 1, 0], R[..., 1, 1], R[..., 2, 2] = c, -s, s, c, 1.0
    return R


def yaw_to_quat(yaw: Any) -> Any:
    """Unit quaternion ``qz(yaw) = [cos(yaw/2), 0, 0, sin(yaw/2)]`` (4,); a numpy array of angles (...) gives (..., 4)."""
    if B.is_symbolic(yaw):
        return B.vcat([B.cos(yaw / 2), 0.0, 0.0, B.sin(yaw / 2)])
    yaw = np.asarray(yaw, dtype=float)
    q = np.zeros(yaw.shape + (4,))
    q[..., 0], q[..., 3] = np.cos(yaw / 2), np.sin(yaw / 2)
    return q


def euler_zyx_to_rot(e: Any) -> Any:
    """Rotation matrix ``Rz(yaw) Ry(pitch) Rx(roll)`` (3x3) of ``e = (yaw, pitch, roll)``."""
    yaw, pitch, roll = _angles(e)
    cy, sy, cx, sx = B.cos(pitch), B.sin(pitch), B.cos(roll), B.sin(roll)
    Rz = yaw_to_rot(yaw)
    Ry = B.block([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    Rx = B.block([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
    return Rz @ Ry @ Rx


def rot_to_euler_zyx(R: Any) -> Any:
    """ZYX Euler angles ``(yaw, pitch, roll)`` (3,) of a rotation matrix ``R`` (3x3).

    ``yaw = atan2(R10, R00)`` and ``pitch = atan2(-R20, hypot(R00, R10))``
    (accurate near +-pi/2); roll is read from ``M = Ry(pitch)^T Rz(yaw)^T R =
    Rx(roll)``, ``roll = atan2(M21, M11)``, which equals ``atan2(R21, R22)``
    for exact input and stays consistent with yaw at gimbal lock.
    """
    R = B.matrix(B.rotation_argument(R, "matrix"), (3, 3), "R")
    yaw = B.atan2(R[1, 0], R[0, 0])
    pitch = B.atan2(-R[2, 0], B.sqrt(R[0, 0] ** 2 + R[1, 0] ** 2))
    cz, sz = B.cos(yaw), B.sin(yaw)
    m11 = cz * R[1, 1] - sz * R[0, 1]
    m21 = B.sin(pitch) * (cz * R[0, 1] + sz * R[1, 1]) + B.cos(pitch) * R[2, 1]
    return B.vcat([yaw, pitch, B.atan2(m21, m11)])


def euler_zyx_to_quat(e: Any) -> Any:
    """Unit quaternion ``qz(yaw) * qy(pitch) * qx(roll)`` (4,) of ``e = (yaw, pitch, roll)``.

    The sign is not normalized (``qw`` may be negative).
    """
    yaw, pitch, roll = _angles(e)
    qz = yaw_to_quat(yaw)
    qy = B.vcat([B.cos(pitch / 2), 0.0, B.sin(pitch / 2), 0.0])
    qx = B.vcat([B.cos(roll / 2), B.sin(roll / 2), 0.0, 0.0])
    return quat_mult(quat_mult(qz, qy), qx)


def quat_to_euler_zyx(q: Any) -> Any:
    """ZYX Euler angles (3,) of a unit quaternion ``q`` (4,); numeric ``q`` must be unit to 1e-6."""
    check_unit_quaternion(q, "q")
    return rot_to_euler_zyx(quat_to_rot(q))


def euler_zyx_rate_matrix(e: Any) -> Any:
    """``E(e)`` (3x3) with ``edot = E(e) w`` for the BODY angular velocity ``w``.

    With ``(yaw, pitch, roll) = (z, y, x)``::

        E = [[0, sin x / cos y,  cos x / cos y],
             [0, cos x,         -sin x        ],
             [1, sin x tan y,    cos x tan y  ]]

    Singular at ``pitch = +-pi/2``: numeric ``e`` with ``|cos(pitch)| < 1e-12``
    raises ``ValueError``; symbolic ``e`` is not checked.
    """
    _, pitch, roll = _angles(e)
    cy = B.cos(pitch)
    if not B.is_symbolic(cy) and abs(cy) < 1e-12:
        raise ValueError(f"e: pitch = {pitch} is +-pi/2, where the ZYX Euler rate matrix is singular")
    cx, sx, ty = B.cos(roll), B.sin(roll), B.tan(pitch)
    return B.block([[0, sx / cy, cx / cy], [0, cx, -sx], [1, sx * ty, cx * ty]])


def euler_zyx_rate_matrix_inv(e: Any) -> Any:
    """``E(e)^-1`` (3x3): the BODY angular velocity ``w = E(e)^-1 edot``.

    ``w = Rx^T Ry^T [0, 0, yawdot] + Rx^T [0, pitchdot, 0] + [rolldot, 0, 0]``::

        E^-1 = [[-sin y,       0,      1],
                [ cos y sin x,  cos x, 0],
                [ cos y cos x, -sin x, 0]]

    Defined everywhere (rank 2 at ``pitch = +-pi/2``).
    """
    _, pitch, roll = _angles(e)
    cy, sy, cx, sx = B.cos(pitch), B.sin(pitch), B.cos(roll), B.sin(roll)
    return B.block([[-sy, 0, 1], [cy * sx, cx, 0], [cy * cx, -sx, 0]])
