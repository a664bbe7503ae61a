"""Discrete dynamics ``x_{k+1} = F(x_k, u_k, t_k, h)`` on the state manifold.

Every integrator works in the local chart of the step's start point ``x_k``
(:mod:`trajopt.manifold`): with ``sigma(0) = 0`` it integrates the chart ODE

    sigma' = C(x_k, x_k (+) sigma) f(x_k (+) sigma, u_k, t),     (+) = model.apply_dx

over one step and returns ``x_{k+1} = apply_dx(x_k, sigma(h))``. This is a
Runge-Kutta-Munthe-Kaas scheme: the ODE in the chart is smooth, so each method
keeps its classical order, and quaternions stay unit to round-off because
``apply_dx`` composes them with an exponential (no renormalization needed).
The control is held constant over the step (zero-order hold).

Methods: :data:`EULER` (order 1), :data:`RK2` (explicit midpoint, 2), :data:`RK3` (Kutta, 3), :data:`RK4` (classic,
4) and :data:`IMPLICIT_MIDPOINT` (2; ``sigma = h F(sigma/2, t + h/2)`` solved by
Newton's method, or used as a defect in an NLP). :class:`DiscreteDynamics` binds
a model to a method and gives the step and its tangent-space Jacobians.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Callable, Sequence, Tuple

import casadi as ca
import numpy as np

from lie import _backend as B
from models.casadi_names import casadi_name

from .manifold import chart_velocity

#: A chart ODE right-hand side: ``rate(sigma, c)`` is ``sigma'`` at time ``t_k + c h``.
ChartRate = Callable[[Any, float], Any]


def chart_rate(
    model: Any, x: Any, u: Any, t: Any, h: Any, f0: Any = None, quadrature: Callable[[Any, float], Any] | None = None, params: Any = None
) -> ChartRate:
    """Right-hand side of the chart ODE of ``model`` around ``x`` with control ``u``.

    ``rate(sigma, c) = C(x, x (+) sigma) f(x (+) sigma, u, t + c h)`` (m,); at the
    base point (``sigma`` given as the number 0) it is ``error_jacobian_T(x) f0``
    with ``f0 = f(x, u, t)`` (computed unless given). With ``quadrature``, the
    state is ``[sigma; J]`` and ``quadrature(x (+) sigma, c)`` is appended to the
    rate (e.g. a running cost integrated along the step). ``params``: the
    model's dynamics parameters, held over the step (:attr:`models.Model.dynamics_param_dim`).
    """
    m = model.error_dim

    def rate(state: Any, c: float) -> Any:
        if isinstance(state, (int, float)) and state == 0:
            xi = x
            vi = model.error_jacobian_T(x) @ (model.parametric_dynamics(x, u, t, params) if f0 is None else f0)
        else:
            xi = model.apply_dx(x, state[:m])
            vi = chart_velocity(model, x, xi, model.parametric_dynamics(xi, u, t + c * h, params))
        return vi if quadrature is None else ca.vertcat(vi, quadrature(xi, c))

    return rate


class Integrator(ABC):
    """A one-step method: from ``x_k`` and a control held over the step, the state ``h`` seconds later.

    It integrates the chart ODE ``sigma' = C(x_k, x_k (+) sigma) f(x_k (+) sigma, u_k, t)``
    from ``sigma(0) = 0`` and returns ``apply_dx(x_k, sigma(h))``, so each method keeps its
    classical order on the manifold and quaternions stay unit.
    """

    #: short name ("rk4", ...)
    name: str
    #: classical order of accuracy
    order: int
    #: True when a standalone step needs a nonlinear solve (CasADi MX rootfinder)
    implicit: bool = False

    @abstractmethod
    def chart_defect(self, rate: ChartRate, h: Any, sigma_next: Any) -> Any:
        """Residual of the method for a step that ends at chart point ``sigma_next`` (m,).

        Zero exactly when ``sigma_next`` is the method's step of ``sigma' = rate``
        from ``sigma = 0``.
        """

    def step(self, model: Any, x: Any, u: Any, t: Any, h: Any, params: Any = None) -> Any:
        """Symbolic ``x_{k+1}`` (n,) for SX/MX column vectors (explicit methods); ``params``: the model's
        dynamics parameters, held over the step."""
        return model.apply_dx(x, self.chart_step(chart_rate(model, x, u, t, h, params=params), h))

    def chart_step(self, rate: ChartRate, h: Any) -> Any:
        """``sigma(h)`` of the chart ODE from ``sigma(0) = 0`` (explicit methods)."""
        raise ValueError(f"integrator: {self.name} is implicit and has no explicit step; use DiscreteDynamics or chart_defect")

    def __repr__(self) -> str:
        return f"<integrator {self.name} (order {self.order})>"


class ExplicitRK(Integrator):
    """Explicit Runge-Kutta method with Butcher tableau ``(a, b, c)``.

    ``k_i = rate(h sum_j a_ij k_j, c_i)``, ``sigma(h) = h sum_i b_i k_i``.
    """

    def __init__(self, name: str, order: int, a: Sequence[Sequence[float]], b: Sequence[float], c: Sequence[float]) -> None:
        self.name, self.order = name, order
        self.a, self.b, self.c = [list(row) for row in a], list(b), list(c)

    def chart_step(self, rate: ChartRate, h: Any) -> Any:
        ks: list = []
        for i, ci in enumerate(self.c):
            terms = [aij * k for aij, k in zip(self.a[i], ks) if aij != 0]
            sigma = h * sum(terms[1:], terms[0]) if terms else 0
            ks.append(rate(sigma, ci))
        return h * sum((bi * k for bi, k in zip(self.b[1:], ks[1:])), self.b[0] * ks[0])

    def chart_defect(self, rate: ChartRate, h: Any, sigma_next: Any) -> Any:
        return sigma_next - self.chart_step(rate, h)


class ImplicitMidpoint(Integrator):
    """Implicit midpoint rule ``sigma = h rate(sigma / 2, 1/2)`` (order 2, symplectic)."""

    name, order, implicit = "implicit_midpoint", 2, True

    def chart_defect(self, rate: ChartRate, h: Any, sigma_next: Any) -> Any:
        return sigma_next - h * rate(sigma_next / 2, 0.5)


#: Explicit Euler: ``sigma = h f(0, t)`` (order 1).
EULER = ExplicitRK("euler", 1, [[]], [1.0], [0.0])
#: The explicit midpoint rule (order 2).
RK2 = ExplicitRK("rk2", 2, [[], [0.5]], [0.0, 1.0], [0.0, 0.5])
#: Kutta's third-order method (order 3; the contact formulation's multiple shooting).
RK3 = ExplicitRK("rk3", 3, [[], [0.5], [-1.0, 2.0]], [1 / 6, 2 / 3, 1 / 6], [0.0, 0.5, 1.0])
#: The classic fourth-order Runge-Kutta method (order 4).
RK4 = ExplicitRK("rk4", 4, [[], [0.5], [0.0, 0.5], [0.0, 0.0, 1.0]], [1 / 6, 1 / 3, 1 / 3, 1 / 6], [0.0, 0.5, 0.5, 1.0])
#: The implicit midpoint rule (order 2, symplectic): a defect in an NLP, or Newton's method in a rollout.
IMPLICIT_MIDPOINT = ImplicitMidpoint()

#: Every integrator by its name (``"euler"``, ``"rk2"``, ``"rk3"``, ``"rk4"``, ``"implicit_midpoint"``), as :func:`get_integrator` takes it.
INTEGRATORS = {i.name: i for i in (EULER, RK2, RK3, RK4, IMPLICIT_MIDPOINT)}


def get_integrator(integrator: Integrator | str) -> Integrator:
    """An :class:`Integrator` from itself or its name ("euler", "rk3", "rk4", "implicit_midpoint")."""
    if isinstance(integrator, Integrator):
        return integrator
    if isinstance(integrator, str) and integrator.lower() in INTEGRATORS:
        return INTEGRATORS[integrator.lower()]
    raise ValueError(f"integrator: expected one of {sorted(INTEGRATORS)} or an Integrator, got {integrator!r}")


class DiscreteDynamics:
    """A model discretized by an integrator: ``x_{k+1} = F(x_k, u_k, t_k, h)``.

    ``step`` and ``jacobian`` accept numpy (through ``casadi.Function``s built once
    and cached here) or, for ``step``, CasADi symbols. Implicit methods solve
    their chart equation with CasADi's Newton rootfinder (tolerance 1e-14),
    starting from the explicit Euler step; their symbolic step is an MX call.
    """

    def __init__(self, model: Any, integrator: Integrator | str = "rk4") -> None:
        self.model = model
        self.integrator = get_integrator(integrator)
        self._step_fn: ca.Function | None = None
        self._jac_fn: ca.Function | None = None

    def _chart_residual(self) -> ca.Function:
        """``G(sigma, x, u, t, h)``: the method's chart equation (SX)."""
        m = self.model
        x, u, t = m.symbols(ca.SX)
        h, sigma = ca.SX.sym("h"), ca.SX.sym("sigma", m.error_dim)
        res = self.integrator.chart_defect(chart_rate(m, x, u, t, h), h, sigma)
        return ca.Function("chart_residual", [sigma, ca.vertcat(x, u, t, h)], [res])

    def function(self) -> ca.Function:
        """``casadi.Function`` ``F(x, u, t, h) -> x_next`` (built once)."""
        if self._step_fn is None:
            m = self.model
            kind = ca.MX if self.integrator.implicit else ca.SX
            x, u, t = m.symbols(kind)
            h = kind.sym("h")
            if self.integrator.implicit:
                newton = ca.rootfinder("newton", "newton", self._chart_residual(), {"abstol": 1e-14, "max_iter": 50, "error_on_fail": False})
                guess = h * (m.error_jacobian_T(x) @ m.dynamics(x, u, t))
                x_next = m.apply_dx(x, newton(guess, ca.vertcat(x, u, t, h)))
            else:
                x_next = self.integrator.step(m, x, u, t, h)
            self._step_fn = ca.Function(casadi_name(f"{m.name}_{self.integrator.name}"), [x, u, t, h], [x_next], ["x", "u", "t", "h"], ["x_next"])
        return self._step_fn

    def step(self, x: Any, u: Any, t: Any = 0.0, h: Any = 0.01) -> Any:
        """``x_{k+1}`` (n,): numpy for numeric input, a CasADi expression for symbols."""
        m = self.model
        x, u = B.vector(x, m.state_dim, "x"), B.vector(u, m.control_dim, "u")
        out = self.function()(x, u, t, h)
        return out if B.is_symbolic(out) else np.asarray(out).reshape(-1)

    def jacobian(self, x: Any, u: Any, t: Any = 0.0, h: Any = 0.01) -> Tuple[np.ndarray, np.ndarray]:
        """Tangent-space Jacobians ``(A, B)`` of the step (m x m, m x nu), numeric.

        ``A = d state_error(F(x (+) dx, u), F(x, u)) / d dx`` and ``B = d state_error(
        F(x, u + du), F(x, u)) / d du`` at zero, computed as
        ``A = E_T(x_next) dF/dx E(x)``, ``B = E_T(x_next) dF/du`` (E = error_jacobian).
        """
        m = self.model
        if self._jac_fn is None:
            F = self.function()
            kind = ca.MX if self.integrator.implicit else ca.SX
            xs, us, ts = m.symbols(kind)
            hs = kind.sym("h")
            xn = F(xs, us, ts, hs)
            Et = m.error_jacobian_T(xn)
            A = Et @ ca.jacobian(xn, xs) @ m.error_jacobian(xs)
            Bm = Et @ ca.jacobian(xn, us)
            self._jac_fn = ca.Function(casadi_name(f"{m.name}_{self.integrator.name}_jacobian"), [xs, us, ts, hs], [A, Bm], ["x", "u", "t", "h"], ["A", "B"])
        x, u = B.vector(x, m.state_dim, "x"), B.vector(u, m.control_dim, "u")
        A, Bm = self._jac_fn(x, u, t, h)
        return np.asarray(A), np.asarray(Bm)

    def rollout(self, x0: Any, controls: Any, h: float, t0: float = 0.0) -> np.ndarray:
        """States ``(K + 1, n)`` from ``x0`` under ``controls`` (K, nu), one step of ``h`` each."""
        m = self.model
        x0 = B.vector(x0, m.state_dim, "x0")
        U = np.asarray(controls, dtype=float).reshape(-1, m.control_dim)
        K = U.shape[0]
        xs, us = ca.MX.sym("x", m.state_dim), ca.MX.sym("u", m.control_dim)
        k = ca.MX.sym("k")
        acc = ca.Function("acc", [xs, ca.vertcat(us, k)], [self.function()(xs, us, t0 + k * h, h)]).mapaccum(K)
        traj = np.asarray(acc(x0, np.vstack([U.T, np.arange(K)])))
        return np.vstack([x0, traj.T])
