"""A receding horizon that follows an offline legged plan: a jump, or a trot over stepping stones, executed under feedback.

:class:`PlanTrackingMPC` is the quadruped horizon of :class:`~trajopt.mpc.legged.LeggedMPC`
(torques as controls, the KKT contact dynamics with each knot's stance mask, friction
pyramids, touchdown rows, RTI with HPIPM) whose gait, references and swing targets come
from a solved :class:`~trajopt.legged.LeggedProblem` (``go1-jump``; ``go1-stones``, whose
footholds the plan chose for the whole crossing) instead of a periodic gait and velocity
commands. At a tick at time ``t`` the horizon's knot ``k``
is at plan time ``s_k = t + k h - start`` (the robot stands ``start`` seconds first):

- its stance mask is the plan's at ``s_k`` (:meth:`LeggedProblem.knot_index
  <trajopt.legged.LeggedProblem.knot_index>` on the plan's knot times), every foot down
  before the plan starts and after it ends, so the contact schedule, flight included,
  moves through the horizon;
- its state reference is the plan's state at ``s_k`` (as the plan's transcription
  interpolates it), its torque reference the plan's torques; before the start the plan's
  first state with the standing torques, after the end its last posture at rest (every
  velocity zero) with the torques that hold it (:meth:`PlanTrackingMPC.holding_torques`).
  A gait's plan ends moving: its last state, velocity included, held as the reference
  past the end asked the horizon to keep moving while staying in place, and at the switch
  to standing Solo12's feet slid off its top tread (docs/design/mpc.md). At a tick before
  the start or after the end (the robot standing), that state is moved onto the feet where
  they stand, at rest (:meth:`PlanTrackingMPC.posture_on`), with the torques that hold it
  on vertical contact forces (:meth:`PlanTrackingMPC.holding_torques`): the robot stands
  where the plan ends;
- each swinging foot tracks the plan's foot at ``s_k``, and its touchdown row holds it
  at the height where the plan lands it; the friction pyramids are about ``e_z``, exact
  over flat ground and over a block terrain's horizontal tops (the stones), which the
  horizon needs no other knowledge of: the plan's feet clear them.

The touchdown rows, the friction pyramids and the measured state at every tick are the
feedback; the plan's timing is not adapted (a flight cannot be retimed once airborne).
"""
from __future__ import annotations

from typing import Any, Tuple

import numpy as np

from ..legged.ocp import LeggedProblem
from .legged import LeggedMPC


#: Gauss-Newton steps of :meth:`PlanTrackingMPC.posture_on` (from the plan's posture, feet within centimetres of the plan's).
POSTURE_STEPS = 3


class PlanTrackingMPC(LeggedMPC):
    """The horizon of :class:`~trajopt.mpc.legged.LeggedMPC` following ``plan`` (module docstring).

    Parameters
    ----------
    plan:
        A solved :class:`trajopt.Solution` of a :class:`~trajopt.legged.LeggedProblem` (its problem attached).
    start:
        Seconds the robot stands before the plan starts (>= 0); the attribute ``plan_start`` may be
        set again before a run.
    options:
        :class:`~trajopt.mpc.legged.LeggedMPC`'s keywords other than ``gaits``, ``commands``, ``goal`` and ``step_timing``
        (``horizon``, ``dt``, ``weights``, ``integrator``, ``ground``, ...).
    """

    def __init__(self, plan: Any, start: float = 0.0, **options: Any) -> None:
        for key in ("gaits", "commands", "goal", "step_timing"):
            if key in options:
                raise ValueError(f"{key}: a plan-tracking horizon follows its plan's schedule and motion; it takes no {key}")
        problem = getattr(plan, "problem", None)
        if not isinstance(problem, LeggedProblem):
            raise ValueError("plan: expected a solution of a legged problem with its problem attached")
        if problem.robot.shared_contacts():
            raise ValueError(f"plan: a plan-tracking horizon follows point feet; {problem.name!r} stands on soles (contact points sharing a body)")
        if not (np.isfinite(start) and start >= 0):
            raise ValueError(f"start: expected a wait >= 0 s before the plan, got {start!r}")
        self.plan, self.plan_problem, self.plan_start = plan, problem, float(start)
        #: the plan's feet (N_plan, 4, 3) at its knots
        self.plan_feet = np.array([np.asarray(problem.robot.kinematics(s), dtype=float).reshape(4, 3) for s in plan.states])
        super().__init__(problem.robot, gaits="stand", step_timing=None, **options)
        rest = np.array(plan.states[-1], dtype=float)
        rest[problem.robot.nq :] = 0.0
        #: the reference (state, torques) of the knots after the plan ends: its last posture at rest, and the torques that hold it
        self._final_rest = (rest, self.holding_torques(rest))

    def lifts_feet(self) -> bool:
        """The plan lifts them (its gait is the stand's only before and after it)."""
        return True

    def _most_landings_per_knot(self) -> int:
        """Every foot may land at one knot (a jump's landing)."""
        return len(self.landing_groups)

    @property
    def plan_end(self) -> float:
        """The time (s) the plan ends, after which the robot stands."""
        return self.plan_start + self.plan.tf

    def _plan_time(self, times: Any) -> np.ndarray:
        """The plan's times of loop ``times``, clipped to ``[0, tf]``."""
        return np.clip(np.atleast_1d(np.asarray(times, dtype=float)) - self.plan_start, 0.0, self.plan.tf)

    def reference_states(self, times: Any) -> np.ndarray:
        """The plan's states (K, n) at loop ``times`` (K,): its first before it starts, its last after it ends."""
        return np.atleast_2d(self.plan.evaluate(self._plan_time(times))[0])

    def posture_on(self, state: np.ndarray, planned: np.ndarray, feet: np.ndarray) -> np.ndarray:
        """The plan's ``state`` (n,) moved onto ``feet`` (nc, 3), where the robot stands in place of the plan's
        ``planned`` feet (nc, 3), at rest: its base shifted by the feet's mean displacement, its joints re-fitted by
        :data:`POSTURE_STEPS` Gauss-Newton steps on ``|kinematics(q) - feet|^2`` (a quadruped's legs have three joints for
        their foot's three coordinates: the fit is exact within reach). A landing short of the plan's feet left the
        plan's own posture out of reach: held to it, the legs pushed the feet apart, which crept on MuJoCo's soft
        contacts until the Go1 fell (docs/design/mpc.md)."""
        robot, joints = self.robot, self.robot.joint_position_slice
        x = np.array(state, dtype=float)
        x[robot.base_position_slice] += feet.mean(axis=0) - planned.mean(axis=0)
        x[robot.nq :] = 0.0
        target = np.ravel(feet)
        for _ in range(POSTURE_STEPS):
            residual = target - np.asarray(robot.kinematics(x), dtype=float).ravel()
            jacobian = np.asarray(robot.kinematics_jacobian(x, wrt="q"), dtype=float)[:, joints]
            x[joints] += np.linalg.lstsq(jacobian, residual, rcond=None)[0]
        return x

    def holding_torques(self, x: np.ndarray) -> np.ndarray:
        """The joint torques (nu,) that hold the robot at rest in the configuration of ``x`` on vertical contact forces:
        ``tau = ID(q, 0, 0, f)`` over the joints, the forces ``f_z`` (nc,) the least-norm ones whose wrench balances
        gravity on the base (the base rows of ``ID`` zero). Torques that held another posture needed tangential forces,
        under which the feet crept on MuJoCo's soft contacts (docs/design/mpc.md)."""
        robot, nc = self.robot, self.robot.nc
        zero = np.zeros(robot.nv)
        rest = np.r_[np.asarray(x, dtype=float)[: robot.nq], zero]

        def inverse_dynamics(forces: np.ndarray) -> np.ndarray:
            return np.asarray(robot.inverse_dynamics(rest, zero, forces), dtype=float).ravel()

        gravity = inverse_dynamics(np.zeros(3 * nc))
        unit = np.eye(3 * nc)[2::3]  # a unit upward force on each foot
        wrench = np.column_stack([inverse_dynamics(f) - gravity for f in unit])
        f_z = np.linalg.lstsq(wrench[:6], -gravity[:6], rcond=None)[0]
        return (gravity + wrench @ f_z)[6:]  # ID is affine in the forces

    def stance(self, times: np.ndarray) -> np.ndarray:
        """The plan's stance (K, 4) at ``times`` (K,), every foot down before and after the plan."""
        times = np.atleast_1d(np.asarray(times, dtype=float))
        knots = self.plan_problem.knot_index(self._plan_time(times), self.plan.times)
        stance = self.plan_problem.schedule.stance[knots].copy()
        stance[(times < self.plan_start) | (times >= self.plan_end)] = True
        return stance

    def update(self, problem: Any, t: float, x: np.ndarray) -> None:
        """:meth:`LeggedMPC.update <trajopt.mpc.legged.LeggedMPC.update>` with the state and torque references of the plan
        (sampled once at the horizon's knots, for the references and the swing targets), and outside it the standing
        references of the module docstring."""
        times = t + self.dt * np.arange(problem.N)
        states, controls = self._samples = self.plan.evaluate(self._plan_time(times))
        super().update(problem, t, x)
        torques = self.plan_problem.joint_torques(controls)
        before, after = times < self.plan_start, times >= self.plan_end
        states = states.copy()
        torques[before] = self._standing_torques
        states[after], torques[after] = self._final_rest
        if t < self.plan_start or t >= self.plan_end:  # standing at this tick: the plan's first or last posture on the feet where they stand
            outside, end = (after, -1) if t >= self.plan_end else (before, 0)
            feet = np.asarray(self.robot.kinematics(x), dtype=float).reshape(-1, 3)
            posture = self.posture_on(self.plan.states[end], self.plan_feet[end], feet)
            states[outside], torques[outside] = posture, self.holding_torques(posture)
        self.state_cost.x_ref = states
        self.state_cost.u_ref = torques
        self.terminal_cost.x_ref = states[-1]

    def _swing_targets(self, x: np.ndarray, times: np.ndarray, masks: np.ndarray, heading: float, capture: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """The plan's feet (N, 16: targets and weights) at the swing knots, and the footholds (N, 4, 3) they land on (also
        kept in ``planned_footholds`` by landing time); ``times`` are the knots :meth:`update` sampled the plan at
        (``capture`` unused: the plan's feet are the targets)."""
        N = len(times)
        targets, footholds = np.zeros((N, 16)), np.full((N, 4, 3), np.nan)
        feet = np.array([np.asarray(self.robot.kinematics(s), dtype=float).reshape(4, 3) for s in self._samples[0]])
        stance = self.plan_problem.schedule.stance
        knots = self.plan_problem.knot_index(self._plan_time(times), self.plan.times)
        for i in range(4):
            k = np.flatnonzero(~masks[:, i])
            if not k.size:
                continue
            targets[k, 3 * i : 3 * i + 3] = feet[k, i]
            targets[k, 12 + i] = np.sqrt(self.weights.swing_foot)
            for j in k:  # the plan's foot at the touchdown that ends this swing
                later = stance[knots[j] :, i]
                landing = knots[j] + int(np.argmax(later)) if later.any() else len(stance) - 1
                footholds[j, i] = self.plan_feet[landing, i]
                self.planned_footholds[i, round(self.plan_start + float(self.plan.times[landing]), 9)] = footholds[j, i].copy()
        return targets, footholds
