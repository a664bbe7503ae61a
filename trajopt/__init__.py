"""Integrators, transcriptions, the OCP builder, solutions, plots, CLI; the solver backends in :mod:`trajopt.solvers`.

The core API::

    from trajopt import Problem, FreeTime, QuadraticCost, GoalConstraint, solve
    problem = Problem(model, N=51, tf=5.0, x0=x0)
    problem.add_cost(QuadraticCost(model, Q, R, x_ref=xf))
    problem.add_constraint(GoalConstraint(model, xf))
    solution = solve(problem, transcription="hermite_simpson")
"""
__version__ = "0.1.0"

from .constraints import Constraint, GoalConstraint
from .costs import Cost, FunctionCost, FunctionTerminalCost, QuadraticCost, QuadraticTerminalCost, RunningCost, TerminalCost
from .frame_targets import frame_target, frame_target_cost
from .interval_constraints import IntervalConstraint
from .integrators import EULER, IMPLICIT_MIDPOINT, RK3, RK4, DiscreteDynamics, Integrator, get_integrator
from .nlp import NLP
from .phase_durations import PhaseDurations
from .problem import FreeTime, Problem
from .problem_check import InfeasibleProblem
from .solution import Solution
from .solvers import DEFAULT_IPOPT_OPTIONS, SOLVERS, WARM_START_OPTIONS, FatropSolver, IpoptSolver, NlpSolver, RtiSolver, SolveInterrupted, SolverSettings, SqpSolver, solve
from .transcription import HermiteSimpson, MultipleShooting, Transcription, Trapezoidal, get_transcription
from ._moved_modules import install_moved_modules

install_moved_modules()

__all__ = [
    "__version__",
    "Constraint",
    "Cost",
    "DEFAULT_IPOPT_OPTIONS",
    "DiscreteDynamics",
    "EULER",
    "FatropSolver",
    "FreeTime",
    "FunctionCost",
    "FunctionTerminalCost",
    "GoalConstraint",
    "HermiteSimpson",
    "IMPLICIT_MIDPOINT",
    "InfeasibleProblem",
    "Integrator",
    "IntervalConstraint",
    "IpoptSolver",
    "MultipleShooting",
    "NLP",
    "NlpSolver",
    "PhaseDurations",
    "Problem",
    "QuadraticCost",
    "QuadraticTerminalCost",
    "RK3",
    "RK4",
    "RtiSolver",
    "RunningCost",
    "SOLVERS",
    "Solution",
    "SolveInterrupted",
    "SolverSettings",
    "SqpSolver",
    "TerminalCost",
    "Transcription",
    "Trapezoidal",
    "WARM_START_OPTIONS",
    "frame_target",
    "frame_target_cost",
    "get_integrator",
    "get_transcription",
    "solve",
]
