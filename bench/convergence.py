"""Does every solve converge from its default guess, and does its iteration count survive round-off?

An interior-point solve whose iteration count jumps when its starting point
moves by 1e-9 depends on round-off: another CPU (other BLAS kernels) takes
another path, and a problem that needs 40 iterations here may need 300
there. For each case (:func:`cases`: every registered problem, the README's
code block, the examples' problems) this script builds the default solver
once (the backend, transcription and options :func:`trajopt.solve` would
choose) and solves

- from the default guess (``base``),
- from ``--perturbations`` copies of that guess, each entry moved by a
  relative 1e-9 (``x (1 + 1e-9 r)``, ``r`` standard normal, plus ``1e-9 r'``
  where ``x`` is 0; quaternions re-normalized),
- from the default guess with CasADi's OpenBLAS on two threads instead of
  one (the BLAS that MUMPS calls: another summation order).

Columns: iterations min / median / max over all these solves and their ratio
max / min, the base solve's time (s) and objective, the largest relative
spread of the objectives, and the statuses (``ok`` when all succeeded). A row
passes when every solve succeeded, the most iterations are <= ``--max-iter``
(50) and max / min <= ``--max-ratio`` (1.5); ``FAIL`` marks the others. The
slow test ``tests/test_convergence.py`` asserts these bounds on the flagship
problems.

    python bench/convergence.py [--cases go1-trot,go1-jump,readme-quadrotor] [--perturbations 5]
"""
from __future__ import annotations

import argparse
import contextlib
import ctypes
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import problems  # noqa: E402
from trajopt import Problem  # noqa: E402
from trajopt.manifold import normalize_quaternions  # noqa: E402
from trajopt.solvers import backend_choice, solver_class  # noqa: E402
from trajopt.solvers.blas import loaded_casadi_blas  # noqa: E402

#: Relative size of a perturbation of the guess.
PERTURBATION = 1e-9


def readme_problem(index: int = 0) -> Tuple[Problem, Dict[str, Any]]:
    """The problem of the README's ``index``-th Python block and the keywords of its ``solve`` call."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)
    code = blocks[index]
    call = re.search(r"^.*\bsolve\(problem(.*)\)\s*$", code, flags=re.M)
    kwargs = eval(f"dict({call.group(1).lstrip(', ')})") if call and call.group(1).strip() else {}  # noqa: S307 - the README's own literal
    namespace: Dict[str, Any] = {}
    exec(compile(code[: call.start()] if call else code, "README.md", "exec"), namespace)  # noqa: S102 - the README's own code
    return namespace["problem"], kwargs


def cases() -> Dict[str, Callable[[], Tuple[Problem, Dict[str, Any]]]]:
    """Every case by name: a builder of ``(problem, solve keywords)``."""
    from examples.quickstart import satellite_slew
    from examples.thrust_body import thrust_body_flight

    found: Dict[str, Callable[[], Tuple[Problem, Dict[str, Any]]]] = {name: (lambda name=name: (problems.get(name), {})) for name in problems.names()}
    found["readme-quadrotor"] = readme_problem
    found["example-satellite"] = lambda: (satellite_slew(), {})
    found["example-thrust-body"] = lambda: (thrust_body_flight(), {})
    return found


@contextlib.contextmanager
def casadi_blas_threads(n: int) -> Iterator[None]:
    """CasADi's OpenBLAS (every mapped copy) on ``n`` threads inside the block, one thread after it."""
    libraries = [ctypes.CDLL(path) for path in loaded_casadi_blas()]
    for lib in libraries:
        lib.openblas_set_num_threads(n)
    try:
        yield
    finally:
        for lib in libraries:
            lib.openblas_set_num_threads(1)


@contextlib.contextmanager
def perturbed_guess(problem: Problem, seed: int) -> Iterator[None]:
    """The problem's initial guess moved by a relative :data:`PERTURBATION` inside the block (restored after)."""
    states, controls = problem.initial_guess()
    saved = (problem._guess_states, problem._guess_controls)
    rng = np.random.default_rng(seed)

    def moved(a: np.ndarray) -> np.ndarray:
        return a * (1.0 + PERTURBATION * rng.standard_normal(a.shape)) + np.where(a == 0.0, PERTURBATION * rng.standard_normal(a.shape), 0.0)

    problem.set_initial_guess(normalize_quaternions(problem.model, moved(states)), moved(controls))
    try:
        yield
    finally:
        problem._guess_states, problem._guess_controls = saved


@dataclass
class Row:
    """The solves of one case."""

    name: str
    iterations: List[int] = field(default_factory=list)
    objectives: List[float] = field(default_factory=list)
    statuses: List[str] = field(default_factory=list)
    successes: List[bool] = field(default_factory=list)
    time: float = float("nan")
    error: Optional[str] = None

    @property
    def ratio(self) -> float:
        return max(self.iterations) / max(min(self.iterations), 1)

    @property
    def spread(self) -> float:
        """Largest relative difference of the objectives from the base solve's."""
        J = np.array(self.objectives)
        return float(np.max(np.abs(J - J[0])) / max(abs(J[0]), 1e-12))

    def passes(self, max_iter: int, max_ratio: float) -> bool:
        return self.error is None and all(self.successes) and max(self.iterations) <= max_iter and self.ratio <= max_ratio


def measure(name: str, problem: Problem, kwargs: Dict[str, Any], perturbations: int = 5, blas: bool = True) -> Row:
    """Solve ``problem`` as :func:`trajopt.solve` would with ``kwargs``: from its guess, perturbed guesses, 2 BLAS threads."""
    row = Row(name)
    options = dict(kwargs)
    choice = backend_choice(problem, *(options.pop(k, None) for k in ("solver", "compile", "hessian", "chart")))
    solver = solver_class(choice["solver"])(problem, compile=choice["compile"], hessian=choice["hessian"], chart=choice["chart"], **options)

    def record(solution: Any) -> None:
        row.iterations.append(int(solution.iterations))
        row.objectives.append(float(solution.objective))
        row.statuses.append(solution.status)
        row.successes.append(bool(solution.success))

    start = time.perf_counter()
    record(solver.solve())
    row.time = time.perf_counter() - start
    for seed in range(1, perturbations + 1):
        with perturbed_guess(problem, seed):
            record(solver.solve())
    if blas:
        with casadi_blas_threads(2):
            record(solver.solve())
    return row


HEADER = f"{'case':24s} {'it min':>6s} {'median':>6s} {'max':>5s} {'max/min':>7s} {'time s':>7s} {'objective':>13s} {'dJ rel':>8s}  status"


def format_row(r: Row, max_iter: int, max_ratio: float) -> str:
    """One line of the table (module docstring)."""
    if r.error:
        return f"{r.name:24s} ERROR {r.error}"
    statuses = "ok" if all(r.successes) else ",".join(sorted(set(s for s, ok in zip(r.statuses, r.successes) if not ok)))
    verdict = "" if r.passes(max_iter, max_ratio) else "  FAIL"
    return (
        f"{r.name:24s} {min(r.iterations):6d} {statistics.median(r.iterations):6.0f} {max(r.iterations):5d} {r.ratio:7.2f} "
        f"{r.time:7.2f} {r.objectives[0]:13.6g} {r.spread:8.1e}  {statuses}{verdict}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--cases", help="comma-separated case names (default: all)")
    parser.add_argument("--perturbations", type=int, default=5)
    parser.add_argument("--max-iter", type=int, default=50)
    parser.add_argument("--max-ratio", type=float, default=1.5)
    args = parser.parse_args()
    builders = cases()
    names = args.cases.split(",") if args.cases else list(builders)
    print(HEADER, flush=True)
    for name in names:
        try:
            problem, kwargs = builders[name]()
            row = measure(name, problem, kwargs, args.perturbations)
        except Exception as err:  # noqa: BLE001 - the row says what failed, the others still run
            row = Row(name, error=f"{type(err).__name__}: {err}")
        print(format_row(row, args.max_iter, args.max_ratio), flush=True)


if __name__ == "__main__":
    main()
