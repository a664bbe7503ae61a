"""trajopt.between_knots: bounds and constraints on the interpolated trajectory, and the replay gap, against independent
dense sampling and scipy's integrator."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import problems
from trajopt import solve
from trajopt.between_knots import GAP_WARNING, check_between_knots, replay_gaps
from trajopt.report import solution_report


@pytest.fixture(scope="module")
def pendulum():
    return solve(problems.get("pendulum"), print_level=0)


def test_a_control_bound_crossed_between_knots_is_found(pendulum):
    """Hermite-Simpson's quadratic control passes -5 N m between knots where the knots and midpoints hold it."""
    assert pendulum.success and pendulum.max_violation < 1e-8
    found = check_between_knots(pendulum)
    assert found.worst.startswith("the control bound on u[0] at t = ") and found.relative_violation == pytest.approx(found.violation / 5.0)
    dense = np.linspace(0.0, pendulum.tf, 20001)
    _, u = pendulum.evaluate(dense)
    overshoot = float(np.max(np.abs(u)) - 5.0)
    assert 0.9 * overshoot <= found.violation <= overshoot  # ten points per interval see most of the peak, never more
    assert any(line.startswith("WARNING: between knots the trajectory breaks a bound") for line in solution_report(pendulum).splitlines())


def test_equality_rows_are_left_out_and_inequalities_kept():
    """The trot's dynamics residuals (equalities) differ from zero between knots; no inequality of it is crossed."""
    solution = solve(problems.get("go1-trot"), print_level=0)
    assert check_between_knots(solution).violation == 0.0


def _scipy_gap(solution, k: int) -> float:
    """Interval ``k`` of a quadrotor solution integrated by scipy (RK45, tolerance 1e-12) under its interpolated controls."""
    model, h = solution.problem.model, solution.tf / (solution.N - 1)

    def rate(t, x):
        _, u = solution.evaluate(min(t, solution.tf))
        return np.asarray(model.dynamics(x, u, t), dtype=float).reshape(-1)

    end = solve_ivp(rate, (k * h, (k + 1) * h), solution.states[k], method="RK45", rtol=1e-12, atol=1e-12).y[:, -1]
    end[3:7] /= np.linalg.norm(end[3:7])
    return float(np.max(np.abs(np.asarray(model.state_error(solution.states[k + 1], end), dtype=float))))


def test_the_replay_gap_of_the_trapezoidal_quadrotor_matches_scipy():
    """Trapezoidal states are off the dynamics by 4e-2 on the first interval: scipy's integration says the same (the
    replay holds each control at its substep's midpoint: 1e-4 apart at h/40)."""
    solution = solve(problems.get("quadrotor"), "trapezoidal", print_level=0)
    gaps = replay_gaps(solution, substeps=40)
    assert gaps[0] > GAP_WARNING
    for k in (0, int(np.argsort(gaps)[len(gaps) // 2])):
        assert gaps[k] == pytest.approx(_scipy_gap(solution, k), rel=1e-2, abs=1e-6)
    assert "WARNING: an open-loop replay of the controls drifts" in solution_report(solution)


@pytest.mark.parametrize("derivatives", ["stagewise", "casadi"])
def test_interior_control_bounds_hold_between_knots(derivatives):
    """The quadrotor flip's rotor thrusts go 0.75 N below zero between knots; with ``interior=True`` (the quadratic's
    middle Bezier point bounded) not at all, at a slightly higher cost (measured 0.31696 -> 0.31941), and every
    dense sample of the controls is within the bounds."""
    free = solve(problems.get("quadrotor-flip"), print_level=0, derivatives=derivatives)
    problem = problems.get("quadrotor-flip").bound_controls(interior=True)
    held = solve(problem, print_level=0, derivatives=derivatives)
    assert held.success and held.objective > free.objective
    assert check_between_knots(free).violation > 0.5 and check_between_knots(held).violation <= 1e-8
    _, u = held.evaluate(np.linspace(0.0, held.tf, 8001))
    assert (u >= problem.control_lower[0] - 1e-8).all() and (u <= problem.control_upper[0] + 1e-8).all()


def test_interior_bounds_add_nothing_to_linear_controls():
    problem = problems.get("quadrotor").bound_controls(interior=True)
    plain = solve(problems.get("quadrotor"), "trapezoidal", print_level=0)
    held = solve(problem, "trapezoidal", print_level=0)
    assert (held.iterations, held.objective) == (plain.iterations, plain.objective)
