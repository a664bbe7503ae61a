"""Where a legged closed loop's feet stood: the footholds taken, and whether a terrain had footing there.

:func:`footholds_taken` reads them from a :class:`~trajopt.mpc.loop.ClosedLoopResult`:
for every stance phase of every foot in the ticks' stance masks (the first
knot's dynamics parameters), the foot's WORLD position at the tick in the
middle of the phase (a foot has landed and not yet lifted off there, whatever
the plant's contact timing). :func:`off_the_regions` names those that no
foot region of a :class:`trajopt.terrain.Terrain` holds: outside every region
(unshrunk) or more than a tolerance above or below its surface.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List

import numpy as np

from .loop import ClosedLoopResult

#: How far (m) a foothold may sit above or below its region's surface (a soft foot sinks, the foot frame is its centre).
HEIGHT_TOLERANCE = 0.03


@dataclass(frozen=True)
class Foothold:
    """Foot ``foot`` (index into the robot's feet) standing from ``t0`` to ``t1`` (s, tick times) at ``position`` (3,)."""

    foot: int
    t0: float
    t1: float
    position: np.ndarray


def footholds_taken(result: ClosedLoopResult, robot: Any) -> List[Foothold]:
    """Every stance phase of ``result``'s ticks with the foot's position at its middle tick (module docstring), in time order."""
    ticks = result.log
    if not ticks:
        return []
    masks = np.array([np.asarray(r.params) > 0.5 for r in ticks])
    times = np.array([r.t for r in ticks])
    out = []
    for i in range(masks.shape[1]):
        edges = np.diff(np.r_[0, masks[:, i].astype(int), 0])
        for start, stop in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)):
            middle = (start + stop - 1) // 2
            feet = np.asarray(robot.kinematics(ticks[middle].state), dtype=float).reshape(-1, 3)
            out.append(Foothold(i, float(times[start]), float(times[stop - 1]), feet[i]))
    return sorted(out, key=lambda f: (f.t0, f.foot))


def off_the_regions(footholds: List[Foothold], terrain: Any, tolerance: float = HEIGHT_TOLERANCE) -> List[Foothold]:
    """The ``footholds`` no foot region of ``terrain`` holds: outside the region under them or farther than ``tolerance`` (m) from its surface."""
    out = []
    for f in footholds:
        region = terrain.region_at(f.position[:2], 0.0)
        if region is None or not region.contains(f.position[:2])[0] or abs(f.position[2] - float(region.height(f.position[:2])[0])) > tolerance:
            out.append(f)
    return out
