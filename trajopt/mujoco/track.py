"""Closed-loop tracking of a legged plan in MuJoCo: PD + feed-forward, feed-forward only, time-varying LQR.

:func:`track` simulates a private copy of a :class:`MujocoRobot` from the
plan's initial state for the plan's duration (``cycles`` times for a
periodic plan, :mod:`.reference`) and calls a controller at every simulator
step (MuJoCo's rate, ``1 / timestep``), with the plan sampled at that step by
the transcription's own interpolation (:meth:`trajopt.Solution.evaluate`):

- :class:`PDFeedforward` (the default; joint gains per robot in
  :data:`trajopt.legged.joint_gains.DEFAULT_GAINS`): ``tau = u_plan + Kp (q_plan - q) + Kd (qdot_plan - qdot)``,
  the PD part evaluated by MuJoCo's actuators;
- :class:`Feedforward`: the planned torques alone (open loop);
- :class:`TimeVaryingLQR`: ``tau = u_plan - K_i dx`` with gains from a
  Riccati recursion on MuJoCo's own linearization of its step
  (``mjd_transitionFD``).

MuJoCo clamps every actuator's force to the URDF torque limit. The robot has
fallen when its base tilts more than ``fall_tilt`` from upright or its
height drops below ``fall_height`` times the planned height; the simulation
stops there. :class:`TrackingResult` holds the simulated and planned
trajectories at every step and the drift of the base.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Protocol, Tuple, Union

import mujoco
import numpy as np
import scipy.linalg

from lie import quat_angle, quat_to_rot

from ..legged.joint_gains import default_gains, torque_scale
from .model import MujocoRobot, build_model
from .reference import PlanSamples, legged_problem, plan_terrain, plan_timestep, sample_plan
from .terrain import terrain_contacts


class Controller(Protocol):
    """What :func:`track` calls: ``setup`` once, then the actuator commands at every step.

    ``setup(robot, plan)`` gets :func:`track`'s private copy of the
    :class:`MujocoRobot` (it may change its actuators, e.g.
    :meth:`MujocoRobot.set_joint_pd`) and the :class:`PlanSamples`;
    ``__call__(i, x, data)`` gets the step index, the nominal state and
    MuJoCo's data, and returns the commands (nominal actuator order): the
    torques for plain motors.
    """

    def setup(self, robot: MujocoRobot, plan: PlanSamples) -> None:
        """Prepare for a run on ``robot`` (track's private copy) following ``plan``."""

    def __call__(self, i: int, x: np.ndarray, data: "mujoco.MjData") -> np.ndarray:
        """The actuator commands (nominal order) at step ``i``, nominal state ``x`` and MuJoCo's ``data``."""


class PDFeedforward:
    """``tau = u_plan(t) + Kp (q_plan(t) - q) + Kd (qdot_plan(t) - qdot)`` on every joint, the plan sampled at each MuJoCo step.

    ``kp``, ``kd``: scalars or per-joint arrays (nominal joint order); each
    one that is None takes the robot's entry of :data:`trajopt.legged.joint_gains.DEFAULT_GAINS`. The
    PD part runs inside MuJoCo's actuators (:meth:`MujocoRobot.set_joint_pd`,
    damping integrated implicitly); the command is
    ``u_plan + Kp q_plan + Kd qdot_plan``. Needs one actuator per joint
    (``B = [0; I]``).
    """

    def __init__(self, kp: Any = None, kd: Any = None) -> None:
        self.kp, self.kd = kp, kd

    def setup(self, robot: MujocoRobot, plan: PlanSamples) -> None:
        """Set the PD gains (robot defaults where None) in ``robot``'s joint actuators."""
        ours = robot.robot
        nj = ours.nv - (6 if robot.floating else 0)
        if ours.nu != nj or not np.array_equal(ours.B_func()[ours.nv - nj :], np.eye(nj)):
            raise ValueError("robot: PDFeedforward needs one actuator per joint (B = [0; I])")
        defaults = default_gains(ours)
        self.gains = tuple(np.broadcast_to(np.asarray(d if g is None else g, dtype=float), (nj,)).copy() for g, d in zip((self.kp, self.kd), defaults))
        for name, g in zip(("kp", "kd"), self.gains):
            if not np.isfinite(g).all() or (g < 0).any():
                raise ValueError(f"{name}: expected finite non-negative gains (a scalar or ({nj},)), got {g}")
        robot.set_joint_pd(*self.gains)
        kp, kd = self.gains
        q, v = slice(ours.nq - nj, ours.nq), slice(ours.nq + ours.nv - nj, None)
        self.commands = plan.torques + kp * plan.states[:-1, q] + kd * plan.states[:-1, v]

    def __call__(self, i: int, x: np.ndarray, data: "mujoco.MjData") -> np.ndarray:
        return self.commands[i]

    def describe(self) -> str:
        """One line naming the controller and its gains (N m/rad, N m s/rad)."""
        kp, kd = self.gains
        return f"PD + feed-forward (Kp {_gain_text(kp)} N m/rad, Kd {_gain_text(kd)} N m s/rad)"


def _gain_text(g: np.ndarray) -> str:
    return f"{g[0]:g}" if np.all(g == g[0]) else np.array2string(g, precision=3)


class Feedforward(PDFeedforward):
    """The planned torques alone (open loop): ``tau = u_plan(t)``."""

    def __init__(self) -> None:
        super().__init__(0.0, 0.0)

    def describe(self) -> str:
        """One line naming the controller."""
        return "feed-forward only"


class TimeVaryingLQR:
    """``u = u_plan(t) - K_i dx``: time-varying LQR on MuJoCo's linearization of its own step (``mjd_transitionFD``).

    ``dx`` is MuJoCo's tangent-space error of the simulated state to the plan
    (``2 nv``: ``mj_differentiatePos`` for positions, free-joint linear parts
    in the WORLD frame, then velocity differences). The gains come from the
    Riccati recursion ``P_n = Q``, ``K_i = (R + B_i^T P B_i)^-1 B_i^T P A_i``,
    ``P_i = Q + A_i^T P (A_i - B_i K_i)`` with MuJoCo's transition Jacobians
    ``A_i``, ``B_i`` (``mjd_transitionFD``, centred differences).

    They are taken along a PD + feed-forward rollout of the plan
    (:class:`PDFeedforward` with the robot's default gains), not along the
    plan itself: a planned stance foot touches the ground at exactly zero
    distance, where MuJoCo's contact force is discontinuous and finite
    differences are meaningless, while the rollout's feet sit in the contact
    within millimetres of the plan.

    Weights (MuJoCo's units, m, rad, N m): ``q_weights`` on the position
    errors of ``(base position, base orientation, joints)``, ``v_weights`` on
    the velocity errors of the same, ``r_weight`` on the torques (default
    ``0.1 / s^2``, ``s`` the robot's :func:`torque_scale`: 0.1 on the Go1). The
    defaults weigh the base far above the joints (heavier joint weights made
    the jump collapse at landing). On the templates of other quadrupeds it
    is closer than PD on every trot, but its landings are fragile: the
    linearizations cross touchdowns that happen at other times than in the
    rollout. Setting up costs one MuJoCo rollout and one
    ``mjd_transitionFD`` per step. Design notes, with the drifts and the
    set-up times: docs/design/mujoco.md.
    """

    def __init__(self, q_weights: Tuple[float, float, float] = (1e4, 1e4, 10.0), v_weights: Tuple[float, float, float] = (1e2, 1e2, 0.1), r_weight: Optional[float] = None) -> None:
        weights = np.concatenate([np.ravel(q_weights), np.ravel(v_weights), [1.0 if r_weight is None else r_weight]]).astype(float)
        if len(weights) != 7 or not np.isfinite(weights).all() or (weights[:6] < 0).any() or weights[6] <= 0:
            raise ValueError(f"weights: expected 3 non-negative position weights, 3 velocity weights and a positive r_weight, got {q_weights}, {v_weights}, {r_weight}")
        self.q_weights, self.v_weights = tuple(weights[:3]), tuple(weights[3:6])
        self.r_weight = None if r_weight is None else float(r_weight)

    def cost_weights(self, robot: MujocoRobot) -> np.ndarray:
        """Diagonal of ``Q`` (2 nv) in MuJoCo's tangent order."""
        out = []
        for base_position, base_orientation, joints in (self.q_weights, self.v_weights):
            w = np.full(robot.nv, joints)
            if robot.floating:
                w[:3], w[3:6] = base_position, base_orientation
            out.append(w)
        return np.concatenate(out)

    def setup(self, robot: MujocoRobot, plan: PlanSamples) -> None:
        """Compute the LQR gains along ``plan`` from MuJoCo's linearization (``mjd_transitionFD``)."""
        model, nv, nu = robot.model, robot.nv, robot.model.nu
        n = len(plan.times) - 1
        pd, rollout_robot = PDFeedforward(), robot.copy()
        pd.setup(rollout_robot, plan)
        rollout = simulate(rollout_robot, plan, pd, np.pi, 0.0)
        robot.set_joint_pd(0.0, 0.0)
        reached = len(rollout.times) - 1
        states = np.vstack([rollout.states[:reached], plan.states[reached:n]])
        torques = np.vstack([rollout.torques[:reached], plan.torques[reached:n]])
        data = mujoco.MjData(model)
        A, Bm = np.zeros((2 * nv, 2 * nv)), np.zeros((2 * nv, nu))
        self.r = 0.1 / torque_scale(robot.robot) ** 2 if self.r_weight is None else self.r_weight
        Q, R = np.diag(self.cost_weights(robot)), self.r * np.eye(nu)
        linear = []
        for i in range(n):
            robot.set_state(data, states[i])
            data.ctrl[:] = robot.to_ctrl(torques[i])
            mujoco.mjd_transitionFD(model, data, 1e-6, True, A, Bm, None, None)
            linear.append((A.copy(), Bm.copy()))
        self.gains, P = np.zeros((n, nu, 2 * nv)), Q
        for i in range(n - 1, -1, -1):
            Ai, Bi = linear[i]
            self.gains[i] = scipy.linalg.solve(R + Bi.T @ P @ Bi, Bi.T @ P @ Ai, assume_a="pos")
            P = Q + Ai.T @ P @ (Ai - Bi @ self.gains[i])
            P = 0.5 * (P + P.T)
        self.robot, self.plan = robot, plan
        mujoco_states = [robot.to_mujoco(x) for x in plan.states]
        self._qpos, self._qvel = np.array([s[0] for s in mujoco_states]), np.array([s[1] for s in mujoco_states])
        self._dq = np.zeros(nv)

    def __call__(self, i: int, x: np.ndarray, data: "mujoco.MjData") -> np.ndarray:
        mujoco.mj_differentiatePos(self.robot.model, self._dq, 1.0, self._qpos[i], data.qpos)
        dx = np.concatenate([self._dq, data.qvel - self._qvel[i]])
        return self.plan.torques[i] - (self.gains[i] @ dx)[self.robot.u_inverse]

    def describe(self) -> str:
        """One line naming the controller and its weights."""
        q, v = (", ".join(f"{w:g}" for w in ws) for ws in (self.q_weights, self.v_weights))
        return f"time-varying LQR on mjd_transitionFD (Q: positions {q}, velocities {v} for base position, orientation, joints; R {self.r:g})"


#: Controllers :func:`track` knows by name.
CONTROLLERS = {"pd": PDFeedforward, "feedforward": Feedforward, "lqr": TimeVaryingLQR}


@dataclass(frozen=True, eq=False)
class TrackingResult:
    """A MuJoCo simulation against its plan, at every simulator step up to the end or the fall.

    ``times`` (n,) s; ``states``/``planned`` (n, nx) simulated and planned
    nominal states; ``torques`` (n - 1, nu) applied (after MuJoCo's clamping);
    ``forces``/``planned_forces`` (n, nc, 3) MuJoCo's contact forces and the
    plan's (WORLD frame); ``base_position_error`` (n,) m;
    ``base_orientation_error`` (n,) rad (angle of ``conj(q_plan) q``);
    ``joint_error`` (n,) rad (largest joint angle error); ``fell`` and
    ``fall_time`` (s, NaN when it did not); ``controller`` describes the
    controller and its gains; ``knot_steps`` the step of every knot reached;
    ``terrain_contacts`` every step at which a body other than a foot touched
    the terrain (a model built with a terrain, :mod:`trajopt.mujoco.terrain`), as
    ``(time [s], body geom name, depth [m])``, the deepest contact of the step.
    """

    times: np.ndarray
    states: np.ndarray
    planned: np.ndarray
    torques: np.ndarray
    forces: np.ndarray
    planned_forces: np.ndarray
    base_position_error: np.ndarray
    base_orientation_error: np.ndarray
    joint_error: np.ndarray
    fell: bool
    fall_time: float
    controller: str
    cycles: int
    knot_steps: np.ndarray = field(repr=False)
    terrain_contacts: tuple = ()

    @property
    def max_position_error(self) -> float:
        """Largest base position error over the run (m)."""
        return float(self.base_position_error.max())

    @property
    def max_orientation_error(self) -> float:
        """Largest base orientation error over the run (rad)."""
        return float(self.base_orientation_error.max())

    def summary(self) -> str:
        """One line: controller, drift (max and final), fall."""
        fall = f", FELL at t = {self.fall_time:.3f} s" if self.fell else ""
        if self.terrain_contacts:
            t, body, depth = max(self.terrain_contacts, key=lambda c: c[2])
            fall += f", {len(self.terrain_contacts)} steps with a body on the terrain (deepest {1e3 * depth:.1f} mm, {body} at t = {t:.3f} s)"
        return (
            f"{self.controller}, {self.cycles} cycle(s): base drift max {1e3 * self.max_position_error:.1f} mm / "
            f"{np.degrees(self.max_orientation_error):.2f} deg, final {1e3 * self.base_position_error[-1]:.1f} mm / "
            f"{np.degrees(self.base_orientation_error[-1]):.2f} deg, joints max {np.degrees(self.joint_error.max()):.2f} deg{fall}"
        )


def track(
    solution: Any,
    controller: Union[str, Controller, None] = None,
    cycles: int = 1,
    robot: Optional[MujocoRobot] = None,
    fall_tilt: float = np.radians(60.0),
    fall_height: float = 0.5,
) -> TrackingResult:
    """Simulate the plan of ``solution`` in MuJoCo under ``controller``, from its initial state, for its
    duration (``cycles`` times for a periodic plan); returns a :class:`TrackingResult` (simulated and
    planned trajectories at every step, the base's drift). The robot has fallen, and the
    simulation stops, when its base tilts more than ``fall_tilt`` (rad) from upright or drops below
    ``fall_height`` times the planned height.

    ``controller``: a name of :data:`CONTROLLERS` (``"pd"``, the default,
    ``"feedforward"``, ``"lqr"``) or an object with ``setup(robot, plan)``
    and ``__call__(i, x, data) -> u``. ``robot``: the :class:`MujocoRobot`
    (default :func:`build_model` of the plan's robot with steps of
    :func:`.reference.plan_timestep`, about 1 ms, knots on steps), whose time
    step must divide the plan's duration.
    """
    problem = legged_problem(solution)
    robot = (robot or build_model(problem.robot, timestep=plan_timestep(solution), terrain=plan_terrain(problem))).copy()
    if controller is None:
        controller = "pd"
    if isinstance(controller, str):
        if controller not in CONTROLLERS:
            raise ValueError(f"controller: expected one of {sorted(CONTROLLERS)} or a controller object, got {controller!r}")
        controller = CONTROLLERS[controller]()
    plan = sample_plan(solution, robot.model.opt.timestep, cycles)
    controller.setup(robot, plan)
    return simulate(robot, plan, controller, fall_tilt, fall_height)


def simulate(robot: MujocoRobot, plan: PlanSamples, controller: Controller, fall_tilt: float, fall_height: float) -> TrackingResult:
    """Run MuJoCo from the plan's first state with ``controller`` at every step; stop at the end or a fall.

    The contact forces of step ``i`` are those MuJoCo solved at state ``i``
    under command ``i`` (read after ``mj_step``, whose forward pass they
    come from); the last state's use the last command.
    """
    model, ours = robot.model, robot.robot
    data = mujoco.MjData(model)
    robot.set_state(data, plan.states[0])
    mujoco.mj_forward(model, data)
    n = len(plan.times)
    states, torques, forces = np.zeros((n, ours.nx)), np.zeros((n - 1, ours.nu)), np.zeros((n, ours.nc, 3))
    cos_tilt = np.cos(fall_tilt)
    fall_time, last = np.nan, n - 1
    touches = []
    for i in range(n):
        x = robot.state(data)
        states[i] = x
        fallen = robot.floating and (quat_to_rot(ours.base_orientation(x))[2, 2] < cos_tilt or ours.base_position(x)[2] < fall_height * ours.base_position(plan.states[i])[2])
        if fallen or i == n - 1:
            mujoco.mj_forward(model, data)
            forces[i] = robot.contact_forces(data)
            if fallen:
                fall_time, last = plan.times[i], i
            break
        data.ctrl[:] = robot.to_ctrl(np.asarray(controller(i, x, data), dtype=float))
        mujoco.mj_step(model, data)
        torques[i], forces[i] = data.actuator_force[robot.u_inverse], robot.contact_forces(data)
        if robot.body_geoms.size:
            hits = terrain_contacts(model, data, robot.body_geoms, robot.link_terrain_geoms)
            if hits:
                geom, _, depth = max(hits, key=lambda hit: hit[2])
                touches.append((float(plan.times[i + 1]), model.geom(geom).name, depth))
    keep = slice(0, last + 1)
    S, P = states[keep], plan.states[keep]
    if robot.floating:
        position = np.linalg.norm(ours.base_position(S) - ours.base_position(P), axis=1)
        orientation = np.array([quat_angle(ours.base_orientation(s), ours.base_orientation(p)) for p, s in zip(P, S)])
    else:
        position = orientation = np.zeros(last + 1)
    describe = getattr(controller, "describe", None)
    return TrackingResult(
        times=plan.times[keep], states=S, planned=P, torques=torques[:last], forces=forces[keep], planned_forces=_step_forces(plan)[keep],
        base_position_error=position, base_orientation_error=orientation, joint_error=np.abs(ours.joint_positions(S) - ours.joint_positions(P)).max(axis=1),
        fell=not np.isnan(fall_time), fall_time=float(fall_time), controller=describe() if describe else type(controller).__name__,
        cycles=plan.cycles, knot_steps=plan.knot_steps[plan.knot_steps <= last], terrain_contacts=tuple(touches),
    )


def _step_forces(plan: PlanSamples) -> np.ndarray:
    """The plan's forces at the step times (n, nc, 3): the mid-step samples, the last one repeated."""
    return np.concatenate([plan.forces, plan.forces[-1:]])
