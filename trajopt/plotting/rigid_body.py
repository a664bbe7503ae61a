"""3D view of a rigid-body trajectory: path and body-axes triads.

Positions are in the world frame [m]; quaternions ``[qw, qx, qy, qz]``
(Hamilton) rotate body vectors into the world (docs/conventions.md), so the columns of
``quat_to_rot(q)`` are the body x, y, z axes expressed in the world.
"""
from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from mpl_toolkits.mplot3d import Axes3D

from lie import quat_to_rot

from .checks import as_array, as_quaternions
from .output import save_figure

#: Colors of the body x, y, z axes.
AXIS_COLORS = ("tab:red", "tab:green", "tab:blue")
#: Number of triads drawn when ``every`` is not given.
DEFAULT_TRIADS = 10


def rotation_matrices(quaternions: np.ndarray) -> np.ndarray:
    """Body-to-world rotation matrices (N, 3, 3) of unit quaternions (N, 4)."""
    return np.array([quat_to_rot(q) for q in quaternions])


def set_equal_3d(ax: Axes3D, points: np.ndarray, margin: float = 0.1, min_half: float = 0.1) -> None:
    """Cube-shaped limits around ``points`` (M, 3), equal scale on x, y, z.

    The half-width is that of the bounding box's longest side, plus
    ``margin`` times it, and at least ``min_half`` [m].
    """
    lo, hi = np.nanmin(points, axis=0), np.nanmax(points, axis=0)
    center = 0.5 * (lo + hi)
    half = max(0.5 * float(np.max(hi - lo)) * (1 + margin), min_half)
    ax.set_xlim(center[0] - half, center[0] + half)
    ax.set_ylim(center[1] - half, center[1] + half)
    ax.set_zlim(center[2] - half, center[2] + half)
    ax.set_box_aspect((1, 1, 1))


def label_axes_3d(ax: Axes3D) -> None:
    """World-frame axis labels in meters."""
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_zlabel("z [m]")


def plot_trajectory_3d(
    positions: np.ndarray,
    quaternions: np.ndarray | None = None,
    every: int | None = None,
    path: str | Path | None = None,
    overwrite: bool = False,
) -> Figure:
    """3D path of a body with its axes drawn every few knots, equal axis scaling.

    ``positions`` (N, 3) world frame [m]; ``quaternions`` (N, 4) unit
    ``[qw, qx, qy, qz]`` body to world, or ``None`` for the path alone. A
    triad (body x red, y green, z blue) is drawn at every ``every``-th knot
    (default: about ten triads) and at the last knot; its length is 8% of the
    path's largest extent (at least 5 cm). Start and end are marked. One
    3D axes.
    """
    p = as_array(positions, "positions", ("N", 3))
    n = p.shape[0]
    fig = plt.figure(figsize=(7, 6.5), layout="constrained")
    ax = fig.add_subplot(projection="3d")
    ax.plot(p[:, 0], p[:, 1], p[:, 2], color="0.3", linewidth=1.2, label="path")
    ax.scatter(*p[0], color="tab:green", s=30, label="start", depthshade=False)
    ax.scatter(*p[-1], color="tab:red", marker="s", s=30, label="end", depthshade=False)
    if quaternions is not None:
        q = as_quaternions(quaternions, "quaternions", n)
        if every is None:
            every = max(1, n // DEFAULT_TRIADS)
        if every < 1:
            raise ValueError(f"every: expected a positive knot stride, got {every}")
        knots = np.unique(np.append(np.arange(0, n, every), n - 1))
        length = max(0.08 * float(np.ptp(p, axis=0).max()), 0.05)
        rot = rotation_matrices(q[knots])
        for axis, color in enumerate(AXIS_COLORS):
            tips = rot[:, :, axis] * length
            ax.quiver(*p[knots].T, *tips.T, color=color, linewidth=1.2, arrow_length_ratio=0.15, label=f"body {'xyz'[axis]}")
    set_equal_3d(ax, p)
    label_axes_3d(ax)
    ax.legend(loc="upper left", fontsize="small")
    ax.set_title("trajectory (world frame)", fontsize="medium")
    return save_figure(fig, path, overwrite)
