"""Trot and jump on the example-robot-data quadrupeds, next to the Go1 in the same run.

For each robot (Go1 first: the reference) and each template (``trot``,
``jump``: :mod:`problems.quadrupeds`, Go1's gaits scaled to the robot's leg
length), the problem is built once and its IPOPT solver once
(:class:`trajopt.IpoptSolver`, default path: CasADi VM, or ``--compile``);
then every solver runs ``--repeat`` times round-robin (so that load changes on
the shared machine hit all robots alike) from the problem's own initial guess.
Columns:

- ``N``, ``dt``: knots and spacing (s); ``kg``, ``leg``: mass and thigh + calf (m);
- ``build s``: the NLP, its derivatives and the solver (once);
- ``solve s``: median time to converge, ``x go1``: its ratio to the Go1's same
  template; ``iter``: IPOPT iterations (and ratio);
- checks with pinocchio's own kinematics (``tests/legged_checks.py``,
  :func:`pinocchio_contact_check`): ``slip`` (m, stance feet from their
  touchdown point), ``lift/apex`` (lowest swing peak over the required apex),
  ``fric/mg`` (smallest friction-pyramid margin ``mu fz - max(|fx|, |fy|)``
  over the weight), ``tau/lim`` (largest torque over the URDF effort limit),
  ``v stance`` (largest stance-foot speed at a knot, m/s: rest is imposed at
  touchdown only), ``dyn`` (relative RNEA residual).

``--json FILE`` also writes the rows with the run's machine and versions
(``bench/benchmarks_page.py`` renders them).

    python bench/quadrupeds.py [--robots go1,solo12,anymal,hyq,a1] [--repeat 3] [--compile] [--json FILE]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import problems  # noqa: E402
from bench.run_info import run_info, write_result  # noqa: E402
from tests.legged_checks import pinocchio_contact_check  # noqa: E402
from trajopt import IpoptSolver  # noqa: E402

TEMPLATES = ("trot", "jump")
REFERENCE = "go1"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--robots", default="go1,solo12,anymal,hyq,a1", help="comma-separated example-robot-data names (go1 is always measured, first)")
    parser.add_argument("--repeat", type=int, default=3, help="solves per configuration (median reported)")
    parser.add_argument("--compile", action="store_true", help="compiled stage derivatives (gcc, cached)")
    parser.add_argument("--json", metavar="FILE", help="also write the rows, with the run's machine and versions, to FILE")
    args = parser.parse_args()
    info, rows = run_info(), []
    robots = [REFERENCE] + [r for r in args.robots.split(",") if r and r != REFERENCE]
    configs = [(robot, template) for robot in robots for template in TEMPLATES]
    built = {}
    for key in configs:
        start = time.perf_counter()
        problem = problems.get(key[1], robot=key[0])
        solver = IpoptSolver(problem, options={"print_level": 0}, compile=args.compile)
        built[key] = (problem, solver, time.perf_counter() - start)
    runs = {key: [] for key in configs}
    for _ in range(args.repeat):
        for key in configs:
            runs[key].append(built[key][1].solve())
    load = os.getloadavg()[0]
    print(f"{len(configs)} problems, {args.repeat} solves each, round-robin; load average {load:.1f} on {os.cpu_count()} cores; {'compiled' if args.compile else 'CasADi VM'}")
    header = f"{'robot':<8} {'gait':<5} {'kg':>5} {'leg':>5} {'N':>3} {'dt':>6} {'build s':>7} {'solve s':>7} {'x go1':>5} {'iter':>4} {'x go1':>5}  {'status':<16} {'slip':>7} {'lift/apex':>9} {'fric/mg':>8} {'tau/lim':>7} {'v stance':>8} {'dyn':>7}"
    print(header)
    for robot, template in configs:
        problem, _, build = built[(robot, template)]
        sols = runs[(robot, template)]
        ref = runs[(REFERENCE, template)]
        solve_s, ref_s = statistics.median(s.solve_time for s in sols), statistics.median(s.solve_time for s in ref)
        last = sols[-1]
        check = pinocchio_contact_check(problem, last)
        weight = problem.mass * 9.81
        print(
            f"{robot:<8} {template:<5} {problem.mass:5.1f} {problem.robot.leg_length:5.3f} {problem.N:3d} {problem.schedule.dt:6.4f} {build:7.2f} {solve_s:7.3f} {solve_s / ref_s:5.2f} "
            f"{last.iterations:4d} {last.iterations / ref[-1].iterations:5.2f}  {last.status:<16} {check['slip']:7.1e} {check['lift'] / problem.swing_apex:9.4f} "
            f"{check['friction_margin'] / weight:8.1e} {check['torque_ratio']:7.3f} {check['stance_speed']:8.1e} {check['dynamics']:7.1e}"
        )
        rows.append({
            "robot": robot, "gait": template, "mass": problem.mass, "leg": problem.robot.leg_length, "knots": problem.N, "dt": problem.schedule.dt, "build_s": build,
            "solve_s": solve_s, "solve_ratio": solve_s / ref_s, "iterations": last.iterations, "status": last.status,
            "slip": check["slip"], "lift_over_apex": check["lift"] / problem.swing_apex, "friction_margin_over_weight": check["friction_margin"] / weight,
            "torque_ratio": check["torque_ratio"], "stance_speed": check["stance_speed"], "dynamics": check["dynamics"],
        })  # fmt: skip
    if args.json:
        write_result(args.json, "quadrupeds", info, {"repeat": args.repeat, "compile": args.compile}, rows=rows)


if __name__ == "__main__":
    main()
