"""The legged-robot optimal-control problem (any floating-base model with point feet).

:class:`LeggedProblem` is a :class:`trajopt.Problem` on a
:class:`models.contact_dynamics.ContactDynamics` model: decision variables per knot are the
state ``x = [q; v]``, the joint torques ``u``, the WORLD-frame contact forces
``f`` of the feet, and (``formulation="inverse"``, the default) the
accelerations ``a``. Given a :class:`ContactSchedule` it imposes

- dynamics ``M a + C = B u + sum_i J_i^T f_i``: with ``"inverse"`` as the RNEA
  residual at every knot and ``qdot = E(q) v``, ``vdot = a`` collocated by the
  transcription; with ``"forward"`` through ABA inside the collocated ODE.
  ``"inverse"`` is the default: the forward path's ABA Hessians make it
  slower to the same optimum (docs/design/legged.md);
- stance feet on their footholds (``p_i(q_k) = foothold``) at every stance
  knot after the first, and at rest (``J_i v_k = 0``) at each touchdown knot
  (several contacts on one rigid body share 6 rows: :meth:`LeggedProblem.stance_directions`);
  zero velocity imposed at EVERY stance knot as well made the constraints
  degenerate with the collocation, and the touchdown condition suffices to
  keep the stance velocities small (docs/design/legged.md). Footholds follow the schedule (:mod:`.footholds`): each swing
  moves a foot by ``displacement / (number of its swings)``;
- swing feet above the ground (``z >= 0``) and at least ``swing_apex`` high at
  the middle knot of each swing; zero force in swing;
- unilateral normal force ``f_z >= 0`` and friction: the linearized pyramid
  ``|f_x|, |f_y| <= mu f_z`` (default) or the exact cone
  ``mu^2 f_z^2 >= f_x^2 + f_y^2`` (``friction="cone"``), with the robot's ``mu``;
- joint position and velocity limits and torque limits from the URDF;
- the final base position ``p_0 + displacement`` (an equality), and with
  ``periodic=True`` final joint angles and velocities equal to the initial ones.

The cost regularizes the motion around a reference that moves the base
uniformly by ``displacement`` (error-state weights :class:`LeggedWeights`),
the torques, the contact forces (around an equal share of the weight), and
the accelerations. With the inverse formulation and trapezoidal collocation
the controls enter the dynamics through their averages over each interval, so
controls alternating from knot to knot cost nothing physically; when limits
are active (a jump at the torque limits) the optimizer uses that mode and the
plan stops being realizable. ``LeggedWeights.control_rate`` penalizes the
control rate (:meth:`trajopt.Problem.penalize_control_rate`) and removes it
(docs/design/legged.md).

On a :class:`trajopt.terrain.Terrain` (``terrain=``, other than flat ground
at ``z = 0``, which keeps the formulation above unchanged) footholds are
chosen on the terrain's foot regions by :func:`.terrain_plan.plan_on_terrain`
(which also puts ``x0`` on the terrain and refers the base reference to it)
and the stance, friction and swing constraints become those of
:mod:`.terrain_constraints`: feet on their regions' surfaces and inside them,
no slip from knot to knot, friction about the local normal, and swinging feet
``clearance`` above the terrain at the knots and at ``clearance_samples``
points inside every interval. The ``"contact"`` formulation and
``periodic=True`` are not available there.

Transcriptions: trapezoidal collocation (the default: fastest, measured) and
Hermite-Simpson (the ``"inverse"`` residual, the stance, swing-height and
friction constraints are then also imposed at the interval midpoints) with
either formulation; RK4 multiple shooting only with
``"forward"`` (a piecewise-constant acceleration cannot satisfy the knot
residual of ``"inverse"``).

``formulation="contact"`` (crocoddyl's): the controls are the 12 torques
alone. Accelerations and contact forces are functions of ``(x, u)``: the KKT
contact dynamics ``[M J^T; J 0] [a; -f] = [B u - C; -Jdot v]`` of the feet in
stance at knot ``k`` (:mod:`models.multibody.contact`; the stance mask is the
model's dynamics parameter), held over the interval that starts at ``k``
(a lifting foot stays in contact until the next knot, a landing foot is free
until it). Explicit multiple shooting integrates them (RK3, costs at the
knots: :data:`CONTACT_TRANSCRIPTION`). The friction, unilateral and torque
limits stay hard, on ``f(x_k, u_k)`` at the stance knots before the last one
(which holds the control of knot ``N - 2``). Touchdowns are exact without an
impulse: the landing foot must reach its foothold at rest at its touchdown
knot, so no velocity jumps, and from there the dynamics hold it (its later
positions follow to the integrator's accuracy; imposing them as well would
repeat rows). An impulse model (a
velocity jump through the contact Jacobian) would let feet land moving,
which a simulator with soft contacts reproduces poorly (the MuJoCo study of
:mod:`trajopt.mujoco` traces part of its drift to touchdown speeds) and adds
a reset map to the transcription, so it was not chosen. By default
(:data:`CONTACT_SOLVE`) fatrop solves it on tangent-chart knots
(:mod:`trajopt.nlp`) with a Gauss-Newton Hessian, compiled; the same NLP runs
with IPOPT or SQP + HPIPM (``solver=``). The step is RK3: RK4 did not
converge with a Gauss-Newton Hessian, and lower orders drift more in the
replay; the exact Hessian does not pay for its evaluations. Contacts that
share a rigid body (a sole's corners) make the KKT matrix singular: the
humanoid keeps ``"inverse"``. Design notes, with the measurements:
docs/design/legged.md.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

import casadi as ca
import numpy as np
import pinocchio as pin

from lie import _backend as B
from lie import quat_to_rot
from models.contact_dynamics import ContactDynamics
from models.formulation import Formulation
from models.model import GRAVITY

from ..constraints import Constraint, GoalConstraint
from ..costs import QuadraticCost
from ..manifold import check_states
from ..phase_durations import PhaseDurations
from ..problem import Problem
from ..terrain import Terrain
from .base_path import ballistic_base_path
from .footholds import nominal_foot_paths, swing_apex_knots
from .link_clearance import add_ground_clearance, add_link_clearance
from .schedule import ContactSchedule
from .terrain_constraints import CLEARANCE_SAMPLES, CLEARANCE_TIME, add_foothold_cost, add_terrain_constraints, vertical_force_implied
from .terrain_plan import plan_on_terrain
from .timing import MIN_STANCE, MIN_SWING, apply_timing

FRICTION_MODELS = ("pyramid", "cone")
#: Default transcription of ``formulation="contact"``: explicit steps (gaps for Riccati solvers)
#: and costs at the knots (Gauss-Newton Hessians without second derivatives of the dynamics).
#: RK3 is the lowest order whose replay drift on the trot stays within the inverse formulation's
#: (docs/design/legged.md).
CONTACT_TRANSCRIPTION = "multiple_shooting_rk3_knot_cost"
#: How :func:`trajopt.solve` solves ``formulation="contact"`` unless told otherwise (module docstring).
CONTACT_SOLVE = {"solver": "fatrop", "hessian": "gauss-newton", "chart": True, "compile": True}
#: fatrop options of ``formulation="contact"``: a start at a small barrier parameter, decreased
#: early, and a dual tolerance of 1e-6: with a Gauss-Newton Hessian the dual residual converges
#: linearly, the primal one (``constr_viol_tol`` 1e-8) does not suffer; fatrop's defaults stop
#: at an acceptable point after many more iterations (docs/design/legged.md).
CONTACT_FATROP_OPTIONS = {"tol": 1e-6, "mu_init": 1e-2, "barrier_tol_factor": 300.0}


def friction_rows(f: Any, mu: float, friction: str) -> Any:
    """``mu fz -+ fx >= 0, mu fz -+ fy >= 0`` (``"pyramid"``, 4 rows) or ``mu^2 fz^2 - fx^2 - fy^2 >= 0``
    (``"cone"``, 1 row) of one WORLD-frame contact force ``f`` (3,) on level ground."""
    fx, fy, fz = ca.vertsplit(f)
    if friction == "pyramid":
        return ca.vertcat(mu * fz - fx, mu * fz + fx, mu * fz - fy, mu * fz + fy)
    return mu * mu * fz * fz - fx * fx - fy * fy


@dataclass(frozen=True)
class LeggedWeights:
    """Diagonal cost weights (error-state and control blocks)."""

    base_position: Sequence[float] = (1.0, 1.0, 10.0)
    base_orientation: float = 10.0
    joint_position: float = 1.0
    base_velocity: float = 1.0
    joint_velocity: float = 0.1
    torque: float = 1e-3
    force: float = 1e-4
    acceleration: float = 1e-4
    #: weight of ``1/2 integral |wdot|^2`` on the torques and contact forces; 0 = off
    control_rate: float = 0.0
    #: weight of the same term on the accelerations (rad/s^3 rates). Off by default: the inverse
    #: formulation's residual ties each knot's accelerations to its torques and forces, whose rates
    #: already damp trapezoidal collocation's alternating mode, and a weight on the accelerations'
    #: rate dominates the cost and makes the jumps' optima degenerate (docs/design/legged.md)
    acceleration_rate: float = 0.0
    #: on a terrain, weight of ``1/2 |p_xy - p_nominal|^2`` (1/m^2 s) of every stance foot's horizontal distance
    #: from its nominal foothold, which picks one point among the many its foot region allows
    foothold: float = 10.0


class LeggedProblem(Problem):
    """A gait or jump of a legged robot with full rigid-body dynamics and point feet; solved by trapezoidal collocation by default.

    Variables per knot: the state ``[q; v]``, joint torques, WORLD-frame contact forces and (with
    ``formulation="inverse"``) accelerations. Constraints: the dynamics, stance feet on their footholds
    and at rest at touchdown, swing feet above ground and ``swing_apex`` high mid-swing, zero force in
    swing, friction pyramid or cone, URDF joint and torque limits, the final base position ``p_0 +
    displacement``. Cost: tracking a base moving uniformly by ``displacement``, torques, forces
    around an equal share of the weight, accelerations (:class:`LeggedWeights`).

    Parameters
    ----------
    robot:
        A floating-base :class:`models.MultibodyModel` whose kinematics bodies
        are the feet, with a friction coefficient ``mu`` (e.g. :class:`models.Go1`).
    schedule:
        Which feet are in stance at each knot (its ``dt`` and length set ``N`` and ``tf``),
        keyed by leg roles or by the robot's feet (:meth:`ContactSchedule.for_robot`).
    x0:
        Initial state (default ``robot.init_state()``), fixed.
    displacement:
        Commanded base displacement over the horizon (m, world frame).
    swing_apex:
        Minimum foot height (m) at the middle knot of every swing.
    N:
        Number of knots, if the caller wants it checked against the schedule's.
    terrain:
        A :class:`trajopt.terrain.Terrain` to walk on (default ``None``: flat
        ground at ``z = 0``, as is ``trajopt.terrain.flat()``); see the module
        docstring. ``x0`` then defaults to the standing pose carried onto it.
    clearance:
        On a terrain, the height (m) swinging feet keep above it.
    clearance_samples:
        On a terrain, the points inside every interval where they keep it.
    clearance_time:
        On a terrain, how long (s) after lift-off and before touchdown the
        clearance takes to grow to its full value (:mod:`.terrain_constraints`).
    link_clearance:
        The height (m) points along every shank keep above the terrain (on
        flat ground, its two ends above the ground) at every knot after the
        first (:mod:`.link_clearance`); ``None`` (default): not imposed.
    end_at_rest:
        Whether the motion ends standing still: every velocity zero at the last
        knot, and with ``formulation="inverse"`` every acceleration too.
    timing:
        ``"fixed"`` (default): the schedule's times; ``"free"``: each phase's
        duration a decision variable, their total the schedule's;
        ``"free-total"``: the total free too (:meth:`set_timing`, :mod:`.timing`).
    """

    default_transcription = "trapezoidal"
    #: IPOPT options of the legged problems. The cost is small next to the constraints' scale
    #: (forces ~100 N), so it is scaled by 100, which cuts IPOPT's iterations; the adaptive
    #: barrier update cuts them on the periodic gaits (the jumps too use it since the variable scaling);
    #: no bound relaxation (``bound_relax_factor`` 0), so a torque at its limit does not overshoot
    #: it. Design notes, with the iteration counts: docs/design/legged.md.
    solver_options = {"ipopt": {"obj_scaling_factor": 100.0, "mu_strategy": "adaptive", "bound_relax_factor": 0.0}}
    #: Forces (N), torques (N m), accelerations (rad/s^2) and angles share the decision vector:
    #: IPOPT solves for equilibrated variables (:mod:`trajopt.solvers.scaling`).
    scale_variables = True

    def __init__(
        self,
        robot: Any,
        schedule: ContactSchedule,
        x0: Any = None,
        displacement: Sequence[float] = (0.15, 0.0, 0.0),
        swing_apex: float = 0.08,
        formulation: "str | Formulation" = "inverse",
        friction: str = "pyramid",
        periodic: bool = False,
        weights: Optional[LeggedWeights] = None,
        name: str = "legged",
        N: Optional[int] = None,
        terrain: Optional[Terrain] = None,
        clearance: float = 0.02,
        clearance_samples: int = CLEARANCE_SAMPLES,
        clearance_time: float = CLEARANCE_TIME,
        link_clearance: Optional[float] = None,
        end_at_rest: bool = False,
        timing: str = "fixed",
    ) -> None:
        if N is not None:
            schedule.check_length(N)
        if not getattr(robot, "is_floating", False):
            raise ValueError("robot: expected a floating-base multibody model")
        schedule = schedule.for_robot(robot)  # leg roles (FL, FR, HL, HR) -> the robot's feet
        if len(schedule.foot_names) != robot.nc:
            raise ValueError(f"schedule: has {len(schedule.foot_names)} feet but the robot has {robot.nc} kinematics bodies")
        unknown = [f for f in schedule.foot_names if not robot.pin_model.existFrame(f)]
        if unknown:
            raise ValueError(f"schedule: feet {unknown} are not frames of the model {robot.pin_model.name!r}")
        if list(schedule.foot_names) != list(robot.kinematics_bodies):
            raise ValueError(f"schedule: feet {list(schedule.foot_names)} must match the robot's kinematics bodies {robot.kinematics_bodies} in order")
        if friction not in FRICTION_MODELS:
            raise ValueError(f"friction: expected one of {FRICTION_MODELS}, got {friction!r}")
        if swing_apex < 0:
            raise ValueError(f"swing_apex: expected a height >= 0, got {swing_apex}")
        formulation = Formulation.parse(formulation)
        if not formulation.forces_are_controls:
            parents = robot.contact_parents()
            if len(set(parents)) < len(parents):
                raise ValueError(
                    "formulation: offline plans in 'contact' need every stance contact on its own body; with contacts on one rigid body "
                    f"({robot.name}: {len(parents)} contacts on {len(set(parents))} bodies) its dynamics pick the corners' least forces, which the "
                    "plan cannot choose; use 'inverse'"
                )
        self.robot, self.schedule, self.formulation, self.friction, self.periodic = robot, schedule, formulation, friction, periodic
        self.contact_model = ContactDynamics(robot, formulation)
        self.terrain, self.terrain_plan = terrain, None
        self.clearance = B.real(clearance, "clearance", lower=0.0)
        if isinstance(clearance_samples, bool) or not isinstance(clearance_samples, (int, np.integer)) or clearance_samples < 0:
            raise ValueError(f"clearance_samples: expected an int >= 0, got {clearance_samples!r}")
        self.clearance_samples = int(clearance_samples)
        self.clearance_time = B.real(clearance_time, "clearance_time", lower=0.0)
        self.link_clearance = None if link_clearance is None else B.real(link_clearance, "link_clearance")
        if not isinstance(end_at_rest, (bool, np.bool_)):
            raise TypeError(f"end_at_rest: expected a bool, got {type(end_at_rest).__name__} {end_at_rest!r}")
        self.end_at_rest = bool(end_at_rest)
        if terrain is not None:
            self._check_terrain_options(terrain)
        x0 = None if x0 is None else check_states(self.contact_model, x0, "x0")
        if terrain is not None and terrain.flat_height != 0.0:
            self.terrain_plan = plan_on_terrain(robot, schedule, terrain, B.vector(displacement, 3, "displacement"), swing_apex, self.clearance, x0=x0)
            x0 = self.terrain_plan.x0
        x0 = robot.init_state() if x0 is None else x0
        super().__init__(self.contact_model, schedule.N, schedule.duration, x0, name=name)
        if formulation.stance_is_parameter:
            self.default_transcription = CONTACT_TRANSCRIPTION
            self.dynamics_params = schedule.stance.astype(float)
            self.solve_defaults = dict(CONTACT_SOLVE)
            self.solver_options = {**self.solver_options, "fatrop": dict(CONTACT_FATROP_OPTIONS)}
        self.displacement = B.vector(displacement, 3, "displacement")
        self.swing_apex = float(swing_apex)
        self.weights = weights or LeggedWeights()
        self.mass = float(pin.computeTotalMass(robot.pin_model))
        if self.terrain_plan is not None:
            self.nominal_feet, self.footholds = self.terrain_plan.nominal_feet, self.terrain_plan.footholds
            self.target_base_position = self.terrain_plan.base_positions[-1].copy()
        else:
            self.nominal_feet, self.footholds = nominal_foot_paths(schedule, robot.kinematics(self.x0), self.displacement, self.swing_apex)
            self.target_base_position = robot.base_position(self.x0) + self.displacement
        self._add_bounds()
        self._add_constraints()
        self.reference_states = self._reference_states()
        self._add_costs()
        X, W = self.nominal_guess()
        self.set_initial_guess(X, W)
        self.set_timing(timing)

    def set_timing(self, timing: str, min_stance: float = MIN_STANCE, min_swing: float = MIN_SWING) -> None:
        """Fix the schedule's times (``"fixed"``) or make its phase durations decisions (``"free"``: their total
        fixed; ``"free-total"``: free too), each foot's complete stance and swing at least ``min_stance`` and
        ``min_swing`` seconds (:func:`.timing.free_phase_durations`). The knots keep their stance patterns,
        constraints and costs; the guess keeps the scheduled times. Free timing is solved by IPOPT
        (fatrop and HPIPM take a fixed ``tf``): it replaces fatrop, the ``"contact"`` formulation's default."""
        apply_timing(self, timing, min_stance, min_swing)
        if self.formulation.stance_is_parameter:
            self.solve_defaults = dict(CONTACT_SOLVE) if timing == "fixed" else {**CONTACT_SOLVE, "solver": "ipopt"}

    def check_transcription(self, name: str) -> None:
        self.formulation.check_transcription(name)

    def _check_terrain_options(self, terrain: Any) -> None:
        """``TypeError``/``ValueError`` for a terrain this problem cannot walk on (module docstring)."""
        if not isinstance(terrain, Terrain):
            raise TypeError(f"terrain: expected a trajopt.terrain.Terrain, got {type(terrain).__name__}")
        if terrain.flat_height == 0.0:
            return
        if self.formulation.stance_is_parameter:
            raise ValueError("formulation: the 'contact' formulation is not available on a terrain (its no-slip rows couple neighbouring knots, which fatrop cannot take); use 'inverse' or 'forward'")
        if self.periodic:
            raise ValueError("periodic: a plan over a terrain does not repeat; use periodic=False")
        parents = self.robot.contact_parents()
        if len(set(parents)) < len(parents) or not hasattr(self.robot, "legs"):
            raise ValueError(f"robot: terrain plans need a legged robot with one point foot per leg; {self.robot.name} has {len(parents)} contacts on {len(set(parents))} bodies")

    def knot_index(self, times: Any, knot_times: Any = None) -> np.ndarray:
        """The knot whose stance holds at each of ``times`` (s): ``k`` on ``[t_k, t_(k+1))``, the last knot at ``tf``.

        ``knot_times`` (N,): a solution's knot times (:attr:`trajopt.Solution.times`), needed when its phase
        durations were free; default: the knots evenly spaced over the problem's ``tf``."""
        t = np.atleast_1d(np.asarray(times, dtype=float))
        if isinstance(self.tf, PhaseDurations):
            if knot_times is None:
                raise ValueError("knot_times: the phase durations are free; pass the solution's knot times (solution.times)")
            knot_times = np.asarray(knot_times, dtype=float)
            return np.clip(np.searchsorted(knot_times, t + 1e-9 * knot_times[-1] / (self.N - 1), side="right") - 1, 0, self.N - 1)
        h = self.tf_guess / (self.N - 1)
        return np.clip(np.floor(t / h + 1e-9).astype(int), 0, self.N - 1)

    def contact_solution(self, states: Any, controls: Any, knots: Any = None) -> tuple:
        """Accelerations (K, nv) and WORLD-frame contact forces (K, nc, 3) of samples of a trajectory.

        ``states`` (K, nx) and ``controls`` (K, control size) are knot values
        (``solution.states``, ``solution.controls``, with ``knots`` the default
        ``0..N-1``) or samples between knots (``solution.evaluate(t)``, with
        ``knots = problem.knot_index(t)``). The forces are in the controls
        (and so are the accelerations with ``"inverse"``; ``"forward"`` gives
        them by ABA); with ``formulation="contact"`` both come from the KKT
        contact dynamics under the sample's knot's stance (zero force on swing
        feet), the last knot taking the last interval's (it has no control of
        its own: its forces are those the plan's dynamics end with).
        """
        X, W = np.atleast_2d(np.asarray(states, dtype=float)), np.atleast_2d(np.asarray(controls, dtype=float))
        knots = np.arange(self.N) if knots is None else np.atleast_1d(np.asarray(knots, dtype=int))
        if X.shape != (len(knots), self.nx) or W.shape != (len(knots), self.nu):
            raise ValueError(f"states, controls: expected shapes ({len(knots)}, {self.nx}) and ({len(knots)}, {self.nu}), got {X.shape} and {W.shape}")
        cm, robot = self.contact_model, self.robot
        if cm.formulation.stance_is_parameter:  # the last knot holds the last interval's control, and so its stance
            masks = self.dynamics_params[np.minimum(knots, self.N - 2)]
            A, F = (np.asarray(out).T for out in cm.kkt.map(len(knots))(X.T, W.T, masks.T))
        else:
            F = W[:, cm.f_slice]
            A = W[:, cm.a_slice] if cm.formulation.acceleration_is_control else np.array([robot.forward_dynamics(x, robot.B_func() @ w[cm.u_slice], forces=w[cm.f_slice]) for x, w in zip(X, W)])
        return A, F.reshape(len(knots), self.n_feet, 3)

    def contact_forces(self, states: Any, controls: Any, knots: Any = None) -> np.ndarray:
        """WORLD-frame contact forces (K, nc, 3) of samples of a trajectory (:meth:`contact_solution`)."""
        return self.contact_solution(states, controls, knots)[1]

    def joint_torques(self, controls: Any) -> np.ndarray:
        """The actuator torques (K, nu) in controls (K, control size)."""
        return np.atleast_2d(np.asarray(controls, dtype=float))[:, self.contact_model.u_slice]

    # ------------------------------------------------------------ helpers
    @property
    def n_feet(self) -> int:
        """Number of feet (contact points)."""
        return self.robot.nc

    def foot_force_slice(self, i: int) -> slice:
        """Control entries of foot ``i``'s force ``[fx, fy, fz]`` (``ValueError`` for ``formulation="contact"``,
        whose forces are no controls: :meth:`contact_forces`)."""
        if not self.formulation.forces_are_controls:
            raise ValueError("foot_force_slice: the 'contact' formulation's forces are functions of (x, u), not controls; use contact_forces()")
        start = self.contact_model.f_slice.start + 3 * i
        return slice(start, start + 3)

    def stance_force_share(self) -> np.ndarray:
        """Reference forces (N, 3 nc): the weight ``m g`` shared equally by the stance feet."""
        F = np.zeros((self.N, 3 * self.n_feet))
        n_stance = self.schedule.stance.sum(axis=1)
        for k in range(self.N):
            for i in np.flatnonzero(self.schedule.stance[k]):
                F[k, 3 * i + 2] = self.mass * GRAVITY / n_stance[k]
        return F

    def reference_forces(self) -> np.ndarray:
        """The contact forces (N, 3 nc) the cost regularizes towards: :meth:`stance_force_share`."""
        return self.stance_force_share()

    def solution_schedule(self, solution: Any) -> ContactSchedule:
        """The contact schedule ``solution`` follows: the problem's :attr:`schedule` (a problem that chooses its
        contacts, :class:`~trajopt.legged.contact_implicit.ContactImplicitProblem`, reads it from the solution)."""
        return self.schedule

    # ------------------------------------------------------------ building
    def _add_bounds(self) -> None:
        robot, nq, cm = self.robot, self.robot.nq, self.contact_model
        xl, xu = np.full(self.nx, -np.inf), np.full(self.nx, np.inf)
        joints = robot.joint_position_slice
        xl[joints], xu[joints] = robot.joint_lower, robot.joint_upper
        xl[nq + 6 :], xu[nq + 6 :] = -robot.velocity_limits, robot.velocity_limits
        self.bound_states(xl, xu, knots=list(range(1, self.N)))
        if not self.formulation.forces_are_controls:  # torque limits only: forces are functions of (x, u)
            return
        lower, upper = self.control_lower.copy(), self.control_upper.copy()
        # on a terrain the friction rows hold the force about the local normal; f_z >= 0 is added
        # as a bound where they imply it (it helps IPOPT: docs/design/terrain.md)
        vertical = self.schedule.stance if self.terrain_plan is None else vertical_force_implied(self)
        for i in range(self.n_feet):
            s = self.foot_force_slice(i)
            swing = ~self.schedule.stance[:, i]
            lower[swing, s], upper[swing, s] = 0.0, 0.0
            lower[vertical[:, i], s.start + 2] = 0.0  # unilateral normal force
        if self.end_at_rest:
            lower[-1, cm.a_slice], upper[-1, cm.a_slice] = 0.0, 0.0
        self.bound_controls(lower, upper)

    def _add_constraints(self) -> None:
        robot, sched, cm = self.robot, self.schedule, self.contact_model
        if self.formulation.acceleration_is_control:
            self.add_constraint(Constraint(lambda x, w: cm.dynamics_residual(x, w), midpoints=True, name="dynamics residual"))
        if self.end_at_rest:  # the accelerations' half is a bound (_add_bounds)
            nq = robot.nq
            self.add_constraint(Constraint(lambda x: x[nq:], knots=-1, lower=0.0, upper=0.0, name="at rest at the end"))
        if self.terrain_plan is not None:
            add_terrain_constraints(self)
            if self.link_clearance is not None:
                add_link_clearance(self, self.link_clearance)
            return
        if self.link_clearance is not None:
            add_ground_clearance(self, self.link_clearance)
        last = self.N - 1
        anchors = self.stance_directions()
        for i, foot in enumerate(sched.foot_names):
            rows = slice(3 * i, 3 * i + 3)
            stance = np.flatnonzero(sched.stance[:, i])
            pos_knots = [k for k in stance if k > 0 and not (self.periodic and k == last)]
            P = anchors[i]
            touchdowns = [k for k in pos_knots if not sched.stance[k - 1, i]]
            if self.formulation.stance_is_parameter:  # the contact dynamics hold a foot from its touchdown on
                pos_knots = touchdowns
            if pos_knots and P.shape[0]:
                self.add_constraint(Constraint(lambda x, u, p, rows=rows, P=P: P @ (robot.kinematics(x)[rows] - p), knots=pos_knots, params=self.footholds[pos_knots, i], midpoints=True, name=f"{foot} on foothold"))
                if touchdowns:
                    self.add_constraint(Constraint(lambda x, rows=rows, P=P: P @ robot.kinematics_velocity(x)[rows], knots=touchdowns, name=f"{foot} touchdown at rest"))
            swing = np.flatnonzero(~sched.stance[:, i])
            if swing.size:
                apex = set(swing_apex_knots(sched, i))
                ground = self.footholds[swing, i, 2]
                lower = np.array([g + (self.swing_apex if k in apex else 0.0) for k, g in zip(swing, ground)])[:, None]
                self.add_constraint(Constraint(lambda x, z=3 * i + 2: robot.kinematics(x)[z], knots=swing.tolist(), lower=lower, upper=np.inf, midpoints=True, name=f"{foot} swing height"))
            if stance.size and self.formulation.forces_are_controls:
                self.add_constraint(self._friction_constraint(i, stance.tolist(), foot))
        if not self.formulation.forces_are_controls:
            self.add_constraint(self._contact_friction_constraint())
        self.add_constraint(Constraint(robot.base_position, knots=-1, lower=self.target_base_position, upper=self.target_base_position, name="final base position"))
        if self.periodic:
            nv, nu = robot.nv, robot.nu
            x_goal = self.x0.copy()
            x_goal[robot.base_position_slice] = self.target_base_position
            components = list(range(6, 6 + nu)) + list(range(nv, 2 * nv))
            self.add_constraint(GoalConstraint(self.contact_model, x_goal, components=components, name="periodicity"))

    def stance_directions(self) -> list:
        """Per contact, the directions (r x 3) along which its stance position is constrained.

        Contacts on one rigid body (same parent joint) with the same schedule
        are not independent: fixing all their positions would repeat rows (12
        for a sole's 4 corners, 6 DOF) and slow IPOPT down. The first contact of
        such a group is fixed in 3 directions, the second in the 2 orthogonal
        to the line between them, the contact farthest from that line along the
        normal of their plane, the rest not at all: exactly the 6 DOF of the
        body (5 when the points are collinear). A contact alone on its body
        keeps all 3 directions. The unconstrained contacts stay on their
        footholds through the body's rigidity (docs/design/legged.md).
        """
        sched = self.schedule
        parents = self.robot.contact_parents()
        points = self.footholds[0]
        directions = [np.eye(3) for _ in parents]
        for parent in set(parents):
            group = [i for i, j in enumerate(parents) if j == parent]
            if len(group) < 2 or any(not np.array_equal(sched.stance[:, i], sched.stance[:, group[0]]) for i in group):
                continue
            rel = points[group] - points[group[0]]
            if np.linalg.norm(rel[1]) < 1e-6:  # coincident points: nothing to share, keep them independent
                continue
            line = rel[1] / np.linalg.norm(rel[1])
            directions[group[1]] = np.linalg.svd(line[None, :])[2][1:]  # the 2 directions across the line
            off_line = np.linalg.norm(rel - np.outer(rel @ line, line), axis=1)
            third = int(np.argmax(off_line))
            for i in group[2:]:
                directions[i] = np.zeros((0, 3))
            if off_line[third] > 1e-6:  # a third point off the line fixes the rotation about it
                normal = np.cross(line, rel[third])
                directions[group[third]] = (normal / np.linalg.norm(normal))[None, :]
        return directions

    def _friction_rows(self, f: Any) -> Any:
        """:func:`friction_rows` of one foot's force ``f`` (3,) with the robot's ``mu`` and the problem's model."""
        return friction_rows(f, self.robot.mu, self.friction)

    def _friction_constraint(self, i: int, knots: list, foot: str) -> Constraint:
        """The friction rows (:meth:`_friction_rows`) of foot ``i``'s force, a control (its ``fz >= 0`` is a bound)."""
        s = self.foot_force_slice(i)
        return Constraint(lambda x, w: self._friction_rows(w[s]), knots=knots, lower=0.0, upper=np.inf, midpoints=True, name=f"{foot} friction {self.friction}")

    def _contact_friction_constraint(self) -> Constraint:
        """Friction rows of every foot on the KKT contact forces ``f(x_k, u_k)`` under knot ``k``'s
        stance (the parameter), with ``fz >= 0`` for the cone (the pyramid implies it), at the knots
        before the last (which holds the control of knot ``N - 2``) where a foot stands. One
        constraint for all feet: one contact-dynamics solve (and Jacobian) per knot. A swing foot's
        rows are free (infinite bounds): its force is zero."""
        cm, stance, cone = self.contact_model, self.schedule.stance, self.friction == "cone"
        knots = np.flatnonzero(stance[: self.N - 1].any(axis=1))

        def rows(x: Any, w: Any, mask: Any) -> Any:
            f = cm.kkt(x, w, mask)[1]
            return ca.vertcat(*[ca.vertcat(self._friction_rows(f[3 * i : 3 * i + 3]), *([f[3 * i + 2]] if cone else [])) for i in range(self.n_feet)])

        per_foot = 2 if cone else 4
        lower = np.where(np.repeat(stance[knots], per_foot, axis=1), 0.0, -np.inf)
        return Constraint(rows, knots=knots.tolist(), lower=lower, upper=np.inf, params=self.dynamics_params[knots], name=f"friction {self.friction} on the contact forces")

    def _reference_states(self) -> np.ndarray:
        """Base moved uniformly by ``displacement`` at constant velocity; joints as in ``x0``.

        On a terrain, the base pose of the terrain plan (height and tilt referred
        to the terrain under the robot) with its finite-difference velocity in
        the body frame."""
        nq, s = self.robot.nq, np.linspace(0.0, 1.0, self.N)
        X = np.repeat(self.x0[None], self.N, axis=0)
        plan = self.terrain_plan
        if plan is not None:
            X[:, self.robot.base_position_slice], X[:, self.robot.base_orientation_slice] = plan.base_positions, plan.base_quaternions
            X[:, nq:] = 0.0
            velocity = np.gradient(plan.base_positions, self.tf_guess / (self.N - 1), axis=0)
            X[:, nq : nq + 3] = np.einsum("kji,kj->ki", np.array([quat_to_rot(q) for q in plan.base_quaternions]), velocity)
            return X
        X[:, self.robot.base_position_slice] = self.robot.base_position(self.x0) + np.outer(s, self.displacement)
        X[:, nq:] = 0.0
        X[:, nq : nq + 3] = self.displacement / self.tf_guess  # body frame = world for a level base
        return X

    def _add_costs(self) -> None:
        w, robot, cm = self.weights, self.robot, self.contact_model
        nj = robot.nv - 6  # joint coordinates
        Q = np.concatenate([np.broadcast_to(w.base_position, 3), np.full(3, w.base_orientation), np.full(nj, w.joint_position), np.full(6, w.base_velocity), np.full(nj, w.joint_velocity)])
        R = np.zeros(cm.control_dim)
        R[cm.u_slice], R[cm.f_slice], R[cm.a_slice] = w.torque, w.force, w.acceleration
        u_ref = np.zeros((self.N, cm.control_dim))
        if self.formulation.forces_are_controls:
            u_ref[:, cm.f_slice] = self.reference_forces()
        self.add_cost(QuadraticCost(cm, Q, R, x_ref=self.reference_states, u_ref=u_ref))
        if self.terrain_plan is not None and w.foothold > 0:
            add_foothold_cost(self, w.foothold)
        rate = np.full(cm.control_dim, w.control_rate)
        rate[cm.a_slice] = w.acceleration_rate
        if rate.any():
            self.penalize_control_rate(rate)

    # ------------------------------------------------------------ initial guess
    def nominal_guess(self) -> tuple:
        """States from the analytic IK of the nominal foot paths, controls from inverse dynamics.

        The base follows the reference, or with flight phases in the schedule
        the ballistic path of :func:`~trajopt.legged.base_path.ballistic_base_path`
        (with its velocities and accelerations, and stance forces carrying
        ``m (a + g)``); joints solve the IK closest to the
        previous knot's; velocities are finite differences on the manifold;
        forces share the weight among stance feet; accelerations are finite
        differences of the velocities; torques are RNEA's joint part.
        """
        robot, cm, h = self.robot, self.contact_model, self.tf_guess / (self.N - 1)
        nq, nv, joints = robot.nq, robot.nv, robot.joint_position_slice
        X = self.reference_states.copy()
        X[0] = self.x0
        path = ballistic_base_path(self.schedule, robot.base_position(self.x0), self.displacement, GRAVITY)
        if path is not None:  # flight phases: the base obeys gravity in the air (trajopt.legged.base_path)
            X[:, robot.base_position_slice] = path[0]
        for k in range(1, self.N if hasattr(robot, "nearest_ik") else 1):  # robots without analytic IK keep x0's joints
            q = X[k, :nq].copy()
            q[joints] = X[k - 1, joints]
            try:
                X[k, joints] = robot.nearest_ik(q, self.nominal_feet[k])
            except ValueError:  # unreachable nominal foot: keep the previous posture
                X[k, joints] = X[k - 1, joints]
        for k in range(self.N - 1):
            X[k, nq:] = np.asarray(robot.state_error(np.r_[X[k + 1, :nq], np.zeros(nv)], np.r_[X[k, :nq], np.zeros(nv)]))[:nv] / h
        X[-1, nq:] = 0.0
        F = self.stance_force_share()
        A = np.zeros((self.N, nv))
        A[:-1] = np.diff(X[:, nq:], axis=0) / h
        if path is not None:  # the path's own base velocity and acceleration; forces carry m (a + g)
            _, V_base, A_base = path
            X[:, nq : nq + 3], A[:, 0:3] = V_base, A_base  # body frame = world frame for the level base
            n_stance = self.schedule.stance.sum(axis=1)
            for k in np.flatnonzero(n_stance):
                for i in np.flatnonzero(self.schedule.stance[k]):
                    F[k, 3 * i : 3 * i + 3] = self.mass * (A_base[k] + [0.0, 0.0, GRAVITY]) / n_stance[k]
        W = np.zeros((self.N, cm.control_dim))
        if self.formulation.forces_are_controls:
            W[:, cm.f_slice] = F
        if self.formulation.acceleration_is_control:
            W[:, cm.a_slice] = A
        lo, hi = robot.control_bounds()
        for k in range(self.N):
            tau = robot.inverse_dynamics(X[k], A[k], forces=F[k])
            W[k, cm.u_slice] = np.clip(tau[6:], lo, hi)
        return X, W
