"""Solutions (issue 4, item 4): files, failures without exceptions, warm starts, input checks."""
import casadi as ca
import numpy as np
import pytest

import problems
from models.planar_chain import Pendulum
from models.quadrotor import Quadrotor
from trajopt import FunctionCost, IpoptSolver, Problem, QuadraticCost, Solution, solve

TRANSCRIPTIONS = ["trapezoidal", "hermite_simpson", "multiple_shooting"]


@pytest.fixture(scope="module")
def quadrotor_solutions():
    return {tr: solve(problems.get("quadrotor"), tr) for tr in TRANSCRIPTIONS}


def test_save_load_round_trip_is_bit_exact(tmp_path, quadrotor_solutions):
    sol = quadrotor_solutions["hermite_simpson"]
    path = tmp_path / "quadrotor.npz"
    sol.save(path)
    loaded = Solution.load(path)
    assert loaded == sol
    for name in ("times", "states", "controls", "intervals", "knot_violation", "primal", "lam_x", "lam_g"):
        a, b = getattr(loaded, name), getattr(sol, name)
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    for name in ("tf", "objective", "status", "success", "iterations", "solve_time", "eval_time", "solver_time", "max_violation", "transcription"):
        assert getattr(loaded, name) == getattr(sol, name) and type(getattr(loaded, name)) is type(getattr(sol, name))
    assert loaded.problem is None


def test_save_refuses_to_overwrite(tmp_path, quadrotor_solutions):
    sol = quadrotor_solutions["trapezoidal"]
    path = tmp_path / "sol.npz"
    sol.save(path)
    with pytest.raises(FileExistsError, match="overwrite=True"):
        sol.save(path)
    other = quadrotor_solutions["multiple_shooting"]
    other.save(path, overwrite=True)
    assert Solution.load(path) == other


def test_load_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="no solution file"):
        Solution.load(tmp_path / "missing.npz")


@pytest.mark.parametrize("transcription", TRANSCRIPTIONS)
def test_primal_dual_warm_start_from_a_saved_solution(tmp_path, quadrotor_solutions, transcription):
    path = tmp_path / "optimal.npz"
    quadrotor_solutions[transcription].save(path)
    problem = problems.get("quadrotor")
    warm = solve(problem, transcription, warm_start=Solution.load(path, problem=problem))
    assert warm.success, warm.status
    assert warm.iterations <= 3
    assert abs(warm.objective - quadrotor_solutions[transcription].objective) <= 1e-8 * max(1.0, abs(warm.objective))


def test_warm_start_resamples_a_different_horizon(quadrotor_solutions):
    coarse = quadrotor_solutions["hermite_simpson"]
    problem = problems.get("quadrotor", N=76)
    sol = solve(problem, "trapezoidal", warm_start=coarse)
    assert sol.success and sol.N == 76
    cold = IpoptSolver(problems.get("quadrotor", N=76), "trapezoidal").solve()
    assert sol.iterations <= cold.iterations


@pytest.mark.parametrize("transcription", TRANSCRIPTIONS)
def test_infeasible_problem_returns_a_failed_solution(transcription):
    # 0.5 N m cannot swing the pendulum up in 1 s (holding it level alone needs 9.81 N m)
    sol = solve(problems.get("pendulum", u_max=0.5, tf=1.0), transcription)
    assert sol.success is False
    assert sol.status == "Infeasible_Problem_Detected"
    assert sol.max_violation > 1e-3
    assert sol.states.shape == (51, 2) and np.isfinite(sol.states).all()


def test_evaluate_needs_a_problem_and_valid_times(tmp_path, quadrotor_solutions):
    sol = quadrotor_solutions["trapezoidal"]
    with pytest.raises(ValueError, match=r"t: expected times in \[0, tf"):
        sol.evaluate(sol.tf + 1.0)
    sol.save(tmp_path / "s.npz")
    with pytest.raises(ValueError, match="no problem attached"):
        Solution.load(tmp_path / "s.npz").evaluate(1.0)
    x, u = Solution.load(tmp_path / "s.npz", problem=sol.problem).evaluate(1.0)
    assert x.shape == (13,) and u.shape == (4,)


def pendulum_problem(**kw):
    args = dict(model=Pendulum(u_max=5.0), N=11, tf=2.0, x0=[np.pi, 0.0])
    args.update(kw)
    return Problem(**args)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(N=1), r"N: expected an int >= 2, got 1"),
        (dict(N=2.5), r"N: expected an int >= 2"),
        (dict(tf=0.0), r"tf: expected a finite float > 0"),
        (dict(tf=-1.0), r"tf: expected a finite float > 0"),
        (dict(x0=[np.nan, 0.0]), r"x0: contains NaN"),
        (dict(x0=[0.0, 0.0, 0.0]), r"x0: expected shape \(2,\), got \(3,\)"),
    ],
)
def test_bad_problem_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pendulum_problem(**kwargs)


def test_bad_solve_input():
    problem = pendulum_problem()
    with pytest.raises(ValueError, match="transcription: expected one of trapezoidal, hermite_simpson, multiple_shooting"):
        solve(problem, "collocation")
    with pytest.raises(ValueError, match=r"states: expected shape \(11, 2\), got \(10, 2\)"):
        problem.set_initial_guess(states=np.zeros((10, 2)))
    with pytest.raises(ValueError, match=r"controls: expected a scalar, shape \(1,\) or \(11, 1\), got \(11, 2\)"):
        problem.set_initial_guess(controls=np.zeros((11, 2)))
    with pytest.raises(ValueError, match=r"Q: expected shape \(2,\) or \(2, 2\), got \(3,\)"):
        QuadraticCost(problem.model, np.ones(3), np.ones(1), x_ref=np.zeros(2))
    with pytest.raises(ValueError, match=r"x_ref: expected 2 parameters per knot|x_ref: expected shape"):
        problem.add_cost(QuadraticCost(problem.model, np.ones(2), np.ones(1), x_ref=np.zeros((5, 2))))
    with pytest.raises(ValueError, match="print_level"):
        solve(problem, print_level=20)
    with pytest.raises(ValueError, match="options: expected a dict"):
        solve(problem, options=["tol", 1e-3])
    with pytest.raises(ValueError, match=r"state bounds: empty bounds"):
        problem.bound_states(lower=1.0, upper=0.0)
    with pytest.raises(ValueError, match="knots"):
        problem.bound_controls(lower=-1.0, knots=[3, 2])
    with pytest.raises(ValueError, match="quaternion"):
        Problem(Quadrotor(), N=5, tf=1.0, x0=np.r_[0, 0, 0, 2.0, 0, 0, 0, np.zeros(6)])


def test_one_built_solver_solves_new_data():
    problem = problems.get("pendulum")
    solver = IpoptSolver(problem, transcription="hermite_simpson")
    first = solver.solve()
    problem.bound_controls(-4.5, 4.5)  # bounds are read at each solve
    second = solver.solve()
    assert first.success and second.success
    assert np.abs(first.controls).max() > 4.5 and np.abs(second.controls).max() <= 4.5 + 1e-7
    problem.x0 = [0.5, 0.0]  # so is the initial state
    third = solver.solve(warm_start=second)
    assert third.success and np.array_equal(third.states[0], [0.5, 0.0]) and third.objective < second.objective
    problem.add_constraint(problem.constraints[0])  # a structural change needs a new solver
    with pytest.raises(ValueError, match="structure changed"):
        solver.solve()


def test_per_knot_control_bounds_reach_the_nlp():
    problem = problems.get("pendulum", u_max=10.0)
    coast = list(range(20, 31))
    problem.bound_controls(0.0, 0.0, knots=coast)  # e.g. a contact force in swing
    for transcription in ("trapezoidal", "hermite_simpson", "multiple_shooting"):
        sol = solve(problem, transcription)
        assert sol.success, sol.status
        assert np.abs(sol.controls[coast]).max() <= 1e-7
        if transcription == "hermite_simpson":  # midpoints between two coasting knots coast too
            assert np.abs(sol.intervals[20:30, 2]).max() <= 1e-7


def test_nan_in_a_user_function_returns_a_failed_solution():
    problem = problems.get("pendulum")
    problem.add_cost(FunctionCost(lambda x, u: ca.log(x[0] - 10.0)))  # NaN everywhere near the guess
    sol = solve(problem, "trapezoidal")
    assert sol.success is False and sol.status == "Invalid_Number_Detected"


def test_bad_ipopt_options_are_a_value_error():
    with pytest.raises(ValueError, match="options: unknown IPOPT option 'not_an_option'"):
        solve(pendulum_problem(), options={"not_an_option": 3})


def test_a_saved_solution_rebuilds_its_registered_problem(tmp_path):
    problem = problems.get("go1-jump", knots=(6, 4, 6), length=0.1)
    assert problem.recipe == {"name": "go1-jump", "params": {"knots": [6, 4, 6], "length": 0.1}}
    sol = solve(problem, options={"max_iter": 2})
    path = tmp_path / "jump.npz"
    sol.save(path)
    loaded = problems.load_solution(path)
    assert loaded == sol and loaded.problem_recipe == problem.recipe
    assert loaded.problem is not problem and loaded.problem.N == problem.N == 16
    x, u = loaded.evaluate(0.5 * loaded.tf)
    x_ref, u_ref = sol.evaluate(0.5 * sol.tf)
    assert np.allclose(x, x_ref, rtol=0, atol=1e-12) and np.allclose(u, u_ref, rtol=0, atol=1e-12)


def test_a_solution_without_recipe_says_how_to_attach_its_problem(tmp_path, quadrotor_solutions):
    hand_made = Problem(Pendulum(), N=5, tf=1.0, x0=np.zeros(2))
    assert hand_made.recipe is None
    sol = solve(hand_made, options={"max_iter": 1})
    sol.save(tmp_path / "p.npz")
    with pytest.raises(ValueError, match="no registry recipe.*problem="):
        problems.load_solution(tmp_path / "p.npz")
