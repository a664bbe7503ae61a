"""The plot of a closed loop: the base against its reference, tick times, and the applied plans' margins.

Panels over the plant's time (s), pushes shaded red:

- base position (m, WORLD) and its reference (dashed): a legged robot's
  reference (:class:`trajopt.mpc.legged.LeggedMPC`'s, recorded at every
  tick), a tracking task's reference states, a followed plan's base
  (:class:`trajopt.mpc.plan_tracking.PlanTrackingMPC`: a jump, the stones);
- velocity: for a legged robot in its heading frame, forward ``v_x``, lateral
  ``v_y`` (m/s) and yaw rate (rad/s), measured against the command (dotted)
  and the reference (dashed); otherwise the WORLD velocity and the reference's;
- legged robots only: the base path and the footholds seen from above (a
  foot's position at the middle tick of each of its stance phases,
  :func:`~trajopt.mpc.footholds_taken.footholds_taken`, dots)
  against the planned ones (crosses: where the last tick before each landing
  aimed the foot, the horizon's ``planned_footholds``), over a block terrain
  (stairs, stones) its blocks' top faces with their edges and heights,
  and the gait diagram of the applied plans (a bar while a foot's first knot is in stance);
- legged robots over a terrain (a slope, stairs, stones) only: a side view (WORLD
  ``x`` across, ``z`` up, :func:`~trajopt.plotting.terrain.draw_terrain_profile`):
  the ground's profile under each side's feet, the measured base and feet
  paths over it, and the footholds taken (dots) and planned (crosses) at
  their heights;
- each tick's time (ms, wall): the whole tick (the preparation before the
  measurement and the feedback after it, what must fit in one controller
  period, drawn as the deadline) and its feedback phase alone (the latency
  from measurement to control), with the failed ticks marked;
- the applied plans at their first knot: for a legged robot the largest
  friction ratio ``max(|f_x|, |f_y|) / (c f_z)`` of the standing feet (1 on
  the edge of the horizon's pyramid, ``c = mu / sqrt(2)``:
  :attr:`~trajopt.mpc.legged.LeggedMPC.pyramid_coefficient`) and the
  largest torque over its limit; otherwise the largest control over its
  bound;
- bipeds only (the humanoid, whose contact points are its soles' corners):
  the applied plans' centre of pressure at their first knot (the stance
  corners' positions weighted by their normal forces), forward and lateral
  of the base in its heading frame, within the stance corners' extent along
  each (shaded): where the support polygon lets it go.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from lie import quat_to_euler_zyx, yaw_to_rot

from ..mpc.footholds_taken import footholds_taken
from ..mpc.gaits import is_biped
from ..mpc.log import base_motion
from ..mpc.loop import ClosedLoopResult
from ..mpc.tasks import MPCTask
from .output import save_figure
from .terrain import draw_terrain_profile

XYZ = ("x", "y", "z")


def plot_closed_loop(result: ClosedLoopResult, task: MPCTask, path: Optional[str | Path] = None, overwrite: bool = False) -> Figure:
    """The figure of a closed loop of ``task``: base position and velocity against the reference, (legged
    robots) footholds from above and the gait diagram, each tick's time against the deadline, and
    the applied plans' friction and torque (or control) margins; written to ``path`` (PNG, PDF, SVG) when
    given (an existing file only with ``overwrite``)."""
    legged = task.legged is not None
    biped = legged and is_biped(task.legged.robot)
    uneven = legged and task.terrain is not None
    rows = 4 + 2 * legged + biped + uneven
    fig, axes = plt.subplots(rows, 1, figsize=(9, 2.8 * rows + 0.2), sharex=False)
    _position(axes[0], result, task)
    (_heading_velocity if legged else _world_velocity)(axes[1], result, task)
    spatial = set()  # panels drawn over x (m), not over time
    if legged:
        footholds = _footholds(result, task)
        _top_view(axes[2], result, task, footholds)
        spatial.add(2)
        if uneven:
            _side_view(axes[3], result, task, footholds)
            spatial.add(3)
        _gait_diagram(axes[3 + uneven], result, task)
    if biped:
        _centre_of_pressure(axes[4 + uneven], result, task)
    _tick_times(axes[-2], result)
    _margins(axes[-1], result, task)
    for i, ax in enumerate(axes):
        if i not in spatial:
            _shade_pushes(ax, result)
            ax.set_xlabel("t [s]")
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="upper right", fontsize=8)
    fig.suptitle(f"{task.name}: {'fell at %.2f s (%s)' % (result.fall_time, result.fall_reason) if result.fell else 'no fall'}")
    fig.tight_layout()
    return save_figure(fig, path, overwrite)


def _motion(result: ClosedLoopResult, task: MPCTask) -> tuple:
    motion = [base_motion(task.problem.model, x) for x in result.states]
    return np.array([m[0] for m in motion]), np.array([m[1] for m in motion])


def _position(ax: Any, result: ClosedLoopResult, task: MPCTask) -> None:
    position, _ = _motion(result, task)
    reference = None
    if task.reference is not None:  # a tracking task's, or a followed plan's
        times = result.times
        reference = np.array([base_motion(task.problem.model, x)[0] for x in task.reference(times)])
    elif task.legged is not None and task.legged.history:
        h = task.legged.history
        legged = task.legged
        times, xy = np.array([e[0] for e in h]), np.array([e[1] for e in h])
        reference = np.c_[xy, legged.height + legged.ground.base_frames(xy, np.array([e[2] for e in h]))[0]]  # over the ground under the trunk
    for i, name in enumerate(XYZ):
        line = ax.plot(result.times, position[:, i], label=f"base {name}")[0]
        if reference is not None:
            ax.plot(times, reference[:, i], "--", color=line.get_color(), linewidth=1)
    ax.set_ylabel("position [m]")


def _world_velocity(ax: Any, result: ClosedLoopResult, task: MPCTask) -> None:
    _, velocity = _motion(result, task)
    reference = None if task.reference is None else np.array([base_motion(task.problem.model, x)[1] for x in task.reference(result.times)])
    for i, name in enumerate(XYZ[:2]):
        line = ax.plot(result.times, velocity[:, i], label=f"v{name}")[0]
        if reference is not None:
            ax.plot(result.times, reference[:, i], "--", color=line.get_color(), linewidth=1)
    ax.set_ylabel("velocity [m/s]")


def _heading_velocity(ax: Any, result: ClosedLoopResult, task: MPCTask) -> None:
    nq = task.legged.robot.nq
    _, velocity = _motion(result, task)
    yaw = np.array([quat_to_euler_zyx(task.legged.robot.base_orientation(x))[0] for x in result.states])
    forward = np.cos(yaw) * velocity[:, 0] + np.sin(yaw) * velocity[:, 1]
    lateral = -np.sin(yaw) * velocity[:, 0] + np.cos(yaw) * velocity[:, 1]
    yaw_rate = result.states[:, nq + 5]
    h = task.legged.history
    t = np.array([e[0] for e in h])
    for i, (label, measured) in enumerate((("v_x [m/s]", forward), ("v_y [m/s]", lateral), ("yaw rate [rad/s]", yaw_rate))):
        line = ax.plot(result.times, measured, label=label, linewidth=1)[0]
        if h:
            ax.plot(t, [e[3][i] for e in h], "--", color=line.get_color(), linewidth=1)
            ax.step(t, [e[4][i] for e in h], ":", color=line.get_color(), where="post", linewidth=1.5)
    ax.set_ylabel("heading frame")


def _footholds(result: ClosedLoopResult, task: MPCTask) -> list:
    """Per foot, ``(taken (K, 3), planned (M, 3))``: where it stood in the run (:func:`~trajopt.mpc.footholds_taken.footholds_taken`)
    and where the horizon aimed it (``planned_footholds``, in landing order), WORLD (m)."""
    taken = footholds_taken(result, task.legged.robot)
    planned = sorted(task.legged.planned_footholds.items())
    return [
        (np.array([f.position for f in taken if f.foot == i]).reshape(-1, 3), np.array([p for (foot, _), p in planned if foot == i]).reshape(-1, 3))
        for i in range(task.legged.robot.nc)
    ]


def _top_view(ax: Any, result: ClosedLoopResult, task: MPCTask, footholds: list) -> None:
    robot = task.legged.robot
    _draw_blocks(ax, task.terrain)
    ax.plot(result.states[:, 0], result.states[:, 1], color="0.3", label="base path")
    for name, (holds, planned) in zip(robot.kinematics_bodies, footholds):
        (dots,) = ax.plot(holds[:, 0], holds[:, 1], "o", markersize=4, label=f"{name} footholds")
        ax.plot(planned[:, 0], planned[:, 1], "x", markersize=4, color=dots.get_color(), label=f"{name} planned" if len(planned) else None)
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")


def _side_view(ax: Any, result: ClosedLoopResult, task: MPCTask, footholds: list) -> None:
    robot = task.legged.robot
    feet = np.array([np.asarray(robot.kinematics(x)).reshape(-1, 3) for x in result.states])
    draw_terrain_profile(ax, task.terrain, _motion(result, task)[0], feet, robot.kinematics_bodies)
    colours = [line.get_color() for line in ax.lines[-len(robot.kinematics_bodies) :]]
    for colour, (holds, planned) in zip(colours, footholds):
        ax.plot(holds[:, 0], holds[:, 2], "o", markersize=3, color=colour)
        ax.plot(planned[:, 0], planned[:, 2], "x", markersize=4, color=colour)


def _draw_blocks(ax: Any, terrain: Any) -> None:
    """The blocks of a block terrain the horizon walks over, from above: each top face filled, its edges
    (a stair's tread edges) outlined and its height written at its centre; nothing on a plane."""
    for block in getattr(terrain, "blocks", ()):
        V = np.asarray(block.vertices, dtype=float)
        ax.fill(V[:, 0], V[:, 1], facecolor="0.93", edgecolor="0.45", linewidth=0.8, zorder=0)
        centre = V.mean(axis=0)
        ax.text(centre[0], centre[1], f"{block.top:.2f} m", ha="center", va="center", fontsize="x-small", color="0.45", zorder=0, clip_on=True)


def _gait_diagram(ax: Any, result: ClosedLoopResult, task: MPCTask) -> None:
    ticks = result.log
    t = np.array([r.t for r in ticks] + [ticks[-1].t + 1.0 / result.rate])
    masks = np.array([r.params > 0.5 for r in ticks])
    names = task.legged.robot.kinematics_bodies
    for i in range(masks.shape[1]):
        edges = np.flatnonzero(np.diff(np.r_[0, masks[:, i].astype(int), 0]))
        ax.broken_barh([(t[a], t[b] - t[a]) for a, b in zip(edges[::2], edges[1::2])], (i - 0.4, 0.8), color="0.35")
    ax.set_yticks(range(len(names)), names)
    ax.set_ylabel("stance (applied)")


def _tick_times(ax: Any, result: ClosedLoopResult) -> None:
    ticks = result.log[1:]
    times = np.array([r.t for r in ticks])
    feedback = 1e3 * np.array([r.compute_time for r in ticks])
    whole = feedback + 1e3 * np.array([r.preparation_time for r in ticks])
    ax.plot(times, whole, ".", markersize=3, label="tick (preparation + feedback)")
    ax.plot(times, feedback, ".", markersize=2, alpha=0.6, label="feedback")
    ax.axhline(1e3 / result.rate, color="r", linewidth=1, label=f"deadline {1e3 / result.rate:.0f} ms")
    failed = np.array([not r.success for r in ticks], dtype=bool)
    if failed.any():
        ax.plot(times[failed], whole[failed], "rx", label="failed")
    ax.set_ylabel("tick [ms]")


def _margins(ax: Any, result: ClosedLoopResult, task: MPCTask) -> None:
    ticks = [r for r in result.log if r.success]
    times = np.array([r.t for r in ticks])
    model = task.problem.model
    lower, upper = task.problem.control_lower[0], task.problem.control_upper[0]
    bound = np.where(np.isfinite(upper), np.abs(upper), np.abs(lower))
    usage = [float(np.max(np.abs(r.control) / np.where(bound > 0, bound, np.inf))) for r in ticks]
    if task.legged is not None:
        mu = task.legged.pyramid_coefficient
        ratio = []
        for r in ticks:
            f = np.asarray(model.contact_solution(r.state, r.control, r.params)[1]).reshape(-1, 3)
            standing = r.params > 0.5
            tangential = np.maximum(np.abs(f[standing, 0]), np.abs(f[standing, 1]))
            ratio.append(float(np.max(tangential / np.maximum(mu * f[standing, 2], 1e-9), initial=0.0)))
        ax.plot(times, ratio, ".", markersize=3, label="friction ratio (1: pyramid edge)")
        ax.plot(times, usage, ".", markersize=3, label="torque / limit")
    else:
        ax.plot(times, usage, ".", markersize=3, label="control / bound")
    ax.axhline(1.0, color="r", linewidth=1)
    ax.set_ylabel("applied plan")


def _centre_of_pressure(ax: Any, result: ClosedLoopResult, task: MPCTask) -> None:
    ticks = [r for r in result.log if r.success and np.any(r.params > 0.5)]
    robot, model = task.legged.robot, task.problem.model
    times, cop, lower, upper = [], [], [], []
    for r in ticks:
        standing = r.params > 0.5
        normal = np.asarray(model.contact_solution(r.state, r.control, r.params)[1]).reshape(-1, 3)[standing, 2]
        if normal.sum() <= 0:
            continue
        to_world = yaw_to_rot(float(quat_to_euler_zyx(robot.base_orientation(r.state))[0]))[:2, :2]
        corners = (np.asarray(robot.kinematics(r.state)).reshape(-1, 3)[standing, :2] - robot.base_position(r.state)[:2]) @ to_world  # in the heading frame
        times.append(r.t)
        cop.append(normal @ corners / normal.sum())
        lower.append(corners.min(axis=0))
        upper.append(corners.max(axis=0))
    if not times:
        return
    cop, lower, upper = np.array(cop), np.array(lower), np.array(upper)
    for k, (label, color) in enumerate((("forward", "C0"), ("lateral", "C1"))):
        ax.fill_between(times, lower[:, k], upper[:, k], step="mid", color=color, alpha=0.15, label=f"stance corners, {label}")
        ax.plot(times, cop[:, k], ".", color=color, markersize=3, label=f"centre of pressure, {label}")
    ax.set_ylabel("from the base [m]")


def _shade_pushes(ax: Any, result: ClosedLoopResult) -> None:
    pushed = np.linalg.norm(result.forces, axis=1) > 0
    if not pushed.any():
        return
    edges = np.flatnonzero(np.diff(np.r_[0, pushed.astype(int), 0]))
    for start, stop in zip(edges[::2], edges[1::2]):
        ax.axvspan(result.times[start], result.times[min(stop, len(result.times) - 1)], color="r", alpha=0.15, linewidth=0)
