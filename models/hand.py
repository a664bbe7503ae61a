"""A four-finger hand made of capsules, built in Python (pinocchio's "snap your fingers" robot).

Geometry (meters, kilograms; :class:`HandDimensions` holds every number):

- The palm is fixed to the world; its frame is the world frame. Fingers point
  along +x, the palm spans y, the back of the hand faces +z and the palm side
  -z (gravity, -z, pulls the fingers closed: the hand is held palm down).
- The palm is two capsules of radius 0.015 whose segments run along y over
  ``|y| <= 0.03``: ``palm_distal`` at ``x = -0.012`` (the knuckles) and
  ``palm_proximal`` at ``x = -0.042`` (the heel). It has no inertia (it is
  fixed).
- Four fingers at ``y = +0.03, +0.01, -0.01, -0.03`` (``finger1`` ..
  ``finger4``), each with three phalanges of lengths 0.040, 0.030 and 0.025
  and radius 0.008, the first joint at ``x = 0``. Every finger joint is a
  revolute joint about +y; a positive angle curls the finger toward the palm
  side (-z). Joint limits ``[-0.5, 2.0]`` rad, effort 1 N m, velocity 20 rad/s.
- Each phalanx is a solid cylinder of density 1000 kg/m^3 (mass
  ``rho pi r^2 L``, about 8 g for the first one), its center of mass at the
  middle of its segment.

With the fingers curled uniformly, the distal phalanx reaches the underside of
``palm_proximal`` at about 1.45 rad per joint: the hand closes on itself.

Names: joints ``finger{i}_{j}`` (i = 1..4, j = 1..3, proximal to distal), with
a frame of the same name; fingertip frames ``finger{i}_tip`` (the
kinematics bodies). Collision geometry is a ``pinocchio.GeometryModel`` of
``coal.Capsule`` objects named like the frames they follow (``palm_distal``,
``palm_proximal``, ``finger{i}_{j}``); its collision pairs are the distal and
middle phalanges against both palm capsules and the distal phalanx against
the proximal one of the same finger (20 pairs).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple

import coal
import numpy as np
import pinocchio as pin

from lie import _backend as B

from .multibody_model import MultibodyModel


@dataclass(frozen=True)
class HandDimensions:
    """Dimensions of :func:`hand_model`'s palm and fingers (m) and their masses (kg)."""

    palm_half_width: float = 0.03
    palm_radius: float = 0.015
    palm_x: Tuple[float, float] = (-0.012, -0.042)
    finger_y: Tuple[float, ...] = (0.03, 0.01, -0.01, -0.03)
    phalanx_lengths: Tuple[float, float, float] = (0.040, 0.030, 0.025)
    phalanx_radius: float = 0.008
    density: float = 1000.0
    joint_limits: Tuple[float, float] = (-0.5, 2.0)
    effort_limit: float = 1.0
    velocity_limit: float = 20.0

    def __post_init__(self) -> None:
        for name in ("palm_half_width", "palm_radius", "phalanx_radius", "density", "effort_limit", "velocity_limit"):
            B.real(getattr(self, name), name, lower=0.0, strict=True)
        for name, size in (("palm_x", 2), ("phalanx_lengths", 3), ("joint_limits", 2)):
            B.vector(getattr(self, name), size, name)
        if min(self.phalanx_lengths) <= 0:
            raise ValueError(f"phalanx_lengths: expected positive lengths, got {self.phalanx_lengths}")
        if not self.joint_limits[0] < self.joint_limits[1]:
            raise ValueError(f"joint_limits: expected lower < upper, got {self.joint_limits}")
        if not B.vector(self.finger_y, None, "finger_y").size:
            raise ValueError("finger_y: expected at least one finger")


#: RGBA colours of the capsules (``GeometryObject.meshColor``, what viewers draw).
PALM_COLOR = (0.62, 0.50, 0.42, 1.0)
FINGER_COLOR = (0.86, 0.74, 0.62, 1.0)


def _colored(obj: pin.GeometryObject, color: Tuple[float, float, float, float]) -> pin.GeometryObject:
    obj.meshColor = np.array(color)
    return obj


def _rotation_z_to(axis: str) -> np.ndarray:
    """Rotation taking a coal capsule's axis (local z) onto the x or y axis."""
    return pin.utils.rotate("y", np.pi / 2) if axis == "x" else pin.utils.rotate("x", -np.pi / 2)


def _phalanx_inertia(length: float, radius: float, density: float) -> pin.Inertia:
    """Solid cylinder along +x from the joint, center of mass at ``length / 2``."""
    mass = density * np.pi * radius**2 * length
    axial = 0.5 * mass * radius**2
    transverse = mass * (3 * radius**2 + length**2) / 12
    return pin.Inertia(mass, np.array([length / 2, 0.0, 0.0]), np.diag([axial, transverse, transverse]))


def hand_model(dims: HandDimensions = HandDimensions()) -> Tuple[pin.Model, pin.GeometryModel]:
    """The hand's ``pinocchio.Model`` (nq = nv = 12) and its capsule ``GeometryModel`` with collision pairs."""
    model = pin.Model()
    model.name = "hand"
    geom = pin.GeometryModel()
    along_y = pin.SE3(_rotation_z_to("y"), np.zeros(3))
    palm = []
    for name, x in zip(("palm_distal", "palm_proximal"), dims.palm_x):
        placement = pin.SE3(along_y.rotation, np.array([x, 0.0, 0.0]))
        shape = coal.Capsule(dims.palm_radius, 2 * dims.palm_half_width)
        palm.append(geom.addGeometryObject(_colored(pin.GeometryObject(name, 0, 0, placement, shape), PALM_COLOR)))
    lo, hi = dims.joint_limits
    limits = [np.array([v]) for v in (dims.effort_limit, dims.velocity_limit, lo, hi)]
    tip_length = dims.phalanx_lengths[-1]
    for i, y in enumerate(dims.finger_y, start=1):
        parent, offset = 0, np.array([0.0, y, 0.0])
        phalanges = []
        for j, length in enumerate(dims.phalanx_lengths, start=1):
            name = f"finger{i}_{j}"
            jid = model.addJoint(parent, pin.JointModelRY(), pin.SE3(np.eye(3), offset), name, *limits)
            model.appendBodyToJoint(jid, _phalanx_inertia(length, dims.phalanx_radius, dims.density), pin.SE3.Identity())
            fid = model.addJointFrame(jid)
            placement = pin.SE3(_rotation_z_to("x"), np.array([length / 2, 0.0, 0.0]))
            shape = coal.Capsule(dims.phalanx_radius, length)
            phalanges.append(geom.addGeometryObject(_colored(pin.GeometryObject(name, jid, fid, placement, shape), FINGER_COLOR)))
            parent, offset = jid, np.array([length, 0.0, 0.0])
        tip = pin.SE3(np.eye(3), np.array([tip_length, 0.0, 0.0]))
        model.addFrame(pin.Frame(f"finger{i}_tip", parent, model.getFrameId(f"finger{i}_3"), tip, pin.FrameType.OP_FRAME))
        proximal, middle, distal = phalanges
        for link in (distal, middle):
            for p in palm:
                geom.addCollisionPair(pin.CollisionPair(p, link))
        geom.addCollisionPair(pin.CollisionPair(proximal, distal))
    return model, geom


class Hand(MultibodyModel):
    """The capsule hand as a :class:`MultibodyModel` (fixed base, nq = nv = nu = 12).

    ``geometry_model`` holds the capsules and collision pairs; the kinematics
    bodies are the four fingertips. ``dims`` are the :class:`HandDimensions` used.
    """

    def __init__(self, dims: HandDimensions = HandDimensions()) -> None:
        if not isinstance(dims, HandDimensions):
            raise TypeError(f"dims: expected a HandDimensions, got {type(dims).__name__}")
        pin_model, geometry = hand_model(dims)
        tips = [f"finger{i}_tip" for i in range(1, len(dims.finger_y) + 1)]
        super().__init__(pin_model, kinematics_bodies=tips, name="hand")
        self.dims = dims
        self.geometry_model = geometry

    def curl(self, angle: float | np.ndarray) -> np.ndarray:
        """Configuration (nq,) with every finger joint at ``angle`` (scalar, or (3,) per phalanx)."""
        angles = B.numeric_array(angle, "angle")
        if angles.shape not in ((), (1,), (3,)):
            raise ValueError(f"angle: expected a scalar or shape (3,), got {angles.shape}")
        per_finger = np.broadcast_to(B.check_finite(angles, "angle"), (3,))
        return np.tile(per_finger, len(self.dims.finger_y))
