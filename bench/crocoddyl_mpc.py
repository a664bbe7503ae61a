"""crocoddyl's FDDP as a receding horizon on the Go1 trot in place: the per-tick peer of ``bench/mpc.py``.

Runs INSIDE the benchmark-only environment (``bash bench/crocoddyl_env.sh``
creates it); ``bench/mpc.py`` starts it as a subprocess and reads the JSON it
prints on its last line. It imports numpy, pinocchio 3 and crocoddyl, never
the project.

crocoddyl ships no MPC loop; this is the one its users write: the horizon is
``--knots`` action models (0.02 s each, from ``SimpleQuadrupedalGaitProblem``'s
trot in place: step length 0, step height 0.08 m, 13 step and 2 support knots
per half cycle, touchdown impulse models included) taken from a long gait
sequence; at every tick the horizon moves one model forward
(``ShootingProblem.circularAppend``), the previous solution is shifted by one
node as the warm start, the initial state is the state the previous tick's
first control leads to (crocoddyl's own model as the plant: only the time per
tick is compared, not the behaviour), and FDDP runs ONE iteration. The time
of that call is recorded per tick; the JSON gives the median, the 99th
percentile, the maximum and the horizon. For the tick's breakdown, the
derivatives of the whole horizon at the tick's starting point
(``ShootingProblem.calcDiff``, after the ``calc`` it needs) are timed
separately just before the tick (``derivatives_p50``): the part of the
tick's one iteration that is the linearization.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pinocchio as pin
import crocoddyl  # noqa: I001  (pinocchio before crocoddyl: the wheels' libraries load in that order)
from crocoddyl.utils.quadruped import SimpleQuadrupedalGaitProblem

FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")
TROT = {"stepLength": 0.0, "stepHeight": 0.08, "timeStep": 0.02, "stepKnots": 13, "supportKnots": 2}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--urdf", type=Path, required=True)
    parser.add_argument("--q0", type=float, nargs="+", required=True, help="standing configuration, OUR convention [p, qw, qx, qy, qz, joints]")
    parser.add_argument("--knots", type=int, default=20, help="action models in the horizon")
    parser.add_argument("--ticks", type=int, default=300)
    args = parser.parse_args()
    model = pin.buildModelFromUrdf(str(args.urdf), pin.JointModelFreeFlyer())
    q = np.asarray(args.q0, dtype=float)
    q = np.concatenate([q[:3], q[4:7], q[3:4], q[7:]])  # pinocchio's quaternion order
    model.referenceConfigurations["standing"] = q
    x0 = np.concatenate([q, np.zeros(model.nv)])
    gait = SimpleQuadrupedalGaitProblem(model, *FEET)
    cycle = gait.createTrottingProblem(x0, **TROT)
    sequence = list(cycle.runningModels) * (2 + (args.ticks + args.knots) // len(cycle.runningModels))
    problem = crocoddyl.ShootingProblem(x0, sequence[: args.knots], cycle.terminalModel)
    solver = crocoddyl.SolverFDDP(problem)
    xs = [x0] * (args.knots + 1)
    us = problem.quasiStatic([x0] * args.knots)
    solver.solve(xs, us, 100, False)  # the first plan, converged before the loop (as ours)
    times, derivatives, x = [], [], x0
    for tick in range(args.ticks):
        first, data = problem.runningModels[0], problem.runningDatas[0]
        first.calc(data, x, solver.us[0])
        x = np.array(data.xnext)
        xs = list(solver.xs)[1:] + [solver.xs[-1]]
        shifted = list(solver.us)[1:] + [solver.us[-1]]
        problem.circularAppend(sequence[args.knots + tick])
        # an impulse model (touchdown) has no control: where the shift puts a control on an impulse
        # model, or an impulse model's empty slot on a running model, the slot is zeros of its size
        us = [u if len(u) == m.nu else np.zeros(m.nu) for u, m in zip(shifted, problem.runningModels)]
        problem.x0 = x
        xs[0] = x
        problem.calc(xs, us)
        start = time.perf_counter()
        problem.calcDiff(xs, us)
        derivatives.append(time.perf_counter() - start)
        start = time.perf_counter()
        solver.solve(xs, us, 1, False)
        times.append(time.perf_counter() - start)
    t = np.asarray(times)
    out = {
        "knots": args.knots, "ticks": args.ticks, "p50": float(np.percentile(t, 50)), "p99": float(np.percentile(t, 99)), "max": float(t.max()),
        "derivatives_p50": float(np.percentile(derivatives, 50)),
    }  # fmt: skip
    print(json.dumps(out))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
