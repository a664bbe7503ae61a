"""Gait dimensions carried from the Go1 to any quadruped by its leg length (dynamic similarity).

The legged problems' defaults (step, swing apex, jump length, period, knot
spacing) were tuned on the Go1, whose legs are :data:`REFERENCE_LEG_LENGTH`
long (thigh + calf). A robot with legs of length ``L`` moves like a
geometrically similar Go1 at the same Froude number ``v^2 / (g L)``: lengths
scale by ``s = L / REFERENCE_LEG_LENGTH`` and times by ``sqrt(s)``, so speeds
scale by ``sqrt(s)`` and accelerations stay the same multiple of ``g`` (a
jump's flight time and height keep their ballistic relation). For the Go1
``s = 1``: its defaults are unchanged.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

#: The Go1's thigh + calf (m), 0.213 + 0.213: the leg length the gait defaults were tuned on.
REFERENCE_LEG_LENGTH = 0.426


@dataclass(frozen=True)
class GaitScale:
    """Scale factors from the Go1 to a robot: ``length = L / REFERENCE_LEG_LENGTH``, ``time = sqrt(length)``."""

    length: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.length) and self.length > 0):
            raise ValueError(f"length: expected a positive scale factor, got {self.length!r}")

    @classmethod
    def of(cls, robot: Any) -> "GaitScale":
        """The scale of ``robot`` from its ``leg_length`` (m), e.g. :attr:`models.LeggedRobot.leg_length`."""
        return cls(robot.leg_length / REFERENCE_LEG_LENGTH)

    @property
    def time(self) -> float:
        """Time scale factor, ``sqrt(length)``."""
        return math.sqrt(self.length)

    def distance(self, go1_value: float) -> float:
        """A Go1 length (m) for this robot."""
        return go1_value * self.length

    def duration(self, go1_value: float) -> float:
        """A Go1 duration (s) for this robot."""
        return go1_value * self.time
