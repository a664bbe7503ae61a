"""Validation of the numpy arguments of the plotting functions.

Errors name the argument and give its expected and actual shape (as everywhere
in the project). A dimension is given either as an ``int`` (checked) or as a
``str`` naming a free size (printed in the message only).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from lie.quaternion import check_unit_quaternion

Dim = int | str


def _shape_text(shape: Sequence[Dim]) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def as_array(x: Any, name: str, shape: Sequence[Dim], dtype: type = float) -> np.ndarray:
    """``x`` as an array of ``dtype`` whose shape matches ``shape``."""
    arr = np.asarray(x, dtype=dtype)
    ok = arr.ndim == len(shape) and all(isinstance(d, str) or d == n for d, n in zip(shape, arr.shape))
    if not ok:
        raise ValueError(f"{name}: expected shape {_shape_text(shape)}, got {arr.shape}")
    return arr


def as_times(times: Any) -> np.ndarray:
    """Knot times (N,) in seconds, finite and strictly increasing, N >= 2."""
    t = as_array(times, "times", ("N",))
    if t.size < 2 or not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0):
        raise ValueError(f"times: expected at least 2 finite, strictly increasing values, got {t.size} values")
    return t


def as_knot_series(x: Any, name: str, n_knots: int, trailing: Sequence[Dim]) -> np.ndarray:
    """Values per knot (``n_knots`` rows) or per interval (``n_knots - 1`` rows)."""
    arr = np.asarray(x, dtype=float)
    if arr.ndim >= 1 and arr.shape[0] == n_knots - 1:
        return as_array(arr, name, (n_knots - 1, *trailing))
    return as_array(arr, name, (n_knots, *trailing))


def as_quaternions(q: Any, name: str, n: Dim = "N") -> np.ndarray:
    """Unit quaternions ``[qw, qx, qy, qz]`` (n, 4), each checked by :func:`lie.quaternion.check_unit_quaternion`."""
    arr = as_array(q, name, (n, 4))
    for k, qk in enumerate(arr):
        check_unit_quaternion(qk, f"{name}[{k}]")
    return arr


def as_limits(x: Any, name: str, n: int) -> np.ndarray:
    """Scalar or (n,) limit broadcast to (n,); ``None`` means no limit (``nan``)."""
    if x is None:
        return np.full(n, np.nan)
    arr = np.asarray(x, dtype=float)
    if arr.ndim == 0:
        return np.full(n, float(arr))
    return as_array(arr, name, (n,))


def as_names(names: Sequence[str] | None, n: int, name: str, what: str, default: str | None = None) -> list[str]:
    """``n`` names, one per ``what``; ``None`` gives ``default.format(i)`` when a default is set."""
    if names is None and default is not None:
        return [default.format(i) for i in range(n)]
    names = list(names) if names is not None else []
    if len(names) != n:
        raise ValueError(f"{name}: expected {n} names (one per {what}), got {len(names)}")
    return names
