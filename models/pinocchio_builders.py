"""Small pinocchio models built in Python (no URDF).

Each function returns a ``pinocchio.Model`` with gravity ``(0, 0, -9.81)``. The
point-mass systems mirror the closed-form models of :mod:`models.planar_chain`
(same coordinates: prismatic along +y, revolute about +x, ``theta = 0`` up, masses
as points at the link tips), so both must give the same dynamics.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pinocchio as pin

from lie import _backend as B


def _point_mass(mass: float, position: Sequence[float]) -> pin.Inertia:
    return pin.Inertia(B.real(mass, "mass", lower=0.0, strict=True), B.vector(position, 3, "length"), np.zeros((3, 3)))


def _principal_inertia(inertia: Sequence[float]) -> np.ndarray:
    """``diag(inertia)`` for three positive principal moments (``ValueError`` naming ``inertia`` otherwise)."""
    moments = B.vector(inertia, 3, "inertia")
    if (moments <= 0).any():
        raise ValueError(f"inertia: expected three positive principal moments, got {moments.tolist()}")
    return np.diag(moments)


def _add_link(model: pin.Model, parent: int, joint: pin.JointModel, name: str, offset: Sequence[float], inertia: pin.Inertia) -> int:
    placement = pin.SE3(np.eye(3), np.asarray(offset, dtype=float))
    jid = model.addJoint(parent, joint, placement, name)
    model.appendBodyToJoint(jid, inertia, pin.SE3.Identity())
    model.addFrame(pin.Frame(f"{name}_body", jid, model.getFrameId(name), pin.SE3.Identity(), pin.FrameType.BODY))
    return jid


def _tip_frame(model: pin.Model, jid: int, name: str, length: float) -> None:
    model.addFrame(pin.Frame(name, jid, 0, pin.SE3(np.eye(3), np.array([0.0, 0.0, length])), pin.FrameType.OP_FRAME))


def pendulum_model(mass: float = 1.0, length: float = 1.0) -> pin.Model:
    """Revolute joint about +x at the origin, a point mass at ``(0, 0, length)`` in the link frame."""
    model = pin.Model()
    model.name = "pendulum"
    jid = _add_link(model, 0, pin.JointModelRX(), "theta", [0, 0, 0], _point_mass(mass, [0, 0, length]))
    _tip_frame(model, jid, "tip", length)
    return model


def double_pendulum_model(masses: Sequence[float] = (1.0, 1.0), lengths: Sequence[float] = (1.0, 1.0)) -> pin.Model:
    """Two revolute joints about +x; the second sits at the first link's tip (relative angle)."""
    model = pin.Model()
    model.name = "double_pendulum"
    j1 = _add_link(model, 0, pin.JointModelRX(), "theta1", [0, 0, 0], _point_mass(masses[0], [0, 0, lengths[0]]))
    j2 = _add_link(model, j1, pin.JointModelRX(), "theta2", [0, 0, lengths[0]], _point_mass(masses[1], [0, 0, lengths[1]]))
    _tip_frame(model, j2, "tip", lengths[1])
    return model


def cartpole_model(cart_mass: float = 1.0, pole_mass: float = 1.0, length: float = 1.0) -> pin.Model:
    """Prismatic cart along +y, then a revolute pole about +x with its mass at the tip."""
    model = pin.Model()
    model.name = "cartpole"
    cart = _add_link(model, 0, pin.JointModelPY(), "cart", [0, 0, 0], _point_mass(cart_mass, [0, 0, 0]))
    pole = _add_link(model, cart, pin.JointModelRX(), "pole", [0, 0, 0], _point_mass(pole_mass, [0, 0, length]))
    _tip_frame(model, pole, "tip", length)
    return model


def double_cartpole_model(masses: Sequence[float] = (1.0, 1.0, 1.0), lengths: Sequence[float] = (1.0, 1.0)) -> pin.Model:
    """Cartpole with a second pole (relative angle) at the first pole's tip."""
    model = pin.Model()
    model.name = "double_cartpole"
    cart = _add_link(model, 0, pin.JointModelPY(), "cart", [0, 0, 0], _point_mass(masses[0], [0, 0, 0]))
    p1 = _add_link(model, cart, pin.JointModelRX(), "pole1", [0, 0, 0], _point_mass(masses[1], [0, 0, lengths[0]]))
    p2 = _add_link(model, p1, pin.JointModelRX(), "pole2", [0, 0, lengths[0]], _point_mass(masses[2], [0, 0, lengths[1]]))
    _tip_frame(model, p2, "tip", lengths[1])
    return model


def floating_body_model(mass: float = 1.0, inertia: Sequence[float] = (1.0, 1.0, 1.0)) -> pin.Model:
    """A single rigid body on a free-flyer joint, center of mass at the joint origin."""
    model = pin.Model()
    model.name = "floating_body"
    body = pin.Inertia(B.real(mass, "mass", lower=0.0, strict=True), np.zeros(3), _principal_inertia(inertia))
    _add_link(model, 0, pin.JointModelFreeFlyer(), "root", [0, 0, 0], body)
    return model


def quadrotor_body_model(mass: float = 1.0, inertia: Sequence[float] = (0.0046, 0.0046, 0.008)) -> pin.Model:
    """A quadrotor's body as a multibody model: one free-flyer body (rotor forces are external)."""
    model = floating_body_model(mass, inertia)
    model.name = "quadrotor_body"
    return model
