"""Humanoid problems: the Unitree G1 shifts its weight; the G1 or Talos stands and walks (sole contacts).

``humanoid-shift``: :class:`models.Humanoid` with 4 contact points per sole
(mu 1.0), standing for 1 s (21 knots, dt 0.05 s), all contacts in stance; the
base moves ``shift`` (default 6 cm to the left, 3 cm down) and must end there
(a constraint), feet fixed on the ground, friction pyramid, URDF joint,
velocity and torque limits. It is a :class:`trajopt.legged.LeggedProblem`
with the ``stand`` schedule, so its cost and constraints are documented there.

``humanoid-stand``: a humanoid of :data:`models.humanoid.HUMANOIDS` (``robot``:
the G1 by default, or Talos) with every lockable joint group locked (the
G1's waist and arms, Talos's waist, arms and head: nv 18, the legs alone) and
its knees bent by :data:`STAND_KNEE` and its hips rolled outwards by
:data:`STAND_HIP_ROLL` (the G1's soles 11 cm further apart, flat),
standing still with all sole corners on the ground: the problem ``trajopt
mpc humanoid-stand`` balances in MuJoCo. The wider stance is what holds a
sideways push: the robot stands after one without a step only while the
capture point (where the pushed centre of mass would come to rest over the
ground) stays inside the soles.

``humanoid-walk``: the same robot walking ``distance`` forward in ``cycles``
cycles of :func:`trajopt.legged.schedule.walk` (the soles alternate, each
corner of a sole with it; 0.72 s per cycle, both soles down a tenth of it
twice), feet lifted ``apex`` over their swing; ``trajopt mpc
humanoid-walk`` walks the gait in MuJoCo under velocity commands.
"""
from __future__ import annotations

from typing import Sequence

from lie import _backend as B
from models import Humanoid
from models.humanoid import humanoid_description
from trajopt.legged import LeggedProblem, gait
from trajopt.legged.schedule import walk

from .registry import register

#: The knee bend (rad) of ``humanoid-stand``'s posture (hips and ankles pitched by half of it).
STAND_KNEE = 0.6
#: The outward hip roll (rad) of ``humanoid-stand``'s posture (module docstring): the G1's soles 11 cm further apart.
STAND_HIP_ROLL = 0.1


@register("humanoid-shift")
def humanoid_shift(shift: Sequence[float] = (0.0, 0.06, -0.03), duration: float = 1.0, dt: float = 0.05, mu: float = 1.0) -> LeggedProblem:
    """G1 humanoid shifting its base by (0, 0.06, -0.03) m in 1 s with all sole corners on the ground.

    ``shift`` is the base displacement (m), ``duration`` the time it takes (s)."""
    shift = B.vector(shift, 3, "shift")
    robot = Humanoid(contacts_per_foot=4, mu=mu)
    schedule = gait("stand", dt=dt, period=duration, foot_names=robot.kinematics_bodies)
    return LeggedProblem(robot, schedule, displacement=shift, swing_apex=0.0, name="humanoid-shift")


def legs_only(robot: str, mu: float, knee: float, hip_roll: float = 0.0) -> Humanoid:
    """The humanoid ``robot`` with every lockable joint group locked (nv 18), four contacts per sole, standing on knees
    bent by ``knee`` with its hips rolled outwards by ``hip_roll`` (rad)."""
    return Humanoid(contacts_per_foot=4, mu=mu, locked=tuple(humanoid_description(robot).lockable), knee=knee, robot=robot, hip_roll=hip_roll)


@register("humanoid-stand")
def humanoid_stand(
    duration: float = 1.0, dt: float = 0.05, mu: float = 1.0, knee: float = STAND_KNEE, robot: str = "g1", hip_roll: float = STAND_HIP_ROLL
) -> LeggedProblem:
    """Humanoid (robot=g1 or talos; legs only, the rest locked) standing still on bent knees, feet apart, all sole corners down.

    ``knee`` is the knee bend (rad) of the standing posture, ``hip_roll`` its hips' outward roll (rad; 0 puts the soles
    under the hips), ``duration`` how long it stands (s)."""
    model = legs_only(robot, mu, knee, hip_roll)
    schedule = gait("stand", dt=dt, period=duration, foot_names=model.kinematics_bodies)
    return LeggedProblem(model, schedule, displacement=(0.0, 0.0, 0.0), swing_apex=0.0, name="humanoid-stand")


@register("humanoid-walk")
def humanoid_walk(distance: float = 0.3, cycles: int = 2, dt: float = 0.04, apex: float = 0.05, mu: float = 1.0, knee: float = STAND_KNEE, robot: str = "g1") -> LeggedProblem:
    """Humanoid (robot=g1 or talos; legs only) walking 0.3 m forward in two steps of each sole, all corners of a stance sole down.

    ``distance`` (m) forward in ``cycles`` walking cycles of 0.72 s; ``apex`` the swing soles' height (m)."""
    model = legs_only(robot, mu, knee)
    schedule = walk(model.sole_sides, model.kinematics_bodies, dt=dt, cycles=cycles)
    return LeggedProblem(model, schedule, displacement=(float(distance), 0.0, 0.0), swing_apex=apex, name="humanoid-walk")
