"""Trapezoidal collocation on the manifold (order 2).

In the chart of ``x_k`` (``y = state_error(., x_k)``, :mod:`trajopt.manifold`)::

    ydot_0 = E_T(x_k) f_k,   ydot_1 = C(x_k, x_{k+1}) f_{k+1}
    defect = state_error(x_{k+1}, x_k) - h/2 (ydot_0 + ydot_1)          (m rows)

``C`` brings the velocity of ``x_{k+1}`` into the frame of ``x_k`` (body-frame
velocities included), which keeps the scheme second order on the manifold.
Running cost: ``h/2 (l(x_k, u_k, p_k) + l(x_{k+1}, u_{k+1}, p_{k+1}))``, plus
``1/2 du^T W du / h`` (``du = u_{k+1} - u_k``) with a control-rate weight ``W``.
Between knots the control is linear and the state quadratic in the chart:
``y(tau) = tau ydot_0 + tau^2 / (2 h) (ydot_1 - ydot_0)``, ``x = apply_dx(x_k, y)``.
"""
from __future__ import annotations

from typing import Any, Optional

import casadi as ca
import numpy as np

from ..manifold import chart_velocity
from .base import IntervalSymbols, Transcription


class Trapezoidal(Transcription):
    """Trapezoidal collocation (order 2): linear controls and quadratic states (in the chart of each
    interval's first knot) between knots, the trapezoidal rule for the running cost."""

    name, order = "trapezoidal", 2

    def interval_function(self, model: Any, running_cost: ca.Function, control_rate: Optional[np.ndarray] = None) -> ca.Function:
        s = IntervalSymbols(model, running_cost.size1_in(2), 0)
        ydot0 = model.error_jacobian_T(s.x) @ s.f
        ydot1 = chart_velocity(model, s.x, s.x_next, s.f_next)
        defect = model.state_error(s.x_next, s.x) - s.h / 2 * (ydot0 + ydot1)
        cost = s.h / 2 * (running_cost(s.x, s.u, s.p) + running_cost(s.x_next, s.u_next, s.p_next))
        if control_rate is not None:  # linear u: udot = (u_{k+1} - u_k) / h over the interval
            du = s.u_next - s.u
            cost += 0.5 * (du.T @ control_rate @ du) / s.h
        inputs = ["x", "u", "x_next", "u_next", "f", "f_next", "h", "p", "p_next"]
        return s.function("trapezoidal_interval", inputs, {"defect": defect, "cost": cost, "residual": s.empty()})

    def interpolant(self, model: Any) -> ca.Function:
        s = IntervalSymbols(model, 0, 0, ca.SX)
        tau = s.tau
        ydot0 = model.error_jacobian_T(s.x) @ model.parametric_dynamics(s.x, s.u, s.t, s.d)
        ydot1 = chart_velocity(model, s.x, s.x_next, model.parametric_dynamics(s.x_next, s.u_next, s.t + s.h, s.d_next))
        y = tau * ydot0 + tau**2 / (2 * s.h) * (ydot1 - ydot0)
        u = s.u + tau / s.h * (s.u_next - s.u)
        return s.interpolant("trapezoidal_interpolant", model.apply_dx(s.x, y), u)
