"""Rigid-body reorientation (attitude slew) with body torques."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from lie import axis_angle_to_quat
from models.torque_body import TorqueBody
from trajopt import GoalConstraint, Problem, QuadraticCost

from .registry import register


def slew_problem(
    angle: float,
    axis: Sequence[float] = (0.0, 0.0, 1.0),
    N: int = 41,
    tf: float = 6.0,
    u_max: float = np.inf,
    inertia: Sequence[float] = (1.0, 2.0, 3.0),
    r_weight: float = 1.0,
    name: str = "rigid-body-slew",
) -> Problem:
    """Rest-to-rest rotation by ``angle`` (rad) about the body ``axis`` of a :class:`TorqueBody`.

    State ``[r, q, v, w]`` (unit quaternion); the body starts at the identity
    attitude and must end at ``exp(angle axis)``, at rest (GoalConstraint on the
    full state; the center of mass stays at the origin). Cost: ``1/2 r_weight
    integral |u|^2 dt`` (torque energy only), ``|u_i| <= u_max``. Guess: the
    attitude interpolated on the manifold (constant-rate rotation), zero torque.
    """
    axis = np.asarray(axis, dtype=float)
    if axis.shape != (3,) or not np.linalg.norm(axis) > 0:
        raise ValueError(f"axis: expected a nonzero (3,) vector, got {axis!r}")
    model = TorqueBody(inertia=inertia, u_max=u_max)
    x0 = model.build_state(np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0]), np.zeros(3), np.zeros(3))
    q_goal = axis_angle_to_quat(angle * axis / np.linalg.norm(axis))
    xf = model.build_state(np.zeros(3), q_goal, np.zeros(3), np.zeros(3))
    problem = Problem(model, N=N, tf=tf, x0=x0, name=name)
    problem.add_cost(QuadraticCost(model, np.zeros(model.error_dim), np.full(3, r_weight), x_ref=xf))
    problem.add_constraint(GoalConstraint(model, xf))
    return problem


@register("rigid-body-slew")
def rigid_body_slew(N: int = 41, tf: float = 6.0, u_max: float = 2.0) -> Problem:
    """180 degree slew about the body z axis (inertia diag(1, 2, 3) kg m^2) in 6 s, ``|u_i| <= 2`` N m.

    A half turn is where the shortest-path attitude error switches direction,
    so the goal is met with the rotation error measured on the manifold (sign
    invariant) and the guess picks the turning direction. See :func:`slew_problem`.
    """
    return slew_problem(np.pi, (0.0, 0.0, 1.0), N=N, tf=tf, u_max=u_max)
