"""The one entry point of every solve: :func:`solve` picks a backend by name.

Backends (each a :class:`trajopt.solvers.base.NlpSolver`, built once and solved
repeatedly through its class, e.g. ``IpoptSolver(problem).solve()``):

- ``"ipopt"`` (:mod:`trajopt.solvers.ipopt`): IPOPT, a sparse LDL^T (MUMPS) of
  the whole KKT matrix per iteration; any transcription;
- ``"fatrop"`` (:mod:`trajopt.solvers.fatrop`): fatrop, an interior point
  with a Riccati recursion over the stages;
- ``"sqp"`` (:mod:`trajopt.solvers.sqp`): ``sqpmethod`` with HPIPM, a Riccati
  interior point for each QP.

The last two need the stage form (:mod:`trajopt.solvers.stage_layout`: multiple
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
from .sqp import SqpSolver

#: The backends by name.
SOLVERS: Dict[str, Type[NlpSolver]] = {cls.name: cls for cls in (IpoptSolver, FatropSolver, SqpSolver)}
#: What :func:`solve` uses when neither its arguments nor the problem say otherwise.
BASE_DEFAULTS: Dict[str, Any] = {"solver": "ipopt", "compile": False, "hessian": "exact", "chart": False}


def solver_class(name: str) -> Type[NlpSolver]:
    """The backend class called ``name`` (:data:`SOLVERS`); ``ValueError`` for another name."""
    if name not in SOLVERS:
        raise ValueError(f"solver: expected one of {', '.join(SOLVERS)}, got {name!r}")
    return SOLVERS[name]


def backend_choice(problem: Problem, solver: Optional[str] = None, compile: Optional[bool] = None, hessian: Optional[str] = None, chart: Optional[bool] = None) -> Dict[str, Any]:
    """``solver``, ``compile``, ``hessian`` and ``chart`` as :func:`solve` takes them: each
    argument given (not ``None``), else the problem's :attr:`~trajopt.Problem.solve_defaults`,
    else :data:`BASE_DEFAULTS`."""
    given = {"solver": solver, "compile": compile, "hessian": hessian, "chart": chart}
    return {**BASE_DEFAULTS, **problem.solve_defaults, **{k: v for k, v in given.items() if v is not None}}


def solve(
    problem: Problem,
    transcription: Transcription | str | None = None,
    options: Optional[Dict[str, Any]] = None,
    warm_start: Optional[Solution] = None,
    print_level: int = 0,
    derivatives: str = "stagewise",
    expand: bool = True,
    nlpsol_options: Optional[Dict[str, Any]] = None,
    compile: Optional[bool] = None,
    solver: Optional[str] = None,
    threads: Optional[int] = None,
    hessian: Optional[str] = None,
    chart: Optional[bool] = None,
    max_wall_time: Optional[float] = None,
) -> Solution:
    """Transcribe ``problem`` into a nonlinear program and solve it; return a :class:`~trajopt.Solution`.

    A failed solve does not raise: the solution carries the backend's status,
    ``success = False`` and the last iterate. Bad arguments raise
    ``ValueError`` naming the argument; Ctrl-C raises
    :class:`~trajopt.solvers.interrupt.SolveInterrupted` holding the last iterate.
    ``solver``, ``compile``, ``hessian`` and ``chart`` left at ``None`` take the
    problem's :attr:`~trajopt.Problem.solve_defaults`, else ``"ipopt"``,
    ``False``, ``"exact"`` and ``False``.

    Parameters
    ----------
    problem:
        The :class:`~trajopt.Problem`.
    transcription:
        A :class:`~trajopt.Transcription` or its name (``"trapezoidal"``,
        ``"hermite_simpson"``, ``"multiple_shooting"``, ...); default: the
        problem's :attr:`~trajopt.Problem.default_transcription`.
    options:
        The backend's own options (IPOPT's ``{"tol": 1e-10}``, fatrop's,
        ``sqpmethod``'s), overriding the backend's defaults and the problem's
        :attr:`~trajopt.Problem.solver_options`; unknown names raise before anything is built.
    warm_start:
        A previous :class:`~trajopt.Solution`: its primal-dual point when it
        matches the new NLP's layout, else its trajectory re-sampled at the new knots.
    print_level:
        Verbosity 0 (silent, the default) .. 12 (IPOPT's scale; 5 prints one line per iteration).
    derivatives:
        ``"stagewise"`` (default): gradient, constraint Jacobian and Hessian
        assembled from per-stage derivatives; ``"casadi"``: CasADi
        differentiates the whole NLP graph.
    expand:
        With ``derivatives="casadi"``, expand the NLP to SX first.
    nlpsol_options:
        Extra ``casadi.nlpsol`` options (not the backend's).
    compile:
        Evaluate the stage functions as generated C, compiled once and cached
        on disk (CasADi's virtual machine without a compiler).
    solver:
        ``"ipopt"``, ``"fatrop"`` or ``"sqp"`` (:data:`SOLVERS`); fatrop and
        ``sqp`` need an explicit (multiple-shooting) transcription.
    threads:
        Threads for the heavy stage maps (``None``: the cores this process may use).
    hessian:
        ``"exact"`` or ``"gauss-newton"``.
    chart:
        Tangent-chart knots ``x_k = apply_dx(xbar_k, d_k)`` (explicit transcriptions only).
    max_wall_time:
        Seconds the solve may take (default 600); past it the result is a failed solution.
    """
    if not isinstance(problem, Problem):
        raise ValueError(f"problem: expected a trajopt.Problem, got {type(problem).__name__}")
    chosen = backend_choice(problem, solver, compile, hessian, chart)
    backend = solver_class(chosen["solver"])
    built = backend(problem, transcription, options, print_level, derivatives, expand, nlpsol_options, chosen["compile"], threads, chosen["hessian"], chosen["chart"], max_wall_time)
    return built.solve(warm_start=warm_start)
