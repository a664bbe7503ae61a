"""Humanoids of example-robot-data (the Unitree G1, PAL's Talos) as floating-base multibody models with sole contacts.

The G1 is the stand-in for PinnZoo's Nadia; Talos is the second humanoid, the
check that nothing is specific to one robot. Each robot is a
:class:`HumanoidDescription` of :data:`HUMANOIDS`: its URDF, the link its soles
are rigidly attached to, the sole's contact corners in that link's frame, its
joint groups that can be locked and its legs' pitch joints.

- **G1**: its URDF models each sole by four small collision spheres (radius
  5 mm) in the ankle-roll link frame, at ``x in {-0.05, 0.12}``, ``y = +-0.025``
  (heel) / ``+-0.03`` (toe), ``z = -0.03``; the contact frames sit at the bottom
  of those spheres (``z = -0.035``).
- **Talos**: its URDF models each foot by a collision mesh whose bottom, 0.107 m
  below the ankle (the URDF's ``left_sole_link``), is flat to 2 mm over ``x in
  [-0.108, 0.097]``, ``y in [-0.062, 0.062]`` in the ``leg_*_6_link`` frame; the
  contact frames are the corners ``x in {-0.10, 0.09}``, ``y = +-0.05`` on that
  bottom, at least 6 mm inside it. A flat face has no radius of its own: the
  MuJoCo plant puts spheres of :attr:`HumanoidDescription.contact_radius` (5 mm,
  the G1's) there.

With ``contacts_per_foot=4`` the four corners ``{left,right}_{heel,toe}_{left,right}``
are the contact points, with ``contacts_per_foot=1`` one point ``{left,right}_sole``
at the middle of the sole.

With one contact per foot, ``kinematics_ori`` adds each foot's orientation to
:meth:`kinematics` (as PinnZoo's Nadia): per foot ``[p (3); q (4)]`` with the
unit quaternion of the sole frame (``"quaternion"``, ``qw >= 0``) or ``[p (3);
phi (3)]`` with its axis-angle (``"axis_angle"``); :meth:`kinematics_jacobian`
and :meth:`kinematics_hvp` follow. The velocity and force functions stay those
of the contact POINTS (3 rows per foot), since contact forces are 3D.

``locked`` welds joint groups of the robot's :attr:`HumanoidDescription.lockable`
at zero (the G1's waist and arms; Talos's waist, arms with grippers and head:
:func:`models.locked_joints.lock_joints`): a model of the legs alone (nv 18
with every group locked) for controllers whose tick must stay short. Its
MuJoCo plant welds the same joints (:func:`trajopt.mujoco.model.build_model`).
``knee`` bends the standing posture of :meth:`init_state`: knee ``knee``, hip
and ankle pitch ``-knee / 2`` each, so that the soles stay parallel to the
pelvis. ``hip_roll`` widens it: each hip rolls its leg outwards by
``hip_roll`` (rad; both robots' roll joints turn about the pelvis's ``+x``,
so the left hip by ``+hip_roll`` and the right by ``-hip_roll``), and each
ankle's pitch and roll are solved so that the sole lies flat again (the
roll and pitch joints do not commute, so the ankle roll is not simply
``-hip_roll``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Mapping, Optional, Sequence, Tuple

import casadi as ca
import numpy as np
import pinocchio as pin

from lie import quat_to_axis_angle, rot_to_quat

from .locked_joints import lock_joints
from .multibody_model import MultibodyModel
from .robot_data import load_pinocchio_model, urdf_path

#: Orientation parameterizations :class:`Humanoid` can add to its kinematics.
KINEMATICS_ORI = (None, "quaternion", "axis_angle")
#: The largest knee bend (rad) of the standing posture: the G1's ankle pitch limit is -0.87 rad (Talos's -1.31).
MAX_KNEE_BEND = 1.5
#: The largest outward hip roll (rad) of the standing posture: the ankle rolls back by about as much, and the G1's ankle
#: roll limit is 0.26 rad (Talos's 0.52).
MAX_HIP_ROLL = 0.2
SIDES = ("left", "right")


@dataclass(frozen=True)
class HumanoidDescription:
    """What :class:`Humanoid` needs to know of one humanoid of example-robot-data (module docstring).

    Joint and link names are templates with ``{side}`` for ``"left"``/``"right"``."""

    urdf: str  #: the robot's name for :func:`models.robot_data.urdf_path`
    foot_link: str  #: the link the sole is rigidly attached to (its contact frames' parent)
    sole_depth: float  #: depth (m) of the contact points below ``foot_link``'s origin
    corners: Mapping[str, Tuple[float, float]]  #: ``(x, y)`` (m) of the sole's corners in ``foot_link``'s frame
    sole_centre: Tuple[float, float]  #: ``(x, y)`` (m) of the single contact point of ``contacts_per_foot=1``
    lockable: Mapping[str, Tuple[str, ...]]  #: joint groups that can be locked, by name
    hip_pitch: str  #: the leg's pitch joints, which :meth:`Humanoid.init_state` bends
    knee: str
    ankle_pitch: str
    hip_roll: str  #: the leg's roll joints (about the pelvis's ``+x``), which :meth:`Humanoid.init_state` turns outwards
    ankle_roll: str
    #: radius (m) of the plant's contact spheres when the URDF models the sole as a flat face, not as spheres
    contact_radius: Optional[float] = None

    def joints(self, template: str) -> Tuple[str, str]:
        """The left and right joint of a ``{side}`` template."""
        return tuple(template.format(side=side) for side in SIDES)  # type: ignore[return-value]


_G1_ARM_JOINTS = ("shoulder_pitch", "shoulder_roll", "shoulder_yaw", "elbow", "wrist_roll", "wrist_pitch", "wrist_yaw")
#: The humanoids :class:`Humanoid` builds, by name.
HUMANOIDS: Dict[str, HumanoidDescription] = {
    "g1": HumanoidDescription(
        urdf="g1",
        foot_link="{side}_ankle_roll_link",
        sole_depth=0.035,  # sphere centre 0.03 + radius 0.005
        corners={"heel_left": (-0.05, 0.025), "heel_right": (-0.05, -0.025), "toe_left": (0.12, 0.03), "toe_right": (0.12, -0.03)},
        sole_centre=(0.035, 0.0),
        lockable={
            "waist": ("waist_yaw_joint", "waist_roll_joint", "waist_pitch_joint"),
            "arms": tuple(f"{side}_{joint}_joint" for side in SIDES for joint in _G1_ARM_JOINTS),
        },
        hip_pitch="{side}_hip_pitch_joint",
        knee="{side}_knee_joint",
        ankle_pitch="{side}_ankle_pitch_joint",
        hip_roll="{side}_hip_roll_joint",
        ankle_roll="{side}_ankle_roll_joint",
    ),
    "talos": HumanoidDescription(
        urdf="talos",
        foot_link="leg_{side}_6_link",
        sole_depth=0.107,
        corners={"heel_left": (-0.10, 0.05), "heel_right": (-0.10, -0.05), "toe_left": (0.09, 0.05), "toe_right": (0.09, -0.05)},
        sole_centre=(-0.005, 0.0),
        lockable={
            "waist": ("torso_1_joint", "torso_2_joint"),
            "arms": tuple(f"arm_{side}_{i}_joint" for side in SIDES for i in range(1, 8)) + ("gripper_left_joint", "gripper_right_joint"),
            "head": ("head_1_joint", "head_2_joint"),
        },
        hip_pitch="leg_{side}_3_joint",
        knee="leg_{side}_4_joint",
        ankle_pitch="leg_{side}_5_joint",
        hip_roll="leg_{side}_2_joint",
        ankle_roll="leg_{side}_6_joint",
        contact_radius=0.005,
    ),
}


def humanoid_description(robot: str) -> HumanoidDescription:
    """The :class:`HumanoidDescription` of ``robot`` (``ValueError`` naming the known humanoids)."""
    if robot not in HUMANOIDS:
        raise ValueError(f"robot: unknown humanoid {robot!r}; the humanoids are {sorted(HUMANOIDS)}")
    return HUMANOIDS[robot]


def _add_sole_frames(model: pin.Model, description: HumanoidDescription, contacts_per_foot: int) -> Tuple[str, ...]:
    names = []
    for side in SIDES:
        parent_frame = model.getFrameId(description.foot_link.format(side=side))
        frame = model.frames[parent_frame]
        points = {"sole": description.sole_centre} if contacts_per_foot == 1 else description.corners
        for label, (px, py) in points.items():
            name = f"{side}_{label}"
            placement = frame.placement * pin.SE3(np.eye(3), np.array([px, py, -description.sole_depth]))
            model.addFrame(pin.Frame(name, frame.parentJoint, parent_frame, placement, pin.FrameType.OP_FRAME))
            names.append(name)
    return tuple(names)


class Humanoid(MultibodyModel):
    """A humanoid of :data:`HUMANOIDS` with sole contacts: the Unitree G1 (``robot="g1"``, the default, 29 actuated
    joints: nq 36, nv 35; with the waist and the arms locked nq 19, nv 18, nu 12) or PAL's Talos (``robot="talos"``,
    32 actuated joints: nq 39, nv 38; with the waist, the arms and the head locked nq 19, nv 18, nu 12).

    ``contacts_per_foot`` is 1 (sole centre) or 4 (sole corners); the contact
    points are the kinematics bodies. ``mu`` is the foot friction coefficient.
    ``locked``: groups of the robot's :attr:`HumanoidDescription.lockable`
    welded at zero; ``knee``: the standing posture's knee bend (rad, module
    docstring); ``hip_roll``: its outward hip roll (rad, the stance widened with the soles flat, module docstring).
    """

    def __init__(
        self, contacts_per_foot: int = 1, mu: float = 1.0, kinematics_ori: Optional[str] = None, locked: Sequence[str] = (), knee: float = 0.0, robot: str = "g1", hip_roll: float = 0.0
    ) -> None:
        description = humanoid_description(robot)
        if contacts_per_foot not in (1, 4):
            raise ValueError(f"contacts_per_foot: expected 1 or 4, got {contacts_per_foot}")
        if kinematics_ori not in KINEMATICS_ORI:
            raise ValueError(f"kinematics_ori: expected one of {KINEMATICS_ORI}, got {kinematics_ori!r}")
        if kinematics_ori is not None and contacts_per_foot != 1:
            raise ValueError("kinematics_ori: foot orientations need contacts_per_foot=1")
        if mu <= 0:
            raise ValueError(f"mu: expected a positive friction coefficient, got {mu}")
        if isinstance(locked, str) or any(group not in description.lockable for group in locked):
            raise ValueError(f"locked: expected groups of {robot}'s {sorted(description.lockable)}, got {locked!r}")
        if not (np.isfinite(knee) and 0.0 <= knee <= MAX_KNEE_BEND):
            raise ValueError(f"knee: expected a bend in [0, {MAX_KNEE_BEND}] rad, got {knee!r}")
        if not (np.isfinite(hip_roll) and 0.0 <= hip_roll <= MAX_HIP_ROLL):
            raise ValueError(f"hip_roll: expected an outward roll in [0, {MAX_HIP_ROLL}] rad, got {hip_roll!r}")
        path = urdf_path(description.urdf)
        pin_model = load_pinocchio_model(path, floating=True)
        groups = tuple(group for group in description.lockable if group in locked)
        welded = tuple(joint for group in groups for joint in description.lockable[group])
        if welded:
            pin_model = lock_joints(pin_model, welded)
        contacts = _add_sole_frames(pin_model, description, contacts_per_foot)
        name = robot if not groups else robot + "-" + "-".join(f"{group}-locked" for group in groups)
        super().__init__(pin_model, kinematics_bodies=contacts, name=name, urdf_path=str(path), welded_joints=welded)
        #: the :class:`HumanoidDescription` the model was built from
        self.description = description
        #: radius (m) of the MuJoCo plant's contact spheres where the URDF's sole is a flat face (Talos), else None
        self.sole_contact_radius = description.contact_radius
        #: the side of the sole ("L", "R") of each contact point: the corners of a sole step together in a gait
        self.sole_sides = tuple(name.split("_")[0][0].upper() for name in contacts)
        self.knee = float(knee)
        self.hip_roll = float(hip_roll)
        self.mu = float(mu)
        self.contacts_per_foot = contacts_per_foot
        self.kinematics_ori = kinematics_ori

    def _kin(self, x: ca.SX) -> ca.SX:
        if self.kinematics_ori is None:
            return super()._kin(x)
        parts = []
        for body in self.kinematics_bodies:
            R, p = self.tree.frame_placement(x[: self.nq], body)
            quat = rot_to_quat(R)
            parts += [p, quat if self.kinematics_ori == "quaternion" else quat_to_axis_angle(quat)]
        return ca.vertcat(*parts)

    def init_state(self) -> np.ndarray:
        """Standing (all joints zero but the legs' pitch joints bent by ``knee`` and their roll joints turned outwards
        by ``hip_roll``, the ankles levelling the soles), level, soles on the ground (``z = 0``), at rest."""
        x = np.zeros(self.nx)
        x[3] = 1.0
        joints = [self.pin_model.names[j] for j in range(2, self.pin_model.njoints)]  # after the free flyer, in nominal order
        at = lambda joint: 7 + joints.index(joint)  # noqa: E731
        d = self.description
        for template, bend in ((d.hip_pitch, -0.5), (d.knee, 1.0), (d.ankle_pitch, -0.5)):
            for joint in d.joints(template):
                x[at(joint)] = bend * self.knee
        if self.hip_roll:
            for side, outward in zip(SIDES, (1.0, -1.0)):
                x[at(d.hip_roll.format(side=side))] = outward * self.hip_roll
                self._level_sole(x, d.foot_link.format(side=side), at(d.ankle_pitch.format(side=side)), at(d.ankle_roll.format(side=side)))
        x[2] = -float(np.min(self.contact_heights(x)))
        return x

    def _level_sole(self, x: np.ndarray, foot_link: str, pitch: int, roll: int) -> None:
        """Set the ankle's ``pitch`` and ``roll`` coordinates of ``x`` (indices) so that ``foot_link`` lies level in the
        pelvis's frame (the base level): fixed-point steps on its roll-pitch-yaw angles, whose roll and pitch the ankle's
        roll and pitch joints undo to first order."""
        for _ in range(50):
            rpy = pin.rpy.matrixToRpy(np.array(self.tree.frame_placement(x[: self.nq], foot_link)[0], dtype=float))
            if max(abs(rpy[0]), abs(rpy[1])) < 1e-13:
                return
            x[roll] -= rpy[0]
            x[pitch] -= rpy[1]
        raise RuntimeError(f"init_state: could not level {foot_link} (roll, pitch {rpy[0]:.2e}, {rpy[1]:.2e} rad left)")

    @property
    def leg_length(self) -> float:
        """Mean thigh + shank length (m: hip pitch to knee to ankle pitch joints, at zero): the length gaits scale by
        (:class:`trajopt.legged.scaling.GaitScale`)."""
        data = self.pin_model.createData()
        pin.forwardKinematics(self.pin_model, data, pin.neutral(self.pin_model))
        at = lambda joint: data.oMi[self.pin_model.getJointId(joint)].translation  # noqa: E731
        d = self.description
        legs = zip(d.joints(d.hip_pitch), d.joints(d.knee), d.joints(d.ankle_pitch))
        return float(np.mean([np.linalg.norm(at(knee) - at(hip)) + np.linalg.norm(at(ankle) - at(knee)) for hip, knee, ankle in legs]))

    def contact_heights(self, x: np.ndarray) -> np.ndarray:
        """World ``z`` of the contact points (nc,)."""
        q = np.asarray(x, dtype=float)[: self.nq]
        return np.array([float(self.tree.frame_placement(q, b)[1][2]) for b in self.kinematics_bodies])
