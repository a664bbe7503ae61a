"""fatrop and HPIPM on CasADi's bundled BLASFEO against a BLASFEO built for this CPU.

fatrop's Riccati recursion and HPIPM (the QP solver inside SQP) do their
dense linear algebra in BLASFEO. The CasADi 3.8.2 wheel ships BLASFEO 0.1.4.2
compiled for ``TARGET=GENERIC`` (plain C 4x4 kernels, no AVX) whatever the CPU.
How much of the gap to crocoddyl (issue 12, ``bench/go1_trot.py``) comes from
that? This bench runs the same solves twice, each in a child process: once on
the bundled library, once on ``--blasfeo PATH``, a BLASFEO 0.1.4.x shared
library built for this CPU. The second child reaches it through
``LD_LIBRARY_PATH``: a temporary directory holds it as ``libblasfeo.so.0``,
the name CasADi's fatrop and HPIPM libraries ask for; they look for it in their
RUNPATH (``$ORIGIN``), which ``LD_LIBRARY_PATH`` precedes. Each child reports
the BLASFEO file it mapped, so a run that silently kept the bundled one is
refused.

Rows:

- fatrop on the synthetic stage QP of ``bench/stage_linear_algebra.py`` at
  the Go1 trot's horizon, with our inverse-dynamics, forward and
  crocoddyl-like stage sizes;
- fatrop and SQP + HPIPM on ``go1-trot`` with ``formulation="contact"``
  (compiled stage functions, Gauss-Newton Hessian, tangent charts: the
  problem's defaults).

Printed per row and library: iterations, the solver's own time per iteration
(the solve minus NLP function evaluations; median over ``--repeat`` solves)
and the ratio of the two. Both libraries must give the same solve: objectives within 1e-8
relative (the iteration counts are printed for both; other kernels round
differently and may take a path one iteration longer), else the row says
``DIFFERENT`` and the script exits with 1. A library whose panel size differs
from the one the plugins were compiled with (4 doubles; e.g.
``TARGET=X64_INTEL_SKYLAKE_X`` uses 8) computes wrong steps; measured with that target, the
child did not finish and was stopped (after 5 times the bundled child's time
plus a minute), with a one-line error and exit status 2.

Build BLASFEO once (BSD-2 licence; not part of the install, nothing is
downloaded at run time)::

    git clone --branch 0.1.4.2 https://github.com/giaf/blasfeo
    cmake -S blasfeo -B blasfeo/build -DTARGET=X64_INTEL_HASWELL -DBUILD_SHARED_LIBS=ON -DCMAKE_BUILD_TYPE=Release
    cmake --build blasfeo/build -j2
    python bench/blasfeo_kernels.py --blasfeo blasfeo/build/libblasfeo.so [--repeat 5]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: Problem rows: backend and its name in the table.
CONTACT_BACKENDS = {"fatrop": "go1-trot contact, fatrop", "sqp": "go1-trot contact, SQP+HPIPM"}
#: Iterations of each synthetic solve (``bench/stage_linear_algebra.py``'s default).
SYNTHETIC_ITERATIONS = 15
#: The child on the given library is stopped after this many times the bundled child's wall time (plus a minute).
CHILD_TIMEOUT_FACTOR = 5.0
#: Largest relative difference of the two libraries' objectives accepted as the same solve.
SAME_OBJECTIVE = 1e-8


def synthetic_rows(repeat: int) -> List[Dict[str, Any]]:
    """fatrop on ``bench/stage_linear_algebra.py``'s stage QP, at each of its stage sizes, stopped
    after :data:`SYNTHETIC_ITERATIONS` iterations as there (the figure is a cost per iteration)."""
    import casadi as ca

    from bench.stage_linear_algebra import SIZES, per_iteration, stage_qp

    rows = []
    for label, (nu, n_eq) in SIZES.items():
        nlp, args, stages = stage_qp(nu, n_eq)
        options = {"expand": True, "print_time": False, "error_on_fail": False, "structure_detection": "manual", **stages, "fatrop": {"print_level": 0, "max_iter": SYNTHETIC_ITERATIONS}}
        solver = ca.nlpsol("fatrop", "fatrop", nlp, options)
        own, iterations = per_iteration(solver, args, repeat)
        rows.append({"row": f"synthetic {label}, fatrop", "iterations": iterations, "own_ms": own * 1e3, "objective": float(solver(**args)["f"])})
    return rows


def contact_rows(repeat: int) -> List[Dict[str, Any]]:
    """fatrop and SQP + HPIPM on the contact-formulation Go1 trot (the problem's solve defaults)."""
    import problems
    from trajopt.solvers import SolverSettings, build_solver

    problem = problems.get("go1-trot", formulation="contact")
    rows = []
    for backend, label in CONTACT_BACKENDS.items():
        solver = build_solver(problem, SolverSettings(solver=backend))
        solves = [solver.solve() for _ in range(repeat)]
        last = solves[-1]
        if not last.success:
            raise RuntimeError(f"{label}: {last.status}")
        own = statistics.median(s.solver_time / max(s.iterations, 1) for s in solves)
        rows.append({"row": label, "iterations": last.iterations, "own_ms": own * 1e3, "objective": float(last.objective)})
    return rows


def child(repeat: int) -> int:
    """Measure every row in this process and print them with the mapped BLASFEO files as JSON."""
    from trajopt.solvers.blas import mapped_libraries

    rows = synthetic_rows(repeat) + contact_rows(repeat)
    print(json.dumps({"blasfeo": mapped_libraries("libblasfeo"), "rows": rows}))
    return 0


def run_child(repeat: int, library: Optional[Path], timeout: Optional[float] = None) -> Dict[str, Any]:
    """Run :func:`child` in a fresh process, on ``library`` (``libblasfeo.so.0`` in
    ``LD_LIBRARY_PATH``) or on CasADi's bundled BLASFEO (``None``), stopped after
    ``timeout`` seconds; the report has the child's wall time as ``wall_s``."""
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as directory:
        if library is not None:
            (Path(directory) / "libblasfeo.so.0").symlink_to(library)
            env["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in (directory, env.get("LD_LIBRARY_PATH", "")) if p)
        start = time.perf_counter()
        try:
            out = subprocess.run([sys.executable, __file__, "--child", "--repeat", str(repeat)], env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"child process stopped after {timeout:.0f} s without an answer (a library of another panel size: module docstring)") from None
        if out.returncode:
            raise RuntimeError(f"child process failed:\n{out.stderr[-2000:]}")
        report = json.loads(out.stdout.strip().splitlines()[-1])
        if library is not None and report["blasfeo"] != [str(library)]:  # maps name the link's target
            raise RuntimeError(f"--blasfeo: the child mapped {report['blasfeo']}, not {library}")
    return {**report, "wall_s": time.perf_counter() - start}


def same_solve(a: Dict[str, Any], b: Dict[str, Any]) -> bool:
    """Objectives within :data:`SAME_OBJECTIVE` relative. The iteration counts may differ by
    one or two: the kernels round differently (fused multiply-adds), which can change the path."""
    scale = max(abs(a["objective"]), abs(b["objective"]), 1.0)
    return abs(a["objective"] - b["objective"]) <= SAME_OBJECTIVE * scale


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blasfeo", type=Path, help="a BLASFEO 0.1.4.x shared library built for this CPU (module docstring)")
    parser.add_argument("--repeat", type=int, default=5, help="solves per row (median reported)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    opts = parser.parse_args(argv)
    if opts.repeat < 1:
        parser.error(f"--repeat: expected a positive count, got {opts.repeat}")
    if opts.child:
        return child(opts.repeat)
    if opts.blasfeo is None:
        parser.error("--blasfeo: give the BLASFEO library to compare with (module docstring: how to build it)")
    library = opts.blasfeo.resolve()
    if not library.is_file():
        parser.error(f"--blasfeo: no such file: {opts.blasfeo}")
    try:
        bundled = run_child(opts.repeat, None)
        built = run_child(opts.repeat, library, timeout=CHILD_TIMEOUT_FACTOR * bundled["wall_s"] + 60.0)
    except RuntimeError as err:
        print(f"blasfeo_kernels: {err}", file=sys.stderr)
        return 2
    print(f"bundled: {', '.join(bundled['blasfeo'])}\nbuilt:   {library}\nown time per iteration, medians of {opts.repeat}")
    print(f"{'row':44s} {'iters':>7s} {'bundled ms/it':>13s} {'built ms/it':>11s} {'built/bundled':>13s}  same optimum")
    all_same = True
    for a, b in zip(bundled["rows"], built["rows"]):
        same = same_solve(a, b)
        all_same &= same
        iterations = f"{a['iterations']}/{b['iterations']}" if a["iterations"] != b["iterations"] else str(a["iterations"])
        verdict = "yes" if same else f"DIFFERENT: objectives {a['objective']:.12g} / {b['objective']:.12g}"
        print(f"{a['row']:44s} {iterations:>7s} {a['own_ms']:13.2f} {b['own_ms']:11.2f} {b['own_ms'] / a['own_ms']:13.2f}  {verdict}")
    return 0 if all_same else 1


if __name__ == "__main__":
    sys.exit(main())
