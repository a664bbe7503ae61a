"""Closed-loop inverse kinematics (CLIK) of frames: damped least squares on the configuration manifold.

Each target gives a residual ``r(q)`` and its Jacobian ``J_r = dr/ddelta``
with respect to a tangent perturbation ``q (+) delta`` (:func:`trajopt.sim.integrate`):

- pose target ``T_d`` (4x4, frame to world) of a frame with world placement
  ``T(q)``: ``r = log6(T^-1 T_d)`` (6,, ``[linear; angular]`` in the frame,
  pinocchio's convention), ``J_r = -Jlog6(T_d^-1 T) J_local`` with ``J_local``
  the frame Jacobian in its own axes (pinocchio's CLIK example);
- position target ``p_d`` (3,): ``r = p(q) - p_d`` (world), ``J_r`` the
  world-aligned linear frame Jacobian.

Tasks are stacked (rows scaled by ``sqrt(weight)``) and every iteration takes
the damped least-squares step::

    delta = argmin |J delta + r|^2 + lambda |delta|^2 = -J^T (J J^T + lambda I)^-1 r,
    q <- q (+) step * delta,

with ``lambda = damping`` or, with ``adaptive_damping``, ``damping + |r|^2 / 2``
(Sugihara's Levenberg-Marquardt choice: heavy damping far from the target or
near singularities, Gauss-Newton close to it). Joint position limits of
1-DoF joints (from the pinocchio model) are kept by ``joint_limits``:
``"qp"`` (the default: the step is the bounded least-squares problem, solved
by quadprog), ``"clamp"`` (project after the step; with tiny damping a
singular start can throw joints onto their limits, where the iteration
stalls) or ``"none"``. The iteration succeeds when
every task's residual norm is below ``tol`` (mixing meters and radians, as
pinocchio's example does), and stops unsuccessfully after ``max_iter``
iterations or when the step stalls (a local minimum, e.g. an unreachable
target): no exception is raised for those.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, List, Sequence, Tuple

import numpy as np
import pinocchio as pin
import quadprog

from lie import Jlog6, log6
from lie import _backend as B
from models.robot_data import joint_position_limits

from .sim.integrate import VECTOR_JOINTS, integrate
from .sim.pin_numerics import PinNumerics

JOINT_LIMIT_MODES = ("clamp", "qp", "none")
#: Iterations changing ``q`` by less than this (norm, rad or m) count as stalled.
STALL_TOL = 1e-12


@dataclass(frozen=True, eq=False)
class FrameTarget:
    """A target for frame ``frame``: a pose (``pose``: 4x4 or ``pinocchio.SE3``) or a position (``position``: (3,)).

    Give exactly one of ``pose`` and ``position``. ``weight`` (> 0) scales the
    task in the stacked least squares.
    """

    frame: str
    pose: Any = None
    position: Any = None
    weight: float = 1.0

    def __post_init__(self) -> None:
        if (self.pose is None) == (self.position is None):
            raise ValueError(f"FrameTarget({self.frame!r}): give exactly one of pose and position")
        if self.pose is not None:
            T = self.pose.homogeneous if isinstance(self.pose, pin.SE3) else B.matrix(self.pose, (4, 4), "pose")
            R = T[:3, :3]
            if np.abs(R.T @ R - np.eye(3)).max() > 1e-6 or abs(np.linalg.det(R) - 1) > 1e-6 or np.abs(T[3] - [0, 0, 0, 1]).max() > 0:
                raise ValueError(f"pose: the target of frame {self.frame!r} is not a rigid transform")
            object.__setattr__(self, "pose", np.array(T, dtype=float))
        else:
            object.__setattr__(self, "position", B.vector(self.position, 3, "position").copy())
        if not (np.isfinite(self.weight) and self.weight > 0):
            raise ValueError(f"weight: expected a positive number, got {self.weight!r}")

    @property
    def size(self) -> int:
        """Number of residual rows (6 for a pose, 3 for a position)."""
        return 6 if self.pose is not None else 3


@dataclass
class IKResult:
    """Outcome of :func:`clik`.

    ``q`` (nq,) the last iterate, ``success`` whether every task's residual
    norm fell below ``tol``, ``iterations`` the number of steps taken,
    ``error`` the largest task residual norm at ``q``, ``errors`` that value
    per iterate (iterations + 1,), ``message`` why it stopped.
    """

    q: np.ndarray
    success: bool
    iterations: int
    error: float
    errors: np.ndarray = field(repr=False)
    message: str = ""


class _Tasks:
    """Residuals and Jacobians of the targets at a configuration."""

    def __init__(self, numerics: PinNumerics, targets: Sequence[FrameTarget]) -> None:
        self.numerics = numerics
        self.targets = list(targets)
        self.ids = [numerics.frame_id(t.frame, f"targets[{i}].frame") for i, t in enumerate(self.targets)]

    def evaluate(self, q: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Stacked weighted residual, its Jacobian (rows x nv) and the unweighted norm of each task."""
        num = self.numerics
        num.update_kinematics(q)
        residuals, jacobians, norms = [], [], []
        for target, fid in zip(self.targets, self.ids):
            T = num.frame_placement(fid)
            if target.pose is not None:
                iTd = np.linalg.solve(T, target.pose)
                r = log6(iTd)
                J = -Jlog6(np.linalg.inv(iTd)) @ num.frame_jacobian(fid, "LOCAL")
            else:
                r = T[:3, 3] - target.position
                J = num.frame_jacobian(fid, "LOCAL_WORLD_ALIGNED")[:3]
            w = np.sqrt(target.weight)
            residuals.append(w * r)
            jacobians.append(w * J)
            norms.append(np.linalg.norm(r))
        return np.concatenate(residuals), np.vstack(jacobians), np.array(norms)


def _limited_coordinates(pin_model: pin.Model) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(q indices, v indices, lower, upper)`` of the 1-DoF vector joints with a finite limit."""
    iq, iv, lo, hi = [], [], [], []
    for jid in range(1, pin_model.njoints):
        joint = pin_model.joints[jid]
        if joint.shortname() in VECTOR_JOINTS and joint.nq == 1:
            lower, upper = joint_position_limits(pin_model, jid)
            if np.isfinite(lower) or np.isfinite(upper):
                iq.append(joint.idx_q)
                iv.append(joint.idx_v)
                lo.append(lower)
                hi.append(upper)
    return np.array(iq, dtype=int), np.array(iv, dtype=int), np.array(lo), np.array(hi)


def clik(
    model: Any,
    targets: Sequence[FrameTarget] | FrameTarget,
    q0: Any = None,
    tol: float = 1e-4,
    max_iter: int = 1000,
    step: float = 0.1,
    damping: float = 1e-12,
    adaptive_damping: bool = False,
    joint_limits: str = "qp",
) -> IKResult:
    """A configuration (our convention, nq,) that places the target frames, by damped least squares.

    Each iteration stacks the targets' errors (position in m and, for full
    poses, orientation in rad, each scaled by its weight) and their frame
    Jacobians and takes the damped least-squares step ``-J^T (J J^T +
    lambda I)^-1 r`` on the configuration manifold; joint limits are kept by
    a QP (``joint_limits="qp"``), by clamping (``"clamp"``) or not at all
    (``"none"``). Returns an :class:`IKResult` (``q``, ``success``, the
    iterations, the final errors).

    ``model``: a MultibodyModel or ``pinocchio.Model``; ``targets``: one or
    several :class:`FrameTarget`; ``q0`` (nq,, our quaternion convention):
    the start (default: pinocchio's neutral configuration); ``step`` in
    ``(0, 1]``: the fraction of the least-squares step taken each iteration.
    A start outside the joint limits is first projected into them (unless
    ``joint_limits="none"``). Raises ``ValueError`` for bad arguments
    (unknown frame names, shapes, non-unit quaternions); an unreachable
    target returns ``success=False``.
    """
    numerics = PinNumerics(model)
    tasks = _Tasks(numerics, [targets] if isinstance(targets, FrameTarget) else targets)
    if not tasks.targets:
        raise ValueError("targets: expected at least one FrameTarget")
    if joint_limits not in JOINT_LIMIT_MODES:
        raise ValueError(f"joint_limits: expected one of {JOINT_LIMIT_MODES}, got {joint_limits!r}")
    for name, value, ok in (("tol", tol, tol > 0), ("step", step, 0 < step <= 1), ("damping", damping, damping >= 0), ("max_iter", max_iter, max_iter >= 0)):
        if not (np.isfinite(value) and ok):
            raise ValueError(f"{name}: invalid value {value!r}")
    pin_model = numerics.pin_model
    q = numerics.from_pinocchio(pin.neutral(pin_model)) if q0 is None else numerics.check_q(q0, "q0").copy()
    iq, iv, lower, upper = _limited_coordinates(pin_model) if joint_limits != "none" else (np.zeros(0, int),) * 2 + (np.zeros(0),) * 2
    q[iq] = np.clip(q[iq], lower, upper)
    errors: List[float] = []
    message = f"no convergence in {max_iter} iterations"
    for it in range(max_iter + 1):
        r, J, norms = tasks.evaluate(q)
        errors.append(float(norms.max()))
        if (norms < tol).all():
            return IKResult(q, True, it, errors[-1], np.array(errors), "converged")
        if it == max_iter:
            break
        lam = damping + (0.5 * r @ r if adaptive_damping else 0.0)
        if joint_limits == "qp" and iq.size:
            delta = _bounded_step(J, r, lam, (lower - q[iq]) / step, (upper - q[iq]) / step, iv)
        else:
            delta = -J.T @ np.linalg.solve(J @ J.T + lam * np.eye(J.shape[0]), r)
        q_next = integrate(pin_model, q, delta, step)
        q_next[iq] = np.clip(q_next[iq], lower, upper)
        if np.linalg.norm(q_next - q) < STALL_TOL:
            message = f"stalled after {it} iterations (local minimum of the residual, or blocked by joint limits)"
            break
        q = q_next
    return IKResult(q, False, len(errors) - 1, errors[-1], np.array(errors), message)


def _bounded_step(J: np.ndarray, r: np.ndarray, lam: float, lo: np.ndarray, hi: np.ndarray, iv: np.ndarray) -> np.ndarray:
    """``argmin |J d + r|^2 + lam |d|^2`` s.t. ``lo <= d[iv] <= hi`` (quadprog; infinite bounds dropped)."""
    nv = J.shape[1]
    G = J.T @ J + max(lam, 1e-10) * np.eye(nv)  # quadprog needs G positive definite
    rows, b = [], []
    for k, i in enumerate(iv):
        if np.isfinite(lo[k]):
            rows.append(np.eye(nv)[i])
            b.append(lo[k])
        if np.isfinite(hi[k]):
            rows.append(-np.eye(nv)[i])
            b.append(-hi[k])
    C = np.array(rows).T if rows else np.zeros((nv, 0))
    return quadprog.solve_qp(G, -J.T @ r, C, np.array(b, dtype=float), 0)[0]
