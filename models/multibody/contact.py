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
least norm among those that hold it, by holding the body with six rows instead
of its points' ``3 n``. With ``W = [I ... I; [r_1]x ... [r_n]x]`` (6 x 3 n), the
map from the body's point forces to their wrench about the points' centroid
(``r_i`` from it, WORLD axes), the body's forces are ``f_b = W^T y_b`` for a
multiplier ``y_b`` (6): the least-norm forces of the wrench ``W W^T y_b``
(``W^T`` spans the forces orthogonal to the internal ones). Stacking
``f = T y`` (``T`` block-diagonal: ``W^T`` for a shared body, ``I3`` for a
point alone on its body), the system keeps its shape in the reduced rows

    M a - G^T y = tau - C,    s_b (G_b a + T_b^T gamma) + (1 - s_b) y_b = 0,    G = T^T J,

whose stance rows hold ``W (J a + gamma) = 0``: the body's rigid motion, the
corners' accelerations projected on ``W^T`` (a rotating body's corners
accelerate towards each other, which ``J a`` cannot cancel). This is the
system ``S (I - P) (J a + gamma) + S P f + (I - S) f = 0`` with the projector
``P = I - W^T (W W^T)^-1 W`` onto the internal forces, solved in
``T``'s coordinates: the same forces and accelerations with a smaller matrix
(``12`` rows for two soles of four corners instead of ``24``, no projector).
A body's points stand or swing together: the body's rows take the mask of its
first point. It needs at least three of them not on a line. With soles at rest
this is pinocchio's 6D contact of each body. With no shared body ``T = I``
and the system is the one above.

Derivatives use the identity ``R(x, u, a(x, u), y(x, u)) = 0`` with

    R = [rnea(q, v, a, T y) - B u;  S (T^T (J a + gamma)) + (I - S) y],    dR/d[a; y] = K = [M, -G^T; S G, I - S]

(``rnea`` with the point forces is ``M a + C - J^T T y``): ``d[a; y]/dx = -K^-1
dR/dx`` and ``d[a; y]/du = K^-1 [B; 0]``, where ``dR/dx`` is taken at fixed
``a`` and ``y`` (the RNEA derivative and the derivative of the feet's
accelerations), ``K^-1`` reuses the factorizations above, and ``f = T y``
gives ``df/dx = T dy/dx + d(T y)/dx`` at fixed ``y`` (``T`` turns with the
body). This is pinocchio's ``computeConstraintDynamicsDerivatives`` idea and
the ``-M^-1 drnea/dx`` identity of the ABA Jacobian: a shorter graph, faster
to evaluate, than automatic differentiation of the solve, and equal to it to
round-off (docs/design/legged.md).

:func:`contact_dynamics_function` packages both: a ``casadi.Function``
``(x, u, s) -> (a, f)`` whose Jacobian (used by CasADi whenever it
differentiates an MX graph calling it) is the identity's. The mask is a
discrete parameter: its derivative is defined as zero.
"""
from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

import casadi as ca
import numpy as np

from .aba import solve_ldlt
from .engine import RigidBodyTree
from .ltl import TreeLTL, ltl_factor, ltl_solve

#: Reference frame of the contact Jacobians and forces.
WORLD_ALIGNED = "LOCAL_WORLD_ALIGNED"


class ContactKKT:
    """The KKT contact dynamics of ``tree`` at one state, as SX expressions: the accelerations and the
    WORLD-frame forces (:meth:`forces` of the rows' multipliers) that hold the stance feet at zero
    acceleration (swing feet carry no force).

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
        J = ca.vertcat(*[tree.frame_jacobian(q, f, WORLD_ALIGNED)[:3, :] for f in self.frames])
        gamma = self.foot_accelerations(ca.SX.zeros(nv))
        self.factor: TreeLTL = ltl_factor(self.M, parents)
        groups = body_groups(bodies, len(self.frames))
        #: ``f = T y`` (3 nc x rows), the point forces of the rows' multipliers (module docstring); ``None`` when every
        #: point is alone on its body (``f = y``)
        self.T = least_norm_forces([tree.frame_placement(q, f)[1] for f in self.frames], groups) if any(len(g) > 1 for g in groups) else None
        #: the rows' Jacobian ``G = T^T J`` and drift ``T^T gamma``
        self.G, self.drift = (J, gamma) if self.T is None else (self.T.T @ J, self.T.T @ gamma)
        self.S = ca.diag(ca.vertcat(*[ca.repmat(stance[g[0]], rows_holding(g), 1) for g in groups]))
        self.MG = ltl_solve(self.factor, self.G.T)  # M^-1 G^T (nv x rows)
        self.Lambda = self.S @ (self.G @ self.MG) @ self.S + ca.SX.eye(self.G.shape[0]) - self.S

    def foot_accelerations(self, a: ca.SX) -> ca.SX:
        """WORLD-axes accelerations of the contact points, ``J a + gamma`` (3 nc)."""
        return ca.vertcat(*[self.tree.frame_acceleration(self.q, self.v, a, f, WORLD_ALIGNED, classical=True)[:3] for f in self.frames])

    def forces(self, y: ca.SX) -> ca.SX:
        """The point forces ``T y`` (3 nc) of the rows' multipliers ``y``."""
        return y if self.T is None else self.T @ y

    def stance_rows(self, a: ca.SX, y: ca.SX) -> ca.SX:
        """The rows' residual ``S T^T (J a + gamma) + (I - S) y`` (module docstring)."""
        rigid = self.foot_accelerations(a)
        return self.S @ (rigid if self.T is None else self.T.T @ rigid) + y - self.S @ y

    def solve(self, r1: ca.SX, r2: ca.SX) -> Tuple[ca.SX, ca.SX]:
        """``K^-1 [r1; r2]`` with ``K = [M, -G^T; S G, I - S]``, for right-hand sides whose swing rows of
        ``r2`` are zero, by the tree-sparse factorization of ``M`` and the masked operational-space system."""
        Mr1 = ltl_solve(self.factor, r1)
        y = solve_ldlt(self.Lambda, self.S @ (r2 - self.G @ Mr1))
        return Mr1 + self.MG @ y, y

    def dynamics(self, tau: ca.SX) -> Tuple[ca.SX, ca.SX]:
        """Accelerations ``a`` (nv) and the rows' multipliers ``y`` for generalized forces ``tau`` (forces: :meth:`forces`)."""
        return self.solve(tau - self.C, -self.S @ self.drift)


def body_groups(bodies: Sequence[int], nc: int) -> List[List[int]]:
    """The contact points (of ``nc``) grouped by their rigid body ``bodies`` (nc,; empty: each on its own), in the
    order of their first points. ``ValueError`` for a body with two points (a line: a rotation about it stays free)."""
    if len(bodies) and len(bodies) != nc:
        raise ValueError(f"bodies: expected one body per contact point ({nc}), got {len(bodies)}")
    groups: Dict[int, List[int]] = {}
    for i, body in enumerate(bodies if len(bodies) else range(nc)):
        groups.setdefault(body, []).append(i)
    for members in groups.values():
        if len(members) == 2:
            raise ValueError(f"bodies: two contact points on one body (points {members}) leave a rotation about their line free; give three or more")
    return sorted(groups.values())


def rows_holding(group: Sequence[int]) -> int:
    """The rows that hold a group of points on one body (:func:`body_groups`): a lone point's three, a shared body's six."""
    return 3 if len(group) == 1 else 6


def least_norm_forces(points: Sequence[ca.SX], groups: Sequence[Sequence[int]]) -> ca.SX:
    """``T`` (3 nc x rows): the point forces ``f = T y`` of the rows' multipliers ``y``, block-diagonal over the
    ``groups`` of points (:func:`body_groups`; ``points`` their WORLD positions): ``W^T = [I, -[r_i]x]`` per point of a
    shared body (six rows; ``r_i`` from the body's points' centroid), ``I3`` for a point alone (module docstring)."""
    nc = len(points)
    T = ca.SX.zeros(3 * nc, sum(rows_holding(g) for g in groups))
    column = 0
    for members in groups:
        if len(members) == 1:
            T[3 * members[0] : 3 * members[0] + 3, column : column + 3] = ca.SX.eye(3)
            column += 3
            continue
        centroid = sum(points[i] for i in members) / len(members)
        for i in members:
            T[3 * i : 3 * i + 3, column : column + 3] = ca.SX.eye(3)
            T[3 * i : 3 * i + 3, column + 3 : column + 6] = -ca.skew(points[i] - centroid)  # the block of W^T: [r]x^T = -[r]x
        column += 6
    return T


def contact_dynamics_function(tree: RigidBodyTree, parents: Sequence[int], frames: Sequence[str], B: np.ndarray, name: str, bodies: Sequence[int] = ()) -> ca.Function:
    """``(x, u, s) -> (a, f)``: the KKT contact dynamics with actuator torques ``tau = B u``,
    whose Jacobian is the RNEA identity's, ``-K^-1 dR/dx`` (``R`` the RNEA residual and the stance rows
    :meth:`ContactKKT.stance_rows`). ``x = [q; v]``; ``bodies``: as for :class:`ContactKKT`."""
    nq, nv, nc = tree.nq, tree.nv, len(frames)
    x, u, s = ca.SX.sym("x", nq + nv), ca.SX.sym("u", B.shape[1]), ca.SX.sym("s", nc)
    q, v = x[:nq], x[nq:]
    kkt = ContactKKT(tree, parents, frames, q, v, s, bodies)
    a, y = kkt.dynamics(ca.DM(B) @ u)
    rows = y.numel()

    # Jacobian by the identity: dR/dx at fixed a, y (symbols), then substituted
    a_fix, y_fix = ca.SX.sym("a_fix", nv), ca.SX.sym("y_fix", rows)
    f_fix = kkt.forces(y_fix)
    point_forces = [(frame, f_fix[3 * i : 3 * i + 3]) for i, frame in enumerate(frames)]
    residual = ca.vertcat(tree.rnea(q, v, a_fix, point_forces=point_forces), kkt.stance_rows(a_fix, y_fix))
    fixed, solution = ca.vertcat(a_fix, y_fix), ca.vertcat(a, y)
    dR_dx = ca.substitute(ca.jacobian(residual, x), fixed, solution)
    da_dx, dy_dx = kkt.solve(-dR_dx[:nv, :], -dR_dx[nv:, :])
    da_du, dy_du = kkt.solve(ca.DM(B), ca.SX.zeros(rows, B.shape[1]))
    df_dx, df_du = kkt.forces(dy_dx), kkt.forces(dy_du)
    if kkt.T is not None:  # the forces' map turns with the bodies: d(T y)/dx at fixed y
        df_dx = df_dx + ca.substitute(ca.jacobian(f_fix, x), fixed, solution)
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
    return ca.Function(name, [x, u, s], [a, kkt.forces(y)], ["x", "u", "s"], ["a", "f"], {"cse": True, "custom_jacobian": jacobian, "jac_penalty": 0})


def plastic_impact_function(tree: RigidBodyTree, parents: Sequence[int], frames: Sequence[str], name: str, bodies: Sequence[int] = ()) -> ca.Function:
    """``(x, s) -> x+``: ``x = [q; v]`` with the velocities of the stance contacts ``s`` (nc,, 0/1) stopped by a
    plastic impact, the least change of kinetic energy that stops them:

        v+ = v - M^-1 G^T (S G M^-1 G^T S + I - S)^-1 S G v

    with the rows ``G`` that hold the contacts (:class:`ContactKKT`: a point's three, a shared body's six; ``bodies``
    as there). Those rows vanish on the same velocities as the stance points' own rows ``J_s`` (a rigid body whose
    points stand still stands still), so this is ``v - M^-1 J_s^T (J_s M^-1 J_s^T)^+ J_s v``, without the
    pseudo-inverse that a sole's dependent corner rows need. ``q`` is unchanged."""
    nq, nv = tree.nq, tree.nv
    x, s = ca.SX.sym("x", nq + nv), ca.SX.sym("s", len(frames))
    q, v = x[:nq], x[nq:]
    kkt = ContactKKT(tree, parents, frames, q, v, s, bodies)
    change = kkt.solve(ca.SX.zeros(nv), -kkt.S @ (kkt.G @ v))[0]
    return ca.Function(name, [x, s], [ca.vertcat(q, v + change)], ["x", "s"], ["x_plus"], {"cse": True})
