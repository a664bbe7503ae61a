"""User functions of one knot, normalized to ``casadi.Function``s ``g(x, u, p)``.

Costs and constraints are written by users as a ``casadi.Function`` or a Python
callable taking ``(x)``, ``(x, u)`` or ``(x, u, p)``: ``x`` the state (n,), ``u``
the control (nu,), ``p`` a per-knot parameter vector (np,). Internally every
one becomes ``g(x, u, p) -> (k, 1)`` so the NLP can map it over knots with a
parameter matrix (one column per knot).
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

import casadi as ca
import numpy as np

from lie import _backend as B
from models.casadi_names import casadi_name

#: What a cost or constraint takes as its function: a ``casadi.Function`` or a Python callable of
#: ``(x)``, ``(x, u)`` or ``(x, u, p)`` (see :func:`knot_function`).
KnotFunctionLike = ca.Function | Callable[..., Any]


def _arity(fn: KnotFunctionLike, name: str) -> int:
    if isinstance(fn, ca.Function):
        return fn.n_in()
    if not callable(fn):
        raise ValueError(f"{name}: expected a casadi.Function or a callable, got {type(fn).__name__}")
    params = [p for p in inspect.signature(fn).parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
    return len(params)


def knot_function(fn: KnotFunctionLike, nx: int, nu: int, param_dim: int, name: str, scalar: bool = False, kind: type = ca.SX) -> ca.Function:
    """Normalize ``fn`` to a ``casadi.Function`` ``g(x, u, p) -> (k, 1)``.

    ``fn`` takes ``(x)``, ``(x, u)`` or ``(x, u, p)`` (column vectors of sizes
    ``nx``, ``nu``, ``param_dim``); a ``casadi.Function`` must have exactly those
    input sizes and one output, and an MX function is expanded to SX. A Python
    callable is called once with symbols of ``kind`` (SX; MX for models whose
    dynamics keep call nodes with custom Jacobians, :attr:`models.Model.symbol_type`).
    Raises ``ValueError`` naming ``name`` on a mismatch, or when ``scalar`` and
    the output is not 1 x 1.
    """
    n_args = _arity(fn, name)
    if n_args not in (1, 2, 3):
        raise ValueError(f"{name}: expected a function of (x), (x, u) or (x, u, p), got {n_args} arguments")
    if n_args < 3 and param_dim:
        raise ValueError(f"{name}: parameters of size {param_dim} were given but the function takes no p argument")
    sizes = [nx, nu, param_dim][:n_args]
    arg_names = ["x", "u", "p"][:n_args]
    if isinstance(fn, ca.Function):
        for i, (want, arg) in enumerate(zip(sizes, arg_names)):
            got = fn.size_in(i)
            if got != (want, 1) and not (want == 0 and got[0] * got[1] == 0):
                raise ValueError(f"{name}: input {i} ({arg}) expected shape ({want}, 1), got {got}")
        if fn.n_out() != 1:
            raise ValueError(f"{name}: expected one output, got {fn.n_out()}")
    if isinstance(fn, ca.Function) and not fn.is_a("SXFunction") and kind is ca.SX:
        try:  # stage functions are SX (the NLP maps them and differentiates them stage-wise)
            fn = fn.expand()
        except RuntimeError as err:
            raise ValueError(f"{name}: the casadi.Function cannot be expanded to SX: {err}") from None
    x, u, p = kind.sym("x", nx), kind.sym("u", nu), kind.sym("p", param_dim)
    out = fn(*[x, u, p][:n_args])
    out = out[0] if isinstance(out, (list, tuple)) else out
    if not isinstance(out, (kind, ca.DM)):
        out = kind(np.asarray(out, dtype=float)) if np.ndim(out) else kind(float(out))
    if out.shape[1] != 1 and out.shape[0] == 1:
        out = out.T
    if out.shape[1] != 1:
        raise ValueError(f"{name}: expected a column-vector output, got shape {out.shape}")
    if scalar and out.shape != (1, 1):
        raise ValueError(f"{name}: expected a scalar output, got shape {out.shape}")
    return ca.Function(casadi_name(name), [x, u, p], [ca.densify(out)], ["x", "u", "p"], ["out"])



def knot_params(params: Any, count: int, param_dim: int | None, name: str) -> np.ndarray:
    """Parameters of ``count`` knots as a (count, np) array.

    ``None`` means no parameters (np = 0); a vector (np,) is the same at every
    knot; a matrix must be (count, np). ``param_dim`` (if given) checks np.
    """
    if params is None:
        arr = np.zeros((count, 0))
    else:
        arr = B.numeric_array(params, name)
        if arr.ndim == 1:
            arr = np.tile(arr, (count, 1))
        if arr.ndim != 2 or arr.shape[0] != count:
            raise ValueError(f"{name}: expected shape (np,) or ({count}, np), got {np.shape(params)}")
    if param_dim is not None and arr.shape[1] != param_dim:
        raise ValueError(f"{name}: expected {param_dim} parameters per knot, got shape {arr.shape}")
    return B.check_finite(arr, name, allow_inf=True)


def per_knot(values: Any, count: int, width: int, name: str) -> np.ndarray:
    """A scalar, a (width,) vector or a (count, width) array as a (count, width) float array.

    For ``width == 1`` a (count,) vector gives one value per knot.
    """
    arr = B.numeric_array(values, name)
    if arr.ndim == 0:
        arr = np.full((count, width), float(arr))
    elif arr.shape == (width,):
        arr = np.tile(arr, (count, 1))
    elif width == 1 and arr.shape == (count,):  # one value per knot of a scalar function
        arr = arr.reshape(count, 1)
    if arr.shape != (count, width):
        raise ValueError(f"{name}: expected a scalar, shape ({width},) or ({count}, {width}), got {np.shape(values)}")
    return B.check_finite(arr, name, allow_inf=True)


def resolve_knots(knots: Any, N: int, name: str) -> np.ndarray:
    """Knot indices from ``"all"``, an int or an increasing sequence (negative counts from the end)."""
    if isinstance(knots, str):
        if knots != "all":
            raise ValueError(f"{name}: expected 'all', an int or a sequence of ints, got {knots!r}")
        return np.arange(N)
    arr = np.asarray([knots] if np.ndim(knots) == 0 else list(knots), dtype=object)
    if arr.size == 0:
        raise ValueError(f"{name}: no knots given")
    ints = np.array([isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)) for k in arr])
    if not ints.all():
        raise ValueError(f"{name}: knot indices must be ints, got {arr[np.argmin(ints)]!r}")
    out = arr.astype(int)
    outside = (out < -N) | (out >= N)
    if outside.any():
        raise ValueError(f"{name}: knot {out[np.argmax(outside)]} out of range for N = {N}")
    out %= N
    if (np.diff(out) <= 0).any():
        raise ValueError(f"{name}: knots must be strictly increasing (after wrapping negatives), got {out.tolist()}")
    return out
