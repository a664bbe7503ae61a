"""A robot with some joints locked, and the named poses of an SRDF file.

Locking a joint removes its coordinate from the model: the joint's child body
is welded to its parent at the joint's locked position (pinocchio's
``buildReducedModel``), its mass and inertia kept. The remaining joints keep
their names, limits and order.

An SRDF file (MoveIt's semantic description, shipped with many robots of
example-robot-data) names poses in ``<group_state>`` elements: each lists
joint values, the other joints keep their neutral position
(``pinocchio.neutral``). :func:`srdf_pose` reads one as a pinocchio
configuration (pinocchio's ``loadReferenceConfigurations``).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Sequence, Union

import numpy as np
import pinocchio as pin

#: Joints to lock: their names (locked at a reference configuration), or names with positions (rad or m).
LockedJoints = Union[Sequence[str], Mapping[str, float]]


def srdf_pose(pin_model: pin.Model, srdf: Union[str, os.PathLike], pose: str) -> np.ndarray:
    """The pinocchio configuration (nq,) of ``pose``, a ``<group_state>`` of the SRDF file ``srdf``.

    Raises ``FileNotFoundError`` for a missing file and ``ValueError`` naming
    the poses the file has when it has no ``pose``.
    """
    path = Path(srdf)
    if not path.is_file():
        raise FileNotFoundError(f"srdf: no such file {path}")
    model = pin.Model(pin_model)
    pin.loadReferenceConfigurations(model, str(path), False)
    poses = {entry.key(): np.array(entry.data(), dtype=float) for entry in model.referenceConfigurations}
    if pose not in poses:
        raise ValueError(f"pose: {str(path)!r} has no pose {pose!r}; its poses: {sorted(poses)}")
    return poses[pose]


def lock_joints(pin_model: pin.Model, joints: LockedJoints, reference: np.ndarray | None = None) -> pin.Model:
    """A copy of ``pin_model`` with ``joints`` locked (module docstring).

    ``joints``: names, locked at their positions in ``reference`` (a
    pinocchio configuration; default :func:`pinocchio.neutral`), or a mapping
    of names to positions, which override ``reference``. Each locked joint
    must be a 1-DoF joint with one configuration entry (revolute or
    prismatic) and not the floating base. Raises ``ValueError`` naming an
    unknown joint (with the model's joints) or a position outside the
    joint's limits.
    """
    q = pin.neutral(pin_model) if reference is None else np.array(reference, dtype=float).reshape(-1)
    if q.shape != (pin_model.nq,) or not np.isfinite(q).all():
        raise ValueError(f"reference: expected a finite configuration of shape ({pin_model.nq},), got {np.shape(reference)}")
    if isinstance(joints, str):
        raise ValueError(f"joints: expected a sequence of joint names or a mapping of names to positions, got the string {joints!r}")
    positions = dict(joints) if isinstance(joints, Mapping) else {name: None for name in joints}
    known = [pin_model.names[j] for j in range(1, pin_model.njoints)]
    ids = []
    for name, position in positions.items():
        if name not in known:
            raise ValueError(f"joints: {name!r} is not a joint of the model {pin_model.name!r}; its joints: {known}")
        jid = pin_model.getJointId(name)
        joint = pin_model.joints[jid]
        if joint.nq != 1 or joint.nv != 1:
            raise ValueError(f"joints: {name!r} ({joint.shortname()}) has {joint.nq} coordinates; only 1-DoF joints can be locked")
        if position is not None:
            lower, upper = pin_model.lowerPositionLimit[joint.idx_q], pin_model.upperPositionLimit[joint.idx_q]
            if not lower - 1e-12 <= position <= upper + 1e-12:
                raise ValueError(f"joints: {name!r} locked at {position} is outside its limits [{lower}, {upper}]")
            q[joint.idx_q] = float(position)
        ids.append(jid)
    return pin.buildReducedModel(pin_model, sorted(ids), q)
