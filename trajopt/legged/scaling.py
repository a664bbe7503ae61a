"""Gait dimensions carried from the Go1 to any quadruped by its leg length (dynamic similarity).

The legged problems' defaults (step, swing apex, jump length, period, knot
spacing) were tuned on the Go1, whose legs are :data:`REFERENCE_LEG_LENGTH`
long (thigh + calf). A robot with legs of length ``L`` moves like a
geometrically similar Go1 at the same Froude number ``v^2 / (g L)``: lengths
scale by ``s = L / REFERENCE_LEG_LENGTH`` and times by ``sqrt(s)``, so speeds
scale by ``sqrt(s)`` and accelerations stay the same multiple of ``g`` (a
jump's flight time and height keep their ballistic relation). For the Go1
``s = 1``: its defaults are unchanged.

Forces scale with the mass: a robot of mass ``m`` stands on ``m g``, and
its torques scale by ``m_r s`` (``m_r = m / REFERENCE_MASS``, the lever
arms by ``s``): :attr:`GaitScale.torque`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

#: The Go1's thigh + calf (m), 0.213 + 0.213: the leg length the gait defaults were tuned on.
REFERENCE_LEG_LENGTH = 0.426
#: The Go1's mass (kg), the sum of its example-robot-data URDF's link masses: the mass the defaults were tuned on.
REFERENCE_MASS = 13.100529


@dataclass(frozen=True)
class GaitScale:
    """Scale factors from the Go1 to a robot: ``length = L / REFERENCE_LEG_LENGTH``, ``time = sqrt(length)``,
    ``mass = m / REFERENCE_MASS`` (1 unless given)."""

    length: float
    mass: float = 1.0

    def __post_init__(self) -> None:
        for name in ("length", "mass"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name}: expected a positive scale factor, got {value!r}")

    @classmethod
    def of(cls, robot: Any) -> "GaitScale":
        """The scale of ``robot`` from its ``leg_length`` (m) and ``mass`` (kg), e.g. a :class:`models.LeggedRobot`'s."""
        return cls(robot.leg_length / REFERENCE_LEG_LENGTH, robot.mass / REFERENCE_MASS)

    @property
    def torque(self) -> float:
        """Torque scale factor, ``mass * length``."""
        return self.mass * self.length

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

    def speed(self, go1_value: float) -> float:
        """A Go1 speed (m/s) for this robot: ``length / time``, ``sqrt(length)``."""
        return go1_value * self.length / self.time
