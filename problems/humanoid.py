"""Humanoid problems: the Unitree G1 shifts its weight, or stands (sole contacts).

``humanoid-shift``: :class:`models.Humanoid` with 4 contact points per sole
(mu 1.0), standing for 1 s (21 knots, dt 0.05 s), all contacts in stance; the
base moves ``shift`` (default 6 cm to the left, 3 cm down) and must end there
(a constraint), feet fixed on the ground, friction pyramid, URDF joint,
velocity and torque limits. It is a :class:`trajopt.legged.LeggedProblem`
with the ``stand`` schedule, so its cost and constraints are documented there.

``humanoid-stand``: the G1 with its waist and arms locked (nv 18) and its knees
bent by :data:`STAND_KNEE`, standing still with all sole corners on the
ground: the problem ``trajopt mpc humanoid-stand`` balances in MuJoCo.

``humanoid-walk``: the same robot walking ``distance`` forward in ``cycles``
cycles of :func:`trajopt.legged.schedule.walk` (the soles alternate, each
corner of a sole with it; 0.72 s per cycle, both soles down a tenth of it
twice), feet lifted ``apex`` over their swing; ``trajopt mpc humanoid-walk``
walks the gait in MuJoCo under velocity commands.
"""
from __future__ import annotations

from typing import Sequence

from lie import _backend as B
from models import Humanoid
from trajopt.legged import LeggedProblem, gait
from trajopt.legged.schedule import walk

from .registry import register

#: The knee bend (rad) of ``humanoid-stand``'s posture (hips and ankles pitched by half of it).
STAND_KNEE = 0.6


@register("humanoid-shift")
def humanoid_shift(shift: Sequence[float] = (0.0, 0.06, -0.03), duration: float = 1.0, dt: float = 0.05, mu: float = 1.0) -> LeggedProblem:
    """G1 humanoid shifting its base by (0, 0.06, -0.03) m in 1 s with all sole corners on the ground.

    ``shift`` is the base displacement (m), ``duration`` the time it takes (s)."""
    shift = B.vector(shift, 3, "shift")
    robot = Humanoid(contacts_per_foot=4, mu=mu)
    schedule = gait("stand", dt=dt, period=duration, foot_names=robot.kinematics_bodies)
    return LeggedProblem(robot, schedule, displacement=shift, swing_apex=0.0, name="humanoid-shift")


@register("humanoid-stand")
def humanoid_stand(duration: float = 1.0, dt: float = 0.05, mu: float = 1.0, knee: float = STAND_KNEE) -> LeggedProblem:
    """G1 humanoid (waist and arms locked) standing still on bent knees, all sole corners on the ground.

    ``knee`` is the knee bend (rad) of the standing posture, ``duration`` how long it stands (s)."""
    robot = Humanoid(contacts_per_foot=4, mu=mu, locked=("waist", "arms"), knee=knee)
    schedule = gait("stand", dt=dt, period=duration, foot_names=robot.kinematics_bodies)
    return LeggedProblem(robot, schedule, displacement=(0.0, 0.0, 0.0), swing_apex=0.0, name="humanoid-stand")


@register("humanoid-walk")
def humanoid_walk(distance: float = 0.3, cycles: int = 2, dt: float = 0.04, apex: float = 0.05, mu: float = 1.0, knee: float = STAND_KNEE) -> LeggedProblem:
    """G1 humanoid (waist and arms locked) walking 0.3 m forward in two steps of each sole, all corners of a stance sole down.

    ``distance`` (m) forward in ``cycles`` walking cycles of 0.72 s; ``apex`` the swing soles' height (m)."""
    robot = Humanoid(contacts_per_foot=4, mu=mu, locked=("waist", "arms"), knee=knee)
    schedule = walk(robot.sole_sides, robot.kinematics_bodies, dt=dt, cycles=cycles)
    return LeggedProblem(robot, schedule, displacement=(float(distance), 0.0, 0.0), swing_apex=apex, name="humanoid-walk")
