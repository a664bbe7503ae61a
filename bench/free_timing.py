"""What free phase durations buy the jumps: objective, iterations and time against the fixed schedule, checked in MuJoCo.

For each problem (``go1-jump``, ``go1-gap`` by default) this script solves the
registered problem with its fixed schedule and with ``timing="free"`` (each
phase's duration a decision, their total fixed) and ``"free-total"`` (the
total free too), alternately, ``--repeat`` times each from the default guess
(median times), and runs ``trajopt verify``'s MuJoCo check on each solution.
It prints, per problem and timing, the objective, the iterations, the solve
time and its ratio to the fixed schedule's in the same run, the phase
durations and the verdict; ``--json FILE`` writes them with the machine and
load (``bench/benchmarks_page.py`` renders that file).

    python bench/free_timing.py [--problems go1-jump,go1-gap] [--repeat 3] [--json FILE]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import problems  # noqa: E402
from bench.run_info import run_info, write_result  # noqa: E402
from trajopt import solve  # noqa: E402
from trajopt.legged.timing import TIMINGS  # noqa: E402
from trajopt.mujoco.verify import verify  # noqa: E402

PROBLEMS = ("go1-jump", "go1-gap")


def measure(name: str, repeat: int) -> List[Dict[str, Any]]:
    """One row per timing of problem ``name``: solves alternated over the timings, ``repeat`` rounds."""
    runs: Dict[str, List[Any]] = {timing: [] for timing in TIMINGS}
    for _ in range(repeat):
        for timing in TIMINGS:
            problem = problems.get(name, timing=timing)
            start = time.perf_counter()
            solution = solve(problem)
            runs[timing].append((time.perf_counter() - start, solution))
    rows = []
    fixed_time = statistics.median(t for t, _ in runs["fixed"])
    for timing, samples in runs.items():
        solution = samples[-1][1]
        report = verify(solution)
        phases = solution.problem.schedule
        durations = solution.problem.timing.of_times(solution.times) if solution.problem.timing is not None else None
        rows.append({
            "problem": name, "timing": timing, "status": solution.status, "success": bool(solution.success),
            "objective": float(solution.objective), "iterations": [int(s.iterations) for _, s in samples],
            "time": [t for t, _ in samples], "time_ratio": statistics.median(t for t, _ in samples) / fixed_time,
            "tf": float(solution.tf), "durations": None if durations is None else [float(d) for d in durations],
            "phases": None if durations is None else list(solution.problem.timing.phase_names), "dt": float(phases.dt),
            "verdict": report.verdict(),
        })  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", default=",".join(PROBLEMS), help="comma-separated problem names (legged problems)")
    parser.add_argument("--repeat", type=int, default=3, help="solves per problem and timing (median times)")
    parser.add_argument("--json", metavar="FILE", help="also write the rows, with the run's machine and versions, to FILE")
    args = parser.parse_args()
    info = run_info()
    rows = []
    print(f"{'problem':10s} {'timing':10s} {'objective':>10s} {'iterations':>10s} {'time s':>7s} {'/ fixed':>7s} {'tf s':>5s}  durations (s)  verdict")
    for name in args.problems.split(","):
        for row in measure(name, args.repeat):
            rows.append(row)
            durations = "scheduled" if row["durations"] is None else ", ".join(f"{d:.3f}" for d in row["durations"])
            print(
                f"{row['problem']:10s} {row['timing']:10s} {row['objective']:10.5g} {max(row['iterations']):10d} {statistics.median(row['time']):7.2f} "
                f"{row['time_ratio']:7.2f} {row['tf']:5.3f}  {durations}  {row['verdict']}",
                flush=True,
            )
    if args.json:
        write_result(args.json, "free_timing", info, {"repeat": args.repeat}, rows=rows)


if __name__ == "__main__":
    main()
