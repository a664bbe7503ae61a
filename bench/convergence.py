"""Does every solve converge from its default guess, and does its iteration count survive round-off?

An interior-point solve whose iteration count jumps when its starting point
moves by 1e-9 depends on round-off: another CPU (other BLAS kernels, other
SIMD paths in numpy and libm) takes another path, and a problem that needs 30
iterations here may need 70 there. For each case (:func:`cases`: every
registered problem, the README's code block, the examples' problems) this
script builds the default solver once (the backend, transcription and options
:func:`trajopt.solve` would choose) and solves

- ``base``: from the default guess;
- ``1e-9``, ``1e-7``: from ``--seeds`` copies of that guess, each entry moved
  by that relative amount (``x (1 + s r)``, ``r`` standard normal, plus ``s r'``
  where ``x`` is 0; quaternions re-normalized);
- ``blas``: from the default guess with CasADi's OpenBLAS (the BLAS MUMPS
  calls) on 2, 3 and 4 threads instead of one (other summation orders);
- ``fresh``: once in a new process, the way a user runs it: ``trajopt solve
  NAME`` for a registered problem, the case's own builder and
  :func:`trajopt.solve` otherwise (``--no-fresh`` skips it).

A case passes when every solve succeeded, the most iterations are at most
``--max-iter`` (50) and the most are at most ``--max-ratio`` (1.5) times the
fewest. The table gives each case's iterations (fewest, median, most and their
ratio), the base solve's iterations, time and objective, the most iterations
of each group of solves, the objectives' largest relative spread and the
statuses. ``--json FILE`` also writes every solve with the machine, load and
versions it ran on; ``bench/benchmarks_page.py`` renders that file into the
documentation's benchmarks page, where the README's iteration counts come from.
The slow test ``tests/test_convergence.py`` asserts the bounds on the flagships.

    python bench/convergence.py [--cases go1-trot,go1-jump | --flagships] [--seeds 20] [--json FILE]
"""
from __future__ import annotations

import argparse
import contextlib
import ctypes
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import problems  # noqa: E402
from bench.run_info import run_info, write_result  # noqa: E402
from trajopt import Problem, Solution  # noqa: E402
from trajopt.manifold import normalize_quaternions  # noqa: E402
from trajopt.solvers import build_solver  # noqa: E402
from trajopt.solvers.blas import loaded_casadi_blas  # noqa: E402

#: Relative sizes of the perturbations of the guess.
SCALES = (1e-9, 1e-7)
#: CasADi OpenBLAS thread counts tried besides the backends' one.
BLAS_THREADS = (2, 3, 4)
#: The cases a release is judged on: every registered gait, jump and terrain problem on the Go1 and
#: Go2, the jumps with free phase durations, the humanoids' (the G1's and Talos's walk), the quadrotor problems, the README's block
#: and the examples' problems (the templates ``trot``, ``jump``, ... are these same problems on the Go1).
FLAGSHIPS = (
    "go1-trot", "go1-pace", "go1-bound", "go1-stand", "go1-jump", "go2-trot", "go1-trot-kinodynamic",
    "humanoid-shift", "humanoid-stand", "humanoid-walk", "humanoid-walk-talos",
    "go1-slope", "go1-stairs", "go1-stones", "go1-gap", "go1-jump-free-timing", "go1-gap-free-timing",
    "quadrotor", "quadrotor-flip", "quadrotor-track", "rigid-body-slew",
    "readme-quadrotor", "example-satellite", "example-thrust-body",
)  # fmt: skip
#: Bounds a passing case keeps.
MAX_ITER, MAX_RATIO = 50, 1.5


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
    for name in ("go1-jump", "go1-gap"):  # the jumps with free phase durations (-p timing=free)
        found[f"{name}-free-timing"] = lambda name=name: (problems.get(name, timing="free"), {})
    found["humanoid-walk-talos"] = lambda: (problems.get("humanoid-walk", robot="talos"), {})  # the second humanoid
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
def perturbed_guess(problem: Problem, seed: int, scale: float) -> Iterator[None]:
    """The problem's initial guess moved by a relative ``scale`` inside the block (restored after)."""
    states, controls = problem.initial_guess()
    saved = (problem._guess_states, problem._guess_controls)
    rng = np.random.default_rng(seed)

    def moved(a: np.ndarray) -> np.ndarray:
        return a * (1.0 + scale * rng.standard_normal(a.shape)) + np.where(a == 0.0, scale * rng.standard_normal(a.shape), 0.0)

    problem.set_initial_guess(normalize_quaternions(problem.model, moved(states)), moved(controls))
    try:
        yield
    finally:
        problem._guess_states, problem._guess_controls = saved


@dataclass
class Sample:
    """One solve: which group it belongs to (``base``, ``1e-09``, ``blas``, ``fresh``) and its outcome."""

    group: str
    label: str
    iterations: int
    objective: float
    status: str
    success: bool
    time: float


@dataclass
class Row:
    """The solves of one case."""

    name: str
    samples: List[Sample] = field(default_factory=list)
    error: Optional[str] = None

    @property
    def iterations(self) -> List[int]:
        return [s.iterations for s in self.samples]

    @property
    def base(self) -> Sample:
        return self.samples[0]

    @property
    def ratio(self) -> float:
        return max(self.iterations) / max(min(self.iterations), 1)

    @property
    def spread(self) -> float:
        """Largest relative difference of the objectives from the base solve's."""
        J = np.array([s.objective for s in self.samples])
        return float(np.max(np.abs(J - J[0])) / max(abs(J[0]), 1e-12))

    def group_max(self, group: str) -> Optional[int]:
        """The most iterations among the solves of ``group`` (``None`` when it has none)."""
        its = [s.iterations for s in self.samples if s.group == group]
        return max(its) if its else None

    def passes(self, max_iter: int = MAX_ITER, max_ratio: float = MAX_RATIO) -> bool:
        return self.error is None and all(s.success for s in self.samples) and max(self.iterations) <= max_iter and self.ratio <= max_ratio


def fresh_solve(name: str, registered: bool) -> Sample:
    """The case solved once in a new process: ``trajopt solve NAME --save FILE`` for a registered
    problem, else this script's ``--fresh-case`` (the case's builder, then :func:`trajopt.solve`)."""
    with tempfile.TemporaryDirectory() as folder:
        saved = Path(folder) / "solution.npz"
        if registered:
            command = [sys.executable, "-m", "trajopt.cli", "solve", name, "-q", "--save", str(saved)]
        else:
            command = [sys.executable, str(Path(__file__).resolve()), "--fresh-case", name, str(saved)]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
        elapsed = time.perf_counter() - start
        if not saved.exists():
            raise RuntimeError(f"{' '.join(command[1:])} exited with {done.returncode} and saved nothing: {done.stderr.strip()[-300:]}")
        solution = Solution.load(saved)
    return Sample("fresh", "new process", int(solution.iterations), float(solution.objective), solution.status, bool(solution.success), elapsed)


def measure(name: str, problem: Problem, kwargs: Dict[str, Any], seeds: int = 20, scales: Sequence[float] = SCALES, blas_threads: Sequence[int] = BLAS_THREADS, fresh: bool = True) -> Row:
    """Solve ``problem`` as :func:`trajopt.solve` would with ``kwargs``: the groups of the module docstring."""
    row = Row(name)
    solver = build_solver(problem, **kwargs)

    def record(group: str, label: str) -> None:
        start = time.perf_counter()
        solution = solver.solve() if problem.homotopy is None else problem.homotopy.solve(solver)  # its stages, as trajopt.solve runs them
        row.samples.append(Sample(group, label, int(solution.iterations), float(solution.objective), solution.status, bool(solution.success), time.perf_counter() - start))

    record("base", "default guess")
    for scale in scales:
        for seed in range(1, seeds + 1):
            with perturbed_guess(problem, seed, scale):
                record(f"{scale:g}", f"seed {seed}")
    for n in blas_threads:
        with casadi_blas_threads(n):
            record("blas", f"{n} threads")
    if fresh:
        row.samples.append(fresh_solve(name, name in problems.names()))
    return row


def header(scales: Sequence[float]) -> str:
    groups = "".join(f" {f'{s:g}':>6s}" for s in scales)
    return f"{'case':22s} {'it min':>6s} {'median':>6s} {'max':>5s} {'max/min':>7s} {'base':>5s}{groups} {'blas':>5s} {'fresh':>5s} {'time s':>7s} {'objective':>13s} {'dJ rel':>8s}  status"


def format_row(r: Row, scales: Sequence[float] = SCALES, max_iter: int = MAX_ITER, max_ratio: float = MAX_RATIO) -> str:
    """One line of the table (module docstring)."""
    if r.error:
        return f"{r.name:22s} ERROR {r.error}"
    failed = sorted({s.status for s in r.samples if not s.success})
    verdict = "" if r.passes(max_iter, max_ratio) else "  FAIL"

    def cell(group: str) -> str:
        most = r.group_max(group)
        return f" {'-' if most is None else most:>5}"

    groups = "".join(f" {cell(f'{s:g}'):>6s}" for s in scales)
    return (
        f"{r.name:22s} {min(r.iterations):6d} {statistics.median(r.iterations):6.0f} {max(r.iterations):5d} {r.ratio:7.2f} {r.base.iterations:5d}{groups}"
        f"{cell('blas')}{cell('fresh')} {r.base.time:7.2f} {r.base.objective:13.6g} {r.spread:8.1e}  {','.join(failed) or 'ok'}{verdict}"
    )


def solve_fresh_case(name: str, path: str) -> None:
    """``--fresh-case NAME FILE``: build the case, solve it once with :func:`trajopt.solve` and save the solution to ``FILE``."""
    from trajopt import solve

    problem, kwargs = cases()[name]()
    solve(problem, **kwargs).save(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument("--cases", help="comma-separated case names (default: every case)")
    chosen.add_argument("--flagships", action="store_true", help=f"the flagship cases ({len(FLAGSHIPS)})")
    parser.add_argument("--seeds", type=int, default=20, help="perturbed guesses per scale (default 20)")
    parser.add_argument("--scales", default=",".join(f"{s:g}" for s in SCALES), help="relative perturbation sizes (default 1e-9,1e-7)")
    parser.add_argument("--no-fresh", action="store_true", help="skip the solve in a new process")
    parser.add_argument("--max-iter", type=int, default=MAX_ITER)
    parser.add_argument("--max-ratio", type=float, default=MAX_RATIO)
    parser.add_argument("--json", metavar="FILE", help="also write every solve, with the run's machine and versions, to FILE")
    parser.add_argument("--fresh-case", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.fresh_case:
        solve_fresh_case(*args.fresh_case)
        return
    builders = cases()
    names = list(FLAGSHIPS) if args.flagships else args.cases.split(",") if args.cases else list(builders)
    unknown = [n for n in names if n not in builders]
    if unknown:
        parser.error(f"--cases: unknown {', '.join(unknown)}; known: {', '.join(builders)}")
    scales = [float(s) for s in args.scales.split(",")]
    info = run_info()
    rows: List[Row] = []
    print(header(scales), flush=True)
    for name in names:
        try:
            problem, kwargs = builders[name]()
            row = measure(name, problem, kwargs, args.seeds, scales, fresh=not args.no_fresh)
        except Exception as err:  # noqa: BLE001 - the row says what failed, the others still run
            row = Row(name, error=f"{type(err).__name__}: {err}")
        rows.append(row)
        print(format_row(row, scales, args.max_iter, args.max_ratio), flush=True)
    if args.json:
        write_result(
            args.json, "convergence", info,
            {"seeds": args.seeds, "scales": scales, "blas_threads": list(BLAS_THREADS), "fresh": not args.no_fresh, "max_iter": args.max_iter, "max_ratio": args.max_ratio},
            rows=[{"name": r.name, "error": r.error, "passes": r.passes(args.max_iter, args.max_ratio), "samples": [asdict(s) for s in r.samples]} for r in rows],
        )  # fmt: skip


if __name__ == "__main__":
    main()
