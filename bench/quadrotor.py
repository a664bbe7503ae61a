"""Quadrotor point-to-point: ours (IPOPT) against a hand-written CasADi + IPOPT NLP of the same problem.

The problem is the registered "quadrotor": hover at the origin to hover at
(5, 0, 1) m in 5 s on N = 51 knots, Hermite-Simpson collocation on the
manifold (our default), cost ``integral 1/2 (0.01 |dx|^2 + 0.1 |u - u_hover|^2) dt``
with ``dx = state_error(x, x_goal)``, the goal as a hard constraint,
``0 <= u <= 4``. The hand-written NLP is the same NLP written directly in
CasADi, ``expand=True``: state ``[r, q, v, w]`` (world position and velocity,
body rates), quaternion error ``log(q0^* q)`` (shortest path), per interval the
Simpson and Hermite defects in the chart of ``x_k``

    y_1 - h/6 (ydot_0 + 4 ydot_m + ydot_1) = 0,     y_m - y_1/2 - h/8 (ydot_0 - ydot_1) = 0

(``y = state_error(., x_k)``, ``ydot = d state_error(y, x_k)/dy xdot``), a unit
norm on every free quaternion (knots 1..N-1 and midpoints), the cost by
Simpson's rule; variables ``x_k, u_k, x_mid, u_mid`` stage by stage; initial
guess the straight line at level attitude with hover thrust.

Rows (:mod:`bench.solver_runs` explains the columns): the hand-written NLP,
ours on CasADi's virtual machine (by default its heavy stage maps, the
interval Jacobian and Hessian, run on one thread per core:
:mod:`trajopt.solvers.derivatives`), the same on one thread, ours compiled
(``compile=True``). The last lines give the ratios (the issue's target: ours
at most 1.1x the hand-written NLP) and why fatrop does not take this problem.

    python bench/quadrotor.py [--repeat 11]
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
from trajopt.solvers.derivatives import available_cores  # noqa: E402
from trajopt.solvers.fatrop import FatropSolver  # noqa: E402

N, TF = 51, 5.0
MASS, INERTIA, ARM, KF, KM, GRAVITY, U_MAX = 0.5, ca.DM([0.0023, 0.0023, 0.004]), 0.175, 1.0, 0.0245, 9.81, 4.0
U_HOVER = MASS * GRAVITY / (4 * KF)
Q, R = 0.01, 0.1
X_START = np.array([0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0], dtype=float)
X_GOAL = np.array([5, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0], dtype=float)


def qmul(a, b):
    """Hamilton product of quaternions ``[w, x, y, z]``."""
    return ca.vertcat(
        a[0] * b[0] - ca.dot(a[1:], b[1:]),
        a[0] * b[1:] + b[0] * a[1:] + ca.cross(a[1:], b[1:]),
    )


def qconj(q):
    return ca.vertcat(q[0], -q[1:])


def qlog(q):
    """Rotation vector of ``q``, shortest path: ``2 atan2(|v|, w) v / |v|`` with ``q -> -q`` when ``w < 0``;
    below ``|v| = 1e-4`` the series ``(2 / w) (1 - |v|^2 / (3 w^2)) v`` (finite derivatives at the identity)."""
    s = ca.sign(q[0])
    w, v = s * q[0], s * q[1:]
    n2 = ca.sumsqr(v)
    small = n2 < 1e-8
    n = ca.sqrt(ca.if_else(small, 1, n2))
    w_small = ca.if_else(small, w, 1)
    return ca.if_else(small, 2 / w_small * (1 - n2 / (3 * w_small**2)), 2 * ca.atan2(n, w) / n) * v


def rotation(q):
    w, x, y, z = q[0], q[1], q[2], q[3]
    return ca.vertcat(
        ca.horzcat(w * w + x * x - y * y - z * z, 2 * (x * y - w * z), 2 * (x * z + w * y)),
        ca.horzcat(2 * (x * y + w * z), w * w - x * x + y * y - z * z, 2 * (y * z - w * x)),
        ca.horzcat(2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z),
    )


def dynamics(x, u):
    """``xdot`` of the "+" quadrotor: rotors at body (L, 0), (0, L), (-L, 0), (0, -L), thrust ``kf u_i``, drag moment ``+-km u_i``."""
    q, v, w = x[3:7], x[7:10], x[10:13]
    force = rotation(q) @ ca.vertcat(0, 0, KF * ca.sum1(u)) - ca.vertcat(0, 0, MASS * GRAVITY)
    torque = ca.vertcat(ARM * KF * (u[1] - u[3]), ARM * KF * (u[2] - u[0]), KM * (u[0] - u[1] + u[2] - u[3]))
    wdot = (torque - ca.cross(w, INERTIA * w)) / INERTIA
    return ca.vertcat(v, 0.5 * qmul(q, ca.vertcat(0, w)), force / MASS, wdot)


def state_error(x, x0):
    return ca.vertcat(x[:3] - x0[:3], qlog(qmul(qconj(x0[3:7]), x[3:7])), x[7:] - x0[7:])


def chart_velocity() -> ca.Function:
    """``(x0, x, xdot) -> d state_error(y, x0)/dy (y = x) xdot``: the velocity of ``x`` in the chart of ``x0``."""
    x0, y, xdot = (ca.SX.sym(n, 13) for n in ("x0", "y", "xdot"))
    return ca.Function("chart_velocity", [x0, y, xdot], [ca.jtimes(state_error(y, x0), y, xdot)])


def hermite_simpson_interval() -> ca.Function:
    """``(x0, u0, xm, um, x1, u1) -> (defects (24), |q_m|^2 - 1, Simpson cost)`` of one interval."""
    h, chart = TF / (N - 1), chart_velocity()
    x0, xm, x1 = (ca.SX.sym(n, 13) for n in ("x0", "xm", "x1"))
    u0, um, u1 = (ca.SX.sym(n, 4) for n in ("u0", "um", "u1"))
    f0 = dynamics(x0, u0)
    ydot0 = ca.vertcat(f0[:3], 2 * qmul(qconj(x0[3:7]), f0[3:7])[1:], f0[7:])
    ydotm, ydot1 = chart(x0, xm, dynamics(xm, um)), chart(x0, x1, dynamics(x1, u1))
    y1, ym = state_error(x1, x0), state_error(xm, x0)
    defects = ca.vertcat(y1 - h / 6 * (ydot0 + 4 * ydotm + ydot1), ym - y1 / 2 - h / 8 * (ydot0 - ydot1))

    def rate(x, u):
        return 0.5 * Q * ca.sumsqr(state_error(x, X_GOAL)) + 0.5 * R * ca.sumsqr(u - U_HOVER)

    cost = h / 6 * (rate(x0, u0) + 4 * rate(xm, um) + rate(x1, u1))
    return ca.Function("interval", [x0, u0, xm, um, x1, u1], [defects, ca.sumsqr(xm[3:7]) - 1, cost])


def handwritten_nlp():
    """The NLP dict, the solver arguments and the knot-state indices (N, 13)."""
    interval = hermite_simpson_interval()
    X, U = [ca.MX.sym(f"x{k}", 13) for k in range(N)], [ca.MX.sym(f"u{k}", 4) for k in range(N)]
    Xm, Um = [ca.MX.sym(f"xm{k}", 13) for k in range(N - 1)], [ca.MX.sym(f"um{k}", 4) for k in range(N - 1)]
    w, g, J = [], [], 0
    for k in range(N):
        w += [X[k], U[k]] + ([Xm[k], Um[k]] if k < N - 1 else [])
        if k > 0:
            g.append(ca.sumsqr(X[k][3:7]) - 1)
        if k == N - 1:
            g.append(state_error(X[k], X_GOAL))
        else:
            defects, norm, cost = interval(X[k], U[k], Xm[k], Um[k], X[k + 1], U[k + 1])
            g += [defects, norm]
            J += cost
    n_w, g = 34 * (N - 1) + 17, ca.vertcat(*g)
    knot = np.array([34 * k for k in range(N)])
    states, controls = knot[:, None] + np.arange(13), knot[:, None] + 13 + np.arange(4)
    mid_states, mid_controls = knot[:-1, None] + 17 + np.arange(13), knot[:-1, None] + 30 + np.arange(4)
    lbx, ubx = np.full(n_w, -np.inf), np.full(n_w, np.inf)
    for idx in (controls, mid_controls):
        lbx[idx], ubx[idx] = 0.0, U_MAX
    lbx[states[0]] = ubx[states[0]] = X_START
    x0 = np.zeros(n_w)
    line = np.linspace(X_START, X_GOAL, N)
    x0[states], x0[mid_states] = line, 0.5 * (line[:-1] + line[1:])
    x0[controls], x0[mid_controls] = U_HOVER, U_HOVER
    args = {"x0": x0, "lbx": lbx, "ubx": ubx, "lbg": np.zeros(g.numel()), "ubg": np.zeros(g.numel())}
    return {"x": ca.vertcat(*w), "f": J, "g": g}, args, states


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=11, help="solves per variant (medians reported)")
    args = parser.parse_args(argv)
    problem = problems.get("quadrotor", N=N, tf=TF)
    nlp, call, states = handwritten_nlp()
    ipopt = {"tol": 1e-8, "print_level": 0, "sb": "yes"}
    variants = [
        handwritten("hand-written IPOPT", lambda: ca.nlpsol("hand", "ipopt", nlp, {"expand": True, "print_time": False, "ipopt": ipopt}), call, states),
        ours("ours IPOPT", IpoptSolver(problem)),
        ours("ours IPOPT 1 thread", IpoptSolver(problem, threads=1)),
        ours("ours IPOPT compiled", IpoptSolver(problem, compile=True)),
    ]
    t = print_table(variants, measure(variants, args.repeat))
    ratio = lambda a: t[a]["solve"] / t["hand-written IPOPT"]["solve"]  # noqa: E731
    print(
        f"solve-time ratios to the hand-written NLP: ours {ratio('ours IPOPT'):.2f} (target <= 1.1; {available_cores()} cores), "
        f"ours on 1 thread {ratio('ours IPOPT 1 thread'):.2f}, ours compiled {ratio('ours IPOPT compiled'):.2f}"
    )
    try:
        FatropSolver(problem)
    except ValueError as err:
        print(f"fatrop: {err}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
