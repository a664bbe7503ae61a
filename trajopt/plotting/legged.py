"""Plots of legged-robot trajectories (the stick-figure animation is in :mod:`.stick_figure`).

Conventions (docs/conventions.md): base position in the world frame [m]; base
quaternion ``[qw, qx, qy, qz]`` (Hamilton, body to world), shown as ZYX Euler
angles ``(yaw, pitch, roll)`` in degrees; base velocity ``[v_body, w_body]``
(6,) in the BODY frame [m/s, rad/s]; joint angles [rad] and torques [N m];
contact forces 3D, in the WORLD frame [N]; foot positions in the world frame
[m], ground at ``z = 0``. ``stance`` is a boolean (rows, nfeet) contact
schedule, True while a foot is on the ground.

Series with ``N - 1`` rows (torques, forces, stance per interval) are held
over ``[t_k, t_k+1)``; series with ``N`` rows are per knot (``times`` (N,)).
Plot functions return the :class:`~matplotlib.figure.Figure` and write it
to ``path`` when given (see :func:`trajopt.plotting.output.save_figure`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure


from .checks import as_array, as_knot_series, as_limits, as_names, as_quaternions, as_times
from .output import save_figure
from .terrain import TERRAIN_FILL, draw_terrain_profile, ground_under_feet
from .trajectories import EULER_LABELS, add_legend, draw_limits, euler_zyx_degrees, plot_series

XYZ = ("x", "y", "z")
#: Gray used to shade stance phases.
STANCE_SHADE = dict(color="0.85", alpha=0.6, linewidth=0)
#: Candidate spacings [m] of the ground grid of :func:`animate_stick_figure`.


# ---------------------------------------------------------------- input checks


def stance_table(stance: Any, n_knots: int, nfeet: int | str = "nfeet") -> np.ndarray:
    """Contact schedule (N or N - 1, nfeet) as booleans."""
    arr = as_knot_series(np.asarray(stance), "stance", n_knots, (nfeet,))
    return arr.astype(bool)


# ------------------------------------------------------------- axes drawing


def stance_intervals(times: np.ndarray, stance: np.ndarray) -> list[tuple[float, float]]:
    """Time intervals ``(start, end)`` [s] of the runs of True in ``stance`` (rows,).

    Row ``k`` covers ``[t_k, t_k+1)``; a run reaching the last knot ends at
    ``times[-1]``.
    """
    edges = np.diff(np.concatenate([[0], stance.astype(int), [0]]))
    starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return [(times[a], times[min(b, times.size - 1)]) for a, b in zip(starts, stops)]


def shade_stance(ax: Axes, times: np.ndarray, stance: np.ndarray) -> None:
    """Gray vertical bands over the stance intervals of one foot."""
    for start, end in stance_intervals(times, stance):
        ax.axvspan(start, end, **STANCE_SHADE)


def draw_gait(ax: Axes, times: np.ndarray, stance: np.ndarray, foot_names: Sequence[str], scheduled_times: Optional[np.ndarray] = None) -> None:
    """Gait diagram: one row per foot (first on top), a bar per stance interval. With ``scheduled_times``
    (N,), the knot times of the schedule the optimizer retimed, a thin gray bar under each row shows
    the same stance at those times (the footfalls of the fixed timing against the optimized ones)."""
    n = len(foot_names)
    for i, name in enumerate(foot_names):
        bars = [(a, b - a) for a, b in stance_intervals(times, stance[:, i])]
        if scheduled_times is None:
            ax.broken_barh(bars, (n - 1 - i - 0.35, 0.7), color=f"C{i}")
            continue
        ax.broken_barh(bars, (n - 1 - i - 0.05, 0.4), color=f"C{i}")
        scheduled = [(a, b - a) for a, b in stance_intervals(scheduled_times, stance[:, i])]
        ax.broken_barh(scheduled, (n - 1 - i - 0.35, 0.2), color="0.6")
    ax.set_yticks(range(n), list(reversed(foot_names)))
    ax.set_ylim(-0.6, n - 0.4)
    end = times[-1] if scheduled_times is None else max(times[-1], scheduled_times[-1])
    ax.set_xlim(times[0], end)
    ax.grid(True, axis="x", alpha=0.3)


def _titled(ax: Axes, title: str, ylabel: str) -> None:
    ax.set_title(title, loc="left", fontsize="medium")
    ax.set_ylabel(ylabel)


def _draw_base(axes: Sequence[Axes], t: np.ndarray, pos: np.ndarray, quat: np.ndarray, vel: np.ndarray, inside: bool) -> None:
    """Base position, ZYX Euler angles, body linear and angular velocity on four axes."""
    panels = [
        (pos, XYZ, "base position (world)", "[m]"),
        (euler_zyx_degrees(quat, "base_quat"), EULER_LABELS, "base orientation (ZYX Euler)", "[deg]"),
        (vel[:, :3], XYZ, "base linear velocity (body)", "[m/s]"),
        (vel[:, 3:], XYZ, "base angular velocity (body)", "[rad/s]"),
    ]
    for ax, (values, labels, title, unit) in zip(axes, panels):
        plot_series(ax, t, values, labels)
        _titled(ax, title, unit)
        add_legend(ax, inside)


def _check_base(t: np.ndarray, base_pos: Any, base_quat: Any, base_vel: Any) -> tuple[np.ndarray, ...]:
    n = t.size
    return as_array(base_pos, "base_pos", (n, 3)), as_quaternions(base_quat, "base_quat", n), as_array(base_vel, "base_vel", (n, 6))


def _foot_axes(nfeet: int, title: str) -> tuple[Figure, np.ndarray]:
    """Figure with one row per foot, shared time axis."""
    fig, axes = plt.subplots(nfeet, 1, sharex=True, sharey=True, squeeze=False, figsize=(9, 0.7 + 1.7 * nfeet), layout="constrained")
    fig.suptitle(title, fontsize="medium")
    axes[-1, 0].set_xlabel("time [s]")
    return fig, axes[:, 0]


# ------------------------------------------------------------------ figures


def plot_base(
    times: np.ndarray,
    base_pos: np.ndarray,
    base_quat: np.ndarray,
    base_vel: np.ndarray,
    path: str | Path | None = None,
    overwrite: bool = False,
) -> Figure:
    """Base trajectory on four axes: position, orientation, linear and angular velocity.

    ``times`` (N,) [s]; ``base_pos`` (N, 3) world [m]; ``base_quat`` (N, 4)
    unit ``[qw, qx, qy, qz]``, drawn as (yaw, pitch, roll) [deg];
    ``base_vel`` (N, 6) ``[v_body, w_body]`` [m/s, rad/s].
    """
    t = as_times(times)
    pos, quat, vel = _check_base(t, base_pos, base_quat, base_vel)
    fig, axes = plt.subplots(4, 1, sharex=True, figsize=(9, 8), layout="constrained")
    _draw_base(axes, t, pos, quat, vel, inside=False)
    axes[-1].set_xlabel("time [s]")
    return save_figure(fig, path, overwrite)


def plot_joints(
    times: np.ndarray,
    q_joints: np.ndarray,
    tau: np.ndarray,
    q_lower: float | np.ndarray | None,
    q_upper: float | np.ndarray | None,
    tau_limit: float | np.ndarray | None,
    joint_names: Sequence[str],
    path: str | Path | None = None,
    overwrite: bool = False,
) -> Figure:
    """Joint angles and torques against their limits, one subplot per joint each.

    ``times`` (N,) [s]; ``q_joints`` (N, nj) [rad]; ``tau`` (N or N - 1, nj)
    [N m]; ``q_lower``/``q_upper`` [rad] and the symmetric torque bound
    ``tau_limit`` [N m] are scalars, (nj,) arrays or None (infinite limits
    are not drawn). The upper block holds the angles, the lower block the
    torques, in a grid of three columns: 2 nj axes.
    """
    t = as_times(times)
    q = as_array(q_joints, "q_joints", (t.size, "nj"))
    nj = q.shape[1]
    u = as_knot_series(tau, "tau", t.size, (nj,))
    names = as_names(joint_names, nj, "joint_names", "joint")
    lo, hi, tl = as_limits(q_lower, "q_lower", nj), as_limits(q_upper, "q_upper", nj), as_limits(tau_limit, "tau_limit", nj)
    ncols = min(3, nj)
    nrows = -(-nj // ncols)
    fig = plt.figure(figsize=(4 * ncols, 1.2 + 3.2 * nrows), layout="constrained")
    blocks = [
        (q, lo, hi, "joint angles [rad] (dashed red: limits)"),
        (u, -tl, tl, "joint torques [N m] (dashed red: limits)"),
    ]
    for sub, (values, low, high, title) in zip(fig.subfigures(2, 1), blocks):
        axes = sub.subplots(nrows, ncols, sharex=True, squeeze=False)
        sub.suptitle(title, fontsize="medium")
        for j, ax in enumerate(axes.flat):
            if j >= nj:
                ax.remove()
                continue
            plot_series(ax, t, values[:, j])
            draw_limits(ax, low[j], high[j])
            ax.set_title(names[j], fontsize="small")
            if j + ncols >= nj:
                ax.set_xlabel("time [s]")
    return save_figure(fig, path, overwrite)


def plot_contact_forces(
    times: np.ndarray,
    forces: np.ndarray,
    stance: np.ndarray,
    foot_names: Sequence[str],
    path: str | Path | None = None,
    overwrite: bool = False,
) -> Figure:
    """World-frame contact force components of each foot, stance shaded; nfeet axes.

    ``times`` (N,) [s]; ``forces`` (N or N - 1, nfeet, 3) [N]; ``stance``
    (N or N - 1, nfeet) bool.
    """
    t = as_times(times)
    f = as_knot_series(forces, "forces", t.size, ("nfeet", 3))
    nfeet = f.shape[1]
    contact = stance_table(stance, t.size, nfeet)
    names = as_names(foot_names, nfeet, "foot_names", "foot")
    fig, axes = _foot_axes(nfeet, "contact forces, world frame (gray: stance)")
    for i, ax in enumerate(axes):
        shade_stance(ax, t, contact[:, i])
        plot_series(ax, t, f[:, i, :], [f"f{c}" for c in XYZ])
        _titled(ax, names[i], "force [N]")
        add_legend(ax)
    return save_figure(fig, path, overwrite)


def plot_foot_heights(
    times: np.ndarray,
    foot_pos: np.ndarray,
    stance: np.ndarray,
    foot_names: Sequence[str],
    path: str | Path | None = None,
    overwrite: bool = False,
    terrain: Any = None,
) -> Figure:
    """Height ``z`` of each foot above the ground, stance shaded; nfeet axes.

    ``times`` (N,) [s]; ``foot_pos`` (N, nfeet, 3) world [m]; ``stance``
    (N or N - 1, nfeet) bool; ``terrain`` (a :class:`trajopt.terrain.Terrain`,
    default the ground at ``z = 0``): the height under each foot is drawn
    (filled below) instead of the line at 0.
    """
    t = as_times(times)
    p = as_array(foot_pos, "foot_pos", (t.size, "nfeet", 3))
    nfeet = p.shape[1]
    contact = stance_table(stance, t.size, nfeet)
    names = as_names(foot_names, nfeet, "foot_names", "foot")
    fig, axes = _foot_axes(nfeet, "foot heights (gray: stance)")
    ground = ground_under_feet(terrain, p) if terrain is not None else None
    for i, ax in enumerate(axes):
        shade_stance(ax, t, contact[:, i])
        if ground is None:
            ax.axhline(0.0, color="0.3", linewidth=0.8)
        else:
            ax.fill_between(t, ground[:, i].min() - 0.02, ground[:, i], **TERRAIN_FILL)
            ax.plot(t, ground[:, i], color="0.3", linewidth=0.8)
        plot_series(ax, t, p[:, i, 2])
        _titled(ax, names[i], "z [m]")
    return save_figure(fig, path, overwrite)


def plot_gait_diagram(
    times: np.ndarray,
    stance: np.ndarray,
    foot_names: Sequence[str],
    path: str | Path | None = None,
    overwrite: bool = False,
) -> Figure:
    """Gait diagram: a bar per foot where it is in stance; one axes.

    ``times`` (N,) [s]; ``stance`` (N or N - 1, nfeet) bool.
    """
    t = as_times(times)
    contact = stance_table(stance, t.size)
    names = as_names(foot_names, contact.shape[1], "foot_names", "foot")
    fig, ax = plt.subplots(figsize=(9, 0.9 + 0.45 * len(names)), layout="constrained")
    draw_gait(ax, t, contact, names)
    ax.set_title("gait diagram (bars: stance)", loc="left", fontsize="medium")
    ax.set_xlabel("time [s]")
    return save_figure(fig, path, overwrite)


def plot_legged_summary(
    times: np.ndarray,
    base_pos: np.ndarray,
    base_quat: np.ndarray,
    base_vel: np.ndarray,
    q_joints: np.ndarray,
    tau: np.ndarray,
    tau_limit: float | np.ndarray,
    forces: np.ndarray,
    stance: np.ndarray,
    foot_pos: np.ndarray,
    foot_names: Sequence[str],
    joint_names: Sequence[str] | None = None,
    path: str | Path | None = None,
    overwrite: bool = False,
    terrain: Any = None,
    scheduled_times: Optional[np.ndarray] = None,
) -> Figure:
    """One-page summary of a legged trajectory on 9 axes (10 on a terrain).

    Base position, orientation (ZYX Euler), body linear and angular velocity;
    joint angles [rad]; torques relative to their limits ``tau / tau_limit``
    (within +-1 when feasible); vertical contact forces ``fz`` [N]; foot
    heights [m]; gait diagram. With ``joint_names``, a tenth (blank) axes
    holds the joints' legend, shared by the angle and torque panels. Shapes
    as in :func:`plot_base`, :func:`plot_joints`, :func:`plot_contact_forces`
    and :func:`plot_foot_heights`; ``tau_limit`` is a positive scalar or (nj,).
    With a ``terrain`` (:class:`trajopt.terrain.Terrain`) the foot heights are
    drawn over the terrain under each foot and a last row is a side view of
    the terrain with the base and feet paths (:func:`.terrain.draw_terrain_profile`).
    ``scheduled_times`` (N,): the schedule's knot times when the optimizer chose the phase durations;
    the gait diagram then shows both timings (:func:`draw_gait`).
    """
    t = as_times(times)
    scheduled = None if scheduled_times is None else as_array(scheduled_times, "scheduled_times", (t.size,))
    pos, quat, vel = _check_base(t, base_pos, base_quat, base_vel)
    q = as_array(q_joints, "q_joints", (t.size, "nj"))
    nj = q.shape[1]
    u = as_knot_series(tau, "tau", t.size, (nj,))
    limit = as_limits(tau_limit, "tau_limit", nj)
    if not np.all(limit > 0):
        raise ValueError(f"tau_limit: expected positive torque limits, got {limit}")
    f = as_knot_series(forces, "forces", t.size, ("nfeet", 3))
    nfeet = f.shape[1]
    contact = stance_table(stance, t.size, nfeet)
    p = as_array(foot_pos, "foot_pos", (t.size, nfeet, 3))
    feet = as_names(foot_names, nfeet, "foot_names", "foot")
    joints = as_names(joint_names, nj, "joint_names", "joint") if joint_names is not None else None

    mosaic = [["pos", "rpy"], ["vel", "omega"], ["q", "tau"], ["fz", "height"], ["gait", "gait"]]
    heights = [1.0, 1.0, 1.0, 1.0, 0.9]
    if joints is not None:
        mosaic.insert(3, ["joints", "joints"])
        heights.insert(3, 0.25)
    if terrain is not None:
        mosaic.append(["terrain", "terrain"])
        heights.append(1.2)
    fig, ax = plt.subplot_mosaic(mosaic, figsize=(14, 14), height_ratios=heights, layout="constrained")
    for key in ("rpy", "vel", "omega", "q", "tau", "fz", "height", "gait"):
        ax[key].sharex(ax["pos"])
    _draw_base([ax["pos"], ax["rpy"], ax["vel"], ax["omega"]], t, pos, quat, vel, inside=True)
    plot_series(ax["q"], t, q, joints)
    _titled(ax["q"], "joint angles", "[rad]")
    plot_series(ax["tau"], t, u / limit)
    draw_limits(ax["tau"], -1.0, 1.0)
    _titled(ax["tau"], "joint torques / limits (dashed red: +-1)", "[-]")
    if joints is not None:
        ax["joints"].axis("off")
        ax["joints"].legend(*ax["q"].get_legend_handles_labels(), loc="center", ncol=6, fontsize="small", frameon=False)
    plot_series(ax["fz"], t, f[:, :, 2], feet)
    _titled(ax["fz"], "vertical contact forces (world)", "fz [N]")
    plot_series(ax["height"], t, p[:, :, 2], feet)
    _titled(ax["height"], "foot heights" + (" (gray: the terrain under each foot)" if terrain is not None else ""), "z [m]")
    if terrain is not None:
        ground = ground_under_feet(terrain, p)
        ax["height"].fill_between(t, ground.min() - 0.02, ground.min(axis=1), **TERRAIN_FILL)
        ax["height"].plot(t, ground, color="0.3", linewidth=0.6, linestyle="--")
        draw_terrain_profile(ax["terrain"], terrain, pos, p, feet)
        ax["terrain"].set_title("side view: terrain under each side's feet, base and feet paths", loc="left", fontsize="medium")
        add_legend(ax["terrain"], inside=True)
    for key in ("fz", "height"):
        add_legend(ax[key], inside=True)
    draw_gait(ax["gait"], t, contact, feet, scheduled)
    retimed = "" if scheduled is None else "; thin gray: the schedule's timing, colored: the optimized one"
    _titled(ax["gait"], f"gait diagram (bars: stance{retimed})", "")
    ax["gait"].set_xlabel("time [s]")
    return save_figure(fig, path, overwrite)
