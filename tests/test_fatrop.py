"""The fatrop backend (:mod:`trajopt.solvers.fatrop`) against IPOPT, and the problems it refuses.

fatrop and IPOPT solve the same NLP (RK4 multiple shooting) to ``tol`` 1e-8:
their optima agree to ``SAME = 1e-6`` (relative with a floor) in objective,
knot states, controls and constraint multipliers (measured: 1e-13 to 2e-7).
"""
from __future__ import annotations

import shutil
from pathlib import Path

import casadi as ca
import numpy as np
import pytest

import problems
from trajopt import Constraint, FreeTime, FunctionTerminalCost, GoalConstraint, IpoptSolver, Problem, QuadraticCost, solve
from trajopt.solvers.fatrop import FatropSolver

SAME = 1e-6

needs_compiler = pytest.mark.skipif(shutil.which("gcc") is None, reason="no C compiler")


def assert_close(actual, expected, tol: float = SAME) -> None:
    actual, expected = np.asarray(actual, dtype=float), np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape
    assert np.all(np.abs(actual - expected) <= tol * np.maximum(1.0, np.abs(expected))), np.abs(actual - expected).max()


def assert_same_optimum(sol, reference) -> None:
    assert sol.success and reference.success, (sol.status, reference.status)
    assert_close(sol.objective, reference.objective)
    assert_close(sol.states, reference.states)
    assert_close(sol.controls, reference.controls)
    assert_close(sol.lam_g, reference.lam_g)
    assert sol.max_violation < SAME


def cartpole_on_a_track(half_width: float = 1.0) -> Problem:
    """The cartpole with ``|y| <= half_width`` as a constraint row at every knot (active at two knots for 1 m)."""
    problem = problems.get("cartpole")
    return problem.add_constraint(Constraint(lambda x: x[0], lower=-half_width, upper=half_width, name="track"))


@pytest.mark.parametrize("name", ["cartpole", "pendulum"])
def test_fatrop_reaches_the_ipopt_optimum(name: str) -> None:
    problem = problems.get(name)
    sol = solve(problem, "multiple_shooting", solver="fatrop")
    assert_same_optimum(sol, solve(problem, "multiple_shooting"))
    assert sol.status == "Success" and sol.transcription == "multiple_shooting"
    assert sol.iterations > 0 and sol.build_time > 0
    assert 0 < sol.eval_time <= sol.solve_time and sol.solver_time == pytest.approx(sol.solve_time - sol.eval_time)


def test_path_rows_are_reordered_behind_each_gap() -> None:
    problem = cartpole_on_a_track()
    solver = FatropSolver(problem, transcription="multiple_shooting")
    layout, N = solver.layout, problem.N
    assert layout.K == N - 1
    assert layout.nx == [4] * N and layout.nu == [1] * (N - 1) + [0]
    assert layout.ng == [1] * (N - 1) + [1 + 4]  # the track at every knot, the goal at the last
    stage = solver.nlp.row_stage[layout.rows]
    assert np.all(np.diff(stage) >= 0)
    gap = np.isin(layout.rows, solver.nlp.block_rows([b.kind for b in solver.nlp.blocks].index("defect")))
    assert all(gap[stage == k][:4].all() and not gap[stage == k][4:].any() for k in range(N - 1))
    sol = solver.solve()
    assert np.sum(np.abs(sol.states[:, 0]) > 1.0 - 1e-6) >= 2  # the track binds
    assert_same_optimum(sol, IpoptSolver(problem, transcription="multiple_shooting").solve())


def test_derivatives_by_casadi_reach_the_same_optimum() -> None:
    problem = problems.get("pendulum")
    assert_same_optimum(FatropSolver(problem, transcription="multiple_shooting", derivatives="casadi").solve(), solve(problem, "multiple_shooting"))


@needs_compiler
def test_compiled_functions_give_the_same_solve(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRAJOPT_CACHE", str(tmp_path))
    problem = problems.get("cartpole")
    vm, fast = FatropSolver(problem, transcription="multiple_shooting").solve(), FatropSolver(problem, transcription="multiple_shooting", compile=True).solve()
    assert fast.success and fast.iterations == vm.iterations
    assert_close(fast.primal, vm.primal, 1e-12)
    assert_close(fast.lam_g, vm.lam_g, 1e-10)


def test_a_stopped_solve_reports_fatrops_flag_and_the_last_iterate() -> None:
    problem = problems.get("cartpole")
    sol = FatropSolver(problem, transcription="multiple_shooting", options={"max_iter": 3}).solve()
    assert not sol.success and sol.status == "MaxIterExceeded"
    assert sol.states.shape == (problem.N, 4) and np.isfinite(sol.primal).all()
    assert sol.max_violation > SAME


def test_warm_start_is_primal_and_keeps_the_optimum() -> None:
    solver = FatropSolver(problems.get("pendulum"), "multiple_shooting")
    cold = solver.solve()
    warm = solver.solve(warm_start=cold)
    assert_same_optimum(warm, cold)


def free_time_pendulum() -> Problem:
    problem = problems.get("pendulum")
    free = Problem(problem.model, N=problem.N, tf=FreeTime(2.0, 4.0, 3.0), x0=problem.x0, name="pendulum-free-time")
    free.add_cost(QuadraticCost(problem.model, [1e-2, 1e-2], [1e-1], x_ref=np.zeros(2)))
    return free.add_constraint(GoalConstraint(problem.model, np.zeros(2)))


def held_control_constraint() -> Problem:
    """Multiple shooting holds u_{N-2} at the last knot: a constraint on it there couples two stages."""
    return problems.get("cartpole").add_constraint(Constraint(lambda x, u: u, knots=-1, lower=-5.0, upper=5.0, name="final_force"))


def terminal_cost_on_the_held_control() -> Problem:
    return problems.get("cartpole").add_cost(FunctionTerminalCost(lambda x, u, p: ca.sumsqr(u)))


@pytest.mark.parametrize(
    "problem, transcription, message",
    [
        (lambda: problems.get("cartpole"), "hermite_simpson", r"transcription: 'hermite_simpson' is implicit .* use multiple shooting"),
        (lambda: problems.get("cartpole"), "trapezoidal", r"transcription: 'trapezoidal' is implicit"),
        (lambda: problems.get("quadrotor"), "multiple_shooting", r"problem: the state of Quadrotor holds unit quaternions"),
        (free_time_pendulum, "multiple_shooting", r"problem: a free final time"),
        (held_control_constraint, "multiple_shooting", r"problem: 'final_force' at knot 49 depends on variables of knot 48"),
        (terminal_cost_on_the_held_control, "multiple_shooting", r"problem: a terminal cost reads the control"),
    ],
    ids=["hermite-simpson", "trapezoidal", "quaternions", "free-time", "held-control", "held-control-cost"],
)
def test_problems_fatrop_cannot_take_raise_a_clear_error(problem, transcription: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        solve(problem(), transcription, solver="fatrop")


def test_unknown_solver_is_refused() -> None:
    with pytest.raises(ValueError, match="solver: expected one of ipopt, fatrop, sqp, rti, got 'snopt'"):
        solve(problems.get("pendulum"), solver="snopt")
