"""A rigid payload fixed to a robot's link: a changed mass distribution, as pinocchio models it.

A payload of mass ``m``, centre of mass ``c`` and rotational inertia ``I_c``
(about ``c``), both in a link's frame, is added to the inertia of the body
that link belongs to (pinocchio merges the links fixed to a joint into one
body): ``model.inertias[j] += jMl * Inertia(m, c, I_c)``, with ``jMl`` the
link frame's placement in the joint's frame. The robot's kinematics, limits
and names do not change; its total mass grows by ``m``.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import pinocchio as pin

from .inertia_check import body_links, inertia_problem


def add_payload(pin_model: pin.Model, link: str, mass: float, com: Optional[Any] = None, inertia: Optional[Any] = None) -> pin.Model:
    """A copy of ``pin_model`` carrying a payload on ``link`` (module docstring).

    ``mass`` (kg, finite, >= 0); ``com`` (3,) in the link's frame, default the
    centre of mass of the body the link belongs to (a load centred on it:
    the robot's centre of mass does not move for a payload on its base);
    ``inertia`` (3x3) about ``com`` in the link's frame, default zero (a point
    mass). Raises ``ValueError`` naming the link (with the model's links)
    when it is not a link of the model, and for a non-physical payload.
    """
    links = [f.name for f in pin_model.frames if f.type == pin.FrameType.BODY]
    if link not in links:
        raise ValueError(f"link: {link!r} is not a link of the model {pin_model.name!r}; its links: {links}")
    frame = pin_model.frames[pin_model.getFrameId(link, pin.FrameType.BODY)]
    joint_from_link = frame.placement
    if com is None:
        com = joint_from_link.actInv(pin_model.inertias[frame.parentJoint].lever)
    com = np.asarray(com, dtype=float).reshape(-1)
    rotational = np.zeros((3, 3)) if inertia is None else np.asarray(inertia, dtype=float)
    if com.shape != (3,) or not np.isfinite(com).all() or rotational.shape != (3, 3):
        raise ValueError(f"com, inertia: expected a finite (3,) centre of mass and a (3, 3) inertia, got shapes {com.shape} and {rotational.shape}")
    payload = pin.Inertia(float(mass), com, rotational)
    problem = inertia_problem(payload)
    if problem is not None or not np.allclose(rotational, rotational.T):
        raise ValueError(f"payload on {link!r}: not a physical body: {problem or 'its inertia is not symmetric'}")
    model = pin.Model(pin_model)
    model.inertias[frame.parentJoint] = model.inertias[frame.parentJoint] + joint_from_link.act(payload)
    return model


def base_link(pin_model: pin.Model) -> str:
    """The link the robot's root joint moves (the base of a floating-base robot, the first link of an arm)."""
    return body_links(pin_model, 1)[0]
