"""Rigid transforms SE(3): exponential, logarithm and Jacobians, pinocchio's conventions.

A twist ``nu = [v; w]`` (6,) stacks the linear part ``v`` then the angular
part ``w`` (pinocchio's ``Motion`` order). A transform is the 4x4 homogeneous
matrix ``T = [[R, p], [0, 1]]`` mapping body coordinates to world ones.
With ``Jl`` the left Jacobian of SO(3) (:mod:`lie.so3`)::

    exp6([v; w]) = [[exp(w), Jl(w) v], [0, 1]]
    log6(T)      = [Jl(w)^-1 p; w],   w = log(R), |w| <= pi

Jacobians are right (body-frame, "local") ones as in pinocchio:
``exp6(nu + d) ~ exp6(nu) exp6(Jexp6(nu) d)`` and
``log6(T exp6(d)) ~ log6(T) + Jlog6(T) d``, both 6x6 and block upper
triangular, ``[[Jr(w), Q], [0, Jr(w)]]`` and its inverse, where ``Q`` couples
the angular perturbation into the linear part (Barfoot, "State Estimation for
Robotics", section 7.1.5, written here in the right-Jacobian form).

Every function accepts numpy (returns numpy) or CasADi SX/MX (returns the same type).
"""
from __future__ import annotations

from typing import Any

from . import _backend as B
from . import so3
from .quaternion import skew


def _a2(th2: Any) -> Any:
    """``(th^2 + 2 cos th - 2)/(2 th^4)``."""
    series = [1 / 24, -1 / 720, 1 / 40320, -1 / 3628800, 1 / 479001600]
    return B.even_series(th2, series, lambda t: (t * t + 2 * B.cos(t) - 2) / (2 * t**4), so3.SERIES_ANGLE)


def _a3(th2: Any) -> Any:
    """``(2 th - 3 sin th + th cos th)/(2 th^5)``."""
    series = [1 / 120, -1 / 2520, 1 / 120960, -1 / 9979200, 1 / 1245404160]
    return B.even_series(th2, series, lambda t: (2 * t - 3 * B.sin(t) + t * B.cos(t)) / (2 * t**5), so3.SERIES_ANGLE)


def _coupling(v: Any, w: Any) -> Any:
    """Off-diagonal block ``Q`` of the right Jacobian of ``exp6([v; w])`` (3x3)."""
    th2 = B.dot(w, w)
    P, W = skew(-v), skew(-w)  # right Jacobian = left Jacobian at -nu
    PW, WP, WPW = P @ W, W @ P, W @ P @ W
    return (
        0.5 * P
        + so3.sinc3(th2) * (WP + PW + WPW)
        + _a2(th2) * (W @ WP + PW @ W - 3 * WPW)
        + _a3(th2) * (WPW @ W + W @ WPW)
    )


def _split(nu: Any) -> tuple[Any, Any]:
    nu = B.vector(nu, 6, "nu")
    return nu[0:3], nu[3:6]


def exp6(nu: Any) -> Any:
    """Homogeneous transform ``exp6([v; w])`` (4x4) of a twist ``nu = [v; w]`` (6,)."""
    v, w = _split(nu)
    p = so3.left_jacobian(w) @ v
    return B.block([[so3.exp(w), p], [B.zeros((1, 3), like=nu), 1.0]])


def log6(T: Any) -> Any:
    """Twist ``[v; w]`` (6,) with ``exp6([v; w]) = T`` and ``|w| <= pi`` (``T`` 4x4)."""
    T = B.matrix(T, (4, 4), "T")
    w = so3.log(T[0:3, 0:3])
    return B.vcat([so3.left_jacobian_inv(w) @ T[0:3, 3], w])


def Jexp6(nu: Any) -> Any:
    """Right Jacobian of :func:`exp6` (6x6): ``exp6(nu + d) ~ exp6(nu) exp6(Jexp6(nu) d)``."""
    v, w = _split(nu)
    Jr = so3.right_jacobian(w)
    return B.block([[Jr, _coupling(v, w)], [B.zeros((3, 3), like=nu), Jr]])


def Jlog6(T: Any) -> Any:
    """Jacobian of :func:`log6` under body-frame perturbation (6x6), as ``pinocchio.Jlog6``.

    ``log6(T exp6(d)) ~ log6(T) + Jlog6(T) d``; equals ``Jexp6(log6(T))^-1``,
    computed blockwise: ``[[Jr^-1, -Jr^-1 Q Jr^-1], [0, Jr^-1]]``.
    """
    nu = log6(T)
    v, w = nu[0:3], nu[3:6]
    Jr_inv = so3.right_jacobian_inv(w)
    return B.block([[Jr_inv, -Jr_inv @ _coupling(v, w) @ Jr_inv], [B.zeros((3, 3), like=nu), Jr_inv]])
