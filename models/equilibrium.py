"""The control that holds a model where a state puts it: the default control guess of every problem.

For a model ``xdot = f(x, u, t, d)``, the rows of ``f`` that a control can
change, ``f_a(x, u)`` (the rows whose Jacobian ``df/du`` is not structurally
zero: the velocity derivatives of a mechanical system; never ``qdot = E(q) v``),
should vanish for the model to stay at ``x``. The equilibrium control is the
bounded least-squares solution::

    u* = argmin_{lb <= u <= ub} |f_a(x, u, t, d)|^2

found by Gauss-Newton steps from ``u_0 = clip(0, lb, ub)``: each step solves
the linearized problem ``min |f_a + J_a du|^2`` (``J_a = df_a/du``) for the
minimum-norm step, and, when that leaves the bounds, the bounded linear
least squares (:func:`scipy.optimize.lsq_linear`). A control-affine model
(``J_a`` independent of ``u``) is solved by the first step. Examples:

- a quadrotor at a level attitude: hover thrust, ``m g / (4 k_f)`` per rotor
  (tilted: the thrust whose vertical part best balances gravity);
- a fully actuated fixed-base arm: the gravity-compensating (and, with a
  velocity, Coriolis-compensating) torques ``u = B^-1 C(q, v)``, RNEA with zero
  acceleration;
- an underactuated model (a cart-pole with its pole tilted, a floating base
  in the air): the control that makes the accelerations smallest in the
  least-squares sense; it cannot zero them.

:meth:`models.Model.equilibrium_control` calls :func:`equilibrium_controls`;
a model may state its own equilibrium by overriding that method (the legged problems build their
guess from standing forces and inverse dynamics, :mod:`trajopt.legged.ocp`).
"""
from __future__ import annotations

from typing import Any

import casadi as ca
import numpy as np

from .casadi_names import casadi_name

#: Gauss-Newton steps at most (a control-affine model needs one).
MAX_STEPS = 20
#: Stop when a step is below this, relative to ``max(1, |u|)``.
STEP_TOL = 1e-12


def equilibrium_residual_function(model: Any) -> ca.Function:
    """``(x, u, t, [d]) -> (f_a, J_a, affine)``: the control-dependent rows of the model's
    ``xdot`` (the rows that vanish at an equilibrium: velocity rates of a mechanical
    system, never ``qdot = E(q) v``), their Jacobian with respect to ``u``, and 1 when that
    Jacobian does not depend on ``u`` (0 otherwise). An SX function, also for a model built on MX
    (expanded) unless its graph has no SX form."""
    x, u, t = model.symbols(model.symbol_type)
    d = model.param_symbols(model.symbol_type)
    f = model.continuous_dynamics(x, u, t, *d)
    jac = ca.jacobian(f, u)
    rows = sorted(set(jac.sparsity().row()))
    f_a, J_a = f[rows], jac[rows, :]
    affine = ca.DM(0.0 if ca.depends_on(J_a, u) else 1.0)
    inputs = [x, u, t, *d]
    names = ["x", "u", "t", *["d"] * len(d)]
    fn = ca.Function(casadi_name(f"{model.name}_equilibrium_residual"), inputs, [f_a, J_a, affine], names, ["f_a", "J_a", "affine"])
    if fn.is_a("MXFunction"):
        try:  # as SX it drops what its calls compute and it does not use (a KKT model's custom Jacobian also gives d a / d x)
            return fn.expand()
        except RuntimeError:  # an MX node with no SX form (an external function): evaluated as MX
            pass
    return fn


def _bounded_step(J: np.ndarray, r: np.ndarray, u: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """The step ``du`` minimizing ``|r + J du|`` with ``lower <= u + du <= upper``: the minimum-norm
    least-squares step when it stays inside the bounds, else the bounded solution. Controls whose
    bounds are equal are fixed at them (``lsq_linear`` takes no empty interval)."""
    du = np.linalg.lstsq(J, -r, rcond=None)[0]
    if np.all(u + du >= lower) and np.all(u + du <= upper):
        return du
    fixed = upper <= lower
    du = np.where(fixed, lower - u, 0.0)
    free = ~fixed
    if free.any():
        from scipy.optimize import lsq_linear  # imported here: scipy.optimize costs a third of a second at start-up

        du[free] = lsq_linear(J[:, free], -(r + J @ du), bounds=(lower[free] - u[free], upper[free] - u[free]), method="bvls").x
    return du


def equilibrium_controls(model: Any, states: np.ndarray, times: np.ndarray, params: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """The controls that hold ``model`` still: at each of ``states`` (K, n), the bounded
    least-squares solution ``u*`` of the control-dependent state rates ``f_a(x, u) = 0``
    (Gauss-Newton steps from ``clip(0, lower, upper)``), at ``times`` (K,) with
    dynamics parameters ``params`` (K, nd), within ``[lower, upper]`` (K, m): an array (K, m)."""
    fn = model.numeric_function("equilibrium_residual")
    K, m = states.shape[0], model.control_dim
    U = np.clip(np.zeros((K, m)), lower, upper)
    if m == 0 or fn.size1_out(0) == 0:
        return U
    batch = fn if K == 1 else fn.map(K)  # map() builds a new Function: not for one state
    extra = [params.T] if model.dynamics_param_dim else []
    active = np.ones(K, dtype=bool)
    for _ in range(MAX_STEPS):
        f_a, J_a, affine = (np.asarray(out) for out in batch(states.T, U.T, times[None, :], *extra))
        rows = f_a.shape[0]
        J_all = J_a.reshape(rows, K, m)  # the map puts knot k's Jacobian in columns k m .. (k + 1) m - 1
        for k in np.flatnonzero(active):
            du = _bounded_step(J_all[:, k, :], f_a[:, k], U[k], lower[k], upper[k])
            U[k] += du
            if affine[0, k] or np.linalg.norm(du) <= STEP_TOL * max(1.0, np.linalg.norm(U[k])):
                active[k] = False
        if not active.any():
            break
    return np.clip(U, lower, upper)
