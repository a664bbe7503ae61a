"""The one entry point of every solve: :func:`solve` picks a backend by name.

Backends (each a :class:`trajopt.solvers.base.NlpSolver`, built once and solved
repeatedly through its class, e.g. ``IpoptSolver(problem).solve()``):

- ``"ipopt"`` (:mod:`trajopt.solvers.ipopt`): IPOPT, a sparse LDL^T (MUMPS) of
  the whole KKT matrix per iteration; any transcription;
- ``"fatrop"`` (:mod:`trajopt.solvers.fatrop`): fatrop, an interior point
  with a Riccati recursion over the stages;
- ``"sqp"`` (:mod:`trajopt.solvers.sqp`): ``sqpmethod`` with HPIPM, a Riccati
  interior point for each QP;
- ``"rti"`` (:mod:`trajopt.solvers.rti`): one real-time iteration (one Gauss-Newton
  SQP step, its QP solved by HPIPM), the receding-horizon controller's backend.

The last three need the stage form (:mod:`trajopt.solvers.stage_layout`: multiple
shooting; tangent-chart knots for states with rotations). A problem may name
the backend and options it solves best with (:attr:`trajopt.Problem.solve_defaults`,
e.g. the legged problems' contact formulation); arguments given here win.

A failed solve never raises: the :class:`~trajopt.Solution` carries the
backend's status, ``success = False`` and the last iterate.
Bad arguments raise ``ValueError`` naming the argument.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Type

from ..problem import Problem
from ..solution import Solution
from ..transcription import Transcription
from .base import NlpSolver
from .fatrop import FatropSolver
from .ipopt import IpoptSolver
from .rti import RtiSolver
from .settings import SolverSettings, settings_with
from .sqp import FirstQpFailed, SqpSolver

#: The backends by name.
SOLVERS: Dict[str, Type[NlpSolver]] = {cls.name: cls for cls in (IpoptSolver, FatropSolver, SqpSolver, RtiSolver)}


def solver_class(name: str) -> Type[NlpSolver]:
    """The backend class called ``name`` (:data:`SOLVERS`); ``ValueError`` for another name."""
    if name not in SOLVERS:
        raise ValueError(f"solver: expected one of {', '.join(SOLVERS)}, got {name!r}")
    return SOLVERS[name]


def build_solver(problem: Problem, settings: SolverSettings | Transcription | str | None = None, **overrides: Any) -> NlpSolver:
    """The backend the settings name (resolved for ``problem``: :meth:`SolverSettings.resolved`), built for ``problem``."""
    if not isinstance(problem, Problem):
        raise ValueError(f"problem: expected a trajopt.Problem, got {type(problem).__name__}")
    chosen = settings_with(settings, overrides).resolved(problem)
    return solver_class(chosen.solver)(problem, chosen)


def solve(problem: Problem, settings: SolverSettings | Transcription | str | None = None, warm_start: Optional[Solution] = None, check: bool = True, **overrides: Any) -> Solution:
    """Transcribe ``problem`` into a nonlinear program and solve it; return a :class:`~trajopt.Solution`.

    ``settings`` (:class:`~trajopt.solvers.settings.SolverSettings`; a transcription or its name
    stands for ``SolverSettings(transcription=...)``) with ``overrides``, its field names
    (``solver``, ``transcription``, ``max_iter``, ``tol``, ``hessian``, ``compile``, ``chart``,
    ``max_wall_time``, ``options``, ``nlpsol_options``, ``print_level``, ``derivatives``,
    ``expand``, ``threads``; one left at ``None`` keeps the settings' value), say how:
    ``solve(problem, "hermite_simpson", solver="ipopt", options={"tol": 1e-10})``.
    ``solver``, ``compile``, ``hessian`` and ``chart`` left at ``None`` take the problem's
    :attr:`~trajopt.Problem.solve_defaults`, else ``"ipopt"``, ``False``, ``"exact"`` and ``False``.

    ``compile=True`` generates C for the NLP's stage functions and compiles it on the first solve
    of a problem (seconds for a small model, minutes for a robot's whole-body dynamics: a status line
    on stderr counts the functions), then loads the libraries from a cache on disk in every later
    solve and process: ``$TRAJOPT_CACHE`` when set, else ``$XDG_CACHE_HOME/trajopt``, else
    ``~/.cache/trajopt`` (:mod:`models.compiled`; the guide's page on running many solves at once).
    Without a compiler the functions stay on CasADi's virtual machine, with the same results.

    ``warm_start``: a previous :class:`~trajopt.Solution`: its primal-dual point when it matches
    the new NLP's layout, else its trajectory re-sampled at the new knots.

    ``check``: first test the states the problem fixes (``x0``, the goal, knots pinned by their
    bounds) against its bounds and control-free constraints (:meth:`~trajopt.Problem.check`); a
    violation raises :class:`~trajopt.problem_check.InfeasibleProblem` (a ``ValueError``) naming
    it, before anything is built. ``check=False`` solves from an infeasible start on purpose.

    ``solver="sqp"`` from a guess whose first QP HPIPM cannot solve (:class:`~trajopt.solvers.sqp.FirstQpFailed`)
    and no ``warm_start``: IPOPT solves first, the SQP starts from its solution, and the solution's
    ``started_from`` says so (its iterations and times are the SQP's).

    A failed solve does not raise: the solution carries the backend's status, ``success = False``
    and the last iterate. Bad arguments raise ``ValueError`` naming the argument (unknown backend
    options before anything is built); Ctrl-C raises
    :class:`~trajopt.solvers.interrupt.SolveInterrupted` holding the last iterate.
    """
    if not isinstance(problem, Problem):
        raise ValueError(f"problem: expected a trajopt.Problem, got {type(problem).__name__}")
    if check:
        problem.check()
    solver = build_solver(problem, settings, **overrides)
    if problem.homotopy is not None:
        return problem.homotopy.solve(solver, warm_start)
    try:
        return solver.solve(warm_start=warm_start)
    except FirstQpFailed:
        if warm_start is not None:
            raise
    start = build_solver(problem, solver.settings.replace(solver="ipopt", options={}, nlpsol_options={})).solve()
    solution = solver.solve(warm_start=start)
    solution.started_from = f"IPOPT's {'solution' if start.success else 'last iterate'} ({start.iterations} iterations, {start.status}): HPIPM could not solve the first QP from the guess"
    return solution
