"""Passive joint torques the controller knows and adds to its commands, at the joint level.

A plan's torques drive a model without joint friction. A robot's joints
(and a MuJoCo model of them) have viscous damping ``d`` and dry friction
``f`` (MuJoCo's ``damping`` and ``frictionloss``, a URDF's ``<dynamics>``):
in swing, where the commanded torques are small, they take 2-4 N m of the
Go1's. :class:`PassiveCompensation` adds what they take,

    tau_c = d * qdot + f * tanh(qdot / v_s),

to the plan's torques at every plant step (the joint-level loop that applies
the plan's feedback law), ``v_s`` smoothing the sign of the velocity near
rest. Rotor armature is an inertia: it needs the joint accelerations, which
the joint-level loop does not have, and is left to the feedback.
"""
from __future__ import annotations

from typing import Any

import numpy as np

#: Joint velocity (rad/s) over which the dry-friction compensation reaches its full value.
FRICTION_SMOOTHING = 0.01


class PassiveCompensation:
    """``tau_c(x)`` (nu,) of ``robot`` (the controller's multibody model) with per-joint ``damping`` and ``frictionloss`` (module docstring)."""

    def __init__(self, robot: Any, damping: Any, frictionloss: Any, smoothing: float = FRICTION_SMOOTHING) -> None:
        n = len(robot.joint_names)
        self.damping = np.broadcast_to(np.asarray(damping, dtype=float), (n,)).copy()
        self.frictionloss = np.broadcast_to(np.asarray(frictionloss, dtype=float), (n,)).copy()
        if not (np.isfinite(self.damping).all() and np.isfinite(self.frictionloss).all() and (self.damping >= 0).all() and (self.frictionloss >= 0).all()):
            raise ValueError("damping, frictionloss: expected finite values >= 0 per joint")
        if not (np.isfinite(smoothing) and smoothing > 0):
            raise ValueError(f"smoothing: expected rad/s > 0, got {smoothing!r}")
        self.smoothing = float(smoothing)
        self.velocities = slice(robot.nq + (6 if robot.is_floating else 0), robot.nq + robot.nv)

    @classmethod
    def from_urdf(cls, robot: Any) -> "PassiveCompensation":
        """The damping and friction of the robot's URDF ``<dynamics>`` (pinocchio's ``damping`` and ``friction`` per
        velocity), what the MuJoCo plant built from the same URDF simulates (:class:`~trajopt.mujoco.plant.MujocoPlant`'s
        realistic contacts keep them)."""
        first = 6 if robot.is_floating else 0
        return cls(robot, np.asarray(robot.pin_model.damping)[first:], np.asarray(robot.pin_model.friction)[first:])

    @classmethod
    def of_plant(cls, plant: Any, robot: Any) -> "PassiveCompensation":
        """What ``plant`` simulates: a foreign MJCF's damping and friction loss (its ``passive()``,
        :class:`~trajopt.mujoco.foreign.ForeignPlant`), else the robot's URDF ones (:meth:`from_urdf`)."""
        if hasattr(plant, "passive"):
            passive = plant.passive()
            return cls(robot, passive["damping"], passive["frictionloss"])
        return cls.from_urdf(robot)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        qdot = np.asarray(x, dtype=float)[self.velocities]
        return self.damping * qdot + self.frictionloss * np.tanh(qdot / self.smoothing)
