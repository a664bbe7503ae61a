"""Revolute joint angles and position limits: choosing the ``2 pi`` representative.

A revolute angle ``q`` and ``q + 2 pi k`` put the robot in the same pose. Angles
coming from ``atan2``/``acos`` (inverse kinematics) or from a simulator lie in
``(-pi, pi]``, while a joint's limits may sit elsewhere (Go1's thigh: ``[-0.69,
4.50]``). :func:`wrap_into_limits` picks the representative inside the limits,
:func:`fix_joint_limits` applies it to a joint vector and reports (or clamps)
angles that fit no representative.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

TWO_PI = 2.0 * np.pi
#: Angles at most this far (rad) outside a limit count as on it (round-off of IK solutions).
LIMIT_TOL = 1e-9


def wrap_to_pi(angle: np.ndarray) -> np.ndarray:
    """Angle(s) mapped to ``(-pi, pi]``."""
    return np.pi - (np.pi - np.asarray(angle, dtype=float)) % TWO_PI


def wrap_into_limits(
    q: np.ndarray, lower: np.ndarray, upper: np.ndarray, reference: np.ndarray | None = None
) -> np.ndarray:
    """Elementwise ``q + 2 pi k`` inside ``[lower, upper]``, ``NaN`` where no integer ``k`` fits.

    Among the representatives inside the limits, the one closest to
    ``reference`` is returned (default ``reference = q``: the smallest ``|k|``,
    so angles already inside are unchanged). Angles within :data:`LIMIT_TOL`
    outside a limit are put on it. Infinite limits are allowed; with
    ``lower = -inf, upper = inf`` this wraps ``q`` to the representative nearest
    ``reference``. Arrays broadcast against each other.
    """
    q = np.asarray(q, dtype=float)
    reference = q if reference is None else np.asarray(reference, dtype=float)
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    k_min = np.ceil((lower - LIMIT_TOL - q) / TWO_PI)
    k_max = np.floor((upper + LIMIT_TOL - q) / TWO_PI)
    k = np.clip(np.round((reference - q) / TWO_PI), k_min, k_max)
    wrapped = np.clip(q + TWO_PI * k, lower, upper)
    return np.where(k_min <= k_max, wrapped, np.nan)


def _check_limits(lower: np.ndarray, upper: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    for name, arr in (("lower", lower), ("upper", upper)):
        if arr.shape != (n,):
            raise ValueError(f"{name}: expected shape ({n},), got {arr.shape}")
    bad = np.flatnonzero(~(lower <= upper))
    if bad.size:
        raise ValueError(f"lower/upper: lower > upper (or NaN) for joints {bad.tolist()}")
    return lower, upper


def fix_joint_limits(
    q_joints: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    suppress_error: bool = False,
    names: Sequence[str] | None = None,
) -> np.ndarray:
    """Joint angles wrapped by ``2 pi`` into their limits (a new array).

    ``q_joints`` has shape ``(n,)`` or ``(..., n)`` (e.g. a trajectory
    ``(N, n)``); ``lower``/``upper`` have shape ``(n,)``. Each angle is replaced by
    its representative ``q + 2 pi k`` inside ``[lower, upper]`` with the smallest
    ``|k|`` (see :func:`wrap_into_limits`). When no representative fits, raises
    ``ValueError`` naming the joint (``names[i]`` if given, else its index),
    or with ``suppress_error=True`` clamps it to the limit nearest in angle
    (distance measured modulo ``2 pi``).
    """
    q = np.asarray(q_joints, dtype=float)
    if q.ndim == 0:
        raise ValueError(f"q_joints: expected shape (n,) or (..., n), got {q.shape}")
    n = q.shape[-1]
    lower, upper = _check_limits(lower, upper, n)
    if names is not None and len(names) != n:
        raise ValueError(f"names: expected {n} names, got {len(names)}")
    if np.isnan(q).any():
        raise ValueError("q_joints: contains NaN")
    fixed = wrap_into_limits(q, lower, upper)
    bad = np.isnan(fixed)
    if not bad.any():
        return fixed
    if not suppress_error:
        first = tuple(np.argwhere(bad)[0])
        j = first[-1]
        label = repr(names[j]) if names is not None else f"index {j}"
        value = q[first]
        raise ValueError(
            f"q_joints: joint {label} = {value:.6g} cannot be wrapped by 2 pi into "
            f"[{lower[j]:.6g}, {upper[j]:.6g}]"
        )
    with np.errstate(invalid="ignore"):  # infinite limits give NaN distances, never used: such joints are never bad
        to_lower = np.abs(wrap_to_pi(q - lower))
        to_upper = np.abs(wrap_to_pi(q - upper))
    clamped = np.where(to_lower <= to_upper, lower, upper)
    return np.where(bad, clamped, fixed)
