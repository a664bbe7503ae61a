"""SQP (sqpmethod + HPIPM) on the classic problems: converged where its first QP has a solution,
refused with the reason before iterating where it has none, and its options on the command line."""
from __future__ import annotations

import casadi as ca
import numpy as np
import pytest

import problems
from trajopt import solve
from trajopt.cli import main
from trajopt.solvers import SqpSolver
from trajopt.solvers.sqp import FirstQpFailed

SHOOTING = "multiple_shooting_rk4"


def reference(name: str, chart: bool = False, **params):
    """IPOPT's solution of the same NLP (multiple shooting, RK4)."""
    solution = solve(problems.get(name, **params), SHOOTING, chart=chart)
    assert solution.success, solution.status
    return solution


@pytest.mark.parametrize("name, chart, most", [("quadrotor", True, 6), ("cartpole", False, 12), ("double-cartpole", False, 50)])
def test_sqp_reaches_ipopts_optimum_from_the_default_guess(name, chart, most):
    # measured: quadrotor 4 iterations (200 with sqpmethod's "regularize" convexification); the
    # swing-ups from their equilibrium-control guess: cartpole 7, double cartpole 39 (IPOPT 14, 29).
    # Not the rigid-body slew: from its tilted guess SQP stalls near the optimum in 2^-18 line-search
    # steps (200 iterations, J = 1.96869, dual infeasibility 2.5e-3), with or without convexification
    # or second-order corrections; IPOPT takes 14.
    solution = solve(problems.get(name), SHOOTING, solver="sqp", chart=chart)
    assert solution.success and solution.iterations <= most, (solution.status, solution.iterations)
    ipopt = reference(name, chart)
    assert abs(solution.objective - ipopt.objective) <= 1e-7 * abs(ipopt.objective)
    assert np.abs(solution.states - ipopt.states).max() <= 1e-5
    assert solution.max_violation <= 1e-8


def first_qp_data(solver: SqpSolver):
    """The first SQP step's QP from the default guess, built independently of SqpSolver.first_qp: the
    Hessian of the cost (no multipliers yet), the gradient, the linearized constraints and shifted bounds."""
    nlp, fn, rows = solver.nlp, solver._functions, solver.layout.rows
    w0, p = nlp.initial_guess(), nlp.parameters()
    _, grad, g, jac = fn["jac_fg"](w0, p)
    hess = fn["hess_lag"](w0, p, 1.0, np.zeros(nlp.n_g))
    (lbx, ubx), (lbg, ubg) = nlp.bounds_w(), nlp.bounds_g()
    g = np.asarray(g).ravel()
    bounds = {"lbx": np.asarray(lbx) - w0, "ubx": np.asarray(ubx) - w0, "lba": np.asarray(lbg)[rows] - g, "uba": np.asarray(ubg)[rows] - g}
    return {"h": hess, "g": grad, "a": jac, **bounds}


@pytest.mark.parametrize("name", ["pendulum", "acrobot"])
def test_swing_ups_from_the_default_guess_are_refused_before_iterating(name):
    """From the straight-line guess with its equilibrium-control torques the linearized QP of the
    pendulum and the acrobot is infeasible (the carts' is not: they solve, above): qpOASES (an
    active-set solver we did not write) proves it, HPIPM stops with huge multipliers, and the solve
    is refused with that reason instead of wandering for 200 iterations."""
    solver = SqpSolver(problems.get(name), SHOOTING)
    qp = first_qp_data(solver)
    oases = ca.conic("check", "qpoases", {"h": qp["h"].sparsity(), "a": qp["a"].sparsity()}, {"printLevel": "none", "error_on_fail": False})
    oases(**qp)
    assert not oases.stats()["success"] and "infeasib" in str(oases.stats()["return_status"])
    found = solver.first_qp({"x0": solver.nlp.initial_guess()})
    assert not found["success"] and found["max_multiplier"] > 1e10  # measured 3.8e12 .. 6.6e16
    with pytest.raises(ValueError, match=r"start: HPIPM cannot solve the QP of the first SQP step \(stopped at its minimum step length"):
        solver.solve()


@pytest.mark.parametrize("name", ["pendulum", "acrobot"])
def test_solve_starts_the_sqp_from_ipopt_when_hpipm_cannot_start(name):
    """``trajopt.solve(solver="sqp")`` from the same guess: IPOPT first, then the SQP from its solution, which the
    summary states; the optimum is IPOPT's. With a warm start the refusal stands (the caller chose the start)."""
    problem = problems.get(name)
    solution = solve(problem, SHOOTING, solver="sqp")
    ipopt = solve(problem, SHOOTING)
    assert solution.success and solution.started_from.startswith(f"IPOPT's solution ({ipopt.iterations} iterations, Solve_Succeeded)")
    assert "started from IPOPT's solution" in solution.summary()
    assert abs(solution.objective - ipopt.objective) <= 1e-8 * abs(ipopt.objective)
    guess = solve(problem, SHOOTING, max_iter=0)
    with pytest.raises(FirstQpFailed):
        solve(problem, SHOOTING, solver="sqp", warm_start=guess)


def test_a_stalled_sqp_is_not_a_success():
    """``sqpmethod`` stopping because its step became too small (here made likely by a large ``min_step_size``)
    before its tolerances hold reports a failure, and says where the point is infeasible."""
    solution = solve(problems.get("cartpole"), SHOOTING, solver="sqp", options={"min_step_size": 1e-1})
    assert solution.status == "Search_Direction_Becomes_Too_Small" and not solution.success
    assert solution.max_violation > 1e-8 and solution.worst_violation


@pytest.mark.parametrize("name, key, old, new, most", [("pendulum", "tf", 3.0, 3.2, 10), ("acrobot", "tf", 5.0, 5.3, 15), ("cartpole", "tf", 2.5, 2.7, 120)])
def test_sqp_warm_started_from_a_neighbouring_solution(name, key, old, new, most):
    """Warm-started from IPOPT's solution at another final time, SQP reaches the optimum IPOPT reaches
    from the same start (the acrobot's cold IPOPT solve finds another local optimum). Measured:
    pendulum 6, acrobot 12 (4 before the equilibrium-control guesses moved IPOPT's reference), cartpole 74 iterations (the cartpole wandered for 200 with sqpmethod's
    default of 3 line-search steps, now 20)."""
    warm = reference(name, **{key: old})
    problem = problems.get(name, **{key: new})
    solution = solve(problem, SHOOTING, solver="sqp", warm_start=warm)
    assert solution.success and solution.iterations <= most, (solution.status, solution.iterations)
    ipopt = solve(problem, SHOOTING, warm_start=warm)
    assert ipopt.success and abs(solution.objective - ipopt.objective) <= 1e-6 * abs(ipopt.objective)
    assert np.abs(solution.states - ipopt.states).max() <= 1e-4


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_every_option_sqp_asks_for_is_on_the_command_line(capsys, tmp_path):
    code, out, _ = run(capsys, "solve", "quadrotor", "-q", "--solver", "sqp", "-t", "multiple_shooting", "--chart")
    assert code == 0 and "Solve_Succeeded" in out
    code, _, err = run(capsys, "solve", "quadrotor", "-q", "--solver", "sqp")
    assert code == 2 and "use multiple shooting (-t multiple_shooting)" in err
    code, _, err = run(capsys, "solve", "quadrotor", "-q", "--solver", "sqp", "-t", "multiple_shooting")
    assert code == 2 and "solve with tangent-chart knots (--chart)" in err
    code, _, err = run(capsys, "solve", "pendulum", "-q", "--solver", "sqp", "-t", "multiple_shooting", "--hessian", "gauss-newton")
    assert code == 2 and "(-t multiple_shooting_knot_cost) or --hessian exact" in err
    # from the default guess HPIPM cannot start: IPOPT solves first, and the report says so
    code, out, _ = run(capsys, "solve", "pendulum", "-q", "--solver", "sqp", "-t", "multiple_shooting")
    assert code == 0 and "Solve_Succeeded" in out and "(started from IPOPT's solution (" in out
    # from a warm start HPIPM cannot start from (IPOPT's unsolved guess): refused with the remedy
    assert run(capsys, "solve", "pendulum", "-q", "-t", "multiple_shooting", "--max-iter", "0", "--save", tmp_path / "guess.npz")[0] == 1
    code, _, err = run(capsys, "solve", "pendulum", "-q", "--solver", "sqp", "-t", "multiple_shooting", "--warm-start", tmp_path / "guess.npz")
    assert code == 2 and "Start near a solution (--warm-start FILE, e.g. an IPOPT solution saved with --save) or use --solver ipopt or fatrop" in err
    assert len(err.strip().splitlines()) == 1
    assert run(capsys, "solve", "pendulum", "-q", "-t", "multiple_shooting", "--tf", "3.0", "--save", tmp_path / "p.npz")[0] == 0
    code, out, _ = run(capsys, "solve", "pendulum", "-q", "--solver", "sqp", "-t", "multiple_shooting", "--tf", "3.2", "--warm-start", tmp_path / "p.npz")
    assert code == 0 and "Solve_Succeeded" in out
