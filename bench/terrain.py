"""Solve time and iterations of the terrain gaits against the same gait on flat ground, in one run.

For each terrain problem (default: go1-slope, go1-stairs, go1-stones,
go1-gap) this script builds the registered problem and its flat peer: a
:class:`trajopt.legged.LeggedProblem` with the same robot, contact schedule
(so the same number of knots and duration), displacement, swing apex,
formulation, friction model, weights and solver options, on the flat ground
at ``z = 0`` (a trot of the same length for the walking problems, the same
jump for go1-gap, ending at rest as it does; the shanks' clearance has no
flat counterpart). Both are solved with :func:`trajopt.solve` from their
default guesses, alternately, ``--repeat`` times; the table gives the
median wall time of build and solve (s), the iterations, the final status
and the ratio of solve times terrain / flat. Times depend on the machine
and its load; compare the rows of one run only.

``--json FILE`` also writes the rows with the run's machine and versions
(``bench/benchmarks_page.py`` renders them).

    python bench/terrain.py [--problems go1-slope,go1-gap] [--repeat 3] [--json FILE]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, List

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import problems
from trajopt import solve
from bench.run_info import run_info, write_result  # noqa: E402
from trajopt.legged import LeggedProblem

TERRAIN_PROBLEMS = ("go1-slope", "go1-stairs", "go1-stones", "go1-gap")


def flat_peer(problem: LeggedProblem) -> LeggedProblem:
    """The same gait as ``problem`` on flat ground (module docstring)."""
    peer = LeggedProblem(
        problem.robot, problem.schedule, displacement=problem.displacement, swing_apex=problem.swing_apex, formulation=problem.formulation,
        friction=problem.friction, weights=problem.weights, end_at_rest=problem.end_at_rest, name=f"flat {problem.name}",
    )  # fmt: skip
    peer.solver_options = problem.solver_options
    return peer


@dataclass
class Runs:
    """Build and solve times (s), iterations and statuses of one problem over the repeats."""

    build: List[float] = field(default_factory=list)
    solve: List[float] = field(default_factory=list)
    iterations: List[int] = field(default_factory=list)
    statuses: List[str] = field(default_factory=list)

    def run(self, make: Callable[[], Any]) -> None:
        start = time.perf_counter()
        problem = make()
        self.build.append(time.perf_counter() - start)
        start = time.perf_counter()
        solution = solve(problem, print_level=0)
        self.solve.append(time.perf_counter() - start)
        self.iterations.append(int(solution.iterations))
        self.statuses.append("ok" if solution.success else solution.status)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", default=",".join(TERRAIN_PROBLEMS), help="comma-separated registered terrain problems")
    parser.add_argument("--repeat", type=int, default=1, help="solves of each problem (medians reported)")
    parser.add_argument("--json", metavar="FILE", help="also write the rows, with the run's machine and versions, to FILE")
    args = parser.parse_args()
    info, rows = run_info(), []
    print(f"{'problem':12s} {'N':>4s} {'tf s':>5s} | {'build s':>7s} {'solve s':>7s} {'iter':>4s} {'status':6s} | {'flat build':>10s} {'solve s':>7s} {'iter':>4s} {'status':6s} | {'time ratio':>10s}")
    for name in args.problems.split(","):
        terrain, flat = Runs(), Runs()
        reference = problems.get(name)
        for _ in range(args.repeat):
            terrain.run(lambda: problems.get(name))
            flat.run(lambda: flat_peer(reference))
        med = statistics.median
        print(
            f"{name:12s} {reference.N:4d} {reference.tf_guess:5.2f} | {med(terrain.build):7.2f} {med(terrain.solve):7.2f} {max(terrain.iterations):4d} {','.join(sorted(set(terrain.statuses))):6s} | "
            f"{med(flat.build):10.2f} {med(flat.solve):7.2f} {max(flat.iterations):4d} {','.join(sorted(set(flat.statuses))):6s} | {med(terrain.solve) / med(flat.solve):10.2f}",
            flush=True,
        )
        rows.append({"problem": name, "knots": reference.N, "duration": reference.tf_guess, "terrain": asdict(terrain), "flat": asdict(flat)})
    if args.json:
        write_result(args.json, "terrain", info, {"repeat": args.repeat}, rows=rows)


if __name__ == "__main__":
    main()
