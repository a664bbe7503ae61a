"""Disturbances the controller does not know: pushes and gusts on the plant's base, state-estimate noise.

A :class:`Push` is an impulse ``I`` (N s) in the horizontal direction
``angle`` (deg from the world +x axis towards +y), spread as a constant force
``F = I / duration`` over ``[start, start + duration)`` (0.1 s by default:
legged_gym's 1 m/s kick of a Go1 is about 13 N s). A :class:`Gust` is a
constant world force (N) over an interval. Both act on the plant's base (the
floating base's root body, a rigid body's centre of mass), in the WORLD frame.

:func:`parse_push` reads the command line's ``IMPULSE,ANGLE_DEG,T``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

#: Duration of a push (s).
PUSH_DURATION = 0.1


@dataclass(frozen=True)
class Push:
    """A horizontal impulse ``impulse`` (N s) along ``angle`` (deg, 0 = +x, 90 = +y) from ``start`` (s)."""

    impulse: float
    angle: float
    start: float
    duration: float = PUSH_DURATION

    def __post_init__(self) -> None:
        if not (np.isfinite(self.impulse) and self.impulse >= 0):
            raise ValueError(f"push impulse: expected N s >= 0, got {self.impulse!r}")
        if not np.isfinite(self.angle):
            raise ValueError(f"push angle: expected degrees, got {self.angle!r}")
        if not (np.isfinite(self.start) and self.start >= 0):
            raise ValueError(f"push time: expected s >= 0, got {self.start!r}")
        if not (np.isfinite(self.duration) and self.duration > 0):
            raise ValueError(f"push duration: expected s > 0, got {self.duration!r}")

    @property
    def direction(self) -> np.ndarray:
        """The push's WORLD unit direction (3,): ``(cos angle, sin angle, 0)``."""
        a = np.radians(self.angle)
        return np.array([np.cos(a), np.sin(a), 0.0])

    def force(self, t: float) -> np.ndarray:
        """The WORLD force (3,) at time ``t`` (N)."""
        active = self.start <= t < self.start + self.duration
        return self.direction * (self.impulse / self.duration) if active else np.zeros(3)


@dataclass(frozen=True)
class Gust:
    """A constant WORLD force ``force_vector`` (3,) in N over ``[start, start + duration)`` (s)."""

    force_vector: Sequence[float]
    start: float
    duration: float

    def force(self, t: float) -> np.ndarray:
        """The WORLD force (3,) at time ``t`` (N): ``force_vector`` inside the interval, zero outside."""
        active = self.start <= t < self.start + self.duration
        return np.asarray(self.force_vector, dtype=float) if active else np.zeros(3)


def total_force(disturbances: Sequence, t: float) -> np.ndarray:
    """The sum of the disturbances' forces at ``t`` (3,)."""
    force = np.zeros(3)
    for d in disturbances:
        force += d.force(t)
    return force


def parse_push(text: str) -> Push:
    """A :class:`Push` from ``"IMPULSE,ANGLE_DEG,T"`` (N s, deg, s); ``ValueError`` naming the format."""
    parts = text.split(",")
    try:
        impulse, angle, start = (float(p) for p in parts)
    except ValueError:
        raise ValueError(f"expected IMPULSE,ANGLE_DEG,T (N s, degrees, seconds), e.g. 6,90,2.0; got {text!r}") from None
    return Push(impulse, angle, start)
