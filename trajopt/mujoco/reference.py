"""A legged plan sampled at the simulator's rate, optionally repeated for several cycles.

:func:`sample_plan` evaluates a :class:`trajopt.Solution` of a
:class:`trajopt.legged.LeggedProblem` with the transcription's own
interpolation (:meth:`trajopt.Solution.evaluate`: for trapezoidal
collocation, controls linear and states quadratic between knots) at every
simulator step ``t_i = i dt``: the state the simulated one is compared with,
and the torques and contact forces a controller holds over the step (as a
real controller samples its reference; sampling at the middle of the step
drifts more, and holding the knots' torques over whole knot intervals far
more: docs/design/mujoco.md).

A periodic plan (joint angles and all velocities at the end equal to those at
the start) is repeated ``cycles`` times: cycle ``c`` is the plan moved by
``G^c``, ``G`` the horizontal rigid motion (translation and yaw) taking the
initial base pose to the final one; base velocities are in the body frame,
so they carry over unchanged, and WORLD-frame forces are rotated by ``G``'s
yaw.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lie import quat_conj, quat_error, quat_mult, quat_to_axis_angle, quat_to_rot, yaw_to_quat

#: Largest end-to-start difference (joint angles rad, velocities rad/s or m/s, roll and pitch rad)
#: of a plan that :func:`sample_plan` repeats.
PERIODIC_TOLERANCE = 1e-4


@dataclass(frozen=True, eq=False)
class PlanSamples:
    """A plan at the simulator's steps.

    ``n`` steps of ``dt`` s (all cycles): ``times`` (n + 1,) s from 0;
    ``states`` (n + 1, nx) nominal states at ``times``; ``torques`` (n, nu)
    and ``forces`` (n, nc, 3) (WORLD frame) held over each step (the plan's
    at the step's start); ``stance`` (n, nc) the contact schedule of the knot
    interval holding each step; ``cycles`` how often the plan repeats;
    ``knot_steps`` (cycles * (N - 1) + 1,) the step index of every knot.
    """

    times: np.ndarray
    states: np.ndarray
    torques: np.ndarray
    forces: np.ndarray
    stance: np.ndarray
    dt: float
    cycles: int
    knot_steps: np.ndarray


def legged_problem(solution: Any) -> Any:
    """The :class:`~trajopt.legged.LeggedProblem` attached to ``solution``; ``ValueError`` otherwise."""
    problem = getattr(solution, "problem", None)
    if problem is None:
        raise ValueError("solution: no problem attached; load it with problems.load_solution(path) or Solution.load(path, problem=...)")
    if not (hasattr(problem, "schedule") and hasattr(problem, "contact_model") and hasattr(problem.contact_model, "u_slice")):
        raise ValueError(f"solution: expected a solution of a legged problem with joint torques (LeggedProblem), got one of {type(problem).__name__}")
    return problem


def plan_terrain(problem: Any) -> Any:
    """The :class:`trajopt.terrain.Terrain` a legged problem walks on, or ``None`` for the flat ground at ``z = 0``."""
    return problem.terrain if getattr(problem, "terrain_plan", None) is not None else None


def periodic_mismatch(solution: Any) -> float:
    """Largest difference between the plan's last and first knot in joint angles, velocities, roll and pitch."""
    problem = legged_problem(solution)
    robot = problem.robot
    nq = robot.nq
    x0, xf = solution.states[0], solution.states[-1]
    roll_pitch = quat_error(robot.base_orientation(xf), robot.base_orientation(x0))[:2]
    return float(max(np.abs(robot.joint_positions(xf) - robot.joint_positions(x0)).max(), np.abs(roll_pitch).max(), np.abs(xf[nq:] - x0[nq:]).max()))


def _cycle_motion(robot: Any, states: np.ndarray) -> tuple:
    """Yaw rotation (3x3, quaternion) and translation of the horizontal rigid motion from the first to the last base pose."""
    q0, qf = robot.base_orientation(states[0]), robot.base_orientation(states[-1])
    yaw = quat_to_axis_angle(quat_mult(qf, quat_conj(q0)))[2]
    quat = yaw_to_quat(yaw)
    rot = quat_to_rot(quat)
    return rot, quat, robot.base_position(states[-1]) - rot @ robot.base_position(states[0])


def plan_timestep(solution: Any, target: float = 1e-3) -> float:
    """The simulator step closest to ``target`` from below that divides the plan's knot spacing.

    ``h / ceil(h / target)`` (``h = tf / (N - 1)``): knots fall on steps, e.g.
    1 ms for the Go1 problems (``h`` 0.02 s), 0.9941 ms for a trot scaled to
    Solo12's legs (``h`` 0.01733 s). Knots spaced phase by phase (free phase
    durations) cannot all fall on steps: the step then divides ``tf``.
    """
    if not (np.isfinite(target) and target > 0):
        raise ValueError(f"target: expected a positive time step, got {target!r}")
    h = solution.tf if solution.phase_spaced else solution.tf / (solution.N - 1)
    return h / np.ceil(h / target * (1 - 1e-12))


def sample_plan(solution: Any, dt: float, cycles: int = 1) -> PlanSamples:
    """The plan of ``solution`` at steps of ``dt`` seconds, interpolated as its transcription does, repeated
    ``cycles`` times (a periodic plan: each cycle moved by the horizontal motion from its start pose to its end pose).

    ``tf`` must be a whole number of steps (to 1e-9 relative; see
    :func:`plan_timestep`). Raises
    ``ValueError`` for ``cycles > 1`` when the plan is not periodic (see
    :data:`PERIODIC_TOLERANCE`), e.g. the default ``go1-trot``, which ends
    moving; solve it with ``periodic=True``.
    """
    problem = legged_problem(solution)
    if not (isinstance(cycles, (int, np.integer)) and cycles >= 1):
        raise ValueError(f"cycles: expected an integer >= 1, got {cycles!r}")
    steps = solution.tf / dt if dt > 0 else np.nan
    if not (np.isfinite(steps) and abs(steps - round(steps)) <= 1e-9 * steps and round(steps) >= 1):
        raise ValueError(f"dt: the plan's duration tf = {solution.tf} s must be a whole number of steps, got dt = {dt!r}")
    if cycles > 1:
        mismatch = periodic_mismatch(solution)
        if mismatch > PERIODIC_TOLERANCE:
            raise ValueError(f"cycles: the plan is not periodic (its end differs from its start by {mismatch:.3g} in joint angles, velocities, roll or pitch; "
                             f"tolerance {PERIODIC_TOLERANCE}): solve it with periodic=True to repeat it")
    n = int(round(steps))
    cm = problem.contact_model
    local = np.arange(n) * dt
    X, W = solution.evaluate(local)
    F = problem.contact_forces(X, W, knots=problem.knot_index(local, solution.times))
    if solution.phase_spaced:
        knots = solution.interval_of(local + 1e-9 * dt)[0]
        knot_times = np.concatenate([c * solution.tf + solution.times[: -1 if c < cycles - 1 else None] for c in range(cycles)])
    else:
        h = solution.tf / (solution.N - 1)
        knots = np.minimum(np.floor(local / h + 1e-9).astype(int), solution.N - 2)
        knot_times = np.arange(cycles * (solution.N - 1) + 1) * h
    rot, quat, shift = _cycle_motion(problem.robot, solution.states)
    motions = [(np.eye(3), np.array([1.0, 0.0, 0.0, 0.0]), np.zeros(3))]
    for _ in range(cycles - 1):
        r, q, p = motions[-1]
        motions.append((rot @ r, np.asarray(quat_mult(quat, q)), rot @ p + shift))
    states = [_moved(problem.robot, X, *motion) for motion in motions]
    states.append(_moved(problem.robot, np.asarray(solution.evaluate(solution.tf)[0])[None], *motions[-1]))
    return PlanSamples(
        times=np.arange(n * cycles + 1) * dt,
        states=np.vstack(states),
        torques=np.tile(W[:, cm.u_slice], (cycles, 1)),
        forces=np.concatenate([F @ r.T for r, _, _ in motions]),
        stance=np.tile(problem.solution_schedule(solution).stance[knots], (cycles, 1)),
        dt=float(dt),
        cycles=int(cycles),
        knot_steps=np.round(knot_times / dt).astype(int),
    )


def _moved(robot: Any, X: np.ndarray, rot: np.ndarray, quat: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """States (K, nx) of ``robot`` with the base pose moved by the world-frame rigid motion ``(rot, quat, shift)``."""
    out = np.array(X, dtype=float)
    out[:, robot.base_position_slice] = robot.base_position(X) @ rot.T + shift
    out[:, robot.base_orientation_slice] = np.array([quat_mult(quat, q) for q in robot.base_orientation(X)])
    return out
