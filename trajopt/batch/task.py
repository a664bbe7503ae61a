"""What a worker does for one grid point: build the problem, solve it, and return its row and solution file.

The task's arguments are plain data (the factory's name, JSON parameters, the
solve settings, and the bytes of a neighbour's solution file for a warm
start): no CasADi object is ever pickled; each worker builds its problem
from the registry name or the importable factory. It returns the table row
(:data:`ROW_FIELDS` below) and the solution file's bytes
(:meth:`trajopt.Solution.to_bytes`), which the sweep's process writes: the
workers need no shared filesystem.

Warm starts: the neighbour's solution is given to :func:`trajopt.solve` as
``warm_start`` (primal-dual when the layout matches, else its trajectory
re-sampled; a neighbour with another ``N`` is attached to a problem built
with its own parameters). With IPOPT, :data:`CONTINUATION_IPOPT_OPTIONS`
replace the bound pushes and ``mu_init`` of
:data:`trajopt.WARM_START_OPTIONS` (1e-9, tuned to re-solve the same
problem): the neighbour's active set is not this point's, and its iterate
must be pushed into the interior for the barrier to move it (IPOPT's
adaptive barrier takes its first ``mu`` from the pushed point). Smaller
pushes made warm starts costlier than cold ones on go1-trot; pushes of 0.1
did not on the grids tried (docs/design/sweeps.md). The solve's own options
win over these.

A warm start is budgeted (``budget``, set by the sweep: :data:`WARM_BUDGET_FACTOR`
times the iterations of the cold solve its warm-start chain began with).
When the warm-started solve fails or exhausts that budget, or the
neighbour's solution does not fit the problem (``ValueError``), the
neighbour was a worse start than the problem's own initial guess: the
point is solved again from it, and the failed attempt's iterations and time
are recorded as ``discarded_iterations`` and ``discarded_time``.
Continuation thus never makes a point fail that a cold start solves, and a
neighbour that is a worse start costs at most the budget on top of the cold
solve.
"""
from __future__ import annotations

import math
import os
import time
from typing import Any, Dict, Mapping, Optional

from ..solution import Solution
from ..solvers import SolverSettings, solve
from .points import ProblemRef

#: The row fields a task fills, in table order (the sweep adds ``key``, ``params`` and the swept parameters).
ROW_FIELDS = (
    "success",
    "status",
    "iterations",
    "objective",
    "max_violation",
    "setup_time",
    "build_time",
    "solve_time",
    "eval_time",
    "solver_time",
    "task_time",
    "warm_from",
    "discarded_iterations",
    "discarded_time",
    "worker",
)


#: IPOPT options of a warm start from a neighbouring grid point (module docstring).
CONTINUATION_IPOPT_OPTIONS: Dict[str, Any] = {
    "mu_init": 1e-6,
    "warm_start_bound_push": 0.1,
    "warm_start_bound_frac": 0.1,
    "warm_start_slack_bound_push": 0.1,
    "warm_start_slack_bound_frac": 0.1,
    "warm_start_mult_bound_push": 0.1,
}
#: A warm start may take this many times the iterations of the cold solve its chain began with (module docstring).
WARM_BUDGET_FACTOR = 1.5


def warm_budget(cold_iterations: int) -> int:
    """The iteration budget of a warm start whose chain began with a cold solve of ``cold_iterations``."""
    return max(1, math.ceil(WARM_BUDGET_FACTOR * cold_iterations))


def _continuation_settings(problem: Any, settings: SolverSettings, budget: Optional[int]) -> SolverSettings:
    """``settings`` for a warm-started solve: with IPOPT (given, or the problem's default backend),
    :data:`CONTINUATION_IPOPT_OPTIONS` under the given options; the iteration cap at most ``budget``."""
    options = dict(settings.options)
    if settings.resolved(problem).solver == "ipopt":
        options = {**CONTINUATION_IPOPT_OPTIONS, **options}
    if budget is not None:
        cap = options.get("max_iter", settings.max_iter)
        options["max_iter"] = min(budget, budget if cap is None else cap)
    return settings.replace(options=options)


def _worker_name() -> str:
    """``address (pid)`` of the Dask worker running this task, or ``pid`` outside Dask."""
    try:
        from distributed import get_worker

        return f"{get_worker().address} (pid {os.getpid()})"
    except (ImportError, ValueError):
        return f"pid {os.getpid()}"


def _warm_solution(data: bytes, ref: ProblemRef, params: Mapping[str, Any], warm_params: Mapping[str, Any], problem: Any) -> Solution:
    """The neighbour's solution, attached to a problem when its ``N`` differs from ``problem``'s (so it can be re-sampled)."""
    warm = Solution.from_bytes(data, name="warm_start")
    if warm.N != problem.N:
        warm.attach(ref.build(warm_params))
    return warm


def solve_point(
    ref: ProblemRef,
    params: Dict[str, Any],
    settings: SolverSettings,
    warm: Optional[bytes] = None,
    warm_key: str = "",
    warm_params: Optional[Dict[str, Any]] = None,
    budget: Optional[int] = None,
) -> Dict[str, Any]:
    """Build ``ref`` with ``params``, solve it with ``settings`` (a :class:`~trajopt.SolverSettings`), from the solution file ``warm`` of point ``warm_key`` if given,
    in at most ``budget`` iterations (else cold: module docstring).

    Returns ``{"row": {...ROW_FIELDS}, "solution": bytes}``. A failed solve is a row
    with the backend's status; exceptions (a factory refusing its parameters) propagate
    to Dask, which retries the task and then reports the error to the sweep.
    """
    start = time.perf_counter()
    problem = ref.build(params)
    setup_time = time.perf_counter() - start
    solution, discarded_iterations, discarded_time, warm_from = None, 0, 0.0, ""
    if warm is not None:
        try:
            solution = solve(problem, _continuation_settings(problem, settings, budget), warm_start=_warm_solution(warm, ref, params, warm_params or {}, problem))
            warm_from = warm_key
        except ValueError:  # a neighbour whose solution does not fit this problem: start cold
            solution = None
        if solution is not None and not solution.success:
            discarded_iterations, discarded_time = solution.iterations, solution.solve_time + solution.build_time
            solution, warm_from = None, ""
    if solution is None:
        solution = solve(problem, settings)
    row = {
        "success": bool(solution.success),
        "status": solution.status,
        "iterations": int(solution.iterations),
        "objective": float(solution.objective),
        "max_violation": float(solution.max_violation),
        "setup_time": setup_time,
        "build_time": float(solution.build_time),
        "solve_time": float(solution.solve_time),
        "eval_time": float(solution.eval_time),
        "solver_time": float(solution.solver_time),
        "warm_from": warm_from,
        "discarded_iterations": discarded_iterations,
        "discarded_time": discarded_time,
        "worker": _worker_name(),
    }
    data = solution.to_bytes()
    row["task_time"] = time.perf_counter() - start
    return {"row": row, "solution": data}


def check_worker(ref: ProblemRef) -> str:
    """Run on every worker before a sweep: import the toolkit and the factory (so the first tasks do not
    pay for it), and return the toolkit's version; ``ValueError`` when the factory cannot be imported."""
    from .. import __version__

    ref.factory()
    return __version__
