"""What every NLP solver backend shares: the transcribed NLP, its derivatives, starting points, the result.

A backend (:mod:`trajopt.solvers.ipopt`, :mod:`trajopt.solvers.fatrop`,
:mod:`trajopt.solvers.sqp`) derives from :class:`NlpSolver` and only says how
to build its ``casadi.nlpsol`` (its ``_create`` method) and what its
statistics mean; :func:`trajopt.solve` picks one by name. The base class

- transcribes the problem once (:class:`trajopt.nlp.NLP`, optionally with
  tangent-chart knots) and builds the stage-wise derivatives
  (:mod:`trajopt.solvers.derivatives`: exact or Gauss-Newton Hessian, VM or compiled);
- chooses the starting point: the problem's initial guess, a decision vector,
  or a previous :class:`~trajopt.Solution` (primal-dual when the layout matches,
  else its trajectory re-sampled at the new knots);
- with tangent-chart knots, centres the charts on the starting trajectory
  (so the solve starts at ``d = 0``) and re-centres on the result, solving
  again from there, while a rotation part of ``d`` exceeds
  :data:`CHART_RECENTRE_ANGLE` (at most :data:`MAX_RECENTRES` times): the
  charts stay far from their pi singularity;
- returns a :class:`~trajopt.Solution` carrying the backend's status, the
  last iterate and the constraint violation checked here, never a bare
  exception from inside CasADi; options are checked by name
  before anything is built (:mod:`trajopt.solvers.options`), and Ctrl-C stops
  the backend and raises :class:`trajopt.solvers.interrupt.SolveInterrupted` (a
  ``KeyboardInterrupt``) carrying the last iterate.
"""
from __future__ import annotations

import functools
import time
from abc import ABC, abstractmethod
from typing import Any, Callable, Dict, Literal, Optional, Tuple

import casadi as ca
import numpy as np

from models.numeric_call import NonzeroCall

from ..nlp import NLP
from ..problem import Problem
from ..solution import Solution
from ..transcription import Transcription
from ..violations import worst_violation
from .blas import single_threaded_casadi_blas
from .derivatives import FIRST_KNOT, LAG_GRAD, available_cores, first_knot_rows, stagewise_nlp
from .interrupt import SolveInterrupted, watch_interrupts
from .options import casadi_message, check_nlpsol_options
from .settings import DEFAULT_MAX_WALL_TIME, SolverSettings, settings_with
from .watchdog import ChildDied, DeadlineExceeded, Watchdog

#: Default number of threads for the stage maps (fewer when fewer cores are available).
MAX_DEFAULT_THREADS = 8
#: Re-centre tangent charts when a rotation part of a knot's perturbation exceeds this (rad).
CHART_RECENTRE_ANGLE = 1.0
#: At most this many re-centred solves follow the first one.
MAX_RECENTRES = 5
#: How a solve starts, which selects the options over the problem's (:meth:`NlpSolver.backend_options`): from a
#: primal point only (``"cold"``), from a primal-dual point of the same problem (``"warm"``), or from the primal-dual
#: solution of the previous stage of a homotopy (``"homotopy"``: the same NLP with its bounds moved, so that the
#: point is near but not at a solution; :mod:`trajopt.homotopy`).
Start = Literal["cold", "warm", "homotopy"]


def eval_time(stats: Dict[str, Any]) -> float:
    """Wall time (s) spent in NLP function evaluations according to ``solver.stats()``."""
    return float(sum(v for k, v in stats.items() if k.startswith("t_wall_nlp_")))


def _call(solver: Any, args: Dict[str, Any]) -> tuple:
    """One call of a backend's solver: its ``x, f, lam_x, lam_g`` (flat arrays) and its statistics."""
    res = solver(**args)
    return {k: np.asarray(res[k]).reshape(-1) for k in ("x", "f", "lam_x", "lam_g")}, solver.stats()


class NlpSolver(ABC):
    """A problem transcribed once and solved by a CasADi NLP plugin as often as needed.

    ``settings`` (:class:`~trajopt.solvers.settings.SolverSettings`, default: all defaults; a
    transcription or its name stands for ``SolverSettings(transcription=...)``), with ``overrides``
    (its field names; ``None`` keeps the settings' value) applied, says how: the transcription (default: the problem's),
    the backend's options, iteration cap and tolerance, the derivatives (stage-wise, possibly
    compiled; or CasADi's of the NLP graph), the Hessian, tangent-chart knots, the threads of the
    stage maps (``None``: the cores this process may use, at most :data:`MAX_DEFAULT_THREADS`) and
    the wall time a solve may take. A backend that checks time between its iterations (IPOPT) stops
    itself there; one that can hang inside an iteration (fatrop, :mod:`trajopt.solvers.watchdog`)
    runs in a child process killed at the deadline. Either way the result is a failed
    :class:`~trajopt.Solution` whose status says so.

    What a backend can do is declared on its class (:attr:`takes_multipliers`,
    :attr:`reports_qp_iterations`, :attr:`linearizes_alongside`), with neutral defaults here.
    """

    #: the backend's name in :func:`trajopt.solve`
    name: str = ""

    def __init__(self, problem: Problem, settings: SolverSettings | Transcription | str | None = None, **overrides: Any) -> None:
        self.settings = settings = settings_with(settings, overrides)
        self.max_wall_time = float(DEFAULT_MAX_WALL_TIME if settings.max_wall_time is None else settings.max_wall_time)
        self.check_options(settings.options, settings.nlpsol_options)
        start = time.perf_counter()
        self.problem = problem
        self.nlp = NLP(problem, settings.transcription, chart=bool(settings.chart))
        self.print_level = int(settings.print_level)
        self.user_options = {**self.iteration_options(settings.max_iter, settings.tol), **settings.options}
        self.derivatives, self.expand, self.hessian = settings.derivatives, settings.expand, settings.hessian or "exact"
        self.nlpsol_options = dict(settings.nlpsol_options)
        threads = min(available_cores(), MAX_DEFAULT_THREADS) if settings.threads is None else settings.threads
        stagewise = self.derivatives == "stagewise"
        self._nlp_function, self._stagewise_options = stagewise_nlp(self.nlp, bool(settings.compile), threads, self.hessian, self.uses_lag_grad) if stagewise else (None, {})
        #: the gradient of the Lagrangian, by reverse sweeps of the stage values (None without stage-wise derivatives)
        self._lag_grad = self._stagewise_options.pop(LAG_GRAD, None)
        #: the first knot's path rows and their Jacobian (:data:`~trajopt.solvers.derivatives.FIRST_KNOT`; None without stage-wise derivatives)
        self._first_knot = self._stagewise_options.pop(FIRST_KNOT, None)
        self._nlp_call: Optional[NonzeroCall] = None  # the stage-wise NLP function and the first knot's, called on numpy buffers
        self._first_knot_call: Optional[NonzeroCall] = None
        self._solvers: Dict[Start, Any] = {}
        self._watchdogs: Dict[Start, Watchdog] = {}
        self._prepared: Optional[Tuple[Dict[str, np.ndarray], Dict[str, Any]]] = None  # prepare()'s point and call arguments
        #: wall time (s) of the backend's phases in the last :meth:`prepare` (the real-time iteration's ``linearize``)
        self.last_preparation_times: Dict[str, float] = {}
        self.build_time = time.perf_counter() - start

    # ------------------------------------------------------------ backend
    #: the ``casadi.nlpsol`` plugin behind the backend
    plugin: str = ""
    #: True for a backend that can hang inside an iteration: its calls run under :mod:`trajopt.solvers.watchdog`
    watchdog: bool = False
    #: True for a backend that takes the gradient of the Lagrangian (:data:`~trajopt.solvers.derivatives.LAG_GRAD`);
    #: the others neither build nor compile its stage functions
    uses_lag_grad: bool = False
    #: The scale ``D`` (n_w,) of the variables ``w = D w~`` the backend's solver works with
    #: (:mod:`trajopt.solvers.scaling`), or ``None``: :meth:`_run` converts starting points, bounds
    #: and multipliers, and every result is in the units of ``w``
    variable_scale: Optional[np.ndarray] = None

    #: True for a backend that starts from given multipliers (``solve(initial_guess=..., multipliers=...)``
    #: warm-starts its duals); the others start from the primal point only
    takes_multipliers: bool = False
    #: True for a backend that counts the QP iterations of its last solve (:attr:`last_qp_iterations`)
    reports_qp_iterations: bool = False
    #: True for a backend whose solve keeps its linearization at the starting point (:attr:`last_linearization`)
    #: and runs :attr:`alongside` on it while it solves (:attr:`last_alongside`)
    linearizes_alongside: bool = False
    #: the backend's defaults of its own options (:meth:`backend_options`)
    default_options: Dict[str, Any] = {}
    #: the options a warm start (given multipliers) sets over the problem's (:meth:`backend_options`)
    warm_start_options: Dict[str, Any] = {}
    #: the options a homotopy stage's start (:data:`Start`) sets over the problem's instead; ``None``: :attr:`warm_start_options`
    homotopy_options: Optional[Dict[str, Any]] = None

    @property
    def last_qp_iterations(self) -> int:
        """The QP iterations of the last solve (0 for a backend that does not report them)."""
        return 0

    @property
    def last_phase_times(self) -> Dict[str, float]:
        """Wall time (s) of the last solve's phases inside the backend's call, by name (empty for a backend
        that does not split its call, as the ones that iterate inside their plugin)."""
        return {}

    @property
    def last_linearization(self) -> Optional[Tuple[ca.DM, ca.DM]]:
        """``(J, H_upper)`` at the last solve's starting point, kept by a backend that :attr:`linearizes_alongside`; else ``None``."""
        return None

    @property
    def last_alongside(self) -> Any:
        """What :attr:`alongside` returned at the last solve (``None`` when nothing ran alongside)."""
        return None

    #: ``(J, H_upper) -> result``, run beside each solve by a backend that :attr:`linearizes_alongside` on the nonzeros
    #: of its linearization (the sparsities of :attr:`last_linearization`; the others ignore it)
    alongside: Optional[Callable[[np.ndarray, np.ndarray], Any]] = None

    @classmethod
    def iteration_options(cls, max_iter: Optional[int], tol: Optional[float]) -> Dict[str, Any]:
        """The backend's options for the settings' iteration cap and tolerance (those given)."""
        return {key: value for key, value in (("max_iter", max_iter), ("tol", tol)) if value is not None}

    def run_options(self) -> Dict[str, Any]:
        """The options this run fixes (verbosity, wall time), in the backend's names."""
        return {}

    def backend_options(self, start: Start) -> Dict[str, Any]:
        """The backend's options for a solve that starts as ``start`` says (:data:`Start`), each source over the
        ones before: :attr:`default_options`, the problem's ``solver_options[name]``, the start's
        (:attr:`warm_start_options` for ``"warm"``, :attr:`homotopy_options` for ``"homotopy"``, none for
        ``"cold"``), :meth:`run_options`, and the user's (the settings' ``max_iter`` and ``tol``, then their
        ``options``). A nested dict of options (HPIPM's ``"hpipm"``) merges key by key."""
        if start not in ("cold", "warm", "homotopy"):
            raise ValueError(f"start: expected 'cold', 'warm' or 'homotopy', got {start!r}")
        homotopy = self.warm_start_options if self.homotopy_options is None else self.homotopy_options
        own = {"cold": {}, "warm": self.warm_start_options, "homotopy": homotopy}[start]
        sources = (self.default_options, self.problem.solver_options.get(self.name, {}), own, self.run_options(), self.user_options)
        merged: Dict[str, Any] = {}
        for source in sources:
            for key, value in source.items():
                merged[key] = {**merged[key], **value} if isinstance(value, dict) and isinstance(merged.get(key), dict) else value
        return merged

    @classmethod
    def check_options(cls, options: Optional[Dict[str, Any]], nlpsol_options: Optional[Dict[str, Any]]) -> None:
        """Raise ``ValueError`` naming the ``nlpsol_options`` the plugin does not know (a backend
        that can check its own ``options`` before building extends this)."""
        check_nlpsol_options(nlpsol_options, cls.plugin)

    @abstractmethod
    def _create(self, start: Start) -> Any:
        """The backend's solver for solves that start as ``start`` says (:data:`Start`): called with ``x0, p, lbx,
        ubx, lbg, ubg`` (and ``lam_x0``, ``lam_g0`` unless ``start`` is ``"cold"``) it returns ``x, f, lam_x, lam_g`` in the NLP's row order;
        its ``stats()`` hold ``return_status`` (a name), ``success`` and ``iter_count``."""

    def _nlp_problem(self) -> Any:
        """What ``casadi.nlpsol`` gets as the problem: the stage-wise NLP function, or the NLP graph."""
        return self._nlp_function if self._nlp_function is not None else {"x": self.nlp.w, "p": self.nlp.p, "f": self.nlp.f, "g": self.nlp.g}

    def _solver(self, start: Start) -> Any:
        """The backend's solver for ``start`` (built on first use, its time added to ``build_time``)."""
        if start not in self._solvers:
            began = time.perf_counter()
            self._solvers[start] = self._create(start)
            single_threaded_casadi_blas()  # the plugin and its BLAS are loaded now
            self.build_time += time.perf_counter() - began
        return self._solvers[start]

    # ------------------------------------------------------------ starting points
    def _warm_point(self, warm_start: Solution) -> Dict[str, np.ndarray]:
        """Initial point from a previous solution: primal-dual if the layout matches, else primal.

        With tangent-chart knots the charts are centred on the solution's states first.
        """
        nlp = self.nlp
        same = (
            warm_start.transcription == nlp.transcription.name
            and warm_start.primal.shape == (nlp.n_w,)
            and warm_start.lam_g.shape == (nlp.n_g,)
            and warm_start.N == self.problem.N
        )
        if warm_start.N == self.problem.N:
            X, U = warm_start.states, warm_start.controls
        elif warm_start.problem is None:
            raise ValueError(f"warm_start: has N = {warm_start.N}, the problem N = {self.problem.N}; load it with its problem to re-sample it")
        elif self.problem.timing is None or self.problem.timing.count == 1:
            X, U = warm_start.evaluate(np.linspace(0.0, warm_start.tf, self.problem.N))
        else:  # the phases' guessed shares of the warm start's duration
            X, U = warm_start.evaluate(np.minimum(self.problem.times() * (warm_start.tf / self.problem.tf_guess), warm_start.tf))
        if nlp.chart:
            nlp.recentre(X)
        if same:
            primal = nlp.pack(X, U, warm_start.intervals, self._durations_of(warm_start)) if nlp.chart else warm_start.primal
            return {"x0": primal, "lam_x0": warm_start.lam_x, "lam_g0": warm_start.lam_g}
        return {"x0": nlp.pack(X, U, durations=self._durations_of(warm_start))}

    def _durations_of(self, warm_start: Solution) -> Optional[np.ndarray]:
        """The durations a warm start gives this problem's free time (``None`` for a fixed ``tf``): its ``tf``
        for a free final time; for phase durations those of its knot times when it has this problem's knots,
        else the guessed durations scaled to its ``tf``."""
        timing = self.problem.timing
        if timing is None:
            return None
        if timing.count == 1:
            return np.array([warm_start.tf])
        if warm_start.N == timing.N:
            return timing.of_times(warm_start.times)
        return np.asarray(timing.guess) * (warm_start.tf / float(np.sum(timing.guess)))

    def _start(self, warm_start: Optional[Solution], initial_guess: Optional[np.ndarray], multipliers: Optional[Tuple[np.ndarray, np.ndarray]] = None) -> Dict[str, np.ndarray]:
        """The starting point (module docstring); validates the arguments."""
        nlp = self.nlp
        if warm_start is not None and not isinstance(warm_start, Solution):
            raise ValueError(f"warm_start: expected a Solution, got {type(warm_start).__name__}")
        if multipliers is not None and initial_guess is None:
            raise ValueError("multipliers: given without initial_guess; they warm-start the point initial_guess")
        if warm_start is not None:
            return self._warm_point(warm_start)
        if initial_guess is not None:
            w0 = np.asarray(initial_guess, dtype=float)
            if w0.shape != (nlp.n_w,) or not np.isfinite(w0).all():
                raise ValueError(f"initial_guess: expected a finite vector of shape ({nlp.n_w},), got {w0.shape}")
            if multipliers is None:
                return {"x0": w0}
            lam_x, lam_g = (np.asarray(m, dtype=float) for m in multipliers)
            if lam_x.shape != (nlp.n_w,) or lam_g.shape != (nlp.n_g,) or not (np.isfinite(lam_x).all() and np.isfinite(lam_g).all()):
                raise ValueError(f"multipliers: expected finite (lam_x, lam_g) of shapes ({nlp.n_w},), ({nlp.n_g},), got {lam_x.shape}, {lam_g.shape}")
            return {"x0": w0, "lam_x0": lam_x, "lam_g0": lam_g}
        if nlp.chart:
            nlp.recentre(self.problem.initial_guess()[0])
        return {"x0": nlp.initial_guess()}

    def linearization(self, w: np.ndarray) -> Tuple[ca.DM, ca.DM]:
        """The constraint Jacobian ``dg/dw`` (n_g x n_w, the NLP's row order) and the upper triangle
        of the objective's Hessian ``d^2 f / dw^2`` (n_w x n_w; the Gauss-Newton ``J_r^T J_r`` of the
        least-squares costs when the solver was built with ``hessian="gauss-newton"``), both sparse
        CasADi matrices, at the decision vector ``w`` with the problem's current data (stage-wise
        derivatives only). Their sparsity patterns are the same at every call."""
        if self._nlp_function is None:
            raise ValueError("linearization: needs the stage-wise derivatives (derivatives='stagewise')")
        w = np.asarray(w, dtype=float)
        if w.shape != (self.nlp.n_w,):
            raise ValueError(f"w: expected shape ({self.nlp.n_w},), got {w.shape}")
        p = self.nlp.parameters()
        jac = self._stagewise_options["jac_g"](w, p)[1]
        hess = self._stagewise_options["hess_lag"](w, p, 1.0, np.zeros(self.nlp.n_g))
        return jac, hess

    # ------------------------------------------------------------ solving
    def _arguments(self, point: Dict[str, np.ndarray]) -> Dict[str, Any]:
        """The backend's call arguments from ``point``: the problem's current parameters and bounds, and the point."""
        nlp = self.nlp
        constraints = nlp.current_constraints()
        lbx, ubx = nlp.bounds_w()
        lbg, ubg = nlp.bounds_g(constraints)
        return {"p": nlp.parameters(constraints), "lbx": lbx, "ubx": ubx, "lbg": lbg, "ubg": ubg, **point}

    @staticmethod
    def _start_of(point: Dict[str, np.ndarray], homotopy: bool = False) -> Start:
        """How a solve from ``point`` starts (:data:`Start`): with multipliers, warm (a homotopy stage's when ``homotopy``), else cold."""
        return ("homotopy" if homotopy else "warm") if "lam_g0" in point else "cold"

    def _run(self, point: Dict[str, np.ndarray], args: Optional[Dict[str, Any]] = None, homotopy: bool = False) -> Dict[str, Any]:
        """One call of the backend from ``point`` with the call ``args`` (default :meth:`_arguments`, read
        from the problem now), a homotopy stage's start when ``homotopy`` and ``point`` holds multipliers
        (:data:`Start`): the iterate, multipliers and statistics."""
        nlp, start = self.nlp, self._start_of(point, homotopy)
        solver = self._solver(start)
        args = self._arguments(point) if args is None else dict(args)
        p, lbx, ubx, lbg, ubg = (args[key] for key in ("p", "lbx", "ubx", "lbg", "ubg"))
        D = self.variable_scale
        if D is not None:  # the solver's variables are w / D; a bound multiplier scales with its variable
            args.update(x0=np.asarray(point["x0"], dtype=float) / D, lbx=lbx / D, ubx=ubx / D)
            if "lam_x0" in point:
                args["lam_x0"] = np.asarray(point["lam_x0"], dtype=float) * D
        start = time.perf_counter()

        def failed(status: str) -> Dict[str, Any]:
            out = {"w": np.asarray(point["x0"], dtype=float), "lam_x": np.zeros(nlp.n_w), "lam_g": np.zeros(nlp.n_g), "objective": float("nan")}
            return {**out, "status": status, "success": False, "iterations": 0, "eval_time": 0.0}

        with watch_interrupts() as interrupt:  # Ctrl-C stops the backend; SolveInterrupted is raised by solve()
            try:
                if self.watchdog:
                    if start not in self._watchdogs:
                        self._watchdogs[start] = Watchdog(functools.partial(_call, solver))
                    res, stats = self._watchdogs[start](args, self.max_wall_time)
                else:
                    res, stats = _call(solver, args)
                if D is not None:
                    res.update(x=res["x"] * D, lam_x=res["lam_x"] / D)
                out = {"w": res["x"], "lam_x": res["lam_x"], "lam_g": res["lam_g"], "objective": float(res["f"][0])}
                out.update(status=str(stats["return_status"]), success=bool(stats["success"]), iterations=int(stats.get("iter_count", 0)), eval_time=eval_time(stats))
            except (DeadlineExceeded, ChildDied) as err:
                out = failed(f"{self.name}: {err}")
            except RuntimeError as err:  # an evaluation error CasADi did not hand to the solver
                out = failed(f"CasADi error: {casadi_message(err)}")
            except KeyboardInterrupt:  # a SIGINT while waiting for a watched call (its child is killed)
                if not interrupt.interrupted:
                    raise
                out = failed("Interrupted")
        out["solve_time"] = time.perf_counter() - start
        out["data"] = {"p": p, "bounds": (lbx, ubx, lbg, ubg)}  # what the run read of the problem, for its Solution
        if interrupt.interrupted:
            out.update(status="Interrupted", success=False)
        out["interrupted"] = interrupt.interrupted
        return out

    def solve(
        self, warm_start: Optional[Solution] = None, initial_guess: Optional[np.ndarray] = None, multipliers: Optional[Tuple[np.ndarray, np.ndarray]] = None, homotopy: bool = False
    ) -> Solution:
        """Solve from the problem's initial guess, a decision vector ``initial_guess`` (with its
        ``multipliers`` ``(lam_x, lam_g)`` for a primal-dual start, :mod:`trajopt.solvers`), or a
        ``warm_start`` solution. ``homotopy``: the primal-dual start is the previous stage's solution of a
        homotopy (:data:`Start`; :attr:`homotopy_options` replace :attr:`warm_start_options`)."""
        nlp, self._prepared = self.nlp, None  # a solve moves the charts: a preparation before it is void
        run = self._run(self._start(warm_start, initial_guess, multipliers), homotopy=homotopy)
        totals = {key: run[key] for key in ("iterations", "eval_time", "solve_time")}
        for _ in range(MAX_RECENTRES):
            if run["interrupted"] or not (nlp.chart and run["success"] and nlp.chart_extent(run["w"]) > CHART_RECENTRE_ANGLE):
                break
            states = nlp.to_states(run["w"][nlp.idx_x])
            nlp.recentre(states)
            traj = nlp.unpack(run["w"])
            run = self._run({"x0": nlp.pack(states, traj.controls, traj.intervals, traj.durations), "lam_x0": run["lam_x"], "lam_g0": run["lam_g"]})
            totals = {key: totals[key] + run[key] for key in totals}
        solution = self._solution(run, totals)
        if run["interrupted"]:
            raise SolveInterrupted(solution)
        return solution

    # ------------------------------------------------------------ preparation and feedback
    def prepare(self, initial_guess: np.ndarray, multipliers: Optional[Tuple[np.ndarray, np.ndarray]] = None) -> None:
        """The first half of a solve that :meth:`feedback` finishes once the initial state is known: the
        starting point (as :meth:`solve` takes it), the problem's parameters and bounds read now, and
        whatever the backend can do without the initial state (:meth:`_prepare_backend`; the real-time
        iteration linearizes there). A receding-horizon controller calls it between ticks, so that only
        :meth:`feedback` stands between a measurement and its control. With tangent-chart knots the
        charts must be centred (``nlp.recentre``) before, and stay so until :meth:`feedback`."""
        if self.problem.x0 is None:
            raise ValueError("prepare: the problem has a free initial state; feedback() fixes a given one")
        self._prepared = None
        point = self._start(None, initial_guess, multipliers)
        args = self._arguments(point)
        self.last_preparation_times = self._prepare_backend(point, args)
        self._prepared = (point, args)

    def _prepare_backend(self, point: Dict[str, np.ndarray], args: Dict[str, Any]) -> Dict[str, float]:
        """The backend's share of :meth:`prepare` and the wall time (s) of its phases by name (nothing for a
        backend that iterates inside its plugin)."""
        return {}

    def feedback(self, x0: np.ndarray, check: bool = True) -> Solution:
        """Finish the solve :meth:`prepare` began, from the initial state ``x0`` (n,): its bounds replace the
        prepared ones (``x_0 = x0``), the rest of the prepared data is kept, and the charts are not
        re-centred on the result. ``check=False`` leaves the result's violations to :meth:`check` (NaN
        until then): they evaluate every constraint, work a controller does after the control is out."""
        if self._prepared is None:
            raise RuntimeError("feedback: call prepare() first (each preparation serves one feedback)")
        (point, args), self._prepared = self._prepared, None
        x0 = np.asarray(x0, dtype=float)
        if x0.shape != (self.problem.nx,) or not np.isfinite(x0).all():
            raise ValueError(f"x0: expected a finite state of shape ({self.problem.nx},), got {x0.shape}")
        nlp, first = self.nlp, self.nlp.idx_x[0]
        lbx, ubx = args["lbx"].copy(), args["ubx"].copy()
        lbx[first] = ubx[first] = nlp.to_variables(x0[None], knots=[0])[0]
        args = {**args, "lbx": lbx, "ubx": ubx}
        run = self._run_prepared(point, args)
        solution = self._solution(run, {key: run[key] for key in ("iterations", "eval_time", "solve_time")}, check)
        if run["interrupted"]:
            raise SolveInterrupted(solution)
        return solution

    def _run_prepared(self, point: Dict[str, np.ndarray], args: Dict[str, Any]) -> Dict[str, Any]:
        """:meth:`feedback`'s backend call (a backend whose :meth:`_prepare_backend` did part of it overrides this)."""
        return self._run(point, args)

    def check(self, solution: Solution) -> np.ndarray:
        """Fill ``solution``'s ``max_violation``, ``knot_violation`` and ``worst_violation`` (left unset by ``feedback(check=False)``),
        with the data its solve read; returns the constraint values ``g`` (n_g,) at its point."""
        data = self._solve_data(solution)
        g = self._constraints(solution.primal, data["p"])
        solution.max_violation, solution.knot_violation = self.nlp.violation(solution.primal, g, data["bounds"])
        solution.worst_violation = worst_violation(self.nlp, solution.primal, g, data["bounds"])
        return g

    def first_knot_violation(self, solution: Solution, g: Optional[np.ndarray] = None) -> float:
        """The largest violation at ``solution``'s point, with the data its solve read, of the first knot's path rows
        (:func:`~trajopt.solvers.derivatives.first_knot_rows`: its constraints, friction cones, ...) and of its
        control bounds: what a plant applying the first control at the first state gets (the dynamics' gaps are
        not the plant's, which integrates its own). ``g``: the constraint values there, when known (:meth:`check`)."""
        data, nlp, rows = self._solve_data(solution), self.nlp, self.first_knot_rows
        if g is not None:
            values = g[rows]
        elif self._first_knot is not None:
            if self._first_knot_call is None:
                self._first_knot_call = NonzeroCall(self._first_knot)
            values = self._first_knot_call(solution.primal, data["p"])[0]
        else:
            values = self._constraints(solution.primal, data["p"])[rows]
        lbw, ubw, lbg, ubg = data["bounds"]
        u, first = solution.primal[nlp.idx_u[0]], nlp.idx_u[0]
        worst = np.concatenate([lbg[rows] - values, values - ubg[rows], lbw[first] - u, u - ubw[first]])
        return float(np.max(worst, initial=0.0))

    @functools.cached_property
    def first_knot_rows(self) -> np.ndarray:
        """The rows of ``g`` that are the first knot's path constraints (:func:`~trajopt.solvers.derivatives.first_knot_rows`)."""
        return first_knot_rows(self.nlp)

    @staticmethod
    def _solve_data(solution: Solution) -> Dict[str, Any]:
        if solution.solve_data is None:
            raise ValueError("solution: it carries no solve data (it was loaded from a file); check a solution of this solver")
        return solution.solve_data

    def _constraints(self, w: np.ndarray, p: np.ndarray) -> np.ndarray:
        """The constraint values ``g`` (n_g,) at ``w`` with parameters ``p`` (the stage-wise function, which may be compiled)."""
        nlp = self.nlp
        if not nlp.n_g:
            return np.zeros(0)
        if self._nlp_function is None:
            return np.asarray(nlp.g_function()(w, p)).reshape(-1)
        if self._nlp_call is None:
            self._nlp_call = NonzeroCall(self._nlp_function)
        return self._nlp_call(w, p)[1]

    def _solution(self, run: Dict[str, Any], totals: Dict[str, float], check: bool = True) -> Solution:
        """The :class:`~trajopt.Solution` of a run (violations checked here, on the returned point, unless not ``check``)."""
        nlp, w = self.nlp, run["w"]
        if check:
            g = self._constraints(w, run["data"]["p"])
            (max_violation, knot_violation), worst = self.nlp.violation(w, g, run["data"]["bounds"]), worst_violation(nlp, w, g, run["data"]["bounds"])
        else:
            max_violation, knot_violation, worst = float("nan"), np.full(self.problem.N, np.nan), ""
        traj = nlp.unpack(nlp.normalized(w))
        solution = Solution(
            times=self.problem.times(traj.durations),
            states=traj.states,
            controls=traj.controls,
            tf=traj.tf,
            objective=run["objective"],
            status=run["status"],
            success=run["success"],
            iterations=totals["iterations"],
            solve_time=totals["solve_time"],
            eval_time=totals["eval_time"],
            solver_time=max(totals["solve_time"] - totals["eval_time"], 0.0),
            build_time=self.build_time,
            max_violation=max_violation,
            knot_violation=knot_violation,
            worst_violation=worst,
            transcription=nlp.transcription.name,
            intervals=traj.intervals,
            primal=w,
            lam_x=run["lam_x"],
            lam_g=run["lam_g"],
            problem_name=self.problem.name,
            problem_recipe=dict(self.problem.recipe or {}),
            problem=self.problem,
        )
        solution.solve_data = run["data"]
        return solution
