"""Recursive Newton-Euler algorithm: inverse dynamics ``tau = M(q) a + C(q, v) - sum J^T f_ext``.

Featherstone's RNEA in joint-local coordinates (pinocchio's LOCAL convention):

1. forward: ``v_i = i_X_lambda v_lambda + S_i qd_i``,
   ``a_i = i_X_lambda a_lambda + S_i qdd_i + v_i x S_i qd_i`` with ``a_0 = -g``
   (gravity as a fictitious base acceleration);
2. body wrenches ``f_i = I_i a_i + v_i x* I_i v_i - f_ext,i`` (joint-local);
3. backward: ``tau_i = S_i^T f_i + armature_i qdd_i``, ``f_lambda += lambda_X*_i f_i``
   (the rotor inertia ``armature`` acts on the joint's own acceleration only).
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import casadi as ca

from .kinematics import joint_accelerations, joint_velocities
from .spatial import Transform, act_force, cross_force
from .tree import KinematicTree


def rnea(
    tree: KinematicTree,
    local: Sequence[Optional[Transform]],
    v: ca.SX,
    a: ca.SX,
    wrenches: Optional[Sequence[Optional[ca.SX]]] = None,
) -> ca.SX:
    """Generalized forces ``tau`` (nv x 1) for velocity ``v`` and acceleration ``a``.

    ``local``: joint placements ``lambda_M_i(q)`` from
    :func:`~.kinematics.local_placements`; ``wrenches``: joint-local external
    wrenches on each body (from :func:`~.kinematics.external_wrenches`) or ``None``.
    """
    vel, vJ = joint_velocities(tree, local, v)
    acc = joint_accelerations(tree, local, vel, vJ, a, -tree.gravity)
    f: list[Any] = [None] * tree.njoints
    for j in tree.joints:
        i = j.index
        I = j.inertia
        f[i] = I.apply(acc[i]) + cross_force(vel[i], I.apply(vel[i]))
        if wrenches is not None and wrenches[i] is not None:
            f[i] = f[i] - wrenches[i]
    tau = ca.SX.zeros(tree.nv, 1)
    for j in reversed(tree.joints):
        i = j.index
        tau[j.idx_v : j.idx_v + j.nv] = ca.mtimes(j.S.T, f[i])
        if j.armature.any():
            tau[j.idx_v : j.idx_v + j.nv] += ca.DM(j.armature) * a[j.idx_v : j.idx_v + j.nv]
        if j.parent > 0:
            f[j.parent] = f[j.parent] + act_force(local[i], f[i])
    return tau
