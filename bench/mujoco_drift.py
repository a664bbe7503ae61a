"""Why legged plans drift in MuJoCo, measured: the per-gait table and a factor study.

Part 1, per registered legged plan (solved here with the registry's
defaults): :func:`trajopt.mujoco.verify` in MuJoCo (equation-of-motion
residual relative to m g, worst stance-foot speed, worst excess over
MuJoCo's elliptic friction cone, worst torque and joint-limit excess), the
base drift (max position / orientation) of the PD + feed-forward replay
(the robot's default gains), of the feed-forward-only replay and of the
time-varying LQR, and, as the peer measured in the same run, our own rigid
KKT replay (:func:`trajopt.legged.replay.replay`) with its wall time.

Part 2, on go1-trot and go1-jump: one factor changed at a time from our
default MuJoCo model (5 mm contact spheres, solref (0.005, 1), solimp
(0.95, 0.99, 0.001), elliptic cone, impratio 1, no joint friction,
implicitfast at 1 ms, torques interpolated like the transcription): the
URDF's 2 cm foot spheres, MuJoCo's default contact softness, the URDF's
joint friction, controls held at the knots, other integrators and steps, the
pyramidal cone, a stiffer friction (impratio), other PD gains; and the
issue's first configuration (all of the URDF's: 2 cm feet, default contact,
joint friction; PD 30 / 1).

Part 3, plan-side options on go1-trot and go1-jump (each re-solved): the
exact friction cone, a friction margin (plan mu 0.5, MuJoCo 0.7), and a
limit on how fast a swing foot descends at the knot before its touchdown
(:func:`limit_touchdown_speed`, added through the problem's public
``add_constraint``; the plans bring a foot to rest only AT the touchdown
knot, after descending at 0.26-0.46 m/s one knot before, and MuJoCo's feet,
a fraction of a millimetre lower, land early at 0.2-0.5 m/s).

Part 4, the gait templates on the other quadrupeds of example-robot-data
(``trot`` and ``jump`` with ``robot=NAME``): PD + feed-forward with Go1's
gains scaled by :func:`trajopt.mujoco.track.torque_scale`, the LQR, and
feed-forward only.

    python bench/mujoco_drift.py [--part 1 2 3 4]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

import problems  # noqa: E402
from trajopt import solve  # noqa: E402
from trajopt import Constraint  # noqa: E402
from trajopt.legged.replay import replay  # noqa: E402
from trajopt.mujoco import ContactParameters, Feedforward, PDFeedforward, TimeVaryingLQR, build_model, track  # noqa: E402
from trajopt.mujoco.track import torque_scale  # noqa: E402
from trajopt.mujoco.verify import verify  # noqa: E402

LEGGED = ("go1-trot", "go1-jump", "go1-pace", "go1-bound", "go2-trot", "humanoid-shift")
MUJOCO_DEFAULT_CONTACT = dict(solref=(0.02, 1.0), solimp=(0.9, 0.95, 0.001, 0.5, 2.0))


def drift(result) -> str:
    fall = " FELL" if result.fell else ""
    return f"{1e3 * result.max_position_error:6.1f} mm {np.degrees(result.max_orientation_error):5.2f} deg{fall}"


def limit_touchdown_speed(problem, speed: float) -> None:
    """``v_z >= -speed`` for every foot at the swing knot just before each of its touchdowns."""
    robot, stance = problem.robot, problem.schedule.stance
    for i, foot in enumerate(robot.kinematics_bodies):
        knots = [int(k) - 1 for k in np.flatnonzero(stance[1:, i] & ~stance[:-1, i]) + 1]
        if knots:
            problem.add_constraint(Constraint(lambda x, z=3 * i + 2: robot.kinematics_velocity(x)[z], knots=knots, lower=-speed, upper=np.inf, name=f"{foot} touchdown approach"))


class KnotHoldPD(PDFeedforward):
    """PD + feed-forward with the planned torques held constant over each knot interval (zero-order hold)."""

    def __init__(self, solution, kp=None, kd=None) -> None:
        super().__init__(kp, kd)
        self.solution = solution

    def setup(self, robot, plan) -> None:
        super().setup(robot, plan)
        h = self.solution.tf / (self.solution.N - 1)
        knot = np.minimum(np.floor((plan.times[:-1] % self.solution.tf) / h + 1e-9).astype(int), self.solution.N - 1)
        held = self.solution.controls[knot, self.solution.problem.contact_model.u_slice]
        self.commands = self.commands - plan.torques + held


def part1() -> None:
    print("Part 1: registered legged plans in MuJoCo (1 ms, implicitfast, 5 mm spheres, solref 0.005)")
    head = f"{'plan':<15} {'EOM/mg':>8} {'slip m/s':>8} {'cone N':>7} {'tau N m':>8} {'joint rad':>9} | {'PD + feed-forward':>22} | {'feed-forward only':>26} | {'TV-LQR':>22} | {'own KKT replay':>22} {'s':>5} | MuJoCo s"
    print(head)
    for name in LEGGED:
        solution = solve(problems.get(name), print_level=0)
        start = time.perf_counter()
        report = verify(solution)
        t_mujoco = (time.perf_counter() - start) / 2
        w = report.worst()
        lqr = track(solution, TimeVaryingLQR())
        start = time.perf_counter()
        try:
            own = replay(solution.problem, solution, substeps=10)
            own_text = f"{1e3 * own.base_position_drift.max():6.1f} mm {np.degrees(own.base_orientation_drift.max()):5.2f} deg"
        except np.linalg.LinAlgError:  # contacts sharing a rigid body make its KKT matrix singular
            own_text = "n/a (redundant rows)"
        t_own = time.perf_counter() - start
        print(
            f"{name:<15} {w['eom_residual']:8.1e} {w['stance_speed']:8.1e} {w['friction_excess']:+7.2f} {w['torque_excess']:+8.1e} {w['joint_excess']:+9.2e} | "
            f"{drift(report.tracked):>22} | {drift(report.feedforward):>26} | {drift(lqr):>22} | {own_text:>22} {t_own:5.2f} | {t_mujoco:.2f}",
            flush=True,
        )
    print("  cone N: worst |f_t| - mu f_n of the planned forces in MuJoCo's elliptic cone (the plans use the pyramid)")
    print("  MuJoCo s: wall time of one MuJoCo replay (including building the model); s: our KKT replay (RK4, 10 substeps)")


def part2() -> None:
    print("\nPart 2: one factor at a time (max base drift over the plan)")
    factors = [
        ("ours (default)", {}, {}),
        ("URDF foot spheres r = 2 cm", dict(contact=ContactParameters(radius=0.02)), {}),
        ("r = 1 mm", dict(contact=ContactParameters(radius=0.001)), {}),
        ("MuJoCo default solref/solimp", dict(contact=ContactParameters(**MUJOCO_DEFAULT_CONTACT)), {}),
        ("solref 0.002", dict(contact=ContactParameters(solref=(0.002, 1.0))), {}),
        ("URDF joint friction 0.2 N m", dict(joint_friction=True), {}),
        ("pyramidal cone", dict(contact=ContactParameters(cone="pyramidal")), {}),
        ("impratio 10 (stiffer friction)", dict(contact=ContactParameters(impratio=10.0)), {}),
        ("Euler integrator", dict(integrator="euler"), {}),
        ("RK4 integrator", dict(integrator="rk4"), {}),
        ("0.2 ms steps", dict(timestep=2e-4), {}),
        ("torques held at the knots", {}, dict(hold=True)),
        ("PD 30 / 1", {}, dict(gains=(30.0, 1.0))),
        ("PD 100 / 4", {}, dict(gains=(100.0, 4.0))),
        ("issue's setup: 2 cm, default contact, friction, PD 30/1", dict(contact=ContactParameters(radius=0.02, **MUJOCO_DEFAULT_CONTACT), joint_friction=True), dict(gains=(30.0, 1.0))),
    ]
    plans = {name: solve(problems.get(name), print_level=0) for name in ("go1-trot", "go1-jump")}
    print(f"{'factor':<56} " + " ".join(f"{name + ' PD':>24} {name + ' FF only':>28}" for name in plans))
    for label, model_options, run in factors:
        cells = []
        for solution in plans.values():
            robot = build_model(solution.problem.robot, **model_options)
            gains = run.get("gains", (None, None))
            pd = KnotHoldPD(solution, *gains) if run.get("hold") else PDFeedforward(*gains)
            cells += [f"{drift(track(solution, pd, robot=robot)):>24}", f"{drift(track(solution, Feedforward(), robot=robot)):>28}"]
        print(f"{label:<56} " + " ".join(cells), flush=True)


def part3() -> None:
    print("\nPart 3: plan-side options (re-solved; default MuJoCo model)")
    options = [
        ("default plan", {}, None),
        ("friction='cone' (the elliptic cone)", dict(friction="cone"), None),
        ("mu 0.5 in the plan (0.7 in MuJoCo)", dict(mu=0.5), None),
        ("touchdown approach <= 0.1 m/s (1 knot)", {}, 0.1),
        ("touchdown approach <= 0.05 m/s (1 knot)", {}, 0.05),
    ]
    print(f"{'plan':<42} {'problem':<9} {'iter':>4} {'cone N':>7} | {'PD + feed-forward':>22} | {'feed-forward only':>26} | {'TV-LQR':>22}")
    for label, params, speed in options:
        for name in ("go1-trot", "go1-jump"):
            problem = problems.get(name, **params)
            if speed is not None:
                limit_touchdown_speed(problem, speed)
            solution = solve(problem, print_level=0)
            robot = build_model(problems.get(name).robot)  # MuJoCo keeps mu = 0.7
            report = verify(solution, robot=robot)
            lqr = track(solution, TimeVaryingLQR(), robot=robot)
            print(f"{label:<42} {name:<9} {solution.iterations:>4} {report.worst()['friction_excess']:+7.2f} | {drift(report.tracked):>22} | {drift(report.feedforward):>26} | {drift(lqr):>22}", flush=True)


def part4() -> None:
    print("\nPart 4: gait templates on other quadrupeds (Go1's PD gains scaled by m L)")
    print(f"{'robot':<9} {'gait':<6} {'scale':>6} | {'PD + feed-forward':>22} | {'feed-forward only':>26} | {'TV-LQR':>22}")
    for robot in ("solo12", "a1", "laikago", "b1", "anymal", "anymal_c", "hyq"):
        for gait in ("trot", "jump"):
            solution = solve(problems.get(gait, robot=robot), print_level=0)
            report = verify(solution)
            print(f"{robot:<9} {gait:<6} {torque_scale(solution.problem.robot):6.2f} | {drift(report.tracked):>22} | {drift(report.feedforward):>26} | {drift(track(solution, 'lqr')):>22}", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", type=int, nargs="+", default=[1, 2, 3, 4], choices=[1, 2, 3, 4])
    args = parser.parse_args()
    for part in args.part:
        {1: part1, 2: part2, 3: part3, 4: part4}[part]()
