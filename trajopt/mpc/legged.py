"""Receding-horizon gaits for any quadruped: one NLP for every tick, the gait's phase in its data.

:class:`LeggedMPC` builds the horizon problem once and updates its data at
every tick (:meth:`LeggedMPC.update`, the :class:`~trajopt.mpc.MPC`'s
``update``). The model is the contact formulation of
:mod:`trajopt.legged.ocp`: the controls are the joint torques, the stance
feet are held by the KKT contact dynamics whose stance mask is the model's
dynamics parameter, integrated by explicit Runge-Kutta multiple shooting with
the costs at the knots (Gauss-Newton Hessian). Every constraint exists at
every knot; the gait decides their bounds, so a schedule that moves through
the horizon changes numbers, never the NLP:

- the friction pyramid ``|f_x|, |f_y| <= mu f_z`` of every foot's KKT force
  ``f(x_k, u_k, s_k)`` (its rows' lower bound 0 in stance, ``-inf`` in swing,
  where the force is zero), at the knots that hold a control;
- touchdown: at the knot ``k >= 2`` where a foot lands (in stance at ``k``,
  in swing at ``k - 1``) its height is the ground's and its velocity zero
  (``J_i v = 0``: the contact dynamics keep the velocity a foot lands with);
  free elsewhere. The ground's height is the mean height of the feet
  standing now (a soft ground lets them sink a few millimetres). Knot 1 is
  left free: it is reached from the measured state in one interval, and a
  foot there often cannot be steered (a stance foot moves as it was
  measured to; hard rows at knot 1, and a hard ``z >= 0`` on swing feet, made
  the QP infeasible when the plant's feet landed early or sank, measured in
  MuJoCo; touchdown as a cost only let feet land late, with the model
  holding a foot in the air);
- the URDF's torque and joint limits (bounds).

The stance mask of knot ``k`` (time ``t_k = t + k h``) is the gait's stance
at the middle of interval ``k``: foot ``i`` stands at time ``tau`` iff
``frac(tau / T - o_i) < beta`` (period ``T``, duty factor ``beta``, offsets
``o_i``, :data:`trajopt.legged.schedule.GAIT_OFFSETS`).

The cost (least squares, :class:`LeggedMPCWeights`) tracks

- the base: position ``p_ref(t_k)``, level attitude with heading ``psi_ref(t_k)``,
  body velocity ``v_cmd``, yaw rate ``omega_cmd``, where the commanded
  velocity ``(v_x, v_y, omega)`` (heading frame) integrates from the anchor
  ``(p_a, psi_a)`` set at :meth:`LeggedMPC.start` (a robot trotting in place
  is pulled back to where it started);
- the joints: the standing posture, at rest;
- the swing feet: the Raibert foothold at their touchdown,
  ``p_td = p_hip(t_td) + v_cmd T beta / 2 + sqrt(h0 / g) (v - v_cmd)`` (the
  hip's nominal position under the reference base at the touchdown time, the
  half stance stride, and the capture-point correction of the measured base
  velocity ``v``), reached along ``(1 - s) p_lo + s p_td + 4 a s (1 - s) e_z``
  (``s`` the swing's phase, ``a`` the apex height above the ground);
- the torques, lightly, around zero.

A terminal cost weighs the base and joints ``terminal_factor`` times more.
Lengths and times scale with the robot's legs (:class:`~trajopt.legged.scaling.GaitScale`):
period, apex, standing height come from the robot.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence, Tuple

import casadi as ca
import numpy as np

from lie import quat_to_euler_zyx
from models.contact_dynamics import ContactDynamics
from models.quadruped import LEG_ROLES

from ..constraints import Constraint
from ..costs import LeastSquaresCost, QuadraticCost, QuadraticTerminalCost
from ..legged.ocp import friction_rows
from ..legged.scaling import GaitScale
from ..legged.schedule import GAIT_OFFSETS
from ..problem import Problem

GRAVITY = 9.81
#: Gaits by name: Go1 period (s) and duty factor; the phase offsets are :data:`GAIT_OFFSETS`'s.
GAITS = {"stand": (0.6, 1.0), "trot": (0.5, 0.6), "pace": (0.5, 0.6), "bound": (0.5, 0.6)}


@dataclass(frozen=True)
class LeggedMPCWeights:
    """Least-squares weights (module docstring): base position (x, y, z), orientation, linear and angular
    velocity, joint position and velocity, swing foot position, torque; ``terminal_factor`` for the last knot."""

    base_position: Sequence[float] = (50.0, 50.0, 200.0)
    base_orientation: Sequence[float] = (200.0, 200.0, 50.0)
    base_velocity: Sequence[float] = (10.0, 10.0, 10.0)
    base_angular_velocity: Sequence[float] = (2.0, 2.0, 2.0)
    joint_position: float = 2.0
    joint_velocity: float = 0.02
    swing_foot: float = 300.0
    torque: float = 1e-3
    terminal_factor: float = 5.0


@dataclass
class Command:
    """A velocity command in the heading frame: ``vx``, ``vy`` (m/s), ``yaw_rate`` (rad/s)."""

    vx: float = 0.0
    vy: float = 0.0
    yaw_rate: float = 0.0


class LeggedMPC:
    """The horizon problem of a quadruped's receding-horizon gait and its per-tick update (module docstring).

    Parameters
    ----------
    robot:
        A :class:`models.LeggedRobot` (``Go1``, ``LeggedRobot.from_robot_data(...)``) with four feet.
    gait:
        ``"stand"``, ``"trot"``, ``"pace"`` or ``"bound"``.
    horizon:
        Horizon length (s, Go1 value, scaled by the robot's legs); ``dt`` its knot step (s, scaled too).
    period, duty_factor, apex:
        The gait's period (s), stance fraction and swing apex (m): Go1 values by default, scaled.
    integrator:
        The shooting integrator (``"rk2"``, ``"rk3"``, ``"rk4"``).
    """

    def __init__(
        self,
        robot: Any,
        gait: str = "trot",
        horizon: float = 0.4,
        dt: float = 0.02,
        period: Optional[float] = None,
        duty_factor: Optional[float] = None,
        apex: Optional[float] = None,
        weights: Optional[LeggedMPCWeights] = None,
        integrator: str = "rk3",
        command: Optional[Command] = None,
    ) -> None:
        if gait not in GAITS:
            raise ValueError(f"gait: expected one of {sorted(GAITS)}, got {gait!r}")
        if robot.nc != 4:
            raise ValueError(f"robot: expected a quadruped with 4 feet, got {robot.nc} kinematics bodies")
        scale = GaitScale.of(robot)
        self.robot, self.scale = robot, scale
        self.weights = weights or LeggedMPCWeights()
        self.command = command or Command()
        go1_period, go1_duty = GAITS[gait]
        self.gait = gait
        self.period = scale.duration(go1_period) if period is None else float(period)
        self.duty = go1_duty if duty_factor is None else float(duty_factor)
        self.apex = scale.distance(0.08) if apex is None else float(apex)
        self.offsets = np.asarray(GAIT_OFFSETS.get(gait, (0.0,) * 4), dtype=float)[self._role_order()]
        self.dt = scale.duration(dt)
        N = int(round(scale.duration(horizon) / self.dt)) + 1
        if N < 3:
            raise ValueError(f"horizon: {horizon} s is under two knot steps of {dt} s")
        self.model = ContactDynamics(robot, "contact")
        self.x_stand = robot.init_state()
        self.height = float(self.x_stand[2])
        self.hips = self._hip_offsets()
        self.problem = Problem(self.model, N=N, tf=(N - 1) * self.dt, x0=self.x_stand, name=f"{robot.name}-{gait}-mpc")
        self.problem.default_transcription = f"multiple_shooting_{integrator}_knot_cost"
        self._build()
        self.anchor: Tuple[np.ndarray, float] = (self.x_stand[:2].copy(), 0.0)
        self.start(0.0, self.x_stand)

    # ------------------------------------------------------------ gait
    def _role_order(self) -> list:
        """For each of the robot's feet, its leg role's column in :data:`GAIT_OFFSETS` (FL, FR, HL, HR)."""
        roles = getattr(self.robot, "leg_roles", None)
        if roles is None:
            raise ValueError(f"robot: {self.robot.name} has no leg roles (front/hind, left/right) to key a gait by")
        return [LEG_ROLES.index(role) for role in roles]

    def stance(self, times: np.ndarray) -> np.ndarray:
        """Stance (K, 4) of the feet at ``times`` (K,) (module docstring)."""
        if self.duty >= 1.0:
            return np.ones((len(times), 4), dtype=bool)
        phase = np.mod(np.asarray(times)[:, None] / self.period - self.offsets[None, :], 1.0)
        return phase < self.duty

    def swing_times(self, t: Any, foot: int) -> Tuple[Any, Any]:
        """Lift-off and touchdown times (s) of the swing of ``foot`` that contains ``t`` or comes next
        (``t`` a time or an array of times)."""
        T, o = self.period, self.offsets[foot]
        lift = (np.floor(np.asarray(t) / T - o) + o + self.duty) * T
        lift = np.where(np.asarray(t) >= lift + (1 - self.duty) * T, lift + T, lift)
        return lift, lift + (1 - self.duty) * T

    # ------------------------------------------------------------ building
    def _hip_offsets(self) -> np.ndarray:
        """Each foot's standing position relative to the base (4, 3), in the base's heading frame."""
        feet = np.asarray(self.robot.kinematics(self.x_stand)).reshape(4, 3)
        return feet - np.r_[self.x_stand[:2], 0.0]

    def _build(self) -> None:
        robot, model, problem, w = self.robot, self.model, self.problem, self.weights
        N, nq, nj = problem.N, robot.nq, robot.nv - 6
        feet = range(4)
        mu = robot.mu
        kkt = model.kkt

        def friction(x: Any, u: Any, mask: Any) -> Any:
            f = kkt(x, u, mask)[1]
            return ca.vertcat(*[friction_rows(f[3 * i : 3 * i + 3], mu, "pyramid") for i in feet])

        self.friction = Constraint(friction, knots=list(range(N - 1)), lower=np.zeros((N - 1, 16)), upper=np.inf, params=np.ones((N - 1, 4)), name="friction pyramid")
        heights = lambda x: ca.vertcat(*[robot.kinematics(x)[3 * i + 2] for i in feet])  # noqa: E731
        self.foot_height = Constraint(heights, knots=list(range(1, N)), lower=-np.inf, upper=np.inf, name="touchdown on the ground")
        self.touchdown = Constraint(lambda x: robot.kinematics_velocity(x), knots=list(range(1, N)), lower=-np.inf, upper=np.inf, name="touchdown at rest")
        for c in (self.friction, self.foot_height, self.touchdown):
            problem.add_constraint(c)
        xl, xu = np.full(problem.nx, -np.inf), np.full(problem.nx, np.inf)
        xl[7:nq], xu[7:nq] = robot.joint_lower, robot.joint_upper
        problem.bound_states(xl, xu, knots=list(range(1, N)))
        Q = np.concatenate([w.base_position, w.base_orientation, np.full(nj, w.joint_position), w.base_velocity, w.base_angular_velocity, np.full(nj, w.joint_velocity)])
        self.state_cost = QuadraticCost(model, Q, np.full(model.control_dim, w.torque), x_ref=np.repeat(self.x_stand[None], N, axis=0))
        self.terminal_cost = QuadraticTerminalCost(model, w.terminal_factor * Q, self.x_stand)
        swing = lambda x, u, p: ca.vertcat(*[p[12 + i] * (robot.kinematics(x)[3 * i : 3 * i + 3] - p[3 * i : 3 * i + 3]) for i in feet])  # noqa: E731
        self.swing_cost = LeastSquaresCost(swing, params=np.zeros((N, 16)), name="swing feet")
        for c in (self.state_cost, self.terminal_cost, self.swing_cost):
            problem.add_cost(c)

    # ------------------------------------------------------------ per tick
    def start(self, t: float, x: np.ndarray) -> None:
        """Anchor the reference at the measured base position and heading (before the first solve)."""
        yaw = float(quat_to_euler_zyx(np.asarray(x[3:7]))[0])
        self.anchor = (np.asarray(x[:2], dtype=float).copy(), yaw)
        self._t_anchor = float(t)
        self._lift_off = np.asarray(self.robot.kinematics(x)).reshape(4, 3).copy()  # where each foot last stood
        self._ground = 0.0

    def reference_base(self, times: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """Reference base positions (K, 3) and headings (K,) at ``times``: the command integrated from the anchor."""
        c = self.command
        tau = np.asarray(times) - self._t_anchor
        (p0, psi0) = self.anchor
        psi = psi0 + c.yaw_rate * tau
        if abs(c.yaw_rate) < 1e-9:
            dx, dy = tau * c.vx, tau * c.vy
            rot = np.array([[np.cos(psi0), -np.sin(psi0)], [np.sin(psi0), np.cos(psi0)]])
            xy = p0[:, None] + rot @ np.stack([dx, dy])
        else:  # a circular arc of the constant heading-frame velocity
            w = c.yaw_rate
            xy = p0[:, None] + np.stack([(c.vx * (np.sin(psi) - np.sin(psi0)) + c.vy * (np.cos(psi) - np.cos(psi0))) / w, (-c.vx * (np.cos(psi) - np.cos(psi0)) + c.vy * (np.sin(psi) - np.sin(psi0))) / w])
        return np.column_stack([xy.T, np.full(len(tau), self.height)]), psi

    def update(self, problem: Problem, t: float, x: np.ndarray) -> None:
        """The data of a tick at ``t`` with measured state ``x`` (module docstring); the MPC's ``update``."""
        N, h, nq = problem.N, self.dt, self.robot.nq
        times = t + h * np.arange(N)
        masks = self.stance(times + 0.5 * h)
        problem.dynamics_params = masks.astype(float)
        self.friction.raw_params = problem.dynamics_params[: N - 1]
        self.friction.lower = np.where(np.repeat(masks[: N - 1], 4, axis=1), 0.0, -np.inf)
        positions, headings = self.reference_base(times)
        X = np.repeat(self.x_stand[None], N, axis=0)
        X[:, 0:3] = positions
        X[:, 3:7] = np.stack([np.cos(headings / 2), np.zeros(N), np.zeros(N), np.sin(headings / 2)], axis=1)  # level, turned by psi about z
        X[:, nq : nq + 3] = [self.command.vx, self.command.vy, 0.0]
        X[:, nq + 5] = self.command.yaw_rate
        feet_now = np.asarray(self.robot.kinematics(x)).reshape(4, 3)
        standing = self.stance(np.array([t]))[0]
        if standing.any():
            self._ground = float(np.mean(feet_now[standing, 2]))  # a soft ground lets the feet sink a few millimetres
            self._lift_off[standing] = feet_now[standing]
        touchdown = masks[1:] & ~masks[:-1]
        touchdown[0] = False  # knot 1 is reached from the measured state: its foot can hardly be steered there
        self.foot_height.lower, self.foot_height.upper = np.where(touchdown, self._ground, -np.inf), np.where(touchdown, self._ground, np.inf)
        rest = np.repeat(touchdown, 3, axis=1)
        self.touchdown.lower, self.touchdown.upper = np.where(rest, 0.0, -np.inf), np.where(rest, 0.0, np.inf)
        self.state_cost.x_ref = X
        self.terminal_cost.x_ref = X[-1]
        self.swing_cost.raw_params = self._swing_targets(x, times, masks, headings)

    def _swing_targets(self, x: np.ndarray, times: np.ndarray, masks: np.ndarray, headings: np.ndarray) -> np.ndarray:
        """Swing-foot targets and weights (N, 16) per knot: ``[p_0 .. p_3, w_0 .. w_3]`` (module docstring)."""
        c, N, h = self.command, len(times), self.dt
        P = np.zeros((N, 16))
        yaw = float(quat_to_euler_zyx(np.asarray(x[3:7]))[0])
        v_world = _yaw_matrix(yaw) @ np.asarray(x[self.robot.nq : self.robot.nq + 3])  # body-frame base velocity, level base assumed for the correction
        v_cmd = _yaw_matrix(headings[0]) @ np.array([c.vx, c.vy, 0.0])
        shift = v_cmd * (self.period * self.duty / 2) + np.sqrt(self.height / GRAVITY) * (v_world - v_cmd)
        shift[2] = 0.0
        for i in range(4):
            k = np.flatnonzero(~masks[:, i])
            if k.size == 0:
                continue
            lift, land = self.swing_times(times[k] + 0.5 * h, i)  # the masks' mid-interval times
            base, psi = self.reference_base(land)
            hold = base + np.einsum("kij,j->ki", _yaw_matrices(psi), self.hips[i]) + shift
            hold[:, 2] = self._ground
            start = np.r_[self._lift_off[i][:2], self._ground]  # where the foot stands now, or stood when this swing began
            s = np.clip((times[k] - lift) / (land - lift), 0.0, 1.0)
            P[k, 3 * i : 3 * i + 3] = (1 - s[:, None]) * start + s[:, None] * hold + np.outer(4 * self.apex * s * (1 - s), [0.0, 0.0, 1.0])
            P[k, 12 + i] = np.sqrt(self.weights.swing_foot)
        return P


def _yaw_matrix(psi: float) -> np.ndarray:
    """The rotation (3, 3) by ``psi`` about the world z axis."""
    return _yaw_matrices(np.array([psi]))[0]


def _yaw_matrices(psi: np.ndarray) -> np.ndarray:
    """The rotations (K, 3, 3) by the angles ``psi`` (K,) about the world z axis."""
    c, s = np.cos(psi), np.sin(psi)
    out = np.zeros((len(psi), 3, 3))
    out[:, 0, 0], out[:, 0, 1], out[:, 1, 0], out[:, 1, 1], out[:, 2, 2] = c, -s, s, c, 1.0
    return out
