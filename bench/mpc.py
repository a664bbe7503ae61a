"""Model-predictive control in a plant it does not model: tick times, push recovery, mismatch, tracking.

Every run is a closed loop of :mod:`trajopt.mpc` in real-time emulation (the
plan reaches the plant after its measured solve time, ``--delay measured``;
``--delay tick`` for a load-independent run), 50 Hz controller, 1 kHz plant,
the Go1 in MuJoCo with its default contacts (the URDF's 2 cm feet, joint
damping and dry friction) unless said otherwise. Sections (``--sections``):

- ``ticks``: ``go1-trot`` in place for ``--duration`` s in each mode (``rti``:
  one Gauss-Newton SQP step with HPIPM per tick; ``converged``: IPOPT
  warm-started to convergence), tick time (preparation and feedback) p50 /
  p99 / max and the feedback's (the plan's delay) p50 / p99, deadline misses, failed ticks, the worst violation of the applied plans,
  HPIPM's iterations per tick (mean; NaN for IPOPT);
  against crocoddyl's FDDP with one iteration per tick on the same Go1 and a
  horizon of as many 0.02 s intervals (20 for the default 0.4 s),
  warm-started by shifting (``bench/crocoddyl_mpc.py`` in the benchmark-only
  environment of ``bench/crocoddyl_env.sh``), measured in the same run: the
  ratio of the medians; then the tick's breakdown, the median of each of its
  phases (``trajopt.mpc.controller.TICK_PHASES``: update, warm start,
  linearization, QP, the rest of the solve call, the plan; the real-time
  iteration's preparation, before the measurement, apart from its feedback,
  after it) against crocoddyl's derivatives (``calcDiff``) and the rest of its
  iteration;
- ``long``: ``go1-stand`` and ``go1-trot`` for 20 s: fall or not, base drift;
- ``push``: ``go1-trot``, ``--trials`` pushes per impulse level (3, 6, 9,
  12 N s over 0.1 s) and direction (sagittal: +x, lateral: +y), each at a
  random time (a random gait phase) between 2 and 2 + one period s, the run
  ending 2 s after the push: the success rate (no fall), for each step timing
  of ``--timings`` (``adaptive``: a push sideways ends the swing in progress
  sooner and the footholds follow the measured base, ``trajopt.mpc.step_timing``;
  ``fixed``: the gait's clock, footholds under the reference), the same
  push times for each, with the added cost per tick (the medians' difference)
  and the ticks that advanced the gait;
- ``mismatch``: ``go1-trot`` 20 s with a 2 kg payload, friction 0.5 (the
  controller assumes 0.7), a 5 ms actuator latency, each alone and all together;
- ``track``: ``quadrotor-track`` (figure-eight, 2 m across, 4 s period) for
  8 s with gusts of 2 N for 0.5 s at 2 s (+y) and 5 s (+x), in our simulator:
  the position RMS against the reference.

With ``--plant FILE.xml`` the Go1's plant is that MJCF (``trajopt.mujoco.foreign``; e.g. one written by
``write_menagerie_style``), and ``--compensate`` adds its joints' damping and friction at the joint level.

    python bench/mpc.py [--sections ticks,push] [--trials 20] [--impulses 3,6,9,12] [--timings fixed,adaptive] [--horizon 0.5] [--duration 10] [--delay measured] [--compile] [--modes rti] [--plant FILE.xml] [--compensate]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, Optional

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import problems  # noqa: E402
from trajopt.mpc.disturbances import Gust, Push  # noqa: E402
from trajopt.mpc.step_timing import StepTiming  # noqa: E402
from trajopt.mpc.joint_compensation import PassiveCompensation  # noqa: E402
from trajopt.mpc.loop import parse_delay, run_closed_loop  # noqa: E402
from trajopt.mpc.controller import PREPARATION_PHASES, TICK_PHASES  # noqa: E402
from trajopt.mpc.report import LoopStatistics, loop_statistics  # noqa: E402
from trajopt.mpc.tasks import mpc_task  # noqa: E402

SECTIONS = ("ticks", "long", "push", "mismatch", "track")
IMPULSES = (3.0, 6.0, 9.0, 12.0)
DIRECTIONS = {"sagittal": 0.0, "lateral": 90.0}


_CONTROLLERS: Dict[tuple, tuple] = {}


def controller(name: str, mode: str, compile: bool, horizon: Optional[float] = None) -> tuple:
    """The task and controller of ``name`` in ``mode`` (its functions compiled to C with ``compile``, else on
    CasADi's virtual machine; a legged task's ``horizon`` in s, default its own), built once per run of this
    script (a closed loop resets it)."""
    horizon = horizon if name.startswith("go1") else None
    if (name, mode, compile, horizon) not in _CONTROLLERS:
        task = mpc_task(problems.get(name), horizon=horizon)
        _CONTROLLERS[name, mode, compile, horizon] = task, task.controller(mode=mode, compile=compile)
    return _CONTROLLERS[name, mode, compile, horizon]


def run(name: str, args: argparse.Namespace, duration: float, mode: str = "rti", disturbances: tuple = (), latency: float = 0.0, **plant: Any) -> LoopStatistics:
    """One closed loop of the registered problem ``name`` (delay and compilation from the command line), its statistics."""
    task, mpc = controller(name, mode, args.compile, args.horizon)
    if args.plant and name.startswith("go1"):
        plant = {**plant, "mjcf": args.plant}
    simulated = task.plant(**plant)
    compensation = None
    if args.compensate and name.startswith("go1"):
        compensation = PassiveCompensation.of_plant(simulated, task.problem.model.robot)
    result = run_closed_loop(mpc, simulated, duration, 50.0, delay=args.delay, disturbances=disturbances, latency=latency, compensation=compensation)
    return loop_statistics(result, task.problem.model, task.reference)


def crocoddyl_ticks(knots: int, ticks: int) -> Optional[Dict[str, Any]]:
    """The peer's per-tick times (``bench/crocoddyl_mpc.py``), or None with a message when its environment fails."""
    from models import Go1

    try:
        made = subprocess.run(["bash", str(ROOT / "bench" / "crocoddyl_env.sh")], capture_output=True, text=True, check=True)
    except subprocess.CalledProcessError as err:
        print(f"crocoddyl peer unavailable (its environment could not be made: {err.stderr.strip().splitlines()[-1:]})")
        return None
    python = made.stdout.strip().splitlines()[-1]
    robot = Go1(mu=0.7)
    q0 = robot.init_state()[: robot.nq]
    cmd = [python, str(ROOT / "bench" / "crocoddyl_mpc.py"), "--urdf", robot.urdf_path, "--knots", str(knots), "--ticks", str(ticks), "--q0", *map(str, q0)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        print(f"crocoddyl peer failed: {out.stderr.strip().splitlines()[-1:]}")
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def ticks_section(args: argparse.Namespace) -> None:
    print(f"\n## ticks: go1-trot in place, {args.duration} s, delay {args.delay}")
    print("tick: preparation (before the measurement) and feedback (from the measurement to the plan, the plan's delay)")
    print(f"{'mode':22s} {'p50 ms':>7s} {'p99 ms':>7s} {'max ms':>7s} {'fb p50':>7s} {'fb p99':>7s} {'misses':>7s} {'failed':>7s} {'viol':>9s} {'QP it.':>7s}  outcome")
    rows, modes = {}, args.modes.split(",")
    for mode in modes:
        s = run("go1-trot", args, args.duration, mode=mode)
        rows[mode] = s
        print(
            f"{mode:22s} {1e3 * s.p50:7.1f} {1e3 * s.p99:7.1f} {1e3 * s.worst:7.1f} {1e3 * s.feedback_p50:7.1f} {1e3 * s.feedback_p99:7.1f} "
            f"{s.deadline_misses:7d} {s.failed:7d} {s.worst_violation:9.1e} {s.qp_iterations:7.1f}  {'fell' if s.fell else 'ok'}"
        )
    task = controller("go1-trot", modes[0], args.compile, args.horizon)[0]  # built by the loop above
    peer = crocoddyl_ticks(task.problem.N - 1, 300)  # as many 0.02 s intervals
    if peer is not None:
        print(f"{'crocoddyl FDDP, 1 it.':22s} {1e3 * peer['p50']:7.1f} {1e3 * peer['p99']:7.1f} {1e3 * peer['max']:7.1f}  ({peer['knots']} knots, {peer['ticks']} ticks in its own model)")
        for mode, s in rows.items():
            print(f"ratio {mode} / crocoddyl (p50): {s.p50 / peer['p50']:.2f}")
    print_breakdown(rows, peer)


def print_breakdown(rows: Dict[str, LoopStatistics], peer: Optional[Dict[str, Any]]) -> None:
    """The tick's phases (medians, ms; :data:`trajopt.mpc.controller.TICK_PHASES`) per mode, those of the
    preparation (:data:`~trajopt.mpc.controller.PREPARATION_PHASES`, before the measurement) apart from the
    feedback's, and crocoddyl's tick split into its derivatives (``calcDiff`` over the horizon) and the rest
    of its iteration, all of which runs after its measurement."""
    print("\ntick breakdown, medians in ms")
    for label, phases in (("preparation", PREPARATION_PHASES), ("feedback", tuple(p for p in TICK_PHASES if p not in PREPARATION_PHASES))):
        print(f"{label:22s} " + " ".join(f"{p:>13s}" for p in phases) + f" {'sum':>7s}")
        for mode, s in rows.items():
            cells = [f"{1e3 * s.phases[p]:13.2f}" if p in s.phases else f"{'-':>13s}" for p in phases]
            print(f"{mode:22s} " + " ".join(cells) + f" {1e3 * sum(s.phases.get(p, 0.0) for p in phases):7.2f}")
    if peer is not None:
        rest = peer["p50"] - peer["derivatives_p50"]
        print(f"{'crocoddyl FDDP, 1 it.':22s} derivatives (calcDiff) {1e3 * peer['derivatives_p50']:.2f}, the rest of the iteration (backward pass, rollout) {1e3 * rest:.2f}, tick {1e3 * peer['p50']:.2f}")


def long_section(args: argparse.Namespace) -> None:
    print(f"\n## long: 20 s in MuJoCo, delay {args.delay}")
    for name in ("go1-stand", "go1-trot"):
        s = run(name, args, 20.0)
        print(f"{name:12s} {'fell at %.2f s (%s)' % (s.fall_time, s.fall_reason) if s.fell else 'no fall'}; drift {100 * s.drift:.1f} cm; tick p50 {1e3 * s.p50:.1f} ms, p99 {1e3 * s.p99:.1f} ms, HPIPM iterations {s.qp_iterations:.1f}, failed {s.failed}")


def push_section(args: argparse.Namespace) -> None:
    print(f"\n## push: go1-trot, {args.trials} trials per level and direction, random phase, delay {args.delay}")
    rng = np.random.default_rng(args.seed)
    task = controller("go1-trot", "rti", args.compile, args.horizon)[0]
    legged = task.legged
    period = float(legged.timeline.period[0])
    print(f"{'N s':>5s} {'timing':>9s} " + " ".join(f"{d:>10s}" for d in DIRECTIONS) + f" {'tick p50':>9s} {'p99 ms':>7s} {'advanced':>9s}")
    for impulse in args.impulses:
        starts = {angle: 2.0 + rng.uniform(0.0, period, args.trials) for angle in DIRECTIONS.values()}
        for name in args.timings:
            legged.set_step_timing(StepTiming() if name == "adaptive" else None)
            rates, p50, p99, advanced = [], [], [], 0
            for angle in DIRECTIONS.values():
                ok = 0
                for start in starts[angle]:
                    s = run("go1-trot", args, start + 2.0, disturbances=(Push(impulse, angle, start),))
                    ok += not s.fell
                    p50.append(s.p50)
                    p99.append(s.p99)
                    advanced += len(legged.timing_advances)
                rates.append(ok / args.trials)
            print(f"{impulse:5.1f} {name:>9s} " + " ".join(f"{100 * r:9.0f}%" for r in rates) + f" {1e3 * np.median(p50):9.1f} {1e3 * np.median(p99):7.1f} {advanced:9d}", flush=True)
    legged.set_step_timing(None)


def mismatch_section(args: argparse.Namespace) -> None:
    print(f"\n## mismatch: go1-trot 20 s, delay {args.delay}")
    cases = {
        "+2 kg payload": ({"payload": 2.0}, 0.0),
        "friction 0.5": ({"mu": 0.5}, 0.0),
        "5 ms latency": ({}, 0.005),
        "all three": ({"payload": 2.0, "mu": 0.5}, 0.005),
    }
    for label, (plant, latency) in cases.items():
        s = run("go1-trot", args, 20.0, latency=latency, **plant)
        print(f"{label:14s} {'fell at %.2f s (%s)' % (s.fall_time, s.fall_reason) if s.fell else 'no fall'}; drift {100 * s.drift:.1f} cm; tick p50 {1e3 * s.p50:.1f} ms, failed {s.failed}", flush=True)


def track_section(args: argparse.Namespace) -> None:
    print(f"\n## track: quadrotor-track 8 s, gusts 2 N x 0.5 s, delay {args.delay}")
    gusts = (Gust([0.0, 2.0, 0.0], 2.0, 0.5), Gust([2.0, 0.0, 0.0], 5.0, 0.5))
    s = run("quadrotor-track", args, 8.0, disturbances=gusts, sim="own")
    print(f"position RMS {100 * s.tracking_rms:.2f} cm; tick p50 {1e3 * s.p50:.1f} ms, p99 {1e3 * s.p99:.1f} ms; misses {s.deadline_misses}; failed {s.failed}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sections", default=",".join(SECTIONS))
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--delay", default="measured")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--compile", action="store_true", help="the controllers' functions compiled to C (a long first build)")
    parser.add_argument("--modes", default="rti,converged", help="modes of the ticks section")
    parser.add_argument("--horizon", type=float, default=None, help="the Go1's horizon (s; default the task's, 0.4)")
    parser.add_argument("--impulses", default=",".join(f"{i:g}" for i in IMPULSES), help="impulse levels of the push section (N s)")
    parser.add_argument("--timings", default="fixed,adaptive", help="step timings of the push section: fixed (the gait's clock), adaptive (trajopt.mpc.step_timing)")
    parser.add_argument("--plant", metavar="FILE.xml", help="the Go1's plant is this MJCF (trajopt.mujoco.foreign.ForeignPlant)")
    parser.add_argument("--compensate", action="store_true", help="the Go1's joint damping and friction compensated (the --plant file's, else the URDF's)")
    args = parser.parse_args()
    args.impulses = [float(i) for i in args.impulses.split(",")]
    args.timings = args.timings.split(",")
    unknown = sorted(set(args.timings) - {"fixed", "adaptive"})
    if unknown:
        parser.error(f"--timings: expected fixed and/or adaptive, got {unknown[0]!r}")
    args.delay = parse_delay(args.delay)
    start = time.perf_counter()
    for section in args.sections.split(","):
        {"ticks": ticks_section, "long": long_section, "push": push_section, "mismatch": mismatch_section, "track": track_section}[section](args)
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
