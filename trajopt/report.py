"""A text report of a :class:`~trajopt.Solution` for the terminal (``trajopt solve`` prints it).

:func:`solution_report` gives one screen: the solver's result (status,
iterations, objective, largest constraint violation and where it occurs:
its knot, and the bound or constraint by name with its value; a failed
solve's first line names it too), the same between the knots and the
replay gap of the dynamics (:mod:`trajopt.between_knots`, with a warning
line at the end when either is large),
the wall times (problem build, solve split into function evaluations and
IPOPT's own work), the stages of a solve by homotopy (:mod:`trajopt.homotopy`:
each stage's bound, iterations and status), the robot as loaded (total mass, bodies and links, for a
multibody model) and the trajectory's start and end, described according to
the problem:

- a :class:`~trajopt.legged.LeggedProblem`: base position (world) against its
  target, base orientation as ZYX Euler angles ``(yaw, pitch, roll)`` in
  degrees, and the contact schedule the solution follows as a text gait
  diagram (one row per foot, one character per knot: ``#`` stance, ``-``
  swing); on flat ground, for point feet, the lowest shank end over the knots
  (:func:`trajopt.legged.link_clearance.lowest_shank_point`), with a warning
  line at the end when it is more than :data:`SHANK_WARNING` below the
  ground (a plan that lays a knee there); for a problem that chooses its footfalls
  (:class:`~trajopt.legged.contact_implicit.ContactImplicitProblem`), the
  gait's name too;
- a :class:`models.rigid_body.RigidBody`: position, attitude (ZYX Euler,
  degrees), linear and angular velocity at ``t = 0`` and at ``t = tf``;
- any other problem: the first and last state, and the goal when the problem
  has a full-state goal constraint.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from lie import quat_to_euler_zyx
from models.multibody_model import BASE_POS, BASE_QUAT, multibody_robot
from models.rigid_body import RigidBody

from .between_knots import check_between_knots
from .legged import LeggedProblem
from .legged.contact_implicit import ContactImplicitProblem
from .legged.link_clearance import has_shanks, lowest_shank_point
from .phase_durations import PhaseDurations
from .solution import Solution

#: Width of the label column.
LABEL_WIDTH = 22
#: Depth [m] below the flat ground of a shank end beyond which the report warns.
SHANK_WARNING = 1e-3


def vector_text(x: Any) -> str:
    """A vector on one line with 4 decimals, e.g. ``[0.15 0. 0.27]`` (no ``-0.``)."""
    rounded = np.round(np.asarray(x, dtype=float).reshape(-1), 4) + 0.0
    return np.array2string(rounded, precision=4, suppress_small=True, max_line_width=10_000)


def _euler_text(quaternion: np.ndarray) -> str:
    """ZYX Euler angles ``[yaw, pitch, roll]`` in degrees of a unit quaternion."""
    return vector_text(np.degrees(np.asarray(quat_to_euler_zyx(quaternion), dtype=float).reshape(3)))


def _rows(rows: Sequence[tuple[str, str]]) -> list[str]:
    return [f"  {label:<{LABEL_WIDTH}}{text}" for label, text in rows]


def gait_text(stance: np.ndarray, foot_names: Sequence[str]) -> list[str]:
    """Gait diagram lines: per foot its name and one character per knot (``#`` stance, ``-`` swing)."""
    width = max(len(name) for name in foot_names)
    return [f"{name:<{width}}  " + "".join("#" if s else "-" for s in column) for name, column in zip(foot_names, np.asarray(stance, dtype=bool).T)]


def _legged_lines(solution: Solution, problem: LeggedProblem) -> tuple[list[str], list[str]]:
    """The legged part of the report (module docstring) and its warnings."""
    x0, xf = solution.states[0], solution.states[-1]
    schedule = problem.solution_schedule(solution)
    found = []
    if isinstance(problem, ContactImplicitProblem):
        name, agreement = problem.gait(solution)
        flight = int((~schedule.stance.any(axis=1)).sum())
        found = [("gait found", f"{name} (its best pairs in step at {100 * agreement:.0f} % of knots); {flight} knots with no foot down")]
    lines = _rows(
        [
            ("base position start", f"{vector_text(x0[BASE_POS])} m"),
            ("base position end", f"{vector_text(xf[BASE_POS])} m (target {vector_text(problem.target_base_position)})"),
            ("base orientation end", f"{_euler_text(xf[BASE_QUAT])} deg (ZYX: yaw, pitch, roll)"),
            *found,
        ]
    )
    shank, warnings = _shank_lines(solution, problem)
    lines += shank + _rows([("gait", f"{schedule.N} knots, dt = {schedule.dt:g} s (#: stance, -: swing)")])
    return lines + ["    " + line for line in gait_text(schedule.stance, schedule.foot_names)], warnings


def _lowest_shank(solution: Solution, problem: LeggedProblem) -> Optional[tuple[float, str, int]]:
    """The lowest shank end's height (m), foot name and knot; ``None`` where it is not checked (module docstring): over
    a terrain, for robots whose contacts share a body (soles) or whose feet sit within a few centimetres of their knees."""
    robot = problem.robot
    if problem.terrain_plan is not None or robot.shared_contacts() or not has_shanks(robot):
        return None
    height, foot, knot = lowest_shank_point(robot, solution.states)
    return height, problem.schedule.foot_names[foot], knot


def _below_ground(lowest: Optional[tuple[float, str, int]]) -> Optional[str]:
    """The sentence of :func:`shank_below_ground` for the lowest shank end ``lowest`` (:func:`_lowest_shank`)."""
    if lowest is None or lowest[0] >= -SHANK_WARNING:
        return None
    height, name, knot = lowest
    return f"{name}'s shank goes {100 * -height:.2f} cm below the ground at knot {knot}: the robot would put its knee there"


def shank_below_ground(solution: Solution, problem: LeggedProblem) -> Optional[str]:
    """What the plan does wrong when its lowest shank end is more than :data:`SHANK_WARNING` below the ground (e.g.
    ``"HR_FOOT's shank goes 5.40 cm below the ground at knot 28: the robot would put its knee there"``), else ``None``."""
    return _below_ground(_lowest_shank(solution, problem))


def _shank_lines(solution: Solution, problem: LeggedProblem) -> tuple[list[str], list[str]]:
    """The lowest shank end's line and, when it is below the ground, a warning (module docstring)."""
    lowest = _lowest_shank(solution, problem)
    if lowest is None:
        return [], []
    height, name, knot = lowest
    lines = _rows([("lowest shank end", f"z = {100 * height:.2f} cm ({name}'s, knot {knot}; the ground at z = 0 carries the feet's centres)")])
    below = _below_ground(lowest)
    if below is None:
        return lines, []
    hint = "" if problem.link_clearance is not None else "; LeggedProblem's link_clearance (-p link_clearance=0 on a jump) holds the shanks above it"
    return lines, [f"WARNING: {below}{hint}"]


def _homotopy_lines(stages: Sequence[dict]) -> list[str]:
    """One line per stage of a solve by homotopy: its bound (and label), iterations, status, and the largest value
    the bounded rows reached when the stage recorded it."""
    lines = _rows([("homotopy", f"{len(stages)} stages, each from the last (bound: iterations, status)")])
    for stage in stages:
        label = f" with {stage['label']}" if "label" in stage else ""
        reached = f", reached {stage['reached']:.2e}" if "reached" in stage else ""
        lines.append(f"    <= {stage['upper']:<8g}{label}: {stage['iterations']} iterations, {stage['status']}{reached}")
    return lines


def _phase_lines(solution: Solution, timing: PhaseDurations) -> list[str]:
    """Each phase's optimized duration against its guess (a legged schedule's: the scheduled one)."""
    width = max(len(name) for name in timing.phase_names)
    rows = zip(timing.phase_names, timing.of_times(solution.times), timing.guess)
    return _rows([("phase durations", "optimized (s), the guess in brackets (a gait's: its schedule; #: stance, .: swing)")]) + [
        f"    {name:<{width}}  {value:.4f} ({guess:.4f})" for name, value, guess in rows
    ]


def _rigid_body_lines(solution: Solution, model: RigidBody) -> list[str]:
    (r0, a0, v0, w0), (r1, a1, v1, w1) = (model.parse_state(x, renorm=True) for x in solution.states[[0, -1]])
    q0, q1 = a0.as_quat(), a1.as_quat()
    return _rows(
        [
            ("start -> end", f"t = 0 -> t = tf = {solution.tf:.4g} s"),
            ("position [m]", f"{vector_text(r0)} -> {vector_text(r1)} (world)"),
            ("attitude [deg]", f"{_euler_text(q0)} -> {_euler_text(q1)} (ZYX: yaw, pitch, roll)"),
            ("velocity [m/s]", f"{vector_text(v0)} -> {vector_text(v1)} ({model.velocity_frame})"),
            ("ang. velocity [rad/s]", f"{vector_text(w0)} -> {vector_text(w1)} (body)"),
        ]
    )


def _generic_lines(solution: Solution, problem: Any) -> list[str]:
    rows = [("state at t = 0", vector_text(solution.states[0])), ("state at t = tf", vector_text(solution.states[-1]))]
    goal = problem.goal() if problem is not None else None
    if goal is not None:
        rows.append(("goal", vector_text(goal)))
    return _rows(rows)


def solution_report(solution: Solution) -> str:
    """A multi-line report of ``solution`` for a terminal: status, iterations, objective, largest
    violation and where, build and solve times, and the trajectory's start and end (a legged
    problem's base and gait diagram, a rigid body's pose and velocities, or the first and last
    state). The trajectory part needs the solution's problem attached."""
    problem = solution.problem
    worst = int(np.argmax(solution.knot_violation)) if solution.knot_violation.size else 0
    outcome = "success" if solution.success else "FAILED" + (f"; most violated: {solution.worst_violation}" if solution.worst_violation else "")
    lines = [f"{solution.problem_name or 'problem'}: {solution.status} ({outcome})"]
    lines += _rows(
        [
            ("transcription", f"{solution.transcription}, N = {solution.N} knots, tf = {solution.tf:.4g} s"),
            ("iterations", str(solution.iterations) + (f" (started from {solution.started_from})" if solution.started_from else "")),
            ("objective", f"{solution.objective:.8g}"),
            ("max violation", f"{solution.max_violation:.2e} (largest at knot {worst}, t = {solution.times[worst]:.4g} s{': ' + solution.worst_violation if solution.worst_violation else ''})"),
            ("build time", f"{solution.build_time:.3f} s"),
            ("solve time", f"{solution.solve_time:.3f} s = {solution.eval_time:.3f} s evaluations + {solution.solver_time:.3f} s solver"),
        ]
    )
    if solution.homotopy:
        lines += _homotopy_lines(solution.homotopy)
    warnings = []
    if problem is not None:
        between = check_between_knots(solution)
        where = f" ({between.worst})" if between.worst else ""
        lines += _rows(
            [
                ("between knots", f"max violation {between.violation:.2e} at {between.points} points per interval{where}"),
                ("replay gap", f"{between.gap:.2e} at most per interval (interval {between.gap_interval}; RK4 at h/{between.substeps} under the interpolated controls)"),
            ]
        )
        warnings = between.warnings()
    robot = multibody_robot(problem.model) if problem is not None else None
    if robot is not None:
        lines += _rows([("robot", robot.summary())])
    if isinstance(problem, LeggedProblem):
        legged, below = _legged_lines(solution, problem)
        lines += legged
        warnings += below
    elif problem is not None and isinstance(problem.model, RigidBody):
        lines += _rigid_body_lines(solution, problem.model)
    else:
        lines += _generic_lines(solution, problem)
    if problem is not None and isinstance(problem.tf, PhaseDurations):
        lines += _phase_lines(solution, problem.tf)
    return "\n".join(lines + warnings)
