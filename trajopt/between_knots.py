"""A solution checked between its knots: bounds and constraints on the interpolated trajectory, and its replay gap.

The NLP holds bounds and constraints at knots (and at a transcription's
collocation points when asked); the trajectory a transcription assumes
between them (:meth:`trajopt.Solution.evaluate`: Hermite-Simpson's cubic
states and quadratic controls, trapezoidal's quadratic states and linear
controls) can cross them. :func:`check_between_knots` samples each interval
``k`` at ``t_k + s h``, ``s = (j + 1/2) / points`` for ``j = 0 .. points - 1``, and
measures

- the state and control bounds there, against the looser of the bounds of
  knots ``k`` and ``k + 1``;
- every inequality row of a constraint placed at both knots ``k`` and ``k + 1``
  (the hull of their bounds, the mean of their parameters, as at collocation
  points). Equality rows are left out: between knots they measure the
  interpolation's own error (an inverse-dynamics residual, a foot held on
  its foothold), which the replay gap below measures as the dynamics see it;
- the **replay gap** of each interval: the state error between ``x_{k+1}`` and
  ``x_k`` integrated by RK4 on the manifold in ``substeps`` steps of
  ``h / substeps`` under the interpolated controls (each held at its substep's
  midpoint) and the dynamics parameters of knot ``k``: how far an open-loop
  replay of the controls drifts per interval, which the transcription's own
  defect, exact to its order, does not show.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List

import casadi as ca
import numpy as np

from models.casadi_names import casadi_name

from .integrators import RK4
from .problem_check import state_names

#: The largest violation between knots, relative to ``max(1, |bound|)``, that the report accepts without a warning.
VIOLATION_WARNING = 1e-3
#: The largest replay gap of an interval (the state error's infinity norm, in the state's units) accepted without
#: a warning. Of the registered problems' default solves, the acrobot's (0.61 on one interval), the quadrotor flip's
#: and the gap jump's (0.03-0.04) exceed it; the trot's is 0.005, the jump's 0.014.
GAP_WARNING = 2e-2


@dataclass(frozen=True)
class BetweenKnots:
    """What :func:`check_between_knots` measured on a solution."""

    points: int  #: sampled points per interval
    substeps: int  #: RK4 steps per interval of the replay
    violation: float  #: the largest bound or constraint violation at the sampled points
    relative_violation: float  #: the same, divided by ``max(1, |bound|)``
    worst: str  #: where it is, in words ("" when nothing is violated)
    gap: float  #: the largest replay gap of an interval (infinity norm of the state error)
    gap_interval: int  #: the interval where it is

    def warnings(self) -> List[str]:
        """A line for each measure beyond its warning level (:data:`VIOLATION_WARNING`, :data:`GAP_WARNING`)."""
        out = []
        if self.relative_violation > VIOLATION_WARNING:
            out.append(f"WARNING: between knots the trajectory breaks a bound or constraint by {self.violation:.3g} ({self.worst}); it holds at the knots only")
        if self.gap > GAP_WARNING:
            out.append(f"WARNING: an open-loop replay of the controls drifts {self.gap:.3g} per interval (interval {self.gap_interval}, RK4 at h/{self.substeps}); refine the knots or use a higher-order transcription")
        return out


def _rk4_step(model: Any) -> ca.Function:
    """``(x, u, t, h, d) -> x_next``: one RK4 step on the manifold with the control and the dynamics parameters held."""
    kind = model.symbol_type
    x, u, t = model.symbols(kind)
    h, d = kind.sym("h"), kind.sym("d", model.dynamics_param_dim)
    x_next = RK4.step(model, x, u, t, h, d if model.dynamics_param_dim else None)
    return ca.Function(casadi_name(f"{model.name}_replay_rk4"), [x, u, t, h, d], [x_next], ["x", "u", "t", "h", "d"], ["x_next"])


def replay_gaps(solution: Any, substeps: int = 10) -> np.ndarray:
    """The infinity norm (N - 1,) of ``state_error(x_{k+1}, RK4 replay of interval k)`` (module docstring)."""
    problem = solution.problem
    model, N, tf = problem.model, solution.N, solution.tf
    t_k, h = solution.times[:-1], solution.knot_spacing
    step = _rk4_step(model).map(N - 1)
    D = problem.dynamics_params[:-1].T
    x = solution.states[:-1].T
    for m in range(substeps):
        t = t_k + m / substeps * h
        _, u = solution.evaluate(np.minimum(t + 0.5 * h / substeps, tf))
        x = np.asarray(step(x, u.reshape(N - 1, -1).T, t, h / substeps, D))
    xs, ys = model.symbols(model.symbol_type)[0], model.symbol_type.sym("y", model.state_dim)
    error = ca.Function("replay_error", [xs, ys], [model.state_error(xs, ys)]).map(N - 1)
    return np.abs(np.asarray(error(solution.states[1:].T, x))).max(axis=0)


def check_between_knots(solution: Any, points: int = 10, substeps: int = 10) -> BetweenKnots:
    """Bounds, constraints and the replay gap of ``solution`` between its knots (module docstring); needs its problem attached."""
    problem = solution.problem
    if problem is None:
        raise ValueError("solution: no problem attached; pass problem= to Solution.load")
    N = solution.N
    s = (np.arange(points) + 0.5) / points
    k = np.repeat(np.arange(N - 1), points)
    t_k, h = solution.times[:-1], solution.knot_spacing
    times = t_k[k] + np.tile(s, N - 1) * h[k]
    X, U = solution.evaluate(times)
    worst = (0.0, 0.0, "")  # (relative violation, violation, where)

    def record(values: np.ndarray, lower: np.ndarray, upper: np.ndarray, label: Any) -> None:
        """Keep the largest relative violation of ``lower <= values <= upper`` (rows: samples), named by ``label(sample, column)``."""
        nonlocal worst
        for side, bounds, excess in (("lower", lower, lower - values), ("upper", upper, values - upper)):
            relative = np.divide(excess, np.maximum(1.0, np.abs(bounds)), out=np.zeros_like(excess), where=excess > 0)
            if relative.size and relative.max() > worst[0]:
                i, j = np.unravel_index(int(np.argmax(relative)), relative.shape)
                sign = "<" if side == "lower" else ">"
                worst = (float(relative[i, j]), float(excess[i, j]), f"{label(i, j)}: {values[i, j]:.6g} {sign} {side} bound {bounds[i, j]:.6g}")

    names = state_names(problem.model)
    where = lambda i: f"t = {times[i]:.4g} s (interval {k[i]})"  # noqa: E731
    record(X, *_looser(problem.state_lower, problem.state_upper, k), lambda i, j: f"the state bound on {names[j]} at {where(i)}")
    record(U, *_looser(problem.control_lower, problem.control_upper, k), lambda i, j: f"the control bound on u[{j}] at {where(i)}")
    for rc in problem.resolved_constraints():
        intervals, lower, upper, params = rc.between_knots_data()
        if not intervals.size:
            continue
        rows = (intervals[:, None] * points + np.arange(points)).reshape(-1)
        values = np.asarray(rc.function.map(len(rows))(X[rows].T, U[rows].T, np.repeat(params, points, axis=0).T)).T
        equality = lower == upper  # rows the transcription ties to its own interpolation error between knots
        lower, upper = np.where(equality, -np.inf, lower), np.where(equality, np.inf, upper)
        of = (lambda j: f" row {j}") if rc.size > 1 else (lambda j: "")
        record(values, np.repeat(lower, points, axis=0), np.repeat(upper, points, axis=0), lambda i, j, rc=rc, rows=rows, of=of: f"constraint {rc.name!r}{of(j)} at {where(rows[i])}")
    gaps = replay_gaps(solution, substeps)
    return BetweenKnots(points, substeps, worst[1], worst[0], worst[2], float(gaps.max(initial=0.0)), int(np.argmax(gaps)) if gaps.size else 0)


def _looser(lower: np.ndarray, upper: np.ndarray, k: np.ndarray) -> tuple:
    """Per sample on interval ``k``: the looser of the bounds of knots ``k`` and ``k + 1``."""
    return np.minimum(lower[k], lower[k + 1]), np.maximum(upper[k], upper[k + 1])
