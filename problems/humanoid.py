"""Humanoid problem: the Unitree G1 shifts its weight over one foot (full dynamics, sole contacts).

``humanoid-shift``: :class:`models.Humanoid` with 4 contact points per sole
(mu 1.0), standing for 1 s (21 knots, dt 0.05 s), all contacts in stance; the
base moves ``shift`` (default 6 cm to the left, 3 cm down) and must end there
(a constraint), feet fixed on the ground, friction pyramid, URDF joint,
velocity and torque limits. It is a :class:`trajopt.legged.LeggedProblem`
with the ``stand`` schedule, so its cost and constraints are documented there.
"""
from __future__ import annotations

from typing import Sequence

from lie import _backend as B
from models import Humanoid
from trajopt.legged import LeggedProblem, gait

from .registry import register


@register("humanoid-shift")
def humanoid_shift(shift: Sequence[float] = (0.0, 0.06, -0.03), duration: float = 1.0, dt: float = 0.05, mu: float = 1.0) -> LeggedProblem:
    """G1 humanoid shifting its base by (0, 0.06, -0.03) m in 1 s with all sole corners on the ground.

    ``shift`` is the base displacement (m), ``duration`` the time it takes (s)."""
    shift = B.vector(shift, 3, "shift")
    robot = Humanoid(contacts_per_foot=4, mu=mu)
    schedule = gait("stand", dt=dt, period=duration, foot_names=robot.kinematics_bodies)
    return LeggedProblem(robot, schedule, displacement=shift, swing_apex=0.0, name="humanoid-shift")
