"""The verdict of a MuJoCo verification: each check's worst value against its threshold.

:func:`verdict_checks` turns the per-knot checks of :func:`.verify.knot_checks`
and the tracked replay into :class:`Check` rows. A plan passes when every row
is within its threshold:

=========================  ===========================================  ==================================
check                      worst value                                  threshold
=========================  ===========================================  ==================================
EOM residual               ``max |M a + b - tau - J^T f|`` (MuJoCo)      :data:`EOM_TOLERANCE` m g
stance slip                displacement of a stance foot since its      :data:`CONTACT_TOLERANCE` m
                           touchdown
ground penetration         depth of a foot below the ground             :data:`CONTACT_TOLERANCE` m
friction (plan's model)    ``max(|f_x|, |f_y|) - mu f_z`` for the        :data:`FORCE_TOLERANCE` m g
                           plan's pyramid, ``|f_t| - mu f_z`` for its
                           cone
unilateral contact         ``-min f_z`` of stance feet                   :data:`FORCE_TOLERANCE` m g
swing-foot force           ``max |f|`` of swing feet                     :data:`FORCE_TOLERANCE` m g
torque limits              ``|tau| -`` the actuator's force range        :data:`TORQUE_TOLERANCE` N m
joint limits               angle beyond the joint's range                :data:`JOINT_TOLERANCE` rad
tracked replay             fell (base too low or tilted) or not          must not fall
link on the terrain        depth of a non-foot link in the terrain at   0 m; 0 steps
(terrain plans only)       the knots; steps of the tracked replay with
                           such a contact
shank below the ground     depth of a shank's lower end (knee, or the   :data:`CONTACT_TOLERANCE` m
(flat-ground plans only)   point 3 cm above the foot) below the
                           ground carrying the feet's centres
=========================  ===========================================  ==================================

The friction check uses the plan's own model, the constraint the optimizer
was given (``problem.friction``). MuJoCo's cone is reported beside it but is
no verdict: a pyramid plan's forces may sit in the pyramid's corners, up to
``sqrt(2) mu f_z`` tangential, outside MuJoCo's elliptic cone by design of the
pyramid. The feed-forward-only replay is information too (an open loop is
expected to drift and may fall). Stance-foot speeds are not judged: the
collocated plans hold footholds at the knots, not their velocities between
them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List

import numpy as np

from models.model import GRAVITY

#: Largest equation-of-motion residual, relative to the robot's weight m g.
EOM_TOLERANCE = 1e-6
#: Largest friction excess (in the plan's model), negative normal force or swing-foot force, relative to m g.
FORCE_TOLERANCE = 1e-6
#: Largest stance-foot slip and ground penetration (m). Collocated plans (``formulation`` "inverse" or
#: "forward") hold their footholds as equalities at the knots; the "contact" formulation holds stance
#: feet through their acceleration, so positions drift with the integration error of its steps. A
#: millimetre passes both and is far below what a controller notices (docs/design/mujoco.md).
CONTACT_TOLERANCE = 1e-3
#: Largest torque beyond the actuators' force ranges (N m).
TORQUE_TOLERANCE = 1e-6
#: Largest joint angle beyond the joints' ranges (rad).
JOINT_TOLERANCE = 1e-6


@dataclass(frozen=True)
class Check:
    """One row of the verdict: the worst ``value`` over the knots (in ``unit``, at ``knot``; -1 when
    not per knot) against ``threshold``, and whether it ``passed``."""

    name: str
    value: float
    threshold: float
    unit: str
    knot: int
    passed: bool

    def describe(self) -> str:
        """The check as the verdict line states a failure: value, threshold and where."""
        if self.name == REPLAY:
            return f"{self.name} fell at t = {self.value:.3f} s"
        where = f" at knot {self.knot}" if self.knot >= 0 else ""
        return f"{self.name} {self.value:+.3g} {self.unit} > {self.threshold:.3g} {self.unit}{where}"


#: Name of the row of the tracked replay (its value: the time of the fall, NaN when it stood).
REPLAY = "tracked replay"


def limit_check(name: str, values: Any, threshold: float, unit: str) -> Check:
    """The row of a per-knot quantity ``values`` (N, ...): its largest finite entry and that entry's
    knot against ``threshold``; a quantity with no finite entry (nothing to check) passes."""
    values = np.asarray(values, dtype=float).reshape(len(values), -1)
    if values.size == 0 or not np.isfinite(values).any():
        return Check(name, float("nan"), threshold, unit, -1, True)
    flat = int(np.argmax(np.where(np.isfinite(values), values, -np.inf)))
    value = float(values.flat[flat])
    return Check(name, value, threshold, unit, flat // values.shape[1], bool(value <= threshold))


def verdict_checks(knots: Any, tracked: Any, mass: float, plan_friction: str) -> List[Check]:
    """The verdict's rows (each a :class:`Check` of a worst value against its threshold: EOM residual, stance
    slip, penetration, friction, negative normal and swing-foot forces, torque and joint limits, the tracked
    replay's fall; a link on a terrain or a shank below the flat ground) from
    :class:`.verify.KnotChecks` ``knots``, the tracked
    replay (:class:`.track.TrackingResult`), the robot's ``mass`` (kg) and the plan's friction model."""
    force = FORCE_TOLERANCE * mass * GRAVITY
    return [
        limit_check("EOM residual", knots.eom_residual, EOM_TOLERANCE, "m g"),
        limit_check("stance slip", knots.stance_slip, CONTACT_TOLERANCE, "m"),
        limit_check("ground penetration", knots.penetration, CONTACT_TOLERANCE, "m"),
        limit_check(f"friction ({plan_friction})", knots.plan_friction_excess, force, "N"),
        limit_check("negative normal force", -knots.normal_force, force, "N"),
        limit_check("swing-foot force", knots.swing_force, force, "N"),
        limit_check("torque limit", knots.torque_excess, TORQUE_TOLERANCE, "N m"),
        limit_check("joint limit", knots.joint_excess, JOINT_TOLERANCE, "rad"),
        Check(REPLAY, float(tracked.fall_time) if tracked.fell else float("nan"), float("nan"), "s", -1, not tracked.fell),
        *terrain_checks(knots, tracked),
        *shank_checks(knots),
    ]


def shank_checks(knots: Any) -> List[Check]:
    """On the flat ground (``knots.shank_height`` measured), the row of a shank's lower end below it (its depth,
    threshold :data:`CONTACT_TOLERANCE`): a knee the plan lays into the ground; none on a terrain."""
    heights = np.asarray(knots.shank_height, dtype=float)
    if np.isnan(heights).all():
        return []
    return [limit_check("shank below the ground", -heights, CONTACT_TOLERANCE, "m")]


def terrain_checks(knots: Any, tracked: Any) -> List[Check]:
    """On a terrain (``knots.body_clearance`` measured), the rows of a link other than a foot on it: its
    depth at the knots (``-body_clearance``, threshold 0 m) and the steps of the tracked replay with such a
    contact (threshold 0); none on the flat ground."""
    clearance = np.asarray(knots.body_clearance, dtype=float)
    if np.isnan(clearance).all():
        return []
    touches = len(tracked.terrain_contacts)
    return [
        limit_check("link on the terrain", -clearance, 0.0, "m"),
        Check("link on the terrain in the tracked replay", float(touches), 0.0, "steps", -1, touches == 0),
    ]


def verdict_line(checks: List[Check]) -> str:
    """``verdict: PASS (...)`` or ``verdict: FAIL: <each failed check with its value and threshold>``."""
    failed = [c for c in checks if not c.passed]
    if not failed:
        return f"verdict: PASS ({len(checks)} checks within their thresholds)"
    return "verdict: FAIL: " + "; ".join(c.describe() for c in failed)
