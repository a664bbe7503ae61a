"""Per-iteration cost of IPOPT (sparse LDL^T by MUMPS) against fatrop (Riccati) at Go1 trot stage sizes.

Would a structure-exploiting interior-point solver close the gap to crocoddyl
on the Go1 trot (``bench/go1_trot.py``)? This bench isolates the solvers' own
linear algebra on a synthetic optimal-control QP with the trot's horizon
(N = 31 knots) and stage sizes, so that the answer does not depend on our
dynamics or transcription::

    minimize    sum_k |x_k|^2 + 0.1 |u_k|^2
    subject to  x_{k+1} = A_k x_k + B_k u_k               (nx rows, fatrop's gaps)
                C_k x_k + D_k u_k = 0                     (n_eq rows per stage)
                E_k [x_k; u_k] >= -1                      (20 rows per stage)
                |u_k| <= 10,   x_0 fixed

with seeded random ``A_k`` (near identity), ``B_k``, ``C_k``, ``D_k``,
``E_k``. Sizes: ``nx`` 36 (the Go1's tangent state) and

- ``nu`` 42, ``n_eq`` 18: our inverse-dynamics formulation (accelerations,
  torques and forces as controls, the RNEA residual as stage equalities);
- ``nu`` 24: torques and forces, forward dynamics;
- ``nu`` 12: torques only, forces eliminated by contact dynamics (crocoddyl's
  formulation).

Both solvers start from zero, stop after ``--iterations`` iterations (the
figure is a cost per iteration, converged or not), and report their own time
per iteration: the solve minus NLP function evaluations
(``t_wall_nlp_*``), medians over ``--repeat`` solves. IPOPT runs with our
defaults (MUMPS, QAMD ordering).

    python bench/stage_linear_algebra.py [--repeat 5] [--iterations 15]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import casadi as ca
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.solver_runs import eval_time  # noqa: E402
from trajopt.solvers.ipopt import DEFAULT_IPOPT_OPTIONS  # noqa: E402

N, NX, N_INEQ = 31, 36, 20
SIZES = {"inverse (nu 42, 18 eq)": (42, 18), "forward (nu 24)": (24, 0), "crocoddyl-like (nu 12)": (12, 0)}


def stage_qp(nu: int, n_eq: int, seed: int = 0):
    """The QP (module docstring) as an NLP dict, its solver arguments and fatrop's stage sizes."""
    rng = np.random.default_rng(seed)
    X = [ca.MX.sym(f"x{k}", NX) for k in range(N)]
    U = [ca.MX.sym(f"u{k}", nu) for k in range(N - 1)]
    x_start = rng.standard_normal(NX)
    w, g, lbw, ubw, lbg, ubg, cost = [], [], [], [], [], [], 0
    for k in range(N):
        w.append(X[k])
        lbw += list(x_start) if k == 0 else [-np.inf] * NX
        ubw += list(x_start) if k == 0 else [np.inf] * NX
        cost += ca.sumsqr(X[k])
        if k == N - 1:
            break
        A, B = np.eye(NX) + 0.05 * rng.standard_normal((NX, NX)), 0.1 * rng.standard_normal((NX, nu))
        C, D, E = rng.standard_normal((n_eq, NX)), rng.standard_normal((n_eq, nu)), rng.standard_normal((N_INEQ, NX + nu))
        w.append(U[k])
        lbw += [-10.0] * nu
        ubw += [10.0] * nu
        cost += 0.1 * ca.sumsqr(U[k])
        g += [X[k + 1] - A @ X[k] - B @ U[k], C @ X[k] + D @ U[k], E @ ca.vertcat(X[k], U[k])]
        lbg += [0.0] * (NX + n_eq) + [-1.0] * N_INEQ
        ubg += [0.0] * (NX + n_eq) + [np.inf] * N_INEQ
    nlp = {"x": ca.vertcat(*w), "f": cost, "g": ca.vertcat(*g)}
    args = {"x0": np.zeros(nlp["x"].numel()), "lbx": lbw, "ubx": ubw, "lbg": lbg, "ubg": ubg}
    stages = {"N": N - 1, "nx": [NX] * N, "nu": [nu] * (N - 1) + [0], "ng": [n_eq + N_INEQ] * (N - 1) + [0]}
    return nlp, args, stages


def per_iteration(solver: ca.Function, args: dict, repeat: int) -> tuple:
    """Median own time per iteration (s) and the iteration count."""
    own, iterations = [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        solver(**args)
        stats = solver.stats()
        iterations = max(int(stats["iter_count"]), 1)
        own.append((time.perf_counter() - start - eval_time(stats)) / iterations)
    return statistics.median(own), iterations


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="solves per row (median reported)")
    parser.add_argument("--iterations", type=int, default=15, help="iterations per solve (both solvers)")
    opts = parser.parse_args(argv)
    ipopt = {**DEFAULT_IPOPT_OPTIONS, "print_level": 0, "max_iter": opts.iterations}
    print(f"synthetic stage QP, N = {N}, nx = {NX}, {N_INEQ} inequalities per stage; own time per iteration, medians of {opts.repeat}")
    print(f"{'stage sizes':24s} {'IPOPT ms/it':>11s} {'fatrop ms/it':>12s} {'fatrop/IPOPT':>12s}")
    ratios = []
    for label, (nu, n_eq) in SIZES.items():
        nlp, args, stages = stage_qp(nu, n_eq)
        common = {"expand": True, "print_time": False, "error_on_fail": False}
        t_ipopt, _ = per_iteration(ca.nlpsol("ipopt", "ipopt", nlp, {**common, "ipopt": ipopt}), args, opts.repeat)
        fatrop = ca.nlpsol("fatrop", "fatrop", nlp, {**common, "structure_detection": "manual", **stages, "fatrop": {"print_level": 0, "max_iter": opts.iterations}})
        t_fatrop, _ = per_iteration(fatrop, args, opts.repeat)
        ratios.append(f"{label.split(' ')[0]} {t_fatrop / t_ipopt:.2f}")
        print(f"{label:24s} {t_ipopt * 1e3:11.2f} {t_fatrop * 1e3:12.2f} {t_fatrop / t_ipopt:12.2f}")
    print("fatrop / IPOPT own time per iteration: " + ", ".join(ratios))
    return 0


if __name__ == "__main__":
    sys.exit(main())
