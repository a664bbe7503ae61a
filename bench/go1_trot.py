"""Go1 trot (nominal and constrained) and jump: our solves against crocoddyl and mim-solvers, in the same run.

Problems (:data:`CASES`), each solved by every configuration of ours and by its peers:

- ``trot``: ``problems.get("go1-trot")`` (mu 0.7, URDF torque limits);
- ``trot-constrained``: ``problems.get("go1-trot", mu=0.3, torque_scale=0.6)``,
  where the friction pyramid and the torque limits bind (hard constraints and
  penalties give different plans);
- ``jump``: ``problems.get("go1-jump")`` (0.2 m forward, at the torque limits).

Ours (:data:`CONFIGS`; each configuration and problem in its own worker
process, so its peak memory is its own):

- ``inverse``: the inverse-dynamics formulation, trapezoidal collocation,
  hard constraints, IPOPT with the problem's options (objective scaled by
  100, adaptive barrier update, equilibrated variables), stage
  derivatives on CasADi's virtual machine (the heavy stage maps on one thread
  per core, :mod:`trajopt.solvers.derivatives`);
- ``inverse+C``: the same with compiled stage derivatives (``compile=True``);
- ``inverse+C/monotone``: ``inverse+C`` with IPOPT's default monotone
  barrier update (what the adaptive one saves; trots only);
- ``forward+C``: the forward-dynamics (ABA) formulation, compiled;
- ``contact``: the contact-dynamics formulation (12 torques per knot, forces
  ``f(x, u)``) on the backend its problem names (``solve_defaults``);
- ``contact/sqp``: the same problem by SQP (``sqpmethod``, each QP by HPIPM's
  Riccati interior point, Gauss-Newton Hessian, tangent charts): the
  structure-exploiting pipeline the real-time iteration steps with, run to
  convergence.

A configuration is a dict of the arguments of
``trajopt.solvers.solver_class(solver)(problem, transcription=..., options=...,
compile=..., hessian=..., chart=...)`` plus the problem's ``formulation``; a
key left out takes what :func:`trajopt.solve` would (the problem's
``solve_defaults``, then :data:`trajopt.solvers.BASE_DEFAULTS`; the factory's
default formulation and transcription), and ``cases`` limits it to some problems.

The peers (``bench/crocoddyl_peers.py``: crocoddyl's own trot and jump
helpers on our Go1 URDF and standing pose, same gait timing) run in the
benchmark-only environment ``bench/.venv-crocoddyl`` (crocoddyl 3.1.0 and
mim-solvers 0.2.0 on pinocchio 3.8.0), created by ``bench/crocoddyl_env.sh``
when missing (a clear message, and our rows only, when that fails, e.g.
offline): crocoddyl's FDDP (friction cone as a penalty, no torque limits) and
BoxFDDP (torque limits as control boxes), and mim-solvers' CSQP with the
friction pyramid, ``f_z >= 0`` and the torque limits as HARD constraints, with
mim-solvers' default, tight and loose QP settings (the jump: default only).

Every configuration runs ``--rounds`` times, interleaved with the peers (the
machine is shared and noisy: only ratios inside one run mean something), each
time solving ``--repeat`` times from the same initial guess; times are medians
over all solves. Columns:

- ``problem s``: building the :class:`trajopt.legged.LeggedProblem` (IK guess
  included) / crocoddyl's helper, shooting problem and solver;
- ``build s``: our NLP, its stage derivatives (compiling on a cold cache) and
  the ``casadi.nlpsol`` object;
- ``solve s``: time to converge (the backend's call / ``solver.solve``), split
  for ours into ``eval s`` (NLP function evaluations) and ``solver s`` (the
  backend's own work, e.g. IPOPT's MUMPS factorizations);
- ``RSS MB``: peak resident memory (``VmHWM``) of our worker, after imports
  in parentheses / of the whole peer process;
- ``viol``: ours: the largest constraint violation of the NLP (dynamics
  included); peers: the largest dynamics gap ``|x_{k+1} (-) f(x_k, u_k)|``;
- ``fric N``, ``tau Nm``: the worst violation of the friction pyramid (with
  ``f_z >= 0``, the problem's mu) and of the torque limits, computed by this
  bench (``bench/contact_checks.py``) from the returned plan, the same code
  for every row: ours from ``problem.contact_forces(states, controls)``
  (WORLD frame) and ``problem.joint_torques(controls)`` at the knots that
  have a control of their own (:func:`checked_knots`), the peers' from
  their contact datas after the solve (see ``bench/crocoddyl_peers.py``);
  ``tau/lim``: the largest ``|u| / limit``.

After each table, the ratios ours / peer of the time to converge. ``--cold``
first builds a configuration (default ``inverse+C``) of the trot against an
empty compile cache and reports the cold build (code generation and gcc, in
parallel), then compiles its stage functions one by one into another empty
cache for the gcc time of each (the largest ones listed).

    python bench/go1_trot.py [--rounds 2] [--repeat 3] [--cases trot,jump] [--configs inverse,inverse+C]
                             [--cold [CONFIG]] [--no-crocoddyl] [--ipopt '{"print_level": 0}'] [--json FILE]
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
sys.path.insert(0, str(ROOT / "bench"))

from contact_checks import friction_violation, torque_ratio, torque_violation  # noqa: E402
from run_info import run_info, write_result  # noqa: E402

#: Our configurations (module docstring): ``solver``, ``formulation``, ``transcription``,
#: ``compile``, ``hessian``, ``chart``, ``options`` (the backend's own), ``cases``.
CONFIGS: Dict[str, Dict[str, Any]] = {
    "inverse": {"solver": "ipopt", "formulation": "inverse", "compile": False},
    "inverse+C": {"solver": "ipopt", "formulation": "inverse", "compile": True},
    "inverse+C/monotone": {"solver": "ipopt", "formulation": "inverse", "compile": True, "options": {"mu_strategy": "monotone"}, "cases": ["trot", "trot-constrained"]},
    "forward+C": {"solver": "ipopt", "formulation": "forward", "compile": True},
    "contact": {"formulation": "contact"},  # the problem's solve_defaults for that formulation
    "contact/sqp": {"solver": "sqp", "formulation": "contact", "compile": True, "hessian": "gauss-newton", "chart": True},
}
HEADLINE = "inverse+C"
#: Backend arguments a configuration may leave out; :func:`backend_arguments` fills them in.
BACKEND_KEYS = ("solver", "compile", "hessian", "chart")
#: mim-solvers' CSQP with its default, tight and loose QP settings (``bench/crocoddyl_peers.py``).
CSQP_VARIANTS = ["csqp", "csqp/tight-qp", "csqp/loose-qp"]
#: The problems: registry name and parameters of ours; the peers' gait, friction coefficient,
#: torque-limit scale and solvers (``bench/crocoddyl_peers.py``). Both sides' mu and torque
#: limits are compared before printing (:func:`check_same_limits`).
CASES: Dict[str, Dict[str, Any]] = {
    "trot": {"problem": "go1-trot", "params": {"mu": 0.7, "torque_scale": 1.0}, "gait": "trot", "mu": 0.7, "torque_scale": 1.0, "solvers": ["fddp", "boxfddp", *CSQP_VARIANTS]},
    "trot-constrained": {"problem": "go1-trot", "params": {"mu": 0.3, "torque_scale": 0.6}, "gait": "trot", "mu": 0.3, "torque_scale": 0.6, "solvers": ["fddp", "boxfddp", *CSQP_VARIANTS]},
    "jump": {"problem": "go1-jump", "params": {"mu": 0.7}, "gait": "jump", "mu": 0.7, "torque_scale": 1.0, "solvers": ["boxfddp", "fddp", "csqp"]},
}
PEER_LIBRARY = {"fddp": "croc", "boxfddp": "croc"}  # every other peer solver is mim-solvers'


def rss_mb() -> float:
    """Peak resident memory of this process so far (MB): ``VmHWM``, which, unlike ``ru_maxrss``,
    does not inherit the parent's peak through fork and exec."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return float(line.split()[1]) / 1024.0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def runs_on(config: str, case: str) -> bool:
    """Whether configuration ``config`` is solved on problem ``case``."""
    return case in CONFIGS[config].get("cases", CASES)


def build_problem(config: Dict[str, Any], case: Dict[str, Any]) -> Any:
    """The case's registered problem, in the configuration's formulation when it names one."""
    import problems

    params = dict(case["params"])
    if config.get("formulation") is not None:
        params["formulation"] = config["formulation"]
    return problems.get(case["problem"], **params)


def backend_arguments(config: Dict[str, Any], problem: Any) -> Dict[str, Any]:
    """``solver``, ``compile``, ``hessian``, ``chart`` as :func:`trajopt.solve` resolves them:
    the configuration's, else the problem's ``solve_defaults``, else the base defaults."""
    from trajopt.solvers import SolverSettings

    chosen = SolverSettings(**{k: config[k] for k in BACKEND_KEYS if config.get(k) is not None}).resolved(problem)
    return {k: getattr(chosen, k) for k in BACKEND_KEYS}


def checked_knots(N: int, final_control: bool) -> Any:
    """The knots whose forces and torques the bench checks: those with a control of their own
    (all of them, or 0..N-2 when the final knot only holds knot N-2's control, as with multiple
    shooting; the plan's dynamics never use it, and the peers' terminal models have no control either)."""
    import numpy as np

    return np.arange(N if final_control else N - 1)


def worker(name: str, case_name: str, repeat: int, ipopt: Dict[str, Any]) -> Dict[str, Any]:
    """Build and solve one configuration on one problem ``repeat`` times in this process; its figures."""
    import numpy as np

    from trajopt.solvers import solver_class

    base_rss = rss_mb()
    config, case = CONFIGS[name], CASES[case_name]
    start = time.perf_counter()
    problem = build_problem(config, case)
    problem_s = time.perf_counter() - start
    chosen = backend_arguments(config, problem)
    options = {**config.get("options", {}), **(ipopt if chosen["solver"] == "ipopt" else {})}
    backend = solver_class(chosen["solver"])
    solver = backend(problem, transcription=config.get("transcription"), options=options, compile=chosen["compile"], hessian=chosen["hessian"], chart=chosen["chart"])
    solves = [solver.solve() for _ in range(repeat)]
    sol = solves[-1]
    knots = checked_knots(problem.N, solver.nlp.transcription.final_control)
    forces = problem.contact_forces(sol.states[knots], sol.controls[knots], knots)
    torques = problem.joint_torques(sol.controls[knots])
    limits = problem.robot.torque_limits()
    return {
        "name": name,
        "case": case_name,
        "backend": chosen,
        "formulation": problem.formulation,
        "transcription": solver.nlp.transcription.name,
        "problem_s": problem_s,
        "build_s": sol.build_time,
        "solve_s": [s.solve_time for s in solves],
        "eval_s": [s.eval_time for s in solves],
        "solver_s": [s.solver_time for s in solves],
        "iterations": sol.iterations,
        "status": sol.status,
        "success": sol.success,
        "violation": sol.max_violation,
        "mu": float(problem.robot.mu),
        "torque_limits": np.asarray(limits).tolist(),
        "friction_violation_n": friction_violation(forces, problem.robot.mu),
        "torque_violation_nm": torque_violation(torques, limits),
        "torque_ratio": torque_ratio(torques, limits),
        "n_w": solver.nlp.n_w,
        "n_g": solver.nlp.n_g,
        "rss_base_mb": base_rss,
        "rss_peak_mb": rss_mb(),
    }


def run_worker(name: str, case: str, repeat: int, ipopt: Dict[str, Any], env: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    """:func:`worker` in a fresh interpreter (its JSON is the last line of its output)."""
    cmd = [sys.executable, __file__, "--worker", name, "--case", case, "--repeat", str(repeat), "--ipopt", json.dumps(ipopt)]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    if out.returncode != 0:
        raise RuntimeError(f"worker {name} on {case} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def peer_python() -> Optional[str]:
    """The peers' benchmark environment's python (created on first use), or None with a message."""
    env_script = ROOT / "bench" / "crocoddyl_env.sh"
    out = subprocess.run(["bash", str(env_script)], capture_output=True, text=True)
    if out.returncode != 0:
        print(f"peers: could not create the crocoddyl + mim-solvers environment ({env_script}), comparing ours only:\n{out.stderr[-1500:]}", file=sys.stderr)
        return None
    return out.stdout.strip().splitlines()[-1]


def run_peers(python: str, cases: List[str], repeat: int) -> Dict[str, Any]:
    """``bench/crocoddyl_peers.py`` on our Go1 URDF and standing pose for ``cases``; its JSON."""
    from models import Go1

    robot = Go1()
    q0 = robot.init_state()[: robot.nq].tolist()
    specs = [{"name": c, **{k: CASES[c][k] for k in ("gait", "mu", "torque_scale", "solvers")}} for c in cases]
    cmd = [python, str(ROOT / "bench" / "crocoddyl_peers.py"), "--urdf", robot.urdf_path, "--q0", json.dumps(q0), "--repeat", str(repeat), "--cases", json.dumps(specs)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"crocoddyl_peers.py failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def print_gcc_times(config: Dict[str, Any], shown: int = 5) -> None:
    """Code generation and gcc time of each stage function of a configuration's trot NLP, compiled one by one."""
    from models.compiled import build_library
    from trajopt.solvers.derivatives import stage_functions
    from trajopt.nlp import NLP

    problem = build_problem(config, CASES["trot"])
    chosen = backend_arguments(config, problem)
    functions = stage_functions(NLP(problem, config.get("transcription"), chart=chosen["chart"]), chosen["hessian"])
    with tempfile.TemporaryDirectory() as cache:
        libs = sorted(((f, build_library(f, cache_dir=cache)) for f in functions), key=lambda fl: -fl[1].compile_seconds)
    total = sum(lib.codegen_seconds + lib.compile_seconds for _, lib in libs)
    print(f"gcc one by one: {len(libs)} stage functions, {total:.1f} s in all; largest:")
    for f, lib in libs[:shown]:
        print(f"  {f.name():36s} {f.n_instructions():7d} instructions  codegen {lib.codegen_seconds:5.2f} s  gcc {lib.compile_seconds:5.2f} s")


def merge(samples: List[Dict[str, Any]]) -> Dict[str, Any]:
    """One row from the rounds of one configuration: medians over all solves and builds."""
    row = dict(samples[-1])
    for key in ("solve_s", "eval_s", "solver_s"):
        row[key] = statistics.median(v for s in samples for v in s[key])
    for key in ("problem_s", "build_s"):
        row[key] = statistics.median(s[key] for s in samples)
    row["rss_peak_mb"] = max(s["rss_peak_mb"] for s in samples)
    return row


def merge_peers(rounds: List[Dict[str, Any]], case: str) -> List[Dict[str, Any]]:
    """The peer rows of one case from the rounds: medians over all solves and constructions."""
    per_round = [next(c for c in r["cases"] if c["name"] == case) for r in rounds]
    rows = []
    for i, first in enumerate(per_round[0]["results"]):
        row = dict(first)
        row["solve_s"] = statistics.median(t for c in per_round for t in c["results"][i]["solve_samples_s"])
        row["construction_s"] = statistics.median(c["results"][i]["construction_s"] for c in per_round)
        row["rss_peak_mb"] = max(r["rss_peak_mb"] for r in rounds)
        row["case_mu"], row["case_torque_limits"] = per_round[0]["mu"], per_round[0]["torque_limits"]
        rows.append(row)
    return rows


def check_same_limits(ours: List[Dict[str, Any]], peers: List[Dict[str, Any]], case: str) -> None:
    """Raise when our problem and the peers' do not use the same friction coefficient and torque limits."""
    import numpy as np

    for r in ours:
        for p in peers:
            if not (np.isclose(r["mu"], p["case_mu"]) and np.allclose(r["torque_limits"], p["case_torque_limits"], rtol=1e-12)):
                raise RuntimeError(f"{case}: ours ({r['name']}) has mu {r['mu']} and torque limits {r['torque_limits']}, the peers mu {p['case_mu']} and {p['case_torque_limits']}")


def peer_label(solver: str) -> str:
    return f"{PEER_LIBRARY.get(solver, 'mim')} {solver}"


def print_table(case: str, ours: List[Dict[str, Any]], peers: List[Dict[str, Any]]) -> None:
    spec = CASES[case]
    size = f"; ours {ours[0]['n_w']} variables, {ours[0]['n_g']} constraints ({ours[0]['name']})" if ours else ""
    size += f"; peers {peers[0]['models']} action models" if peers else ""
    print(f"\n{case}: {spec['problem']} {spec['params']} (mu {spec['mu']}, torque limits x {spec['torque_scale']}){size}")
    head = f"{'solver':18s} {'problem s':>9s} {'build s':>8s} {'solve s':>8s} {'iters':>5s} {'eval s':>7s} {'solver s':>8s} {'RSS MB':>11s} {'viol':>8s} {'fric N':>8s} {'tau Nm':>8s} {'tau/lim':>7s}  status"
    print(head)
    print("-" * len(head))
    for r in ours:
        rss = f"{r['rss_peak_mb']:.0f} ({r['rss_base_mb']:.0f})"
        print(
            f"{r['name']:18s} {r['problem_s']:9.3f} {r['build_s']:8.3f} {r['solve_s']:8.3f} {r['iterations']:5d} {r['eval_s']:7.3f} {r['solver_s']:8.3f} {rss:>11s} "
            f"{r['violation']:8.1e} {r['friction_violation_n']:8.1e} {r['torque_violation_nm']:8.1e} {r['torque_ratio']:7.3f}  {r['status']}"
        )
    for p in peers:
        status = f"{'converged' if p['converged'] else 'NOT converged'} ({p['stop_name']} {p['stop']:.1e})"
        print(
            f"{peer_label(p['solver']):18s} {p['construction_s']:9.3f} {'':>8s} {p['solve_s']:8.3f} {p['iterations']:5d} {'':>7s} {'':>8s} {p['rss_peak_mb']:11.0f} "
            f"{p['max_gap']:8.1e} {p['friction_violation_n']:8.1e} {p['torque_violation_nm']:8.1e} {p['torque_ratio']:7.3f}  {status}"
        )
    if peers:
        residual = max(p["dynamics_residual"] for p in peers)
        print(f"peers' world-frame forces against rnea(q, v, a) - tau = sum J^T f: largest residual {residual:.1e}")
    if ours and peers:
        print("time to converge, ours / peer:")
        print(f"  {'':18s}" + "".join(f"{peer_label(p['solver']):>18s}" for p in peers))
        for r in ours:
            print(f"  {r['name']:18s}" + "".join(f"{r['solve_s'] / p['solve_s']:18.2f}" for p in peers))


def print_peer_settings(rounds: List[Dict[str, Any]]) -> None:
    """The peers' versions and the CSQP settings used (read back from the solver objects)."""
    info = rounds[0]
    v = info["versions"]
    print(f"peers: crocoddyl {v['crocoddyl']}, mim-solvers {v['mim-solvers']}, pinocchio {v['pin']} (URDF from {info['urdf_source']}: {info['urdf']})")
    seen = {}
    for case in info["cases"]:
        for r in case["results"]:
            if "settings" in r and r["solver"] not in seen:
                seen[r["solver"]] = r["settings"]
    for solver, s in seen.items():
        print(f"  {solver}: " + ", ".join(f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}" for k, v in s.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3, help="solves per round and configuration")
    parser.add_argument("--configs", default=",".join(CONFIGS), help=f"comma-separated subset of {list(CONFIGS)}")
    parser.add_argument("--cases", default=",".join(CASES), help=f"comma-separated subset of {list(CASES)}")
    parser.add_argument("--ipopt", default="{}", help="IPOPT options (JSON) for our IPOPT solves")
    parser.add_argument("--cold", nargs="?", const=HEADLINE, default=None, metavar="CONFIG", help=f"first build CONFIG (default {HEADLINE}) on an empty compile cache")
    parser.add_argument("--no-crocoddyl", action="store_true", help="our rows only (no peers)")
    parser.add_argument("--json", metavar="FILE", help="also write every row, with the run's machine and versions, to FILE")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--case", help=argparse.SUPPRESS)
    args = parser.parse_args()
    ipopt = json.loads(args.ipopt)
    if args.worker:
        print(json.dumps(worker(args.worker, args.case, args.repeat, ipopt)))
        return

    names, cases = args.configs.split(","), args.cases.split(",")
    for arg, given, known in (("--configs", names, CONFIGS), ("--cases", cases, CASES), ("--cold", [args.cold] if args.cold else [], CONFIGS)):
        unknown = [n for n in given if n not in known]
        if unknown:
            parser.error(f"{arg}: unknown {unknown}; expected names from {list(known)}")
    if args.cold:
        with tempfile.TemporaryDirectory() as cache:
            cold = run_worker(args.cold, "trot", 1, ipopt, env={**os.environ, "TRAJOPT_CACHE": cache})
        print(f"cold compile cache: {args.cold} on the trot, build {cold['build_s']:.2f} s (code generation + gcc, parallel), then solve {cold['solve_s'][0]:.3f} s")
        print_gcc_times(CONFIGS[args.cold])
    info = run_info()
    load_start = os.getloadavg()
    python = None if args.no_crocoddyl else peer_python()
    runs = [(n, c) for c in cases for n in names if runs_on(n, c)]
    samples: Dict[tuple, List[Dict[str, Any]]] = {run: [] for run in runs}
    peer_rounds: List[Dict[str, Any]] = []
    for _ in range(args.rounds):
        if python:
            peer_rounds.append(run_peers(python, cases, args.repeat))
        for n, c in runs:
            samples[(n, c)].append(run_worker(n, c, args.repeat, ipopt))
    load = " / ".join(" ".join(f"{x:.2f}" for x in avg) for avg in (load_start, os.getloadavg()))
    print(f"{args.rounds} rounds x {args.repeat} solves, medians; load average (1, 5, 15 min) at the start / end: {load}")
    for n in names:
        row = next((samples[(n, c)][-1] for c in cases if runs_on(n, c)), None)
        if row:
            b = row["backend"]
            print(f"  {n}: {row['formulation']} formulation, {row['transcription']}, {b['solver']}, hessian {b['hessian']}, chart {b['chart']}, compile {b['compile']}")
    if peer_rounds:
        print_peer_settings(peer_rounds)
    tables = {}
    for c in cases:
        ours = [merge(samples[(n, c)]) for n in names if runs_on(n, c)]
        peers = merge_peers(peer_rounds, c) if peer_rounds else []
        check_same_limits(ours, peers, c)
        print_table(c, ours, peers)
        tables[c] = {"problem": CASES[c]["problem"], "params": CASES[c]["params"], "ours": ours, "peers": peers}
    if args.json:
        settings = {"rounds": args.rounds, "repeat": args.repeat, "configs": {n: CONFIGS[n] for n in names}, "peers": peer_rounds[0]["versions"] if peer_rounds else None}
        write_result(args.json, "go1_trot", info, settings, cases=tables)


if __name__ == "__main__":
    main()
