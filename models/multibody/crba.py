"""Composite-rigid-body algorithm: the joint-space inertia matrix ``M(q)`` (nv x nv).

Featherstone's CRBA in joint-local coordinates:

1. composite inertias, leaves first: ``I^c_lambda += lambda_X*_i I^c_i i_X_lambda``
   (rigid-body inertias stay 10-parameter ``(mass, h, I)`` objects);
2. for each joint ``i``: ``F = I^c_i S_i``, ``M_ii = S_i^T F``; then walking up
   the support ``j = lambda(i), ...``: ``F = lambda_X*_k F``, ``M_ji = S_j^T F``
   and ``M_ij = M_ji^T`` (the same SX nodes: ``M`` is exactly symmetric);
3. the rotor inertias on the diagonal: ``M_ii += armature_i``.
"""
from __future__ import annotations

from typing import Optional, Sequence

import casadi as ca

from .spatial import RigidInertia, Transform, act_force
from .tree import KinematicTree


def crba(tree: KinematicTree, local: Sequence[Optional[Transform]]) -> ca.SX:
    """Full symmetric mass matrix ``M(q)`` (nv x nv) from joint placements ``lambda_M_i(q)``."""
    composite: list[Optional[RigidInertia]] = [None] + [j.inertia for j in tree.joints]
    for j in reversed(tree.joints):
        if j.parent > 0:
            composite[j.parent] = composite[j.parent] + composite[j.index].act(local[j.index])
    M = ca.SX.zeros(tree.nv, tree.nv)
    for j in tree.joints:
        cols = slice(j.idx_v, j.idx_v + j.nv)
        F = ca.mtimes(ca.SX(composite[j.index].matrix()), j.S)
        M[cols, cols] = ca.mtimes(j.S.T, F) + (ca.diag(ca.DM(j.armature)) if j.armature.any() else 0)
        k = j
        while k.parent > 0:
            F = act_force(local[k.index], F)
            k = tree.joint(k.parent)
            rows = slice(k.idx_v, k.idx_v + k.nv)
            block = ca.mtimes(k.S.T, F)
            M[rows, cols] = block
            M[cols, rows] = block.T
    return M
