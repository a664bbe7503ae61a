"""Every registered legged problem on every solve path: which one should be the default?

Paths (each built once per problem, compiled stage functions, warm cache; the
first build's gcc time is printed separately with ``--cold``):

- ``inverse/ipopt``: the inverse-dynamics formulation, trapezoidal collocation,
  IPOPT with the exact Hessian (the problems' previous default);
- ``contact/fatrop``: the contact formulation (torques only, KKT contact
  dynamics, RK3 shooting), fatrop on tangent-chart knots, Gauss-Newton Hessian
  (:data:`trajopt.legged.ocp.CONTACT_SOLVE`);
- ``contact/ipopt``, ``contact/sqp``: the same NLP with IPOPT, and with
  ``sqpmethod`` + HPIPM.

Columns: status, iterations, time to converge (median of ``--repeat`` solves
of the built solver; ``eval`` the part in function evaluations), the largest
constraint violation, the replay drift (:func:`trajopt.legged.replay.replay`:
base position / orientation), and the worst friction-pyramid and torque-limit
violations computed here from the returned forces and torques (N, Nm; 0 when
held). The machine is shared and noisy: compare rows of one run.

    python bench/legged_paths.py [--problems go1-trot,go1-jump] [--paths contact/fatrop,inverse/ipopt] [--repeat 3]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Dict

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import problems  # noqa: E402
from trajopt.legged.replay import replay  # noqa: E402
from trajopt.solvers import solver_class  # noqa: E402

PROBLEMS = ("go1-trot", "go1-pace", "go1-bound", "go1-jump", "go2-trot", "humanoid-shift")
PATHS: Dict[str, dict] = {
    "inverse/ipopt": {"formulation": "inverse", "solver": "ipopt", "hessian": "exact", "chart": False},
    "contact/fatrop": {"formulation": "contact", "solver": "fatrop", "hessian": "gauss-newton", "chart": True},
    "contact/ipopt": {"formulation": "contact", "solver": "ipopt", "hessian": "gauss-newton", "chart": True},
    "contact/sqp": {"formulation": "contact", "solver": "sqp", "hessian": "gauss-newton", "chart": True},
}


def violations(problem, solution) -> tuple:
    """Worst friction-pyramid violation (N) and torque-limit violation (Nm) of the returned plan."""
    K = problem.N - (1 if problem.formulation == "contact" else 0)  # the contact formulation's last knot has no control of its own
    forces = problem.contact_forces(solution.states[:K], solution.controls[:K], knots=np.arange(K))
    stance = problem.schedule.stance[:K]
    f = forces[stance]
    friction = np.maximum(np.abs(f[:, :2]).max(axis=1) - problem.robot.mu * f[:, 2], 0.0).max(initial=0.0)
    torques = problem.joint_torques(solution.controls)
    torque = np.maximum(np.abs(torques) - problem.robot.torque_limits(), 0.0).max(initial=0.0)
    return friction, torque


def run(name: str, path: str, repeat: int) -> str:
    config = PATHS[path]
    params = {} if config["formulation"] == "inverse" else {"formulation": config["formulation"]}
    try:
        problem = problems.get(name, **params)
    except (TypeError, ValueError) as err:
        return f"{name:15s} {path:15s} not available: {err}"
    start = time.perf_counter()
    solver = solver_class(config["solver"])(problem, compile=True, hessian=config["hessian"], chart=config["chart"])
    build = time.perf_counter() - start
    solutions = [solver.solve() for _ in range(repeat)]
    sol = solutions[-1]
    try:
        drift = replay(problem, sol)
        drift_text = f"{1e3 * drift.base_position_drift.max():7.1f} {np.degrees(drift.base_orientation_drift.max()):6.2f}"
    except np.linalg.LinAlgError:  # the replay's KKT matrix is singular for contacts sharing a body (the humanoid's sole corners)
        drift_text = f"{'n/a':>7s} {'n/a':>6s}"
    friction, torque = violations(problem, sol)
    solve_s = statistics.median(s.solve_time for s in solutions)
    eval_s = statistics.median(s.eval_time for s in solutions)
    return (
        f"{name:15s} {path:15s} {sol.status:22s} {sol.iterations:4d} {solve_s:8.3f} {eval_s:7.3f} {build:7.2f} {sol.max_violation:8.1e} "
        f"{drift_text} {friction:8.1e} {torque:8.1e}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", default=",".join(PROBLEMS))
    parser.add_argument("--paths", default=",".join(PATHS))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'problem':15s} {'path':15s} {'status':22s} {'iter':>4s} {'solve s':>8s} {'eval s':>7s} {'build s':>7s} {'viol':>8s} {'drift mm':>7s} {'deg':>6s} {'fric N':>8s} {'tau Nm':>8s}")
    for name in args.problems.split(","):
        for path in args.paths.split(","):
            print(run(name, path, args.repeat), flush=True)


if __name__ == "__main__":
    main()
