"""A page comparing a plan with its MuJoCo replays (``trajopt verify FILE --plot OUT``).

:func:`plot_verification` draws, against time: the base height of the plan,
the PD + feed-forward replay and the feed-forward-only replay; the base
orientation as ZYX Euler angles (degrees) of the same three; the normal
contact force of every foot in the plan and in the PD + feed-forward replay
(MuJoCo's solved contact forces); and the base drift of both replays.
The plan's flight phases (no foot on the ground) are shaded.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from models.multibody_model import BASE_QUAT

from ..plotting.legged import shade_stance
from ..plotting.output import save_figure
from ..plotting.trajectories import EULER_LABELS, add_legend, euler_zyx_degrees
from .verify import VerificationReport

#: Line styles of the plan and the two replays.
STYLES = {"plan": "-", "PD + FF": "--", "FF only": ":"}


def plot_verification(report: VerificationReport, path: Optional[str | Path] = None, overwrite: bool = False) -> Figure:
    """The plan of ``report`` against its two MuJoCo replays (PD + feed-forward, feed-forward only) over time:
    base height, base orientation (ZYX Euler, degrees), each foot's normal force and the replays' base drift,
    flight phases shaded; written to ``path`` (PNG, PDF, SVG; an existing file only with ``overwrite``) when given."""
    tracked, feedforward = report.tracked, report.feedforward
    fig, axes = plt.subplots(4, 1, figsize=(10, 11), sharex=True, constrained_layout=True)
    fig.suptitle(f"{report.name} in MuJoCo: plan against {tracked.controller} and feed-forward only", fontsize="medium")
    runs = {"plan": (tracked.times, tracked.planned), "PD + FF": (tracked.times, tracked.states), "FF only": (feedforward.times, feedforward.states)}
    if len(feedforward.times) > len(tracked.times):
        runs["plan"] = (feedforward.times, feedforward.planned)
    ax = axes[0]
    for label, (t, X) in runs.items():
        ax.plot(t, X[:, 2], STYLES[label], color="k" if label == "plan" else None, label=label)
    ax.set_title("base height", loc="left")
    ax.set_ylabel("z [m]")
    add_legend(ax)
    ax = axes[1]
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for label, (t, X) in runs.items():
        angles = euler_zyx_degrees(X[:, BASE_QUAT])
        for j, name in enumerate(EULER_LABELS):
            ax.plot(t, angles[:, j], STYLES[label], color=colors[j], label=f"{name}, {label}")
    ax.set_title("base orientation (ZYX Euler)", loc="left")
    ax.set_ylabel("[deg]")
    add_legend(ax)
    ax = axes[2]
    for i, name in enumerate(report.foot_names):
        color = colors[i % len(colors)]
        ax.plot(tracked.times, tracked.planned_forces[:, i, 2], "-", color=color, label=f"{name}, plan")
        ax.plot(tracked.times, tracked.forces[:, i, 2], "--", color=color, linewidth=0.8, label=f"{name}, PD + FF")
    ax.set_title("normal contact forces", loc="left")
    ax.set_ylabel("f_z [N]")
    add_legend(ax)
    ax = axes[3]
    for label, result in (("PD + FF", tracked), ("FF only", feedforward)):
        ax.plot(result.times, 1e3 * result.base_position_error, STYLES[label], label=f"position, {label}")
    ax.set_ylabel("position [mm]")
    twin = ax.twinx()
    for label, result in (("PD + FF", tracked), ("FF only", feedforward)):
        twin.plot(result.times, np.degrees(result.base_orientation_error), STYLES[label], color="tab:red", label=f"orientation, {label}")
    twin.set_ylabel("orientation [deg]", color="tab:red")
    ax.set_title("base drift from the plan", loc="left")
    ax.set_xlabel("t [s]")
    handles = ax.get_legend_handles_labels()[0] + twin.get_legend_handles_labels()[0]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.08, 1.0), fontsize="small")
    flight = ~report.knots.stance.any(axis=1)
    for ax in axes:
        shade_stance(ax, report.knots.times, flight)
    return save_figure(fig, path, overwrite=overwrite)
