"""Walking where it is told: velocity tracking, a command sequence, pushes while walking, every quadruped.

Closed loops of :mod:`trajopt.mpc` (real-time iteration, 50 Hz, plans delayed
by their measured solve time unless ``--delay tick``) in MuJoCo with its
default contacts (the URDF's feet, joint damping and dry friction), 1 kHz.
Sections (``--sections``):

- ``velocity``: the Go1 trotting 10 s at forward 0.3 and 0.6 m/s, lateral
  0.2 m/s, yaw rate 0.5 rad/s: RMS error of the commanded component after the
  first 2 s (the forward and lateral velocity in the heading frame, the yaw
  rate about the world z axis), fall or not, tick time p50 / p99;
- ``sequence``: the Go1 standing, trotting forward at 0.4 m/s, turning,
  stopping and standing again over 20 s (``COMMANDS``): fall or not, and the
  final state (all four feet down, base speed);
- ``push``: trotting at 0.3 m/s, ``--trials`` pushes per impulse level
  (3, 6, 9 N s, 0.1 s, sideways) at random gait phases after 2 s: success rates;
- ``robots``: every robot of ``trajopt solve trot --robot`` (``ROBOTS``) trotting
  forward at 0.3 m/s scaled by ``sqrt(L / L_Go1)`` for 10 s: RMS velocity
  error, fall or not, tick time p50 / p99, HPIPM's iterations per tick (mean).

    python bench/locomotion.py [--sections velocity,robots] [--trials 20] [--impulses 3,6,9] [--horizon 0.5] [--delay measured] [--robots go1,a1]
"""
from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional, Tuple

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import problems  # noqa: E402
from lie import quat_to_euler_zyx, quat_to_rot  # noqa: E402
from trajopt.legged.scaling import REFERENCE_LEG_LENGTH  # noqa: E402
from trajopt.mpc.commands import Command, read_commands  # noqa: E402
from trajopt.mpc.disturbances import Push  # noqa: E402
from trajopt.mpc.loop import ClosedLoopResult, parse_delay, run_closed_loop  # noqa: E402
from trajopt.mpc.report import loop_statistics  # noqa: E402
from trajopt.mpc.tasks import MPCTask, mpc_task  # noqa: E402

SECTIONS = ("velocity", "sequence", "push", "robots")
ROBOTS = ("go1", "go2", "a1", "solo12", "anymal", "hyq")
#: The command file of the ``sequence`` section: stand, trot forward, turn, stop, stand.
COMMANDS = "t,vx,vy,yaw_rate,gait\n0,0,0,0,stand\n1,0,0,0,trot\n2,0.4,0,0,trot\n8,0.3,0,0.5,trot\n12,0,0,0,trot\n15,0,0,0,stand\n"


def heading_velocity(task: MPCTask, result: ClosedLoopResult) -> np.ndarray:
    """Forward and lateral velocity in the heading frame and the yaw rate (K, 3) of the plant samples."""
    nq = task.legged.robot.nq
    X = result.states
    yaw = np.array([quat_to_euler_zyx(x[3:7])[0] for x in X])
    world = np.array([quat_to_rot(x[3:7]) @ x[nq : nq + 3] for x in X])  # the body-frame base velocity in the world
    forward = np.cos(yaw) * world[:, 0] + np.sin(yaw) * world[:, 1]
    lateral = -np.sin(yaw) * world[:, 0] + np.cos(yaw) * world[:, 1]
    return np.column_stack([forward, lateral, np.gradient(np.unwrap(yaw), result.times)])


def walk(robot: str, commands: Any, duration: float, delay: Any, disturbances: tuple = (), gaits: Any = None, horizon: Optional[float] = None) -> Tuple[MPCTask, ClosedLoopResult]:
    params = {} if robot == "go1" else {"robot": robot}
    task = mpc_task(problems.get("go1-trot" if robot == "go1" else "trot", **params), horizon=horizon, commands=commands, gaits=gaits)
    mpc = task.controller(mode="rti")
    return task, run_closed_loop(mpc, task.plant(), duration, 50.0, delay=delay, disturbances=disturbances)


def tracking_error(task: MPCTask, result: ClosedLoopResult, command: Command, after: float = 2.0) -> float:
    """RMS error (after ``after`` s) of the commanded components: the nonzero ones of ``command``."""
    measured = heading_velocity(task, result)
    keep = result.times >= after
    wanted = command.as_array()
    components = np.flatnonzero(wanted) if np.any(wanted) else np.arange(3)
    return float(np.sqrt(np.mean((measured[keep][:, components] - wanted[components]) ** 2)))


def velocity_section(args: argparse.Namespace) -> None:
    print(f"\n## velocity: Go1, 10 s, RMS after 2 s, delay {args.delay}")
    for label, command in (("forward 0.3 m/s", Command(0.3)), ("forward 0.6 m/s", Command(0.6)), ("lateral 0.2 m/s", Command(0.0, 0.2)), ("yaw 0.5 rad/s", Command(0.0, 0.0, 0.5))):
        task, result = walk("go1", command, 10.0, args.delay, horizon=args.horizon)
        s = loop_statistics(result, task.problem.model)
        error = tracking_error(task, result, command) if not result.fell else float("nan")
        print(f"{label:16s} RMS error {error:.3f}  {'fell at %.2f s' % s.fall_time if s.fell else 'no fall'}; tick p50 {1e3 * s.p50:.1f} ms, p99 {1e3 * s.p99:.1f} ms, HPIPM iterations {s.qp_iterations:.1f}, failed {s.failed}", flush=True)


def sequence_section(args: argparse.Namespace) -> None:
    print(f"\n## sequence: stand, trot 0.4 m/s, turn, stop, stand; 20 s, delay {args.delay}")
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as handle:
        handle.write(COMMANDS)
    commands, gaits = read_commands(handle.name)
    task, result = walk("go1", commands, 20.0, args.delay, gaits=gaits, horizon=args.horizon)
    s = loop_statistics(result, task.problem.model)
    final = result.states[-1]
    feet = np.asarray(task.legged.robot.kinematics(final)).reshape(4, 3)[:, 2]
    speed = float(np.linalg.norm(final[task.legged.robot.nq : task.legged.robot.nq + 3]))
    print(f"{'fell at %.2f s (%s)' % (s.fall_time, s.fall_reason) if s.fell else 'no fall'}; final feet heights {np.round(feet, 4)} m, base speed {speed:.3f} m/s; tick p50 {1e3 * s.p50:.1f} ms, failed {s.failed}")


def push_section(args: argparse.Namespace) -> None:
    print(f"\n## push while walking at 0.3 m/s: {args.trials} trials per level, random phase, sideways, delay {args.delay}")
    rng = np.random.default_rng(args.seed)
    for impulse in args.impulses:
        ok = 0
        for _ in range(args.trials):
            start = 2.0 + rng.uniform(0.0, 0.5)
            task, result = walk("go1", Command(0.3), start + 2.0, args.delay, disturbances=(Push(impulse, 90.0, start),), horizon=args.horizon)
            ok += not result.fell
        print(f"{impulse:4.1f} N s: {100 * ok / args.trials:.0f} % ({ok}/{args.trials})", flush=True)


def robots_section(args: argparse.Namespace) -> None:
    print(f"\n## robots: trot forward at 0.3 m/s x sqrt(L / L_Go1) for 10 s, delay {args.delay}")
    for robot in args.robots.split(","):
        params = {} if robot == "go1" else {"robot": robot}
        leg = problems.get("go1-trot" if robot == "go1" else "trot", **params).robot.leg_length
        command = Command(0.3 * math.sqrt(leg / REFERENCE_LEG_LENGTH))
        try:
            task, result = walk(robot, command, 10.0, args.delay)
        except RuntimeError as err:  # the first plan did not converge
            print(f"{robot:8s} {command.vx:.2f} m/s: {err}", flush=True)
            continue
        s = loop_statistics(result, task.problem.model)
        error = tracking_error(task, result, command) if not result.fell else float("nan")
        print(f"{robot:8s} {command.vx:.2f} m/s: RMS error {error:.3f}  {'fell at %.2f s (%s)' % (s.fall_time, s.fall_reason) if s.fell else 'no fall'}; tick p50 {1e3 * s.p50:.1f} ms, p99 {1e3 * s.p99:.1f} ms, HPIPM iterations {s.qp_iterations:.1f}; failed {s.failed}; worst violation {s.worst_violation:.1e}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sections", default=",".join(SECTIONS))
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--delay", default="measured")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--robots", default=",".join(ROBOTS), help="robots of the robots section")
    parser.add_argument("--horizon", type=float, default=None, help="the Go1's horizon (s; default the task's, 0.4 s scaled to the legs)")
    parser.add_argument("--impulses", default="3,6,9", help="impulse levels of the push section (N s)")
    args = parser.parse_args()
    args.impulses = [float(i) for i in args.impulses.split(",")]
    args.delay = parse_delay(args.delay)
    start = time.perf_counter()
    for section in args.sections.split(","):
        {"velocity": velocity_section, "sequence": sequence_section, "push": push_section, "robots": robots_section}[section](args)
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
