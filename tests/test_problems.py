"""Registered problems (issue 4, item 6): each solves with each transcription from its default guess."""
import numpy as np
import pytest

import problems
from problems.quadrotor import roll_angle
from trajopt import Problem, solve
from trajopt.manifold import quaternion_slices

TRANSCRIPTIONS = ["trapezoidal", "hermite_simpson", "multiple_shooting"]
EXPECTED = {"pendulum", "cartpole", "acrobot", "double-cartpole", "quadrotor", "quadrotor-flip", "rigid-body-slew"}
_SOLVED = {}


def solved(name, transcription):
    """Solve each (problem, transcription) once per session (several tests inspect the result)."""
    key = (name, transcription)
    if key not in _SOLVED:
        _SOLVED[key] = solve(problems.get(name), transcription)
    return _SOLVED[key]


def test_registry_lists_the_problems():
    assert EXPECTED <= set(problems.names())
    with pytest.raises(ValueError, match="unknown problem 'nope'"):
        problems.get("nope")


@pytest.mark.parametrize("transcription", TRANSCRIPTIONS)
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_problem_solves(name, transcription):
    sol = solved(name, transcription)
    assert sol.success, sol.summary()
    assert sol.status == "Solve_Succeeded"
    assert sol.max_violation < 1e-6
    assert sol.knot_violation.shape == (sol.N,) and sol.knot_violation.max() <= sol.max_violation
    problem = sol.problem
    assert sol.states.shape == (problem.N, problem.nx) and sol.controls.shape == (problem.N, problem.nu)
    assert np.all(sol.controls >= problem.control_lower - 1e-6) and np.all(sol.controls <= problem.control_upper + 1e-6)
    assert np.array_equal(sol.states[0], problem.x0)
    goal = problem.goal()
    assert np.linalg.norm(problem.model.state_error(sol.states[-1], goal)) < 1e-6
    for s in quaternion_slices(problem.model):
        assert np.abs(np.linalg.norm(sol.states[:, s], axis=1) - 1).max() <= 1e-9


@pytest.mark.parametrize("transcription", TRANSCRIPTIONS)
def test_quadrotor_flip_turns_a_full_roll(transcription):
    sol = solved("quadrotor-flip", transcription)
    # the body z axis winds once, positively, around the world x axis (exact: start and end attitudes agree)
    assert abs(roll_angle(sol.states)[-1] - 2 * np.pi) <= 1e-6
    t = np.linspace(0.0, sol.tf, 4001)
    x, _ = sol.evaluate(t)
    assert abs(roll_angle(x)[-1] - 2 * np.pi) <= 1e-6  # also between the knots
    # integrated body roll rate: equals the turn only for a planar flip; the optimum tilts slightly
    # out of the plane (small pitch/yaw rates), hence 3 %
    assert abs(np.trapezoid(x[:, 10], t) - 2 * np.pi) <= 0.03 * 2 * np.pi


def test_factories_take_parameters():
    p = problems.get("cartpole", N=21, tf=3.0, u_max=10.0)
    assert isinstance(p, Problem) and p.N == 21 and p.tf == 3.0
    assert np.all(p.control_upper == 10.0)
    with pytest.raises(ValueError, match="checkpoints"):
        problems.get("quadrotor-flip", N=42)


@pytest.mark.slow  # CasADi differentiates each expanded NLP symbolically: ~12 s for all combinations
@pytest.mark.parametrize("transcription", TRANSCRIPTIONS)
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_casadi_derivatives_reach_the_same_optimum(name, transcription):
    reference = solved(name, transcription)
    sol = solve(problems.get(name), transcription, derivatives="casadi", expand=True)
    assert sol.success, sol.status
    # the same exact derivatives summed in another order: round-off may shift a long IPOPT path a little
    assert abs(sol.iterations - reference.iterations) <= 3
    # both stop at IPOPT's tol = 1e-8 (scaled KKT error), not at the same point: with active
    # inequalities the objectives then agree to ~1e-7, hence 1e-6
    assert abs(sol.objective - reference.objective) <= 1e-6 * max(1.0, abs(reference.objective))
