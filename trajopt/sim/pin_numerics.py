"""Pinocchio's numeric algorithms in our configuration convention.

The simulators, controllers, collision checks and inverse kinematics of
:mod:`trajopt.sim` and :mod:`trajopt.ik` evaluate dynamics and kinematics with
pinocchio in double precision (RNEA, CRBA, ABA, frame placements and
Jacobians): one call costs microseconds, which the step-by-step loops of a
simulator need. Our configurations differ from pinocchio's only in the
quaternions (docs/conventions.md): we store ``[qw, qx, qy, qz]``, pinocchio
``[qx, qy, qz, qw]``. :class:`PinNumerics` converts at the boundary, so every
method takes and returns OUR configurations; velocities, accelerations and
generalized forces (size ``nv``) are the same in both (free-flyer:
``[v_body, w_body]``).

Accepted models: a :class:`models.multibody_model.MultibodyModel` (its
``pin_model``) or a ``pinocchio.Model``. Quaternions appear in free-flyer
(``q[i+3:i+7]``) and spherical joints (``q[i:i+4]``).
"""
from __future__ import annotations

from typing import Any, Tuple

import numpy as np
import pinocchio as pin

from lie import _backend as B
from lie import check_unit_quaternion

#: pinocchio joint kinds holding a quaternion, and the quaternion's offset in the joint's configuration.
QUATERNION_OFFSET = {"JointModelFreeFlyer": 3, "JointModelSpherical": 0}
#: Frame references accepted by :meth:`PinNumerics.frame_jacobian`.
REFERENCES = {"LOCAL": pin.LOCAL, "WORLD": pin.WORLD, "LOCAL_WORLD_ALIGNED": pin.LOCAL_WORLD_ALIGNED}


def as_pin_model(model: Any) -> pin.Model:
    """The ``pinocchio.Model`` behind ``model`` (a MultibodyModel or a pinocchio model)."""
    if isinstance(model, pin.Model):
        return model
    pin_model = getattr(model, "pin_model", None)
    if isinstance(pin_model, pin.Model):
        return pin_model
    raise ValueError(f"model: expected a pinocchio.Model or a model with a pin_model attribute, got {type(model).__name__}")


def quaternion_starts(pin_model: pin.Model) -> Tuple[int, ...]:
    """Indices in ``q`` where each quaternion of the model begins (free-flyer and spherical joints)."""
    starts = []
    for joint in pin_model.joints[1:]:
        offset = QUATERNION_OFFSET.get(joint.shortname())
        if offset is not None:
            starts.append(joint.idx_q + offset)
    return tuple(starts)


class PinNumerics:
    """Numeric dynamics and kinematics of one model through pinocchio, in our convention.

    Holds the ``pinocchio.Model``, one ``pinocchio.Data`` workspace and the
    quaternion locations. Not thread-safe (the workspace is shared).
    """

    def __init__(self, model: Any) -> None:
        self.pin_model = as_pin_model(model)
        self.data = self.pin_model.createData()
        self.nq, self.nv = self.pin_model.nq, self.pin_model.nv
        self.quat_starts = quaternion_starts(self.pin_model)

    # ----------------------------------------------------------- conversion
    def check_q(self, q: Any, name: str = "q") -> np.ndarray:
        """``q`` as a float vector of size ``nq``; raises ``ValueError`` for bad shape, NaN or non-unit quaternions."""
        q = B.vector(q, self.nq, name)
        for i in self.quat_starts:
            check_unit_quaternion(q[i : i + 4], f"{name}[{i}:{i + 4}] (quaternion)")
        return q

    def check_v(self, v: Any, name: str = "v") -> np.ndarray:
        """``v`` as a float vector of size ``nv`` (``ValueError`` for bad shape or NaN)."""
        return B.vector(v, self.nv, name)

    def split_state(self, x: Any, name: str = "x") -> Tuple[np.ndarray, np.ndarray]:
        """``(q, v)`` of a state ``x = [q; v]`` (nq + nv,), validated."""
        x = B.vector(x, self.nq + self.nv, name)
        return self.check_q(x[: self.nq], f"{name}[:{self.nq}]"), x[self.nq :]

    def to_pinocchio(self, q: np.ndarray) -> np.ndarray:
        """Pinocchio's configuration (quaternions ``[qx, qy, qz, qw]``) of our ``q`` (no validation)."""
        out = np.array(q, dtype=float)
        for i in self.quat_starts:
            out[i : i + 3], out[i + 3] = q[i + 1 : i + 4], q[i]
        return out

    def from_pinocchio(self, q_pin: np.ndarray) -> np.ndarray:
        """Our configuration (quaternions ``[qw, qx, qy, qz]``) of pinocchio's ``q_pin``."""
        out = np.array(q_pin, dtype=float)
        for i in self.quat_starts:
            out[i], out[i + 1 : i + 4] = q_pin[i + 3], q_pin[i : i + 3]
        return out

    # ------------------------------------------------------------- dynamics
    def mass(self, q: np.ndarray) -> np.ndarray:
        """Mass matrix ``M(q)`` (nv x nv), symmetric."""
        M = pin.crba(self.pin_model, self.data, self.to_pinocchio(q))
        return np.triu(M) + np.triu(M, 1).T

    def bias(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Bias ``C(q, v)`` (nv,): Coriolis, centrifugal and gravity generalized forces."""
        return pin.nonLinearEffects(self.pin_model, self.data, self.to_pinocchio(q), v).copy()

    def gravity(self, q: np.ndarray) -> np.ndarray:
        """Generalized gravity force ``g(q) = C(q, 0)`` (nv,), the torque that holds the robot still."""
        return pin.computeGeneralizedGravity(self.pin_model, self.data, self.to_pinocchio(q)).copy()

    def rnea(self, q: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
        """Inverse dynamics ``tau = M(q) a + C(q, v)`` (nv,)."""
        return pin.rnea(self.pin_model, self.data, self.to_pinocchio(q), v, a).copy()

    def aba(self, q: np.ndarray, v: np.ndarray, tau: np.ndarray) -> np.ndarray:
        """Forward dynamics ``vdot = M(q)^-1 (tau - C(q, v))`` (nv,)."""
        return pin.aba(self.pin_model, self.data, self.to_pinocchio(q), v, tau).copy()

    def kinetic_energy(self, q: np.ndarray, v: np.ndarray) -> float:
        """``0.5 v^T M(q) v`` (J)."""
        return float(pin.computeKineticEnergy(self.pin_model, self.data, self.to_pinocchio(q), v))

    def potential_energy(self, q: np.ndarray) -> float:
        """Gravitational potential energy ``-sum_i m_i g . c_i(q)`` (J), zero at the world origin."""
        return float(pin.computePotentialEnergy(self.pin_model, self.data, self.to_pinocchio(q)))

    def energy(self, q: np.ndarray, v: np.ndarray) -> float:
        """Total mechanical energy, kinetic plus potential (J)."""
        return self.kinetic_energy(q, v) + self.potential_energy(q)

    # ----------------------------------------------------------- kinematics
    def frame_id(self, frame: str, name: str = "frame") -> int:
        """Index of the frame called ``frame``; ``ValueError`` naming ``name`` if there is none."""
        if not isinstance(frame, str) or not self.pin_model.existFrame(frame):
            raise ValueError(f"{name}: no frame {frame!r} in model {self.pin_model.name!r}")
        return self.pin_model.getFrameId(frame)

    def update_kinematics(self, q: np.ndarray, v: np.ndarray | None = None) -> None:
        """Update the workspace for ``q`` (and ``v``): frame placements, joint Jacobians and,
        with ``v``, frame velocities and drift accelerations at zero joint acceleration.

        The frame accessors below read this state; call this first.
        """
        model, data = self.pin_model, self.data
        if v is None:
            pin.forwardKinematics(model, data, self.to_pinocchio(q))
        else:
            pin.forwardKinematics(model, data, self.to_pinocchio(q), v, np.zeros(self.nv))
        pin.updateFramePlacements(model, data)
        pin.computeJointJacobians(model, data)

    def frame_placement(self, frame_id: int) -> np.ndarray:
        """World placement (4x4 homogeneous, frame to world) of a frame."""
        return self.data.oMf[frame_id].homogeneous.copy()

    def frame_jacobian(self, frame_id: int, reference: str = "LOCAL_WORLD_ALIGNED") -> np.ndarray:
        """Frame Jacobian (6 x nv, ``[linear; angular]``) mapping ``v`` to the frame's twist.

        ``reference``: ``"LOCAL"`` (frame axes, frame origin), ``"WORLD"`` or
        ``"LOCAL_WORLD_ALIGNED"`` (world axes, frame origin).
        """
        if reference not in REFERENCES:
            raise ValueError(f"reference: expected one of {sorted(REFERENCES)}, got {reference!r}")
        return pin.getFrameJacobian(self.pin_model, self.data, frame_id, REFERENCES[reference]).copy()

    def frame_velocity(self, frame_id: int) -> np.ndarray:
        """Twist ``[v_o; w]`` (6,) of a frame: origin velocity and angular velocity, world axes."""
        return pin.getFrameVelocity(self.pin_model, self.data, frame_id, pin.LOCAL_WORLD_ALIGNED).vector.copy()

    def frame_drift(self, frame_id: int) -> np.ndarray:
        """Classical acceleration ``[a_o; alpha]`` (6,) of a frame at ``vdot = 0`` (the ``Jdot v`` term), world axes."""
        return pin.getFrameClassicalAcceleration(self.pin_model, self.data, frame_id, pin.LOCAL_WORLD_ALIGNED).vector.copy()
