"""Default control guesses hold the model where the state guess puts it (:mod:`models.equilibrium`).

Oracles: the quadrotor's hover thrust written out (m g / (4 kf)); pinocchio's
RNEA with zero acceleration for a fixed-base arm; a least-squares problem
solved with numpy for an underactuated cart-pole; scipy's bounded least
squares written out for a clipped case.
"""
from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

import problems
from lie import axis_angle_to_quat
from models import Cartpole
from models.manipulator import Manipulator
from models.quadrotor import Quadrotor
from trajopt import Problem, solve

ROOT = Path(__file__).resolve().parents[1]


def test_quadrotor_level_hover_is_its_equilibrium():
    model = Quadrotor(mass=0.7)
    x = model.build_state([1.0, -2.0, 3.0], axis_angle_to_quat([0.0, 0.0, 0.4]), np.zeros(3), np.zeros(3))
    u = model.equilibrium_control(x)
    assert np.allclose(u, 0.7 * 9.81 / 4.0, rtol=1e-12)
    assert np.allclose(model.dynamics(x, u)[7:], 0.0, atol=1e-12)  # vdot, wdot vanish


def test_tilted_quadrotor_gets_the_least_squares_thrust():
    """Tilted by 0.3 rad, no thrust cancels gravity: the least-squares total thrust is m g cos(0.3)."""
    model = Quadrotor()
    x = model.build_state(np.zeros(3), axis_angle_to_quat([0.3, 0.0, 0.0]), np.zeros(3), np.zeros(3))
    u = model.equilibrium_control(x)
    assert np.allclose(u, model.mass() * model.gravity * np.cos(0.3) / 4.0, rtol=1e-10)


def test_fixed_base_arm_gets_gravity_and_coriolis_compensation_from_pinocchio():
    model = Manipulator()
    rng = np.random.default_rng(3)
    q = pin.randomConfiguration(model.pin_model)
    v = rng.standard_normal(model.nv)
    x = np.r_[q, v]
    u = model.equilibrium_control(x, bounds=(-np.inf, np.inf))  # the arm's own limits (10 N m) would clip it
    data = model.pin_model.createData()
    expected = pin.rnea(model.pin_model, data, q, v, np.zeros(model.nv))
    assert np.allclose(model.B_func() @ u, expected, rtol=1e-9, atol=1e-9)


def test_underactuated_cartpole_minimizes_the_accelerations():
    model = Cartpole()
    x = np.array([0.2, 0.7, 0.1, -0.3])
    u = model.equilibrium_control(x)
    # xdot = [v; a(x) + b(x) u]: least squares of the two accelerations, written out
    a = model.dynamics(x, [0.0])[2:]
    b = model.dynamics(x, [1.0])[2:] - a
    assert np.allclose(u, -(b @ a) / (b @ b), rtol=1e-10)


def test_bounds_clip_the_equilibrium_exactly():
    model = Quadrotor(u_max=1.0)  # hover needs 1.226 per rotor
    x = model.build_state(np.zeros(3), axis_angle_to_quat(np.zeros(3)), np.zeros(3), np.zeros(3))
    assert np.allclose(model.equilibrium_control(x), 1.0)
    assert np.allclose(model.equilibrium_control(x, bounds=(np.zeros(4), np.full(4, 0.5))), 0.5)


def test_bad_state_is_refused():
    model = Quadrotor()
    with pytest.raises(ValueError, match="x: expected shape"):
        model.equilibrium_control(np.zeros(5))
    with pytest.raises(ValueError, match="NaN"):
        model.equilibrium_control(np.full(13, np.nan))


def test_problem_default_controls_are_the_equilibrium_at_each_knot():
    model = Quadrotor()
    x0 = model.build_state(np.zeros(3), axis_angle_to_quat(np.zeros(3)), np.zeros(3), np.zeros(3))
    problem = Problem(model, N=5, tf=1.0, x0=x0)
    X, U = problem.initial_guess()
    assert np.allclose(U, model.hover_control())
    problem.bound_controls(upper=1.0, knots=[2])
    assert np.allclose(problem.initial_guess()[1][2], 1.0) and np.allclose(problem.initial_guess()[1][1], model.hover_control())


def test_readme_quadrotor_converges_fast_to_the_better_optimum():
    """The README's first block from its default guess (hover thrust): <= 20 iterations, J <= 0.2
    (from zero controls, free fall, it took 210 iterations to J = 0.440)."""
    from bench.convergence import readme_problem

    problem, kwargs = readme_problem(0)
    solution = solve(problem, **kwargs)
    assert solution.success and solution.iterations <= 20 and solution.objective <= 0.2


def test_a_users_thrust_limited_body_with_gravity_converges_from_its_default_guess(tmp_path):
    out = runpy.run_path(str(ROOT / "examples" / "thrust_body.py"), run_name="example_thrust_body")["main"](["--out", str(tmp_path)])
    solution = out["solution"]
    assert solution.success and solution.iterations <= 30 and solution.max_violation < 1e-6
    assert np.allclose(solution.states[-1][:3], [3.0, 1.0, 1.5], atol=1e-6)


def test_slew_guess_breaks_the_symmetric_saddle():
    """rigid-body-slew converges to the cheaper optimum that leaves the z axis (J = 1.967 < pi^2 / 4)."""
    solution = solve(problems.get("rigid-body-slew"))
    assert solution.success and solution.iterations <= 20
    assert solution.objective == pytest.approx(1.96666, abs=1e-4) and solution.objective < np.pi**2 / 4 - 0.4
