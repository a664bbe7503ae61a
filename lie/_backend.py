"""One set of array primitives for numpy and CasADi (SX/MX).

Every function in :mod:`lie` is written once against these helpers, so it runs
on numpy arrays (returns numpy) and on CasADi symbols (returns the same symbol
type). Numeric vectors are 1-D ``numpy`` arrays; symbolic vectors are column
vectors. A ``casadi.DM`` argument is treated as numeric and converted to numpy.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence, Union

import casadi as ca
import numpy as np

Symbolic = Union[ca.SX, ca.MX]
ArrayLike = Union[np.ndarray, ca.SX, ca.MX, ca.DM, Sequence[float]]


def is_symbolic(*xs: Any) -> bool:
    """True when any argument is a CasADi SX or MX expression."""
    return any(isinstance(x, (ca.SX, ca.MX)) for x in xs)


def describe(x: Any) -> str:
    """A short description of a value for error messages: its type and (shortened) repr."""
    text = repr(x)
    return f"{type(x).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


#: Set by :mod:`lie.rotations`: ``(RotationParam, converter)``, ``converter(rotation, kind)`` giving a
#: rotation object's parameters in ``kind`` (see :func:`rotation_argument`).
_rotation_hook: tuple[type, Callable[[Any, str], Any]] | None = None


def rotation_argument(x: Any, kind: str) -> Any:
    """``x`` as it is, or, for a rotation object (:class:`lie.RotationParam`, e.g. ``MRP(p)``), its
    parameters in the parameterization ``kind`` the caller works in.

    ``kind``: ``"quat"`` (4,), ``"mrp"``, ``"rodrigues"`` (Cayley alike), ``"euler_zyx"``,
    ``"rotvec"`` (3,) or ``"matrix"`` (3x3). The rotation is the same whatever
    the parameterization it is held in, so a function taking rotation
    parameters accepts a rotation object of any type; numeric or symbolic (the
    parameters keep their type).
    """
    hook = _rotation_hook
    if hook is not None and isinstance(x, hook[0]):
        return hook[1](x, kind)
    return x


def numeric_array(x: Any, name: str) -> np.ndarray:
    """``x`` as a float array (a ``casadi.DM`` too); ``TypeError`` naming ``name`` for non-numeric data.

    Strings, ``None``, mappings and objects numpy cannot read as real numbers
    are type errors; values are not checked (see :func:`check_finite`).
    """
    if x is None or isinstance(x, (str, bytes, dict, set)) or is_symbolic(x):
        raise TypeError(f"{name}: expected real numbers, got {describe(x)}")
    try:
        return np.asarray(x.full() if isinstance(x, ca.DM) else x, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected real numbers, got {describe(x)}") from None


def check_finite(arr: np.ndarray, name: str, allow_inf: bool = False) -> np.ndarray:
    """``arr`` unchanged; ``ValueError`` naming ``name`` and the first NaN (or, unless ``allow_inf``, infinite) entry otherwise."""
    bad = np.isnan(arr) if allow_inf else ~np.isfinite(arr)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        value = arr[index]
        where = f"index {index[0]}" if len(index) == 1 else f"index {index}"
        raise ValueError(f"{name}: contains {'NaN' if np.isnan(value) else value} at {where}; expected finite values")
    return arr


def vector(x: ArrayLike, n: int | None = None, name: str = "x", finite: bool = True) -> Any:
    """Validate a vector argument and return it in canonical form.

    Numeric input becomes a 1-D float array; symbolic input must be a column
    (or row, which is transposed) vector. ``n`` checks the length. Raises
    ``ValueError`` naming ``name`` with the expected and actual shape, and for
    numeric input containing NaN or (when ``finite``, e.g. not for bounds) inf;
    ``TypeError`` for non-numeric input.
    """
    if is_symbolic(x):
        if x.shape[1] != 1 and x.shape[0] == 1:
            x = x.T
        if x.shape[1] != 1 or (n is not None and x.shape[0] != n):
            want = f"({n},)" if n is not None else "a vector"
            raise ValueError(f"{name}: expected shape {want}, got {x.shape}")
        return x
    arr = numeric_array(x, name)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.reshape(-1)
    if arr.ndim != 1 or (n is not None and arr.shape[0] != n):
        want = f"({n},)" if n is not None else "a 1-D vector"
        raise ValueError(f"{name}: expected shape {want}, got {arr.shape}")
    return check_finite(arr, name, allow_inf=not finite)


def matrix(x: ArrayLike, shape: tuple[int, int] | None = None, name: str = "A") -> Any:
    """Validate a matrix argument (numeric -> finite 2-D float array, symbolic kept); errors as :func:`vector`."""
    if is_symbolic(x):
        if shape is not None and tuple(x.shape) != tuple(shape):
            raise ValueError(f"{name}: expected shape {shape}, got {x.shape}")
        return x
    arr = numeric_array(x, name)
    if arr.ndim != 2 or (shape is not None and arr.shape != tuple(shape)):
        raise ValueError(f"{name}: expected shape {shape or '2-D'}, got {arr.shape}")
    return check_finite(arr, name)


def real(x: Any, name: str, lower: float | None = None, strict: bool = False, allow_inf: bool = False) -> float:
    """A real number argument as ``float``: not a bool, finite (unless ``allow_inf``; never NaN),
    and ``> lower`` (``strict``) or ``>= lower``. ``TypeError`` / ``ValueError`` naming ``name``."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name}: expected a real number, got {describe(x)}")
    value = float(x)
    if np.isnan(value) or (np.isinf(value) and not allow_inf):
        raise ValueError(f"{name}: expected a finite number, got {value}")
    if lower is not None and (value <= lower if strict else value < lower):
        raise ValueError(f"{name}: expected a number {'>' if strict else '>='} {lower:g}, got {value:g}")
    return value


def time_argument(t: Any, name: str = "t") -> Any:
    """A time argument: a symbolic scalar as it is, else a finite real number (errors as :func:`real`)."""
    if is_symbolic(t):
        if t.numel() != 1:
            raise ValueError(f"{name}: expected a scalar, got shape {t.shape}")
        return t
    if isinstance(t, (np.ndarray, ca.DM)) and np.size(t) == 1:
        t = float(np.asarray(t.full() if isinstance(t, ca.DM) else t).reshape(-1)[0])
    return real(t, name)


def vcat(items: Sequence[Any]) -> Any:
    """Stack scalars/vectors into one vector (numpy 1-D or CasADi column)."""
    if is_symbolic(*items):
        return ca.vertcat(*items)
    return np.concatenate([np.atleast_1d(np.asarray(i, dtype=float)).reshape(-1) for i in items])


def block(rows: Sequence[Sequence[Any]]) -> Any:
    """Assemble a matrix from rows of entries or sub-blocks (like ``np.block``).

    A 1-D numeric vector is a column block, as symbolic vectors are.
    """
    if any(is_symbolic(*r) for r in rows):
        return ca.vertcat(*[ca.horzcat(*r) for r in rows])

    def as_block(e: Any) -> np.ndarray:
        a = np.asarray(e, dtype=float)
        return a.reshape(-1, 1) if a.ndim == 1 else a

    return np.block([[as_block(e) for e in r] for r in rows])


def hcat(items: Sequence[Any]) -> Any:
    """Concatenate matrices side by side."""
    if is_symbolic(*items):
        return ca.horzcat(*items)
    return np.hstack([np.asarray(i, dtype=float).reshape(np.shape(i)[0], -1) if np.ndim(i) else np.atleast_2d(i) for i in items])


def blkdiag(items: Sequence[Any]) -> Any:
    """Block-diagonal matrix of the given blocks."""
    if is_symbolic(*items):
        return ca.diagcat(*items)
    from scipy.linalg import block_diag

    return block_diag(*[np.atleast_2d(np.asarray(i, dtype=float)) for i in items])


def eye(n: int, like: Any = None) -> Any:
    """Identity matrix, symbolic (SX/MX, as ``like``) or numpy."""
    if isinstance(like, ca.MX):
        return ca.MX.eye(n)
    if isinstance(like, ca.SX):
        return ca.SX.eye(n)
    return np.eye(n)


def zeros(shape: tuple[int, int], like: Any = None) -> Any:
    """Zero matrix of ``shape`` in the kind of ``like``."""
    if isinstance(like, ca.MX):
        return ca.MX.zeros(*shape)
    if isinstance(like, ca.SX):
        return ca.SX.zeros(*shape)
    return np.zeros(shape)


def dot(a: Any, b: Any) -> Any:
    """Inner product of two vectors."""
    if is_symbolic(a, b):
        return ca.dot(a, b)
    return float(np.dot(a, b))


def cross(a: Any, b: Any) -> Any:
    """Cross product of two 3-vectors."""
    if is_symbolic(a, b):
        return ca.cross(a, b)
    return np.cross(a, b)


def norm(a: Any) -> Any:
    """Euclidean norm of a vector."""
    if is_symbolic(a):
        return ca.norm_2(a)
    return float(np.linalg.norm(a))


def sqrt(a: Any) -> Any:
    return ca.sqrt(a) if is_symbolic(a) else np.sqrt(a)


def sin(a: Any) -> Any:
    return ca.sin(a) if is_symbolic(a) else np.sin(a)


def cos(a: Any) -> Any:
    return ca.cos(a) if is_symbolic(a) else np.cos(a)


def tan(a: Any) -> Any:
    return ca.tan(a) if is_symbolic(a) else np.tan(a)


def atan2(y: Any, x: Any) -> Any:
    return ca.atan2(y, x) if is_symbolic(y, x) else np.arctan2(y, x)


def asin(a: Any) -> Any:
    return ca.asin(a) if is_symbolic(a) else np.arcsin(a)


def fabs(a: Any) -> Any:
    return ca.fabs(a) if is_symbolic(a) else np.abs(a)


def sign(a: Any) -> Any:
    """Sign with sign(0) = +1 (so a flip never zeroes a quaternion)."""
    if is_symbolic(a):
        return ca.if_else(a < 0, -1, 1)
    return np.where(np.asarray(a) < 0, -1.0, 1.0)


def logical_and(a: Any, b: Any) -> Any:
    """Elementwise ``a and b`` of two conditions (symbolic or numeric)."""
    if is_symbolic(a, b):
        return ca.logic_and(a, b)
    return np.logical_and(a, b)


def floor(a: Any) -> Any:
    """Largest integer ``<= a``, elementwise (its CasADi derivative is 0)."""
    return ca.floor(a) if is_symbolic(a) else np.floor(a)


def if_else(cond: Any, a: Any, b: Any) -> Any:
    """Elementwise ``a if cond else b``; both branches are evaluated.

    Callers must make both branches finite everywhere (derivatives included),
    because CasADi differentiates through both.
    """
    if is_symbolic(cond, a, b):
        return ca.if_else(cond, a, b)
    return np.where(cond, a, b)


def trace(A: Any) -> Any:
    return ca.trace(A) if is_symbolic(A) else float(np.trace(A))


def solve(A: Any, b: Any) -> Any:
    """Solve ``A x = b`` (symbolic or numeric)."""
    if is_symbolic(A, b):
        return ca.solve(A, b)
    return np.linalg.solve(A, b)


def inv(A: Any) -> Any:
    return ca.inv(A) if is_symbolic(A) else np.linalg.inv(A)


def outer(a: Any, b: Any) -> Any:
    """Outer product ``a b^T`` of two vectors."""
    if is_symbolic(a, b):
        return ca.mtimes(a, b.T if b.shape[1] == 1 else b)
    return np.outer(a, b)


def even_series(th2: Any, series: Sequence[float], exact: Callable[[Any], Any], tol: float) -> Any:
    """Evaluate a smooth even function ``f(th)`` from ``th2 = th^2``, safely near 0.

    Below ``th < tol`` the Taylor polynomial ``sum_k series[k] th^(2k)`` is
    used, above it ``exact(th)`` (a callable). Where the polynomial is used the
    exact branch receives the safe argument ``th = 1``, so neither branch (nor
    its CasADi derivative) is NaN or infinite at or near ``th = 0``. Choose
    ``tol`` and enough terms that the truncation error at ``tol`` and the
    round-off of ``exact`` just above ``tol`` are both below double precision.
    """
    small = th2 < tol * tol
    th = sqrt(if_else(small, 1.0, th2))
    poly = 0.0
    for c in reversed(series):
        poly = poly * th2 + c
    return if_else(small, poly, exact(th))
