"""Swing-up problems of the classic planar systems: pendulum, cartpole, acrobot, double cartpole.

Every angle is 0 pointing UP (:mod:`models.planar_chain`), so a swing-up goes
from hanging (pi) to upright (0), from rest to rest, in a fixed time. Common
formulation::

    minimize   integral 1/2 (dx^T Q dx + u^T R u) dt,   dx = x - x_goal
    subject to x(0) = x_start, x(tf) = x_goal (GoalConstraint), |u| <= u_max

with a small state weight ``Q`` (it only shapes the path; the goal is a hard
constraint) and the control weight ``R``. The default guess interpolates the
states linearly from start to goal with zero control.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from models.planar_chain import Cartpole, DoubleCartpole, DoublePendulum, Pendulum
from trajopt import GoalConstraint, Problem, QuadraticCost

from .registry import register


def swing_up(model, x_start: Sequence[float], N: int, tf: float, q_weight: float, r_weight: float, name: str) -> Problem:
    """Rest-to-rest swing-up of ``model`` from ``x_start`` to the upright equilibrium in ``tf`` s on ``N``
    knots, minimizing the control effort, within the control bounds, ending at rest upright."""
    goal = np.zeros(model.state_dim)
    problem = Problem(model, N=N, tf=tf, x0=np.asarray(x_start, dtype=float), name=name)
    problem.add_cost(QuadraticCost(model, np.full(model.error_dim, q_weight), np.full(model.control_dim, r_weight), x_ref=goal))
    problem.add_constraint(GoalConstraint(model, goal))
    return problem


@register("pendulum")
def pendulum(N: int = 51, tf: float = 3.0, u_max: float = 5.0) -> Problem:
    """Pendulum (m = l = 1) from hanging to upright in 3 s with the torque within +-5 N m.

    Holding the pendulum horizontal needs 9.81 N m, so it must pump energy by
    swinging back and forth. Cost: Q = 0.01 I, R = 0.1.
    """
    return swing_up(Pendulum(u_max=u_max), [np.pi, 0.0], N, tf, 1e-2, 1e-1, "pendulum")


@register("cartpole")
def cartpole(N: int = 50, tf: float = 2.5, u_max: float = 20.0) -> Problem:
    """Cartpole (cart 1 kg, pole 1 kg at 1 m) swing-up in 2.5 s, cart back at y = 0, force within +-20 N.

    State ``[y, theta, y_dot, theta_dot]``. Cost: Q = 0.01 I, R = 0.01.
    """
    return swing_up(Cartpole(u_max=u_max), [0.0, np.pi, 0.0, 0.0], N, tf, 1e-2, 1e-2, "cartpole")


@register("acrobot")
def acrobot(N: int = 51, tf: float = 5.0, u_max: float = 15.0) -> Problem:
    """Acrobot (double pendulum, only the elbow driven; masses and lengths 1) swing-up in 5 s, torque within +-15 N m.

    State ``[theta1, theta2, theta1_dot, theta2_dot]`` with ``theta2`` relative.
    Cost: Q = 0.01 I, R = 0.01.
    """
    return swing_up(DoublePendulum(actuated=(1,), u_max=u_max), [np.pi, 0.0, 0.0, 0.0], N, tf, 1e-2, 1e-2, "acrobot")


@register("double-cartpole")
def double_cartpole(N: int = 51, tf: float = 3.0, u_max: float = 60.0) -> Problem:
    """Double cartpole (all masses and lengths 1) from hanging to both poles upright in 3 s, force within +-60 N.

    State ``[y, theta1, theta2, y_dot, theta1_dot, theta2_dot]`` (``theta2``
    relative to the first pole). Cost: Q = 0.01 I, R = 0.001.
    """
    return swing_up(DoubleCartpole(u_max=u_max), [0.0, np.pi, 0.0, 0.0, 0.0, 0.0], N, tf, 1e-2, 1e-3, "double-cartpole")
