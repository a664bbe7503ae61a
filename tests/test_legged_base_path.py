"""The ballistic base path of schedules with flight phases (:mod:`trajopt.legged.base_path`)."""
from __future__ import annotations

import numpy as np
import pytest

import problems
from trajopt.legged import gait, jump
from trajopt.legged.base_path import ballistic_base_path, flight_phases, quintic

G = 9.81


def test_quintic_meets_its_six_end_conditions_and_is_a_quintic():
    rng = np.random.default_rng(0)
    p0, v0, a0, p1, v1, a1 = rng.standard_normal((6, 3))
    T = 0.37
    p, v, a = quintic(p0, v0, a0, p1, v1, a1, T, np.array([0.0, T]))
    for got, want in ((p, (p0, p1)), (v, (v0, v1)), (a, (a0, a1))):
        assert np.allclose(got, np.stack(want), atol=1e-12)
    t = np.linspace(0.0, T, 7)
    p, v, a = quintic(p0, v0, a0, p1, v1, a1, T, t)
    for h, tol in ((1e-6, 1e-7), (1e-4, 1e-5)):  # central differences: first (round-off bound), second (truncation)
        p_plus = quintic(p0, v0, a0, p1, v1, a1, T, t + h)[0]
        p_minus = quintic(p0, v0, a0, p1, v1, a1, T, t - h)[0]
        assert np.allclose((p_plus - p_minus) / (2 * h), v, atol=tol)
    assert np.allclose((p_plus - 2 * p + p_minus) / h**2, a, rtol=1e-5, atol=1e-4)


def test_gaits_without_flight_keep_the_uniform_reference():
    assert ballistic_base_path(gait("trot", dt=0.02, period=0.6), np.zeros(3), np.array([0.15, 0, 0]), G) is None


def test_jump_path_flies_ballistically_and_meets_the_displacement():
    schedule = jump(dt=0.02, crouch_knots=15, flight_knots=10, landing_knots=15)
    assert flight_phases(schedule) == [(15, 24)]
    start, d = np.array([0.0, 0.0, 0.27]), np.array([0.2, 0.0, 0.0])
    P, V, A = ballistic_base_path(schedule, start, d, G)
    assert np.allclose(P[0], start) and np.allclose(P[-1], start + d, atol=1e-12)
    assert np.allclose(V[[0, -1]], 0.0) and np.allclose(A[[0, -1]], 0.0)
    flight = np.arange(15, 25)
    assert np.allclose(A[flight], [0.0, 0.0, -G])
    T = 10 * 0.02  # take-off half a knot before knot 15, touch-down half a knot after knot 24
    assert np.allclose(V[flight, 2], G * T / 2 - G * (flight * 0.02 - (15 - 0.5) * 0.02))
    assert np.allclose(np.diff(V[flight, 0]), 0.0)  # one horizontal velocity in the air
    assert P[:15, 2].min() < start[2] - 0.03  # a crouch before the push-off


def test_go1_jump_guess_carries_the_weight_and_the_flight_accelerations():
    problem = problems.get("go1-jump")
    X, W = problem.initial_guess()
    cm, nq = problem.contact_model, problem.robot.nq
    A = W[:, cm.a_slice]
    assert np.allclose(A[15:25, 2], -G)
    forces = W[:, cm.f_slice].reshape(problem.N, 4, 3)
    assert np.allclose(forces[15:25], 0.0)
    total = forces.sum(axis=1)
    stance = problem.schedule.stance.any(axis=1)
    assert np.allclose(total[stance], problem.mass * (A[stance, :3] + [0.0, 0.0, G]))
    assert np.allclose(X[16:24, nq + 2], (X[17:25, 2] - X[15:23, 2]) / 0.04, atol=1e-9)  # central differences of a parabola are exact


@pytest.mark.parametrize("name", ["go1-jump"])
def test_jump_converges_in_few_iterations(name):
    from trajopt import solve

    solution = solve(problems.get(name))
    assert solution.success and solution.iterations <= 35
