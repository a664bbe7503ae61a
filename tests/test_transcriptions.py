"""Transcriptions (issue 4, item 3): order on the manifold, NLP derivatives, stage-wise layout."""
import subprocess
import sys
from pathlib import Path

import casadi as ca
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import problems
from lie import axis_angle_to_quat
from models.quadrotor import Quadrotor
from models.torque_body import TorqueBody
from trajopt import NLP, Constraint, FreeTime, FunctionCost, GoalConstraint, MultipleShooting, PhaseDurations, Problem, QuadraticCost, QuadraticTerminalCost, get_transcription, solve
from trajopt.solvers.derivatives import stagewise_derivatives
from trajopt.manifold import normalize_quaternions

ROOT = Path(__file__).resolve().parents[1]
TRANSCRIPTIONS = ["trapezoidal", "hermite_simpson", "multiple_shooting"]
#: Minimum fitted slope of the state error vs the step (acceptance criteria of issue 4).
MIN_SLOPE = {"trapezoidal": 1.8, "hermite_simpson": 3.5, "multiple_shooting": 3.5}
IPOPT_TOL = 1e-12


def close(a, b, tol):
    """|a - b| <= tol * max(1, |b|), element-wise."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return np.all(np.abs(a - b) <= tol * np.maximum(1.0, np.abs(b)))


def drifting_slew(N):
    """90 degree rest-to-rest slew about (1, 2, 3)/|.| of a body drifting with a BODY-frame velocity.

    Position and velocity are free at the end (only attitude and angular
    velocity are constrained), so the body-frame velocity is carried through
    the rotation: a scheme that mixes frames would lose order in the position.
    Cost: torque energy only, no bounds (nothing active).
    """
    model = TorqueBody(velocity_frame="body", inertia=(1.0, 2.0, 3.0))
    axis = np.array([1.0, 2.0, 3.0]) / np.sqrt(14.0)
    x0 = model.build_state(np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0]), [0.5, -0.3, 0.2], np.zeros(3))
    xf = model.build_state(np.zeros(3), axis_angle_to_quat(np.pi / 2 * axis), np.zeros(3), np.zeros(3))
    problem = Problem(model, N=N, tf=4.0, x0=x0, name="drifting-slew")
    problem.add_cost(QuadraticCost(model, np.zeros(12), np.ones(3), x_ref=xf))
    problem.add_constraint(GoalConstraint(model, xf, components=[3, 4, 5, 9, 10, 11]))
    return problem


def reintegration_error(solution):
    """Max over knots of |state_error(x_fine(t_k), x_k)| for the re-integrated trajectory.

    Controls between knots come from ``solution.evaluate`` -- what the
    transcription assumes: linear (trapezoidal), quadratic through the midpoint
    control (Hermite-Simpson), held (multiple shooting). The fine integrator is
    independent of the code under test: DOP853 on the raw ODE with tolerance
    1e-13, restarted at each knot (the control may have a kink there), from
    ``x_0`` over the whole horizon (the global error).
    """
    model = solution.problem.model
    f = model.casadi_function("dynamics")
    N, h = solution.N, solution.tf / (solution.N - 1)
    x, worst = solution.states[0], 0.0
    for k in range(N - 1):
        t0 = k * h

        def rhs(t, x):
            tt = min(max(t, t0 + 1e-12 * h), t0 + h * (1 - 1e-12))  # evaluate the control of interval k
            return np.asarray(f(x, solution.evaluate(tt)[1], t)).ravel()

        x = solve_ivp(rhs, (t0, t0 + h), x, method="DOP853", rtol=1e-13, atol=1e-13).y[:, -1]
        worst = max(worst, np.linalg.norm(model.state_error(x, solution.states[k + 1])))
    return worst


@pytest.mark.parametrize("transcription", TRANSCRIPTIONS)
def test_order_of_accuracy_on_the_manifold(transcription):
    Ns = np.array([10, 14, 20, 28, 40, 56, 80])
    errors = []
    for N in Ns:
        sol = solve(drifting_slew(int(N)), transcription, options={"tol": IPOPT_TOL})
        assert sol.success, sol.status
        errors.append(reintegration_error(sol))
    errors, h = np.array(errors), 4.0 / (Ns - 1)
    used = errors > 100 * IPOPT_TOL  # only errors well above the solver tolerance carry the scheme's order
    assert used.sum() >= 4, errors
    slope = np.polyfit(np.log(h[used]), np.log(errors[used]), 1)[0]
    assert slope >= MIN_SLOPE[transcription], (transcription, errors, slope)


def rich_problem(N=6, free_time=False):
    """A quadrotor problem exercising every kind of NLP row (norms, goal, parameterized constraint, free tf;
    ``free_time="phases"``: two phase durations tied by their total, a row of its own)."""
    model = Quadrotor(u_max=4.0)
    x0 = model.build_state([0, 0, 0], np.eye(3), np.zeros(3), np.zeros(3))
    xf = model.build_state([1, 0.5, 1], axis_angle_to_quat(np.array([0.0, 0.0, 0.5])), np.zeros(3), np.zeros(3))
    tf = FreeTime(0.5, 5.0, 2.0) if free_time else 2.0
    if free_time == "phases":
        tf = PhaseDurations((0, 2, N - 1), [0.8, 1.2], [0.4, 0.6], [2.0, 3.0], rows=[[1.0, 1.0]], row_lower=[2.0], row_upper=[2.0])
    problem = Problem(model, N=N, tf=tf, x0=x0, name="rich")
    refs = normalize_quaternions(model, np.linspace(x0, xf, N))  # reference states need unit quaternions
    problem.add_cost(QuadraticCost(model, np.full(12, 0.1), np.full(4, 0.1), x_ref=refs, u_ref=model.hover_control()))
    problem.add_cost(FunctionCost(lambda x, u, p: p[0] * ca.sumsqr(x[7:10]), params=[0.3]))
    problem.add_cost(QuadraticTerminalCost(model, np.ones(12), xf))
    problem.add_constraint(GoalConstraint(model, xf, components=[0, 1, 2]))
    problem.add_constraint(Constraint(lambda x, u, p: ca.vertcat(x[2] - p[0], ca.sum1(u)), knots=[1, 3], lower=[-1.0, 0.0], upper=[[2.0, 10.0], [3.0, 12.0]], params=[[0.1], [0.2]], name="height_and_thrust"))
    tilt = Constraint(lambda x, u, p: p[0] * ca.sumsqr(x[4:7]) + u[0] * u[1], knots=[2, 3, 4], lower=-np.inf, upper=[0.3, 0.4, 0.5], params=[[1.0], [2.0], [3.0]], midpoints=True, name="tilt")
    problem.add_constraint(tilt)  # nonlinear in x and u, with parameters, also at Hermite-Simpson midpoints
    return problem


def random_point(nlp, seed=3):
    rng = np.random.default_rng(seed)
    return nlp.initial_guess() + 0.1 * rng.standard_normal(nlp.n_w), nlp.parameters(), rng.standard_normal(nlp.n_g)


def dense(M):
    return np.asarray(ca.densify(M))


@pytest.mark.parametrize("free_time", [False, True, "phases"], ids=["fixed_tf", "free_tf", "phases"])
@pytest.mark.parametrize("transcription", TRANSCRIPTIONS)
def test_constraint_jacobian_matches_finite_differences(transcription, free_time):
    nlp = NLP(rich_problem(free_time=free_time), transcription)
    w, p, _ = random_point(nlp)
    g = nlp.g_function()
    eps = 1e-6
    J_fd = np.column_stack([(np.asarray(g(w + eps * e, p)) - np.asarray(g(w - eps * e, p))).ravel() / (2 * eps) for e in np.eye(nlp.n_w)])
    J_stagewise = dense(stagewise_derivatives(nlp)["jac_g"](w, p)[1])
    J_casadi = dense(ca.Function("jac_g", [nlp.w, nlp.p], [ca.jacobian(nlp.g, nlp.w)])(w, p))
    # central differences: truncation ~eps^2 |g'''| and round-off ~1e-16 |g| / eps
    assert close(J_stagewise, J_fd, 1e-6), np.abs(J_stagewise - J_fd).max()
    assert close(J_casadi, J_fd, 1e-6), np.abs(J_casadi - J_fd).max()


@pytest.mark.parametrize("free_time", [False, True, "phases"], ids=["fixed_tf", "free_tf", "phases"])
@pytest.mark.parametrize("transcription", TRANSCRIPTIONS)
def test_stagewise_gradient_and_hessian(transcription, free_time):
    nlp = NLP(rich_problem(free_time=free_time), transcription)
    w, p, lam = random_point(nlp)
    d = stagewise_derivatives(nlp)
    f = ca.Function("f", [nlp.w, nlp.p], [nlp.f])
    eps = 1e-6
    grad_fd = np.array([(float(f(w + eps * e, p)) - float(f(w - eps * e, p))) / (2 * eps) for e in np.eye(nlp.n_w)])
    assert close(dense(d["grad_f"](w, p)[1]).ravel(), grad_fd, 1e-6)
    sigma, lam_g = ca.MX.sym("sigma"), ca.MX.sym("lam", nlp.n_g)
    lagrangian = sigma * nlp.f + ca.dot(lam_g, nlp.g)
    H_ref = ca.Function("hess_l", [nlp.w, nlp.p, sigma, lam_g], [ca.triu(ca.hessian(lagrangian, nlp.w)[0])])
    H = d["hess_lag"](w, p, 0.7, lam)
    assert H.sparsity() == H_ref.sparsity_out(0)  # same structure as CasADi's (upper triangle)
    assert close(dense(H), dense(H_ref(w, p, 0.7, lam)), 1e-12)  # both exact: round-off only


def test_threaded_stage_maps_give_the_same_numbers():
    """The quadrotor's Hermite-Simpson interval Jacobian and Hessian are heavy enough to run on threads;
    every derivative output is bit-for-bit the serial one (each column is the same code on the same data)."""
    nlp = NLP(problems.get("quadrotor"), "hermite_simpson")
    w, p, lam = random_point(nlp)
    serial, threaded = stagewise_derivatives(nlp, threads=1), stagewise_derivatives(nlp, threads=2)
    kinds = lambda d: {g.class_name() for f in d.values() for g in f.find_functions(1)}  # noqa: E731
    assert "ThreadMap" in kinds(threaded) and "ThreadMap" not in kinds(serial)
    for name, args in (("grad_f", (w, p)), ("jac_g", (w, p)), ("hess_lag", (w, p, 0.7, lam))):
        outputs = serial[name].call(list(args)), threaded[name].call(list(args))
        for a, b in zip(*outputs):
            assert np.array_equal(dense(a), dense(b)), name
    with pytest.raises(ValueError, match="threads"):
        stagewise_derivatives(nlp, threads=0)


def test_mumps_blas_is_single_threaded_even_after_an_earlier_ipopt_plugin_load():
    """The OpenBLAS copy MUMPS uses is set to one thread, also when IPOPT was loaded before any solver
    (an options check loads it): a fresh process, so that nothing of this one's state counts."""
    script = (
        "import ctypes, problems\n"
        "from trajopt import IpoptSolver\n"
        "from trajopt.solvers.blas import loaded_casadi_blas\n"
        "from trajopt.solvers.options import check_ipopt_options\n"
        "check_ipopt_options({'tol': 1e-8})\n"
        "IpoptSolver(problems.get('cartpole'), options={'tol': 1e-8}).solve()\n"
        "print([ctypes.CDLL(path).openblas_get_num_threads() for path in loaded_casadi_blas()])\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.split("\n")[-2] == "[1]", out.stdout  # one copy mapped, on one thread


@pytest.mark.parametrize("transcription", TRANSCRIPTIONS)
def test_variables_and_rows_are_stage_ordered(transcription):
    nlp = NLP(rich_problem(N=7, free_time=True), transcription)
    stages = nlp.var_stage[nlp.var_stage >= 0]
    assert np.all(np.diff(stages) >= 0) and nlp.var_stage[-1] == -1  # tf last
    assert np.all(np.diff(nlp.row_stage) >= 0)
    assert set(nlp.row_stage.tolist()) == set(range(7))
    lbg, ubg = nlp.bounds_g()
    assert lbg.shape == ubg.shape == (nlp.n_g,)


@pytest.mark.parametrize("transcription", TRANSCRIPTIONS)
def test_rich_problem_solves_with_free_time(transcription):
    sol = solve(rich_problem(N=11, free_time=True), transcription)
    assert sol.success, sol.status
    assert sol.max_violation < 1e-6
    assert 0.5 - 1e-8 <= sol.tf <= 5.0 + 1e-8
    assert close(sol.times, np.linspace(0, sol.tf, 11), 1e-15)
    x_mid_height = sol.states[[1, 3], 2]
    assert np.all(x_mid_height >= [0.1 - 1 - 1e-7, 0.2 - 1 - 1e-7])


@pytest.mark.parametrize("transcription", TRANSCRIPTIONS)
def test_evaluate_interpolates_through_the_knots(transcription):
    sol = solve(drifting_slew(11), transcription)
    model = sol.problem.model
    x, u = sol.evaluate(sol.times)
    # at a knot the interpolant reproduces x_k (exactly at the interval start, to the defect at its end)
    for k in range(sol.N):
        assert np.linalg.norm(model.state_error(x[k], sol.states[k])) <= 1e-7
    assert close(u[:-1], sol.controls[:-1], 1e-12)
    x_half, u_half = sol.evaluate(sol.times[:-1] + 0.5 * (sol.times[1] - sol.times[0]))
    assert np.abs(np.linalg.norm(x_half[:, 3:7], axis=1) - 1).max() <= 1e-12
    if transcription == "hermite_simpson":  # the midpoint variables are the interpolant's midpoints
        assert all(np.linalg.norm(model.state_error(a, b)) <= 1e-7 for a, b in zip(x_half, sol.intervals[:, :13]))
        assert close(u_half, sol.intervals[:, 13:], 1e-12)
    if transcription == "multiple_shooting":
        assert close(u_half, sol.controls[:-1], 0)


@pytest.mark.parametrize("transcription", TRANSCRIPTIONS)
def test_minimum_time_warm_started_from_a_fixed_time_solution(transcription):
    fixed = solve(problems.get("pendulum", N=41), transcription)  # tf = 3 s
    model = fixed.problem.model
    problem = Problem(model, N=41, tf=FreeTime(0.5, 10.0, 3.0), x0=[np.pi, 0.0], name="min-time pendulum")
    problem.add_cost(FunctionCost(lambda x, u: 1.0 + 1e-2 * u[0] ** 2))
    problem.add_constraint(GoalConstraint(model, np.zeros(2)))
    # a different layout (tf is a variable here): the previous trajectory is a primal guess only
    sol = solve(problem, transcription, warm_start=fixed)
    assert sol.success, sol.status
    assert 2.0 < sol.tf < 2.8  # faster than the fixed-time swing-up (about 2.43 s)
    assert sol.tf <= sol.objective <= sol.tf * (1 + 1e-2 * 25) + 1e-8  # J = tf + 0.01 integral u^2, |u| <= 5


def test_shooting_with_another_integrator_is_a_transcription_object():
    transcription = MultipleShooting("rk3")
    assert transcription.name == "multiple_shooting_rk3" and transcription.order == 3
    sol = solve(problems.get("pendulum"), transcription)
    assert sol.success and sol.transcription == "multiple_shooting_rk3"
    assert get_transcription(sol.transcription).integrator.name == "rk3"  # what Solution.evaluate rebuilds
    with pytest.raises(ValueError, match="explicit"):
        MultipleShooting("implicit_midpoint")


@pytest.mark.parametrize("midpoints", [False, True])
def test_constraints_at_hermite_simpson_midpoints(midpoints):
    problem = problems.get("pendulum", u_max=10.0)
    limit = 4.0
    problem.add_constraint(Constraint(lambda x: x[1], lower=-limit, upper=limit, midpoints=midpoints, name="rate limit"))
    sol = solve(problem, "hermite_simpson")
    assert sol.success, sol.status
    assert np.abs(sol.states[:, 1]).max() <= limit + 1e-7
    excess = np.abs(sol.intervals[:, 1]).max() - limit  # midpoint rates
    assert (excess <= 1e-7) if midpoints else (excess > 1e-3)  # without the flag the midpoints are free
    nlp = NLP(problem, "hermite_simpson")
    assert sum(b.rows * b.K for b in nlp.blocks if b.kind == "midpoint") == (problem.N - 1 if midpoints else 0)
