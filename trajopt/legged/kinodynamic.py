"""The kinodynamic legged optimal-control problem (OCS2's floating-base model, point feet).

:class:`KinodynamicProblem` is a :class:`trajopt.Problem` on a
:class:`models.FloatingBaseModel`: per knot the state
``x = [v_B, w_B, r, e, q_j]`` (base twist in base axes, base position, ZYX
Euler angles, joint positions) and the input ``u = [f (3 nc, WORLD); qdot_j]``,
plus the base acceleration ``a_B`` (6) with ``formulation="inverse"`` (the
default). There are no joint torques or joint accelerations: the base moves by
the locked-inertia dynamics of the whole robot, the joints kinematically (their
accelerations are taken as zero in the base dynamics). Given a
:class:`ContactSchedule` it imposes, like :class:`LeggedProblem` and with the
feet positions from the full model's kinematics of
``FloatingBaseModel.to_multibody(x, u)``,

- the base dynamics: ``"inverse"``, the 6-row residual
  ``M_bb a_B + h_b - sum_i J_b,i^T f_i = 0`` at every knot (and at
  Hermite-Simpson midpoints) with ``d/dt [v_B; w_B] = a_B`` collocated;
  ``"forward"``, the flow map ``a_B = M_bb^-1 (...)`` inside the collocated ODE;
- stance feet on their footholds, touchdown knots at rest (``J_i v = 0``);
- swing feet above the ground and at least ``swing_apex`` high at the middle
  knot of each swing; zero force in swing;
- ``f_z >= 0`` and the friction pyramid ``|f_x|, |f_y| <= mu f_z`` (default)
  or the cone (``friction="cone"``);
- joint position limits (state bounds) and joint velocity limits (input bounds);
- ``|pitch| <= models.floating_base.MAX_PITCH``, away from the Euler angles'
  gimbal lock (never active on a gait);
- the joint velocities of ``x0`` at the first knot, the final base position
  ``p_0 + displacement`` (an equality).

The footholds, the reference motion, the reference forces (the weight shared
by the stance feet) and the initial guess are those of the full-dynamics
:class:`LeggedProblem` on the same robot, schedule and weights
(``KinodynamicProblem.full_problem``), converted with
``FloatingBaseModel.from_multibody``; solving ``full_problem`` gives the
torque-level plan to compare with. The cost uses the same
:class:`LeggedWeights`: base velocity, position and orientation (differences
of Euler angles, equal to the axis-angle error to first order about a level
base), joint positions, joint velocities (an input here), forces, and base
accelerations (``"inverse"``); the torque weight has no variable to act on.

Trapezoidal collocation is the default transcription, as for the full problem;
with Hermite-Simpson the residual, stance, swing-height and friction
constraints also hold at the interval midpoints; RK4 multiple shooting only
with ``"forward"`` (a piecewise-constant ``a_B`` cannot satisfy the knot
residual of ``"inverse"``).
"""
from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

import casadi as ca
import numpy as np

from models.floating_base import BASE_ANGULAR_VELOCITY, BASE_EULER, BASE_LINEAR_VELOCITY, BASE_POSITION, JOINT_POSITIONS, MAX_PITCH, PITCH, FloatingBaseModel
from models.formulation import Formulation
from models.multibody_model import BASE_NV

from ..constraints import Constraint
from ..costs import QuadraticCost
from ..problem import Problem
from .footholds import swing_apex_knots
from .ocp import LeggedProblem, LeggedWeights
from .schedule import ContactSchedule
from .timing import MIN_STANCE, MIN_SWING, apply_timing


class KinodynamicProblem(Problem):
    """A gait of a legged robot on the floating-base (kinodynamic) model: base twist, position and ZYX
    Euler angles plus joint positions as state, WORLD contact forces and joint velocities as input.

    The base moves by the whole robot's locked-inertia dynamics, the joints kinematically; the
    contact, friction, swing and limit constraints and the cost are those of :class:`LeggedProblem`
    on the same robot and schedule.

    Parameters
    ----------
    robot:
        A floating-base :class:`models.MultibodyModel` whose kinematics bodies
        are the feet, with a friction coefficient ``mu`` (e.g. :class:`models.Go1`).
    schedule:
        Which feet are in stance at each knot (its ``dt`` and length set ``N`` and ``tf``).
    x0:
        Initial MULTIBODY state ``[q; v]`` (default ``robot.init_state()``); the
        problem fixes its floating-base part and starts from its joint velocities.
    displacement, swing_apex, friction, weights:
        As for :class:`LeggedProblem`.
    formulation:
        ``"inverse"`` (default; ``a_B`` in the input, residual constraint) or
        ``"forward"`` (the flow map): see :class:`models.FloatingBaseModel`.
    """

    default_transcription = "trapezoidal"

    def __init__(
        self,
        robot: Any,
        schedule: ContactSchedule,
        x0: Any = None,
        displacement: Sequence[float] = (0.15, 0.0, 0.0),
        swing_apex: float = 0.08,
        friction: str = "pyramid",
        weights: Optional[LeggedWeights] = None,
        formulation: "str | Formulation" = "inverse",
        name: str = "kinodynamic",
    ) -> None:
        self.full_problem = LeggedProblem(robot, schedule, x0, displacement, swing_apex, friction=friction, weights=weights, name=f"{name}-full")
        full = self.full_problem
        schedule = full.schedule  # keyed by the robot's feet (ContactSchedule.for_robot)
        self.floating_base = FloatingBaseModel(robot, point_contacts=schedule.foot_names, formulation=formulation)
        self.robot, self.schedule, self.friction, self.formulation, self.weights = robot, schedule, friction, self.floating_base.formulation, full.weights
        fb_x0, self.initial_joint_velocities = self.floating_base.from_multibody(full.x0)
        super().__init__(self.floating_base, schedule.N, schedule.duration, fb_x0, name=name)
        self.displacement, self.swing_apex = full.displacement, full.swing_apex
        self.footholds, self.target_base_position = full.footholds, full.target_base_position
        self._add_bounds()
        self._add_constraints()
        self.reference_states = self._from_multibody(full.reference_states)[0]
        self._add_costs()
        self.set_initial_guess(*self._converted_guess())

    def check_transcription(self, name: str) -> None:
        self.formulation.check_transcription(name)

    def set_timing(self, timing: str, min_stance: float = MIN_STANCE, min_swing: float = MIN_SWING) -> None:
        """The schedule's fixed times, or its phase durations as decisions: as
        :meth:`LeggedProblem.set_timing <trajopt.legged.LeggedProblem.set_timing>` (:func:`.timing.apply_timing`)."""
        apply_timing(self, timing, min_stance, min_swing)

    # ------------------------------------------------------------ conversions
    def _from_multibody(self, X: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """Floating-base states (K, 12 + nj) and joint velocities (K, nj) of multibody states (K, nx)."""
        pairs = [self.floating_base.from_multibody(x) for x in X]
        return np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])

    def multibody_states(self, states: np.ndarray, controls: np.ndarray) -> np.ndarray:
        """Multibody states ``[q; v]`` (N, robot.nx) of a floating-base trajectory (e.g. a solution's)."""
        return np.array([self.floating_base.to_multibody(x, u) for x, u in zip(states, controls)])

    def _converted_guess(self) -> Tuple[np.ndarray, np.ndarray]:
        """The full problem's initial guess (IK of the nominal feet paths) in this problem's variables."""
        full, fb = self.full_problem, self.floating_base
        X, W = full.initial_guess()
        states, joint_velocities = self._from_multibody(X)
        U = np.zeros((self.N, self.nu))
        U[:, fb.force_slice], U[:, fb.joint_velocity_slice] = W[:, full.contact_model.f_slice], joint_velocities
        if self.formulation.acceleration_is_control:  # the base part of the full guess's accelerations
            U[:, fb.base_acceleration_slice] = W[:, full.contact_model.a_slice][:, :BASE_NV]
        return states, U

    # ------------------------------------------------------------ building
    def _add_bounds(self) -> None:
        fb, robot = self.floating_base, self.robot
        xl, xu = np.full(self.nx, -np.inf), np.full(self.nx, np.inf)
        xl[JOINT_POSITIONS], xu[JOINT_POSITIONS] = robot.joint_lower, robot.joint_upper
        xl[PITCH], xu[PITCH] = -MAX_PITCH, MAX_PITCH
        self.bound_states(xl, xu, knots=list(range(1, self.N)))  # knot 0 is x0
        lower, upper = self.control_lower.copy(), self.control_upper.copy()
        for i, s in enumerate(fb.contact_slices):
            swing = ~self.schedule.stance[:, i]
            lower[swing, s], upper[swing, s] = 0.0, 0.0
            lower[~swing, s.start + 2] = 0.0  # unilateral normal force
        lower[0, fb.joint_velocity_slice] = upper[0, fb.joint_velocity_slice] = self.initial_joint_velocities
        self.bound_controls(lower, upper)

    def _add_constraints(self) -> None:
        robot, sched, fb = self.robot, self.schedule, self.floating_base
        if self.formulation.acceleration_is_control:
            self.add_constraint(Constraint(lambda x, u: fb.dynamics_residual(x, u), midpoints=True, name="base dynamics residual"))

        def feet(x: Any) -> Any:
            return robot.kinematics(fb.to_multibody(x))

        def feet_velocity(x: Any, u: Any) -> Any:
            return robot.kinematics_velocity(fb.to_multibody(x, u))

        for i, foot in enumerate(sched.foot_names):
            rows = slice(3 * i, 3 * i + 3)
            stance = np.flatnonzero(sched.stance[:, i])
            pos_knots = [k for k in stance if k > 0]
            if pos_knots:
                self.add_constraint(Constraint(lambda x, u, p, rows=rows: feet(x)[rows] - p, knots=pos_knots, params=self.footholds[pos_knots, i], midpoints=True, name=f"{foot} on foothold"))
                touchdowns = [k for k in pos_knots if not sched.stance[k - 1, i]]
                if touchdowns:
                    self.add_constraint(Constraint(lambda x, u, rows=rows: feet_velocity(x, u)[rows], knots=touchdowns, name=f"{foot} touchdown at rest"))
            swing = np.flatnonzero(~sched.stance[:, i])
            if swing.size:
                apex = set(swing_apex_knots(sched, i))
                lower = np.array([self.footholds[k, i, 2] + (self.swing_apex if k in apex else 0.0) for k in swing])[:, None]
                self.add_constraint(Constraint(lambda x, z=3 * i + 2: feet(x)[z], knots=swing.tolist(), lower=lower, upper=np.inf, midpoints=True, name=f"{foot} swing height"))
            if stance.size:
                self.add_constraint(self._friction_constraint(i, stance.tolist(), foot))
        target = self.target_base_position
        self.add_constraint(Constraint(lambda x: x[BASE_POSITION], knots=-1, lower=target, upper=target, name="final base position"))

    def _friction_constraint(self, i: int, knots: list, foot: str) -> Constraint:
        """``mu f_z -+ f_x, mu f_z -+ f_y >= 0`` (pyramid) or ``mu^2 f_z^2 - f_x^2 - f_y^2 >= 0`` (cone)."""
        start, mu = self.floating_base.contact_slices[i].start, self.robot.mu

        def residual(x: Any, u: Any) -> Any:
            fx, fy, fz = u[start], u[start + 1], u[start + 2]
            if self.friction == "pyramid":
                return ca.vertcat(mu * fz - fx, mu * fz + fx, mu * fz - fy, mu * fz + fy)
            return mu * mu * fz * fz - fx * fx - fy * fy

        return Constraint(residual, knots=knots, lower=0.0, upper=np.inf, midpoints=True, name=f"{foot} friction {self.friction}")

    def _add_costs(self) -> None:
        w, fb = self.weights, self.floating_base
        Q = np.zeros(self.nx)
        Q[BASE_LINEAR_VELOCITY] = Q[BASE_ANGULAR_VELOCITY] = w.base_velocity
        Q[BASE_POSITION] = np.broadcast_to(w.base_position, 3)
        Q[BASE_EULER] = w.base_orientation
        Q[JOINT_POSITIONS] = w.joint_position
        R = np.zeros(self.nu)
        R[fb.force_slice], R[fb.joint_velocity_slice], R[fb.base_acceleration_slice] = w.force, w.joint_velocity, w.acceleration
        u_ref = np.zeros((self.N, self.nu))
        u_ref[:, fb.force_slice] = self.full_problem.stance_force_share()
        self.add_cost(QuadraticCost(fb, Q, R, x_ref=self.reference_states, u_ref=u_ref))
