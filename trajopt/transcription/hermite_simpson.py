"""Hermite-Simpson collocation, separated form, on the manifold (order 4).

Each interval has its own midpoint state ``x_m`` and control ``u_m`` (``z =
[x_m; u_m]``). In the chart of ``x_k`` (``y = state_error(., x_k)``,
:mod:`trajopt.manifold`), with ``y_1 = state_error(x_{k+1}, x_k)``,
``y_m = state_error(x_m, x_k)`` and chart velocities ``ydot_0 = E_T(x_k) f_k``,
``ydot_m = C(x_k, x_m) f(x_m, u_m, t_k + h/2)``, ``ydot_1 = C(x_k, x_{k+1}) f_{k+1}``::

    Simpson:  y_1 - h/6 (ydot_0 + 4 ydot_m + ydot_1) = 0                    (m rows)
    Hermite:  y_m - y_1 / 2 - h/8 (ydot_0 - ydot_1) = 0                     (m rows)

(``defect`` stacks both, 2 m rows) plus ``|q_m|^2 - 1 = 0`` for each midpoint
quaternion (``residual``). Running cost by Simpson's rule,
``h/6 (l_k + 4 l_m + l_{k+1})``, plus the exact ``1/2 integral udot^T W udot``
of the quadratic control with a control-rate weight ``W``. Between knots the state is the cubic Hermite
interpolant in the chart and the control the quadratic through ``u_k``,
``u_m``, ``u_{k+1}``; midpoint bounds are the hull of the two knots' bounds.
That quadratic can leave the control bounds between its three points; its
middle Bezier point (:meth:`HermiteSimpson.control_points`), bounded too
when a problem asks (``bound_controls(..., interior=True)``), keeps it inside.
"""
from __future__ import annotations

from typing import Any, List, Optional, Tuple

import casadi as ca
import numpy as np

from ..manifold import chart_velocity, interpolate_states, unit_norm_residual
from .base import IntervalSymbols, Transcription


class HermiteSimpson(Transcription):
    """Separated Hermite-Simpson collocation (order 4): a midpoint state and control per interval,
    cubic Hermite states and quadratic controls between knots, Simpson's rule for the running cost."""

    name, order = "hermite_simpson", 4

    def interval_variables(self, model: Any) -> List[Tuple[str, int]]:
        return [("x_mid", model.state_dim), ("u_mid", model.control_dim)]

    def interval_points(self, model: Any) -> List[Tuple[slice, slice]]:
        nx, nu = model.state_dim, model.control_dim
        return [(slice(0, nx), slice(nx, nx + nu))]

    def interval_function(self, model: Any, running_cost: ca.Function, control_rate: Optional[np.ndarray] = None) -> ca.Function:
        nx = model.state_dim
        s = IntervalSymbols(model, running_cost.size1_in(2), self.interval_size(model))
        x_m, u_m = s.z[:nx], s.z[nx:]
        ydot0 = model.error_jacobian_T(s.x) @ s.f
        ydotm = chart_velocity(model, s.x, x_m, model.parametric_dynamics(x_m, u_m, s.t + s.h / 2, s.d))
        ydot1 = chart_velocity(model, s.x, s.x_next, s.f_next)
        y1, ym = model.state_error(s.x_next, s.x), model.state_error(x_m, s.x)
        simpson = y1 - s.h / 6 * (ydot0 + 4 * ydotm + ydot1)
        hermite = ym - y1 / 2 - s.h / 8 * (ydot0 - ydot1)
        cost = s.h / 6 * (running_cost(s.x, s.u, s.p) + 4 * running_cost(x_m, u_m, s.p_mid) + running_cost(s.x_next, s.u_next, s.p_next))
        if control_rate is not None:  # quadratic u: du/ds = g0 + s g1 on s = tau / h in [0, 1]
            g0, g1 = -3 * s.u + 4 * u_m - s.u_next, 4 * (s.u - 2 * u_m + s.u_next)
            W = control_rate
            cost += 0.5 / s.h * (g0.T @ W @ g0 + g0.T @ W @ g1 + g1.T @ W @ g1 / 3)
        norm = unit_norm_residual(model)
        residual = norm(x_m) if norm is not None else s.empty()
        inputs = ["x", "u", "z", "x_next", "u_next", "f", "f_next", "t", "h", "p", "p_mid", "p_next", "d"]
        return s.function("hermite_simpson_interval", inputs, {"defect": ca.vertcat(simpson, hermite), "cost": cost, "residual": residual})

    def interpolant(self, model: Any) -> ca.Function:
        nx = model.state_dim
        s = IntervalSymbols(model, 0, self.interval_size(model), ca.SX)
        tau = s.tau
        ydot0 = model.error_jacobian_T(s.x) @ model.parametric_dynamics(s.x, s.u, s.t, s.d)
        ydot1 = chart_velocity(model, s.x, s.x_next, model.parametric_dynamics(s.x_next, s.u_next, s.t + s.h, s.d_next))
        y1 = model.state_error(s.x_next, s.x)
        r = tau / s.h
        y = (r**3 - 2 * r**2 + r) * s.h * ydot0 + (-2 * r**3 + 3 * r**2) * y1 + (r**3 - r**2) * s.h * ydot1
        u_m = s.z[nx:]
        u = (2 * r - 1) * (r - 1) * s.u + 4 * r * (1 - r) * u_m + r * (2 * r - 1) * s.u_next
        return s.interpolant("hermite_simpson_interpolant", model.apply_dx(s.x, y), u)

    def control_points(self, model: Any) -> ca.Function:
        """The quadratic control's middle Bezier point ``2 u_m - (u_k + u_{k+1}) / 2`` (its value at the
        midpoint is ``u_m``; between knots it exceeds ``u_m``'s bounds unless this point keeps them)."""
        nx, nu = model.state_dim, model.control_dim
        u, z, u_next = ca.SX.sym("u", nu), ca.SX.sym("z", self.interval_size(model)), ca.SX.sym("u_next", nu)
        return ca.Function("hermite_simpson_control_points", [u, z, u_next], [2 * z[nx:] - 0.5 * (u + u_next)], ["u", "z", "u_next"], ["c"])

    def interval_guess(self, model: Any, states: np.ndarray, controls: np.ndarray) -> np.ndarray:
        mids = interpolate_states(model, states[:-1], states[1:], 0.5)
        return np.hstack([mids, 0.5 * (controls[:-1] + controls[1:])])

    def interval_bounds(self, model: Any, x_bounds: Tuple[np.ndarray, np.ndarray], u_bounds: Tuple[np.ndarray, np.ndarray]) -> Tuple[np.ndarray, np.ndarray]:
        (xl, xu), (ul, uu) = x_bounds, u_bounds
        lower = np.hstack([np.minimum(xl[:-1], xl[1:]), np.minimum(ul[:-1], ul[1:])])
        upper = np.hstack([np.maximum(xu[:-1], xu[1:]), np.maximum(uu[:-1], uu[1:])])
        return lower, upper
