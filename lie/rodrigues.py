"""Rodrigues (Gibbs) parameters ``g = v/w`` of a quaternion ``q = [w; v]``.

``|g| = tan(th/2)`` for a rotation by ``th`` about the axis ``g/|g|``; ``q``
and ``-q`` give the same ``g``. Singular at ``th = pi`` (``w = 0``), so a
problem that turns that far needs quaternions (or MRPs, singular at 2 pi).
The same map is called the Cayley map in RobotDynamics.jl (:mod:`lie.cayley`).

Kinematics with the body angular velocity ``w_b`` (docs/conventions.md)::

    gdot = K(g) w_b,  K(g) = 1/2 (I + skew(g) + g g^T)
    w_b = K(g)^-1 gdot,  K(g)^-1 = 2/(1 + g.g) (I - skew(g))

Every function accepts numpy (returns numpy) or CasADi SX/MX (returns the same type).
"""
from __future__ import annotations

from typing import Any

from . import _backend as B
from .quaternion import quat_to_rot, skew


def quat_to_rodrigues(q: Any) -> Any:
    """Gibbs vector ``g = [qx, qy, qz]/qw`` (3,) of a quaternion ``q`` (4, any norm).

    Numeric ``q`` with ``|qw| < 1e-12 |q|`` (a half turn) raises ``ValueError``.
    """
    q = B.vector(B.rotation_argument(q, "quat"), 4, "q")
    if not B.is_symbolic(q) and abs(q[0]) < 1e-12 * B.norm(q):
        raise ValueError(f"q: {q} is a turn by pi, where Rodrigues parameters are singular")
    return q[1:4] / q[0]


def rodrigues_to_quat(g: Any) -> Any:
    """Unit quaternion ``[1; g]/sqrt(1 + g.g)`` (4,, ``qw > 0``) of a Gibbs vector ``g`` (3,)."""
    g = B.vector(B.rotation_argument(g, "rodrigues"), 3, "g")
    return B.vcat([1.0, g]) / B.sqrt(1 + B.dot(g, g))


def rodrigues_to_rot(g: Any) -> Any:
    """Rotation matrix (3x3, body to world) of a Gibbs vector ``g`` (3,)."""
    return quat_to_rot(rodrigues_to_quat(g))


def rodrigues_kinematics_matrix(g: Any) -> Any:
    """``K(g)`` (3x3) with ``gdot = K(g) w`` for the body angular velocity ``w``."""
    g = B.vector(B.rotation_argument(g, "rodrigues"), 3, "g")
    return 0.5 * (B.eye(3, like=g) + skew(g) + B.outer(g, g))


def rodrigues_kinematics_matrix_inv(g: Any) -> Any:
    """``K(g)^-1`` (3x3): the body angular velocity ``w = K(g)^-1 gdot``."""
    g = B.vector(B.rotation_argument(g, "rodrigues"), 3, "g")
    return (2 / (1 + B.dot(g, g))) * (B.eye(3, like=g) - skew(g))
