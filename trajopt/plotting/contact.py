"""Plots of a capsule contact simulation (:class:`trajopt.sim.ContactSimResult`), witness points included.

- :func:`plot_contact_simulation`: the distances of the pairs that come
  within ``near`` (m), their normal contact forces (N), the impacts (red
  vertical lines), and a side view of the capsules at one time with the
  collision witness points (pinocchio's tutorial's ``displayCollision``);
- :func:`animate_contact_simulation`: that side view over the whole run
  (GIF or MP4).

Side view. The capsules are projected on the plane of the two world axes
along which their end points move most over the run (the hand, whose joints
all turn about y, is seen in x-z): the projection of a capsule is the
stadium around its projected segment (radius unchanged). Witness points of
the pairs closer than ``near`` are red dots, joined by a red line (their
distance) and with a short line along the pair normal; active pairs' dots
are filled, the others open.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Polygon

from ..sim.contact_sim import ContactSimResult
from .animation import ANIMATION_EXTENSIONS, ANIMATION_SIZE, frame_times
from .movie import frame_rate, write_movie
from ..atomic_file import prepare_output_path
from .output import save_figure
from .stick_figure import sample_held

WITNESS_COLOR = "tab:red"
CAPSULE_COLOR = (0.86, 0.74, 0.62)
#: Points on each half circle of a projected capsule.
ARC_POINTS = 12


def _check(result: ContactSimResult) -> None:
    if not isinstance(result, ContactSimResult):
        raise ValueError(f"result: expected a trajopt.sim.ContactSimResult, got {type(result).__name__}")
    if result.collisions is None or result.witness_a.shape[:2] != result.distances.shape:
        raise ValueError("result: no collisions or witness points recorded; simulate with trajopt.sim.ContactSimulator")


def capsule_segments(result: ContactSimResult, steps: np.ndarray) -> np.ndarray:
    """World end points (len(steps), n_capsules, 2, 3) of every capsule at the given steps."""
    coll = result.collisions
    nq = coll.numerics.nq
    out = np.empty((len(steps), len(coll.capsules), 2, 3))
    for row, k in enumerate(steps):
        coll.update(result.states[k, :nq])
        for i in range(len(coll.capsules)):
            out[row, i] = coll.world_segment(i)
    return out


def view_axes(segments: np.ndarray) -> tuple[int, int]:
    """The two world axes (indices, ascending) along which the end points ``segments`` (K, n, 2, 3) move most."""
    motion = np.ptp(segments.reshape(segments.shape[0], -1, 3), axis=0).sum(axis=0)
    dropped = int(np.argmin(motion))
    kept = [a for a in range(3) if a != dropped]
    return kept[0], kept[1]


def stadium(a: np.ndarray, b: np.ndarray, radius: float) -> np.ndarray:
    """Outline (M, 2) of the points within ``radius`` of the 2D segment ``[a, b]``."""
    d = b - a
    length = float(np.linalg.norm(d))
    angle = np.arctan2(d[1], d[0]) if length > 0 else 0.0
    arc = np.linspace(-np.pi / 2, np.pi / 2, ARC_POINTS)
    cap_b = b + radius * np.column_stack([np.cos(angle + arc), np.sin(angle + arc)])
    cap_a = a + radius * np.column_stack([np.cos(angle + np.pi + arc), np.sin(angle + np.pi + arc)])
    return np.vstack([cap_b, cap_a])


class _SideView:
    """The side-view artists of one axes, redrawn per step (module docstring)."""

    def __init__(self, ax: Axes, result: ContactSimResult, segments: np.ndarray, near: float) -> None:
        self.ax, self.result, self.near = ax, result, near
        self.axes = view_axes(segments)
        radii = [c.radius for c in result.collisions.capsules]
        self.patches = [ax.add_patch(Polygon(np.zeros((2, 2)), closed=True, facecolor=CAPSULE_COLOR, edgecolor="0.35", linewidth=0.8)) for _ in radii]
        self.radii = radii
        self.links = ax.plot([], [], color=WITNESS_COLOR, linewidth=1.0)[0]
        self.normals = ax.plot([], [], color=WITNESS_COLOR, linewidth=0.8, alpha=0.6)[0]
        self.active = ax.plot([], [], "o", color=WITNESS_COLOR, markersize=4, linestyle="none", label="witness points (active pair)")[0]
        self.close = ax.plot([], [], "o", markerfacecolor="white", markeredgecolor=WITNESS_COLOR, markersize=4, linestyle="none", label=f"witness points (within {1e3 * near:g} mm)")[0]
        points = segments.reshape(-1, 3)[:, self.axes]
        pad = 1.5 * max(radii)
        ax.set_xlim(points[:, 0].min() - pad, points[:, 0].max() + pad)
        ax.set_ylim(points[:, 1].min() - pad, points[:, 1].max() + pad)
        ax.set_aspect("equal")
        names = "xyz"
        ax.set_xlabel(f"{names[self.axes[0]]} [m]")
        ax.set_ylabel(f"{names[self.axes[1]]} [m]")

    def draw(self, k: int, segments: np.ndarray) -> None:
        """Capsules at ``segments`` (n, 2, 3) and the witness points of step ``k``."""
        r, (i, j) = self.result, self.axes
        for patch, seg, radius in zip(self.patches, segments, self.radii):
            patch.set_xy(stadium(seg[0, [i, j]], seg[1, [i, j]], radius))
        shown = np.flatnonzero(r.distances[k] < self.near)
        active = r.active[min(k, len(r.active) - 1)] if len(r.active) else np.zeros(len(r.pair_names), bool)
        wa, wb, n = r.witness_a[k, shown][:, [i, j]], r.witness_b[k, shown][:, [i, j]], r.normals[k, shown][:, [i, j]]
        gap = max(self.radii)
        self.links.set_data(*_segments_xy(wa, wb))
        self.normals.set_data(*_segments_xy(wb, wb + gap * n))
        on = active[shown]
        both = lambda mask: np.vstack([wa[mask], wb[mask]]).T if mask.any() else np.zeros((2, 0))  # noqa: E731
        self.active.set_data(*both(on))
        self.close.set_data(*both(~on))
        self.ax.set_title(f"t = {r.times[k]:.3f} s: {on.sum()} active pairs", fontsize="medium")


def _segments_xy(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x and y data of separate line segments ``a[i] -> b[i]`` (NaN-separated), for one Line2D."""
    pts = np.stack([a, b, np.full_like(a, np.nan)], axis=1).reshape(-1, 2)
    return pts[:, 0], pts[:, 1]


def plot_contact_simulation(result: ContactSimResult, path: str | Path | None = None, time: Optional[float] = None, near: float = 5e-3, overwrite: bool = False) -> Figure:
    """A contact simulation's figure: the distances (m) and normal contact forces (N) of the pairs that come within
    ``near`` (m), impacts as red lines, and a side view of the capsules at one step with the witness points.

    ``time`` [s] picks the side view's step (default: the step with the
    largest total contact force, else the last); ``path`` writes the figure
    (PNG, PDF or SVG; an existing file only with ``overwrite``).
    """
    _check(result)
    if not (np.isfinite(near) and near > 0):
        raise ValueError(f"near: expected a positive distance [m], got {near!r}")
    if time is None:
        k = int(np.argmax(result.forces.sum(axis=1))) if result.forces.size and result.forces.max() > 0 else len(result.times) - 1
    else:
        if not result.times[0] <= time <= result.times[-1]:
            raise ValueError(f"time: expected a time in [{result.times[0]:g}, {result.times[-1]:g}] s, got {time!r}")
        k = int(np.argmin(np.abs(result.times - time)))
    pairs = np.flatnonzero(result.distances.min(axis=0) < near)
    fig = plt.figure(figsize=(12, 6), layout="constrained")
    grid = fig.add_gridspec(2, 2, width_ratios=(1.3, 1.0))
    ax_d, ax_view = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[:, 1])
    ax_f = fig.add_subplot(grid[1, 0], sharex=ax_d)
    for p in pairs:
        label = " / ".join(result.pair_names[p])
        ax_d.plot(result.times, 1e3 * result.distances[:, p], label=label)
        ax_f.plot(result.times[:-1], result.forces[:, p], label=label)
    for impact in result.impacts:
        for ax in (ax_d, ax_f):
            ax.axvline(impact.time, color="red", linewidth=0.6, alpha=0.5)
    for ax in (ax_d, ax_f):
        ax.axvline(result.times[k], color="0.3", linestyle=":", linewidth=0.8)
    ax_d.set_ylabel("distance [mm]")
    ax_d.set_ylim(min(-0.5, 1e3 * result.distances.min()), 1e3 * near)
    ax_d.set_title(f"pairs within {1e3 * near:g} mm ({len(result.impacts)} impacts in red; {result.status})", loc="left", fontsize="medium")
    if len(pairs):
        ax_d.legend(fontsize=7, ncol=2)
    ax_f.set_ylabel("normal contact force [N]")
    ax_f.set_xlabel("time [s]")
    segments = capsule_segments(result, np.arange(len(result.times)))
    view = _SideView(ax_view, result, segments, near)
    view.draw(k, segments[k])
    ax_view.legend(fontsize=7, loc="upper right")
    return save_figure(fig, path, overwrite=overwrite)


def animate_contact_simulation(result: ContactSimResult, path: str | Path, fps: Optional[float] = None, near: float = 5e-3, overwrite: bool = False) -> Path:
    """The side view of :func:`plot_contact_simulation` over the run, with witness points; GIF or MP4 by extension.

    Frames are the simulation steps held at ``fps`` frames per second of
    simulated time (default :func:`~trajopt.plotting.movie.frame_rate`'s for the
    file type). An existing file is replaced only with ``overwrite``.
    """
    _check(result)
    out = prepare_output_path(path, overwrite, ANIMATION_EXTENSIONS)
    fps = frame_rate(out, fps)
    t_frames = frame_times(result.times, fps)
    steps = sample_held(result.times, np.arange(len(result.times)), t_frames)
    segments = capsule_segments(result, steps)
    fig = Figure(figsize=ANIMATION_SIZE, layout="constrained")
    view = _SideView(fig.add_subplot(), result, segments, near)
    return write_movie(fig, lambda f: view.draw(int(steps[f]), segments[f]), len(steps), out, fps)
