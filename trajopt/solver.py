"""Solving a transcribed problem with IPOPT (MUMPS) through ``casadi.nlpsol``.

:func:`solve` is the one-call entry point; :class:`IpoptSolver` builds the NLP
and the CasADi solver once and solves it repeatedly (new data, warm starts).

Defaults (:data:`DEFAULT_IPOPT_OPTIONS`): exact Hessian, MUMPS, ``tol`` 1e-8,
at most 1000 iterations, IPOPT silent unless ``print_level`` > 0. MUMPS orders
the KKT matrix by QAMD (``mumps_pivot_order`` 6) with a 100 % memory margin
(``mumps_mem_percent``; MUMPS asks for more when it needs it, and a smaller
workspace is reused by malloc instead of being mapped afresh for every
factorization). Against IPOPT's defaults (automatic ordering, 1000 %), measured
in one run each: IPOPT's own time drops 30-65 % on the Go1 trot, bound and
jump, the Go2 trot and the humanoid shift, is unchanged on the Go1 pace and on
the small problems. Derivatives are assembled stage by stage
(:mod:`trajopt.derivatives`), optionally from compiled C (``compile=True``:
gcc runs once per stage function, ~10 s in parallel for the Go1 trot, then
the cache serves; ~6x less evaluation time there). Measured on the
quadrotor point-to-point problem (``bench/quadrotor_transcriptions.py``, a
noisy 2-core machine), the stage-wise assembly builds 15-30x faster than letting CasADi
differentiate the NLP expanded to SX (``derivatives="casadi", expand=True``:
0.4-3 s against 30-100 ms) and solves in 0.9-1.5x its time; differentiating the
MX graph instead (``expand=False``) solves 2-3x slower. The stage-wise build
also scales to multibody models (a 31-knot Go1 NLP builds in 0.4-1.5 s).

Warm start (``warm_start=solution``): with the same transcription and layout
the primal point and both multiplier vectors are reused with
:data:`WARM_START_OPTIONS` (``warm_start_init_point``, bound pushes 1e-9, a
small ``mu_init``), so an optimal solution re-converges in a couple of
iterations. Otherwise the previous trajectory, re-sampled at the new knots
(with :meth:`Solution.evaluate`), is used as a primal guess only.

CasADi's bundled OpenBLAS (which MUMPS calls) is set to one thread
(:func:`single_threaded_casadi_blas`): its idle worker threads spin on the
other cores between factorizations, which took the cores the threaded stage
maps (``threads``) need. Measured on the Go1 trot (2 cores): evaluations 0.162
-> 0.101 s with 2 threads, and MUMPS is no slower on one BLAS thread (IPOPT's
own time 0.134 -> 0.128 s, compiled). numpy's BLAS is a separate library and
is left alone.

A failed solve never raises: the :class:`Solution` carries IPOPT's status,
``success = False`` and the last iterate (design rule 6). Bad arguments raise
``ValueError`` naming the argument; IPOPT options are checked against IPOPT
before the NLP is built (:mod:`trajopt.solver_options`). Ctrl-C stops IPOPT
and raises :class:`trajopt.interrupt.SolveInterrupted` (a ``KeyboardInterrupt``)
carrying the last iterate.
"""
from __future__ import annotations

import ctypes
import functools
import time
from pathlib import Path
from typing import Any, Dict, Optional

import casadi as ca
import numpy as np

from .derivatives import available_cores, stagewise_nlp
from .interrupt import SolveInterrupted, watch_interrupts
from .nlp import NLP
from .problem import Problem
from .solution import Solution
from .solver_options import casadi_message, check_ipopt_options, check_nlpsol_options
from .transcription import Transcription

#: IPOPT options used unless overridden by ``options``.
DEFAULT_IPOPT_OPTIONS: Dict[str, Any] = {
    "tol": 1e-8,
    "max_iter": 1000,
    "linear_solver": "mumps",
    "mumps_pivot_order": 6,
    "mumps_mem_percent": 100,
    "hessian_approximation": "exact",
    "sb": "yes",
}
#: Default number of threads for the stage maps (fewer when fewer cores are available).
MAX_DEFAULT_THREADS = 8
#: IPOPT options added for a primal-dual warm start.
WARM_START_OPTIONS: Dict[str, Any] = {
    "warm_start_init_point": "yes",
    "warm_start_bound_push": 1e-9,
    "warm_start_bound_frac": 1e-9,
    "warm_start_slack_bound_push": 1e-9,
    "warm_start_slack_bound_frac": 1e-9,
    "warm_start_mult_bound_push": 1e-9,
    "mu_init": 1e-9,
}


def _eval_time(stats: Dict[str, Any]) -> float:
    """Wall time (s) spent in NLP function evaluations according to ``solver.stats()``."""
    return float(sum(v for k, v in stats.items() if k.startswith("t_wall_nlp_")))


@functools.lru_cache(maxsize=None)
def single_threaded_casadi_blas() -> bool:
    """Set the OpenBLAS bundled with CasADi (MUMPS's BLAS) to one thread (module docstring), once.

    Returns whether the library was found (a CasADi build without it is left as it is).
    """
    for path in sorted(Path(ca.__file__).parent.glob("libcasadi-tp-openblas*")):
        try:
            ctypes.CDLL(str(path)).openblas_set_num_threads(1)
            return True
        except (OSError, AttributeError):
            continue
    return False


class IpoptSolver:
    """A problem transcribed once and solved with IPOPT as often as needed.

    Parameters
    ----------
    problem, transcription:
        The :class:`~trajopt.Problem` and a transcription object or name.
    options:
        IPOPT options (plain names, e.g. ``{"tol": 1e-10, "mu_strategy": "adaptive"}``)
        overriding :data:`DEFAULT_IPOPT_OPTIONS`.
    print_level:
        IPOPT's ``print_level`` (0 silent .. 12).
    derivatives:
        ``"stagewise"`` (default): gradient, constraint Jacobian and Hessian of
        the Lagrangian assembled from per-stage SX derivatives
        (:mod:`trajopt.derivatives`); ``"casadi"``: CasADi differentiates the
        whole NLP graph.
    expand:
        With ``derivatives="casadi"``, expand the NLP to SX before
        differentiating (faster evaluations, slower build); falls back to MX
        when the model cannot be expanded.
    nlpsol_options:
        Extra ``casadi.nlpsol`` options (not IPOPT's).
    compile:
        With ``derivatives="stagewise"``, evaluate the stage functions and
        their derivatives as compiled C (:func:`trajopt.derivatives.stagewise_nlp`:
        gcc runs once, the libraries are cached on disk; CasADi's virtual
        machine serves when there is no compiler).
    threads:
        With ``derivatives="stagewise"``, threads for the heavy stage maps
        (:mod:`trajopt.derivatives`; the numbers do not depend on it).
        ``None``: the cores this process may use, at most
        :data:`MAX_DEFAULT_THREADS`; 1 evaluates everything serially.
    """

    def __init__(
        self,
        problem: Problem,
        transcription: Transcription | str | None = None,
        options: Optional[Dict[str, Any]] = None,
        print_level: int = 0,
        derivatives: str = "stagewise",
        expand: bool = True,
        nlpsol_options: Optional[Dict[str, Any]] = None,
        compile: bool = False,
        threads: Optional[int] = None,
    ) -> None:
        for name, value in (("options", options), ("nlpsol_options", nlpsol_options)):
            if value is not None and not isinstance(value, dict):
                raise ValueError(f"{name}: expected a dict or None, got {type(value).__name__}")
        if isinstance(print_level, bool) or not isinstance(print_level, (int, np.integer)) or not 0 <= print_level <= 12:
            raise ValueError(f"print_level: expected an int in 0..12, got {print_level!r}")
        if derivatives not in ("stagewise", "casadi"):
            raise ValueError(f"derivatives: expected 'stagewise' or 'casadi', got {derivatives!r}")
        if compile and derivatives != "stagewise":
            raise ValueError("compile: compiles the stage-wise functions; it needs derivatives='stagewise'")
        self.check_options(options, nlpsol_options)
        start = time.perf_counter()
        single_threaded_casadi_blas()
        self.problem = problem
        self.nlp = NLP(problem, transcription)
        self.user_options = {"print_level": int(print_level), **(options or {})}
        self.derivatives, self.expand = derivatives, expand
        self.nlpsol_options = dict(nlpsol_options or {})
        threads = min(available_cores(), MAX_DEFAULT_THREADS) if threads is None else threads
        self._nlp_function, self._stagewise_options = stagewise_nlp(self.nlp, compile, threads) if derivatives == "stagewise" else (None, {})
        self._solvers: Dict[bool, ca.Function] = {}
        self.build_time = time.perf_counter() - start

    @staticmethod
    def check_options(options: Optional[Dict[str, Any]], nlpsol_options: Optional[Dict[str, Any]]) -> None:
        """Raise ``ValueError`` naming each option IPOPT or ``casadi.nlpsol`` would refuse (:mod:`trajopt.solver_options`), before any building."""
        check_ipopt_options(options)
        check_nlpsol_options(nlpsol_options, "ipopt")

    def _solver(self, warm: bool) -> ca.Function:
        """The ``casadi.nlpsol`` (built on first use, its time added to ``build_time``; warm-start options when ``warm``)."""
        if warm not in self._solvers:
            start = time.perf_counter()
            ipopt = {**DEFAULT_IPOPT_OPTIONS, **self.problem.ipopt_options, **(WARM_START_OPTIONS if warm else {}), **self.user_options}
            nlp = self._nlp_function if self._nlp_function is not None else {"x": self.nlp.w, "p": self.nlp.p, "f": self.nlp.f, "g": self.nlp.g}
            opts = {"print_time": False, "error_on_fail": False, "ipopt": ipopt, **self._stagewise_options, **self.nlpsol_options}
            expand = self.expand and self.derivatives == "casadi"
            try:
                try:
                    solver = ca.nlpsol("trajopt", "ipopt", nlp, {**opts, "expand": expand})
                except RuntimeError:
                    if not expand:
                        raise
                    solver = ca.nlpsol("trajopt", "ipopt", nlp, {**opts, "expand": False})  # not SX-expandable
            except RuntimeError as err:
                raise ValueError(f"options: CasADi could not build the IPOPT solver with ipopt={ipopt!r}: {casadi_message(err)}") from None
            self._solvers[warm] = solver
            self.build_time += time.perf_counter() - start
        return self._solvers[warm]

    def _warm_point(self, warm_start: Solution) -> Dict[str, np.ndarray]:
        """Initial point from a previous solution: primal-dual if the layout matches, else primal."""
        nlp = self.nlp
        same = (
            warm_start.transcription == nlp.transcription.name
            and warm_start.primal.shape == (nlp.n_w,)
            and warm_start.lam_g.shape == (nlp.n_g,)
            and warm_start.N == self.problem.N
        )
        if same:
            return {"x0": warm_start.primal, "lam_x0": warm_start.lam_x, "lam_g0": warm_start.lam_g}
        if warm_start.N == self.problem.N:
            X, U = warm_start.states, warm_start.controls
        elif warm_start.problem is None:
            raise ValueError(f"warm_start: has N = {warm_start.N}, the problem N = {self.problem.N}; load it with its problem to re-sample it")
        else:
            X, U = warm_start.evaluate(np.linspace(0.0, warm_start.tf, self.problem.N))
        return {"x0": nlp.pack(X, U, tf=warm_start.tf if self.problem.free_time else None)}

    def solve(self, warm_start: Optional[Solution] = None, initial_guess: Optional[np.ndarray] = None) -> Solution:
        """Solve from the problem's initial guess, a decision vector ``initial_guess``, or a ``warm_start`` solution."""
        nlp = self.nlp
        if warm_start is not None and not isinstance(warm_start, Solution):
            raise ValueError(f"warm_start: expected a Solution, got {type(warm_start).__name__}")
        if warm_start is not None:
            point = self._warm_point(warm_start)
        elif initial_guess is not None:
            w0 = np.asarray(initial_guess, dtype=float)
            if w0.shape != (nlp.n_w,) or not np.isfinite(w0).all():
                raise ValueError(f"initial_guess: expected a finite vector of shape ({nlp.n_w},), got {w0.shape}")
            point = {"x0": w0}
        else:
            point = {"x0": nlp.initial_guess()}
        warm = "lam_g0" in point
        solver = self._solver(warm)
        lbx, ubx = nlp.bounds_w()
        lbg, ubg = nlp.bounds_g()
        p = nlp.parameters()
        start = time.perf_counter()
        try:
            with watch_interrupts() as interrupt:  # Ctrl-C stops IPOPT; SolveInterrupted is raised below
                res = solver(p=p, lbx=lbx, ubx=ubx, lbg=lbg, ubg=ubg, **point)
            stats = solver.stats()
            w, lam_x, lam_g = (np.asarray(res[k]).reshape(-1) for k in ("x", "lam_x", "lam_g"))
            objective, status, success, iters = float(res["f"]), str(stats["return_status"]), bool(stats["success"]), int(stats.get("iter_count", 0))
            eval_time = _eval_time(stats)
        except RuntimeError as err:  # an evaluation error CasADi did not hand to IPOPT
            w, lam_x, lam_g = np.asarray(point["x0"], dtype=float), np.zeros(nlp.n_w), np.zeros(nlp.n_g)
            objective, status, success, iters, eval_time = float("nan"), f"CasADi error: {err}", False, 0, 0.0
        solve_time = time.perf_counter() - start
        g = np.asarray(nlp.g_function()(w, p)).reshape(-1) if nlp.n_g else np.zeros(0)
        max_violation, knot_violation = nlp.violation(w, g)
        traj = nlp.unpack(nlp.normalized(w))
        solution = Solution(
            times=self.problem.times(traj.tf),
            states=traj.states,
            controls=traj.controls,
            tf=traj.tf,
            objective=objective,
            status=status,
            success=success,
            iterations=iters,
            solve_time=solve_time,
            eval_time=eval_time,
            solver_time=max(solve_time - eval_time, 0.0),
            build_time=self.build_time,
            max_violation=max_violation,
            knot_violation=knot_violation,
            transcription=nlp.transcription.name,
            intervals=traj.intervals,
            primal=w,
            lam_x=lam_x,
            lam_g=lam_g,
            problem_name=self.problem.name,
            problem_recipe=dict(self.problem.recipe or {}),
            problem=self.problem,
        )
        if interrupt.interrupted:
            solution.status, solution.success = "Interrupted", False
            raise SolveInterrupted(solution)
        return solution


def solve(
    problem: Problem,
    transcription: Transcription | str | None = None,
    options: Optional[Dict[str, Any]] = None,
    warm_start: Optional[Solution] = None,
    print_level: int = 0,
    derivatives: str = "stagewise",
    expand: bool = True,
    nlpsol_options: Optional[Dict[str, Any]] = None,
    compile: bool = False,
    solver: str = "ipopt",
    threads: Optional[int] = None,
) -> Solution:
    """Transcribe ``problem`` and solve it with IPOPT, or with fatrop (``solver="fatrop"``:
    :class:`trajopt.fatrop_solver.FatropSolver`); see :class:`IpoptSolver` for the arguments."""
    if solver == "fatrop":
        from .fatrop_solver import FatropSolver  # it derives from IpoptSolver, so it imports this module

        backend = FatropSolver
    elif solver == "ipopt":
        backend = IpoptSolver
    else:
        raise ValueError(f"solver: expected 'ipopt' or 'fatrop', got {solver!r}")
    built = backend(problem, transcription, options, print_level, derivatives, expand, nlpsol_options, compile, threads)
    return built.solve(warm_start=warm_start)
