"""Plots and a stick-figure animation of legged-robot trajectories.

Conventions (DESIGN.md): base position in the world frame [m]; base
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
from typing import Any, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pinocchio
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from mpl_toolkits.mplot3d.art3d import Line3DCollection

from lie.quaternion import check_unit_quaternion

from .animation import ANIMATION_EXTENSIONS, ANIMATION_SIZE, frame_times, interpolate_linear, write_animation
from .checks import as_array, as_knot_series, as_limits, as_names, as_quaternions, as_times
from .output import prepare_output_path, save_figure
from .rigid_body import label_axes_3d
from .trajectories import EULER_LABELS, add_legend, draw_limits, euler_zyx_degrees, plot_series

XYZ = ("x", "y", "z")
#: Gray used to shade stance phases.
STANCE_SHADE = dict(color="0.85", alpha=0.6, linewidth=0)
#: Candidate spacings [m] of the ground grid of :func:`animate_stick_figure`.
GRID_SPACINGS = (0.05, 0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 5.0)


# ---------------------------------------------------------------- input checks


def _stance(stance: Any, n_knots: int, nfeet: int | str = "nfeet") -> np.ndarray:
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


def draw_gait(ax: Axes, times: np.ndarray, stance: np.ndarray, foot_names: Sequence[str]) -> None:
    """Gait diagram: one row per foot (first on top), a bar per stance interval."""
    n = len(foot_names)
    for i, name in enumerate(foot_names):
        bars = [(a, b - a) for a, b in stance_intervals(times, stance[:, i])]
        ax.broken_barh(bars, (n - 1 - i - 0.35, 0.7), color=f"C{i}")
    ax.set_yticks(range(n), list(reversed(foot_names)))
    ax.set_ylim(-0.6, n - 0.4)
    ax.set_xlim(times[0], times[-1])
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
    contact = _stance(stance, t.size, nfeet)
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
) -> Figure:
    """Height ``z`` of each foot above the ground, stance shaded; nfeet axes.

    ``times`` (N,) [s]; ``foot_pos`` (N, nfeet, 3) world [m]; ``stance``
    (N or N - 1, nfeet) bool.
    """
    t = as_times(times)
    p = as_array(foot_pos, "foot_pos", (t.size, "nfeet", 3))
    nfeet = p.shape[1]
    contact = _stance(stance, t.size, nfeet)
    names = as_names(foot_names, nfeet, "foot_names", "foot")
    fig, axes = _foot_axes(nfeet, "foot heights (gray: stance)")
    for i, ax in enumerate(axes):
        shade_stance(ax, t, contact[:, i])
        ax.axhline(0.0, color="0.3", linewidth=0.8)
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
    contact = _stance(stance, t.size)
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
) -> Figure:
    """One-page summary of a legged trajectory on 9 axes.

    Base position, orientation (ZYX Euler), body linear and angular velocity;
    joint angles [rad]; torques relative to their limits ``tau / tau_limit``
    (within +-1 when feasible); vertical contact forces ``fz`` [N]; foot
    heights [m]; gait diagram. With ``joint_names``, a tenth (blank) axes
    holds the joints' legend, shared by the angle and torque panels. Shapes
    as in :func:`plot_base`, :func:`plot_joints`, :func:`plot_contact_forces`
    and :func:`plot_foot_heights`; ``tau_limit`` is a positive scalar or (nj,).
    """
    t = as_times(times)
    pos, quat, vel = _check_base(t, base_pos, base_quat, base_vel)
    q = as_array(q_joints, "q_joints", (t.size, "nj"))
    nj = q.shape[1]
    u = as_knot_series(tau, "tau", t.size, (nj,))
    limit = as_limits(tau_limit, "tau_limit", nj)
    if not np.all(limit > 0):
        raise ValueError(f"tau_limit: expected positive torque limits, got {limit}")
    f = as_knot_series(forces, "forces", t.size, ("nfeet", 3))
    nfeet = f.shape[1]
    contact = _stance(stance, t.size, nfeet)
    p = as_array(foot_pos, "foot_pos", (t.size, nfeet, 3))
    feet = as_names(foot_names, nfeet, "foot_names", "foot")
    joints = as_names(joint_names, nj, "joint_names", "joint") if joint_names is not None else None

    mosaic = [["pos", "rpy"], ["vel", "omega"], ["q", "tau"], ["fz", "height"], ["gait", "gait"]]
    heights = [1.0, 1.0, 1.0, 1.0, 0.9]
    if joints is not None:
        mosaic.insert(3, ["joints", "joints"])
        heights.insert(3, 0.25)
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
    _titled(ax["height"], "foot heights", "z [m]")
    for key in ("fz", "height"):
        add_legend(ax[key], inside=True)
    draw_gait(ax["gait"], t, contact, feet)
    _titled(ax["gait"], "gait diagram (bars: stance)", "")
    ax["gait"].set_xlabel("time [s]")
    return save_figure(fig, path, overwrite)


# ---------------------------------------------------------------- animation


def _pinocchio_configuration(model: pinocchio.Model, q: np.ndarray, name: str) -> np.ndarray:
    """Our configuration (quaternions ``[qw, qx, qy, qz]``) in pinocchio's order (``[qx, qy, qz, qw]``)."""
    q_pin = q.copy()
    for joint in model.joints:
        kind = joint.shortname()
        if kind not in ("JointModelFreeFlyer", "JointModelSpherical"):
            continue
        start = joint.idx_q + (3 if kind == "JointModelFreeFlyer" else 0)
        check_unit_quaternion(q[start : start + 4], f"{name}[{start}:{start + 4}]")
        q_pin[start : start + 4] = q[[start + 1, start + 2, start + 3, start]]
    return q_pin


def _default_endpoints(model: pinocchio.Model) -> list[tuple[tuple[str, int], tuple[str, int]]]:
    """Parent-child joint pairs (not from the universe), plus a tip per leaf joint.

    The tip of a leaf joint (one without child joints) is the frame attached
    to it that lies farthest from the joint, e.g. a foot; none if all such
    frames sit at the joint.
    """
    parents = list(model.parents)
    pairs = [(("joint", parents[i]), ("joint", i)) for i in range(1, model.njoints) if parents[i] > 0]
    for leaf in (i for i in range(1, model.njoints) if i not in parents):
        offsets = [(np.linalg.norm(f.placement.translation), fid) for fid, f in enumerate(model.frames) if f.parentJoint == leaf]
        if offsets and max(offsets)[0] > 1e-9:
            pairs.append((("joint", leaf), ("frame", max(offsets)[1])))
    return pairs


def stick_segments(
    pin_model: pinocchio.Model,
    q_list: Sequence[np.ndarray] | np.ndarray,
    frame_pairs: Sequence[tuple[str, str]] | None = None,
) -> np.ndarray:
    """Line segments (M, nseg, 2, 3) [m, world] of a robot at M configurations.

    ``q_list`` (M, nq) holds configurations in OUR order: a free-flyer is
    ``[x, y, z, qw, qx, qy, qz, joints...]`` (pinocchio's ``[qx, qy, qz, qw]``
    order is converted here; spherical joints likewise). By default the
    segments join each joint to its parent joint (the universe excluded) and
    each leaf joint to its farthest attached frame (a foot), at placements from
    ``pinocchio.framesForwardKinematics``; ``frame_pairs`` lists ``(frame_a,
    frame_b)`` frame names to join instead. ``[..., 0, :]`` is the start
    (parent) point, ``[..., 1, :]`` the end.
    """
    qs = as_array(q_list, "q_list", ("M", pin_model.nq))
    if frame_pairs is None:
        endpoints = _default_endpoints(pin_model)
    else:
        for name in (n for pair in frame_pairs for n in pair):
            if not pin_model.existFrame(name):
                raise ValueError(f"frame_pairs: the model has no frame named {name!r}")
        endpoints = [(("frame", pin_model.getFrameId(a)), ("frame", pin_model.getFrameId(b))) for a, b in frame_pairs]
    data = pin_model.createData()
    out = np.empty((qs.shape[0], len(endpoints), 2, 3))
    for k, q in enumerate(qs):
        pinocchio.framesForwardKinematics(pin_model, data, _pinocchio_configuration(pin_model, q, f"q_list[{k}]"))
        for s, pair in enumerate(endpoints):
            for e, (kind, index) in enumerate(pair):
                out[k, s, e] = (data.oMi if kind == "joint" else data.oMf)[index].translation
    return out


def sample_held(times: np.ndarray, values: np.ndarray, t_new: np.ndarray) -> np.ndarray:
    """Zero-order hold: the row of ``values`` (rows, ...) in force at each of ``t_new`` (M,)."""
    rows = np.clip(np.searchsorted(times, t_new, side="right") - 1, 0, values.shape[0] - 1)
    return values[rows]


def _grid_segments(center: np.ndarray, half: float, spacing: float) -> np.ndarray:
    """Ground-grid lines (L, 2, 3) at world multiples of ``spacing`` inside the square view."""
    lo, hi = center - half, center + half
    lines = []
    for axis in (0, 1):
        for c in np.arange(np.ceil(lo[axis] / spacing), np.floor(hi[axis] / spacing) + 1) * spacing:
            a, b = np.zeros(3), np.zeros(3)
            a[axis] = b[axis] = c
            a[1 - axis], b[1 - axis] = lo[1 - axis], hi[1 - axis]
            lines.append((a, b))
    return np.array(lines).reshape(-1, 2, 3)


def animate_stick_figure(
    times: np.ndarray,
    segments: np.ndarray,
    feet: np.ndarray,
    forces: np.ndarray | None,
    stance: np.ndarray,
    path: str | Path,
    fps: float = 30,
    force_scale: float | None = None,
    overwrite: bool = False,
) -> Path:
    """Animate a legged robot as a stick figure; write GIF or MP4; return the path.

    ``times`` (N,) [s]; ``segments`` (N, nseg, 2, 3) world [m], e.g. from
    :func:`stick_segments`; ``feet`` (N, nfeet, 3) world [m]; ``forces``
    (N or N - 1, nfeet, 3) world [N] or None; ``stance`` (N or N - 1, nfeet)
    bool. Frames are resampled at ``fps``: positions and per-knot forces
    linearly, per-interval series and stance held. Links are black lines,
    stance feet filled dots, swing feet open dots, and stance feet carry their
    force as a red arrow of ``force_scale`` [m/N] (default: the largest force
    spans a third of the view). The camera follows the centroid of the
    segment endpoints horizontally over a ground grid at ``z = 0``. ``path``
    ends in ``.gif`` or ``.mp4``; an existing file is replaced only with
    ``overwrite=True``.
    """
    t = as_times(times)
    seg = as_array(segments, "segments", (t.size, "nseg", 2, 3))
    ft = as_array(feet, "feet", (t.size, "nfeet", 3))
    nfeet = ft.shape[1]
    contact = _stance(stance, t.size, nfeet)
    f = as_knot_series(forces, "forces", t.size, (nfeet, 3)) if forces is not None else None
    out = prepare_output_path(path, overwrite, ANIMATION_EXTENSIONS)

    t_frames = frame_times(t, fps)
    seg_frames = interpolate_linear(t, seg, t_frames)
    feet_frames = interpolate_linear(t, ft, t_frames)
    contact_frames = sample_held(t, contact, t_frames)
    if f is not None:
        f_frames = (interpolate_linear if f.shape[0] == t.size else sample_held)(t, f, t_frames)
    centers = seg_frames.reshape(t_frames.size, -1, 3).mean(axis=1)
    points = np.concatenate([seg_frames.reshape(t_frames.size, -1, 3), feet_frames], axis=1)
    half = 1.2 * max(float(np.max(np.abs(points[:, :, :2] - centers[:, None, :2]))), 0.1)
    z_lo = min(0.0, float(points[:, :, 2].min())) - 0.05 * half
    z_hi = max(float(points[:, :, 2].max()), z_lo + 0.2 * half) + 0.2 * half
    spacing = min(GRID_SPACINGS, key=lambda s: abs(s - half / 3))
    if f is not None:
        peak = float(np.max(np.linalg.norm(f, axis=-1)))
        if force_scale is None:
            force_scale = 2.0 * half / 3.0 / peak if peak > 0 else 0.0

    fig = Figure(figsize=ANIMATION_SIZE, layout="constrained")
    ax = fig.add_subplot(projection="3d")
    ax.view_init(elev=20, azim=-50)
    ax.grid(False)
    grid = ax.add_collection3d(Line3DCollection([], colors="0.55", linewidths=0.7), autolim=False)
    links = ax.add_collection3d(Line3DCollection([], colors="black", linewidths=2.0), autolim=False)
    stance_dots = ax.plot([], [], [], "o", color="tab:blue", markersize=6, linestyle="none")[0]
    swing_dots = ax.plot([], [], [], "o", markerfacecolor="white", markeredgecolor="tab:blue", markersize=6, linestyle="none")[0]
    ax.set_box_aspect((2 * half, 2 * half, z_hi - z_lo), zoom=0.9)
    ax.set_zlim(z_lo, z_hi)
    label_axes_3d(ax)
    arrows: list[Any] = []

    def draw_frame(k: int) -> None:
        c = centers[k]
        ax.set_xlim(c[0] - half, c[0] + half)
        ax.set_ylim(c[1] - half, c[1] + half)
        grid.set_segments(_grid_segments(c[:2], half, spacing))
        links.set_segments(seg_frames[k])
        on = contact_frames[k]
        stance_dots.set_data_3d(*feet_frames[k, on].T)
        swing_dots.set_data_3d(*feet_frames[k, ~on].T)
        while arrows:
            arrows.pop().remove()
        if f is not None and on.any() and force_scale > 0:
            tails, vectors = feet_frames[k, on], force_scale * f_frames[k, on]
            arrows.append(ax.quiver(*tails.T, *vectors.T, color="tab:red", linewidth=1.5, arrow_length_ratio=0.2))
        ax.set_title(f"t = {t_frames[k]:.2f} s", fontsize="medium")

    return write_animation(fig, draw_frame, t_frames.size, out, fps)
