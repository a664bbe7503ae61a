"""Model-predictive control of any :class:`~trajopt.Problem`: re-solve a receding horizon at every tick.

:class:`MPC` is built once from a problem template, whose ``N`` knots and
``tf`` are the horizon (knot step ``h = tf / (N - 1)``), and a mode:

- ``"rti"``, a real-time iteration: one full Gauss-Newton SQP step per tick
  (:class:`trajopt.solvers.rti.RtiSolver`: its QP solved by HPIPM's Riccati
  interior point), multiple shooting (tangent-chart knots for states with
  rotations); a tick fails when the QP does or the step is not finite. The
  feedback gains come from the same linearization as the step, computed on a
  second thread while HPIPM solves;
- ``"converged"``: a solve to convergence (IPOPT on any transcription, or
  fatrop), warm-started, optionally capped (``max_iter``).

At each tick (:meth:`MPC.step`) with the measured state ``x`` at time ``t``:
the problem's ``x0`` becomes ``x`` and ``update(problem, t, x)`` may change any
numeric datum (references, gait schedule, commanded velocity: whatever the
built NLP reads at a solve, :mod:`trajopt.solvers`); the previous solution,
moved to ``t`` (:mod:`trajopt.mpc.shift`: primal, and the multipliers the
backend takes), starts the solve; the result becomes a :class:`Plan`, the
trajectory in absolute time with Riccati gains from the solve's
linearization (:mod:`trajopt.mpc.feedback`) to apply between ticks.

Failure policy: a tick whose solve fails (a status that is not a success,
non-finite numbers, an exception inside CasADi) or is late (its wall time
over ``budget``) never raises: :meth:`MPC.step` returns no plan (the caller
keeps applying the previous one, whose law is defined in absolute time),
counts the failure, and after ``max_failures`` failures in a row starts the
next tick cold, from the measured state held over the horizon with the
model's equilibrium controls (warm starts from failed solves can deadlock).
Every tick is logged (:attr:`MPC.log`, :class:`TickRecord`).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from models.compiled import compile_functions

from ..problem import Problem
from ..solvers import SolverSettings, build_solver
from ..solvers.settings import settings_with
from ..solvers.stage_layout import stage_layout
from ..transcription import get_transcription
from .feedback import RiccatiGains
from .plan import Plan, reference_error_function
from .shift import StageShift, shifted_trajectory
from .stance_gate import StanceGate

#: How :class:`MPC` solves each tick: ``"rti"`` one real-time iteration (one Gauss-Newton SQP step, :class:`~trajopt.solvers.rti.RtiSolver`),
#: ``"converged"`` the full solve of its solver (IPOPT by default) to convergence.
MODES = ("rti", "converged")
#: Iterations of the real-time-iteration solver that :meth:`MPC.reset` runs at most to converge the first plan.
RESET_ITERATIONS = 50
#: ``reset`` stops iterating once a step moves no knot state or control by more than this.
RESET_STEP_TOL = 1e-7

#: The phases of a tick, in order. A tick that was not prepared runs them all after the measurement:
#: ``check`` (the previous prepared tick's violations, when they are pending), ``update`` (the
#: prediction to the plan's arrival, ``x0`` and the user's ``update``: a gait's data, bounds,
#: parameters), ``warm_start`` (the previous plan shifted, its multipliers, the charts, the packed
#: guess), the backend's own phases when it reports them (the real-time iteration's ``linearize``:
#: derivatives and QP data; ``qp``: HPIPM; ``alongside``: the wait after the QP for the feedback gains
#: computed beside it), ``solve_other`` (the rest of the solve call: bounds and parameters read, the
#: result unpacked and checked), ``plan`` (the plan, its gains and the log). A prepared tick
#: (:meth:`MPC.prepare`) ran :data:`PREPARATION_PHASES` before its measurement (``check``: the previous
#: tick's violations, evaluated there rather than before its control went out; ``prepare_other``: the
#: bounds and parameters read) and after it only ``initial_state`` (the measured state made the
#: horizon's first state, :class:`MPC`'s ``initial_state``), ``qp``, ``alongside``, ``solve_other`` and ``plan``.
TICK_PHASES = ("check", "update", "warm_start", "linearize", "prepare_other", "initial_state", "qp", "alongside", "solve_other", "plan")
#: The phases a prepared tick runs before its measurement (:meth:`MPC.prepare`), in order.
PREPARATION_PHASES = ("check", "update", "warm_start", "linearize", "prepare_other")
#: Two tick times closer than this (s) are the same tick (a plant's clock adds up its steps with round-off).
SAME_TICK = 1e-6

#: ``update(problem, t, x)``: set the problem's data for a tick at time ``t`` from the measured state ``x``.
Update = Callable[[Problem, float, np.ndarray], None]
#: ``initial_state(problem, t, x)``: the horizon's first state (n,) from the measured state ``x`` at time ``t``,
#: as ``update`` would set ``problem.x0`` (a prepared tick ran ``update`` on a predicted state).
InitialState = Callable[[Problem, float, np.ndarray], np.ndarray]


@dataclass
class TickRecord:
    """One tick: ``t`` (s, the measurement time), ``compute_time`` (s, wall, from the measurement to the
    plan: data update, warm start, solve and gains; a prepared tick's feedback alone),
    ``preparation_time`` (s, wall, what the tick's :meth:`MPC.prepare` took before the measurement; 0 when
    it was not prepared), ``solve_time`` (s, wall, the backend alone), ``iterations``, ``qp_iterations``
    (HPIPM's interior-point iterations in a real-time iteration's QP, the last step's at the reset; 0 for
    the other backends and for a solve that raised), ``status``,
    ``success``, ``late`` (over the budget), ``cold`` (started from the held state),
    ``failures`` (in a row, this tick included), ``objective``, ``violation`` (the solve's
    largest constraint violation, dynamics gaps included: one real-time iteration leaves them
    at second order), ``first_violation`` (:meth:`~trajopt.solvers.base.NlpSolver.first_knot_violation`: the first knot's
    path constraints and control bounds, what the plant gets; a prepared
    tick's two are evaluated at the next preparation, NaN until then),
    the measured ``state``, the plan's first ``control`` (NaN when the tick failed), the
    dynamics ``params`` of its first knot, and ``phases``: the wall time (s) of the tick's
    phases (:data:`TICK_PHASES`; empty for the first plan), which add up to ``preparation_time + compute_time``."""

    t: float
    compute_time: float
    solve_time: float
    iterations: int
    qp_iterations: int
    status: str
    success: bool
    late: bool
    cold: bool
    failures: int
    objective: float
    violation: float
    first_violation: float
    state: np.ndarray
    control: np.ndarray
    params: np.ndarray
    phases: Dict[str, float] = field(default_factory=dict)
    preparation_time: float = 0.0


class MPC:
    """A receding-horizon controller of ``problem``: at every tick it solves the horizon from the measured state.

    The problem's ``N`` knots over ``tf`` are the horizon. :meth:`reset` converges the first plan;
    each :meth:`step` at time ``t`` sets ``x0`` to the measured state, calls ``update``, solves
    (one SQP step in ``"rti"`` mode, a warm-started solve to convergence in ``"converged"``) from
    the previous plan moved to ``t``, and returns a :class:`Plan` (trajectory in absolute time with
    Riccati feedback gains), or ``None`` when the solve failed or was late; after ``max_failures``
    failures in a row the next tick starts cold. Every tick is recorded in :attr:`log`.

    Preparation and feedback (the real-time iteration's split): :meth:`prepare` ``(t)``, called between
    ticks, does the work of the tick at ``t`` that needs no measurement (the update on the plan's
    predicted state, the warm start, the bounds and parameters, the linearization), so that
    :meth:`step` at ``t`` only fixes the measured initial state and solves the QP: the latency from
    measurement to control is that feedback alone.

    Parameters
    ----------
    problem:
        The template: horizon (``N``, ``tf``), costs, constraints, bounds; its
        ``x0`` is replaced by the measured state at every tick.
    mode:
        ``"rti"`` or ``"converged"``.
    settings, overrides:
        How each tick solves: a :class:`~trajopt.SolverSettings` with ``overrides`` (its field
        names: ``solver``, ``transcription``, ``hessian``, ``chart``, ``compile``, ``options``,
        ``threads``, ``max_iter``, ...), as :func:`trajopt.solve` takes them; the mode's defaults
        fill what is not given (``"rti"``: its own backend, compiled, RK4 multiple shooting with
        costs at the knots unless the problem's transcription is explicit, Gauss-Newton, charts for
        rotations). ``max_iter`` caps a converged solve (``"converged"`` only).
    budget:
        Wall time (s) a tick's solve may take; a later one counts as failed.
        IPOPT stops itself at the budget, fatrop is killed; one SQP step runs to its end.
    max_failures:
        Failures in a row before the next tick starts cold.
    feedback:
        Riccati gains in the plans (else the plans are feed-forward only); a legged horizon's plans
        hold a leg in the air that stands in the plan by a joint PD instead (:mod:`~trajopt.mpc.stance_gate`).
    update:
        ``update(problem, t, x)``, called before every solve.
    on_reset:
        ``on_reset(t, x)``, called by :meth:`reset` before its first ``update`` (a task that keeps
        state between ticks, such as a legged gait's anchor, starts afresh there).
    initial_state:
        ``initial_state(problem, t, x)``: the horizon's first state from the measured ``x``, as
        ``update`` sets ``problem.x0`` (default: ``x`` itself); a prepared tick calls it on the
        measurement, its ``update`` having run on the prediction (:meth:`prepare`).
    """

    def __init__(
        self,
        problem: Problem,
        mode: str = "rti",
        settings: Optional[SolverSettings] = None,
        budget: Optional[float] = None,
        max_failures: int = 3,
        feedback: bool = True,
        update: Optional[Update] = None,
        on_reset: Optional[Callable[[float, np.ndarray], None]] = None,
        initial_state: Optional[InitialState] = None,
        **overrides: Any,
    ) -> None:
        if not isinstance(problem, Problem):
            raise ValueError(f"problem: expected a trajopt.Problem, got {type(problem).__name__}")
        if mode not in MODES:
            raise ValueError(f"mode: expected one of {MODES}, got {mode!r}")
        if problem.free_time:
            raise ValueError("problem: a receding horizon needs a fixed tf (its knot step), got a free final time")
        if problem.x0 is None:
            raise ValueError("problem: the template needs a fixed x0 (the measured state replaces it at each tick)")
        if budget is not None and not (isinstance(budget, (int, float)) and budget > 0):
            raise ValueError(f"budget: expected a wall time in s > 0 or None, got {budget!r}")
        if not (isinstance(max_failures, int) and max_failures >= 1):
            raise ValueError(f"max_failures: expected an int >= 1, got {max_failures!r}")
        settings = settings_with(settings, {**overrides, "max_wall_time": budget})
        if settings.max_iter is not None and mode != "converged":
            raise ValueError(f"max_iter: an iteration cap of mode 'converged', got {settings.max_iter!r} with mode {mode!r}")
        model = problem.model
        rotations = model.error_dim != model.state_dim
        if mode == "rti":
            name = settings.transcription or (problem.default_transcription if get_transcription(problem.default_transcription).explicit else "multiple_shooting_knot_cost")
            if not get_transcription(name).explicit:
                raise ValueError(f"transcription: the real-time iteration needs an explicit transcription (multiple shooting), got {name!r}")
            if settings.solver not in (None, "rti"):
                raise ValueError(f"solver: the real-time iteration is its own backend (trajopt.solvers.rti), got {settings.solver!r}; use mode='converged'")
            settings = settings.replace(
                solver="rti", transcription=name, hessian=settings.hessian or "gauss-newton",
                chart=rotations if settings.chart is None else settings.chart, compile=True if settings.compile is None else settings.compile,
            )  # fmt: skip
        else:
            if settings.solver == "rti":
                raise ValueError("solver: 'rti' takes one step per tick; use mode='rti'")
            if settings.transcription is None and feedback and not get_transcription(problem.default_transcription).explicit:
                settings = settings.replace(transcription="multiple_shooting_knot_cost")
            if settings.chart is None and feedback:  # the gains read the stage form: gaps on tangent-chart knots
                settings = settings.replace(chart=rotations)
        self.problem, self.mode, self.update, self.feedback, self.on_reset = problem, mode, update, feedback, on_reset
        self.initial_state = initial_state
        self.budget, self.max_failures = budget, max_failures
        self.solver = build_solver(problem, settings)
        self.nlp = self.solver.nlp
        self._explicit = self.nlp.transcription.explicit
        if feedback and not self._explicit:
            raise ValueError(f"transcription: the feedback gains need an explicit transcription (multiple shooting), got {self.nlp.transcription.name!r}; or feedback=False")
        self._layout = stage_layout(self.nlp) if self._explicit else None
        self._gain_function: Optional[RiccatiGains] = None
        self._shift_x, self._shift_g = StageShift(self.nlp.var_stage, problem.N), StageShift(self.nlp.row_stage, problem.N)
        lower, upper = problem.control_lower.min(axis=0), problem.control_upper.max(axis=0)
        self._bounds = (lower, upper)
        self._gate = StanceGate.of(model) if feedback else None
        self._interpolant = self.nlp.transcription.interpolant(model)
        if self.solver.settings.compile:  # what every tick evaluates besides the NLP: the plans' interpolation, the shift's holding controls
            self._interpolant = compile_functions([self._interpolant], what="MPC functions")[0]
            model.compile(["equilibrium_residual"])
        self._reference_error = reference_error_function(self._interpolant, model)
        self.log: List[TickRecord] = []
        self._solve_span: Optional[Tuple[float, float]] = None  # the last solve call's start and end (perf_counter)
        self.plan: Optional[Plan] = None
        self._last: Optional[Any] = None  # the last successful Solution
        self._failures = 0
        self._reset_step_time = 0.0
        self._prepared: Optional[Tuple[float, Dict[str, float]]] = None  # the prepared tick's time and phases
        self._unchecked: Optional[Tuple[TickRecord, Any]] = None  # a prepared tick's record and solution, violations pending

    # ------------------------------------------------------------ ticks
    @property
    def step_size(self) -> float:
        """The horizon's knot step ``h`` (s)."""
        return self.problem.tf / (self.problem.N - 1)

    def reset(self, t: float, x: np.ndarray) -> Plan:
        """Forget the past (the log too) and converge a first plan from the problem's own initial guess with
        ``x0 = x`` at time ``t`` (the real-time iteration repeats its step until it stops moving, at
        most :data:`RESET_ITERATIONS` times). Raises ``RuntimeError`` when it does not succeed."""
        self._last, self.plan, self._failures, self.log, self._prepared, self._unchecked = None, None, 0, [], None, None
        if self.on_reset is not None:
            self.on_reset(t, np.asarray(x, dtype=float))
        self._prepare(t, x)
        start = time.perf_counter()
        solution = self.solver.solve()
        iterations = solution.iterations
        if self.mode == "rti":
            for _ in range(RESET_ITERATIONS - 1):
                if not self._ok(solution):
                    break
                previous = solution
                solution = self._solve_from(previous.states, previous.controls, previous.intervals, (previous.lam_x, previous.lam_g))
                iterations += solution.iterations
                moved = max(np.abs(solution.states - previous.states).max(), np.abs(solution.controls - previous.controls).max())
                if moved <= RESET_STEP_TOL:
                    break
        if not self._ok(solution):
            raise RuntimeError(f"MPC.reset: the first plan failed ({solution.status})")
        self._reset_step_time = float(solution.solve_time)
        plan = self._accept(t, solution)
        self._record(t, time.perf_counter() - start, solution, iterations, late=False, cold=True, ok=True)
        return plan

    def compute_estimate(self) -> float:
        """The compute time a tick can expect (s): the median of the last ten ticks' (of the first plan's
        last iteration before any tick)."""
        recent = [r.compute_time for r in self.log[1:][-10:]] or [self._reset_step_time]
        return float(np.median(recent))

    def step(self, t: float, x: np.ndarray, delay: float = 0.0) -> Optional[Plan]:
        """One tick at time ``t`` (s) from the measured state ``x`` (n,): the new :class:`Plan`, or ``None``
        when the solve failed (a failed status, non-finite numbers, an error in CasADi) or took
        longer than ``budget``; it never raises for a failed solve. Call :meth:`reset` first.

        ``delay`` (s): when the plan will reach the plant (its solve time, ahead of time: e.g.
        :meth:`compute_estimate`). The tick then solves from the state the current plan's model
        predicts for ``t + delay`` (:meth:`Plan.predict`), and the new plan starts there, so that
        its first control is the one due when it arrives. 0: the plan starts at ``t``.

        When :meth:`prepare` prepared the tick at ``t`` (and ``delay`` is 0), only the feedback runs: the
        measured state made the horizon's first state (``initial_state``), the prepared solve finished from
        it, the plan; the tick's violations are checked at the next preparation.
        """
        if self._last is None and self._failures == 0:
            raise RuntimeError("MPC.step: call reset(t, x) first")
        if not (np.isfinite(delay) and delay >= 0):
            raise ValueError(f"delay: expected s >= 0, got {delay!r}")
        prepared, self._prepared = self._prepared, None
        if prepared is not None and delay == 0 and abs(prepared[0] - t) <= SAME_TICK and self._failures < self.max_failures:
            return self._feedback(prepared[0], np.asarray(x, dtype=float), prepared[1])
        start = time.perf_counter()
        self.check_pending()
        checked = time.perf_counter()
        updated, self._solve_span = checked, None
        cold = self._failures >= self.max_failures
        measured_t = t
        try:
            if delay > 0 and self.plan is not None and not cold:
                predicted = self.plan.predict(t, np.asarray(x, dtype=float), delay)
                if np.isfinite(predicted).all():  # a plan far from the state can diverge: then solve from the measurement
                    x, t = predicted, t + delay
            self._prepare(t, x)
            updated = time.perf_counter()
            if cold or self.plan is None:
                states = np.repeat(self.problem.x0[None], self.problem.N, axis=0)
                solution = self._solve_from(states, self.problem.equilibrium_guess(states), None, None)
            else:
                states, controls = self._warm_start(t)
                solution = self._solve_from(states, controls, None, self._shifted_multipliers(t))
            ok = self._ok(solution)
        except (RuntimeError, ValueError) as err:  # inside CasADi, or data the update made invalid
            solution, ok = _FailedSolve(f"error: {err}"), False
        late = self.budget is not None and time.perf_counter() - start > self.budget
        plan = self._conclude(t, solution, ok, late)
        end = time.perf_counter()
        self._record(measured_t, end - start, solution, solution.iterations, late, cold, ok and not late, self._phases(start, checked, updated, end))
        return plan

    @property
    def prepares(self) -> bool:
        """Whether :meth:`prepare` does anything: the real-time iteration (a converged solve needs the
        measurement from its first iteration)."""
        return self.mode == "rti"

    def prepare(self, t: float) -> None:
        """Prepare the tick at time ``t`` (s) before its measurement (the class docstring): the problem's
        data updated for the state the current plan predicts at ``t``, the warm start, the solver's
        preparation (:meth:`trajopt.solvers.base.NlpSolver.prepare`), and the last prepared tick's
        violations checked. The next :meth:`step`, if at ``t`` with no ``delay``, then only finishes
        the solve from its measured state; a step at another time, or after a preparation that
        failed, runs whole. Nothing is prepared in ``"converged"`` mode, before :meth:`reset`, or when
        the next tick starts cold."""
        self._prepared = None
        if not self.prepares or self.plan is None or self._failures >= self.max_failures:
            return
        start = time.perf_counter()
        self.check_pending()
        checked = time.perf_counter()
        try:
            self._prepare(t, self.plan.reference(t)[0])
            updated = time.perf_counter()
            states, controls = self._warm_start(t)
            if self.nlp.chart:
                self.nlp.recentre(states)
            guess, multipliers = self.nlp.pack(states, controls), self._shifted_multipliers(t)
            warm = time.perf_counter()
            self.solver.prepare(guess, multipliers)
        except (RuntimeError, ValueError):  # inside CasADi, or data the update made invalid: the step runs whole
            return
        end = time.perf_counter()
        backend = self.solver.last_preparation_times
        phases = {"check": checked - start, "update": updated - checked, "warm_start": warm - updated, **backend, "prepare_other": end - warm - sum(backend.values())}
        self._prepared = (float(t), phases)

    def _feedback(self, t: float, x: np.ndarray, preparation: Dict[str, float]) -> Optional[Plan]:
        """The prepared tick at ``t`` from the measured state ``x``: the horizon's first state, the solve's
        feedback, the plan (:meth:`step`); its violations are checked at the next preparation."""
        start = time.perf_counter()
        ready, backend = start, {}
        try:
            x0 = np.asarray(self.initial_state(self.problem, t, x), dtype=float) if self.initial_state is not None else x
            self.problem.x0 = x0
            ready = time.perf_counter()
            solution = self.solver.feedback(x0, check=False)
            backend = self.solver.last_phase_times
            ok = self._ok(solution)
        except (RuntimeError, ValueError) as err:
            solution, ok = _FailedSolve(f"error: {err}"), False
        solved = time.perf_counter()
        late = self.budget is not None and solved - start + sum(preparation.values()) > self.budget
        plan = self._conclude(t, solution, ok, late)
        end = time.perf_counter()
        phases = {**preparation, "initial_state": ready - start, **backend, "solve_other": solved - ready - sum(backend.values()), "plan": end - solved}
        self._record(t, end - start, solution, solution.iterations, late, False, ok and not late, phases, checked=False, preparation=sum(preparation.values()))
        if ok:
            self._unchecked = (self.log[-1], solution)
        return plan

    def _conclude(self, t: float, solution: Any, ok: bool, late: bool) -> Optional[Plan]:
        """The plan of a tick whose solve succeeded in time (kept as the next warm start), else ``None`` with the failure counted."""
        if ok and not late:
            self._failures = 0
            return self._accept(t, solution)
        self._failures += 1
        return None

    def check_pending(self) -> None:
        """Evaluate the violations of the last prepared tick's solution into its log record (:class:`TickRecord`'s
        ``violation`` and ``first_violation``), left for the next preparation; a loop calls it at its end."""
        if self._unchecked is None:
            return
        (record, solution), self._unchecked = self._unchecked, None
        g = self.solver.check(solution)
        record.violation = float(solution.max_violation)
        record.first_violation = self.solver.first_knot_violation(solution, g)

    def _warm_start(self, t: float) -> Tuple[np.ndarray, np.ndarray]:
        """The previous plan moved to ``t`` (:func:`~trajopt.mpc.shift.shifted_trajectory`), its first state the problem's ``x0``."""
        states, controls = shifted_trajectory(self.plan, t, self.problem.dynamics_params, self._explicit, hold=self._holding_control(t))
        states[0] = self.problem.x0  # linearize at the initial state: the applied first knot's constraints hold exactly
        return states, controls

    # ------------------------------------------------------------ pieces
    def _prepare(self, t: float, x: np.ndarray) -> None:
        """``x0 = x`` and the user's data update for time ``t``."""
        self.problem.x0 = x
        if self.update is not None:
            self.update(self.problem, t, self.problem.x0)

    def _solve_from(self, states: np.ndarray, controls: np.ndarray, intervals: Optional[np.ndarray], multipliers: Optional[tuple]) -> Any:
        """Solve from knot states and controls (charts centred on the states) and optional multipliers."""
        nlp = self.nlp
        if nlp.chart:
            nlp.recentre(states)
        w0 = nlp.pack(states, controls, intervals)
        started = time.perf_counter()
        try:
            return self.solver.solve(initial_guess=w0, multipliers=multipliers)
        finally:
            self._solve_span = (started, time.perf_counter())

    def _phases(self, start: float, checked: float, updated: float, end: float) -> Dict[str, float]:
        """The phases of a tick that was not prepared (:data:`TICK_PHASES`) from its marks: its start, the end of
        the pending check, the end of the update, the solve call's span (none when the tick failed before it)
        and its end."""
        solve_start, solve_end = self._solve_span or (updated, updated)
        backend = self.solver.last_phase_times if self._solve_span is not None else {}
        phases = {"check": checked - start, "update": updated - checked, "warm_start": solve_start - updated, **backend}
        phases["solve_other"] = solve_end - solve_start - sum(backend.values())
        phases["plan"] = end - solve_end
        return phases

    def _holding_control(self, t: float) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
        """``(x, d) -> u``: the control holding the model at ``x`` under the dynamics parameters ``d`` at time ``t``,
        within the control bounds (:meth:`models.Model.equilibrium_control`; the shift's appended knots)."""
        model = self.problem.model
        return lambda x, d: model.equilibrium_control(x, t, d if model.dynamics_param_dim else None, bounds=self._bounds)

    def _ok(self, solution: Any) -> bool:
        return bool(np.isfinite(solution.primal).all() and np.isfinite(solution.objective) and solution.success)

    def _shifted_multipliers(self, t: float) -> Optional[tuple]:
        """The last solution's multipliers moved to ``t`` by whole stages (``None`` for a backend that does not take them)."""
        if not self.solver.takes_multipliers:
            return None
        n = int(round((t - self.plan.t0) / self.plan.step))
        return self._shift_x(self._last.lam_x, n), self._shift_g(self._last.lam_g, n)

    def _accept(self, t: float, solution: Any) -> Plan:
        """The plan of a successful solve (gains from its linearization), kept as the next warm start."""
        problem = self.problem
        gains = self._gains(solution) if self.feedback else np.zeros((problem.N - 1, problem.nu, problem.model.error_dim))
        self.plan = Plan(
            problem.model, self.nlp.transcription.name, t + problem.times(), solution.states, solution.controls, solution.intervals,
            gains, problem.dynamics_params.copy(), *self._bounds, self._interpolant, self._gate, self._reference_error,
        )  # fmt: skip
        self._last = solution
        return self.plan

    def _gains(self, solution: Any) -> np.ndarray:
        """Riccati gains of the solve's linearization at its solution (:mod:`trajopt.mpc.feedback`).

        A real-time iteration's are those of the step's own linearization, at its start, computed
        beside its QP (the backend's ``alongside``, when it :attr:`~trajopt.solvers.base.NlpSolver.linearizes_alongside`) once the gain function exists (built at the first plan)."""
        nlp = self.nlp
        if self.solver.linearizes_alongside:
            if self.solver.last_alongside is not None:
                return self.solver.last_alongside
            jac, hess = self.solver.last_linearization
        else:
            if nlp.chart:
                nlp.recentre(solution.states)
            jac, hess = self.solver.linearization(nlp.pack(solution.states, solution.controls, solution.intervals))
        if self._gain_function is None:
            self._gain_function = RiccatiGains(nlp, self._layout, jac.sparsity(), hess.sparsity())
            if self.solver.linearizes_alongside:
                self.solver.alongside = self._gain_function
        return self._gain_function(jac, hess)

    def _record(
        self, t: float, compute: float, solution: Any, iterations: int, late: bool, cold: bool, ok: bool,
        phases: Optional[Dict[str, float]] = None, checked: bool = True, preparation: float = 0.0,
    ) -> None:  # fmt: skip
        """Log the tick; ``checked``: the solution's violations are known (else :meth:`check_pending` fills them in)."""
        first = self.solver.first_knot_violation(solution) if ok and checked else float("nan")
        control = np.asarray(solution.controls[0], dtype=float).copy() if ok else np.full(self.problem.nu, np.nan)
        qp_iterations = self.solver.last_qp_iterations if not isinstance(solution, _FailedSolve) else 0
        self.log.append(TickRecord(
            float(t), compute, float(solution.solve_time), int(iterations), int(qp_iterations), str(solution.status), bool(ok), bool(late), bool(cold),
            self._failures, float(solution.objective), float(solution.max_violation), first,
            self.problem.x0.copy(), control, self.problem.dynamics_params[0].copy(), dict(phases or {}), preparation,
        ))  # fmt: skip


@dataclass
class _FailedSolve:
    """What :meth:`MPC.step` records of a solve that raised."""

    status: str
    solve_time: float = 0.0
    iterations: int = 0
    objective: float = float("nan")
    max_violation: float = float("nan")
    knot_violation: np.ndarray = field(default_factory=lambda: np.zeros(0))
