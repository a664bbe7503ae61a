"""A humanoid (the G1, or Talos) under MPC in MuJoCo: standing, pushes, walking and turning.

Closed loops of :mod:`trajopt.mpc` (real-time iteration, 50 Hz, the humanoid
of ``--robot`` with every joint but the legs' locked, its soles' corners as
contacts, functions compiled to C) in MuJoCo with its default contacts (5 mm
spheres at the sole corners: the G1's URDF spheres, on Talos's flat soles
:attr:`models.Humanoid.sole_contact_radius`; joint damping and friction),
the plant stepped at 0.5 ms. Plans reach the plant one
tick (20 ms) after their state was measured (``--delay tick``): the tick is
not real-time on this machine. Sections (``--sections``):

- ``stand``: ``humanoid-stand`` for 20 s: fall or not, base drift, tick p50 /
  p99, failed QPs;
- ``push``: ``--trials`` lateral pushes (0.1 s, along +y) per velocity change
  (``--velocities``, m/s; the impulse is the robot's mass times it), at random
  times 2-3 s into ``humanoid-stand`` (standing) and ``humanoid-walk`` (stepping
  in place), each run 3 s past its push: recovered or not;
- ``walk``: ``humanoid-walk`` for 10 s forward at 0.3 m/s, backward at 0.125 m/s,
  sideways (to the left) at 0.075 m/s and turning in place at 0.3 rad/s (each the
  limit :data:`trajopt.mpc.commands.BIPED_LIMITS` clamps to): RMS error of the
  commanded component after 2 s (the helpers of ``bench/locomotion.py``; sideways
  it includes the lateral sway of the biped's walk, which walking in place alone
  gives), fall or not, tick p50 / p99.

``--robot`` takes one humanoid or several (``g1,talos``), each run through the
sections in turn. ``--json FILE`` also writes every row with the machine and
load (``bench/benchmarks_page.py`` renders that file).

    python bench/humanoid_mpc.py [--robot g1[,talos]] [--sections stand,push,walk] [--trials 20] [--velocities 0.5,1.0] [--seed 0] [--json FILE]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Dict, List

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import problems  # noqa: E402
from bench.locomotion import tracking_error  # noqa: E402
from bench.run_info import run_info, write_result  # noqa: E402
from trajopt.mpc.commands import Command  # noqa: E402
from trajopt.mpc.disturbances import Push  # noqa: E402
from trajopt.mpc.loop import run_closed_loop  # noqa: E402
from trajopt.mpc.report import loop_statistics  # noqa: E402
from trajopt.mpc.tasks import mpc_task  # noqa: E402

SECTIONS = ("stand", "push", "walk")
_CONTROLLERS: dict = {}


def run(name: str, robot: str, command: Command, duration: float, disturbances: tuple = ()) -> tuple:
    """One closed loop of the registered problem ``name`` on the humanoid ``robot`` under ``command`` (its task and
    controller built once)."""
    key = (name, robot, tuple(command.as_array()))
    if key not in _CONTROLLERS:
        task = mpc_task(problems.get(name, robot=robot), commands=command)
        _CONTROLLERS[key] = task, task.controller(mode="rti", compile=True)
    task, mpc = _CONTROLLERS[key]
    result = run_closed_loop(mpc, task.plant(), duration, 50.0, delay="tick", disturbances=disturbances)
    return task, result, loop_statistics(result, task.problem.model)


def outcome(s) -> str:
    return f"fell at {s.fall_time:.2f} s ({s.fall_reason})" if s.fell else "no fall"


def row(robot: str, run_name: str, result: str, s: Any) -> Dict[str, Any]:
    """One row of the JSON: the robot, the run, its result in words and the loop's tick figures."""
    return {"robot": robot, "run": run_name, "result": result, "p50": s.p50, "p99": s.p99, "qp_iterations": s.qp_iterations, "failed": s.failed}


def stand_section(args: argparse.Namespace, robot: str) -> List[Dict[str, Any]]:
    print(f"\n## stand: humanoid-stand --robot {robot}, 20 s, delay tick")
    task, result, s = run("humanoid-stand", robot, Command(), 20.0)
    drift = float(np.linalg.norm(result.states[-1][:2] - result.states[0][:2]))
    print(f"{outcome(s)}; drift {100 * drift:.1f} cm; tick p50 {1e3 * s.p50:.1f} ms, p99 {1e3 * s.p99:.1f} ms; failed {s.failed}", flush=True)
    return [row(robot, "stand 20 s", f"{outcome(s)}, drift {100 * drift:.1f} cm", s)]


def push_section(args: argparse.Namespace, robot: str) -> List[Dict[str, Any]]:
    rng = np.random.default_rng(args.seed)
    mass = problems.get("humanoid-stand", robot=robot).robot.mass
    print(f"\n## push: lateral, 0.1 s, {args.trials} trials at random times in 2-3 s, delay tick ({robot} {mass:.1f} kg)")
    times = rng.uniform(2.0, 3.0, size=args.trials)
    rows = []
    for name, what in (("humanoid-stand", "stand"), ("humanoid-walk", "walk in place")):
        for velocity in args.velocities:
            impulse = mass * velocity
            runs = [run(name, robot, Command(), start + 3.0, (Push(impulse, 90.0, float(start)),))[2] for start in times]
            recovered = sum(not s.fell for s in runs)
            p50, p99 = (float(np.median([getattr(s, key) for s in runs])) for key in ("p50", "p99"))
            print(f"{name:15s} {velocity:.2f} m/s ({impulse:4.1f} N s): {100 * recovered / args.trials:.0f} % ({recovered}/{args.trials}); tick p50 / p99 {1e3 * p50:.1f} / {1e3 * p99:.1f} ms (median over runs)", flush=True)
            rows.append({
                "robot": robot, "run": f"{what}, lateral push of {velocity:g} m/s ({impulse:.1f} N s)", "result": f"{recovered} / {args.trials} recovered",
                "p50": p50, "p99": p99, "qp_iterations": float(np.median([s.qp_iterations for s in runs])), "failed": int(sum(s.failed for s in runs)),
            })  # fmt: skip
    return rows


def walk_section(args: argparse.Namespace, robot: str) -> List[Dict[str, Any]]:
    print(f"\n## walk: humanoid-walk --robot {robot}, 10 s, RMS after 2 s, delay tick")
    rows = []
    walks = (
        ("forward 0.3 m/s", Command(0.3), "m/s"), ("backward 0.125 m/s", Command(-0.125), "m/s"),
        ("sideways 0.075 m/s", Command(0.0, 0.075), "m/s"), ("turn 0.3 rad/s", Command(0.0, 0.0, 0.3), "rad/s"),
    )  # fmt: skip
    for label, command, unit in walks:
        task, result, s = run("humanoid-walk", robot, command, 10.0)
        error = tracking_error(task, result, command) if not s.fell else float("nan")
        print(f"{label:18s} RMS error {error:.3f}  {outcome(s)}; tick p50 {1e3 * s.p50:.1f} ms, p99 {1e3 * s.p99:.1f} ms, HPIPM iterations {s.qp_iterations:.1f}, failed {s.failed}", flush=True)
        rows.append(row(robot, f"walk 10 s, {label}", f"{outcome(s)}, RMS error {error:.3f} {unit} after 2 s", s))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--robot", default="g1", help="the humanoid, g1 or talos, or several separated by commas")
    parser.add_argument("--sections", default=",".join(SECTIONS))
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--velocities", default="0.5,1.0", help="base velocity changes of the push section (m/s)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="FILE", help="also write the rows, with the run's machine and versions, to FILE")
    args = parser.parse_args()
    args.velocities = [float(v) for v in args.velocities.split(",")]
    sections = args.sections.split(",")
    unknown = [s for s in sections if s not in SECTIONS]
    if unknown:
        parser.error(f"--sections: unknown {unknown}; expected some of {list(SECTIONS)}")
    runs = {"stand": stand_section, "push": push_section, "walk": walk_section}
    info, rows = run_info(), []
    for robot in args.robot.split(","):
        for section in sections:
            rows += runs[section](args, robot)
    if args.json:
        settings = {"robots": args.robot.split(","), "sections": sections, "trials": args.trials, "velocities": args.velocities, "seed": args.seed, "delay": "tick", "rate": 50.0}
        write_result(args.json, "humanoid_mpc", info, settings, rows=rows)


if __name__ == "__main__":
    main()
