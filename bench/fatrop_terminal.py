"""Which form of a terminal condition does fatrop 1.1.8 solve? A reproducer of its hang, run under the watchdog.

The quadrotor point-to-point problem (N = 51, tf = 5 s, hover to hover 5 m
away, quaternion attitude) with tangent-chart knots, multiple shooting with
costs at the knots, Gauss-Newton or exact Hessian, and the goal stated as

- ``rows k``: the first ``k`` of the 12 tangent components of
  ``state_error(x_N, x_goal)`` as equality rows on the final stage
  (``GoalConstraint(components=range(k))``; 3 = position, 6 = + attitude,
  9 = + linear velocity, 12 = the full state);
- ``cost``: no goal row, a terminal cost ``1/2 1e3 |state_error(x_N, x_goal)|^2``.

Each solve runs in a forked child killed after ``--wall`` seconds
(:mod:`trajopt.solvers.watchdog`): fatrop's inertia correction multiplies its primal
regularization without bound while its factorization reports a wrong
inertia, and that loop never returns. IPOPT solves every form (reference
objective printed). Measured: rows 3, 6 and 9 and the cost converge in 6-10
iterations; rows 11 and 12 never return.

    python bench/fatrop_terminal.py [--wall 20] [--hessian gauss-newton]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from models import Quadrotor  # noqa: E402
from problems.quadrotor import hover_state  # noqa: E402
from trajopt import FatropSolver, GoalConstraint, IpoptSolver, Problem, QuadraticCost, QuadraticTerminalCost  # noqa: E402


def quadrotor(form: str) -> Problem:
    """The problem with its goal in ``form`` ("rows K" or "cost")."""
    model = Quadrotor(u_max=4.0)
    x0, xf = hover_state(model, [0, 0, 0]), hover_state(model, [5, 0, 1])
    problem = Problem(model, N=51, tf=5.0, x0=x0, name="quadrotor")
    problem.add_cost(QuadraticCost(model, np.full(12, 1e-2), np.full(4, 1e-1), x_ref=xf, u_ref=model.hover_control()))
    if form == "cost":
        problem.add_cost(QuadraticTerminalCost(model, np.full(12, 1e3), xf))
    else:
        problem.add_constraint(GoalConstraint(model, xf, components=range(int(form.split()[1]))))
    problem.set_initial_guess(controls=model.hover_control())
    return problem


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wall", type=float, default=20.0, help="seconds before a fatrop solve is killed")
    parser.add_argument("--hessian", default="gauss-newton", choices=("gauss-newton", "exact"))
    args = parser.parse_args()
    print(f"{'goal':8s} {'fatrop status':40s} {'it':>4s} {'wall s':>7s} {'J fatrop':>10s} {'J ipopt':>10s}")
    for form in ("rows 3", "rows 6", "rows 9", "rows 11", "rows 12", "cost"):
        problem = quadrotor(form)
        kwargs = {"hessian": args.hessian, "chart": True}
        ipopt = IpoptSolver(problem, transcription="multiple_shooting_knot_cost", **kwargs).solve()
        start = time.perf_counter()
        sol = FatropSolver(problem, transcription="multiple_shooting_knot_cost", max_wall_time=args.wall, **kwargs).solve()
        print(f"{form:8s} {sol.status:40s} {sol.iterations:4d} {time.perf_counter() - start:7.2f} {sol.objective:10.6f} {ipopt.objective:10.6f}", flush=True)


if __name__ == "__main__":
    main()
