"""The legged controllers against MuJoCo models of their robots that they do not know (MuJoCo Menagerie's kind).

For each robot, the plant is an MJCF written from its URDF as Menagerie writes
its models (:func:`trajopt.mujoco.foreign.write_menagerie_style`: the trunk
0.36 kg lighter, rotor armature 0.01 kg m^2, joint damping 2 N m s/rad (1 on
the abductions), friction loss 0.2 N m, 2.3 cm feet, an elliptic cone,
position servos, MuJoCo's 2 ms step; the feet as soft as Menagerie's Go1
feet for the robots of ``--soft-feet``, MuJoCo's default ones for the
others: on the Go1's soft feet HyQ, 87 kg, splays its legs while standing), or the file
given with ``--plant ROBOT=FILE.xml`` (e.g. Menagerie's own ``go1.xml``, a row of its own). The
controller is the robot's URDF model; the plant's joint damping and friction
are compensated at the joint level (``--compensate`` of ``trajopt mpc``) unless
the row says otherwise, and the swing clears the feet's measured sink. Rows:

- stand 20 s, trot in place 20 s, walk at 0.3 m/s for 10 s (and the walk
  uncompensated): fall or not, base drift or mean speed over the last 5 s,
  tick p50/p99 (preparation plus feedback);
- pushes of ``--impulse`` N s over 0.1 s at a random time of the trot's
  period after 2 s, sagittal and lateral, ``--trials`` each: the share
  recovered (no fall within 2 s).

Each row's plan reaches the plant after the measured solve time unless
``--delay tick``.

    python bench/foreign_plants.py [--robots go1,anymal,hyq] [--plant go1=menagerie/go1.xml] [--trials 20] [--impulse 6] [--delay measured] [--json FILE]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import problems  # noqa: E402
from trajopt.mpc.commands import Command  # noqa: E402
from trajopt.mpc.disturbances import Push  # noqa: E402
from trajopt.mpc.gaits import GaitSchedule  # noqa: E402
from trajopt.mpc.joint_compensation import PassiveCompensation  # noqa: E402
from trajopt.mpc.loop import parse_delay, run_closed_loop  # noqa: E402
from trajopt.mpc.report import loop_statistics  # noqa: E402
from trajopt.mpc.tasks import mpc_task  # noqa: E402
from trajopt.mujoco.foreign import write_menagerie_style  # noqa: E402

from bench.run_info import run_info, write_result  # noqa: E402

DIRECTIONS = {"sagittal": 0.0, "lateral": 90.0}
#: MuJoCo's default ``solimp`` (its feet sink 1-3 mm).
MUJOCO_SOLIMP = (0.9, 0.95, 0.001, 0.5, 2.0)


_CONTROLLERS: Dict[tuple, tuple] = {}


def controller(robot: str, gait: str, vx: float) -> tuple:
    """The task and controller of ``robot``'s ``gait`` at ``vx`` m/s, built once per run of this script (a closed
    loop resets the controller and its reference)."""
    if (robot, gait, vx) not in _CONTROLLERS:
        task = mpc_task(problems.get("trot", robot=robot), commands=Command(vx, 0.0, 0.0), gaits=GaitSchedule.constant(gait))
        _CONTROLLERS[robot, gait, vx] = task, task.controller(mode="rti")
    return _CONTROLLERS[robot, gait, vx]


def closed_loop(robot: str, plant_file: Path, duration: float, gait: str, delay: Any, vx: float = 0.0, compensate: bool = True, pushes: tuple = ()) -> Dict[str, Any]:
    """One run of ``robot``'s ``gait`` (at ``vx`` m/s) in the MJCF ``plant_file``; its statistics and mean speed."""
    task, mpc = controller(robot, gait, vx)
    plant = task.plant(mjcf=str(plant_file))
    compensation = PassiveCompensation.of_plant(plant, task.problem.model.robot) if compensate else None
    result = run_closed_loop(mpc, plant, duration, 50.0, delay=delay, disturbances=pushes, compensation=compensation)
    stats = loop_statistics(result, task.problem.model, task.reference)
    late = result.times >= result.times[-1] - 5.0
    speed = float((result.states[late][-1, 0] - result.states[late][0, 0]) / max(np.ptp(result.times[late]), 1e-9))
    return {"stats": stats, "speed": speed, "sink": plant.foot_sink}


def summary(row: Dict[str, Any]) -> Dict[str, Any]:
    """A run's figures for the JSON: fall (time, reason), drift, mean speed, tick p50/p99 (s)."""
    s = row["stats"]
    return {"fell": s.fell, "fall_time": s.fall_time if s.fell else None, "fall_reason": s.fall_reason, "drift": s.drift, "speed": row["speed"], "p50": s.p50, "p99": s.p99}


def outcome(run: Dict[str, Any], walking: bool) -> str:
    motion = f"{run['speed']:.3f} m/s over the last 5 s" if walking else f"drift {100 * run['drift']:.1f} cm"
    fall = f"fell at {run['fall_time']:.2f} s ({run['fall_reason']})" if run["fell"] else "no fall"
    return f"{fall:34s} {motion:28s} tick p50 {1e3 * run['p50']:5.1f} ms, p99 {1e3 * run['p99']:5.1f} ms"


#: The runs of each robot: label, duration (s), gait, forward speed (m/s), compensated.
RUNS = (("stand 20 s", 20.0, "stand", 0.0, True), ("trot in place 20 s", 20.0, "trot", 0.0, True), ("walk 0.3 m/s 10 s", 10.0, "trot", 0.3, True), ("walk 0.3 m/s 10 s, uncompensated", 10.0, "trot", 0.3, False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--robots", default="go1,anymal,hyq")
    parser.add_argument("--plant", action="append", default=[], metavar="ROBOT=FILE.xml", help="also run ROBOT in this MJCF (e.g. Menagerie's go1.xml); repeatable")
    parser.add_argument("--soft-feet", default="go1", metavar="ROBOTS", help="the robots whose written MJCF has Menagerie's soft Go1 feet (the others: MuJoCo's default feet)")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--impulse", type=float, default=6.0)
    parser.add_argument("--delay", default="measured")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="FILE", help="also write the rows, with the run's machine and versions, to FILE")
    args = parser.parse_args()
    delay = parse_delay(args.delay)
    plants = [(robot, None) for robot in args.robots.split(",") if robot] + [tuple(entry.split("=", 1)) for entry in args.plant]
    rng = np.random.default_rng(args.seed)
    info, rows = run_info(), []
    with tempfile.TemporaryDirectory() as folder:
        for robot, given in plants:
            soft = robot in args.soft_feet.split(",")
            feet = {} if soft else {"foot_solimp": MUJOCO_SOLIMP}
            path = Path(given) if given else write_menagerie_style(problems.get("trot", robot=robot).robot, Path(folder) / f"{robot}.xml", **feet)
            plant = path.name if given else f"its URDF's, Menagerie-style, {'Menagerie Go1 feet' if soft else 'MuJoCo default feet'}"
            print(f"\n## {robot} in {plant} MJCF; delay {args.delay}", flush=True)
            runs, sink = {}, None
            for label, duration, gait, vx, compensate in RUNS:
                row = closed_loop(robot, path, duration, gait, delay, vx=vx, compensate=compensate)
                if sink is None:
                    sink = row["sink"]
                    print(f"feet sink {1e3 * sink:.1f} mm under the standing weight")
                runs[label] = summary(row)
                print(f"{label:34s} {outcome(runs[label], vx > 0)}", flush=True)
            period = float(controller(robot, "trot", 0.0)[0].legged.timeline.period[0])
            pushes = {}
            for direction, angle in DIRECTIONS.items():
                recovered = 0
                for _ in range(args.trials):
                    start = 2.0 + rng.uniform(0.0, period)
                    recovered += not closed_loop(robot, path, start + 2.0, "trot", delay, pushes=(Push(args.impulse, angle, start),))["stats"].fell
                pushes[direction] = recovered / args.trials
            print(f"pushes {args.impulse:g} N s, {args.trials} trials: " + ", ".join(f"{name} {100 * r:.0f} %" for name, r in pushes.items()), flush=True)
            rows.append({"robot": robot, "plant": plant, "sink": sink, "runs": runs, "pushes": pushes})
    if args.json:
        write_result(args.json, "foreign_plants", info, {"delay": args.delay, "trials": args.trials, "impulse": args.impulse}, rows=rows)


if __name__ == "__main__":
    main()
