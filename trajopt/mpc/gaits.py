"""Which feet stand when: gait schedules in continuous time, for a receding horizon.

A gait (:data:`GAITS`) is a period ``T``, a duty factor ``beta`` and a phase
offset ``o_i`` per leg (:data:`trajopt.legged.schedule.GAIT_OFFSETS`, by leg
role): foot ``i`` stands at phase time ``tau`` (from its segment's start) iff
``frac(tau / T - o_i) < beta``; ``stand`` keeps every foot down. The Go1's
periods are scaled to a robot's legs (:class:`~trajopt.legged.scaling.GaitScale`).

A :class:`GaitSchedule` is a list of ``(start, gait)`` segments. A
:class:`GaitTimeline` places them on a robot: a change of gait takes effect at
the next boundary of the running gait's cycle at or after the requested time
(the duty factors exceed one half, so at a boundary every foot stands: no
swing is cut short, and ``stand -> trot -> stand`` starts and ends on four
feet); the new gait's cycle starts there. A biped (a robot whose contact
points name their sole's side, ``sole_sides``: the humanoid's corners) walks
with the gaits of :data:`BIPED_GAITS`, the corners of a sole together; a
quadruped with the others; any robot stands. It answers the stance of each foot
at any times and the lift-off and touchdown times of a swing. Its
``advance`` (s, 0 at first) runs the whole timeline ahead of the clock: the
stance at ``t`` is the schedule's at ``t + advance`` (a receding horizon
stepping sooner, :mod:`trajopt.mpc.step_timing`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Sequence, Tuple

import numpy as np

from models.quadruped import LEG_ROLES

from ..legged.scaling import GaitScale
from ..legged.schedule import BIPED_OFFSETS, GAIT_OFFSETS

#: Gaits by name: the Go1's period (s) and duty factor. The trot's period is the receding horizon's
#: length (:data:`trajopt.mpc.legged.DEFAULT_HORIZON`, 0.4 s), so that a horizon starting anywhere in
#: the cycle holds the next touchdown of both diagonal pairs (pushes recovered: docs/design/mpc.md).
GAITS = {"stand": (0.5, 1.0), "trot": (0.4, 0.6), "pace": (0.5, 0.6), "bound": (0.5, 0.6), "walk": (0.6, 0.6)}
#: The gaits of bipeds (``walk``: the soles alternate, both down for a tenth of the period twice a cycle; its period in
#: :data:`GAITS` is in the Go1's units like the others', 0.74 s on the G1) and the phase offset of each sole's side ("L", "R").
BIPED_GAITS = BIPED_OFFSETS


@dataclass(frozen=True)
class GaitSegment:
    """``gait`` from ``start`` (s)."""

    start: float
    gait: str


class GaitSchedule:
    """Gaits over time: ``(start, gait)`` segments, the first at 0, starts increasing, gaits of :data:`GAITS`."""

    def __init__(self, segments: Sequence[Tuple[float, str]]) -> None:
        parsed = [GaitSegment(float(s), str(g)) for s, g in segments]
        if not parsed or parsed[0].start != 0.0 or any(b.start <= a.start for a, b in zip(parsed, parsed[1:])):
            raise ValueError(f"gait schedule: expected segments starting at 0 s in increasing order, got {[(s.start, s.gait) for s in parsed]}")
        unknown = [s.gait for s in parsed if s.gait not in GAITS]
        if unknown:
            raise ValueError(f"gait schedule: unknown gait {unknown[0]!r}; expected one of {sorted(GAITS)}")
        self.segments = parsed

    @classmethod
    def constant(cls, gait: str) -> "GaitSchedule":
        """One gait (a name of :data:`GAITS`) from time 0 on."""
        return cls([(0.0, gait)])

    @classmethod
    def parse(cls, text: str) -> "GaitSchedule":
        """From ``"0:stand,2:trot,12:stand"`` (start in s, gait)."""
        try:
            pairs = [(float(start), gait.strip()) for start, gait in (item.split(":") for item in text.split(","))]
        except ValueError:
            raise ValueError(f"gait schedule: expected START:GAIT,START:GAIT,... (e.g. 0:stand,2:trot), got {text!r}") from None
        return cls(pairs)

    def gaits(self) -> List[str]:
        """The gaits' names, one per segment, in time order."""
        return [s.gait for s in self.segments]


def is_biped(robot: Any) -> bool:
    """Whether ``robot`` walks on two soles: its contact points name their sole's side (``sole_sides``, the humanoid's corners)."""
    return getattr(robot, "sole_sides", None) is not None


class GaitTimeline:
    """A :class:`GaitSchedule` placed on ``robot``, a gait change taking effect at the next boundary of the
    running gait's cycle: ``starts`` (s) and per segment its
    ``period`` (s), duty factor and offsets (nc,) in the robot's foot order."""

    def __init__(self, schedule: GaitSchedule, robot: Any) -> None:
        roles, sides = getattr(robot, "leg_roles", None), getattr(robot, "sole_sides", None)
        self.gaits = schedule.gaits()
        self.duty = np.array([GAITS[g][1] for g in self.gaits])
        walking = [g for g, d in zip(self.gaits, self.duty) if d < 1.0]
        if sides is not None:
            wrong = [g for g in walking if g not in BIPED_GAITS]
            if wrong:
                raise ValueError(f"gaits: {robot.name} is a biped; it walks with {sorted(BIPED_GAITS)}, not {wrong[0]!r}")
        elif roles is None and walking:
            raise ValueError(f"robot: {robot.name} has no leg roles (front/hind, left/right) to key the gait {walking[0]!r} by; it can only stand")
        elif any(g in BIPED_GAITS for g in walking):
            raise ValueError(f"gaits: {next(g for g in walking if g in BIPED_GAITS)!r} is a biped's gait; {robot.name} has four legs")
        scale = GaitScale.of(robot)
        self.period = np.array([scale.duration(GAITS[g][0]) for g in self.gaits])
        if sides is not None:
            self.offsets = np.array([[BIPED_GAITS[g][side] if g in BIPED_GAITS else 0.0 for side in sides] for g in self.gaits])
        elif roles is None:
            self.offsets = np.zeros((len(self.gaits), robot.nc))
        else:
            order = [LEG_ROLES.index(role) for role in roles]
            self.offsets = np.array([np.asarray(GAIT_OFFSETS.get(g, (0.0,) * 4), dtype=float)[order] for g in self.gaits])
        starts = [0.0]
        for i, segment in enumerate(schedule.segments[1:], start=1):
            previous, T = starts[-1], self.period[i - 1]
            cycles = 0.0 if self.duty[i - 1] >= 1.0 else np.ceil((segment.start - previous) / T - 1e-9)
            starts.append(segment.start if self.duty[i - 1] >= 1.0 else previous + max(cycles, 1.0) * T)
        self.starts = np.array(starts)
        #: how far (s) the timeline runs ahead of the clock: the stance at ``t`` is the schedule's at ``t + advance``
        self.advance = 0.0

    def segment(self, t: Any) -> np.ndarray:
        """The segment index at each of the times ``t`` (the clock's: the timeline's :attr:`advance` added)."""
        return self._segment_at(np.asarray(t, dtype=float) + self.advance)

    def _segment_at(self, times: np.ndarray) -> np.ndarray:
        """The segment index at each of the schedule's ``times`` (the clock's plus the advance)."""
        return np.maximum(np.searchsorted(self.starts, times, side="right") - 1, 0)

    def stance(self, times: Any) -> np.ndarray:
        """Stance (K, nc) of the feet at ``times`` (K,)."""
        times = np.atleast_1d(np.asarray(times, dtype=float)) + self.advance
        seg = self._segment_at(times)
        tau = (times - self.starts[seg])[:, None]
        phase = np.mod(tau / self.period[seg, None] - self.offsets[seg], 1.0)
        return (phase < self.duty[seg, None] - 1e-12) | (self.duty[seg, None] >= 1.0)  # a stand's phase may round to within 1e-12 of 1

    def most_landings_per_step(self, groups: Sequence[Sequence[int]], step: float) -> int:
        """The most of ``groups`` (lists of feet that step together, a sole's corners) whose touchdowns fall within one
        half-open window of ``step`` s, over the walking segments (0 when every segment stands). Foot ``i`` lands at
        the phases ``o_i`` of its gait's cycle (mod 1); a window of ``step`` holds the landings ``o_j`` with
        ``(o_j - o_i) mod 1 < step / T`` of some landing ``o_i``."""
        most = 0
        for period, duty, offsets in zip(self.period, self.duty, self.offsets):
            if duty >= 1.0:
                continue
            phases = np.array([offsets[g[0]] for g in groups]) % 1.0
            window = np.mod(phases[None, :] - phases[:, None], 1.0) < step / period + 1e-9  # landings a whole step apart counted together: round-off may put them in one knot
            most = max(most, int(window.sum(axis=1).max()))
        return most

    def swing_times(self, t: Any, foot: int) -> Tuple[np.ndarray, np.ndarray]:
        """Lift-off and touchdown times (s) of the swing of ``foot`` that contains each time of ``t`` (a
        time in a swing of a walking segment: the stance masks' swing times)."""
        t = np.atleast_1d(np.asarray(t, dtype=float)) + self.advance
        seg = self._segment_at(t)
        T, beta, o, s0 = self.period[seg], self.duty[seg], self.offsets[seg, foot], self.starts[seg]
        lift = s0 + (np.floor((t - s0) / T - o) + o + beta) * T
        lift = np.where(t >= lift + (1 - beta) * T, lift + T, lift)
        return lift - self.advance, lift + (1 - beta) * T - self.advance
