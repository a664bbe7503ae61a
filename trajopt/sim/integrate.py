"""Integration on the configuration manifold: ``q (+) v dt`` with pinocchio's semantics.

``integrate(model, q, v, dt)`` moves each joint's configuration along the
constant tangent velocity ``v`` for the time ``dt``, as ``pinocchio.integrate(
model, q, v * dt)`` does, but in our configuration convention (quaternions
``[qw, qx, qy, qz]``, docs/conventions.md). Per joint, with ``nu = v_joint dt``:

- free-flyer ``[p, quat]`` with body twist ``nu = [v; w]``: the SE(3)
  exponential, ``(R+, p+) = (R, p) exp6(nu)``, i.e. ``p+ = p + R Jl(w) v``
  (``Jl`` the left Jacobian of SO(3)) and ``quat+ = quat * exp(w)``;
- spherical ``quat``: ``quat+ = quat * exp(w)`` (body angular velocity);
- unbounded revolute ``[cos th, sin th]``: ``th+ = th + nu``;
- revolute, prismatic, translation (vector-space joints): ``q+ = q + nu``.

Note that :meth:`models.multibody_model.MultibodyModel.apply_dx` composes the
base translation and rotation separately (PinnZoo's chart); the two agree to
first order in ``nu`` only.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from lie import _backend as B
from lie import axis_angle_to_quat, check_unit_quaternion, exp6, quat_mult, quat_to_rot

from .pin_numerics import as_pin_model, quaternion_starts

#: Joints whose configuration is a vector added to (``q + v dt``).
VECTOR_JOINTS = frozenset(
    [f"JointModel{k}{a}" for k in ("R", "P") for a in "XYZ"]
    + ["JointModelRevoluteUnaligned", "JointModelPrismaticUnaligned", "JointModelTranslation"]
)
#: Unbounded revolute joints, configuration ``[cos, sin]``.
UNBOUNDED_JOINTS = frozenset([f"JointModelRUB{a}" for a in "XYZ"] + ["JointModelRevoluteUnboundedUnaligned"])


def integrate(model: Any, q: Any, v: Any, dt: float = 1.0) -> np.ndarray:
    """Configuration ``q (+) v dt`` (nq,) reached by moving with tangent velocity ``v`` for ``dt``.

    ``model`` is a :class:`models.multibody_model.MultibodyModel` or a
    ``pinocchio.Model``; ``q`` (nq,) in our convention with unit quaternions
    (1e-6), ``v`` (nv,) a tangent vector (free-flyer: body-frame ``[v; w]``).
    Raises ``ValueError`` for bad shapes, NaN, non-unit quaternions and joint
    types other than free-flyer, spherical, revolute (bounded or unbounded), prismatic and translation.
    """
    pin_model = as_pin_model(model)
    q = B.vector(q, pin_model.nq, "q")
    v = B.vector(v, pin_model.nv, "v")
    if not np.isfinite(dt):
        raise ValueError(f"dt: expected a finite number, got {dt!r}")
    for i in quaternion_starts(pin_model):
        check_unit_quaternion(q[i : i + 4], f"q[{i}:{i + 4}] (quaternion)")
    out = q.copy()
    for jid in range(1, pin_model.njoints):
        joint = pin_model.joints[jid]
        kind, iq, iv = joint.shortname(), joint.idx_q, joint.idx_v
        nu = dt * v[iv : iv + joint.nv]
        if kind in VECTOR_JOINTS:
            out[iq : iq + joint.nq] += nu
        elif kind in UNBOUNDED_JOINTS:
            c, s = q[iq], q[iq + 1]
            out[iq : iq + 2] = [c * np.cos(nu[0]) - s * np.sin(nu[0]), s * np.cos(nu[0]) + c * np.sin(nu[0])]
        elif kind == "JointModelSpherical":
            out[iq : iq + 4] = _unit(quat_mult(q[iq : iq + 4], axis_angle_to_quat(nu)))
        elif kind == "JointModelFreeFlyer":
            quat = q[iq + 3 : iq + 7]
            out[iq : iq + 3] = q[iq : iq + 3] + quat_to_rot(quat) @ exp6(nu)[0:3, 3]
            out[iq + 3 : iq + 7] = _unit(quat_mult(quat, axis_angle_to_quat(nu[3:6])))
        else:
            raise ValueError(f"model: joint {pin_model.names[jid]!r} of type {kind} is not supported by integrate")
    return out


def _unit(quat: np.ndarray) -> np.ndarray:
    """``quat`` rescaled to unit norm (removes round-off drift over many steps)."""
    return quat / np.linalg.norm(quat)
