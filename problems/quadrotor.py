"""Quadrotor problems: point-to-point flight and a full 360 degree flip.

Model: :class:`models.quadrotor.Quadrotor` with a unit-quaternion attitude,
state ``[r, q, v, w]`` (world position and velocity, body angular velocity),
rotor commands ``u`` (4,) bounded to ``[0, u_max]`` (hover 1.226 each).
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from lie import axis_angle_to_quat, quat_to_rot
from models.quadrotor import Quadrotor
from trajopt import Constraint, GoalConstraint, Problem, QuadraticCost

from .registry import register


def hover_state(model: Quadrotor, position, roll: float = 0.0) -> np.ndarray:
    """At rest at ``position`` (world), rolled by ``roll`` about the world x axis."""
    return model.build_state(position, axis_angle_to_quat(np.array([roll, 0.0, 0.0])), np.zeros(3), np.zeros(3))


@register("quadrotor")
def quadrotor(N: int = 51, tf: float = 5.0, u_max: float = 4.0) -> Problem:
    """Quadrotor from hover at the origin to hover at (5, 0, 1) m in 5 s.

    Cost: ``1/2 integral (dx^T Q dx + du^T R du) dt`` with ``dx =
    state_error(x, x_goal)`` (position, axis-angle attitude, velocities),
    ``Q = 0.01 I`` (12), ``du = u - u_hover``, ``R = 0.1 I``; the goal is a hard
    constraint (GoalConstraint). ``0 <= u <= u_max``. Guess: states
    interpolated on the manifold, hover controls.
    """
    model = Quadrotor(u_max=u_max)
    x0, xf = hover_state(model, [0.0, 0.0, 0.0]), hover_state(model, [5.0, 0.0, 1.0])
    problem = Problem(model, N=N, tf=tf, x0=x0, name="quadrotor")
    problem.add_cost(QuadraticCost(model, np.full(12, 1e-2), np.full(4, 1e-1), x_ref=xf, u_ref=model.hover_control()))
    problem.add_constraint(GoalConstraint(model, xf))
    problem.set_initial_guess(controls=model.hover_control())
    return problem


#: The figure-eight of ``quadrotor-track``: half-width (m), period (s), height (m).
FIGURE_EIGHT = {"half_width": 1.0, "period": 4.0, "height": 1.0}


def figure_eight_states(model: Quadrotor, times: np.ndarray, half_width: float = 1.0, period: float = 4.0, height: float = 1.0) -> np.ndarray:
    """States (K, 13) along the figure-eight ``p(t) = [a sin(w t), a/2 sin(2 w t), height]``
    (``w = 2 pi / period``, ``2 a`` across), with its velocity, level and not rotating."""
    t = np.atleast_1d(np.asarray(times, dtype=float))
    w = 2 * np.pi / period
    position = np.stack([half_width * np.sin(w * t), 0.5 * half_width * np.sin(2 * w * t), np.full_like(t, height)], axis=1)
    velocity = np.stack([half_width * w * np.cos(w * t), half_width * w * np.cos(2 * w * t), np.zeros_like(t)], axis=1)
    return np.array([model.build_state(p, [1.0, 0.0, 0.0, 0.0], v, np.zeros(3)) for p, v in zip(position, velocity)])


@register("quadrotor-track")
def quadrotor_track(N: int = 81, tf: float = 4.0, u_max: float = 4.0) -> Problem:
    """Track one lap of a figure-eight 2 m across at 1 m height in 4 s, starting on it.

    Cost: ``1/2 integral (dx^T Q dx + du^T R du) dt`` with ``dx =
    state_error(x, x_ref(t))``, ``x_ref`` :func:`figure_eight_states`,
    ``Q = diag(1000 I3, 0.01 I3, I3, 0.01 I3)`` (position first: the attitude
    and rates follow from it), ``du = u - u_hover``, ``R = 0.1 I``;
    ``0 <= u <= u_max``. The problem's ``reference_states(times)`` gives the
    reference at any time: ``trajopt mpc quadrotor-track`` tracks it in a
    receding horizon (:func:`trajopt.mpc.tasks.mpc_task`).
    """
    model = Quadrotor(u_max=u_max)
    reference = lambda times: figure_eight_states(model, times, **FIGURE_EIGHT)  # noqa: E731
    problem = Problem(model, N=N, tf=tf, x0=reference(0.0)[0], name="quadrotor-track")
    Q = np.concatenate([np.full(3, 1000.0), np.full(3, 0.01), np.full(3, 1.0), np.full(3, 0.01)])
    problem.add_cost(QuadraticCost(model, Q, np.full(4, 0.1), x_ref=reference(problem.times()), u_ref=model.hover_control()))
    problem.set_initial_guess(states=reference(problem.times()))
    problem.reference_states = reference
    return problem


def body_z_axis(model: Quadrotor) -> ca.Function:
    """``z_b(x) = Rot(q) e_z`` (3,), the body z axis (thrust direction) in the world frame."""
    x = ca.SX.sym("x", model.state_dim)
    return ca.Function("body_z_axis", [x], [model.rotation_matrix(x)[:, 2]], ["x"], ["z_b"])


@register("quadrotor-flip")
def quadrotor_flip(N: int = 41, tf: float = 2.0, u_max: float = 6.0, height: float = 2.0, checkpoints: int = 8, cone: float = np.pi / 4) -> Problem:
    """Quadrotor flip: a full 360 degree roll (about +x) between two hovers 2 m high, in 2 s.

    The hovers are at (0, 0, ``height``), ``tf`` seconds apart.

    The end attitude equals the start, so the turn is enforced ALONG THE PATH:
    at ``checkpoints - 1`` evenly spaced interior knots ``k_j`` (j = 1..7 by
    default) the body z axis ``z_b = Rot(q) e_z`` must lie within ``cone`` (45
    degrees) of ``d_j = Rx(2 pi j / checkpoints) e_z``, i.e. ``d_j^T z_b(x) >=
    cos(cone)``: one constraint function with a per-knot parameter ``d_j``. The
    axis thus sweeps once around the world x axis (a positive roll of 2 pi). The
    goal (hover at the start point) is a hard constraint, reached with the
    quaternion sign flipped.

    Cost: ``1/2 integral (dx^T Q dx + du^T R du) dt`` with ``dx =
    state_error(x, x_hover)`` weighted only on position (1), velocity (0.1) and
    angular velocity (1e-3), never on attitude (an attitude error is not
    smooth at a half turn), ``du = u - u_hover``, ``R = 0.01 I``;
    ``0 <= u <= u_max``. Guess: a uniform roll ``phi(t) = 2 pi t / tf`` in place
    with hover controls.
    """
    if checkpoints < 3 or (N - 1) % checkpoints:
        raise ValueError(f"checkpoints: expected an int >= 3 dividing N - 1 = {N - 1}, got {checkpoints}")
    model = Quadrotor(u_max=u_max)
    x_hover = hover_state(model, [0.0, 0.0, height])
    problem = Problem(model, N=N, tf=tf, x0=x_hover, name="quadrotor-flip")
    Q = np.concatenate([np.full(3, 1.0), np.zeros(3), np.full(3, 0.1), np.full(3, 1e-3)])
    problem.add_cost(QuadraticCost(model, Q, np.full(4, 1e-2), x_ref=x_hover, u_ref=model.hover_control()))
    problem.add_constraint(GoalConstraint(model, x_hover))
    z_b = body_z_axis(model)
    j = np.arange(1, checkpoints)
    directions = np.stack([np.zeros_like(j, dtype=float), -np.sin(2 * np.pi * j / checkpoints), np.cos(2 * np.pi * j / checkpoints)], axis=1)
    knots = (j * (N - 1) // checkpoints).tolist()
    problem.add_constraint(Constraint(lambda x, u, d: ca.dot(d, z_b(x)), knots=knots, lower=np.cos(cone), upper=np.inf, params=directions, name="flip_checkpoints"))
    phi = np.linspace(0.0, 2 * np.pi, N)
    guess = np.array([hover_state(model, [0.0, 0.0, height], roll=a) for a in phi])
    guess[:, model.gen_inds()["w"]] = [2 * np.pi / tf, 0.0, 0.0]
    problem.set_initial_guess(states=guess, controls=model.hover_control())
    return problem


def roll_angle(states: np.ndarray) -> np.ndarray:
    """Unwrapped roll of the body z axis about the world x axis (N,), from quaternion states (N, 13).

    ``atan2(-z_b[1], z_b[2])``, unwrapped: a full positive flip ends at 2 pi.
    """
    z_b = np.array([quat_to_rot(x[3:7])[:, 2] for x in states])
    return np.unwrap(np.arctan2(-z_b[:, 1], z_b[:, 2]))
