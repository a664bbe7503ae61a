"""Stick-figure animation of a multibody robot (links as segments, feet, forces).

:func:`stick_segments` computes line segments between joint (and foot) frame
placements with pinocchio; :func:`animate_stick_figure` draws them over a
ground grid with contact-force arrows and writes a GIF or MP4. Conventions as
in :mod:`trajopt.plotting.legged`: world frame, meters, contact forces in the WORLD frame [N],
``stance`` a boolean (rows, nfeet) schedule.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence, TextIO

import numpy as np
import pinocchio
from matplotlib.figure import Figure
from mpl_toolkits.mplot3d.art3d import Line3DCollection

from ..sim.pin_numerics import PinNumerics
from .animation import ANIMATION_EXTENSIONS, ANIMATION_SIZE, frame_times, interpolate_linear
from .checks import as_array, as_knot_series, as_times
from .legged import stance_table
from .movie import frame_rate, write_movie
from ..atomic_file import prepare_output_path
from .rigid_body import label_axes_3d

GRID_SPACINGS = (0.05, 0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 5.0)


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
    numerics = PinNumerics(pin_model)
    data = numerics.data
    out = np.empty((qs.shape[0], len(endpoints), 2, 3))
    for k, q in enumerate(qs):
        pinocchio.framesForwardKinematics(pin_model, data, numerics.to_pinocchio(numerics.check_q(q, f"q_list[{k}]")))
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
    fps: float | None = None,
    force_scale: float | None = None,
    overwrite: bool = False,
    progress: TextIO | None = None,
) -> Path:
    """Animate a legged robot as a stick figure; write GIF or MP4; return the path.

    ``times`` (N,) [s]; ``segments`` (N, nseg, 2, 3) world [m], e.g. from
    :func:`stick_segments`; ``feet`` (N, nfeet, 3) world [m]; ``forces``
    (N or N - 1, nfeet, 3) world [N] or None; ``stance`` (N or N - 1, nfeet)
    bool. Frames are resampled at ``fps`` (default and GIF rounding:
    :func:`.movie.frame_rate`): positions and per-knot forces
    linearly, per-interval series and stance held. Links are black lines,
    stance feet filled dots, swing feet open dots, and stance feet carry their
    force as a red arrow of ``force_scale`` [m/N] (default: the largest force
    spans a third of the view). The camera follows the centroid of the
    segment endpoints horizontally over a ground grid at ``z = 0``. ``path``
    ends in ``.gif`` or ``.mp4``; an existing file is replaced only with
    ``overwrite=True``. ``progress`` (a stream) gets a progress line.
    """
    t = as_times(times)
    seg = as_array(segments, "segments", (t.size, "nseg", 2, 3))
    ft = as_array(feet, "feet", (t.size, "nfeet", 3))
    nfeet = ft.shape[1]
    contact = stance_table(stance, t.size, nfeet)
    f = as_knot_series(forces, "forces", t.size, (nfeet, 3)) if forces is not None else None
    out = prepare_output_path(path, overwrite, ANIMATION_EXTENSIONS)
    fps = frame_rate(out, fps)
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

    return write_movie(fig, draw_frame, t_frames.size, out, fps, progress=progress)
