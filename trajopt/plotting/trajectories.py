"""Time plots of a trajectory: states, controls and constraint violations.

Inputs are plain numpy arrays sampled at knot times ``times`` (N,) in seconds.
Quaternions follow docs/conventions.md: ``[qw, qx, qy, qz]``, Hamilton, body to world;
they are also shown as ZYX Euler angles ordered ``(yaw, pitch, roll)``.
Series that live on intervals (N - 1 rows, e.g. piecewise-constant controls)
are drawn as steps held over ``[t_k, t_k+1)``.

Every function returns the :class:`~matplotlib.figure.Figure` (made with
``pyplot``, so ``plt.show()`` and notebooks display it; close it when done) and
writes it to ``path`` (PNG, PDF or SVG) when given, see
:func:`trajopt.plotting.output.save_figure`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from lie import quat_to_euler_zyx

from .checks import as_array, as_knot_series, as_limits, as_names, as_quaternions, as_times
from .output import save_figure

#: Legend entries of :func:`euler_zyx_degrees` columns.
EULER_LABELS = ("yaw (z)", "pitch (y)", "roll (x)")
#: Smallest violation drawn on the log axis of :func:`plot_constraint_violation`.
VIOLATION_FLOOR = 1e-16
#: Legends with more entries than this are split into columns.
LEGEND_ROWS = 8


def euler_zyx_degrees(quaternions: np.ndarray, name: str = "quaternions") -> np.ndarray:
    """ZYX Euler angles (N, 3) in degrees, columns ``(yaw, pitch, roll)``.

    ``quaternions`` (N, 4) are unit ``[qw, qx, qy, qz]`` (body to world),
    converted by :func:`lie.quat_to_euler_zyx`. Yaw and roll are unwrapped
    along time, so a flip shows as a continuous angle beyond +-180 deg.
    """
    q = as_quaternions(quaternions, name)
    angles = np.array([np.asarray(quat_to_euler_zyx(qk), dtype=float).reshape(3) for qk in q])
    return np.degrees(np.unwrap(angles, axis=0))


def plot_series(ax: Axes, times: np.ndarray, values: np.ndarray, labels: Sequence[str] | None = None) -> None:
    """Draw the columns of ``values`` against ``times`` (N,).

    ``values`` has N rows (one per knot, drawn as lines) or N - 1 rows (one
    per interval, drawn as steps held from ``t_k`` to ``t_k+1``). More than
    ten columns take the 20 colors of ``tab20``.
    """
    values = values.reshape(values.shape[0], -1)
    if values.shape[0] == times.size - 1:
        values = np.vstack([values, values[-1:]])
        drawstyle = "steps-post"
    else:
        drawstyle = "default"
    n = values.shape[1]
    labels = labels if labels is not None else [None] * n
    colors = [f"C{i}" for i in range(n)] if n <= 10 else plt.cm.tab20(np.arange(n) % 20)
    for column, label, color in zip(values.T, labels, colors):
        ax.plot(times, column, drawstyle=drawstyle, label=label, color=color)
    ax.grid(True, alpha=0.3)


def draw_limits(ax: Axes, *limits: float) -> None:
    """Dashed red horizontal lines at the finite values of ``limits``."""
    for value in limits:
        if np.isfinite(value):
            ax.axhline(value, color="tab:red", linestyle="--", linewidth=1.0)


def add_legend(ax: Axes, inside: bool = False) -> None:
    """Legend in columns of at most :data:`LEGEND_ROWS` entries, right of the axes or ``inside`` it."""
    n = len(ax.get_legend_handles_labels()[0])
    if not n:
        return
    if inside:
        ax.legend(loc="best", fontsize="x-small", ncol=-(-n // LEGEND_ROWS), framealpha=0.8)
    else:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", ncol=-(-n // LEGEND_ROWS))


def _default_groups(nx: int, quat_slices: Sequence[slice]) -> list[tuple[str, slice]]:
    """Contiguous runs of non-quaternion components, plus one group per quaternion."""
    in_quat = np.zeros(nx, dtype=bool)
    for s in quat_slices:
        in_quat[s] = True
    groups = [(f"x[{s.start}:{s.stop}] (quaternion)", s) for s in quat_slices]
    start = None
    for i in range(nx + 1):
        free = i < nx and not in_quat[i]
        if free and start is None:
            start = i
        elif not free and start is not None:
            groups.append((f"x[{start}:{i}]", slice(start, i)))
            start = None
    return sorted(groups, key=lambda g: g[1].start)


def _as_slice(s: slice, nx: int, name: str) -> slice:
    """``s`` as an explicit ``slice(start, stop)`` of step 1 inside ``range(nx)``."""
    if not isinstance(s, slice):
        raise TypeError(f"{name}: expected a slice, got {type(s).__name__}")
    indices = range(nx)[s]
    if len(indices) == 0 or indices.step != 1:
        raise ValueError(f"{name}: {s} selects no contiguous components of a state of size {nx}")
    return slice(indices.start, indices.stop)


def plot_states(
    times: np.ndarray,
    states: np.ndarray,
    labels: Sequence[str] | None = None,
    quaternion_slices: Sequence[slice] = (),
    path: str | Path | None = None,
    overwrite: bool = False,
    *,
    groups: Sequence[tuple[str, slice]] | None = None,
) -> Figure:
    """Plot a state trajectory, one subplot per group of components.

    ``times`` (N,) [s]; ``states`` (N, nx); ``labels`` names the nx components
    (default ``x[i]``). ``quaternion_slices`` are slices of 4 components
    holding ``[qw, qx, qy, qz]`` (body to world); each is ALSO drawn as ZYX
    Euler angles (yaw, pitch, roll) in degrees, right below its group.
    ``groups`` is a sequence of ``(title, slice)``; by default every
    quaternion is a group and the components between them form the others.
    The figure has ``len(groups) + len(quaternion_slices)`` axes.
    """
    t = as_times(times)
    x = as_array(states, "states", (t.size, "nx"))
    nx = x.shape[1]
    labels = as_names(labels, nx, "labels", "state component", default="x[{}]")
    quat_slices = [_as_slice(s, nx, f"quaternion_slices[{k}]") for k, s in enumerate(quaternion_slices)]
    for k, s in enumerate(quat_slices):
        if s.stop - s.start != 4:
            raise ValueError(f"quaternion_slices[{k}]: expected 4 components, got {s.stop - s.start} ({s})")
    if groups is None:
        groups = _default_groups(nx, quat_slices)
    groups = [(title, _as_slice(s, nx, f"groups[{k}]")) for k, (title, s) in enumerate(groups)]

    # Euler panels sort right after the group starting at the same component.
    panels = [(s.start, 0, title, s) for title, s in groups] + [(s.start, 1, None, s) for s in quat_slices]
    panels.sort(key=lambda p: p[:2])
    fig, axes = plt.subplots(len(panels), 1, sharex=True, squeeze=False, figsize=(9, 0.6 + 1.9 * len(panels)), layout="constrained")
    for ax, (_, is_euler, title, s) in zip(axes[:, 0], panels):
        if is_euler:
            plot_series(ax, t, euler_zyx_degrees(x[:, s], f"states[:, {s.start}:{s.stop}]"), EULER_LABELS)
            ax.set_title(f"x[{s.start}:{s.stop}] as ZYX Euler angles", loc="left", fontsize="medium")
            ax.set_ylabel("angle [deg]")
        else:
            plot_series(ax, t, x[:, s], labels[s])
            ax.set_title(title, loc="left", fontsize="medium")
        add_legend(ax)
    axes[-1, 0].set_xlabel("time [s]")
    return save_figure(fig, path, overwrite)


def plot_controls(
    times: np.ndarray,
    controls: np.ndarray,
    labels: Sequence[str] | None = None,
    lower: float | np.ndarray | None = None,
    upper: float | np.ndarray | None = None,
    path: str | Path | None = None,
    overwrite: bool = False,
) -> Figure:
    """Plot each control component in its own subplot, with its limits.

    ``times`` (N,) [s]; ``controls`` (N, nu) per knot or (N - 1, nu) per
    interval (drawn as steps). ``lower``/``upper`` are scalars or (nu,)
    arrays; finite limits are drawn as dashed red lines. ``labels`` names the
    components (default ``u[i]``). The figure has nu axes, in columns of at
    most four.
    """
    t = as_times(times)
    u = as_knot_series(controls, "controls", t.size, ("nu",))
    nu = u.shape[1]
    labels = as_names(labels, nu, "labels", "control", default="u[{}]")
    lo, hi = as_limits(lower, "lower", nu), as_limits(upper, "upper", nu)
    ncols = -(-nu // 4)
    nrows = -(-nu // ncols)
    fig, axes = plt.subplots(nrows, ncols, sharex=True, squeeze=False, figsize=(3.6 * ncols + 1.5, 0.6 + 1.8 * nrows), layout="constrained")
    for i, ax in enumerate(axes.flat):
        if i >= nu:
            ax.remove()
            continue
        plot_series(ax, t, u[:, i])
        draw_limits(ax, lo[i], hi[i])
        ax.set_title(labels[i], loc="left", fontsize="medium")
        if i + ncols >= nu:
            ax.set_xlabel("time [s]")
    if np.isfinite(lo).any() or np.isfinite(hi).any():
        fig.suptitle("controls (dashed red: limits)", fontsize="medium")
    return save_figure(fig, path, overwrite)


def plot_constraint_violation(
    times: np.ndarray,
    violation_per_knot: np.ndarray,
    path: str | Path | None = None,
    overwrite: bool = False,
) -> Figure:
    """Stem plot of the largest constraint violation at each knot, log scale.

    ``times`` (N,) [s]; ``violation_per_knot`` (N,) per knot, or (N - 1,) per
    interval (e.g. collocation defects, drawn at interval midpoints), in the
    constraints' own units. Values below :data:`VIOLATION_FLOOR` (1e-16),
    including exact zeros, are drawn at the floor. One axes.
    """
    t = as_times(times)
    v = as_knot_series(violation_per_knot, "violation_per_knot", t.size, ())
    if v.size == t.size - 1:
        t = 0.5 * (t[:-1] + t[1:])
    shown = np.maximum(v, VIOLATION_FLOOR)
    fig, ax = plt.subplots(figsize=(9, 3.2), layout="constrained")
    ax.vlines(t, VIOLATION_FLOOR, shown, color="tab:blue", linewidth=1.2)
    ax.plot(t, shown, "o", color="tab:blue", markersize=4)
    ax.set_yscale("log")
    ax.set_ylim(bottom=VIOLATION_FLOOR / 2)
    k = int(np.nanargmax(shown))
    ax.set_title(f"max constraint violation per knot (largest {v[k]:.2e} at t = {t[k]:.3g} s)", loc="left", fontsize="medium")
    ax.set_xlabel("time [s]")
    ax.set_ylabel("violation")
    ax.grid(True, which="major", alpha=0.3)
    return save_figure(fig, path, overwrite)
