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

Several points of one rigid body (the corners of a sole) have dependent rows:
forces with no net wrench on the body (internal forces, ``f`` in the null
space of ``J^T``) do nothing, and their part of the system is singular. Given
the ``bodies`` of the contacts, the points that share a body get the forces of
least norm among those that hold it: with ``P`` the orthogonal projector onto
the internal forces, block-diagonal per body with ``P_b = I - W^T (W W^T)^-1
W`` and ``W = [I ... I; [r_1]x ... [r_n]x]`` the map from the body's point
forces to their wrench about the points' centroid (``r_i`` from it, WORLD
axes), the stance rows become

    S (I - P) (J a + gamma) + S P f + (I - S) f = 0,

which hold the body's rigid motion (``(I - P) J = J``) and set the internal
forces to zero; ``S P S`` joins the matrix above and ``gamma`` its part
``(I - P) gamma`` (a rotating body's corners accelerate towards each other,
which ``J a`` cannot cancel). This assumes a body's points stand or swing
together (one mask value per body) and at least three of them not on a line.
With soles at rest this is pinocchio's 6D contact of each body. With no
shared body the system is the one above.

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
    ``stance`` (nc,): the mask; ``parents``: the DoF tree of :func:`.ltl.dof_parents`; ``bodies`` (nc,):
    the rigid body (e.g. parent joint) of each contact, to give points that share one the forces of least norm
    (module docstring); empty: every point on its own body.
    """

    def __init__(self, tree: RigidBodyTree, parents: Sequence[int], frames: Sequence[str], q: ca.SX, v: ca.SX, stance: ca.SX, bodies: Sequence[int] = ()) -> None:
        self.tree, self.frames, self.q, self.v = tree, tuple(frames), q, v
        nv = tree.nv
        self.M = tree.crba(q)
        self.C = tree.nle(q, v)
        self.J = ca.vertcat(*[tree.frame_jacobian(q, f, WORLD_ALIGNED)[:3, :] for f in self.frames])
        self.gamma = self.foot_accelerations(ca.SX.zeros(nv))
        self.factor: TreeLTL = ltl_factor(self.M, parents)
        self.S = _stance_matrix(stance)
        self.MJ = ltl_solve(self.factor, self.J.T)  # M^-1 J^T (nv x 3 nc)
        shared = len(set(bodies)) < len(bodies)
        #: the projector onto the internal forces (module docstring), ``None`` when no two points share a body
        self.P = internal_force_projector([tree.frame_placement(q, f)[1] for f in self.frames], bodies) if shared else None
        JMJ = self.J @ self.MJ if self.P is None else self.J @ self.MJ + self.P
        self.Lambda = self.S @ JMJ @ self.S + ca.SX.eye(3 * len(self.frames)) - self.S

    def foot_accelerations(self, a: ca.SX) -> ca.SX:
        """WORLD-axes accelerations of the contact points, ``J a + gamma`` (3 nc)."""
        return ca.vertcat(*[self.tree.frame_acceleration(self.q, self.v, a, f, WORLD_ALIGNED, classical=True)[:3] for f in self.frames])

    def stance_rows(self, a: ca.SX, f: ca.SX) -> ca.SX:
        """The stance rows' residual ``S (I - P) (J a + gamma) + S P f`` (3 nc; module docstring; ``S (J a + gamma)``
        when no two points share a body)."""
        rigid = self.foot_accelerations(a)
        return self.S @ rigid if self.P is None else self.S @ (rigid - self.P @ rigid + self.P @ f)

    def solve(self, r1: ca.SX, r2: ca.SX) -> Tuple[ca.SX, ca.SX]:
        """``K^-1 [r1; r2]`` with ``K = [M, -J^T; S J, S P S + I - S]``, for right-hand sides whose swing rows of
        ``r2`` are zero, by the tree-sparse factorization of ``M`` and the masked operational-space system."""
        Mr1 = ltl_solve(self.factor, r1)
        y_f = solve_ldlt(self.Lambda, self.S @ (r2 - self.J @ Mr1))
        return Mr1 + self.MJ @ y_f, y_f

    def dynamics(self, tau: ca.SX) -> Tuple[ca.SX, ca.SX]:
        """Accelerations ``a`` (nv) and forces ``f`` (3 nc) for generalized forces ``tau``."""
        gamma = self.gamma if self.P is None else self.gamma - self.P @ self.gamma
        return self.solve(tau - self.C, -self.S @ gamma)


def internal_force_projector(points: Sequence[ca.SX], bodies: Sequence[int]) -> ca.SX:
    """``P`` (3 nc x 3 nc): the orthogonal projector onto the point forces with no net wrench on the bodies the
    ``points`` (WORLD positions, nc) share (module docstring); zero blocks for a point alone on its body.
    ``ValueError`` for a body with two points (a line: the projector needs three not on a line)."""
    nc = len(points)
    P = ca.SX.zeros(3 * nc, 3 * nc)
    for body in sorted(set(bodies)):
        members = [i for i, b in enumerate(bodies) if b == body]
        if len(members) == 1:
            continue
        if len(members) == 2:
            raise ValueError(f"bodies: two contact points on one body (points {members}) leave a rotation about their line free; give three or more")
        centroid = sum(points[i] for i in members) / len(members)
        W = ca.horzcat(*[ca.vertcat(ca.SX.eye(3), ca.skew(points[i] - centroid)) for i in members])  # (6, 3 n): forces -> wrench
        block = ca.SX.eye(3 * len(members)) - W.T @ ca.solve(W @ W.T, W)
        rows = [3 * i + k for i in members for k in range(3)]
        for a, ra in enumerate(rows):
            for b, rb in enumerate(rows):
                P[ra, rb] = block[a, b]
    return P


def contact_dynamics_function(tree: RigidBodyTree, parents: Sequence[int], frames: Sequence[str], B: np.ndarray, name: str, bodies: Sequence[int] = ()) -> ca.Function:
    """``(x, u, s) -> (a, f)``: the KKT contact dynamics with actuator torques ``tau = B u``,
    whose Jacobian is the RNEA identity's, ``-K^-1 dR/dx`` (``R`` the RNEA residual and the stance rows
    :meth:`ContactKKT.stance_rows`). ``x = [q; v]``; ``bodies``: as for :class:`ContactKKT`."""
    nq, nv, nc = tree.nq, tree.nv, len(frames)
    x, u, s = ca.SX.sym("x", nq + nv), ca.SX.sym("u", B.shape[1]), ca.SX.sym("s", nc)
    q, v = x[:nq], x[nq:]
    kkt = ContactKKT(tree, parents, frames, q, v, s, bodies)
    a, f = kkt.dynamics(ca.DM(B) @ u)

    # Jacobian by the identity: dR/dx at fixed a, f (symbols), then substituted
    a_fix, f_fix = ca.SX.sym("a_fix", nv), ca.SX.sym("f_fix", 3 * nc)
    point_forces = [(frame, f_fix[3 * i : 3 * i + 3]) for i, frame in enumerate(frames)]
    residual = ca.vertcat(tree.rnea(q, v, a_fix, point_forces=point_forces), kkt.stance_rows(a_fix, f_fix))
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
