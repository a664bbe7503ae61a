"""Go1 trot: our IPOPT solve of ``problems.get("go1-trot")`` against crocoddyl, in the same run.

Ours (each configuration in its own worker process, so its peak memory is its own):

- ``inverse``: the default problem (inverse-dynamics formulation, trapezoidal
  collocation, hard constraints, the problem's IPOPT options: objective scaled
  by 100, adaptive barrier update), stage derivatives on CasADi's virtual
  machine (the heavy stage maps on one thread per core,
  :mod:`trajopt.derivatives`);
- ``inverse+C``: the same with compiled stage derivatives (``compile=True``);
- ``inverse+C/monotone``: ``inverse+C`` with IPOPT's default monotone
  barrier update (what the adaptive one saves);
- ``forward+C``: the forward-dynamics (ABA) formulation, compiled.

The peer, crocoddyl's FDDP and BoxFDDP on its own trot helper (same robot
file, same standing pose, same gait timing; see ``bench/crocoddyl_trot.py``),
runs in the benchmark-only environment ``bench/.venv-crocoddyl``, created by
``bench/crocoddyl_env.sh`` when missing (a clear message, and our rows only,
when that fails, e.g. offline).

Every configuration runs ``--rounds`` times, interleaved with the peer (the
machine is shared and noisy: only ratios inside one run mean something), each
time solving ``--repeat`` times; times are medians over all solves. Columns:

- ``problem s``: building the :class:`trajopt.legged.LeggedProblem` (IK guess
  included) / crocoddyl's helper and shooting problem and solver;
- ``build s``: our NLP, its stage derivatives (compiling on a cold cache) and
  the ``casadi.nlpsol`` object;
- ``solve s``: time to converge (IPOPT call / ``solver.solve``), split for ours
  into ``eval s`` (NLP function evaluations) and ``ipopt s`` (IPOPT's own work,
  mostly MUMPS);
- ``RSS MB``: the worker's peak resident memory (``VmHWM``), after imports
  in parentheses;
- ``viol``: our max constraint violation; ``tau/lim``: max |torque| / URDF limit.

The last line gives the ratios ours / crocoddyl of the time to converge.
``--cold`` first builds ``inverse+C`` against an empty compile cache and
reports the cold build (code generation and gcc, in parallel), then compiles
its stage functions one by one into another empty cache for the gcc time of
each (the largest ones listed).

    python bench/go1_trot.py [--rounds 2] [--repeat 3] [--cold] [--no-crocoddyl] [--ipopt '{"print_level": 0}']
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CONFIGS = {
    "inverse": {"formulation": "inverse", "compile": False, "ipopt": {}},
    "inverse+C": {"formulation": "inverse", "compile": True, "ipopt": {}},
    "inverse+C/monotone": {"formulation": "inverse", "compile": True, "ipopt": {"mu_strategy": "monotone"}},
    "forward+C": {"formulation": "forward", "compile": True, "ipopt": {}},
}
HEADLINE = "inverse+C"


def rss_mb() -> float:
    """Peak resident memory of this process so far (MB): ``VmHWM``, which, unlike ``ru_maxrss``,
    does not inherit the parent's peak through fork and exec."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return float(line.split()[1]) / 1024.0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def worker(name: str, repeat: int, ipopt: Dict[str, Any]) -> Dict[str, Any]:
    """Build and solve one configuration ``repeat`` times in this process; its figures as a dict."""
    import numpy as np

    import problems
    import trajopt

    base_rss = rss_mb()
    config = CONFIGS[name]
    start = time.perf_counter()
    problem = problems.get("go1-trot", formulation=config["formulation"])
    problem_s = time.perf_counter() - start
    solver = trajopt.IpoptSolver(problem, options={**config["ipopt"], **ipopt}, compile=config["compile"])
    solves = [solver.solve() for _ in range(repeat)]
    sol = solves[-1]
    cm = problem.contact_model
    _, upper = cm.robot.control_bounds()
    return {
        "name": name,
        "problem_s": problem_s,
        "build_s": sol.build_time,
        "solve_s": [s.solve_time for s in solves],
        "eval_s": [s.eval_time for s in solves],
        "ipopt_s": [s.solver_time for s in solves],
        "iterations": sol.iterations,
        "status": sol.status,
        "success": sol.success,
        "violation": sol.max_violation,
        "torque_ratio": float(np.max(np.abs(sol.controls[:, cm.u_slice]) / upper)),
        "n_w": solver.nlp.n_w,
        "n_g": solver.nlp.n_g,
        "rss_base_mb": base_rss,
        "rss_peak_mb": rss_mb(),
    }


def run_worker(name: str, repeat: int, ipopt: Dict[str, Any], env: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    """:func:`worker` in a fresh interpreter (its JSON is the last line of its output)."""
    cmd = [sys.executable, __file__, "--worker", name, "--repeat", str(repeat), "--ipopt", json.dumps(ipopt)]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    if out.returncode != 0:
        raise RuntimeError(f"worker {name} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def crocoddyl_python() -> Optional[str]:
    """The benchmark environment's python (created on first use), or None with a message."""
    env_script = ROOT / "bench" / "crocoddyl_env.sh"
    out = subprocess.run(["bash", str(env_script)], capture_output=True, text=True)
    if out.returncode != 0:
        print(f"crocoddyl: could not create its environment ({env_script}), comparing ours only:\n{out.stderr[-1500:]}", file=sys.stderr)
        return None
    return out.stdout.strip().splitlines()[-1]


def run_crocoddyl(python: str, repeat: int) -> Dict[str, Any]:
    """``bench/crocoddyl_trot.py`` on our Go1 URDF and standing pose; its JSON."""
    from models import Go1

    robot = Go1()
    q0 = robot.init_state()[: robot.nq].tolist()
    cmd = [python, str(ROOT / "bench" / "crocoddyl_trot.py"), "--urdf", robot.urdf_path, "--q0", json.dumps(q0), "--repeat", str(repeat)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"crocoddyl_trot.py failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def print_gcc_times(shown: int = 5) -> None:
    """Code generation and gcc time of each stage function of the headline NLP, compiled one by one."""
    import problems
    from models.compiled import build_library
    from trajopt.derivatives import stage_functions
    from trajopt.nlp import NLP

    functions = stage_functions(NLP(problems.get("go1-trot")))
    with tempfile.TemporaryDirectory() as cache:
        libs = sorted(((f, build_library(f, cache_dir=cache)) for f in functions), key=lambda fl: -fl[1].compile_seconds)
    total = sum(lib.codegen_seconds + lib.compile_seconds for _, lib in libs)
    print(f"gcc one by one: {len(libs)} stage functions, {total:.1f} s in all; largest:")
    for f, lib in libs[:shown]:
        print(f"  {f.name():36s} {f.n_instructions():7d} instructions  codegen {lib.codegen_seconds:5.2f} s  gcc {lib.compile_seconds:5.2f} s")


def merge(samples: List[Dict[str, Any]]) -> Dict[str, Any]:
    """One row from the rounds of one configuration: medians over all solves and builds."""
    row = dict(samples[-1])
    for key in ("solve_s", "eval_s", "ipopt_s"):
        row[key] = statistics.median(v for s in samples for v in s[key])
    for key in ("problem_s", "build_s"):
        row[key] = statistics.median(s[key] for s in samples)
    row["rss_peak_mb"] = max(s["rss_peak_mb"] for s in samples)
    return row


def print_table(ours: List[Dict[str, Any]], peer: List[Dict[str, Any]]) -> None:
    head = f"{'solver':18s} {'problem s':>9s} {'build s':>8s} {'solve s':>8s} {'iters':>5s} {'eval s':>7s} {'ipopt s':>7s} {'RSS MB':>13s} {'viol':>8s} {'tau/lim':>7s}  status"
    print(head)
    print("-" * len(head))
    for r in ours:
        rss = f"{r['rss_peak_mb']:.0f} ({r['rss_base_mb']:.0f})"
        print(f"{r['name']:18s} {r['problem_s']:9.3f} {r['build_s']:8.3f} {r['solve_s']:8.3f} {r['iterations']:5d} {r['eval_s']:7.3f} {r['ipopt_s']:7.3f} {rss:>13s} {r['violation']:8.1e} {r['torque_ratio']:7.3f}  {r['status']}")
    for r in peer:
        rss = f"{r['rss_peak_mb']:.0f}"
        status = f"converged={r['converged']} stop={r['stop']:.1e}"
        print(f"{'croc ' + r['solver']:18s} {r['construction_s']:9.3f} {'':>8s} {r['solve_s']:8.3f} {r['iterations']:5d} {'':>7s} {'':>7s} {rss:>13s} {'':>8s} {r['max_torque_over_limit']:7.3f}  {status}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3, help="solves per round and configuration")
    parser.add_argument("--configs", default=",".join(CONFIGS), help=f"comma-separated subset of {list(CONFIGS)}")
    parser.add_argument("--ipopt", default="{}", help="IPOPT options (JSON) for our solves")
    parser.add_argument("--cold", action="store_true", help="first build inverse+C on an empty compile cache")
    parser.add_argument("--no-crocoddyl", action="store_true")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    ipopt = json.loads(args.ipopt)
    if args.worker:
        print(json.dumps(worker(args.worker, args.repeat, ipopt)))
        return

    names = args.configs.split(",")
    if args.cold:
        with tempfile.TemporaryDirectory() as cache:
            cold = run_worker(HEADLINE, 1, ipopt, env={**os.environ, "TRAJOPT_CACHE": cache})
        print(f"cold compile cache: {HEADLINE} build {cold['build_s']:.2f} s (code generation + gcc, parallel), then solve {cold['solve_s'][0]:.3f} s")
        print_gcc_times()
    python = None if args.no_crocoddyl else crocoddyl_python()
    samples: Dict[str, List[Dict[str, Any]]] = {n: [] for n in names}
    peer_samples: List[Dict[str, Any]] = []
    for _ in range(args.rounds):
        if python:
            peer_samples.append(run_crocoddyl(python, args.repeat))
        for n in names:
            samples[n].append(run_worker(n, args.repeat, ipopt))
    ours = [merge(samples[n]) for n in names]
    peer = []
    if peer_samples:
        for i, first in enumerate(peer_samples[0]["results"]):
            row = dict(first)
            row["solve_s"] = statistics.median(t for s in peer_samples for t in s["results"][i]["solve_samples_s"])
            row["construction_s"] = statistics.median(s["results"][i]["construction_s"] for s in peer_samples)
            row["rss_peak_mb"] = peer_samples[0]["rss_peak_mb"]
            peer.append(row)
        info = peer_samples[0]
        print(f"crocoddyl {info['versions']['crocoddyl']}, pinocchio {info['versions']['pinocchio']} (URDF from {info['urdf_source']}: {info['urdf']})")
    print(f"ours: {ours[0]['n_w']} variables, {ours[0]['n_g']} constraints ({names[0]}); {args.rounds} rounds x {args.repeat} solves, medians")
    print_table(ours, peer)
    if peer:
        ratios = [f"{r['name']}/{p['solver']} {r['solve_s'] / p['solve_s']:.2f}" for r in ours for p in peer]
        print("ratio ours/crocoddyl, time to converge: " + ", ".join(ratios))


if __name__ == "__main__":
    main()
