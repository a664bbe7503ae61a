"""Unitree G1 humanoid (29 DoF) as a floating-base multibody model with sole contacts.

The stand-in for PinnZoo's Nadia. The G1 URDF models each foot's sole by four
small collision spheres (radius 5 mm) in the ankle-roll link frame, at
``x in {-0.05, 0.12}``, ``y = +-0.025`` (heel) / ``+-0.03`` (toe), ``z = -0.03``.
We add contact frames at the bottom of those spheres (``z = -0.035``): with
``contacts_per_foot=4`` the four corners ``{left,right}_{heel,toe}_{left,right}``,
with ``contacts_per_foot=1`` one point ``{left,right}_sole`` at the middle of the
sole, ``(0.035, 0, -0.035)``.

With one contact per foot, ``kinematics_ori`` adds each foot's orientation to
:meth:`kinematics` (as PinnZoo's Nadia): per foot ``[p (3); q (4)]`` with the
unit quaternion of the sole frame (``"quaternion"``, ``qw >= 0``) or ``[p (3);
phi (3)]`` with its axis-angle (``"axis_angle"``); :meth:`kinematics_jacobian`
and :meth:`kinematics_hvp` follow. The velocity and force functions stay those
of the contact POINTS (3 rows per foot), since contact forces are 3D.

``locked`` welds joint groups of :data:`LOCKABLE` at zero (the waist, the
arms; :func:`models.locked_joints.lock_joints`): a model of the legs alone
(nv 18 with both locked) for controllers whose tick must stay short. Its
MuJoCo plant welds the same joints (:func:`trajopt.mujoco.model.build_model`).
``knee`` bends the standing posture of :meth:`init_state`: knee ``knee``, hip
and ankle pitch ``-knee / 2`` each, so that the soles stay parallel to the
pelvis.
"""
from __future__ import annotations

from typing import Dict, Optional, Sequence, Tuple

import casadi as ca
import numpy as np
import pinocchio as pin

from lie import quat_to_axis_angle, rot_to_quat

from .locked_joints import lock_joints
from .multibody_model import MultibodyModel
from .robot_data import load_pinocchio_model, urdf_path

#: Orientation parameterizations :class:`Humanoid` can add to its kinematics.
KINEMATICS_ORI = (None, "quaternion", "axis_angle")
#: Height of the contact points below the ankle-roll joint (sphere centre 0.03 + radius 0.005).
SOLE_DEPTH = 0.035
_CORNERS = {"heel_left": (-0.05, 0.025), "heel_right": (-0.05, -0.025), "toe_left": (0.12, 0.03), "toe_right": (0.12, -0.03)}
_SOLE_CENTRE = (0.035, 0.0)
_ARM_JOINTS = ("shoulder_pitch", "shoulder_roll", "shoulder_yaw", "elbow", "wrist_roll", "wrist_pitch", "wrist_yaw")
#: Joint groups :class:`Humanoid` can lock at zero (``locked``).
LOCKABLE: Dict[str, Tuple[str, ...]] = {
    "waist": ("waist_yaw_joint", "waist_roll_joint", "waist_pitch_joint"),
    "arms": tuple(f"{side}_{joint}_joint" for side in ("left", "right") for joint in _ARM_JOINTS),
}
#: The largest knee bend (rad) of the standing posture: the ankles' pitch limit is -0.87 rad.
MAX_KNEE_BEND = 1.5


def _add_sole_frames(model: pin.Model, contacts_per_foot: int) -> Tuple[str, ...]:
    names = []
    for side in ("left", "right"):
        parent_frame = model.getFrameId(f"{side}_ankle_roll_link")
        frame = model.frames[parent_frame]
        points = {"sole": _SOLE_CENTRE} if contacts_per_foot == 1 else _CORNERS
        for label, (px, py) in points.items():
            name = f"{side}_{label}"
            placement = frame.placement * pin.SE3(np.eye(3), np.array([px, py, -SOLE_DEPTH]))
            model.addFrame(pin.Frame(name, frame.parentJoint, parent_frame, placement, pin.FrameType.OP_FRAME))
            names.append(name)
    return tuple(names)


class Humanoid(MultibodyModel):
    """Unitree G1 (29 actuated joints): nq 36, nv 35, nu 29; with the waist and the arms locked, nq 19, nv 18, nu 12.

    ``contacts_per_foot`` is 1 (sole centre) or 4 (sole corners); the contact
    points are the kinematics bodies. ``mu`` is the foot friction coefficient.
    ``locked``: groups of :data:`LOCKABLE` welded at zero; ``knee``: the
    standing posture's knee bend (rad, module docstring).
    """

    def __init__(self, contacts_per_foot: int = 1, mu: float = 1.0, kinematics_ori: Optional[str] = None, locked: Sequence[str] = (), knee: float = 0.0) -> None:
        if contacts_per_foot not in (1, 4):
            raise ValueError(f"contacts_per_foot: expected 1 or 4, got {contacts_per_foot}")
        if kinematics_ori not in KINEMATICS_ORI:
            raise ValueError(f"kinematics_ori: expected one of {KINEMATICS_ORI}, got {kinematics_ori!r}")
        if kinematics_ori is not None and contacts_per_foot != 1:
            raise ValueError("kinematics_ori: foot orientations need contacts_per_foot=1")
        if mu <= 0:
            raise ValueError(f"mu: expected a positive friction coefficient, got {mu}")
        if isinstance(locked, str) or any(group not in LOCKABLE for group in locked):
            raise ValueError(f"locked: expected groups of {sorted(LOCKABLE)}, got {locked!r}")
        if not (np.isfinite(knee) and 0.0 <= knee <= MAX_KNEE_BEND):
            raise ValueError(f"knee: expected a bend in [0, {MAX_KNEE_BEND}] rad, got {knee!r}")
        path = urdf_path("g1")
        pin_model = load_pinocchio_model(path, floating=True)
        groups = tuple(group for group in LOCKABLE if group in locked)
        welded = tuple(joint for group in groups for joint in LOCKABLE[group])
        if welded:
            pin_model = lock_joints(pin_model, welded)
        contacts = _add_sole_frames(pin_model, contacts_per_foot)
        name = "g1" if not groups else "g1-" + "-".join(f"{group}-locked" for group in groups)
        super().__init__(pin_model, kinematics_bodies=contacts, name=name, urdf_path=str(path), welded_joints=welded)
        #: the side of the sole ("L", "R") of each contact point: the corners of a sole step together in a gait
        self.sole_sides = tuple(name.split("_")[0][0].upper() for name in contacts)
        self.knee = float(knee)
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
        """Standing (all joints zero but the legs' pitch joints bent by ``knee``), level, soles on the ground
        (``z = 0``), at rest."""
        x = np.zeros(self.nx)
        x[3] = 1.0
        joints = [self.pin_model.names[j] for j in range(2, self.pin_model.njoints)]  # after the free flyer, in nominal order
        for side in ("left", "right"):
            for joint, bend in (("hip_pitch", -0.5), ("knee", 1.0), ("ankle_pitch", -0.5)):
                x[7 + joints.index(f"{side}_{joint}_joint")] = bend * self.knee
        x[2] = -float(np.min(self.contact_heights(x)))
        return x

    @property
    def leg_length(self) -> float:
        """Mean thigh + shank length (m: hip pitch to knee to ankle pitch joints, at zero): the length gaits scale by
        (:class:`trajopt.legged.scaling.GaitScale`)."""
        data = self.pin_model.createData()
        pin.forwardKinematics(self.pin_model, data, pin.neutral(self.pin_model))
        at = lambda joint: data.oMi[self.pin_model.getJointId(joint)].translation  # noqa: E731
        return float(np.mean([np.linalg.norm(at(f"{s}_knee_joint") - at(f"{s}_hip_pitch_joint")) + np.linalg.norm(at(f"{s}_ankle_pitch_joint") - at(f"{s}_knee_joint")) for s in ("left", "right")]))

    def contact_heights(self, x: np.ndarray) -> np.ndarray:
        """World ``z`` of the contact points (nc,)."""
        q = np.asarray(x, dtype=float)[: self.nq]
        return np.array([float(self.tree.frame_placement(q, b)[1][2]) for b in self.kinematics_bodies])
