"""Gaits found without a schedule: ``go1-discover`` at each speed, from its guess and from perturbed guesses, checked in MuJoCo.

For each case (``--cases``, ``SPEED:PERIOD`` in m/s and s) this script solves the
registered problem ``go1-discover`` (``-p speed=V -p period=T``: one cycle,
footfalls chosen by complementarity from the all-stance guess,
:mod:`trajopt.legged.contact_implicit`)
from its default guess and from ``--seeds`` guesses perturbed at each of
``--scales`` (1e-9 and 1e-7: ``bench/convergence.py``'s ``perturbed_guess``
and scales, each entry moved by a seeded relative Gaussian, the round-off
another machine brings), and runs ``trajopt verify``'s MuJoCo check on
each plan. It prints per run the iterations, the solve time, the objective,
the gait found and its knots with no foot down, the complementarity reached
before the footfalls were held, the verdict and the footfall diagram; per
case the spread (distinct gaits, objectives, max/min iterations).
``--json FILE`` writes them with the machine and load
(``bench/benchmarks_page.py`` renders that file).

    python bench/discover.py [--cases 0.5:0.6,1.0:0.4,1.5:0.4] [--seeds 3] [--scales 1e-9,1e-7] [--json FILE]
"""
from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import problems  # noqa: E402
from bench.convergence import SCALES, perturbed_guess  # noqa: E402
from bench.run_info import run_info, write_result  # noqa: E402
from trajopt import solve  # noqa: E402
from trajopt.mujoco.verify import verify  # noqa: E402
from trajopt.report import gait_text  # noqa: E402


def discover(speed: float, period: float, seed: int | None, scale: float = 0.0) -> Dict[str, Any]:
    """One discovery at ``speed`` over ``period`` from the default guess (``seed`` None) or from a guess perturbed with ``seed`` at ``scale``."""
    problem = problems.get("go1-discover", speed=speed, period=period)
    with perturbed_guess(problem, seed, scale) if seed is not None else contextlib.nullcontext():
        start = time.perf_counter()
        solution = solve(problem)
        wall = time.perf_counter() - start
    schedule = problem.solution_schedule(solution)
    name, agreement = problem.gait(solution)
    found = next((stage["reached"] for stage in solution.homotopy if "reached" in stage), float("nan"))
    return {
        "speed": speed, "period": period, "seed": seed, "scale": scale if seed is not None else 0.0, "status": solution.status, "success": bool(solution.success), "iterations": int(solution.iterations),
        "stage_iterations": [int(stage["iterations"]) for stage in solution.homotopy], "solve_time": float(solution.solve_time), "wall": wall,
        "objective": float(solution.objective), "gait": name, "agreement": agreement, "flight_knots": int((~schedule.stance.any(axis=1)).sum()),
        "complementarity": float(found), "verdict": verify(solution).verdict() if solution.success else "not verified (the solve failed)",
        "footfalls": gait_text(schedule.stance, schedule.foot_names),
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--cases", default="0.5:0.6,1.0:0.4,1.5:0.4", help="SPEED:PERIOD pairs (m/s, s)")
    parser.add_argument("--seeds", type=int, default=3, help="perturbed guesses per speed and scale, besides the default guess")
    parser.add_argument("--scales", default=",".join(f"{s:g}" for s in SCALES), help="relative perturbation sizes (default 1e-9,1e-7)")
    parser.add_argument("--json", metavar="FILE", help="also write the runs, with the run's machine and versions, to FILE")
    args = parser.parse_args()
    scales = [float(s) for s in args.scales.split(",")]
    info = run_info()
    rows: List[Dict[str, Any]] = []
    for case in args.cases.split(","):
        speed, period = (float(v) for v in case.split(":"))
        print(f"\n## go1-discover -p speed={speed:g} -p period={period:g}")
        runs = [discover(speed, period, None)] + [discover(speed, period, seed, scale) for scale in scales for seed in range(1, args.seeds + 1)]
        for r in runs:
            label = "default guess" if r["seed"] is None else f"{r['scale']:g}, seed {r['seed']}"
            print(f"{label:14s} {r['status']}: {r['iterations']} iterations {r['stage_iterations']}, {r['solve_time']:.1f} s, J {r['objective']:.5f}, "
                  f"{r['gait']} ({100 * r['agreement']:.0f} %), {r['flight_knots']} knots with no foot down, complementarity {r['complementarity']:.1e}; {r['verdict']}")  # fmt: skip
            print("\n".join("    " + line for line in r["footfalls"]), flush=True)
        iterations = [r["iterations"] for r in runs]
        objectives = [r["objective"] for r in runs]
        print(f"spread: gaits {sorted({r['gait'] for r in runs})}, objective {min(objectives):.5f}-{max(objectives):.5f}, "
              f"iterations {min(iterations)}-{max(iterations)} (max/min {max(iterations) / min(iterations):.2f})")  # fmt: skip
        rows += runs
    if args.json:
        write_result(args.json, "discover", info, {"cases": args.cases, "seeds": args.seeds, "scales": scales}, rows=rows)


if __name__ == "__main__":
    main()
