"""Multiple shooting with an explicit integrator (RK4 by default) on the manifold.

Each interval integrates the chart ODE of ``x_k`` (:mod:`trajopt.integrators`)
with the control held at ``u_k`` (zero-order hold) and the running cost as an
extra quadrature state::

    (sigma, J)' = (C(x_k, x_k (+) sigma) f(x_k (+) sigma, u_k, t),  l(x_k (+) sigma, u_k, p(t)))
    defect = state_error(x_{k+1}, apply_dx(x_k, sigma(h)))          (m rows, DESIGN rule 4)
    cost   = J(h)

``p(t)`` is the quadratic through the knot, midpoint and next-knot parameters.
The final knot has no control variable: its control is held from knot N - 2
(constraints and the reported control at the last knot use that value).
Between knots the state is one integrator step of length ``tau`` from ``x_k``.
"""
from __future__ import annotations

from typing import Any, Optional

import casadi as ca
import numpy as np

from ..integrators import Integrator, chart_rate, get_integrator
from .base import IntervalSymbols, Transcription


class MultipleShooting(Transcription):
    """Multiple shooting with an explicit :class:`trajopt.integrators.Integrator` (module docstring)."""

    final_control = False

    def __init__(self, integrator: Integrator | str = "rk4") -> None:
        self.integrator = get_integrator(integrator)
        if self.integrator.implicit:
            raise ValueError(f"integrator: multiple shooting needs an explicit method, got {self.integrator.name}")
        self.name = "multiple_shooting" if self.integrator.name == "rk4" else f"multiple_shooting_{self.integrator.name}"
        self.order = self.integrator.order

    def interval_function(self, model: Any, running_cost: ca.Function, control_rate: Optional[np.ndarray] = None) -> ca.Function:
        if control_rate is not None:
            raise ValueError("control_rate: multiple shooting holds each control constant; use trapezoidal or hermite_simpson")
        m = model.error_dim
        s = IntervalSymbols(model, running_cost.size1_in(2), 0)

        def cost_rate(xi: Any, c: float) -> Any:
            p = (2 * c - 1) * (c - 1) * s.p + 4 * c * (1 - c) * s.p_mid + c * (2 * c - 1) * s.p_next
            return running_cost(xi, s.u, p)

        end = self.integrator.chart_step(chart_rate(model, s.x, s.u, s.t, s.h, f0=s.f, quadrature=cost_rate), s.h)
        defect = model.state_error(s.x_next, model.apply_dx(s.x, end[:m]))
        inputs = ["x", "u", "x_next", "f", "t", "h", "p", "p_mid", "p_next"]
        return s.function(f"{self.name}_interval", inputs, {"defect": defect, "cost": end[m], "residual": ca.SX(0, 1)})

    def interpolant(self, model: Any) -> ca.Function:
        s = IntervalSymbols(model, 0, 0)
        tau = ca.SX.sym("tau")
        sigma = self.integrator.chart_step(chart_rate(model, s.x, s.u, s.t, tau), tau)
        args = [s.x, s.u, s.z, s.x_next, s.u_next, s.t, s.h, tau]
        return ca.Function(f"{self.name}_interpolant", args, [model.apply_dx(s.x, sigma), s.u], ["x", "u", "z", "x_next", "u_next", "t", "h", "tau"], ["x_tau", "u_tau"])
