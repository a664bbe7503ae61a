"""The state manifold as seen by integrators and transcriptions: local charts and unit norms.

A model's state ``x`` (n,) may hold rotations; its tangent (error) state has
``m = model.error_dim`` entries. Around a base point ``x0`` the model defines a
local chart (docs/conventions.md, "Error state")::

    y = state_error(x, x0)     (m,)   chart coordinates of x, y(x0) = 0
    x = apply_dx(x0, y)        (n,)   its inverse

A trajectory ``x(t)`` near ``x0`` has chart velocity

    ydot = C(x0, x) xdot,   C(x0, x) = d state_error(y, x0)/dy at y = x   (m x n)

with ``C(x0, x0) = model.error_jacobian_T(x0)``. In the chart the dynamics are an
ordinary ODE on R^m, so any Runge-Kutta or collocation scheme written there
keeps its order, and the result is mapped back with ``apply_dx`` (which keeps
quaternions unit). ``C`` brings velocities of different points into the frame
of ``x0`` (e.g. body-frame velocities of two knots, which must not be averaged as they are). Evaluating
``C`` differentiates only ``state_error`` (cheap), never the dynamics.

Raw unit quaternions in a decision vector have a free norm direction that the
``m`` chart equations do not fix; :func:`unit_norm_residual` gives the one
equation per quaternion (``|q|^2 - 1``) that does.
"""
from __future__ import annotations

import weakref
from typing import Any, Callable, Dict, List

import casadi as ca
import numpy as np

from lie import UNIT_TOL, UnitQuaternion
from lie import _backend as B
from models.casadi_names import casadi_name

_CACHE: "weakref.WeakKeyDictionary[Any, Dict[str, ca.Function]]" = weakref.WeakKeyDictionary()


def cached_function(model: Any, key: str, builder: Callable[[], ca.Function]) -> ca.Function:
    """A ``casadi.Function`` built once per model (weakly keyed) by ``builder``."""
    table = _CACHE.setdefault(model, {})
    if key not in table:
        table[key] = builder()
    return table[key]


def chart_velocity(model: Any, x0: Any, x: Any, xdot: Any) -> Any:
    """Chart velocity ``C(x0, x) @ xdot`` (m,) of a state ``x`` moving with ``xdot`` (n,).

    Computed as one forward directional derivative of ``state_error`` (cheaper
    than forming ``C``, and so are its derivatives inside an NLP).
    """

    def build() -> ca.Function:
        y, base, v = ca.SX.sym("y", model.state_dim), ca.SX.sym("x0", model.state_dim), ca.SX.sym("xdot", model.state_dim)
        ydot = ca.jtimes(model.state_error(y, base), y, v)
        return ca.Function(casadi_name(f"{model.name}_chart_velocity"), [base, y, v], [ydot], ["x0", "x", "xdot"], ["ydot"])

    out = cached_function(model, "chart_velocity", build)(x0, x, xdot)
    return out if isinstance(out, (ca.SX, ca.MX)) else np.asarray(out).reshape(-1)


def quaternion_slices(model: Any) -> List[slice]:
    """Slices of the raw unit quaternions in the model's state vector.

    Read from ``model.lie_state()`` (every rotation when the parameterization
    is :class:`lie.UnitQuaternion`). A state with ``state_dim > error_dim``
    whose extra coordinates cannot be located this way raises ``ValueError``
    (a norm direction left free would make the NLP singular).
    """
    extra = model.state_dim - model.error_dim
    slices: List[slice] = []
    lie_state = getattr(model, "lie_state", None)
    if callable(lie_state):
        layout = lie_state()
        if layout.rotation is UnitQuaternion:
            slices = [layout.rotation_slice(i) for i in range(layout.num_rotations)]
    if len(slices) != extra:
        raise ValueError(
            f"model: {type(model).__name__} has state_dim {model.state_dim} and error_dim {model.error_dim} "
            f"but its lie_state() locates {len(slices)} unit quaternions (expected {extra})"
        )
    return slices


def check_states(model: Any, states: Any, name: str, stacked: bool = False) -> np.ndarray:
    """Numeric state(s) of ``model`` as a float array: (n,), or (K, n) too when ``stacked``.

    Every entry finite and every raw quaternion of unit norm (to
    :data:`lie.UNIT_TOL`); ``TypeError`` (non-numeric) or ``ValueError`` naming
    ``name`` with the expected and actual shape or norm.
    """
    arr = B.numeric_array(states, name)
    n = model.state_dim
    if arr.shape != (n,) and not (stacked and arr.ndim == 2 and arr.shape[1] == n):
        raise ValueError(f"{name}: expected shape ({n},){f' or (K, {n})' if stacked else ''}, got {arr.shape}")
    B.check_finite(arr, name)
    rows = arr.reshape(-1, n)
    for s in quaternion_slices(model):
        norms = np.linalg.norm(rows[:, s], axis=1)
        bad = np.nonzero(np.abs(norms - 1) > UNIT_TOL)[0]
        if bad.size:
            where = f"{name}[{s.start}:{s.stop}]" if arr.ndim == 1 else f"{name}[{bad[0]}, {s.start}:{s.stop}]"
            raise ValueError(f"{name}: quaternion {where} has norm {norms[bad[0]]:.9g}, expected 1")
    return arr


def unit_norm_residual(model: Any) -> ca.Function | None:
    """``r(x) = [|q_i|^2 - 1]_i`` over the state's unit quaternions, or ``None`` if there are none."""
    slices = quaternion_slices(model)
    if not slices:
        return None

    def build() -> ca.Function:
        x = ca.SX.sym("x", model.state_dim)
        r = ca.vertcat(*[ca.sumsqr(x[s]) - 1 for s in slices])
        return ca.Function(casadi_name(f"{model.name}_unit_norm"), [x], [r], ["x"], ["r"])

    return cached_function(model, "unit_norm", build)


def normalize_quaternions(model: Any, states: np.ndarray) -> np.ndarray:
    """Copy of ``states`` (..., n) with every raw quaternion scaled to unit norm."""
    out = np.array(states, dtype=float, copy=True)
    for s in quaternion_slices(model):
        out[..., s] /= np.linalg.norm(out[..., s], axis=-1, keepdims=True)
    return out


def interpolate_states(model: Any, xa: np.ndarray, xb: np.ndarray, s: Any) -> np.ndarray:
    """Geodesic-like interpolation ``apply_dx(xa, s state_error(xb, xa))`` (K, n).

    ``xa`` and ``xb`` are states (n,) or stacks of states (K, n), ``s`` a
    scalar or (K,) fractions; all three are broadcast to K rows (one pair and
    several fractions, or K pairs and one fraction). Rotations follow the
    shortest path (``|phi| <= pi``); ``s = 0`` gives ``xa`` and ``s = 1``
    gives ``xb`` (up to the quaternion sign). One call of a CasADi function
    mapped over the K rows, not a Python loop.
    """

    def build() -> ca.Function:
        a, b, frac = ca.SX.sym("xa", model.state_dim), ca.SX.sym("xb", model.state_dim), ca.SX.sym("s")
        return ca.Function(casadi_name(f"{model.name}_interpolate"), [a, b, frac], [model.apply_dx(a, frac * model.state_error(b, a))])

    xa, xb = np.atleast_2d(np.asarray(xa, dtype=float)), np.atleast_2d(np.asarray(xb, dtype=float))
    s = np.atleast_1d(np.asarray(s, dtype=float))
    K = max(len(xa), len(xb), len(s))
    columns = [np.broadcast_to(a, (K, a.shape[1])).T for a in (xa, xb, s[:, None])]
    return np.asarray(cached_function(model, "interpolate", build).map(K)(*columns)).T.reshape(K, -1)
