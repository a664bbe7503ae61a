"""Analytic inverse kinematics of 3-joint legs (hip abduction, thigh, knee).

One solver for every leg of the form: a hip joint about an axis ``a``, then a
thigh joint and a calf (knee) joint about parallel axes ``n`` perpendicular to
``a``, ending at a foot point (Go1, Go2, A1, B1, Solo12, ANYmal, HyQ, and wheeled
legs whose foot point is the wheel centre). :class:`LegGeometry` holds the leg
as vectors in the BASE frame (the frame of the hip joint's parent, the floating
base for a quadruped) at zero joint angles, read from a pinocchio model by
:func:`leg_geometry_from_model`; joint frames may be rotated arbitrarily and
links may have offsets in any direction.

Math. Let ``p`` be the foot relative to the hip joint origin and ``e2 = n x a``,
so ``(a, e2, n)`` is orthonormal. Rotating by ``q_hip`` about ``a`` keeps the
component ``p.a`` and rotates the ``(e2, n)`` components; every link offset
along ``n`` adds up to the constant lateral offset
``c = n.(hip_to_thigh + thigh + calf)``. Hence, with ``P = (p.e2, p.n)``::

    (v2, c) = Rot2(-q_hip) P,   v2 = s sqrt(|P|^2 - c^2),

where the sign ``s`` picks the hip branch: preferably the sign of ``v2`` at
zero joint angles (the foot on the same side of the hip as in the zero pose,
"below" it for a standing quadruped), the other sign only where the preferred
branch cannot reach the target. In the plane perpendicular to ``n`` (2-D
coordinates along ``(a, e2)``) the thigh vector ``b`` and the calf vector ``f``
then solve a two-link problem for ``w = (p.a - t.a, v2 - t.e2)``, ``t`` the
hip-to-thigh offset::

    |w|^2 = |b|^2 + |f|^2 + 2 |b| |f| cos(psi),

``psi`` the angle from ``b`` to the turned calf; ``psi = -acos(.)`` (solution
0) or ``+acos(.)`` (solution 1). With ``beta_b``, ``beta_f`` the planar angles
of ``b`` and ``f`` and ``sigma = +-1`` the sign of the calf axis along ``n``,
``q_calf = sigma (psi + beta_b - beta_f)`` and ``q_thigh`` is the angle turning
``b + |f| (cos, sin)(beta_b + psi)`` onto ``w``. For Unitree legs (``n = +y``)
solution 0 is the usual posture with a negative calf angle. Targets with
``|P| < |c|`` or outside the annulus ``||b| - |f|| <= |w| <= |b| + |f|`` on both
branches are unreachable and give ``NaN``. Angles are returned in
``(-pi, pi]``; :func:`nearest_ik` wraps them into the joint limits.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pinocchio as pin

from lie import _backend as B
from lie import check_unit_quaternion, quat_to_rot, so3_exp

from .joint_limits import wrap_into_limits, wrap_to_pi
from .robot_data import joint_position_limits

#: Joints per leg: hip, thigh, calf.
JOINTS_PER_LEG = 3
#: Tolerance on unit axes being perpendicular/parallel and on points lying on an axis.
GEOMETRY_TOL = 1e-9
#: How far (relative) the law-of-cosines ratio may exceed 1 and still count as reachable.
REACH_TOL = 1e-12
#: A knee closer than this fraction of thigh + calf to the line from the thigh joint to the foot
#: counts as straight (:func:`knee_direction` returns 0).
STRAIGHT_KNEE_TOL = 1e-2


_VECTOR_FIELDS = ("hip_pos", "hip_axis", "thigh_axis", "calf_axis", "hip_to_thigh", "thigh", "calf")


@dataclass(frozen=True, eq=False)
class LegGeometry:
    """A 3-joint leg, all vectors in the base frame at zero joint angles (meters).

    hip_pos: hip joint origin. hip_axis, thigh_axis, calf_axis: unit joint axes
    (``thigh_axis`` perpendicular to ``hip_axis``, ``calf_axis = +-thigh_axis``).
    hip_to_thigh, thigh, calf: vectors hip origin -> thigh origin -> calf (knee)
    origin -> foot. joint_names: (hip, thigh, calf). v_indices: their indices in
    the model's velocity vector (``None`` for a leg not read from a model).
    lower, upper: their position limits (3,).
    """

    hip_pos: np.ndarray
    hip_axis: np.ndarray
    thigh_axis: np.ndarray
    calf_axis: np.ndarray
    hip_to_thigh: np.ndarray
    thigh: np.ndarray
    calf: np.ndarray
    joint_names: tuple[str, str, str] = ("hip", "thigh", "calf")
    v_indices: tuple[int, int, int] | None = None
    lower: np.ndarray = field(default_factory=lambda: np.full(JOINTS_PER_LEG, -np.inf))
    upper: np.ndarray = field(default_factory=lambda: np.full(JOINTS_PER_LEG, np.inf))

    def __post_init__(self) -> None:
        for name in (*_VECTOR_FIELDS, "lower", "upper"):
            object.__setattr__(self, name, B.vector(getattr(self, name), 3, name, finite=name not in ("lower", "upper")).copy())
        for name in ("hip_axis", "thigh_axis", "calf_axis"):
            if abs(np.linalg.norm(getattr(self, name)) - 1.0) > GEOMETRY_TOL:
                raise ValueError(f"{name}: expected a unit vector, got norm {np.linalg.norm(getattr(self, name)):.9g}")
        if abs(self.hip_axis @ self.thigh_axis) > GEOMETRY_TOL:
            dot = self.hip_axis @ self.thigh_axis
            raise ValueError(f"thigh_axis: must be perpendicular to hip_axis (dot product {dot:.3g})")
        if np.linalg.norm(np.cross(self.thigh_axis, self.calf_axis)) > GEOMETRY_TOL:
            raise ValueError(f"calf_axis: must be parallel to thigh_axis, got {self.calf_axis} vs {self.thigh_axis}")
        if min(self.thigh_length, self.calf_length) <= GEOMETRY_TOL:
            raise ValueError("thigh/calf: links perpendicular to the knee axis must have non-zero length")

    @property
    def plane(self) -> np.ndarray:
        """Rows ``a`` and ``e2 = n x a``: 2-D coordinates in the plane perpendicular to ``n``."""
        return np.stack([self.hip_axis, np.cross(self.thigh_axis, self.hip_axis)])

    @property
    def lateral_offset(self) -> float:
        """Signed foot offset along the thigh axis, ``c = n.(hip_to_thigh + thigh + calf)``."""
        return float(self.thigh_axis @ (self.hip_to_thigh + self.thigh + self.calf))

    @property
    def thigh_length(self) -> float:
        """Thigh length in the plane perpendicular to the knee axis."""
        return float(np.linalg.norm(self.plane @ self.thigh))

    @property
    def calf_length(self) -> float:
        """Calf (knee to foot) length in the plane perpendicular to the knee axis."""
        return float(np.linalg.norm(self.plane @ self.calf))


def _solve_hip_branch(g: LegGeometry, rel: np.ndarray, branch: float) -> tuple[np.ndarray, np.ndarray]:
    """Both knee solutions ``(..., 2, 3)`` of one hip branch (``sign(v2) = branch``) and where they exist."""
    a, n = g.hip_axis, g.thigh_axis
    e2 = np.cross(n, a)
    c = g.lateral_offset
    # hip: rotating (v2, c) by q_hip about a gives P = (p.e2, p.n)
    P2, Pn = rel @ e2, rel @ n
    rho_sq = P2**2 + Pn**2 - c**2
    v2 = branch * np.sqrt(np.maximum(rho_sq, 0.0))
    q_hip = wrap_to_pi(np.arctan2(Pn, P2) - np.arctan2(c, v2))
    # two-link problem in the plane perpendicular to n, coordinates along (a, e2)
    plane = g.plane
    w = np.stack([rel @ a, v2], axis=-1) - plane @ g.hip_to_thigh
    b, f = plane @ g.thigh, plane @ g.calf
    lb, lf = g.thigh_length, g.calf_length
    cos_psi = (np.sum(w * w, axis=-1) - lb**2 - lf**2) / (2 * lb * lf)
    reachable = (rho_sq >= -REACH_TOL * c**2) & (np.abs(cos_psi) <= 1 + REACH_TOL)
    psi = np.arccos(np.clip(cos_psi, -1.0, 1.0))
    sigma = 1.0 if g.calf_axis @ n > 0 else -1.0  # the calf turns by sigma * q_calf about n
    beta_b, beta_f = np.arctan2(b[1], b[0]), np.arctan2(f[1], f[0])
    solutions = []
    for knee in (-psi, psi):
        q_calf = wrap_to_pi(sigma * (knee + beta_b - beta_f))
        foot_dir = beta_b + knee  # direction of the turned calf vector in the plane
        g2 = b + lf * np.stack([np.cos(foot_dir), np.sin(foot_dir)], axis=-1)  # turned by q_thigh onto w
        q_thigh = wrap_to_pi(np.arctan2(w[..., 1], w[..., 0]) - np.arctan2(g2[..., 1], g2[..., 0]))
        solutions.append(np.stack([q_hip, q_thigh, q_calf], axis=-1))
    return np.stack(solutions, axis=-2), reachable


def leg_ik(geometry: LegGeometry, foot_pos_in_base: np.ndarray) -> np.ndarray:
    """Joint angles ``(hip, thigh, calf)`` placing the foot at ``foot_pos_in_base``.

    ``foot_pos_in_base`` is ``(3,)`` (or ``(N, 3)``) in the base frame. Returns
    ``(2, 3)`` (or ``(N, 2, 3)``): row 0 the knee solution with negative
    ``psi`` (``psi`` the angle from the thigh to the calf), row 1 the other, both on the preferred
    hip branch (foot on the zero-pose side of the hip) or, where that branch
    cannot reach the target, on the other one; both rows ``NaN`` where no
    branch reaches it. Angles in ``(-pi, pi]``.
    """
    g = geometry
    p = np.asarray(foot_pos_in_base, dtype=float)
    if p.ndim not in (1, 2) or p.shape[-1] != 3:
        raise ValueError(f"foot_pos_in_base: expected shape (3,) or (N, 3), got {p.shape}")
    rel = p - g.hip_pos
    preferred = 1.0 if (g.hip_to_thigh + g.thigh + g.calf) @ np.cross(g.thigh_axis, g.hip_axis) >= 0 else -1.0
    first, first_ok = _solve_hip_branch(g, rel, preferred)
    other, other_ok = _solve_hip_branch(g, rel, -preferred)
    out = np.where(first_ok[..., None, None], first, other)
    return np.where((first_ok | other_ok)[..., None, None], out, np.nan)


def leg_points(geometry: LegGeometry, angles: np.ndarray) -> np.ndarray:
    """Thigh-joint origin, knee (calf-joint origin) and foot (3, 3), rows in the base frame.

    Product of exponentials from the zero-angle geometry: with ``R_j`` the
    rotation by angle ``q_j`` about joint ``j``'s axis,
    ``thigh = hip_pos + R_hip hip_to_thigh``, ``knee = thigh + R_hip R_thigh thigh_vec``
    and ``foot = knee + R_hip R_thigh R_calf calf_vec``. ``angles`` is
    ``(hip, thigh, calf)`` in radians.
    """
    g = geometry
    q = B.vector(angles, 3, "angles")
    hip, thigh, calf = (so3_exp(axis * angle) for axis, angle in zip((g.hip_axis, g.thigh_axis, g.calf_axis), q))
    thigh_origin = g.hip_pos + hip @ g.hip_to_thigh
    knee = thigh_origin + hip @ thigh @ g.thigh
    return np.stack([thigh_origin, knee, knee + hip @ thigh @ calf @ g.calf])


def knee_direction(geometry: LegGeometry, angles: np.ndarray) -> int:
    """Where the knee points along the base's forward axis ``x``: +1 forward, -1 backward, 0 straight.

    The sign of the ``x`` component of the knee's offset from the line joining
    the thigh-joint origin and the foot (:func:`leg_points`); 0 when that
    component is shorter than :data:`STRAIGHT_KNEE_TOL` times ``thigh + calf``
    (in-plane lengths). Unitree legs at their usual negative calf angles point backward.
    """
    thigh_origin, knee, foot = leg_points(geometry, angles)
    line = foot - thigh_origin
    rel = knee - thigh_origin
    offset = rel - (rel @ line) / (line @ line) * line if line @ line > 0 else rel
    if abs(offset[0]) < STRAIGHT_KNEE_TOL * (geometry.thigh_length + geometry.calf_length):
        return 0
    return 1 if offset[0] > 0 else -1


def _joint_id(model: pin.Model, name: str, arg: str) -> int:
    if not model.existJointName(name):
        raise ValueError(f"{arg}: no joint {name!r} in model {model.name!r}")
    return model.getJointId(name)


def _revolute_axis(model: pin.Model, joint_id: int) -> np.ndarray | None:
    """Unit axis (joint frame) of a 1-DoF revolute joint through its origin, else ``None``.

    Read from the joint's motion subspace ``S = [linear; angular]`` at the
    neutral configuration: revolute means ``linear = 0``.
    """
    joint = model.joints[joint_id]
    if joint.nv != 1:
        return None
    data = joint.createData()
    joint.calc(data, pin.neutral(model))
    motion = np.asarray(data.S).reshape(6)
    if np.linalg.norm(motion[:3]) > GEOMETRY_TOL:
        return None
    return motion[3:] / np.linalg.norm(motion[3:])


def _moves_point(model: pin.Model, data: pin.Data, joint_id: int, point: np.ndarray) -> bool:
    """False only for a revolute joint whose axis passes through ``point`` (world frame, from ``data``)."""
    axis = _revolute_axis(model, joint_id)
    if axis is None:
        return True
    placement = data.oMi[joint_id]
    return bool(np.linalg.norm(np.cross(placement.rotation @ axis, point - placement.translation)) > GEOMETRY_TOL)


def leg_geometry_from_model(
    pin_model: pin.Model, hip_joint: str, thigh_joint: str, calf_joint: str, foot_frame: str
) -> LegGeometry:
    """Read a leg's :class:`LegGeometry` from a pinocchio model at zero joint angles.

    ``thigh_joint`` must be the child of ``hip_joint`` and ``calf_joint`` of
    ``thigh_joint``, all three revolute. ``foot_frame`` must hang below
    ``calf_joint``; joints in between (a wheel) must be revolute with the foot
    point on their axis, so they do not move it. The base frame is the frame
    of ``hip_joint``'s parent joint. Raises ``ValueError`` naming the argument
    otherwise, or when the axes are not as :class:`LegGeometry` requires.
    """
    model = pin_model
    args = (("hip_joint", hip_joint), ("thigh_joint", thigh_joint), ("calf_joint", calf_joint))
    ids = [_joint_id(model, name, arg) for arg, name in args]
    for (arg, name), parent, child in zip(args[1:], ids, ids[1:]):
        if model.parents[child] != parent:
            raise ValueError(f"{arg}: joint {name!r} is not a child of {model.names[parent]!r}")
    if not model.existFrame(foot_frame):
        raise ValueError(f"foot_frame: no frame {foot_frame!r} in model {model.name!r}")
    data = model.createData()
    pin.framesForwardKinematics(model, data, pin.neutral(model))
    base = data.oMi[model.parents[ids[0]]]
    foot_world = data.oMf[model.getFrameId(foot_frame)].translation
    between = [model.frames[model.getFrameId(foot_frame)].parentJoint]  # joints from the foot up to the calf
    while between[-1] != ids[2]:
        if between[-1] == 0:
            raise ValueError(f"foot_frame: {foot_frame!r} is not attached below calf_joint {calf_joint!r}")
        between.append(model.parents[between[-1]])
    for joint in between[:-1]:
        if _moves_point(model, data, joint, foot_world):
            name = model.names[joint]
            raise ValueError(f"foot_frame: joint {name!r} between calf_joint and {foot_frame!r} moves the foot")
    axes, origins = [], []
    for (arg, name), jid in zip(args, ids):
        axis = _revolute_axis(model, jid)
        if axis is None:
            raise ValueError(f"{arg}: joint {name!r} ({model.joints[jid].shortname()}) is not a revolute joint")
        axes.append(base.rotation.T @ data.oMi[jid].rotation @ axis)
        origins.append(base.actInv(data.oMi[jid].translation))
    foot = base.actInv(foot_world)
    limits = np.array([joint_position_limits(model, jid) for jid in ids])
    return LegGeometry(
        hip_pos=origins[0],
        hip_axis=axes[0],
        thigh_axis=axes[1],
        calf_axis=axes[2],
        hip_to_thigh=origins[1] - origins[0],
        thigh=origins[2] - origins[1],
        calf=foot - origins[2],
        joint_names=(hip_joint, thigh_joint, calf_joint),
        v_indices=tuple(int(model.joints[jid].idx_v) for jid in ids),
        lower=limits[:, 0],
        upper=limits[:, 1],
    )


def legs_from_feet(pin_model: pin.Model, foot_frames: Sequence[str]) -> list[LegGeometry]:
    """One :class:`LegGeometry` per foot frame, finding each leg's joints from the tree.

    Walking up from the foot, joints that do not move the foot point (a wheel
    spinning about an axis through it) are skipped; the next three are the
    calf, thigh and hip joints. Legs come back in the order of ``foot_frames``.
    """
    model = pin_model
    data = model.createData()
    pin.framesForwardKinematics(model, data, pin.neutral(model))
    legs = []
    for foot in foot_frames:
        if not model.existFrame(foot):
            raise ValueError(f"foot_frames: no frame {foot!r} in model {model.name!r}")
        foot_world = data.oMf[model.getFrameId(foot)].translation
        joint = model.frames[model.getFrameId(foot)].parentJoint
        while joint != 0 and not _moves_point(model, data, joint, foot_world):
            joint = model.parents[joint]
        calf = joint
        thigh = model.parents[calf]
        hip = model.parents[thigh]
        if min(calf, thigh, hip) == 0:
            raise ValueError(f"foot_frames: fewer than three joints move {foot!r}")
        legs.append(leg_geometry_from_model(model, model.names[hip], model.names[thigh], model.names[calf], foot))
    return legs


def quadruped_ik(
    legs: Sequence[LegGeometry], base_pos: np.ndarray, base_quat: np.ndarray, foot_positions_world: np.ndarray
) -> np.ndarray:
    """Both IK solutions of every leg for given world foot positions and base pose.

    ``base_pos`` (3,) and ``base_quat`` ``[qw, qx, qy, qz]`` (body to world,
    unit to 1e-6) place the base; ``foot_positions_world`` is ``(L, 3)`` or
    ``(3 L,)`` in the order of ``legs``. Each foot is brought into the base
    frame, ``Rot(q)^T (p - base_pos)``, and solved by :func:`leg_ik`.
    Returns ``(3 L, 2)``: rows ``3 i .. 3 i + 2`` are leg ``i``'s (hip, thigh,
    calf), column ``j`` solution ``j``; ``NaN`` where unreachable. With
    ``legs`` in the model's leg order (Go1/Go2: FL, FR, RL, RR) the rows are
    the nominal joint order.
    """
    base_pos = B.vector(base_pos, 3, "base_pos")
    base_quat = B.vector(base_quat, 4, "base_quat")
    check_unit_quaternion(base_quat, "base_quat")
    feet = leg_end_positions(foot_positions_world, len(legs), "foot_positions_world")
    feet_base = (feet - base_pos) @ quat_to_rot(base_quat)  # rows Rot^T (p - p_base)
    solutions = [leg_ik(leg, foot) for leg, foot in zip(legs, feet_base)]  # each (2, 3)
    return np.concatenate([sol.T for sol in solutions], axis=0)


def leg_end_positions(positions: Any, legs: int, name: str) -> np.ndarray:
    """``positions`` of ``legs`` leg ends, (L, 3) or (3 L,), as a finite (L, 3) array; errors name ``name``."""
    feet = B.numeric_array(positions, name)
    if feet.size != 3 * legs or feet.ndim not in (1, 2) or (feet.ndim == 2 and feet.shape[1] != 3):
        raise ValueError(f"{name}: expected shape ({legs}, 3) or ({3 * legs},), got {feet.shape}")
    return B.check_finite(feet.reshape(-1, 3), name)


def leg_limits(legs: Sequence[LegGeometry]) -> tuple[np.ndarray, np.ndarray]:
    """Stacked joint position limits ``(lower, upper)``, each ``(3 L,)``, in the order of :func:`quadruped_ik`."""
    return np.concatenate([leg.lower for leg in legs]), np.concatenate([leg.upper for leg in legs])


def nearest_ik(
    q_joints_current: np.ndarray,
    solutions: np.ndarray,
    obey_limits: bool = True,
    limits: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """Per leg, the IK solution closest to the current joint angles.

    ``solutions`` is ``(3 L, 2)`` from :func:`quadruped_ik`, ``q_joints_current``
    ``(3 L,)`` in the same order. Every solution angle is first moved by
    ``2 pi k`` as close as possible to the current angle; with ``obey_limits``
    only representatives inside ``limits = (lower, upper)`` (each ``(3 L,)``,
    e.g. :func:`leg_limits`) are allowed and a solution with a joint that fits
    no representative is discarded. Of the remaining solutions of a leg, the
    one with the smallest Euclidean distance to the leg's current angles wins.
    Returns ``(3 L,)``; raises ``ValueError`` naming the leg when it has no
    valid solution (unreachable target or joint limits).
    """
    q = B.vector(q_joints_current, None, "q_joints_current")
    n = q.shape[0]
    sols = np.asarray(solutions, dtype=float)
    if n % JOINTS_PER_LEG or sols.shape != (n, 2):
        raise ValueError(
            f"q_joints_current/solutions: expected shapes (3 L,) and (3 L, 2), got {q.shape} and {sols.shape}"
        )
    if obey_limits:
        if limits is None:
            raise ValueError("limits: required when obey_limits=True (see leg_limits)")
        lower, upper = (B.vector(lim, n, name, finite=False) for lim, name in zip(limits, ("limits[0]", "limits[1]")))
    else:
        lower, upper = np.full(n, -np.inf), np.full(n, np.inf)
    candidates = wrap_into_limits(sols, lower[:, None], upper[:, None], reference=q[:, None])
    result = np.empty(n)
    for leg in range(n // JOINTS_PER_LEG):
        rows = slice(JOINTS_PER_LEG * leg, JOINTS_PER_LEG * (leg + 1))
        dist = np.linalg.norm(candidates[rows] - q[rows, None], axis=0)  # NaN if invalid
        if np.isnan(dist).all():
            reason = "unreachable target" if np.isnan(sols[rows]).all() else "no solution within the joint limits"
            where = f"leg {leg} (rows {rows.start}-{rows.stop - 1})"
            raise ValueError(f"solutions: {where} has no valid solution: {reason}")
        result[rows] = candidates[rows, int(np.nanargmin(dist))]
    return result
