"""Multiple shooting with an explicit integrator (RK4 by default) on the manifold.

Each interval integrates the chart ODE of ``x_k`` (:mod:`trajopt.integrators`)
with the control held at ``u_k`` (zero-order hold) and the model's dynamics
parameters held at ``d_k``; the end state and the defect are::

    x_end  = apply_dx(x_k, sigma(h)),    sigma' = C(x_k, x_k (+) sigma) f(x_k (+) sigma, u_k, t, d_k)
    defect = state_error(x_{k+1}, x_end)                         (m rows, on the manifold)

The running cost is, by default (``cost="integrated"``), an extra quadrature
state of the same integrator, ``J' = l(x_k (+) sigma, u_k, p(t))`` with
``p(t)`` the quadratic through the knot, midpoint and next-knot parameters.
With ``cost="knots"`` it is the rectangle rule ``h l(x_k, u_k, p_k)`` at the
knots, as differential dynamic programming solvers (crocoddyl) take it: the
objective then reads no dynamics, so its Gauss-Newton Hessian needs only first
derivatives of the costs (``hessian="gauss-newton"`` in :func:`trajopt.solve`).
The two rules differ by O(h) in the objective, not in the dynamics.

The final knot has no control variable: its control is held from knot N - 2
(constraints and the reported control at the last knot use that value).
Between knots the state is one integrator step of length ``tau`` from ``x_k``.
Names: ``multiple_shooting`` (RK4, integrated cost),
``multiple_shooting_<integrator>`` and the suffix ``_knot_cost``.
"""
from __future__ import annotations

from typing import Any, Optional

import casadi as ca
import numpy as np

from ..integrators import Integrator, chart_rate, get_integrator
from .base import IntervalSymbols, Transcription

#: Running-cost rules of multiple shooting: ``"integrated"`` (a quadrature state of the integrator)
#: or ``"knots"`` (the rectangle rule ``h l(x_k, u_k, p_k)``).
COST_RULES = ("integrated", "knots")


class MultipleShooting(Transcription):
    """Multiple shooting with an explicit :class:`trajopt.integrators.Integrator` (RK4 by default):
    each interval integrates the dynamics from its knot with the control held, and the defect is
    ``state_error(x_{k+1}, x_end)``; the last knot has no control of its own."""

    final_control = False
    explicit = True

    def __init__(self, integrator: Integrator | str = "rk4", cost: str = "integrated") -> None:
        self.integrator = get_integrator(integrator)
        if self.integrator.implicit:
            raise ValueError(f"integrator: multiple shooting needs an explicit method, got {self.integrator.name}")
        if cost not in COST_RULES:
            raise ValueError(f"cost: expected one of {COST_RULES}, got {cost!r}")
        self.knot_cost = cost == "knots"
        self.name = "multiple_shooting" + ("" if self.integrator.name == "rk4" else f"_{self.integrator.name}") + ("_knot_cost" if self.knot_cost else "")
        self.order = self.integrator.order

    def interval_function(self, model: Any, running_cost: ca.Function, control_rate: Optional[np.ndarray] = None) -> ca.Function:
        if control_rate is not None:
            raise ValueError("control_rate: multiple shooting holds each control constant; use trapezoidal or hermite_simpson")
        m = model.error_dim
        s = IntervalSymbols(model, running_cost.size1_in(2), 0)
        if self.knot_cost:
            sigma = self.integrator.chart_step(chart_rate(model, s.x, s.u, s.t, s.h, f0=s.f, params=s.d), s.h)
            cost = s.h * running_cost(s.x, s.u, s.p)
        else:

            def cost_rate(xi: Any, c: float) -> Any:
                p = (2 * c - 1) * (c - 1) * s.p + 4 * c * (1 - c) * s.p_mid + c * (2 * c - 1) * s.p_next
                return running_cost(xi, s.u, p)

            end = self.integrator.chart_step(chart_rate(model, s.x, s.u, s.t, s.h, f0=s.f, quadrature=cost_rate, params=s.d), s.h)
            sigma, cost = end[:m], end[m]
        x_end = model.apply_dx(s.x, sigma)
        defect = model.state_error(s.x_next, x_end)
        inputs = ["x", "u", "x_next", "f", "t", "h", "p", "d"] + ([] if self.knot_cost else ["p_mid", "p_next"])
        return s.function(f"{self.name}_interval", inputs, {"defect": defect, "cost": cost, "residual": s.empty(), "x_end": x_end})

    def interpolant(self, model: Any) -> ca.Function:
        s = IntervalSymbols(model, 0, 0, ca.SX)
        sigma = self.integrator.chart_step(chart_rate(model, s.x, s.u, s.t, s.tau, params=s.d), s.tau)
        return s.interpolant(f"{self.name}_interpolant", model.apply_dx(s.x, sigma), s.u)
