"""Solving by homotopy on a constraint's upper bound: a sequence of solves, each from the last one's point.

Some problems are solved more reliably through easier ones. A complementarity
constraint ``0 <= a, 0 <= b, a b <= epsilon`` (a foot is either on the ground or
carries no force) has no interior at ``epsilon = 0`` and a disconnected
feasible set for small ``epsilon``: an interior-point solver started far from a
solution stalls there. Relaxed (``epsilon = 0.1``) it is a smooth problem
whose solution is a good start for ``epsilon = 0.01``, and so on down to the
bound the problem states.

A problem's :attr:`~trajopt.Problem.homotopy` is any object with a method
``solve(solver, warm_start)`` that runs such a sequence on one built NLP
(bounds and parameters are read at every solve, so they may change between
solves; the structure may not). :func:`trajopt.solve` calls it instead of a
single solve. :class:`BoundHomotopy` is the common case: it names
:class:`~trajopt.constraints.Constraint` s of the problem that share an upper
bound and the relaxed bounds to pass through, loosest first, solves the
problem once per relaxed bound and once more with the constraints' own bounds
(the problem as stated): the first solve from ``warm_start`` (default: the
problem's guess), each later one from the previous one's primal-dual point
with the backend's homotopy options
(:attr:`~trajopt.solvers.base.NlpSolver.homotopy_options`: a larger barrier
parameter and bound pushes than a re-solve's, as the tightened rows are
violated there). The returned :class:`~trajopt.Solution` is the last solve's, with the iterations
and times summed over the stages and each stage in
:attr:`trajopt.Solution.homotopy`; a stage that fails ends the homotopy with
its solution (its status says which bound failed). The constraints' bounds are
restored afterwards.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .constraints import Constraint


@dataclass(frozen=True)
class BoundHomotopy:
    """Solve with the upper bound of ``constraints`` (one :class:`~trajopt.constraints.Constraint` or several that
    share it) at each of ``relaxed`` (loosest first), then at their own bounds (module docstring)."""

    constraints: Tuple[Constraint, ...]
    relaxed: Tuple[float, ...]

    def __post_init__(self) -> None:
        constraints = (self.constraints,) if isinstance(self.constraints, Constraint) else tuple(self.constraints)
        if not constraints or not all(isinstance(c, Constraint) for c in constraints):
            raise TypeError(f"constraints: expected a trajopt.Constraint or a sequence of them, got {self.constraints!r:.80}")
        values = np.asarray(self.relaxed, dtype=float)
        if values.ndim != 1 or values.size == 0 or not np.isfinite(values).all() or np.any(np.diff(values) >= 0):
            raise ValueError(f"relaxed: expected finite bounds in decreasing order, got {list(self.relaxed)}")
        final = max(float(np.max(c.upper)) for c in constraints)
        if values[-1] <= final:
            raise ValueError(f"relaxed: the last relaxed bound {values[-1]:g} must exceed the constraints' own upper bound {final:g}")
        object.__setattr__(self, "constraints", constraints)
        object.__setattr__(self, "relaxed", tuple(float(v) for v in values))

    def solve(self, solver: Any, warm_start: Optional[Any] = None) -> Any:
        """Run the homotopy with ``solver`` (an :class:`~trajopt.solvers.base.NlpSolver` of the problem that holds the
        constraints) from ``warm_start`` (default: the problem's guess); the last stage's :class:`~trajopt.Solution`
        with the stages' totals (module docstring)."""
        own = [c.upper for c in self.constraints]
        names = ", ".join(c.name for c in self.constraints)
        stages: List[Dict[str, Any]] = []
        solution = warm_start
        try:
            for upper in (*self.relaxed, None):
                for constraint, bound in zip(self.constraints, own):
                    constraint.upper = bound if upper is None else upper
                value = max(float(np.max(bound)) for bound in own) if upper is None else upper
                solution = record_stage(solver.solve(warm_start=solution, homotopy=bool(stages)), stages, {"upper": value})
                if not solution.success:
                    solution.status = f"{solution.status} (homotopy stage {len(stages)} of {len(self.relaxed) + 1}, {names} <= {value:g})"
                    break
        finally:
            for constraint, bound in zip(self.constraints, own):
                constraint.upper = bound
        return solution


def record_stage(solution: Any, stages: List[Dict[str, Any]], record: Dict[str, Any]) -> Any:
    """``solution`` of one stage, its iterations and times made the totals over ``stages`` and itself; ``stages``
    gains ``record`` with the stage's own iterations, status and times and becomes its :attr:`~trajopt.Solution.homotopy`.

    ``record`` holds the stage's ``"upper"`` bound and may hold a ``"label"`` (words the report adds to the bound),
    a ``"reached"`` value (the largest the bounded rows reached) and any JSON data of the stage."""
    own = {"iterations": int(solution.iterations), "solve_time": float(solution.solve_time), "eval_time": float(solution.eval_time)}
    stages.append({**record, "status": solution.status, **own})
    solution.iterations = sum(stage["iterations"] for stage in stages)
    solution.solve_time = sum(stage["solve_time"] for stage in stages)
    solution.eval_time = sum(stage["eval_time"] for stage in stages)
    solution.solver_time = max(solution.solve_time - solution.eval_time, 0.0)
    solution.homotopy = list(stages)
    return solution
