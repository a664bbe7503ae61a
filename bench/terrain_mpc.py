"""The receding horizon over the terrains it plans offline: the Go1, Solo12 and ANYmal B and C up the stairs, the Go1 and Solo12 across the stepping stones, in MuJoCo.

Each case is ``trajopt mpc NAME``'s default task (the plan's start, walking to
where the plan ends and standing there; MuJoCo building the terrain as
``trajopt verify`` does), run ``--runs`` times from random start phases: the
robot stands for a random time in ``[0, T)`` (``T`` the horizon's trot period)
before it trots, so that its feet meet the edges at another phase of the gait
each run. Over the stones and the stairs, and in a ``+plan`` case, the
horizon follows the solved plan (:func:`trajopt.mpc.tasks.follows_its_plan`):
the random time is added to the stand before the plan starts, and the runs
differ in that start alone (the footholds are the plan's). In a ``+gait``
case the horizon generates the gait and reads the terrain itself. Per run:

- fall or not (a link other than a foot touching the terrain is a fall);
- whether every foot ends over the region the plan's last footholds stand
  on (the top tread);
- the footholds taken (:func:`trajopt.mpc.footholds_taken.footholds_taken`) that no
  foot region holds (:func:`trajopt.mpc.footholds_taken.off_the_regions`);
- tick p50/p99 (preparation plus feedback).

The plans reach the plant one period after their measurement (``--delay
tick``) unless ``--delay measured``: the tick is not real-time on these
machines (see the MPC benchmarks).

A case ``NAME:ROBOT`` (``stones:solo12``) is the any-quadruped problem ``NAME`` on
``ROBOT`` (``trajopt mpc NAME --robot ROBOT``); a case ending in ``+plan``
follows the solved plan (``trajopt mpc NAME --follow-plan``), one ending in
``+gait`` (``go1-stairs+gait``) generates the gait where the default task
follows the plan (``--no-follow-plan``).

    python bench/terrain_mpc.py [--cases go1-stairs,go1-stairs+gait,go1-stones,stones:solo12,stairs:solo12,stairs:anymal_b,stairs:anymal_c] [--runs 10] [--delay tick] [--seed 0] [--json FILE]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Dict

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import problems  # noqa: E402
from trajopt.mpc.footholds_taken import HEIGHT_TOLERANCE, footholds_taken, off_the_regions  # noqa: E402
from trajopt.legged.scaling import GaitScale  # noqa: E402
from trajopt.mpc.gaits import GAITS, GaitSchedule  # noqa: E402
from trajopt.mpc.loop import parse_delay, run_closed_loop  # noqa: E402
from trajopt.mpc.report import loop_statistics  # noqa: E402
from trajopt.mpc.tasks import follows_its_plan, mpc_task  # noqa: E402

from bench.run_info import run_info, write_result  # noqa: E402


def on_final_regions(problem: Any, state: np.ndarray) -> bool:
    """Whether every foot of ``state`` is over the foot region (unshrunk) of the plan's last foothold of that foot, not
    below its surface (a foot swinging in place above it counts)."""
    terrain, feet = problem.terrain, np.asarray(problem.robot.kinematics(state), dtype=float).reshape(-1, 3)
    for planned, foot in zip(problem.terrain_plan.footholds[-1], feet):
        region = terrain.region_at(planned[:2], 0.0)
        if region is None or not region.contains(foot[:2])[0] or foot[2] < float(region.height(foot[:2])[0]) - HEIGHT_TOLERANCE:
            return False
    return True


#: The suffixes of a case whose horizon follows the solved plan, and of one that generates the gait (module docstring).
FOLLOW_PLAN, GENERATE_GAIT = "+plan", "+gait"


def case_problem(case: str) -> Any:
    """The registered problem of a case, ``NAME`` or ``NAME:ROBOT``, with or without a suffix (module docstring)."""
    name, _, robot = case.removesuffix(FOLLOW_PLAN).removesuffix(GENERATE_GAIT).partition(":")
    return problems.get(name, robot=robot) if robot else problems.get(name)


def follows_the_plan(case: str, problem: Any) -> bool:
    """Whether ``case``'s horizon follows the solved plan: its suffix's choice, else the default task's for ``problem``
    (:func:`case_problem`)."""
    if case.endswith(FOLLOW_PLAN) or case.endswith(GENERATE_GAIT):
        return case.endswith(FOLLOW_PLAN)
    return follows_its_plan(problem)


def run(case: str, wait: float, delay: Any) -> Dict[str, Any]:
    """One run of ``case``'s task (:func:`case_problem`), standing ``wait`` s before trotting; its outcome."""
    problem = case_problem(case)
    if follows_the_plan(case, problem):
        task = mpc_task(problem, follow_plan=True)
        task.legged.plan_start += wait
    else:
        task = mpc_task(problem, gaits=GaitSchedule([(0.0, "stand"), (wait, "trot")]) if wait > 0 else None, follow_plan=False)
    mpc, plant = task.controller(mode="rti"), task.plant()
    result = run_closed_loop(mpc, plant, task.duration + wait, 50.0, delay=delay)
    stats = loop_statistics(result, task.problem.model)
    taken = footholds_taken(result, task.legged.robot)
    off = off_the_regions(taken, problem.terrain)
    return {
        "wait": wait, "fell": stats.fell, "fall_time": stats.fall_time if stats.fell else None, "fall_reason": stats.fall_reason,
        "arrived": bool(not stats.fell and on_final_regions(problem, result.states[-1])), "footholds": len(taken),
        "off_regions": [{"foot": f.foot, "t": f.t0, "position": f.position.round(4).tolist()} for f in off],
        "base_end": result.states[-1][:3].round(4).tolist(), "p50": stats.p50, "p99": stats.p99, "failed": stats.failed,
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--cases", default="go1-stairs,go1-stairs+gait,go1-stones,stones:solo12,stairs:solo12,stairs:anymal_b,stairs:anymal_c",
        help="comma-separated registered terrain problems, NAME or NAME:ROBOT, +plan to follow the solved plan, +gait to generate the gait",
    )  # fmt: skip
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--delay", default="tick")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="FILE", help="also write the runs, with the run's machine and versions, to FILE")
    args = parser.parse_args()
    delay = parse_delay(args.delay)
    rng = np.random.default_rng(args.seed)
    info, rows = run_info(), []
    for name in args.cases.split(","):
        problem = case_problem(name)
        period = GaitScale.of(problem.robot).duration(GAITS["trot"][0])
        print(f"\n## {name}: {args.runs} runs, delay {args.delay}", flush=True)
        runs = []
        for j in range(args.runs):
            r = run(name, float(rng.uniform(0.0, period)) if j else 0.0, delay)
            runs.append(r)
            fall = f"fell at {r['fall_time']:.2f} s ({r['fall_reason']})" if r["fell"] else "no fall"
            print(
                f"wait {r['wait']:.3f} s: {fall:40s} {'arrived' if r['arrived'] else 'did not arrive':15s} footholds off the regions {len(r['off_regions'])}/{r['footholds']}  "
                f"tick p50 {1e3 * r['p50']:5.1f} ms, p99 {1e3 * r['p99']:5.1f} ms, failed ticks {r['failed']}",
                flush=True,
            )
        arrived = sum(r["arrived"] for r in runs)
        print(f"{name}: {arrived}/{len(runs)} arrived without a fall; footholds off the regions {sum(len(r['off_regions']) for r in runs)} of {sum(r['footholds'] for r in runs)}", flush=True)
        rows.append({"case": name, "runs": runs, "arrived": arrived})
    if args.json:
        write_result(args.json, "terrain_mpc", info, {"delay": args.delay, "runs": args.runs, "seed": args.seed}, rows=rows)


if __name__ == "__main__":
    main()
