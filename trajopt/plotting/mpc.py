"""The plot of a closed loop: the base against its reference, tick times, and the applied plans' margins.

Four panels over the plant's time (s), pushes shaded red:

1. base position (m, WORLD) and its reference (dashed): a legged robot's
   commanded path (:meth:`trajopt.mpc.legged.LeggedMPC.reference_base`), a
   tracking task's reference states;
2. base velocity (m/s, WORLD) and the command or the reference's velocity;
3. each tick's compute time (ms, wall) with the deadline (one controller
   period) and the failed ticks marked;
4. the applied plans at their first knot: for a legged robot the largest
   friction ratio ``max(|f_x|, |f_y|) / (mu f_z)`` of the standing feet (1 on
   the pyramid's edge) and the largest torque over its limit; otherwise the
   largest control over its bound.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from ..mpc.log import base_motion
from ..mpc.loop import ClosedLoopResult
from ..mpc.tasks import MPCTask
from .output import save_figure

XYZ = ("x", "y", "z")


def plot_closed_loop(result: ClosedLoopResult, task: MPCTask, path: Optional[str | Path] = None, overwrite: bool = False) -> Figure:
    """The figure of the module docstring; written to ``path`` (PNG, PDF, SVG) when given."""
    model = task.problem.model
    t = result.times
    motion = [base_motion(model, x) for x in result.states]
    position, velocity = np.array([m[0] for m in motion]), np.array([m[1] for m in motion])
    ref_position, ref_velocity = _reference(task, t)
    fig, axes = plt.subplots(4, 1, figsize=(9, 11), sharex=True)
    for i, name in enumerate(XYZ):
        line = axes[0].plot(t, position[:, i], label=f"base {name}")[0]
        if ref_position is not None:
            axes[0].plot(t, ref_position[:, i], "--", color=line.get_color(), linewidth=1)
        if i < 2:
            line = axes[1].plot(t, velocity[:, i], label=f"v{name}")[0]
            if ref_velocity is not None:
                axes[1].plot(t, ref_velocity[:, i], "--", color=line.get_color(), linewidth=1)
    axes[0].set_ylabel("position [m]")
    axes[1].set_ylabel("velocity [m/s]")
    ticks = result.log[1:]
    times = np.array([r.t for r in ticks])
    compute = 1e3 * np.array([r.compute_time for r in ticks])
    axes[2].plot(times, compute, ".", markersize=3, label="compute time")
    axes[2].axhline(1e3 / result.rate, color="r", linewidth=1, label=f"deadline {1e3 / result.rate:.0f} ms")
    failed = np.array([not r.success for r in ticks], dtype=bool)
    if failed.any():
        axes[2].plot(times[failed], compute[failed], "rx", label="failed")
    axes[2].set_ylabel("tick [ms]")
    _margins(axes[3], result, task)
    for ax in axes:
        _shade_pushes(ax, result)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper right", fontsize=8)
    axes[-1].set_xlabel("t [s]")
    title = f"{task.name}: {'fell at %.2f s' % result.fall_time if result.fell else 'no fall'}"
    fig.suptitle(title)
    fig.tight_layout()
    return save_figure(fig, path, overwrite)


def _reference(task: MPCTask, t: np.ndarray) -> tuple:
    """Reference base positions and velocities (K, 3) at ``t``, or ``(None, None)``."""
    model = task.problem.model
    if task.legged is not None:
        positions, headings = task.legged.reference_base(t)
        c = task.legged.command
        v = np.stack([c.vx * np.cos(headings) - c.vy * np.sin(headings), c.vx * np.sin(headings) + c.vy * np.cos(headings), np.zeros_like(headings)], axis=1)
        return positions, v
    if task.reference is not None:
        motion = [base_motion(model, x) for x in task.reference(t)]
        return np.array([m[0] for m in motion]), np.array([m[1] for m in motion])
    return None, None


def _margins(ax: Any, result: ClosedLoopResult, task: MPCTask) -> None:
    ticks = [r for r in result.log if r.success]
    times = np.array([r.t for r in ticks])
    model = task.problem.model
    lower, upper = task.problem.control_lower[0], task.problem.control_upper[0]
    bound = np.where(np.isfinite(upper), np.abs(upper), np.abs(lower))
    usage = [float(np.max(np.abs(r.control) / np.where(bound > 0, bound, np.inf))) for r in ticks]
    if task.legged is not None:
        mu = task.legged.robot.mu
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


def _shade_pushes(ax: Any, result: ClosedLoopResult) -> None:
    pushed = np.linalg.norm(result.forces, axis=1) > 0
    if not pushed.any():
        return
    edges = np.flatnonzero(np.diff(np.r_[0, pushed.astype(int), 0]))
    for start, stop in zip(edges[::2], edges[1::2]):
        ax.axvspan(result.times[start], result.times[min(stop, len(result.times) - 1)], color="r", alpha=0.15, linewidth=0)
