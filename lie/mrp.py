"""Modified Rodrigues parameters (MRP) ``p = v/(1 + w)`` of a quaternion ``q = [w; v]``.

``|p| = tan(th/4)`` for a rotation by ``th`` about the axis ``p/|p|``. ``q``
and ``-q`` give two MRPs, ``p`` and its *shadow* ``-p/|p|^2``; the canonical
choice (``w >= 0``) has ``|p| <= 1``, i.e. ``th <= pi``. The set is singular
at ``th = 2 pi`` (``w = -1``), never reached by the canonical choice.

Kinematics with the body angular velocity ``w_b`` (docs/conventions.md)::

    pdot = K(p) w_b,  K(p) = 1/4 [(1 - p.p) I + 2 skew(p) + 2 p p^T]
    w_b = K(p)^-1 pdot,  K(p)^-1 = 4/(1 + p.p)^2 [(1 - p.p) I - 2 skew(p) + 2 p p^T]

Every function accepts numpy (returns numpy) or CasADi SX/MX (returns the same type).
"""
from __future__ import annotations

from typing import Any

from . import _backend as B
from .quaternion import check_unit_quaternion, quat_to_rot, skew


def quat_to_mrp(q: Any, canonical: bool = True) -> Any:
    """MRP (3,) of a unit quaternion ``q`` (4,).

    ``canonical=True`` returns the set with ``|p| <= 1`` (from ``sign(qw) q``);
    ``canonical=False`` uses ``q`` as given (``|p| > 1`` when ``qw < 0``), which
    is continuous along a continuous quaternion path. Numeric ``q`` must be
    unit to 1e-6 (``ValueError``); ``canonical=False`` with ``qw = -1`` (the
    singularity) raises too.
    """
    q = B.vector(B.rotation_argument(q, "quat"), 4, "q")
    check_unit_quaternion(q, "q")
    s = B.sign(q[0]) if canonical else 1.0
    den = 1 + s * q[0]
    if not B.is_symbolic(q) and den < 1e-12:
        raise ValueError(f"q: {q} is a turn by 2 pi, where these MRPs are singular")
    return s * q[1:4] / den


def mrp_to_quat(p: Any) -> Any:
    """Unit quaternion ``[1 - p.p, 2 p]/(1 + p.p)`` (4,) of an MRP ``p`` (3,); ``qw < 0`` when ``|p| > 1``."""
    p = B.vector(B.rotation_argument(p, "mrp"), 3, "p")
    s = B.dot(p, p)
    return B.vcat([1 - s, 2 * p]) / (1 + s)


def mrp_to_rot(p: Any) -> Any:
    """Rotation matrix (3x3, body to world) of an MRP ``p`` (3,)."""
    return quat_to_rot(mrp_to_quat(p))


def mrp_kinematics_matrix(p: Any) -> Any:
    """``K(p)`` (3x3) with ``pdot = K(p) w`` for the body angular velocity ``w``."""
    p = B.vector(B.rotation_argument(p, "mrp"), 3, "p")
    s = B.dot(p, p)
    return 0.25 * ((1 - s) * B.eye(3, like=p) + 2 * skew(p) + 2 * B.outer(p, p))


def mrp_kinematics_matrix_inv(p: Any) -> Any:
    """``K(p)^-1`` (3x3): the body angular velocity ``w = K(p)^-1 pdot``."""
    p = B.vector(B.rotation_argument(p, "mrp"), 3, "p")
    s = B.dot(p, p)
    return (4 / (1 + s) ** 2) * ((1 - s) * B.eye(3, like=p) - 2 * skew(p) + 2 * B.outer(p, p))
