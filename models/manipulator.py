"""Pinocchio's sample 6-DOF manipulator (``buildSampleModelManipulator``) as a MultibodyModel.

A fixed-base shoulder-elbow-wrist arm: joints ``shoulder1`` (about x),
``shoulder2`` (y), ``shoulder3`` (z), ``elbow`` (y, 1 m above the shoulder),
``wrist1`` (x, 1 m above the elbow), ``wrist2`` (y), named ``<name>_joint``;
joint limits +-3.14 rad, effort limits 10 N m. The end effector is joint 6,
frame ``wrist2_joint`` (the frame of pinocchio's CLIK example target), with
``effector_body`` at its origin. Its collision geometry is pinocchio's sample
geometry model: spheres at the shoulder, elbow and wrist and capsules along
the upper arm, lower arm and effector (radius 0.05 m), no collision pairs.
"""
from __future__ import annotations

import pinocchio as pin

from .multibody_model import MultibodyModel

#: Frame of joint 6, the end effector of pinocchio's CLIK example.
END_EFFECTOR = "wrist2_joint"


class Manipulator(MultibodyModel):
    """The sample manipulator (nq = nv = nu = 6); ``geometry_model`` is its capsule/sphere geometry."""

    def __init__(self) -> None:
        pin_model = pin.buildSampleModelManipulator()
        super().__init__(pin_model, kinematics_bodies=[END_EFFECTOR], name="manipulator")
        self.geometry_model = pin.buildSampleGeometryModelManipulator(pin_model)
        self.end_effector = END_EFFECTOR
