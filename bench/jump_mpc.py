"""Jumps under feedback: the receding horizon following an offline jump plan in MuJoCo, from random start times.

For each case (``go1-jump`` and ``go1-gap`` by default) this script builds ``trajopt mpc NAME``'s
task (:class:`trajopt.mpc.plan_tracking.PlanTrackingMPC`: the plan solved
offline, then followed by the RTI horizon against MuJoCo's soft contacts) and
runs it ``--runs`` times for each delay of ``--delays`` (the measured compute
time, and one whole tick), the robot standing a random time (uniform in
``--wait``, s; the same times for each delay) before the plan starts. Per run
it reports:

- whether it fell (a link other than a foot on the ground, or the base below
  half its standing height);
- the landing: each foot's horizontal distance (m) at the plan's end from the
  plan's foot there (where it landed and stands), the largest over the feet;
  the base's at the plan's end (it still settles) and at the run's end;
- the time every foot was off the ground (s) against the plan's flight;
- tick p50/p99 (preparation plus feedback) and the failed ticks.

``--json FILE`` writes the runs with the machine and load
(``bench/benchmarks_page.py`` renders that file).

    python bench/jump_mpc.py [--cases go1-jump,go1-gap] [--runs 10] [--delays measured,tick] [--json FILE]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Dict

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import problems  # noqa: E402
from bench.run_info import run_info, write_result  # noqa: E402
from trajopt.mpc.loop import parse_delay, run_closed_loop  # noqa: E402
from trajopt.mpc.report import loop_statistics  # noqa: E402
from trajopt.mpc.tasks import PLAN_STANDING_TIME, mpc_task  # noqa: E402

#: A foot lower than this (m) touches the ground.
GROUND_CONTACT = 0.01


def run(name: str, wait: float, delay: Any) -> Dict[str, Any]:
    """One run of ``name``'s task, standing ``wait`` s before the plan; its outcome."""
    task = mpc_task(problems.get(name))
    legged = task.legged
    legged.plan_start = wait
    plan, robot = legged.plan, legged.robot
    result = run_closed_loop(task.controller(mode="rti"), task.plant(), wait + plan.tf + PLAN_STANDING_TIME, 50.0, delay=delay)
    stats = loop_statistics(result, task.problem.model)
    feet = np.array([np.asarray(robot.kinematics(s), dtype=float).reshape(4, 3) for s in result.states])
    at_end = min(int(np.searchsorted(result.times, wait + plan.tf)), len(result.times) - 1)
    landing = np.linalg.norm(feet[at_end, :, :2] - legged.plan_feet[-1, :, :2], axis=1) if not stats.fell else np.full(4, np.nan)
    base = float(np.linalg.norm(result.states[at_end, :2] - plan.states[-1, :2])) if not stats.fell else float("nan")
    base_final = float(np.linalg.norm(result.states[-1, :2] - plan.states[-1, :2])) if not stats.fell else float("nan")
    step = float(result.times[1] - result.times[0])
    airborne = float((feet[:, :, 2] > GROUND_CONTACT).all(axis=1).sum() * step)
    plan_feet_z = np.array([np.asarray(robot.kinematics(s), dtype=float).reshape(4, 3)[:, 2] for s in plan.evaluate(np.arange(0.0, plan.tf, step))[0]])
    return {
        "wait": wait, "fell": stats.fell, "fall_time": stats.fall_time if stats.fell else None, "fall_reason": stats.fall_reason,
        "landing_error": float(np.max(landing)), "feet_errors": landing.round(4).tolist(), "base_error": base, "base_final_error": base_final,
        "airborne": airborne, "plan_airborne": float((plan_feet_z > GROUND_CONTACT).all(axis=1).sum() * step),
        "p50": stats.p50, "p99": stats.p99, "failed": stats.failed,
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--cases", default="go1-jump,go1-gap", help="comma-separated registered jump problems")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--wait", default="0.2,1.0", help="range of the standing time before the plan (s), LOW,HIGH")
    parser.add_argument("--delays", default="measured,tick", help="comma-separated: measured, tick, or seconds")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="FILE", help="also write the runs, with the run's machine and versions, to FILE")
    args = parser.parse_args()
    low, high = (float(v) for v in args.wait.split(","))
    waits = np.random.default_rng(args.seed).uniform(low, high, args.runs)
    info, rows = run_info(), []
    for name, delay in ((name, delay) for name in args.cases.split(",") for delay in args.delays.split(",")):
        print(f"\n## {name}: {args.runs} runs, delay {delay}", flush=True)
        runs = []
        for wait in waits:
            r = run(name, float(wait), parse_delay(delay))
            runs.append(r)
            fall = f"fell at {r['fall_time']:.2f} s ({r['fall_reason']})" if r["fell"] else "no fall"
            print(
                f"wait {r['wait']:.3f} s: {fall:30s} landing {100 * r['landing_error']:5.1f} cm (base {100 * r['base_error']:4.1f} cm, {100 * r['base_final_error']:4.1f} cm at the end), airborne {r['airborne']:.3f} s "
                f"(plan {r['plan_airborne']:.3f}), tick p50 {1e3 * r['p50']:5.1f} ms, p99 {1e3 * r['p99']:5.1f} ms, failed ticks {r['failed']}",
                flush=True,
            )
        landed = sum(not r["fell"] for r in runs)
        print(f"{name}: {landed}/{len(runs)} landed without a fall; largest landing error {100 * np.nanmax([r['landing_error'] for r in runs]):.1f} cm", flush=True)
        rows.append({"case": name, "delay": delay, "runs": runs, "landed": landed})
    if args.json:
        write_result(args.json, "jump_mpc", info, {"runs": args.runs, "wait": [low, high], "seed": args.seed}, rows=rows)


if __name__ == "__main__":
    main()
