"""Stepping sooner when pushed sideways: a receding horizon's touchdown times adapted to the capture point.

A walking gait's clock (:class:`~trajopt.mpc.gaits.GaitTimeline`) fixes when
each foot lands. Pushed sideways, a trotting robot whose swinging pair is
still in the air must wait for that touchdown to put a foot under its moving
centre of mass. :class:`StepTiming` ends the swing in progress sooner when the
base is pushed: it advances the gait's clock (``GaitTimeline.advance``), so
that the swinging feet land, and the standing feet lift, earlier by the same
time, and the cycle runs on from there. A horizon with step timing plans the
footholds from the measured base too (:class:`~trajopt.mpc.legged.LeggedMPC`).

The signal is the capture point's offset from the reference's,

    d = sqrt(z0 / g) R(psi)^T (v - v_ref) = (d_x, d_y),

with ``v`` the base's horizontal velocity, ``v_ref`` the reference's (both
WORLD), ``z0`` the standing height and ``psi`` the base's heading (the
foothold heuristic adds the same offset, :class:`~trajopt.mpc.legged.LeggedMPC`'s
swing targets): ``d_x`` forward, ``d_y`` to the left. When the push is
sideways, ``|d_y| >= max(threshold, |d_x|)`` (:attr:`StepTiming.threshold`),
each tick advances the clock by one knot step ``h`` while the swing in
progress has room: it still lands at or after the horizon's knot
:attr:`StepTiming.earliest_knot` (the first whose touchdown the horizon
constrains) and lasts at least :attr:`StepTiming.min_swing`. A touchdown then
comes two knots nearer per tick instead of one; while the push lasts, the
next pair's swing is shortened in turn.

Only a sideways offset triggers it: measured on the Go1's trot (the design
notes, ``docs/design/mpc.md``), shortening the swings after sagittal pushes
made the robot fall more often (its feet landed short of a base moving
forward fast), also when the lateral part of their offset alone triggered
it, while after lateral pushes it fell less often. Advancing by as much as
the swing allowed at once recovered fewer lateral pushes than one knot per
tick with the footholds from the measured base. Choosing the advance among
candidates by the horizon's cost recovered as many lateral pushes as
advancing at once, at one more linearization and QP per candidate and tick:
a tick that is already not real-time cannot carry them.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from lie import yaw_to_rot

from ..legged.scaling import GaitScale
from .gaits import GaitTimeline


@dataclass(frozen=True)
class StepTiming:
    """When and how far a receding horizon advances its gait's clock (module docstring); the Go1's values,
    :meth:`scaled` to a robot's legs.

    threshold:
        The capture point's lateral offset from the reference's (m) at which a swing ends sooner (when it is
        also at least the forward offset).
    min_swing:
        The shortest swing (s) an advance leaves.
    earliest_knot:
        The knot of the horizon, counted from its first, at or after which a shortened swing lands.
    """

    threshold: float = 0.035
    min_swing: float = 0.1
    earliest_knot: int = 2

    def __post_init__(self) -> None:
        for name in ("threshold", "min_swing"):
            value = getattr(self, name)
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"step timing: expected {name} > 0, got {value!r}")
        if not (isinstance(self.earliest_knot, (int, np.integer)) and self.earliest_knot >= 1):
            raise ValueError(f"step timing: expected earliest_knot an int >= 1, got {self.earliest_knot!r}")

    def scaled(self, scale: GaitScale) -> "StepTiming":
        """The Go1's values scaled to a robot's legs (distances and durations, :class:`~trajopt.legged.scaling.GaitScale`)."""
        return replace(self, threshold=scale.distance(self.threshold), min_swing=scale.duration(self.min_swing))

    def advance(self, timeline: GaitTimeline, t: float, h: float, offset: Any) -> float:
        """How far (s) to advance ``timeline`` at the tick ``t`` for the capture point's offset ``offset`` (m; forward
        and left in the base's heading frame, :func:`heading_offset`): the knot step ``h`` when the lateral part
        reaches :attr:`threshold` and the forward part's size and every swing in progress at ``t`` would still
        last at least :attr:`min_swing` and land no sooner than knot :attr:`earliest_knot`; else 0 (with no
        foot swinging too)."""
        forward, lateral = (float(v) for v in offset)
        if abs(lateral) < max(self.threshold, abs(forward)):
            return 0.0
        mid = t + 0.5 * h  # the first interval's stance, as the horizon's masks sample it
        swinging = np.flatnonzero(~timeline.stance(mid)[0])
        if swinging.size == 0:
            return 0.0
        room = np.inf
        for foot in swinging:
            lift, land = (float(v[0]) for v in timeline.swing_times(mid, int(foot)))
            room = min(room, land - t - max(self.earliest_knot * h, self.min_swing - (t - lift)))
        return float(h) if room >= h - 1e-9 else 0.0


def heading_offset(capture: Any, heading: float) -> np.ndarray:
    """A WORLD capture-point offset ``capture`` (3,) in the frame of ``heading`` (rad): its forward and left parts (2,)."""
    return (yaw_to_rot(heading).T @ np.asarray(capture, dtype=float))[:2]
