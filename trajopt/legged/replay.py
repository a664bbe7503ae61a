"""Verification by simulation: replay a legged solution's torques through the full dynamics.

The planned torques (between knots as the transcription interpolates them:
linear for trapezoidal collocation, quadratic for Hermite-Simpson, via
:meth:`Solution.evaluate`) drive a fine integration of the rigid-body dynamics in which the planned
contacts are enforced at the acceleration level: on an interval where foot
``i`` is in stance at both knots, its point acceleration is constrained,

    [ M   -J^T ] [ a ]   [ B u - C                              ]
    [ J    0   ] [ f ] = [ -Jdot v - 2 zeta w J v - w^2 (p - p_a) ],

``f`` the WORLD-frame contact forces, ``p_a`` the foot position where the
contact began (Baumgarte stabilization with frequency ``w`` and damping
``zeta`` keeps the foot there). On a lift-off or touch-down interval a foot
carries its planned force (interpolated like the torques);
swing feet are free (no ground collision).
The state is integrated with RK4 in the tangent space at each step (pinocchio's
``integrate`` for the configuration), ``substeps`` steps per knot interval.

Open loop, the replay drifts from the plan: the collocation's O(h^2) defect
error and the unstable (falling) dynamics of a legged robot grow it over time.
:class:`ReplayResult` reports the drift at the knots.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pinocchio as pin

from lie import quat_angle

from ..sim.pin_numerics import PinNumerics


@dataclass(frozen=True)
class ReplayResult:
    """Replayed states at the knots and their drift from the plan.

    ``states`` (N, nx); ``base_position_drift`` (N,) m; ``base_orientation_drift``
    (N,) rad (angle of ``conj(q_plan) q_replay``); ``foot_drift`` (N, nc) m
    (distance of each foot from its planned position); ``contact_forces`` (N, nc, 3)
    the forces of the replay at the knots (zero for feet not in contact).
    """

    states: np.ndarray
    base_position_drift: np.ndarray
    base_orientation_drift: np.ndarray
    foot_drift: np.ndarray
    contact_forces: np.ndarray

    def summary(self) -> str:
        """One line: the largest base position (m), orientation (deg) and foot drifts (m) of the replay."""
        return (
            f"replay drift over {len(self.states)} knots: base position {self.base_position_drift.max():.3g} m, "
            f"base orientation {np.degrees(self.base_orientation_drift.max()):.3g} deg, feet {self.foot_drift.max():.3g} m"
        )


def replay(problem: Any, solution: Any, substeps: int = 20, baumgarte: float = 20.0, damping: float = 1.0) -> ReplayResult:
    """Replay ``solution`` (of a :class:`LeggedProblem`) open loop: its torques, interpolated as the transcription does,
    drive an RK4 integration of the full dynamics (``substeps`` steps per knot interval) with the planned stance
    feet held by Baumgarte-stabilized contact constraints (frequency ``baumgarte`` rad/s, damping ratio
    ``damping``); returns a :class:`ReplayResult` with the drift from the plan at the knots."""
    robot, sched, cm = problem.robot, problem.schedule, problem.contact_model
    if substeps < 1:
        raise ValueError(f"substeps: expected at least 1, got {substeps}")
    pn = PinNumerics(robot)
    nq, nv, nc = robot.nq, robot.nv, robot.nc
    feet = [pn.frame_id(f) for f in robot.kinematics_bodies]
    Bmat = robot.B_func()
    X, W, times = np.asarray(solution.states), np.asarray(solution.controls), np.asarray(solution.times)

    contact = problem.formulation.stance_is_parameter  # forces are f(x, u) under knot k's stance, held over interval k

    def accel(q: np.ndarray, v: np.ndarray, w: np.ndarray, active: np.ndarray, anchors: np.ndarray):
        pn.update_kinematics(q, v)
        M, C = pn.mass(q), pn.bias(q, v)
        u = w[cm.u_slice]
        f_plan = np.zeros((nc, 3)) if contact else w[cm.f_slice].reshape(nc, 3)
        tau = Bmat @ u - C
        for i in np.flatnonzero(~active):  # lifting off or touching down: the planned force
            tau += pn.frame_jacobian(feet[i])[:3].T @ f_plan[i]
        idx = np.flatnonzero(active)
        if idx.size == 0:
            forces = np.where(active[:, None], 0.0, f_plan)
            return np.linalg.solve(M, tau), forces
        J = np.vstack([pn.frame_jacobian(feet[i])[:3] for i in idx])
        drift = np.concatenate([pn.frame_drift(feet[i])[:3] for i in idx])
        pos = np.concatenate([pn.frame_placement(feet[i])[:3, 3] for i in idx])
        rhs_c = -drift - 2 * damping * baumgarte * (J @ v) - baumgarte**2 * (pos - anchors[idx].reshape(-1))
        K = np.block([[M, -J.T], [J, np.zeros((J.shape[0], J.shape[0]))]])
        sol = np.linalg.solve(K, np.concatenate([tau, rhs_c]))
        forces = np.where(active[:, None], 0.0, f_plan)
        forces[idx] = sol[nv:].reshape(-1, 3)
        return sol[:nv], forces

    def step(q: np.ndarray, v: np.ndarray, h: float, u_of, active, anchors):
        def retract(dq: np.ndarray) -> np.ndarray:
            return pn.from_pinocchio(pin.integrate(pn.pin_model, pn.to_pinocchio(q), dq))

        k1v, k1a = v, accel(q, v, u_of(0.0), active, anchors)[0]
        k2v = v + h / 2 * k1a
        k2a = accel(retract(h / 2 * k1v), k2v, u_of(h / 2), active, anchors)[0]
        k3v = v + h / 2 * k2a
        k3a = accel(retract(h / 2 * k2v), k3v, u_of(h / 2), active, anchors)[0]
        k4v = v + h * k3a
        k4a = accel(retract(h * k3v), k4v, u_of(h), active, anchors)[0]
        return retract(h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)), v + h / 6 * (k1a + 2 * k2a + 2 * k3a + k4a)

    q, v = X[0, :nq].copy(), X[0, nq:].copy()
    anchors = np.array(robot.kinematics(X[0])).reshape(nc, 3)
    states = [np.r_[q, v]]
    forces = np.zeros((len(times), nc, 3))
    forces[0] = accel(q, v, W[0], sched.stance[0], anchors)[1]
    for k in range(len(times) - 1):
        active = sched.stance[k].copy() if contact else sched.stance[k] & sched.stance[k + 1]
        pn.update_kinematics(q)
        for i in np.flatnonzero(active & ~(sched.stance[k - 1] if k > 0 else np.zeros(nc, bool))):
            anchors[i] = pn.frame_placement(feet[i])[:3, 3]  # contact (re)starts here
        dt = times[k + 1] - times[k]
        h = dt / substeps
        # the controls at every RK stage time of this interval, in one batched evaluation
        _, W_fine = solution.evaluate(times[k] + np.linspace(0.0, dt, 2 * substeps + 1))
        for s in range(substeps):
            q, v = step(q, v, h, lambda tau, s=s: W_fine[2 * s + int(round(2 * tau / h))], active, anchors)
        states.append(np.r_[q, v])
        forces[k + 1] = accel(q, v, W[k + 1], active, anchors)[1]
    S = np.array(states)
    pos_drift = np.linalg.norm(robot.base_position(S) - robot.base_position(X), axis=1)
    ori_drift = np.array([quat_angle(robot.base_orientation(b), robot.base_orientation(a)) for a, b in zip(X, S)])
    planned = np.array([np.asarray(robot.kinematics(x)).reshape(nc, 3) for x in X])
    replayed = np.array([np.asarray(robot.kinematics(x)).reshape(nc, 3) for x in S])
    foot_drift = np.linalg.norm(planned - replayed, axis=2)
    return ReplayResult(S, pos_drift, ori_drift, foot_drift, forces)
