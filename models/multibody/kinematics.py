"""Forward kinematics on a :class:`KinematicTree`: placements, joint motions, frames.

Notation (Featherstone / pinocchio): ``lambda(i)`` is the parent of joint
``i``; ``lambda_M_i(q) = (R, p)`` places joint frame ``i`` in the parent joint
frame and ``o_M_i`` in the world; ``S_i`` is the motion subspace (joint frame).
Per-joint quantities are lists indexed like pinocchio's joints (entry 0 = the
universe). Spatial velocities ``v_i`` and accelerations ``a_i`` are in the
joint-LOCAL frame ``i``. All expressions are CasADi SX; q and v are columns.
Our free-flyer configuration is ``[x, y, z, qw, qx, qy, qz]``.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import casadi as ca
import numpy as np

from lie import quat_to_rot, skew

from .spatial import Transform, act_motion, axis_rotation, compose, cross_motion, inv_act_motion
from .tree import FREE_FLYER, PRISMATIC, REVOLUTE, Joint, KinematicTree

#: Reference frames of frame Jacobians and frame velocities (pinocchio's names).
LOCAL, WORLD, LOCAL_WORLD_ALIGNED = "LOCAL", "WORLD", "LOCAL_WORLD_ALIGNED"
REFERENCES = (LOCAL, WORLD, LOCAL_WORLD_ALIGNED)

_IDENTITY: Transform = (np.eye(3), np.zeros((3, 1)))


def joint_placement(joint: Joint, q: ca.SX) -> Transform:
    """``lambda_M_i(q) = placement * M_J(q_i)`` with ``q_i = q[idx_q : idx_q + nq]``."""
    qj = q[joint.idx_q : joint.idx_q + joint.nq]
    R0, p0 = joint.placement
    if joint.kind == REVOLUTE:
        return ca.mtimes(R0, axis_rotation(joint.axis, qj)), p0
    if joint.kind == PRISMATIC:
        return R0, ca.mtimes(np.reshape(R0 @ joint.axis, (3, 1)), qj) + p0
    assert joint.kind == FREE_FLYER
    return compose(joint.placement, (quat_to_rot(qj[3:7]), qj[0:3]))


def local_placements(tree: KinematicTree, q: ca.SX) -> list[Optional[Transform]]:
    """``[None, lambda_M_1(q), ..., lambda_M_{nj-1}(q)]``."""
    return [None] + [joint_placement(j, q) for j in tree.joints]


def world_placements(tree: KinematicTree, local: Sequence[Optional[Transform]]) -> list[Transform]:
    """``o_M_i = o_M_lambda(i) * lambda_M_i`` (entry 0: identity)."""
    world = [_IDENTITY]
    for j in tree.joints:
        world.append(compose(world[j.parent], local[j.index]) if j.parent > 0 else local[j.index])
    return world


def joint_velocities(
    tree: KinematicTree, local: Sequence[Optional[Transform]], v: ca.SX
) -> tuple[list[Any], list[Any]]:
    """Spatial velocities ``v_i = i_X_lambda v_lambda + S_i qd_i`` and joint motions ``S_i qd_i``.

    Both lists are in joint-local frames; entry 0 (universe) is zero.
    """
    vel: list[Any] = [ca.SX.zeros(6, 1)]
    vJ: list[Any] = [ca.SX.zeros(6, 1)]
    for j in tree.joints:
        vj = ca.mtimes(j.S, v[j.idx_v : j.idx_v + j.nv])
        vJ.append(vj)
        vel.append(inv_act_motion(local[j.index], vel[j.parent]) + vj if j.parent > 0 else vj)
    return vel, vJ


def bias_acceleration(joint: Joint, vel: Sequence[Any], vJ: Sequence[Any]) -> Optional[ca.SX]:
    """``c_i = v_i x (S_i qd_i)`` (``None`` for a child of the universe, where it vanishes)."""
    if joint.parent == 0:
        return None
    return cross_motion(vel[joint.index], vJ[joint.index])


def joint_accelerations(
    tree: KinematicTree,
    local: Sequence[Optional[Transform]],
    vel: Sequence[Any],
    vJ: Sequence[Any],
    a: ca.SX,
    a0: Any,
) -> list[Any]:
    """``a_i = i_X_lambda a_lambda + S_i qdd_i + c_i`` (joint-local), with ``a_0 = a0`` (6,).

    ``a0 = -gravity`` folds gravity into the recursion (RNEA); ``a0 = 0`` gives
    the true spatial accelerations.
    """
    acc: list[Any] = [ca.DM(np.reshape(a0, (6, 1)))]
    for j in tree.joints:
        ai = inv_act_motion(local[j.index], acc[j.parent]) + ca.mtimes(j.S, a[j.idx_v : j.idx_v + j.nv])
        c = bias_acceleration(j, vel, vJ)
        acc.append(ai if c is None else ai + c)
    return acc


def frame_placement(tree: KinematicTree, world: Sequence[Transform], frame: int) -> Transform:
    """``o_M_f = o_M_parent * parent_M_f`` of frame index ``frame``."""
    fr = tree.frames[frame]
    if fr.parent == 0:
        return fr.placement
    return compose(world[fr.parent], fr.placement)


def frame_jacobian(tree: KinematicTree, world: Sequence[Transform], frame: int, reference: str) -> ca.SX:
    """Frame Jacobian ``J`` (6 x nv, ``[linear; angular]``) with ``v_f = J v``.

    Column for DoF ``k`` of supporting joint ``j``, motion ``s = S_j e_k``:
    angular ``w = R_j s_w`` (world axes), linear ``R_j s_v + w x d``, with
    ``d = p_f - p_j`` for LOCAL_WORLD_ALIGNED (velocity of the frame origin,
    world axes) and ``d = -p_j`` for WORLD (the spatial velocity at the world
    origin). LOCAL rotates the LOCAL_WORLD_ALIGNED columns by ``R_f^T``.
    Columns of joints that do not support the frame are zero.
    """
    Rf, pf = frame_placement(tree, world, frame)
    J = ca.SX.zeros(6, tree.nv)
    for i in tree.support(tree.frames[frame].parent):
        joint = tree.joint(i)
        Rj, pj = world[i]
        d = -pj if reference == WORLD else pf - pj
        w = ca.mtimes(Rj, joint.S[3:, :])
        lin = ca.mtimes(Rj, joint.S[:3, :]) - ca.mtimes(skew(d), w)
        if reference == LOCAL:
            lin, w = ca.mtimes(Rf.T, lin), ca.mtimes(Rf.T, w)
        J[:, joint.idx_v : joint.idx_v + joint.nv] = ca.vertcat(lin, w)
    return J


def frame_motion(
    tree: KinematicTree, world: Sequence[Transform], frame: int, m: Any, reference: str
) -> ca.SX:
    """A spatial motion ``m`` of the frame's parent joint (joint-local) seen at the frame.

    LOCAL: ``f_X_j m`` (frame axes, frame origin); LOCAL_WORLD_ALIGNED: the same
    two vectors rotated to world axes by ``R_f``; WORLD: ``o_X_j m`` (world axes,
    world origin). Used for frame velocities and spatial accelerations.
    """
    fr = tree.frames[frame]
    if reference == WORLD:
        return act_motion(world[fr.parent], m)
    local = inv_act_motion(fr.placement, m)
    if reference == LOCAL:
        return local
    Rf = frame_placement(tree, world, frame)[0]
    return ca.vertcat(ca.mtimes(Rf, local[:3]), ca.mtimes(Rf, local[3:]))


def external_wrenches(
    tree: KinematicTree,
    world: Sequence[Transform],
    fext: Optional[Any],
    point_forces: Sequence[tuple[int, Any]] = (),
) -> list[Optional[ca.SX]]:
    """Joint-local external wrenches ``[f; n]`` acting ON each body (entry 0 unused).

    ``fext``: 6 x njoints, column ``i`` the joint-local wrench on body ``i``
    (pinocchio's ``fext``), or ``None``. ``point_forces``: ``(frame, f)`` with
    ``f`` (3 x 1) a force in WORLD axes at the frame origin; on the parent joint
    ``j`` it is the wrench ``[R_j^T f; p x R_j^T f]``, ``p`` the frame origin in
    joint ``j``'s frame (so its generalized force is ``J^T f``, ``J`` the
    LOCAL_WORLD_ALIGNED linear Jacobian). ``None`` marks a body without wrench.
    """
    wrenches: list[Optional[ca.SX]] = [None] * tree.njoints
    if fext is not None:
        for i in range(1, tree.njoints):
            wrenches[i] = fext[:, i]
    for frame, f in point_forces:
        fr = tree.frames[frame]
        if fr.parent == 0:
            continue  # a force on the fixed world does no work
        f_local = ca.mtimes(world[fr.parent][0].T, f)
        w = ca.vertcat(f_local, ca.cross(fr.placement[1], f_local))
        wrenches[fr.parent] = w if wrenches[fr.parent] is None else wrenches[fr.parent] + w
    return wrenches
