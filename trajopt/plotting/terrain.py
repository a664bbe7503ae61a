"""The terrain under a legged motion, in 2D (the viewer draws it in 3D: :mod:`trajopt.viewer.terrain_mesh`).

:func:`draw_terrain_profile` is a side view (world ``x`` across, ``z`` up,
metres, equal scales): the terrain's height along ``x`` at the lateral
position of each side's feet (a line per distinct foot ``y``, rounded to
:data:`LANE_RESOLUTION`; stepping stones under the left and right feet are
two lanes), filled below, with the base path and the feet's paths over it.
:func:`ground_under_feet` is the terrain height under each foot, what
:func:`.legged.plot_foot_heights` draws beside the feet's heights.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from matplotlib.axes import Axes

#: Feet whose mean ``y`` differ by less than this (m) share one profile.
LANE_RESOLUTION = 0.05
#: Points per metre of ``x`` along a profile (fine enough for a 1 cm edge).
PROFILE_DENSITY = 500
#: Fill colour of the terrain.
TERRAIN_FILL = dict(color="0.80", alpha=0.8, linewidth=0)


def ground_under_feet(terrain: Any, foot_pos: np.ndarray) -> np.ndarray:
    """Terrain height (N, nfeet) [m] under feet at ``foot_pos`` (N, nfeet, 3), world frame."""
    p = np.asarray(foot_pos, dtype=float)
    return np.asarray(terrain.height(p[..., :2].reshape(-1, 2)), dtype=float).reshape(p.shape[:-1])


def draw_terrain_profile(ax: Axes, terrain: Any, base_pos: np.ndarray, foot_pos: np.ndarray, foot_names: Sequence[str]) -> None:
    """Side view of the terrain with the base and feet paths (module docstring).

    ``base_pos`` (N, 3) and ``foot_pos`` (N, nfeet, 3) world [m].
    """
    base, feet = np.asarray(base_pos, dtype=float), np.asarray(foot_pos, dtype=float)
    lo = min(base[:, 0].min(), feet[..., 0].min()) - 0.1
    hi = max(base[:, 0].max(), feet[..., 0].max()) + 0.1
    x = np.linspace(lo, hi, max(int(PROFILE_DENSITY * (hi - lo)), 2))
    lanes = sorted(set(np.round(feet[..., 1].mean(axis=0) / LANE_RESOLUTION).astype(int).tolist()))
    bottom = None
    for lane in lanes:
        y = lane * LANE_RESOLUTION
        z = np.asarray(terrain.height(np.c_[x, np.full_like(x, y)]), dtype=float)
        bottom = z.min() if bottom is None else min(bottom, z.min())
        ax.plot(x, z, color="0.35", linewidth=1.0, label=f"terrain at y = {y:+.2f} m")
    for lane in lanes:
        y = lane * LANE_RESOLUTION
        z = np.asarray(terrain.height(np.c_[x, np.full_like(x, y)]), dtype=float)
        ax.fill_between(x, bottom - 0.05, z, **TERRAIN_FILL)
    ax.plot(base[:, 0], base[:, 2], color="k", linewidth=1.5, label="base")
    for i, name in enumerate(foot_names):
        ax.plot(feet[:, i, 0], feet[:, i, 2], linewidth=1.0, label=name)
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("z [m]")
