"""Read a ``pinocchio.Model`` into a plain joint list (numbers only, no CasADi).

Every joint ``i`` (pinocchio's index; 0 is the universe and is not listed) has
a parent ``lambda(i) < i``, a constant placement ``lambda_M_i(0) = (R, p)`` of
its frame in the parent joint frame, a joint motion ``M_J(q_i)`` so that
``lambda_M_i(q) = placement * M_J(q_i)``, a constant motion subspace ``S_i``
(6 x nv_i, ``[linear; angular]`` in the joint frame) and the rigid-body inertia
of everything rigidly attached to it, expressed in the joint frame.

Supported joints (pinocchio names):

- revolute ``JointModelRX/RY/RZ``, ``JointModelRevoluteUnaligned``:
  ``M_J = (Rot(axis, q), 0)``, ``S = [0; axis]``;
- prismatic ``JointModelPX/PY/PZ``, ``JointModelPrismaticUnaligned``:
  ``M_J = (I, axis q)``, ``S = [axis; 0]``;
- free-flyer ``JointModelFreeFlyer``: ``M_J = (Rot(quat), position)``,
  ``S = I6`` (body-frame twist). Its 7 configuration entries are ours,
  ``[x, y, z, qw, qx, qy, qz]`` (pinocchio stores ``[.., qx, qy, qz, qw]``).

Fixed joints of a URDF are frames in pinocchio and need nothing here. Any
other joint type raises ``ValueError``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import pinocchio as pin

from .spatial import RigidInertia

REVOLUTE, PRISMATIC, FREE_FLYER = "revolute", "prismatic", "free_flyer"

_AXES = {"X": np.array([1.0, 0.0, 0.0]), "Y": np.array([0.0, 1.0, 0.0]), "Z": np.array([0.0, 0.0, 1.0])}
_KINDS = {
    **{f"JointModelR{a}": (REVOLUTE, axis) for a, axis in _AXES.items()},
    **{f"JointModelP{a}": (PRISMATIC, axis) for a, axis in _AXES.items()},
    "JointModelRevoluteUnaligned": (REVOLUTE, None),
    "JointModelPrismaticUnaligned": (PRISMATIC, None),
    "JointModelFreeFlyer": (FREE_FLYER, None),
}
#: Tolerance on ``|axis| = 1`` for unaligned joints (pinocchio does not normalize).
AXIS_NORM_TOL = 1e-9


@dataclass(frozen=True)
class Joint:
    """One joint of the tree and the body it moves (all constants numeric).

    ``placement = (R, p)``: joint frame in the parent joint frame at ``q = 0``.
    ``axis``: unit axis in the joint frame (``None`` for a free-flyer).
    ``S``: motion subspace (6 x nv), ``[linear; angular]``, joint frame.
    ``inertia``: rigid-body inertia of the body, about and in the joint frame.
    ``idx_q``/``idx_v``: first index of the joint in ``q``/``v``.
    ``armature``: rotor inertia per degree of freedom (nv,), pinocchio's ``model.armature``:
    ``M`` gains it on its diagonal, RNEA adds ``armature * a`` and ABA adds it to ``D``.
    """

    index: int
    name: str
    kind: str
    parent: int
    placement: tuple[np.ndarray, np.ndarray]
    axis: Optional[np.ndarray]
    S: np.ndarray
    inertia: RigidInertia
    idx_q: int
    nq: int
    idx_v: int
    nv: int
    armature: np.ndarray


@dataclass(frozen=True)
class Frame:
    """A pinocchio frame: constant ``placement = (R, p)`` in its parent joint frame."""

    index: int
    name: str
    parent: int
    placement: tuple[np.ndarray, np.ndarray]


@dataclass(frozen=True)
class KinematicTree:
    """Joints ``joints[i - 1]`` for pinocchio indices ``i = 1 .. njoints - 1``.

    ``gravity`` is the spatial gravity ``[g_linear; g_angular]`` (6,) in the world frame.
    """

    joints: tuple[Joint, ...]
    frames: tuple[Frame, ...]
    gravity: np.ndarray
    nq: int
    nv: int

    @property
    def njoints(self) -> int:
        """Number of joints including the universe (pinocchio's ``njoints``)."""
        return len(self.joints) + 1

    def joint(self, i: int) -> Joint:
        """Joint of pinocchio index ``i >= 1``."""
        return self.joints[i - 1]

    def support(self, i: int) -> list[int]:
        """Joint indices from ``i`` up to (excluding) the universe, child first."""
        chain = []
        while i > 0:
            chain.append(i)
            i = self.joint(i).parent
        return chain


def _placement(M: pin.SE3) -> tuple[np.ndarray, np.ndarray]:
    return np.array(M.rotation), np.array(M.translation)


def _motion_subspace(kind: str, axis: Optional[np.ndarray]) -> np.ndarray:
    if kind == FREE_FLYER:
        return np.eye(6)
    zero = np.zeros(3)
    column = np.concatenate([zero, axis] if kind == REVOLUTE else [axis, zero])
    return column.reshape(6, 1)


def _joint(model: pin.Model, i: int) -> Joint:
    jmodel = model.joints[i]
    type_name = jmodel.shortname()
    if type_name not in _KINDS:
        raise ValueError(
            f"joint {model.names[i]!r} (index {i}) has unsupported type {type_name}; "
            f"supported: {', '.join(sorted(_KINDS))}"
        )
    kind, axis = _KINDS[type_name]
    if kind != FREE_FLYER and axis is None:
        axis = np.array(jmodel.extract().axis, dtype=float)
        if abs(np.linalg.norm(axis) - 1.0) > AXIS_NORM_TOL:
            raise ValueError(f"joint {model.names[i]!r}: axis {axis} is not a unit vector")
    body = model.inertias[i]
    armature = np.array(model.armature[jmodel.idx_v : jmodel.idx_v + jmodel.nv], dtype=float)
    if kind == FREE_FLYER and armature.any():
        raise ValueError(f"joint {model.names[i]!r}: a free flyer has no rotor; its armature must be 0, got {armature.tolist()}")
    if not (np.isfinite(armature).all() and (armature >= 0).all()):
        raise ValueError(f"joint {model.names[i]!r}: armature must be finite and >= 0, got {armature.tolist()}")
    return Joint(
        index=i,
        name=model.names[i],
        kind=kind,
        parent=int(model.parents[i]),
        placement=_placement(model.jointPlacements[i]),
        axis=axis,
        S=_motion_subspace(kind, axis),
        inertia=RigidInertia.from_com(body.mass, np.array(body.lever), np.array(body.inertia)),
        idx_q=jmodel.idx_q,
        nq=jmodel.nq,
        idx_v=jmodel.idx_v,
        nv=jmodel.nv,
        armature=armature,
    )


def read_model(model: pin.Model) -> KinematicTree:
    """Convert ``model`` into a :class:`KinematicTree`; ``ValueError`` on unsupported joints."""
    joints = tuple(_joint(model, i) for i in range(1, model.njoints))
    frames = tuple(
        Frame(index=f, name=fr.name, parent=int(fr.parentJoint), placement=_placement(fr.placement))
        for f, fr in enumerate(model.frames)
    )
    return KinematicTree(
        joints=joints, frames=frames, gravity=np.array(model.gravity.vector), nq=model.nq, nv=model.nv
    )
