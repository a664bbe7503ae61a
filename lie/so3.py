"""The rotation group SO(3): exponential, logarithm and their Jacobians.

A rotation vector ``phi`` (3,) is an axis times an angle ``th = |phi|``
(radians); ``exp(phi)`` is the rotation matrix that turns by ``th`` about the
axis, body to world like every rotation in :mod:`lie`. With ``K = skew(phi)``::

    exp(phi)  = I + sin(th)/th K + (1 - cos th)/th^2 K^2
    Jr(phi)   = I - (1 - cos th)/th^2 K + (th - sin th)/th^3 K^2
    Jl(phi)   = Jr(-phi) = exp(phi) Jr(phi)
    Jr(phi)^-1 = I + K/2 + (1/th^2 - (1 + cos th)/(2 th sin th)) K^2

The right Jacobian is the body-frame (right) perturbation of the exponential,
``exp(phi + d) = exp(phi) exp(Jr(phi) d) + O(|d|^2)``, and the left Jacobian
the world-frame one, ``exp(phi + d) = exp(Jl(phi) d) exp(phi) + O(|d|^2)``.
``Jr^-1`` is the derivative of the logarithm: ``log(exp(phi) exp(d)) = phi +
Jr(phi)^-1 d + O(|d|^2)``. The inverses are singular at ``th = 2 pi``.

The scalar coefficients switch to Taylor series below :data:`SERIES_ANGLE`
(values and CasADi derivatives finite at 0). Every function accepts numpy
(returns numpy) or CasADi SX/MX (returns the same type).
"""
from __future__ import annotations

from typing import Any

from . import _backend as B
from .quaternion import axis_angle_to_quat, quat_to_axis_angle, quat_to_rot, rot_to_quat, skew

#: Angle (rad) below which the Jacobian coefficients use Taylor series. Below
#: it, series through th^8 are exact to round-off; above it, cancellation in
#: the closed forms costs a few digits at most, on terms that the Jacobians
#: multiply by matching powers of th.
SERIES_ANGLE = 0.1


def cosc(th2: Any) -> Any:
    """``(1 - cos th)/th^2`` (computed as ``2 sin^2(th/2)/th^2``), from ``th2``."""
    series = [1 / 2, -1 / 24, 1 / 720, -1 / 40320, 1 / 3628800]
    return B.even_series(th2, series, lambda t: 2 * (B.sin(t / 2) / t) ** 2, SERIES_ANGLE)


def sinc3(th2: Any) -> Any:
    """``(th - sin th)/th^3`` as a function of ``th2``."""
    series = [1 / 6, -1 / 120, 1 / 5040, -1 / 362880, 1 / 39916800]
    return B.even_series(th2, series, lambda t: (t - B.sin(t)) / t**3, SERIES_ANGLE)


def _jinv_coeff(th2: Any) -> Any:
    """``1/th^2 - (1 + cos th)/(2 th sin th)``, the ``K^2`` coefficient of ``Jr^-1``."""
    series = [1 / 12, 1 / 720, 1 / 30240, 1 / 1209600, 1 / 47900160]
    return B.even_series(th2, series, lambda t: (1 - (t / 2) * B.cos(t / 2) / B.sin(t / 2)) / t**2, SERIES_ANGLE)


def exp(phi: Any) -> Any:
    """Rotation matrix ``exp(skew(phi))`` (3x3) of a rotation vector ``phi`` (3,)."""
    return quat_to_rot(axis_angle_to_quat(B.vector(B.rotation_argument(phi, "rotvec"), 3, "phi")))


def log(R: Any) -> Any:
    """Rotation vector ``phi`` (3,), ``|phi| <= pi``, with ``exp(phi) = R`` (3x3).

    Goes through :func:`lie.rot_to_quat` (Shepperd's method), so it is
    accurate for every rotation, including turns by (nearly) pi, where the
    axis sign is arbitrary.
    """
    return quat_to_axis_angle(rot_to_quat(B.matrix(B.rotation_argument(R, "matrix"), (3, 3), "R")))


def _jacobian(phi: Any, sign: int) -> Any:
    """``I + sign (1 - cos th)/th^2 K + (th - sin th)/th^3 K^2``."""
    phi = B.vector(B.rotation_argument(phi, "rotvec"), 3, "phi")
    th2 = B.dot(phi, phi)
    K = skew(phi)
    return B.eye(3, like=phi) + sign * cosc(th2) * K + sinc3(th2) * (K @ K)


def _jacobian_inv(phi: Any, sign: int) -> Any:
    """``I + sign K/2 + c(th) K^2``, the inverse of :func:`_jacobian` with ``-sign``."""
    phi = B.vector(B.rotation_argument(phi, "rotvec"), 3, "phi")
    K = skew(phi)
    return B.eye(3, like=phi) + (sign * 0.5) * K + _jinv_coeff(B.dot(phi, phi)) * (K @ K)


def right_jacobian(phi: Any) -> Any:
    """Right Jacobian ``Jr(phi)`` (3x3): ``exp(phi + d) ~ exp(phi) exp(Jr d)``."""
    return _jacobian(phi, -1)


def right_jacobian_inv(phi: Any) -> Any:
    """``Jr(phi)^-1`` (3x3): ``log(exp(phi) exp(d)) ~ phi + Jr^-1 d``; singular at ``|phi| = 2 pi``."""
    return _jacobian_inv(phi, +1)


def left_jacobian(phi: Any) -> Any:
    """Left Jacobian ``Jl(phi) = Jr(-phi)`` (3x3): ``exp(phi + d) ~ exp(Jl d) exp(phi)``."""
    return _jacobian(phi, +1)


def left_jacobian_inv(phi: Any) -> Any:
    """``Jl(phi)^-1`` (3x3): ``log(exp(d) exp(phi)) ~ phi + Jl^-1 d``; singular at ``|phi| = 2 pi``."""
    return _jacobian_inv(phi, -1)
