"""Forward dynamics with point contacts held (the KKT contact dynamics) and their derivatives.

A robot with point contacts ``i = 1..nc`` at frames ``p_i`` (WORLD-frame forces
``f_i``, LOCAL_WORLD_ALIGNED linear Jacobians ``J_i``) and a stance mask
``s_i`` in {0, 1} moves with accelerations ``a`` and contact forces ``f`` that
solve

    M(q) a - J(q)^T f = tau - C(q, v)                                 (nv rows)
    s_i (J_i a + gamma_i) + (1 - s_i) f_i = 0,   i = 1..nc           (3 nc rows)

``gamma_i = Jdot_i v`` is the foot's classical acceleration at ``a = 0``
(pinocchio's ``getFrameClassicalAcceleration``), so a stance foot keeps a zero
acceleration and a swing foot carries no force. With ``S = blkdiag(s_i I3)``
and ``Lambda = J M^-1 J^T`` the forces solve the masked operational-space system

    (S Lambda S + I - S) f = -S (J M^-1 (tau - C) + gamma),      a = M^-1 (tau - C + J^T f),

whose matrix is symmetric positive definite whenever the stance Jacobian rows
are independent. ``M^-1`` is applied through the tree-sparse factorization of
:mod:`.ltl`, the small dense system by :func:`.aba.solve_ldlt`.

Derivatives use the identity ``R(x, u, a(x, u), f(x, u)) = 0`` with

    R = [rnea(q, v, a, f) - B u;  S (J a + gamma) + (I - S) f],    dR/d[a; f] = K = [M, -J^T; S J, I - S]

(``rnea`` with the point forces is ``M a + C - J^T f``): ``d[a; f]/dx = -K^-1
dR/dx`` and ``d[a; f]/du = K^-1 [B; 0]``, where ``dR/dx`` is taken at fixed
``a`` and ``f`` (the RNEA derivative and the derivative of the feet's
accelerations) and ``K^-1`` reuses the factorizations above. This is
pinocchio's ``computeConstraintDynamicsDerivatives`` idea and the
``-M^-1 drnea/dx`` identity of the ABA Jacobian: a shorter graph, faster to
evaluate, than automatic differentiation of the solve, and equal to it to
round-off (docs/design/legged.md).

:func:`contact_dynamics_function` packages both: a ``casadi.Function``
``(x, u, s) -> (a, f)`` whose Jacobian (used by CasADi whenever it
differentiates an MX graph calling it) is the identity's. The mask is a
discrete parameter: its derivative is defined as zero.
"""
from __future__ import annotations

from typing import Sequence, Tuple

import casadi as ca
import numpy as np

from .aba import solve_ldlt
from .engine import RigidBodyTree
from .ltl import TreeLTL, ltl_factor, ltl_solve

#: Reference frame of the contact Jacobians and forces.
WORLD_ALIGNED = "LOCAL_WORLD_ALIGNED"


def _stance_matrix(stance: ca.SX) -> ca.SX:
    """``S = blkdiag(s_i I3)`` (3 nc x 3 nc) of the mask ``stance`` (nc,)."""
    return ca.diag(ca.vec(ca.repmat(stance.T, 3, 1)))


class ContactKKT:
    """The KKT contact dynamics of ``tree`` at one state, as SX expressions: the accelerations and the
    WORLD-frame forces that hold the stance feet at zero acceleration (swing feet carry no force).

    ``q``, ``v``: configuration and velocity; ``frames``: the contact frames;
    ``stance`` (nc,): the mask; ``parents``: the DoF tree of :func:`.ltl.dof_parents`.
    """

    def __init__(self, tree: RigidBodyTree, parents: Sequence[int], frames: Sequence[str], q: ca.SX, v: ca.SX, stance: ca.SX) -> None:
        self.tree, self.frames, self.q, self.v = tree, tuple(frames), q, v
        nv = tree.nv
        self.M = tree.crba(q)
        self.C = tree.nle(q, v)
        self.J = ca.vertcat(*[tree.frame_jacobian(q, f, WORLD_ALIGNED)[:3, :] for f in self.frames])
        self.gamma = self.foot_accelerations(ca.SX.zeros(nv))
        self.factor: TreeLTL = ltl_factor(self.M, parents)
        self.S = _stance_matrix(stance)
        self.MJ = ltl_solve(self.factor, self.J.T)  # M^-1 J^T (nv x 3 nc)
        self.Lambda = self.S @ (self.J @ self.MJ) @ self.S + ca.SX.eye(3 * len(self.frames)) - self.S

    def foot_accelerations(self, a: ca.SX) -> ca.SX:
        """WORLD-axes accelerations of the contact points, ``J a + gamma`` (3 nc)."""
        return ca.vertcat(*[self.tree.frame_acceleration(self.q, self.v, a, f, WORLD_ALIGNED, classical=True)[:3] for f in self.frames])

    def solve(self, r1: ca.SX, r2: ca.SX) -> Tuple[ca.SX, ca.SX]:
        """``K^-1 [r1; r2]`` with ``K = [M, -J^T; S J, I - S]``, for right-hand sides whose swing rows of
        ``r2`` are zero, by the tree-sparse factorization of ``M`` and the masked operational-space system."""
        Mr1 = ltl_solve(self.factor, r1)
        y_f = solve_ldlt(self.Lambda, self.S @ (r2 - self.J @ Mr1))
        return Mr1 + self.MJ @ y_f, y_f

    def dynamics(self, tau: ca.SX) -> Tuple[ca.SX, ca.SX]:
        """Accelerations ``a`` (nv) and forces ``f`` (3 nc) for generalized forces ``tau``."""
        return self.solve(tau - self.C, -self.S @ self.gamma)


def contact_dynamics_function(tree: RigidBodyTree, parents: Sequence[int], frames: Sequence[str], B: np.ndarray, name: str) -> ca.Function:
    """``(x, u, s) -> (a, f)``: the KKT contact dynamics with actuator torques ``tau = B u``,
    whose Jacobian is the RNEA identity's, ``-K^-1 dR/dx`` (``R`` the RNEA residual and the stance rows).
    ``x = [q; v]``."""
    nq, nv, nc = tree.nq, tree.nv, len(frames)
    x, u, s = ca.SX.sym("x", nq + nv), ca.SX.sym("u", B.shape[1]), ca.SX.sym("s", nc)
    q, v = x[:nq], x[nq:]
    kkt = ContactKKT(tree, parents, frames, q, v, s)
    a, f = kkt.dynamics(ca.DM(B) @ u)

    # Jacobian by the identity: dR/dx at fixed a, f (symbols), then substituted
    a_fix, f_fix = ca.SX.sym("a_fix", nv), ca.SX.sym("f_fix", 3 * nc)
    point_forces = [(frame, f_fix[3 * i : 3 * i + 3]) for i, frame in enumerate(frames)]
    residual = ca.vertcat(tree.rnea(q, v, a_fix, point_forces=point_forces), kkt.S @ kkt.foot_accelerations(a_fix))
    dR_dx = ca.substitute(ca.jacobian(residual, x), ca.vertcat(a_fix, f_fix), ca.vertcat(a, f))
    da_dx, df_dx = kkt.solve(-dR_dx[:nv, :], -dR_dx[nv:, :])
    da_du, df_du = kkt.solve(ca.DM(B), ca.SX.zeros(3 * nc, B.shape[1]))
    out_a, out_f = ca.SX.sym("out_a", nv), ca.SX.sym("out_f", 3 * nc)
    jac_inputs = [x, u, s, out_a, out_f]
    zero_s = [ca.SX(nv, nc), ca.SX(3 * nc, nc)]
    jacobian = ca.Function(
        f"jac_{name}",
        jac_inputs,
        [da_dx, da_du, zero_s[0], df_dx, df_du, zero_s[1]],
        ["x", "u", "s", "out_a", "out_f"],
        ["jac_a_x", "jac_a_u", "jac_a_s", "jac_f_x", "jac_f_u", "jac_f_s"],
        {"cse": True},
    )
    return ca.Function(name, [x, u, s], [a, f], ["x", "u", "s"], ["a", "f"], {"cse": True, "custom_jacobian": jacobian, "jac_penalty": 0})
