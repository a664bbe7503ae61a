"""Gaits without a schedule: contact-implicit optimization of one gait cycle, and the gait it finds.

:class:`ContactImplicitProblem` is a :class:`~trajopt.legged.LeggedProblem`
(the inverse formulation: state ``x = [q; v]``, controls ``[tau; f; a]``,
trapezoidal collocation) whose feet follow no schedule. Which foot is on the
ground when is decided by the optimizer, through complementarity between each
foot's height and its normal force and between its horizontal motion and that
force. With ``phi_i(q)`` the WORLD height of foot ``i``, ``p_i(q)`` its WORLD
position and ``lambda_i = f_z,i / (m g)`` its normal force as a fraction of
the robot's weight, at the inner knots ``k = 1 .. N - 2`` (the first and last
states are fixed, with every foot on the ground) and over every interval
``[k, k + 1]`` of length ``h``::

    phi_i >= 0,   lambda_i >= 0,   phi_i lambda_i <= epsilon,
    |p_x,i(k + 1) - p_x,i(k)| / h  (lambda_i(k) + lambda_i(k + 1)) / 2 <= epsilon   (and the same along y)

(a foot carrying weight is on the ground and does not slide from one knot to
the next; a foot in the air carries nothing), with friction (the pyramid ``|f_x|, |f_y| <= mu f_z``, or the
cone), joint, velocity and torque limits hard at every knot. The cycle
starts in :meth:`ContactImplicitProblem.start_state` (the standing posture,
all four feet on the ground and at rest, the base moving forward at
``speed``) and ends in the same state moved forward by ``speed * period``:
repeated, it is a periodic gait. A gait without a moment with all four feet
down (a flying trot, a gallop) cannot be found from this start.

The cost is that of :class:`~trajopt.legged.LeggedWeights` with
:data:`DISCOVERY_WEIGHTS`: the torques weigh most, and the forces are
regularized towards zero (no share of the weight per foot is assumed). With
the gaits' own weights (postures tracked tenfold more than torques) the
cheapest cycle kept the legs still and hopped on all four feet.

**Solve** (:class:`GaitDiscovery`, run by :func:`trajopt.solve`). From the
all-stance guess (:meth:`ContactImplicitProblem.nominal_guess`: the legs
still in the standing posture, the feet sliding with the base, each carrying
a quarter of the weight), IPOPT solves the problem with ``epsilon`` relaxed to
each of :data:`COMPLEMENTARITY_RELAXED` and then at the problem's
``complementarity`` (default 1e-4), each solve from the last
(:class:`~trajopt.homotopy.BoundHomotopy`). Its footfalls are then fixed and
one more solve cleans the plan: a foot carrying more than :data:`STANCE_FORCE`
of the weight at a knot is in stance there (its height held at zero), and
any other is in swing (its force bounded to zero, its height at least
``swing_apex`` at the middle knot of a swing of :data:`MIN_SWING_KNOTS` knots
or more; shorter lifts count as stance), and a foot standing at two
consecutive knots stays in place between them; the complementarity rows still
hold at ``epsilon``. In the returned plan a foot in the air carries nothing, a
loaded foot is on the ground (``phi_i lambda_i = 0``) and stays in place from
knot to knot, the swinging feet clear the ground, and the schedule it found
is stored in the solution's last homotopy stage
(:meth:`ContactImplicitProblem.solution_schedule`);
:func:`trajopt.legged.schedule.gait_name` names it. The height
complementarity holds at the knots: between them, in the interval of a
touchdown, the interpolated force and height are both positive (``trajopt
solve`` warns of it).
"""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

import casadi as ca
import numpy as np

from lie import _backend as B
from models.model import GRAVITY

from ..constraints import Constraint, GoalConstraint
from ..homotopy import BoundHomotopy, record_stage
from ..interval_constraints import IntervalConstraint
from .ocp import LeggedProblem, LeggedWeights
from .schedule import ContactSchedule, gait_name

#: The relaxed complementarity bounds the homotopy passes through before the problem's own, half a decade apart
#: (module docstring; decade steps lost the gait at 1.5 m/s: docs/design/legged.md).
COMPLEMENTARITY_RELAXED = (1.0, 0.3, 0.1, 0.03, 0.01, 3e-3, 1e-3, 3e-4)
#: The complementarity bound of the problem as stated.
COMPLEMENTARITY = 1e-4
#: A foot is in stance at a knot when its normal force exceeds this fraction of the robot's weight.
STANCE_FORCE = 1e-2
#: The shortest swing (knots) that must reach ``swing_apex``; shorter lifts of a foot count as stance.
MIN_SWING_KNOTS = 3
#: The Go1's default cycle (s): the time to travel ``DISCOVERY_STRIDE`` (m) at the commanded speed, within
#: ``DISCOVERY_PERIODS`` (:func:`discovery_period`; a longer cycle at 1.5 m/s asks for steps past the legs' reach).
DISCOVERY_STRIDE = 0.3
DISCOVERY_PERIODS = (0.4, 0.6)
#: Cost weights of gait discovery: effort first (torques), postures and velocities loosely held.
DISCOVERY_WEIGHTS = LeggedWeights(joint_position=0.01, joint_velocity=0.001, torque=1e-2)


def discovery_period(speed: float, dt: float) -> float:
    """The Go1's default cycle (s) at ``speed`` (m/s): ``DISCOVERY_STRIDE / |speed|`` within ``DISCOVERY_PERIODS``,
    rounded to a multiple of the knot spacing ``dt`` (s); the longest at rest. 0.6 s up to 0.5 m/s, 0.4 s from 0.75 m/s."""
    shortest, longest = DISCOVERY_PERIODS
    period = longest if speed == 0.0 else min(max(DISCOVERY_STRIDE / abs(speed), shortest), longest)
    return dt * round(period / dt)


class ContactImplicitProblem(LeggedProblem):
    """One gait cycle of a quadruped at ``speed`` with the feet's contacts chosen by complementarity (module docstring).

    Parameters
    ----------
    robot:
        A floating-base model with one point foot per leg on its own body and a
        friction coefficient ``mu`` (:class:`models.Go1`, a :class:`models.LeggedRobot`).
    speed:
        Forward speed (m/s) of the cycle's start, and its mean speed.
    period:
        Duration (s) of the cycle; default :func:`discovery_period` of ``speed``.
    dt:
        Knot spacing (s); ``period`` must be a multiple of it.
    swing_apex:
        The height (m) swinging feet reach at their middle knot in the final, footfall-fixed solve.
    complementarity:
        The bound ``epsilon`` of the complementarity rows as stated (module docstring).
    """

    #: The legged problems' IPOPT options with the monotone barrier update: with the adaptive one, the gait found
    #: changed with 1e-9 perturbations of the guess; with the monotone one it did not (docs/design/legged.md).
    solver_options = {"ipopt": {**LeggedProblem.solver_options["ipopt"], "mu_strategy": "monotone"}}

    def __init__(
        self,
        robot: Any,
        speed: float = 0.5,
        period: Optional[float] = None,
        dt: float = 0.02,
        swing_apex: float = 0.05,
        complementarity: float = COMPLEMENTARITY,
        friction: str = "pyramid",
        weights: Optional[LeggedWeights] = None,
        name: str = "discover",
    ) -> None:
        speed = B.real(speed, "speed")
        dt = B.real(dt, "dt", lower=0.0, strict=True)
        period = discovery_period(speed, dt) if period is None else B.real(period, "period", lower=0.0, strict=True)
        intervals = int(round(period / dt))
        if intervals < 2 * MIN_SWING_KNOTS or abs(intervals * dt - period) > 1e-9 * period:
            raise ValueError(f"period: {period} s must be a multiple of dt = {dt} s with at least {2 * MIN_SWING_KNOTS} intervals")
        self.complementarity_bound = B.real(complementarity, "complementarity", lower=0.0, strict=True)
        if self.complementarity_bound >= COMPLEMENTARITY_RELAXED[-1]:
            raise ValueError(f"complementarity: expected a bound below the homotopy's last relaxed one, {COMPLEMENTARITY_RELAXED[-1]:g}; got {complementarity!r}")
        if not getattr(robot, "is_floating", False) or getattr(robot, "leg_roles", None) is None:
            raise ValueError(f"robot: expected a quadruped with leg roles (a models.LeggedRobot or Go1), got {getattr(robot, 'name', robot)!r}")
        shared = robot.shared_contacts()
        if shared:
            raise ValueError(f"robot: gait discovery needs one point foot per leg; {robot.name}'s contacts {shared} share bodies")
        self.speed = speed
        x0 = self.start_state(robot, speed)
        schedule = ContactSchedule(tuple(robot.kinematics_bodies), np.ones((intervals + 1, robot.nc), dtype=bool), dt, "discover")
        super().__init__(robot, schedule, x0=x0, displacement=(speed * period, 0.0, 0.0), swing_apex=swing_apex, friction=friction, weights=weights or DISCOVERY_WEIGHTS, name=name)
        self.homotopy = GaitDiscovery(self)

    @staticmethod
    def start_state(robot: Any, speed: float) -> np.ndarray:
        """The standing posture (``robot.init_state()``) with the base moving forward at ``speed`` and the joints
        moving so that every foot is at rest: ``v_joints = -J_joints^+ J_base v_base`` of the feet's Jacobian."""
        x = np.array(robot.init_state(), dtype=float)
        nq = robot.nq
        J = np.asarray(robot.kinematics_velocity_matrix(x))
        base = np.zeros(6)
        base[0] = speed  # body frame = world frame for the level base
        x[nq : nq + 6] = base
        x[nq + 6 :] = -np.linalg.lstsq(J[:, 6:], J[:, :6] @ base, rcond=None)[0]
        return x

    # ------------------------------------------------------------ building (LeggedProblem's hooks)
    def _add_constraints(self) -> None:
        robot, cm, N, nc = self.robot, self.contact_model, self.N, self.robot.nc
        weight = self.mass * GRAVITY
        inner = list(range(1, N - 1))  # the first and last states are fixed, every foot on the ground (module docstring)
        self.add_constraint(Constraint(lambda x, w: cm.dynamics_residual(x, w), name="dynamics residual"))

        def heights(x: Any) -> Any:
            kin = robot.kinematics(x)
            return ca.vertcat(*[kin[3 * i + 2] for i in range(nc)])

        #: feet above the ground; its per-knot bounds hold the footfalls in the final solve (:class:`GaitDiscovery`)
        self.height_constraint = Constraint(heights, knots=inner, lower=np.zeros((N - 2, nc)), upper=np.full((N - 2, nc), np.inf), name="feet above ground")
        self.add_constraint(self.height_constraint)

        def contact(x: Any, w: Any) -> Any:
            kin, f = robot.kinematics(x), w[cm.f_slice]
            return ca.vertcat(*[kin[3 * i + 2] * f[3 * i + 2] / weight for i in range(nc)])

        #: height against load, ``phi_i lambda_i <= epsilon`` at the knots (module docstring)
        self.contact_complementarity = Constraint(contact, knots=inner, lower=-np.inf, upper=self.complementarity_bound, name="height complementarity")
        self.add_constraint(self.contact_complementarity)
        h = self.schedule.dt

        def sliding(x: Any, u: Any, y: Any, w: Any) -> Any:
            start, end, f, g = robot.kinematics(x), robot.kinematics(y), u[cm.f_slice], w[cm.f_slice]
            rows = []
            for i in range(nc):
                load = (f[3 * i + 2] + g[3 * i + 2]) / (2 * weight)
                for j in (0, 1):
                    speed = (end[3 * i + j] - start[3 * i + j]) / h
                    rows += [speed * load, -speed * load]
            return ca.vertcat(*rows)

        #: mean horizontal speed against mean load over each interval, ``+-(Delta p / h) (lambda_k + lambda_k+1) / 2 <= epsilon``
        self.sliding_complementarity = IntervalConstraint(sliding, lower=-np.inf, upper=self.complementarity_bound, name="sliding complementarity")
        self.add_constraint(self.sliding_complementarity)

        def travel(x: Any, u: Any, y: Any, w: Any) -> Any:
            start, end = robot.kinematics(x), robot.kinematics(y)
            return ca.vertcat(*[end[3 * i + j] - start[3 * i + j] for i in range(nc) for j in (0, 1)])

        #: each foot's horizontal travel over each interval: free, held at zero for a foot standing at both ends in
        #: the final solve (:class:`GaitDiscovery`)
        self.travel_constraint = IntervalConstraint(travel, lower=np.full((N - 1, 2 * nc), -np.inf), upper=np.full((N - 1, 2 * nc), np.inf), name="stance feet stay")
        self.add_constraint(self.travel_constraint)
        for i, foot in enumerate(self.schedule.foot_names):
            self.add_constraint(self._friction_constraint(i, list(range(N)), foot))
        goal = self.x0.copy()
        goal[robot.base_position_slice] = self.target_base_position
        self.add_constraint(GoalConstraint(cm, goal, name="cycle end: the start moved forward"))

    def reference_forces(self) -> np.ndarray:
        """Zero: the forces are regularized towards zero, no share of the weight per foot assumed (module docstring)."""
        return np.zeros((self.N, 3 * self.n_feet))

    def nominal_guess(self) -> tuple:
        """The all-stance guess: the legs still in the standing posture while the base moves at ``speed`` (the feet
        slide with it), the velocities of the start, each foot carrying a quarter of the weight, the torques
        that hold the posture."""
        robot, cm, nq = self.robot, self.contact_model, self.robot.nq
        X = np.repeat(self.x0[None], self.N, axis=0)
        X[:, robot.base_position_slice] = self.reference_states[:, robot.base_position_slice]
        X[:, nq + 6 :] = 0.0
        W = np.zeros((self.N, cm.control_dim))
        forces = np.tile([0.0, 0.0, self.mass * GRAVITY / self.n_feet], self.n_feet)
        W[:, cm.f_slice] = forces
        lo, hi = robot.control_bounds()
        W[:, cm.u_slice] = np.clip(np.asarray(robot.inverse_dynamics(X[0], np.zeros(robot.nv), forces=forces)).ravel()[6:], lo, hi)
        return X, W

    # ------------------------------------------------------------ the gait found
    def loads(self, controls: Any) -> np.ndarray:
        """Each foot's normal force as a fraction of the weight (K, nc) in ``controls`` (K, control size)."""
        W = np.atleast_2d(np.asarray(controls, dtype=float))
        return W[:, self.contact_model.f_slice].reshape(W.shape[0], self.n_feet, 3)[:, :, 2] / (self.mass * GRAVITY)

    def footfalls(self, controls: Any) -> np.ndarray:
        """Stance (N, nc) read from the loads of ``controls``: above :data:`STANCE_FORCE`, with swings shorter than
        :data:`MIN_SWING_KNOTS` counted as stance (module docstring)."""
        stance = self.loads(controls) > STANCE_FORCE
        for i in range(self.n_feet):
            for start, end in _runs(~stance[:, i]):
                if end - start < MIN_SWING_KNOTS:
                    stance[start:end, i] = True
        return stance

    def solution_schedule(self, solution: Any) -> ContactSchedule:
        """The contact schedule of ``solution``: the footfalls its final solve held (recorded in its last homotopy
        stage), or those of its loads (:meth:`footfalls`) when it has none (a failed discovery)."""
        record = solution.homotopy[-1] if getattr(solution, "homotopy", None) else {}
        stance = np.asarray(record["stance"], dtype=bool) if "stance" in record else self.footfalls(solution.controls)
        return ContactSchedule(self.schedule.foot_names, stance, self.schedule.dt, "discovered")

    def complementarity_violation(self, solution: Any) -> float:
        """The largest ``phi lambda`` at the knots or mean horizontal speed times mean load over an interval (module
        docstring) of ``solution``, from its states and forces."""
        robot, nc = self.robot, self.n_feet
        loads = self.loads(solution.controls)
        feet = np.array([np.asarray(robot.kinematics(x)).reshape(nc, 3) for x in np.asarray(solution.states)])
        height = float(np.max(feet[1:, :, 2] * loads[1:]))
        speed = np.abs(np.diff(feet[:, :, :2], axis=0)).max(axis=2) / self.schedule.dt
        return max(height, float(np.max(speed * (loads[:-1] + loads[1:]) / 2)))

    def gait(self, solution: Any) -> Tuple[str, float]:
        """The name of the gait ``solution`` found and how clearly (:func:`~trajopt.legged.schedule.gait_name`)."""
        return gait_name(self.solution_schedule(solution).stance, self.robot.leg_roles)


class GaitDiscovery:
    """The solve of a :class:`ContactImplicitProblem` (its :attr:`~trajopt.Problem.homotopy`): the complementarity
    homotopy, then one solve with the footfalls it found held (module docstring)."""

    def __init__(self, problem: ContactImplicitProblem, relaxed: Sequence[float] = COMPLEMENTARITY_RELAXED) -> None:
        self.problem = problem
        self.complementarity = BoundHomotopy((problem.contact_complementarity, problem.sliding_complementarity), tuple(relaxed))

    def solve(self, solver: Any, warm_start: Optional[Any] = None) -> Any:
        """The complementarity homotopy with ``solver`` from ``warm_start``, then the footfall-fixed solve (skipped
        when the homotopy failed); the last solve's :class:`~trajopt.Solution` with the stages' totals."""
        problem = self.problem
        solution = self.complementarity.solve(solver, warm_start)
        if not solution.success:
            return solution
        stance = problem.footfalls(solution.controls)
        stages: List[dict] = list(solution.homotopy)
        stages[-1]["reached"] = problem.complementarity_violation(solution)
        held = (problem.height_constraint, problem.travel_constraint)
        saved = (problem.control_lower.copy(), problem.control_upper.copy(), [(c.lower, c.upper) for c in held])
        try:
            self._hold_footfalls(stance)
            record = {"upper": problem.complementarity_bound, "label": "the footfalls held", "stance": stance.tolist()}
            solution = record_stage(solver.solve(warm_start=solution, homotopy=True), stages, record)
        finally:
            problem.control_lower, problem.control_upper = saved[0], saved[1]
            for constraint, (lower, upper) in zip(held, saved[2]):
                constraint.lower, constraint.upper = lower, upper
        if not solution.success:
            solution.status = f"{solution.status} (the solve with the footfalls held)"
        return solution

    def _hold_footfalls(self, stance: np.ndarray) -> None:
        """Bounds of the footfall-fixed solve: stance feet at height zero and, from one stance knot to the next, in
        place; swing feet unloaded and ``swing_apex`` high at the middle knot of each swing."""
        problem = self.problem
        N, nc = problem.N, problem.n_feet
        lower, upper = np.zeros((N - 2, nc)), np.zeros((N - 2, nc))  # the height rows of knots 1 .. N - 2
        travel = np.full((N - 1, 2 * nc), np.inf)
        for i in range(nc):
            swing = ~stance[:, i]
            upper[swing[1:-1], i] = np.inf
            forces = problem.foot_force_slice(i)
            problem.control_lower[swing, forces] = 0.0
            problem.control_upper[swing, forces] = 0.0
            for start, end in _runs(swing):
                lower[(start + end - 1) // 2 - 1, i] = problem.swing_apex
            travel[stance[:-1, i] & stance[1:, i], 2 * i : 2 * i + 2] = 0.0
        problem.height_constraint.lower, problem.height_constraint.upper = lower, upper
        problem.travel_constraint.lower, problem.travel_constraint.upper = -travel, travel


def _runs(mask: np.ndarray) -> List[Tuple[int, int]]:
    """The ``(start, end)`` of each run of True in ``mask`` (end exclusive)."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(int), [0]])))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist()))
