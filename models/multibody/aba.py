"""Articulated-body algorithm: forward dynamics ``vdot = M(q)^-1 (tau - C(q, v) + sum J^T f_ext)``.

Featherstone's ABA in joint-local coordinates, O(n), no mass matrix:

1. forward: ``v_i``, bias ``c_i = v_i x S_i qd_i``, ``IA_i = I_i``,
   ``pA_i = v_i x* I_i v_i - f_ext,i``;
2. backward, leaves first: ``U_i = IA_i S_i``, ``D_i = S_i^T U_i + armature_i``,
   ``u_i = tau_i - S_i^T pA_i``; to the parent (if not the universe):
   ``Ia = IA_i - U_i D_i^-1 U_i^T``, ``pa = pA_i + Ia c_i + U_i D_i^-1 u_i``,
   ``IA_lambda += lambda_X*_i Ia i_X_lambda``, ``pA_lambda += lambda_X*_i pa``;
3. forward with ``a_0 = -g``: ``a' = i_X_lambda a_lambda + c_i``,
   ``qdd_i = D_i^-1 (u_i - U_i^T a')``, ``a_i = a' + S_i qdd_i``.

For a free-flyer (``S = I6``): ``U = D = IA``, so nothing articulated reaches
the parent (``Ia = 0``, ``pa = tau_i``) and ``a_i = IA^-1 (tau_i - pA_i)``,
solved by a symbolic LDL^T factorization. 1-DoF joints divide by the scalar ``D``.
Articulated inertias are symmetric 6x6 SX with shared ``(i, j)``/``(j, i)`` nodes.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import casadi as ca

from .kinematics import bias_acceleration, joint_velocities
from .spatial import Transform, act_articulated, act_force, cross_force, inv_act_motion, symmetric
from .tree import FREE_FLYER, KinematicTree


def solve_ldlt(A: ca.SX, b: ca.SX) -> ca.SX:
    """Solve ``A X = b`` for symmetric positive definite ``A`` (n x n) by ``A = L D L^T``; ``b`` is (n x k).

    ``D_j = A_jj - sum_k L_jk^2 D_k``, ``L_ij = (A_ij - sum_k L_ik L_jk D_k) / D_j``
    (``k < j < i``), then ``L Y = b``, ``L^T X = D^-1 Y``, row by row. No
    pivoting, no square roots; only the lower triangle of ``A`` is read.
    """
    n = A.shape[0]
    L: list[list[Any]] = [[None] * n for _ in range(n)]
    d: list[Any] = []
    d_inv: list[Any] = []
    for j in range(n):
        LD = [L[j][k] * d[k] for k in range(j)]
        dj = A[j, j]
        for k in range(j):
            dj = dj - L[j][k] * LD[k]
        d.append(dj)
        d_inv.append(1 / dj)
        for i in range(j + 1, n):
            lij = A[i, j]
            for k in range(j):
                lij = lij - L[i][k] * LD[k]
            L[i][j] = lij * d_inv[j]
    y: list[Any] = []
    for i in range(n):
        yi = b[i, :]
        for k in range(i):
            yi = yi - L[i][k] * y[k]
        y.append(yi)
    x: list[Any] = [None] * n
    for i in reversed(range(n)):
        xi = y[i] * d_inv[i]
        for k in range(i + 1, n):
            xi = xi - L[k][i] * x[k]
        x[i] = xi
    return ca.vertcat(*x)


def aba(
    tree: KinematicTree,
    local: Sequence[Optional[Transform]],
    v: ca.SX,
    tau: ca.SX,
    wrenches: Optional[Sequence[Optional[ca.SX]]] = None,
) -> ca.SX:
    """Joint accelerations ``vdot`` (nv x 1) for velocity ``v`` and generalized force ``tau``.

    ``local``: joint placements ``lambda_M_i(q)``; ``wrenches``: joint-local external
    wrenches on each body or ``None`` (see :func:`~.kinematics.external_wrenches`).
    """
    nj = tree.njoints
    vel, vJ = joint_velocities(tree, local, v)
    c: list[Any] = [None] * nj
    IA: list[Any] = [None] * nj
    pA: list[Any] = [None] * nj
    for j in tree.joints:
        i = j.index
        c[i] = bias_acceleration(j, vel, vJ)
        IA[i] = ca.SX(j.inertia.matrix())
        pA[i] = cross_force(vel[i], j.inertia.apply(vel[i]))
        if wrenches is not None and wrenches[i] is not None:
            pA[i] = pA[i] - wrenches[i]

    U: list[Any] = [None] * nj
    D_inv: list[Any] = [None] * nj
    u: list[Any] = [None] * nj
    for j in reversed(tree.joints):
        i, parent = j.index, j.parent
        tau_i = tau[j.idx_v : j.idx_v + j.nv]
        if j.kind == FREE_FLYER:
            u[i] = tau_i - pA[i]
            if parent > 0:
                pA[parent] = pA[parent] + act_force(local[i], tau_i)
            continue
        U[i] = ca.mtimes(IA[i], j.S)
        D_inv[i] = 1 / (ca.mtimes(j.S.T, U[i]) + float(j.armature[0]))
        u[i] = tau_i - ca.mtimes(j.S.T, pA[i])
        if parent == 0:
            continue
        Ud = U[i] * D_inv[i]
        Ia = symmetric(6, lambda r, s: IA[i][r, s] - Ud[r] * U[i][s])
        pa = pA[i] + Ud * u[i]
        if c[i] is not None:
            pa = pa + ca.mtimes(Ia, c[i])
        IA_up = act_articulated(local[i], Ia)
        IA[parent] = symmetric(6, lambda r, s: IA[parent][r, s] + IA_up[r, s])
        pA[parent] = pA[parent] + act_force(local[i], pa)

    acc: list[Any] = [ca.DM(-tree.gravity)] + [None] * (nj - 1)
    vdot = ca.SX.zeros(tree.nv, 1)
    for j in tree.joints:
        i = j.index
        a_i = inv_act_motion(local[i], acc[j.parent])
        if c[i] is not None:
            a_i = a_i + c[i]
        if j.kind == FREE_FLYER:
            acc[i] = solve_ldlt(IA[i], u[i])
            vdot[j.idx_v : j.idx_v + j.nv] = acc[i] - a_i
        else:
            qdd = D_inv[i] * (u[i] - ca.mtimes(U[i].T, a_i))
            acc[i] = a_i + ca.mtimes(j.S, qdd)
            vdot[j.idx_v : j.idx_v + j.nv] = qdd
    return vdot
