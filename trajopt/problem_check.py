"""Checks of a problem before its solve: are the states it fixes feasible?

A problem fixes some states before any iteration:

- the initial state ``x0`` at knot 0, when it is given;
- any knot whose state bounds have ``lower == upper`` in every component;
- the goal of a full-state :class:`~trajopt.constraints.GoalConstraint` at the final knot.

Each fixed state ``x_k`` is tested against the state bounds at its knot and
against every constraint at that knot whose rows do not read the control
(``c(x_k, u, p_k)`` with ``dc/du = 0``, e.g. an obstacle's distance or a
foot's height): ``lower - tol <= c <= upper + tol`` with
``tol = TOLERANCE * max(1, |bound|)``. A solver handed a fixed state outside
them can only fail, slowly (IPOPT's restoration phase, then
``Infeasible_Problem_Detected``), and without naming what is wrong;
:func:`check_problem` names it before anything is built.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence

import numpy as np

from models.multibody_model import multibody_robot

from .constraints import GoalConstraint

#: Allowed violation, relative to ``max(1, |bound|)``.
TOLERANCE = 1e-6


class InfeasibleProblem(ValueError):
    """A state the problem fixes breaks one of its bounds or constraints (:func:`check_problem`)."""


@dataclass(frozen=True)
class Violation:
    """One row of a bound or constraint that a fixed state breaks."""

    what: str  #: which state: "the initial state x0", "the goal", ...
    knot: int
    constraint: str  #: "the state bounds", or "constraint 'name'"
    entry: str  #: the state component's name, or the constraint's row ("its value" for a one-row constraint)
    value: float
    bound: float
    side: str  #: "lower" or "upper"

    def text(self) -> str:
        """One line naming the state, the bound or constraint, the knot, the entry, the value and the bound."""
        sign = "<" if self.side == "lower" else ">"
        return f"{self.what} breaks {self.constraint} at knot {self.knot}: {self.entry} = {self.value:.6g} {sign} {self.side} bound {self.bound:.6g}"


def state_names(model: Any) -> List[str]:
    """A name per state component: a multibody robot's coordinate and joint names (velocities as ``v[name]``),
    else ``x[i]``."""
    robot = multibody_robot(model)
    order = robot.orders["nominal"] if robot is not None else None
    if order is not None and len(order.config_names) + len(order.vel_names) == model.state_dim:
        return list(order.config_names) + [f"v[{name}]" for name in order.vel_names]
    return [f"x[{i}]" for i in range(model.state_dim)]


def fixed_states(problem: Any) -> List[tuple[str, int, np.ndarray, bool]]:
    """``(what, knot, state, bounds_fix_it)`` for every state the problem fixes (module docstring)."""
    out = []
    if problem.x0 is not None:
        out.append(("the initial state x0", 0, problem.x0, False))
    pinned = np.nonzero(np.all(problem.state_lower == problem.state_upper, axis=1))[0]
    for k in pinned.tolist():
        if not (k == 0 and problem.x0 is not None):
            out.append((f"the state the bounds fix at knot {k}", k, problem.state_lower[k], True))
    goal = problem.goal()
    if goal is not None:
        out.append(("the goal", problem.N - 1, goal, False))
    return out


def _outside(values: np.ndarray, lower: np.ndarray, upper: np.ndarray, make: Any) -> List[Violation]:
    """The rows of ``values`` outside ``[lower, upper]`` beyond the tolerance, each made into a :class:`Violation`."""
    out = []
    for side, bounds, crossed in (("lower", lower, values < lower), ("upper", upper, values > upper)):
        tol = TOLERANCE * np.maximum(1.0, np.abs(np.where(np.isfinite(bounds), bounds, 0.0)))
        beyond = crossed & (np.abs(values - bounds) > tol)
        out += [make(i, float(values[i]), float(bounds[i]), side) for i in np.nonzero(beyond)[0]]
    return out


def _reads_control(function: Any) -> bool:
    """True when a constraint's output depends on its control argument ``u`` (input 1)."""
    return function.sparsity_jac(1, 0).nnz() > 0


def problem_violations(problem: Any, names: Optional[Sequence[str]] = None) -> List[Violation]:
    """Every bound and control-free constraint row that a fixed state breaks, in knot order."""
    names = state_names(problem.model) if names is None else list(names)
    resolved = problem.resolved_constraints()
    out: List[Violation] = []
    for what, k, x, pinned in fixed_states(problem):
        if not pinned:
            out += _outside(x, problem.state_lower[k], problem.state_upper[k],
                            lambda i, v, b, s: Violation(what, k, "the state bounds", names[i], v, b, s))
        for constraint, rc in zip(problem.constraints, resolved):
            same_goal = what == "the goal" and isinstance(constraint, GoalConstraint) and np.array_equal(constraint.x_goal, x)
            if rc.over_intervals or k not in rc.stages or same_goal or _reads_control(rc.function):
                continue
            row = int(np.nonzero(rc.stages == k)[0][0])
            values = np.asarray(rc.function(x, np.zeros(problem.nu), rc.params[row]), dtype=float).reshape(-1)
            label = f"constraint {rc.name!r}"
            out += _outside(values, rc.lower[row], rc.upper[row],
                            lambda i, v, b, s: Violation(what, k, label, f"row {i}" if rc.size > 1 else "its value", v, b, s))
    return out


def check_problem(problem: Any) -> None:
    """Raise :class:`InfeasibleProblem` (a ``ValueError``), one line naming the first violation, when a state
    the problem fixes breaks its bounds or a control-free constraint (module docstring); ``None`` otherwise."""
    violations = problem_violations(problem)
    if violations:
        more = f" (and {len(violations) - 1} more)" if len(violations) > 1 else ""
        raise InfeasibleProblem(f"problem {problem.name!r}: {violations[0].text()}{more}; pass check=False to solve() to start from it anyway")
