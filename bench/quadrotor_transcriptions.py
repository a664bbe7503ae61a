"""Quadrotor point-to-point (problems "quadrotor": N = 51, tf = 5 s) with each transcription.

Prints, per transcription and derivative mode, the build time (NLP + derivative
functions + ``nlpsol``), the IPOPT solve time split into NLP function
evaluations and IPOPT's own work (from ``solver.stats()``), the iteration count
and the decision-vector size. Times are medians over ``--repeat`` solves of one
built solver (the machine is shared and noisy: compare rows of one run only).

    python bench/quadrotor_transcriptions.py [--repeat 5] [--modes stagewise casadi-sx casadi-mx]
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import problems  # noqa: E402
from trajopt import IpoptSolver  # noqa: E402

TRANSCRIPTIONS = ("trapezoidal", "hermite_simpson", "multiple_shooting")
MODES = {"stagewise": dict(derivatives="stagewise"), "casadi-sx": dict(derivatives="casadi", expand=True), "casadi-mx": dict(derivatives="casadi", expand=False)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="solves per row (median reported)")
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES))
    args = parser.parse_args(argv)
    print(f"{'transcription':18s} {'derivatives':11s} {'n_w':>5s} {'build ms':>9s} {'solve ms':>9s} {'eval ms':>8s} {'ipopt ms':>9s} {'iter':>5s}  status")
    for transcription in TRANSCRIPTIONS:
        for mode in args.modes:
            solver = IpoptSolver(problems.get("quadrotor"), transcription, **MODES[mode])
            runs = [solver.solve() for _ in range(args.repeat)]
            med = lambda key: 1e3 * statistics.median(getattr(r, key) for r in runs)  # noqa: E731
            last = runs[-1]
            print(
                f"{transcription:18s} {mode:11s} {solver.nlp.n_w:5d} {1e3 * solver.build_time:9.1f} {med('solve_time'):9.1f} "
                f"{med('eval_time'):8.1f} {med('solver_time'):9.1f} {last.iterations:5d}  {last.status}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
