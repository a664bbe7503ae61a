"""Cartpole swing-up: ours (IPOPT and fatrop) against a hand-written CasADi NLP (IPOPT and fatrop).

The problem is the registered "cartpole" with N = 51 knots (50 intervals of
dt = 0.05 s, tf = 2.5 s), transcribed by RK4 multiple shooting (the explicit
gaps fatrop needs): cart 1 kg, pole 1 kg at 1 m, from hanging at rest to
upright at rest, |force| <= 20 N, cost ``integral 1/2 (0.01 |x|^2 + 0.01 u^2)
dt`` integrated by the same RK4 steps, initial guess the straight line in state
space with zero force. The hand-written NLP is what a CasADi user writes
without us: explicit cartpole equations, one RK4 step with the cost as a
quadrature state, stage-ordered variables ``x0, u0, x1, u1, ..., x50`` and
gaps ``x_{k+1} - F(x_k, u_k)``, ``expand=True``; fatrop reads its structure
with ``structure_detection="auto"`` (fatrop's detection of the stage
structure from the order of the variables and constraints).

Rows (:mod:`bench.solver_runs` explains the columns): ours with IPOPT on
CasADi's virtual machine and compiled (``compile=True``), ours with fatrop on
the virtual machine and compiled, then the hand-written NLP with IPOPT and
fatrop. The last line gives the ratios; the issue's target is ours-with-fatrop
(compiled) at most 0.7x the hand-written NLP with fatrop.

    python bench/cartpole.py [--repeat 21]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import casadi as ca  # noqa: E402
import numpy as np  # noqa: E402

import problems  # noqa: E402
from bench.solver_runs import handwritten, measure, ours, print_table  # noqa: E402
from trajopt import IpoptSolver  # noqa: E402
from trajopt.solvers.fatrop import FatropSolver, return_status  # noqa: E402

N, DT = 50, 0.05  # intervals, step (s)
M_CART, M_POLE, LENGTH, GRAVITY, U_MAX = 1.0, 1.0, 1.0, 9.81, 20.0
Q, R = 0.01, 0.01
X_START, X_GOAL = np.array([0.0, np.pi, 0.0, 0.0]), np.zeros(4)


def cartpole_ode() -> ca.Function:
    """``xdot = f(x, u)`` for ``x = [y, theta, ydot, thetadot]``, theta = 0 up.

    Lagrange's equations of the cart and the pole's tip mass::

        [mc + mp, -mp l c; -mp l c, mp l^2] [ydd; thdd] = [u - mp l s thd^2; mp g l s]

    (``s, c = sin(theta), cos(theta)``), solved by Cramer's rule.
    """
    x, u = ca.SX.sym("x", 4), ca.SX.sym("u")
    s, c, thd = ca.sin(x[1]), ca.cos(x[1]), x[3]
    r0, r1 = u - M_POLE * LENGTH * s * thd**2, M_POLE * GRAVITY * LENGTH * s
    det = (M_CART + M_POLE) * M_POLE * LENGTH**2 - (M_POLE * LENGTH * c) ** 2
    ydd = (M_POLE * LENGTH**2 * r0 + M_POLE * LENGTH * c * r1) / det
    thdd = (M_POLE * LENGTH * c * r0 + (M_CART + M_POLE) * r1) / det
    return ca.Function("f", [x, u], [ca.vertcat(x[2], x[3], ydd, thdd)])


def rk4_step() -> ca.Function:
    """``(x_next, J) = F(x, u)``: one RK4 step of ``(x, J)' = (f(x, u), l(x, u))`` from ``(x, 0)``."""
    f = cartpole_ode()
    x, u = ca.SX.sym("x", 4), ca.SX.sym("u")

    def rate(xi):
        return f(xi, u), 0.5 * Q * ca.sumsqr(xi - X_GOAL) + 0.5 * R * u**2

    k1, q1 = rate(x)
    k2, q2 = rate(x + DT / 2 * k1)
    k3, q3 = rate(x + DT / 2 * k2)
    k4, q4 = rate(x + DT * k3)
    return ca.Function("F", [x, u], [x + DT / 6 * (k1 + 2 * k2 + 2 * k3 + k4), DT / 6 * (q1 + 2 * q2 + 2 * q3 + q4)])


def handwritten_nlp():
    """The NLP dict, the solver arguments, the equality flags of ``g`` and the state indices (N + 1, 4)."""
    F = rk4_step()
    X = [ca.MX.sym(f"x{k}", 4) for k in range(N + 1)]
    U = [ca.MX.sym(f"u{k}") for k in range(N)]
    w, gaps, J = [], [], 0
    for k in range(N):
        x_next, cost = F(X[k], U[k])
        w += [X[k], U[k]]
        gaps.append(X[k + 1] - x_next)
        J += cost
    w.append(X[N])
    g = ca.vertcat(*gaps, X[N] - X_GOAL)
    state_index = np.array([np.arange(4) + 5 * k for k in range(N + 1)])
    lbx, ubx = np.full(5 * N + 4, -np.inf), np.full(5 * N + 4, np.inf)
    lbx[4 : 5 * N : 5], ubx[4 : 5 * N : 5] = -U_MAX, U_MAX
    lbx[:4] = ubx[:4] = X_START
    x0 = np.zeros(5 * N + 4)
    x0[state_index] = np.linspace(X_START, X_GOAL, N + 1)
    args = {"x0": x0, "lbx": lbx, "ubx": ubx, "lbg": np.zeros(g.numel()), "ubg": np.zeros(g.numel())}
    return {"x": ca.vertcat(*w), "f": J, "g": g}, args, [True] * g.numel(), state_index


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=21, help="solves per variant (medians reported)")
    args = parser.parse_args(argv)
    problem = problems.get("cartpole", N=N + 1, tf=N * DT)
    nlp, call, equality, states = handwritten_nlp()
    ipopt = {"tol": 1e-8, "print_level": 0, "sb": "yes"}
    variants = [
        handwritten("hand-written IPOPT", lambda: ca.nlpsol("hand", "ipopt", nlp, {"expand": True, "print_time": False, "ipopt": ipopt}), call, states),
        handwritten(
            "hand-written fatrop",
            lambda: ca.nlpsol("hand", "fatrop", nlp, {"expand": True, "print_time": False, "structure_detection": "auto", "equality": equality, "fatrop": {"tol": 1e-8, "print_level": 0}}),
            call,
            states,
            return_status,
        ),
        ours("ours IPOPT", IpoptSolver(problem, transcription="multiple_shooting")),
        ours("ours IPOPT compiled", IpoptSolver(problem, transcription="multiple_shooting", compile=True)),
        ours("ours fatrop", FatropSolver(problem, transcription="multiple_shooting")),
        ours("ours fatrop compiled", FatropSolver(problem, transcription="multiple_shooting", compile=True)),
    ]
    t = print_table(variants, measure(variants, args.repeat))
    ratio = lambda a, b: t[a]["solve"] / t[b]["solve"]  # noqa: E731
    print(
        f"solve-time ratios: ours fatrop compiled / hand-written fatrop {ratio('ours fatrop compiled', 'hand-written fatrop'):.2f} (target <= 0.7), "
        f"ours fatrop / hand-written fatrop {ratio('ours fatrop', 'hand-written fatrop'):.2f}, "
        f"ours IPOPT / hand-written IPOPT {ratio('ours IPOPT', 'hand-written IPOPT'):.2f}, "
        f"ours IPOPT compiled / hand-written IPOPT {ratio('ours IPOPT compiled', 'hand-written IPOPT'):.2f}, "
        f"hand-written fatrop / IPOPT {ratio('hand-written fatrop', 'hand-written IPOPT'):.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
