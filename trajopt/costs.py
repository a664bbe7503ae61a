"""Costs of an optimal-control problem: running costs (integrated) and terminal costs.

The objective is

    J = sum_running  integral_0^tf l(x(t), u(t), p(t)) dt  +  sum_terminal  phi(x(tf), p_f)

Each transcription approximates the integral with its own quadrature
(trapezoid, Simpson, or the shooting integrator). Running-cost parameters are
given per knot (N, np); between knots the transcription uses
:meth:`RunningCost.midpoint_params` (the mean by default).

LQR-style costs are measured in the error state, ``dx = state_error(x, x_ref)``
(docs/conventions.md), so they are valid for quaternions: the attitude part of ``dx`` is
the full rotation angle (axis-angle), i.e. a weight ``w`` here corresponds to
``4 w`` in RobotDynamics.jl's half-angle (Cayley) error.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, List, Optional

import casadi as ca
import numpy as np

from lie import _backend as B
from models.casadi_names import casadi_name

from .knot_function import KnotFunctionLike, knot_function, knot_params
from .manifold import check_states, interpolate_states


def weight_matrix(W: Any, n: int, name: str) -> np.ndarray:
    """A symmetric positive semi-definite weight from a (n,) diagonal or an (n, n) matrix."""
    W = B.numeric_array(W, name)
    if W.shape == (n,):
        W = np.diag(W)
    if W.shape != (n, n):
        raise ValueError(f"{name}: expected shape ({n},) or ({n}, {n}), got {W.shape}")
    B.check_finite(W, name)
    if not np.allclose(W, W.T, rtol=0, atol=1e-12 * max(1.0, np.abs(W).max())):
        raise ValueError(f"{name}: expected a symmetric matrix")
    smallest = np.linalg.eigvalsh(W).min()
    if smallest < -1e-12 * max(1.0, np.abs(W).max()):
        raise ValueError(f"{name}: expected a positive semi-definite matrix, got one with eigenvalue {smallest:.6g}")
    return W


def weight_factor(W: np.ndarray) -> np.ndarray:
    """``L`` (rank(W) x n) with ``L^T L = W`` for a symmetric positive semi-definite ``W``:
    ``L = sqrt(diag(lambda)) V^T`` from the eigen-decomposition, without the null directions
    (a diagonal ``W`` gives the square roots of its nonzero entries, in place)."""
    if np.count_nonzero(W - np.diag(np.diag(W))) == 0:
        keep = np.flatnonzero(np.diag(W) > 0)
        return np.eye(W.shape[0])[keep] * np.sqrt(np.diag(W)[keep])[:, None]
    lam, V = np.linalg.eigh(W)
    keep = lam > 1e-12 * max(1.0, lam.max(initial=0.0))
    return np.sqrt(lam[keep])[:, None] * V[:, keep].T


class Cost(ABC):
    """A scalar ``l(x, u, p)`` of one knot with per-knot parameters ``p``."""

    #: True for terminal costs (evaluated once, at the last knot)
    terminal: bool = False

    @abstractmethod
    def function(self, model: Any) -> ca.Function:
        """``casadi.Function`` ``l(x, u, p) -> (1, 1)`` (SX where possible)."""

    @abstractmethod
    def params(self, model: Any, N: int) -> np.ndarray:
        """Numeric parameters: (N, np) for running costs, (1, np) for terminal costs."""

    def residual(self, model: Any) -> Optional[ca.Function]:
        """``r(x, u, p)`` with ``l = 1/2 |r|^2`` for a least-squares cost, else ``None``.

        A Gauss-Newton Hessian takes ``J_r^T J_r`` for such a cost, and the
        exact Hessian of ``l`` for the others.
        """
        return None


class RunningCost(Cost):
    """A cost rate integrated over the horizon."""

    def midpoint_params(self, model: Any, P: np.ndarray) -> np.ndarray:
        """Parameters (N - 1, np) in the middle of each interval, from the knots' (N, np): the mean."""
        return 0.5 * (P[:-1] + P[1:])


class TerminalCost(Cost):
    """A cost of the final state only, ``phi(x_N, p)``."""

    terminal = True


class QuadraticCost(RunningCost):
    """LQR tracking rate ``l = 1/2 dx^T Q dx + 1/2 du^T R du``, ``dx = state_error(x, x_ref)``, ``du = u - u_ref``.

    ``Q`` is (m, m) or its diagonal (m,) with ``m = model.error_dim``; ``R`` is
    (nu, nu) or (nu,). ``x_ref`` (n,) or per knot (N, n); ``u_ref`` (nu,) or
    (N, nu), zero by default. Between knots the reference state is the
    manifold midpoint of its neighbours and the reference control their mean.
    """

    def __init__(self, model: Any, Q: Any, R: Any, x_ref: Any, u_ref: Any = None) -> None:
        self.m, self.nx, self.nu = model.error_dim, model.state_dim, model.control_dim
        self.Q, self.R = weight_matrix(Q, self.m, "Q"), weight_matrix(R, self.nu, "R")
        self.x_ref = check_states(model, x_ref, "x_ref", stacked=True)
        self.u_ref = np.zeros(self.nu) if u_ref is None else B.numeric_array(u_ref, "u_ref")
        if self.u_ref.shape[-1:] != (self.nu,) or self.u_ref.ndim > 2:
            raise ValueError(f"u_ref: expected shape ({self.nu},) or (N, {self.nu}), got {self.u_ref.shape}")
        B.check_finite(self.u_ref, "u_ref")

    def function(self, model: Any) -> ca.Function:
        x, u, p = ca.SX.sym("x", self.nx), ca.SX.sym("u", self.nu), ca.SX.sym("p", self.nx + self.nu)
        dx, du = model.state_error(x, p[: self.nx]), u - p[self.nx :]
        l = 0.5 * ca.bilin(self.Q, dx, dx) + 0.5 * ca.bilin(self.R, du, du)
        return ca.Function("quadratic_cost", [x, u, p], [l], ["x", "u", "p"], ["out"])

    def residual(self, model: Any) -> ca.Function:
        """``r = [L_Q dx; L_R du]`` with ``Q = L_Q^T L_Q``, ``R = L_R^T L_R`` (:func:`weight_factor`)."""
        x, u, p = ca.SX.sym("x", self.nx), ca.SX.sym("u", self.nu), ca.SX.sym("p", self.nx + self.nu)
        dx, du = model.state_error(x, p[: self.nx]), u - p[self.nx :]
        r = ca.vertcat(ca.DM(weight_factor(self.Q)) @ dx, ca.DM(weight_factor(self.R)) @ du)
        return ca.Function("quadratic_cost_residual", [x, u, p], [r], ["x", "u", "p"], ["r"])

    def params(self, model: Any, N: int) -> np.ndarray:
        return np.hstack([knot_params(self.x_ref, N, self.nx, "x_ref"), knot_params(self.u_ref, N, self.nu, "u_ref")])

    def midpoint_params(self, model: Any, P: np.ndarray) -> np.ndarray:
        X, U = P[:, : self.nx], P[:, self.nx :]
        Xm = interpolate_states(model, X[:-1], X[1:], 0.5)
        return np.hstack([Xm, 0.5 * (U[:-1] + U[1:])])


class QuadraticTerminalCost(TerminalCost):
    """``phi = 1/2 dx^T Qf dx`` with ``dx = state_error(x_N, x_ref)``; ``Qf`` (m, m) or (m,)."""

    def __init__(self, model: Any, Qf: Any, x_ref: Any) -> None:
        self.nx = model.state_dim
        self.Qf = weight_matrix(Qf, model.error_dim, "Qf")
        self.x_ref = check_states(model, x_ref, "x_ref")

    def function(self, model: Any) -> ca.Function:
        x, u, p = ca.SX.sym("x", self.nx), ca.SX.sym("u", model.control_dim), ca.SX.sym("p", self.nx)
        dx = model.state_error(x, p)
        return ca.Function("quadratic_terminal_cost", [x, u, p], [0.5 * ca.bilin(self.Qf, dx, dx)], ["x", "u", "p"], ["out"])

    def residual(self, model: Any) -> ca.Function:
        """``r = L dx`` with ``Qf = L^T L`` (:func:`weight_factor`)."""
        x, u, p = ca.SX.sym("x", self.nx), ca.SX.sym("u", model.control_dim), ca.SX.sym("p", self.nx)
        r = ca.DM(weight_factor(self.Qf)) @ model.state_error(x, p)
        return ca.Function("quadratic_terminal_cost_residual", [x, u, p], [r], ["x", "u", "p"], ["r"])

    def params(self, model: Any, N: int) -> np.ndarray:
        return self.x_ref.reshape(1, -1)


class FunctionCost(RunningCost):
    """A user cost rate ``fn(x)``, ``fn(x, u)`` or ``fn(x, u, p)`` (casadi.Function or callable, scalar).

    ``params``: (np,) for all knots or (N, np) per knot.
    """

    def __init__(self, fn: KnotFunctionLike, params: Any = None, name: str = "function_cost") -> None:
        self.fn, self.raw_params, self.name = fn, params, name

    def function(self, model: Any) -> ca.Function:
        np_ = 0 if self.raw_params is None else np.shape(self.raw_params)[-1]
        return knot_function(self.fn, model.state_dim, model.control_dim, np_, self.name, scalar=True)

    def params(self, model: Any, N: int) -> np.ndarray:
        return knot_params(self.raw_params, N, None, f"{self.name} params")


class LeastSquaresCost(RunningCost):
    """A least-squares cost rate ``l = 1/2 |r(x, u, p)|^2`` of a user residual ``r`` (casadi.Function or
    callable of ``(x, u, p)``, any length), with parameters ``params`` (np,) for all knots or (N, np)
    per knot. A Gauss-Newton Hessian takes ``J_r^T J_r`` of it (:meth:`Cost.residual`); put weights
    in the residual (``w (p_foot(x) - p_ref)``: the weight a parameter too, if it changes per knot)."""

    def __init__(self, residual: KnotFunctionLike, params: Any = None, name: str = "least_squares_cost") -> None:
        self.fn, self.raw_params, self.name = residual, params, name

    def residual(self, model: Any) -> ca.Function:
        np_ = 0 if self.raw_params is None else np.shape(self.raw_params)[-1]
        return knot_function(self.fn, model.state_dim, model.control_dim, np_, f"{self.name}_residual")

    def function(self, model: Any) -> ca.Function:
        r = self.residual(model)
        x, u, p = (ca.SX.sym(n, r.size1_in(i)) for i, n in enumerate(("x", "u", "p")))
        out = r(x, u, p)
        return ca.Function(casadi_name(self.name), [x, u, p], [0.5 * ca.sumsqr(out)], ["x", "u", "p"], ["out"])

    def params(self, model: Any, N: int) -> np.ndarray:
        return knot_params(self.raw_params, N, None, f"{self.name} params")


class FunctionTerminalCost(TerminalCost):
    """A user terminal cost ``fn(x)`` or ``fn(x, u, p)`` with parameters ``params`` (np,)."""

    def __init__(self, fn: KnotFunctionLike, params: Any = None, name: str = "function_terminal_cost") -> None:
        self.fn, self.name = fn, name
        self.raw_params = None if params is None else np.asarray(params, dtype=float).reshape(-1)

    def function(self, model: Any) -> ca.Function:
        np_ = 0 if self.raw_params is None else self.raw_params.size
        return knot_function(self.fn, model.state_dim, model.control_dim, np_, self.name, scalar=True)

    def params(self, model: Any, N: int) -> np.ndarray:
        return knot_params(self.raw_params, 1, None, f"{self.name} params")


def sum_costs(functions: List[ca.Function], param_dims: List[int], nx: int, nu: int, name: str) -> ca.Function:
    """``L(x, u, p) = sum_i l_i(x, u, p_i)`` (SX) from cost functions ``l_i(x, u, p_i)``; ``p`` stacks the ``p_i``."""
    x, u, p = ca.SX.sym("x", nx), ca.SX.sym("u", nu), ca.SX.sym("p", sum(param_dims))
    total, off = ca.SX(0), 0
    for fn, k in zip(functions, param_dims):
        total += fn(x, u, p[off : off + k])
        off += k
    return ca.Function(name, [x, u, p], [total], ["x", "u", "p"], ["out"])


def split_costs(costs: List[Cost], model: Any, param_dims: List[int], name: str) -> ca.Function:
    """``(x, u, p) -> (r, rest)`` with ``sum_i l_i = 1/2 |r|^2 + rest``: the stacked residuals of
    the least-squares costs (:meth:`Cost.residual`) and the sum of the others (SX), for a
    Gauss-Newton Hessian ``J_r^T J_r + d^2 rest``; ``p`` stacks the costs' parameters."""
    nx, nu = model.state_dim, model.control_dim
    x, u, p = ca.SX.sym("x", nx), ca.SX.sym("u", nu), ca.SX.sym("p", sum(param_dims))
    residuals, rest, off = [], ca.SX(0), 0
    for cost, k in zip(costs, param_dims):
        r = cost.residual(model)
        if r is None:
            rest += cost.function(model)(x, u, p[off : off + k])
        else:
            residuals.append(r(x, u, p[off : off + k]))
        off += k
    return ca.Function(name, [x, u, p], [ca.vertcat(*residuals) if residuals else ca.SX(0, 1), rest], ["x", "u", "p"], ["r", "rest"])
