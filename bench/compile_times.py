"""Where gcc's time goes on compiled stage functions, and the cold first solve it delays.

Cases (:data:`CASES`), each with the backend settings it is solved with:

- ``inverse``: ``go1-trot``, ``compile=True`` (IPOPT, exact Hessian);
- ``contact``: ``go1-trot`` with ``formulation="contact"`` on its defaults
  (fatrop, Gauss-Newton Hessian, tangent charts, compiled);
- ``mpc``: the horizon problem of ``LeggedMPC(Go1(mu=0.7))`` on its own
  transcription with the MPC's backend, ``RtiSolver(problem, transcription,
  hessian="gauss-newton", chart=True, compile=True)``.

``--cold`` (the acceptance measurement): each case solved by a fresh
Python process on a fresh temporary cache (``TRAJOPT_CACHE``; the shared
``~/.cache/trajopt`` is never touched), then by a second process on the now
warm cache. Columns: ``first it. s`` (process start to the solver's first
iteration: imports, problem, NLP, C generation and gcc), ``solve s`` (the
backend's solve), ``gcc CPU s`` (user + system time of the compilers, which
load on a shared machine changes much less than wall time), ``iterations``.
``--baseline TREE`` runs the same processes on another source tree (e.g. a
``git archive`` of main) in the same run, interleaved with ours, so before
and after meet the same load.

``--functions`` (where the time goes): every stage function of the cases
that is compiled, with its SX instructions, lines of generated C, and for
each optimisation level of ``--levels`` the gcc CPU time of CasADi's C as it
is (``plain``) and of the chunked C (:mod:`models.chunked_c`, split into
files compiled in parallel), the seconds of C generation (CasADi, plus the
rewriting for the chunked C), and the run
time per evaluation (one ``Function.map`` call over ``--points`` random
inputs, divided by their number; median of ``--repeat`` interleaved
samples) of each build and of CasADi's virtual machine. Every compiled
result is checked against the virtual machine (``max rel``, relative with
a floor of 1; NaN equal to NaN).

    python bench/compile_times.py --cold [--cases contact] [--rounds 1] [--baseline /tmp/main-tree]
    python bench/compile_times.py --functions [--cases inverse contact mpc] [--largest 6] [--levels O0 O1 O2 Os]

The load average is printed at the start and the end: compare rows of one run only.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Sequence

ROOT = Path(__file__).resolve().parents[1]
START = time.perf_counter()

#: The cases: how the child process builds the solver (only public API, so an older tree runs it too).
CASES = {
    "inverse": "go1-trot, compile=True (IPOPT)",
    "contact": "go1-trot -p formulation=contact (fatrop, Gauss-Newton, compiled)",
    "mpc": "LeggedMPC(Go1(mu=0.7)).problem, RtiSolver(..., compile=True) (the MPC's horizon and backend)",
}


def load() -> str:
    return "load average " + ", ".join(f"{v:.2f}" for v in os.getloadavg())


def case_setup(case: str) -> tuple:
    """``(problem, transcription, backend class, hessian, chart)`` of ``case`` (imports the toolkit on ``sys.path``)."""
    import problems
    from trajopt.solvers import SolverSettings, solver_class

    if case == "mpc":
        from models import Go1
        from trajopt.mpc.legged import LeggedMPC
        from trajopt.solvers.rti import RtiSolver

        problem = LeggedMPC(Go1(mu=0.7)).problem
        return problem, problem.default_transcription, RtiSolver, "gauss-newton", True
    problem = problems.get("go1-trot", formulation="contact") if case == "contact" else problems.get("go1-trot")
    chosen = SolverSettings(compile=True).resolved(problem)
    return problem, None, solver_class(chosen.solver), chosen.hessian, chosen.chart


def child(case: str) -> Dict[str, Any]:
    """In a fresh process: build and solve ``case``; the timings (``--cold`` columns)."""
    problem, transcription, backend, hessian, chart = case_setup(case)
    solution = backend(problem, transcription=transcription, compile=True, hessian=hessian, chart=chart).solve()
    first_iteration = time.perf_counter() - START - solution.solve_time
    gcc = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "first_iteration_s": first_iteration,
        "solve_s": solution.solve_time,
        "gcc_cpu_s": gcc.ru_utime + gcc.ru_stime,
        "iterations": int(solution.iterations),
        "success": bool(solution.success),
        "objective": float(solution.objective),
    }


def run_child(tree: Path, case: str, cache: str) -> Dict[str, Any]:
    """``child(case)`` in a new process importing ``tree``, with ``cache`` as ``TRAJOPT_CACHE``."""
    env = {**os.environ, "TRAJOPT_CACHE": cache, "PYTHONPATH": str(tree), "MPLBACKEND": "Agg"}
    start = time.perf_counter()
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", case, "--tree", str(tree)], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{case} on {tree} failed:\n{out.stderr[-3000:]}")
    return {**json.loads(out.stdout.strip().splitlines()[-1]), "process_s": time.perf_counter() - start}


def cold(cases: Sequence[str], trees: Dict[str, Path], rounds: int) -> None:
    """The ``--cold`` table: cold then warm solve of every case on every tree, ``rounds`` times, interleaved."""
    rows: List[Dict[str, Any]] = []
    for r in range(rounds):
        for case in cases:
            for label, tree in trees.items():
                cache = tempfile.mkdtemp(prefix="trajopt-cold-")
                try:
                    for state in ("cold", "warm"):
                        rows.append({"round": r, "case": case, "tree": label, "cache": state, **run_child(tree, case, cache)})
                        print(f"  {case:8s} {label:9s} {state}: {rows[-1]['first_iteration_s']:.1f} s to the first iteration ({load()})", flush=True)
                finally:
                    shutil.rmtree(cache, ignore_errors=True)
    print(f"\n| case | tree | cache | first it. s | solve s | gcc CPU s | iterations | process s |\n|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row['case']} | {row['tree']} | {row['cache']} | {row['first_iteration_s']:.1f} | {row['solve_s']:.3f} | {row['gcc_cpu_s']:.1f} | "
            f"{row['iterations']}{'' if row['success'] else ' (failed)'} | {row['process_s']:.1f} |"
        )


def stage_functions_of(case: str) -> List[Any]:
    """The stage functions ``compile=True`` compiles for ``case`` (the backend's own selection)."""
    from trajopt.nlp import NLP
    from trajopt.solvers.derivatives import stage_functions

    problem, transcription, backend, hessian, chart = case_setup(case)
    return stage_functions(NLP(problem, transcription, chart=chart), hessian, backend.uses_lag_grad)


def evaluation_timer(f: Any, points: int, seed: int = 0) -> tuple:
    """``(inputs, mapped call)``: ``points`` random inputs of ``f`` and a timer of one mapped call per point (s)."""
    import casadi as ca
    import numpy as np

    rng = np.random.default_rng(seed)
    inputs = [ca.DM(0.3 * rng.standard_normal((f.nnz_in(i), points))) for i in range(f.n_in())]
    return inputs, lambda g: _time_per_point(g.map(points), inputs, points)


def _time_per_point(mapped: Any, inputs: List[Any], points: int) -> float:
    start = time.perf_counter()
    mapped(*inputs)
    return (time.perf_counter() - start) / points


def max_relative_error(a: Any, b: Any, inputs: List[Any], points: int) -> float:
    """Largest ``|a - b| / max(1, |b|)`` over the outputs of the mapped ``a`` and ``b`` (NaN equal to NaN)."""
    import numpy as np

    out_a, out_b = a.map(points)(*inputs), b.map(points)(*inputs)
    pairs = zip(out_a, out_b) if isinstance(out_a, (list, tuple)) else [(out_a, out_b)]
    worst = 0.0
    for x, y in pairs:
        x, y = np.array(x, dtype=float), np.array(y, dtype=float)
        both_nan = np.isnan(x) & np.isnan(y)
        diff = np.where(both_nan, 0.0, np.abs(x - y) / np.maximum(1.0, np.abs(y)))
        worst = max(worst, float(np.nan_to_num(diff, nan=np.inf).max(initial=0.0)))
    return worst


def c_lines(f: Any, chunk: Any) -> int:
    """Lines of the C generated for ``f`` (chunked with ``chunk`` statements unless ``None``)."""
    import casadi as ca

    from models.chunked_c import chunk_source

    with tempfile.TemporaryDirectory() as tmp:
        source = ca.CodeGenerator(f"{f.name()}.c", {"with_header": False})
        source.add(f)
        text = Path(source.generate(tmp + os.sep)).read_text()
    return (chunk_source(text, chunk) if chunk else text).count("\n")


def functions_table(cases: Sequence[str], largest: int, opts: Sequence[str], points: int, repeat: int) -> None:
    """The ``--functions`` table (module docstring)."""
    from models.chunked_c import CHUNK_STATEMENTS
    from models.compiled import build_library

    builds = [(opt, None) for opt in opts] + [(opt, CHUNK_STATEMENTS) for opt in opts]
    label = {b: f"{b[0]} {'chunked' if b[1] else 'plain'}" for b in builds}
    for case in cases:
        functions = sorted(stage_functions_of(case), key=lambda f: -f.n_instructions())
        total = sum(f.n_instructions() for f in functions)
        print(f"\n{case}: {CASES[case]}: {len(functions)} stage functions, {total} SX instructions; the {min(largest, len(functions))} largest ({load()})")
        print("| function | instr. | C lines plain / chunked | codegen s plain / chunked | " + " | ".join(f"gcc CPU s {label[b]}" for b in builds) + " | VM us | " + " | ".join(f"us {label[b]}" for b in builds) + " | max rel |")
        print("|---" * (5 + 2 * len(builds)) + "|---|")
        with tempfile.TemporaryDirectory() as cache:
            for f in functions[:largest]:
                libs = {b: build_library(f, opt=b[0], cache_dir=cache, chunk=b[1]) for b in builds}
                compiled = {b: lib.load() for b, lib in libs.items()}
                inputs, timer = evaluation_timer(f, points)
                samples: Dict[Any, List[float]] = {k: [] for k in ["vm", *builds]}
                for _ in range(repeat):
                    samples["vm"].append(timer(f))
                    for b in builds:
                        samples[b].append(timer(compiled[b]))
                us = {k: 1e6 * statistics.median(v) for k, v in samples.items()}
                error = max(max_relative_error(compiled[b], f, inputs, points) for b in builds)
                print(
                    f"| {f.name()} | {f.n_instructions()} | {c_lines(f, None)} / {c_lines(f, CHUNK_STATEMENTS)} | "
                    + f"{libs[builds[0]].codegen_seconds:.1f} / {libs[builds[-1]].codegen_seconds:.1f} | "
                    + " | ".join(f"{libs[b].compiler_cpu_seconds:.2f}" for b in builds)
                    + f" | {us['vm']:.2f} | "
                    + " | ".join(f"{us[b]:.2f}" for b in builds)
                    + f" | {error:.1e} |",
                    flush=True,
                )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cold", action="store_true", help="cold and warm first solves in fresh processes")
    parser.add_argument("--functions", action="store_true", help="gcc time and run time of every stage function")
    parser.add_argument("--cases", nargs="+", choices=sorted(CASES), default=["contact"], help="the cases (default: contact)")
    parser.add_argument("--rounds", type=int, default=1, help="--cold: repetitions, interleaved")
    parser.add_argument("--baseline", type=Path, help="--cold: another source tree run beside ours, e.g. a `git archive` of main")
    parser.add_argument("--largest", type=int, default=6, help="--functions: how many of each case's largest functions")
    parser.add_argument("--levels", nargs="+", default=["O0", "O1", "O2", "Os"], help="--functions: gcc optimisation levels (without the dash)")
    parser.add_argument("--points", type=int, default=100, help="--functions: inputs per mapped call")
    parser.add_argument("--repeat", type=int, default=9, help="--functions: timing samples (median)")
    parser.add_argument("--child", choices=sorted(CASES), help=argparse.SUPPRESS)
    parser.add_argument("--tree", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(args.tree))
    if args.child:
        print(json.dumps(child(args.child)))
        return 0
    if not (args.cold or args.functions):
        parser.error("give --cold and/or --functions")
    print(f"{load()} on {os.cpu_count()} CPUs; gcc {subprocess.run(['gcc', '-dumpfullversion'], capture_output=True, text=True).stdout.strip()}")
    if args.functions:
        functions_table(args.cases, args.largest, [f"-{level}" for level in args.levels], args.points, args.repeat)
    if args.cold:
        trees = {"ours": ROOT, **({"baseline": args.baseline.resolve()} if args.baseline else {})}
        cold(args.cases, trees, args.rounds)
    print(load())
    return 0


if __name__ == "__main__":
    sys.exit(main())
