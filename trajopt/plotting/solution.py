"""Plot and animate a whole :class:`~trajopt.Solution`, drawn according to its problem and model.

:func:`plot_solution` draws one page:

- for a :class:`~trajopt.legged.LeggedProblem`, :func:`~.legged.plot_legged_summary`
  at the knots: base position, orientation (ZYX Euler) and body velocities,
  joint angles, torques relative to the URDF limits, vertical contact forces,
  foot heights and the gait diagram;
- for any other problem, a left column with the state and a right column with
  the controls against their bounds (controls sharing the same bounds share an
  axes) and the largest constraint violation per knot; a
  :class:`models.rigid_body.RigidBody` adds its 3D path with body axes
  (:func:`~.rigid_body.plot_trajectory_3d`). States and controls are sampled
  densely with :meth:`Solution.evaluate`, i.e. as the transcription
  interpolates between knots. The state is split by the model's structure: a
  rigid body into position, attitude, velocity and angular velocity; a model
  with a :class:`lie.LieState` into its vector and rotation parts; a model
  ``[q; qd]`` with an attribute ``nv`` into coordinates and velocities.
  Rotations are drawn as ZYX Euler angles ``(yaw, pitch, roll)`` in degrees.

:func:`animate_solution` samples the solution at the frame times with
:meth:`Solution.evaluate` and animates a rigid body
(:func:`~.animation.animate_rigid_body`) or a legged robot as a stick figure
with its contact forces (:func:`~.stick_figure.animate_stick_figure`).

Both need the problem attached to the solution (the solver attaches it;
:meth:`Solution.load` takes ``problem=``).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence, TextIO

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from models.multibody_model import BASE_POS, BASE_QUAT
from models.rigid_body import RigidBody

from ..legged import LeggedProblem
from ..phase_durations import PhaseDurations
from ..solution import Solution
from .animation import ANIMATION_EXTENSIONS, animate_rigid_body, frame_times
from .legged import plot_legged_summary
from .movie import frame_rate
from .stick_figure import animate_stick_figure, sample_held, stick_segments
from ..atomic_file import prepare_output_path
from .output import save_figure
from .rigid_body import plot_trajectory_3d
from .trajectories import EULER_LABELS, VIOLATION_FLOOR, add_legend, euler_zyx_degrees, plot_series

#: About how many times :func:`plot_solution` samples states and controls at (a whole number per interval).
DENSE_SAMPLES = 400
#: Width [in] of the generic solution page, and height [in] per row of axes.
PAGE_WIDTH, ROW_HEIGHT = 15.0, 2.3

#: ``(title, state slice, rotation parameterization or None, component labels or None)`` of one state axes.
StatePanel = tuple[str, slice, Optional[type], Optional[Sequence[str]]]


# ------------------------------------------------------------------ dispatch


def _problem(solution: Solution, caller: str) -> Any:
    if not isinstance(solution, Solution):
        raise ValueError(f"solution: expected a trajopt.Solution, got {type(solution).__name__}")
    if solution.problem is None:
        raise ValueError(f"{caller}: the solution has no problem attached; pass problem= to Solution.load")
    return solution.problem


def check_animatable(problem: Any) -> None:
    """Raise ``ValueError`` unless :func:`animate_solution` can draw ``problem``'s model."""
    if not isinstance(problem, LeggedProblem) and not isinstance(problem.model, RigidBody):
        raise ValueError(
            f"no animation for model {type(problem.model).__name__}: animate_solution draws rigid bodies "
            "(models.RigidBody) and legged robots (trajopt.legged.LeggedProblem)"
        )


def _title(solution: Solution) -> str:
    """The figure title: problem, transcription, solver status and result."""
    return (
        f"{solution.problem_name or 'problem'} ({solution.transcription}, N = {solution.N}, tf = {solution.tf:.3g} s): "
        f"{solution.status}, J = {solution.objective:.6g}, {solution.iterations} iterations, max violation {solution.max_violation:.1e}"
    )


# ------------------------------------------------------------ generic page


def state_panels(model: Any) -> list[StatePanel]:
    """How :func:`plot_solution` splits a model's state into axes (module docstring)."""
    n = model.state_dim
    if isinstance(model, RigidBody):
        i = model.gen_inds()
        return [
            ("position r (world frame) [m]", i["r"], None, ("x", "y", "z")),
            (f"attitude ({model.rotation.name}) as ZYX Euler angles [deg]", i["q"], model.rotation, None),
            (f"velocity v ({model.velocity_frame} frame) [m/s]", i["v"], None, ("vx", "vy", "vz")),
            ("angular velocity w (body frame) [rad/s]", i["w"], None, ("wx", "wy", "wz")),
        ]
    lie_state = getattr(model, "lie_state", None)
    if callable(lie_state):
        layout = lie_state()
        panels: list[StatePanel] = []
        for k, size in enumerate(layout.partition):
            if size:
                s = layout.vector_slice(k)
                panels.append((f"x[{s.start}:{s.stop}]", s, None, None))
            if k < layout.num_rotations:
                s = layout.rotation_slice(k)
                panels.append((f"x[{s.start}:{s.stop}] ({layout.rotation.name}) as ZYX Euler angles [deg]", s, layout.rotation, None))
        return panels
    nv = getattr(model, "nv", None)
    if isinstance(nv, int) and 2 * nv == n:
        return [(f"coordinates q = x[0:{nv}]", slice(0, nv), None, None), (f"velocities qd = x[{nv}:{n}]", slice(nv, n), None, None)]
    return [(f"state x[0:{n}]", slice(0, n), None, None)]


def _positions_quaternions(model: RigidBody, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """World positions (K, 3) and unit quaternions (K, 4) of a rigid body's states (K, n)."""
    parts = [model.parse_state(x, renorm=True) for x in states]
    return np.array([p[0] for p in parts], dtype=float), np.array([p[1].as_quat() for p in parts], dtype=float)


def _draw_state(ax: Axes, t: np.ndarray, states: np.ndarray, panel: StatePanel) -> None:
    title, s, rotation, labels = panel
    if rotation is None:
        plot_series(ax, t, states[:, s], labels or [f"x[{i}]" for i in range(s.start, s.stop)])
    else:
        quats = np.array([np.asarray(rotation.to_quat(p), dtype=float).reshape(4) for p in states[:, s]])
        plot_series(ax, t, euler_zyx_degrees(quats, f"states[:, {s.start}:{s.stop}]"), EULER_LABELS)
    ax.set_title(title, loc="left", fontsize="medium")
    add_legend(ax, inside=True)


def control_groups(lower: np.ndarray, upper: np.ndarray) -> list[list[int]]:
    """Control indices grouped by identical bounds: per-knot ``lower``/``upper`` (N, nu) columns equal."""
    groups: dict[bytes, list[int]] = {}
    for i in range(lower.shape[1]):
        groups.setdefault(lower[:, i].tobytes() + upper[:, i].tobytes(), []).append(i)
    return list(groups.values())


def _index_text(indices: Sequence[int]) -> str:
    """``u[a:b]`` for a contiguous run of indices, else ``u[i], u[j], ...``."""
    if len(indices) > 1 and list(indices) == list(range(indices[0], indices[-1] + 1)):
        return f"u[{indices[0]}:{indices[-1] + 1}]"
    return ", ".join(f"u[{i}]" for i in indices)


def _draw_controls(ax: Axes, t: np.ndarray, controls: np.ndarray, knot_times: np.ndarray, lower: np.ndarray, upper: np.ndarray, group: list[int]) -> None:
    """Controls ``group`` against time, with their common per-knot bounds dashed red."""
    plot_series(ax, t, controls[:, group], [f"u[{i}]" for i in group])
    for bound in (lower[:, group[0]], upper[:, group[0]]):
        if np.isfinite(bound).any():
            ax.plot(knot_times, np.where(np.isfinite(bound), bound, np.nan), color="tab:red", linestyle="--", linewidth=1.0)
    ax.set_title(f"controls {_index_text(group)} (dashed red: bounds)", loc="left", fontsize="medium")
    add_legend(ax, inside=True)


def _draw_violation(ax: Axes, solution: Solution) -> None:
    """Largest constraint violation at each knot, log scale (values below the floor drawn at it)."""
    shown = np.maximum(solution.knot_violation, VIOLATION_FLOOR)
    ax.semilogy(solution.times, shown, "o", color="tab:blue", markersize=3)
    ax.set_ylim(bottom=VIOLATION_FLOOR / 2)
    ax.grid(True, alpha=0.3)
    ax.set_title(f"max constraint violation per knot (largest {solution.max_violation:.2e})", loc="left", fontsize="medium")


def _generic_figure(solution: Solution, problem: Any) -> Figure:
    """The state / controls / violation page (plus the 3D path for a rigid body)."""
    model = problem.model
    per_interval = max(1, round(DENSE_SAMPLES / (solution.N - 1)))
    t = np.linspace(0.0, solution.tf, per_interval * (solution.N - 1) + 1)
    states, controls = solution.evaluate(t)
    panels = state_panels(model)
    groups = control_groups(problem.control_lower, problem.control_upper)
    rigid = isinstance(model, RigidBody)
    # Rows of the right column: control groups, the violation, and 2 rows for the 3D path.
    n_right = len(groups) + 1 + (2 if rigid else 0)
    size = (PAGE_WIDTH, 0.8 + ROW_HEIGHT * max(len(panels), n_right))
    if rigid:
        # The 3D axes of plot_trajectory_3d is reused as is: its figure becomes the page.
        fig = plot_trajectory_3d(*_positions_quaternions(model, states))
        fig.set_size_inches(size)
    else:
        fig = plt.figure(figsize=size, layout="constrained")
    left, right = (cell.subgridspec(rows, 1) for cell, rows in zip(fig.add_gridspec(1, 2), (len(panels), n_right)))
    first = fig.add_subplot(left[0])
    state_axes = [first] + [fig.add_subplot(left[k], sharex=first) for k in range(1, len(panels))]
    time_axes = [fig.add_subplot(right[k], sharex=first) for k in range(len(groups) + 1)]
    for ax, panel in zip(state_axes, panels):
        _draw_state(ax, t, states, panel)
    for ax, group in zip(time_axes, groups):
        _draw_controls(ax, t, controls, solution.times, problem.control_lower, problem.control_upper, group)
    _draw_violation(time_axes[-1], solution)
    for ax in (state_axes[-1], time_axes[-1]):
        ax.set_xlabel("time [s]")
    if rigid:
        fig.axes[0].set_subplotspec(right[len(groups) + 1 :])
    return fig


# ------------------------------------------------------------- legged page


def _legged_figure(solution: Solution, problem: LeggedProblem) -> Figure:
    """:func:`plot_legged_summary` of the knots of a legged solution."""
    robot, schedule = problem.robot, problem.solution_schedule(solution)
    X, W = solution.states, solution.controls
    feet = np.array([np.asarray(robot.kinematics(x), dtype=float).reshape(robot.nc, 3) for x in X])
    return plot_legged_summary(
        solution.times,
        X[:, BASE_POS],
        X[:, BASE_QUAT],
        X[:, robot.nq : robot.nq + 6],
        X[:, BASE_QUAT.stop : robot.nq],
        problem.joint_torques(W),
        robot.torque_limits(),
        problem.contact_forces(X, W),
        schedule.stance,
        feet,
        list(schedule.foot_names),
        list(robot.joint_names),
        terrain=problem.terrain if problem.terrain_plan is not None else None,
        scheduled_times=problem.schedule.times if isinstance(problem.tf, PhaseDurations) else None,
    )


def plot_solution(solution: Solution, path: str | Path | None = None, overwrite: bool = False) -> Figure:
    """One page summarizing ``solution``; write it to ``path`` (PNG, PDF, SVG) if given.

    A legged plan: base position, orientation and velocities, joint angles, torques against
    their limits, contact forces, foot heights and the gait diagram. Any other: the state
    (split into position, attitude, velocities where the model has them; rotations as ZYX
    Euler angles in degrees) and the controls against their bounds, sampled as the
    transcription interpolates, and the largest constraint violation per knot; a rigid
    body adds its 3D path. The solution needs its problem attached.

    The title gives the problem, transcription, solver status, objective,
    iterations and largest constraint violation. An existing file is replaced
    only with ``overwrite=True``. Returns the figure.
    """
    problem = _problem(solution, "plot_solution")
    fig = _legged_figure(solution, problem) if isinstance(problem, LeggedProblem) else _generic_figure(solution, problem)
    fig.suptitle(_title(solution), fontsize="medium")
    return save_figure(fig, path, overwrite)


# ---------------------------------------------------------------- animation


def animate_solution(solution: Solution, path: str | Path, fps: Optional[float] = None, overwrite: bool = False, progress: Optional[TextIO] = None) -> Path:
    """Animate ``solution`` at ``fps`` frames per second into ``path`` (``.gif`` or ``.mp4``); return the path.

    Frames are at ``0, 1/fps, ...`` up to ``tf``, states and controls from
    :meth:`Solution.evaluate`; ``fps`` defaults to 20 for a GIF and 30 for an
    MP4, and a GIF's is rounded to whole hundredths of a second per frame
    (:func:`.movie.frame_rate`). Rigid bodies fly as a quadrotor-like X (the
    model's ``arm_length`` when it has one); legged robots are stick figures
    with stance feet filled and their contact forces as red arrows. Other
    models raise ``ValueError`` (see :func:`check_animatable`), as does an
    existing ``path`` without ``overwrite``. ``progress`` (a stream, e.g.
    ``sys.stdout``) gets a progress line while the frames are written.
    """
    problem = _problem(solution, "animate_solution")
    check_animatable(problem)
    prepare_output_path(path, overwrite, ANIMATION_EXTENSIONS)
    fps = frame_rate(path, fps)
    t = frame_times(solution.times, fps)
    if t.size < 2:
        raise ValueError(f"fps: {fps:.4g} frames per second give a single frame over tf = {solution.tf} s")
    X, W = solution.evaluate(t)
    if isinstance(problem, LeggedProblem):
        robot = problem.robot
        segments = stick_segments(robot.pin_model, X[:, : robot.nq])
        feet = np.array([np.asarray(robot.kinematics(x), dtype=float).reshape(robot.nc, 3) for x in X])
        forces = problem.contact_forces(X, W, knots=problem.knot_index(t, solution.times))
        stance = sample_held(solution.times, problem.solution_schedule(solution).stance, t)
        return animate_stick_figure(t, segments, feet, forces, stance, path, fps=fps, overwrite=overwrite, progress=progress)
    model = problem.model
    size = {"arm_length": model.arm_length} if hasattr(model, "arm_length") else {}
    return animate_rigid_body(t, *_positions_quaternions(model, X), path, fps=fps, overwrite=overwrite, progress=progress, **size)
