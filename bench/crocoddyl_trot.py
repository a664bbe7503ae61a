"""crocoddyl's Go1 trot, timed: the peer of ``bench/go1_trot.py`` (runs INSIDE bench/.venv-crocoddyl).

This script imports only numpy, pinocchio 3 and crocoddyl: it runs with the
benchmark-only environment's python (``bash bench/crocoddyl_env.sh`` prints
it), never in the project's environment. ``bench/go1_trot.py`` starts it as a
subprocess and reads the JSON it prints on its last line.

Problem: ``crocoddyl.utils.quadruped.SimpleQuadrupedalGaitProblem`` (an
example helper of crocoddyl, not its stable API), ``createTrottingProblem``
with step length 0.15 m, step height 0.08 m, dt 0.02 s, 13 step knots and 2
support knots: one cycle of 30 contact-dynamics intervals plus a touchdown
impulse model after each swing (32 action models). Its constraints are soft
(friction cones and foot tracking are penalties) except the contact dynamics.

- Robot: the Go1 URDF given with ``--urdf`` (``go1_trot.py`` passes OUR
  environment's example-robot-data file, so both sides load the same robot);
  without it, this environment's own example-robot-data Go1 URDF. Free-flyer
  root, built with ``pinocchio.buildModelFromUrdf``.
- Standing configuration ``q0`` (the helper's "standing" reference and the
  initial state, at rest): ``--q0`` as a JSON list in OUR convention
  ``[x, y, z, qw, qx, qy, qz, 12 joints in pinocchio's order]`` (the
  quaternion is moved to pinocchio's ``[qx, qy, qz, qw]`` here).
- Solvers: FDDP (unconstrained controls) and BoxFDDP (controls boxed by the
  URDF effort limits, which crocoddyl's contact dynamics take from the model),
  both started like crocoddyl's examples: ``xs = [x0] * (T + 1)``,
  ``us = problem.quasiStatic(...)``, at most ``--max-iter`` iterations.

Timing: problem construction (helper + shooting problem + solver) is reported
separately from ``solve``; each solve restarts from the same initial guess and
the median of ``--repeat`` solves is reported.

    python bench/crocoddyl_trot.py --urdf PATH --q0 '[0, 0, 0.27, 1, 0, ...]' [--repeat 7]
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

import crocoddyl
import numpy as np
import pinocchio as pin
from crocoddyl.utils.quadruped import SimpleQuadrupedalGaitProblem

FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")  # the helper's lf, rf, lh, rh feet
GAIT = {"stepLength": 0.15, "stepHeight": 0.08, "timeStep": 0.02, "stepKnots": 13, "supportKnots": 2}
SOLVERS = {"fddp": crocoddyl.SolverFDDP, "boxfddp": crocoddyl.SolverBoxFDDP}


def peak_rss_mb() -> float:
    """Peak resident memory of this process (MB): ``VmHWM`` (``ru_maxrss`` would inherit the parent's through exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return float(line.split()[1]) / 1024.0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def own_urdf() -> Path:
    """This environment's example-robot-data Go1 URDF (under the cmeel prefix of pinocchio's install)."""
    for parent in Path(pin.__file__).resolve().parents:
        candidate = parent / "share" / "example-robot-data" / "robots" / "go1_description" / "urdf" / "go1.urdf"
        if candidate.is_file():
            return candidate
    raise FileNotFoundError("urdf: no example-robot-data Go1 URDF in this environment; pass --urdf")


def to_pinocchio(q: List[float], nq: int) -> np.ndarray:
    """Our ``[p, qw, qx, qy, qz, joints]`` as pinocchio's ``[p, qx, qy, qz, qw, joints]``."""
    q = np.asarray(q, dtype=float)
    if q.shape != (nq,):
        raise ValueError(f"q0: expected {nq} entries, got shape {q.shape}")
    return np.concatenate([q[:3], q[4:7], q[3:4], q[7:]])


def build(model: pin.Model, x0: np.ndarray, solver: str) -> Any:
    """A fresh helper, the trot's shooting problem and the solver."""
    gait = SimpleQuadrupedalGaitProblem(model, *FEET)
    problem = gait.createTrottingProblem(x0, **GAIT)
    return SOLVERS[solver](problem)


def run(model: pin.Model, x0: np.ndarray, solver_name: str, repeat: int, max_iter: int) -> Dict[str, Any]:
    """Construction time, median solve time and the converged solution's figures for one solver."""
    start = time.perf_counter()
    solver = build(model, x0, solver_name)
    construction = time.perf_counter() - start
    problem = solver.problem
    times = []
    for _ in range(repeat):
        xs, us = [x0] * (problem.T + 1), problem.quasiStatic([x0] * problem.T)
        start = time.perf_counter()
        converged = bool(solver.solve(xs, us, max_iter, False))
        times.append(time.perf_counter() - start)
    limits = model.effortLimit[6:]
    torque_ratio = max(float(np.max(np.abs(u) / limits)) for u in solver.us if len(u))
    return {
        "solver": solver_name,
        "models": int(problem.T),
        "construction_s": construction,
        "solve_s": statistics.median(times),
        "solve_samples_s": times,
        "iterations": int(solver.iter),
        "converged": converged,
        "stop": float(solver.stop),
        "cost": float(solver.cost),
        "dynamic_infeasibility": float(solver.ffeas),
        "max_torque_over_limit": torque_ratio,
    }


def main(argv: List[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urdf", type=Path, default=None, help="Go1 URDF (default: this environment's example-robot-data)")
    parser.add_argument("--q0", required=True, help="standing configuration, JSON list in our convention (qw first)")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--max-iter", type=int, default=100)
    parser.add_argument("--solvers", default="fddp,boxfddp", help="comma-separated: fddp, boxfddp")
    args = parser.parse_args(argv)
    urdf = args.urdf or own_urdf()
    model = pin.buildModelFromUrdf(str(urdf), pin.JointModelFreeFlyer())
    q0 = to_pinocchio(json.loads(args.q0), model.nq)
    model.referenceConfigurations["standing"] = q0
    x0 = np.concatenate([q0, np.zeros(model.nv)])
    results = [run(model, x0, name, args.repeat, args.max_iter) for name in args.solvers.split(",")]
    versions = {"crocoddyl": crocoddyl.__version__, "pinocchio": pin.__version__, "python": sys.version.split()[0]}
    rss = peak_rss_mb()
    print(json.dumps({"urdf": str(urdf), "urdf_source": "argument" if args.urdf else "own", "versions": versions, "rss_peak_mb": rss, "results": results}))


if __name__ == "__main__":
    main()
