"""The receding-horizon pieces against independent references (:mod:`trajopt.mpc`).

- the stage blocks read out of the NLP's Jacobian and Hessian equal the RK4
  step's tangent Jacobians (:meth:`trajopt.DiscreteDynamics.jacobian`) and the
  cost weights times the knot step;
- the Riccati recursion converges to scipy's discrete algebraic Riccati
  equation on a time-invariant system;
- shifting moves knots and multipliers by whole stages;
- the gains computed beside the real-time iteration's QP equal the recursion
  evaluated afterwards on the same linearization;
- closed loops in our own simulator: a quadrotor holds hover under a gust
  and tracks a moving reference; a failing tick keeps the previous plan and,
  after ``max_failures``, restarts cold.
"""
from __future__ import annotations

import os
import time

import casadi as ca
import numpy as np
import pytest
import scipy.linalg

import problems
from lie import axis_angle_to_quat
from models.quadrotor import Quadrotor
from trajopt import Constraint, DiscreteDynamics, Problem, QuadraticCost, QuadraticTerminalCost
from trajopt.mpc import MPC
from trajopt.mpc.controller import PREPARATION_PHASES, TICK_PHASES
from trajopt.mpc.disturbances import Gust, Push, parse_push
from trajopt.mpc.feedback import RiccatiGains
from trajopt.mpc.log import log_columns
from trajopt.mpc.loop import run_closed_loop
from trajopt.mpc.plant import ModelPlant
from trajopt.mpc.report import loop_statistics
from trajopt.mpc.shift import StageShift, shifted_trajectory
from trajopt.solvers import IpoptSolver, SqpSolver
from trajopt.solvers.stage_layout import stage_layout


def hover(model, position):
    return model.build_state(position, axis_angle_to_quat(np.zeros(3)), np.zeros(3), np.zeros(3))


def written_out_riccati(A, B, Q, R):
    """The recursion of trajopt.mpc.feedback written out with numpy (no cross terms)."""
    P, gains = Q[-1], [None] * len(A)
    for k in range(len(A) - 1, -1, -1):
        K = np.linalg.solve(R[k] + B[k].T @ P @ B[k], B[k].T @ P @ A[k])
        gains[k] = K
        P = Q[k] + A[k].T @ P @ A[k] - (B[k].T @ P @ A[k]).T @ K
    return np.array(gains)


def cartpole_linearization(X, U, N, tf=2.5):
    problem = problems.get("cartpole", N=N, tf=tf)
    solver = SqpSolver(problem, transcription="multiple_shooting_knot_cost", hessian="gauss-newton")
    jac, hess = solver.linearization(solver.nlp.pack(X, U))
    return problem, solver, jac, hess


def test_riccati_gains_read_the_rk4_step_jacobians_and_the_weights():
    """Against the RK4 step's own tangent Jacobians (DiscreteDynamics) and the cost weights times the knot step."""
    N = 11
    rng = np.random.default_rng(0)
    X, U = rng.standard_normal((N, 4)), rng.standard_normal((N, 1))
    problem, solver, jac, hess = cartpole_linearization(X, U, N)
    gains = RiccatiGains(solver.nlp, stage_layout(solver.nlp), jac.sparsity(), hess.sparsity())(jac, hess)
    step, h, cost = DiscreteDynamics(problem.model, "rk4"), problem.tf / (N - 1), problem.costs[0]
    AB = [step.jacobian(X[k], U[k], k * h, h) for k in range(N - 1)]
    Q = [h * cost.Q] * (N - 1) + [np.zeros((4, 4))]  # no running cost on the last knot of knot-cost shooting
    expected = written_out_riccati([a for a, _ in AB], [b for _, b in AB], Q, [h * cost.R] * (N - 1))
    assert np.allclose(gains, expected, rtol=1e-7, atol=1e-9)


def test_riccati_gains_converge_to_the_algebraic_riccati_solution():
    """A long horizon at one point: the first gain is the infinite-horizon LQR gain (scipy's DARE)."""
    N = 401
    x_up = np.array([0.0, np.pi, 0.0, 0.0])
    problem, solver, jac, hess = cartpole_linearization(np.tile(x_up, (N, 1)), np.zeros((N, 1)), N, tf=40.0)  # 40 s: far past the slowest closed-loop mode
    gains = RiccatiGains(solver.nlp, stage_layout(solver.nlp), jac.sparsity(), hess.sparsity())(jac, hess)
    h, cost = problem.tf / (N - 1), problem.costs[0]
    A, B = DiscreteDynamics(problem.model, "rk4").jacobian(x_up, [0.0], 0.0, h)
    P = scipy.linalg.solve_discrete_are(A, B, h * cost.Q, h * cost.R)
    K = np.linalg.solve(h * cost.R + B.T @ P @ B, B.T @ P @ A)
    assert np.allclose(gains[0], K, rtol=1e-6, atol=1e-8)


def test_shifted_multipliers_move_whole_stages():
    stage = np.array([0, 0, 1, 1, 1, 2, 2, 3, 3, -1])
    values = np.arange(10, dtype=float)
    out = StageShift(stage, 4)(values, 1)
    # stages 0 and 1 differ in size from their successors (zeros), stage 2 takes stage 3's entries,
    # stage 3 has no successor (zeros), the entry of no stage keeps its value
    assert out.tolist() == [0, 0, 0, 0, 0, 7, 8, 0, 0, 9]


def quadrotor_mpc(N=11, tf=0.5, model=None, **kwargs):
    model = Quadrotor(u_max=4.0) if model is None else model
    target = hover(model, [0.0, 0.0, 1.0])
    problem = Problem(model, N=N, tf=tf, x0=target)
    Q = np.r_[np.full(3, 100.0), np.full(3, 0.1), np.full(3, 1.0), np.full(3, 0.1)]
    problem.add_cost(QuadraticCost(model, Q, np.full(4, 0.1), x_ref=target, u_ref=model.hover_control()))
    problem.add_cost(QuadraticTerminalCost(model, 10 * Q, target))
    return model, target, problem, MPC(problem, **kwargs)


def test_shifted_trajectory_continues_with_the_transcriptions_step():
    model, target, problem, mpc = quadrotor_mpc()
    plan = mpc.reset(0.0, hover(model, [0.3, 0.0, 1.0]))
    h = plan.step
    X, U = shifted_trajectory(plan, 2 * h, problem.dynamics_params, True)
    assert np.allclose(X[: problem.N - 2], plan.states[2:]) and np.allclose(U[: problem.N - 2], plan.controls[2:])
    assert np.allclose(X[-1], plan.advance(X[-2], U[-2], problem.dynamics_params[-2]))
    x_half, u_half = plan.reference(0.5 * h)
    X, _ = shifted_trajectory(plan, 0.5 * h, problem.dynamics_params, True)
    assert np.allclose(X[0], x_half)


def test_shifted_trajectory_holds_the_model_over_the_appended_knots():
    """The appended knots start from the plan's last knot and step with the holding control of each state
    (the plan's last control braked its last interval towards the terminal cost)."""
    model, target, problem, mpc = quadrotor_mpc()
    plan = mpc.reset(0.0, hover(model, [0.3, 0.2, 1.0]))
    d = problem.dynamics_params
    hold = lambda x, _: model.equilibrium_control(x)  # noqa: E731
    X, U = shifted_trajectory(plan, 2 * plan.step, d, True, hold=hold)
    N = problem.N
    assert np.allclose(X[: N - 2], plan.states[2:]) and np.allclose(U[: N - 3], plan.controls[2:-1])
    for k in (N - 3, N - 2):  # the plan's last knot and the first appended one step with their holding controls
        assert np.allclose(U[k], hold(X[k], None))
        assert np.allclose(X[k + 1], plan.advance(X[k], U[k], d[k]))
    assert not np.allclose(U[N - 3], plan.controls[-1])  # the plan's last control is not kept


def test_ticks_that_overrun_their_period_skip_to_the_next_one_on_the_grid():
    """A solve longer than the period: the next tick is the first one of the period's grid after the plan
    arrived, so the ticks stay on the grid (whole knots apart for the warm start)."""

    def slow_update(problem, t, x):
        time.sleep(0.03)  # 1.5 periods of 20 ms

    model, target, problem, mpc = quadrotor_mpc(update=slow_update)
    result = run_closed_loop(mpc, ModelPlant(model, target, dt=0.002), 0.4, 50.0, delay="measured")
    times = np.array([tick.t for tick in result.ticks[1:]])
    assert np.allclose(times / 0.02, np.round(times / 0.02), atol=1e-6)
    gaps = np.diff(times)
    assert np.all(gaps >= 0.04 - 1e-9) and all(tick.deadline_miss for tick in result.ticks[1:])
    assert all(tick.arrival <= later.t + 1e-9 for tick, later in zip(result.ticks[1:], result.ticks[2:]))


@pytest.mark.parametrize("mode", ["rti", "converged"])
def test_quadrotor_holds_hover_through_a_gust(mode):
    model, target, problem, mpc = quadrotor_mpc(mode=mode)
    plant = ModelPlant(model, target, dt=0.002)
    result = run_closed_loop(mpc, plant, 2.0, 50.0, delay="tick", disturbances=[Gust([1.0, 0.0, 0.0], 0.5, 0.3)])
    assert not result.fell and all(r.success for r in result.log)
    error = np.linalg.norm(result.states[:, :3] - target[:3], axis=1)
    assert 0.01 < error.max() < 0.1  # the gust moves it, the loop brings it back
    assert error[-1] < 5e-3
    assert max(r.first_violation for r in result.log) < 1e-6
    # every tick's phases partition its preparation and compute time; the real-time iteration prepares each
    # tick (its update, warm start and linearization before the measurement) and reports its QP
    prepared_only = ("linearize", "prepare_other", "initial_state", "qp", "alongside")
    expected = list(TICK_PHASES) if mode == "rti" else [p for p in TICK_PHASES if p not in prepared_only]
    for record in result.log[1:]:
        assert list(record.phases) == expected and min(record.phases.values()) >= 0.0
        assert (record.preparation_time > 0) == (mode == "rti")
        assert sum(record.phases.values()) == pytest.approx(record.compute_time + record.preparation_time, rel=1e-9)
        if mode == "rti":
            assert sum(record.phases[p] for p in PREPARATION_PHASES) == pytest.approx(record.preparation_time, rel=1e-9)
    stats = loop_statistics(result, model)
    assert list(stats.phases) == expected
    columns = log_columns(result, model)
    assert all(np.isfinite(columns[f"time_{p}"][1:]).all() and np.isnan(columns[f"time_{p}"][0]) for p in expected)


def test_a_prepared_solve_is_the_solve_from_the_same_point():
    """prepare() then feedback() at the prepared initial state gives what solve() gives from the same point:
    the real-time iteration (its QP linearized in the preparation) and IPOPT (the base class's path)."""
    model, target, problem, mpc = quadrotor_mpc()
    plan = mpc.reset(0.0, hover(model, [0.2, -0.1, 0.9]))
    nlp, solver = mpc.nlp, mpc.solver
    problem.x0 = plan.states[0]
    nlp.recentre(plan.states)
    guess = nlp.pack(plan.states, plan.controls)
    whole = solver.solve(initial_guess=guess)
    solver.prepare(guess)
    split = solver.feedback(plan.states[0])
    assert whole.success and split.success
    assert np.allclose(split.primal, whole.primal, rtol=0.0, atol=1e-12) and split.max_violation == pytest.approx(whole.max_violation, abs=1e-12)
    ipopt = IpoptSolver(problem)
    whole = ipopt.solve(initial_guess=ipopt.nlp.pack(plan.states, plan.controls))
    ipopt.prepare(ipopt.nlp.pack(plan.states, plan.controls))
    split = ipopt.feedback(plan.states[0])
    assert whole.iterations == split.iterations and np.array_equal(split.primal, whole.primal)


def test_a_preparation_serves_one_feedback_and_a_solve_voids_it():
    model, target, problem, mpc = quadrotor_mpc()
    plan = mpc.reset(0.0, target)
    solver = mpc.solver
    with pytest.raises(RuntimeError, match="prepare"):
        solver.feedback(target)
    solver.prepare(solver.nlp.pack(plan.states, plan.controls))
    with pytest.raises(ValueError, match="x0"):
        solver.feedback(target[:-1])
    solver.prepare(solver.nlp.pack(plan.states, plan.controls))
    assert solver.feedback(target).success
    with pytest.raises(RuntimeError, match="prepare"):
        solver.feedback(target)
    solver.prepare(solver.nlp.pack(plan.states, plan.controls))
    solver.solve(initial_guess=solver.nlp.pack(plan.states, plan.controls))
    with pytest.raises(RuntimeError, match="prepare"):
        solver.feedback(target)


@pytest.mark.parametrize("refit", [True, False])
def test_a_prepared_tick_holds_the_first_knots_constraints_at_the_measured_state(refit):
    """A thrust cap that depends on the height, ``sum(u) <= 1.5 u_hover (1 - 2 (z - 1)^2)``, binding at the first
    knot of a climb. The tick is prepared at the plan's predicted state and measured 5 cm higher: its feedback
    linearizes the first knot's rows again at the measured state, and the applied control meets the cap to the
    QP's accuracy. Left at the prediction (``refit=False``), the cap's tangent there lies above the concave
    cap, and the control exceeds it by its curvature times (5 cm)^2 / 2."""
    model = Quadrotor(u_max=4.0)
    target = hover(model, [0.0, 0.0, 1.0])
    problem = Problem(model, N=11, tf=0.5, x0=target)
    Q = np.r_[np.full(3, 100.0), np.full(3, 0.1), np.full(3, 1.0), np.full(3, 0.1)]
    problem.add_cost(QuadraticCost(model, Q, np.full(4, 0.1), x_ref=target, u_ref=model.hover_control()))
    problem.add_cost(QuadraticTerminalCost(model, 10 * Q, target))
    cap = 1.5 * model.hover_control().sum()
    problem.add_constraint(Constraint(lambda x, u: ca.sum1(u) - cap * (1 - 2 * (x[2] - 1) ** 2), knots=list(range(problem.N - 1)), lower=-np.inf, upper=0.0, name="thrust cap"))
    mpc = MPC(problem)
    plan = mpc.reset(0.0, hover(model, [0.0, 0.0, 0.75]))
    if not refit:
        mpc.solver._step.refit_first_knot = None
    h = mpc.step_size
    mpc.prepare(h)
    measured = plan.reference(h)[0].copy()
    measured[2] += 0.05
    new = mpc.step(h, measured)
    mpc.check_pending()
    record = mpc.log[-1]
    assert new is not None and record.preparation_time > 0 and np.allclose(new.states[0], measured, atol=1e-12)
    thrust = new.controls[0].sum() - cap * (1 - 2 * (measured[2] - 1) ** 2)
    if refit:
        assert abs(thrust) < 1e-3 * cap  # the cap binds
        assert record.first_violation < 1e-8
    else:
        assert record.first_violation > 0.5 * cap * (0.05**2)


def test_a_failing_tick_keeps_the_previous_plan_and_restarts_cold():
    model, target, problem, mpc = quadrotor_mpc(max_failures=2)
    bad = {"on": False}

    def update(problem, t, x):
        problem.costs[0].x_ref = np.full(13, np.nan) if bad["on"] else target  # NaN data: the solve cannot succeed

    mpc.update = update
    plan = mpc.reset(0.0, target)
    bad["on"] = True
    assert mpc.step(0.05, target) is None and mpc.step(0.1, target) is None
    bad["on"] = False
    fresh = mpc.step(0.15, target)
    assert fresh is not None and mpc.plan is fresh and plan is not fresh
    log = mpc.log
    assert [r.success for r in log] == [True, False, False, True]
    assert [r.failures for r in log] == [0, 1, 2, 0] and log[3].cold


def test_bad_input_is_refused():
    model, target, problem, mpc = quadrotor_mpc()
    with pytest.raises(ValueError, match="mode"):
        MPC(problem, mode="fast")
    with pytest.raises(ValueError, match="budget"):
        MPC(problem, budget=-1.0)
    with pytest.raises(RuntimeError, match="reset"):
        mpc.step(0.0, target)
    plant = ModelPlant(model, target)
    for kwargs, match in (({"duration": -1.0, "rate": 50.0}, "duration"), ({"duration": 1.0, "rate": 0.0}, "rate"), ({"duration": 1.0, "rate": 50.0, "delay": "late"}, "delay")):
        with pytest.raises(ValueError, match=match):
            run_closed_loop(mpc, plant, **kwargs)
    with pytest.raises(ValueError, match="IMPULSE,ANGLE_DEG,T"):
        parse_push("6;90;2")
    with pytest.raises(ValueError, match="impulse"):
        Push(-1.0, 0.0, 1.0)
    assert np.allclose(parse_push("6,90,2").force(2.05), [0.0, 60.0, 0.0], atol=1e-12)


#: HPIPM to residuals of 1e-12 (the controller's 1e-4 would blur a comparison with a direct solve)
TIGHT_HPIPM = {"iter_max": 200, "res_g_max": 1e-12, "res_b_max": 1e-12, "res_d_max": 1e-12, "res_m_max": 1e-12}


def _linearized(solver, w0, p):
    """The step's QP data at ``w0`` written out with numpy: the constraint Jacobian, the symmetric Gauss-Newton
    Hessian (from the solver's linearization) and the objective's gradient from CasADi's own reverse mode."""
    import casadi as ca

    nlp = solver.nlp
    jac, hess = (np.asarray(ca.DM(m)) for m in solver.linearization(w0))
    grad = np.asarray(ca.Function("grad", [nlp.w, nlp.p], [ca.gradient(nlp.f, nlp.w)])(w0, p)).ravel()
    return jac, hess + np.triu(hess, 1).T, grad


@pytest.mark.parametrize("regularization", [0.0, 0.3])
def test_real_time_iteration_step_solves_its_regularized_kkt_system(regularization):
    """One real-time iteration from a perturbed hover equals the equality-constrained QP's KKT system written
    out with numpy: ``(H + lambda I) d + grad f + J^T nu = 0`` and ``g + J d = 0`` over the free variables
    (the fixed x0 stays), H the Gauss-Newton Hessian, grad f from CasADi's own reverse mode of the objective."""
    from trajopt.solvers.rti import RtiSolver

    model, target, problem, _ = quadrotor_mpc()
    solver = RtiSolver(problem, transcription="multiple_shooting_knot_cost", hessian="gauss-newton", chart=True, compile=False, options={"regularization": regularization, "hpipm": TIGHT_HPIPM})
    nlp = solver.nlp
    rng = np.random.default_rng(3)
    states = np.repeat(target[None], problem.N, axis=0)
    states[1:, :3] += 0.05 * rng.standard_normal((problem.N - 1, 3))
    nlp.recentre(states)
    w0 = nlp.pack(states, np.repeat(model.hover_control()[None], problem.N, axis=0)) + 1e-3 * rng.standard_normal(nlp.n_w)
    (lbw, ubw), (lbg, ubg), p = nlp.bounds_w(), nlp.bounds_g(), nlp.parameters()
    w0 = np.clip(w0, lbw, ubw)
    step = solver._create("cold")(x0=w0, p=p, lbx=lbw, ubx=ubw, lbg=lbg, ubg=ubg)
    d = step["x"] - w0

    jac, H, grad = _linearized(solver, w0, p)
    H = H + regularization * np.eye(nlp.n_w)
    g = np.asarray(nlp.g_function()(w0, p)).ravel()
    assert np.array_equal(lbg, ubg) and np.all(lbg == 0)  # the quadrotor's rows are its dynamics gaps
    fixed = lbw == ubw
    free = ~fixed
    assert np.all(np.isinf(lbw[free]) | (w0[free] + d[free] > lbw[free] + 1e-6)) and np.all(np.isinf(ubw[free]) | (w0[free] + d[free] < ubw[free] - 1e-6))  # no bound active
    n_free, n_g = int(free.sum()), len(g)
    kkt = np.block([[H[np.ix_(free, free)], jac[:, free].T], [jac[:, free], np.zeros((n_g, n_g))]])
    rhs = -np.r_[grad[free] + H[np.ix_(free, fixed)] @ d[fixed], g + jac[:, fixed] @ d[fixed]]
    expected = np.linalg.solve(kkt, rhs)[:n_free]
    assert np.allclose(d[fixed], 0.0, atol=1e-10)  # HPIPM holds an equal pair of bounds to its residual tolerance
    assert np.allclose(d[free], expected, rtol=1e-7, atol=1e-9)


def test_real_time_iteration_multipliers_hold_at_an_active_control_bound():
    """HPIPM solves for the controls in units of their bounds (here 4, the rotors' thrust limit); the step's
    multipliers come back in the problem's units: started 0.5 m below the hover it holds, the quadrotor's first
    thrusts reach their bound, and ``H d + grad f + J^T lam_g + lam_x = 0`` on the free variables."""
    from trajopt.solvers.rti import RtiSolver

    model, target, problem, _ = quadrotor_mpc()
    solver = RtiSolver(problem, transcription="multiple_shooting_knot_cost", hessian="gauss-newton", chart=True, compile=False, options={"hpipm": TIGHT_HPIPM})
    nlp = solver.nlp
    states = np.repeat(target[None], problem.N, axis=0)
    nlp.recentre(states)
    w0 = nlp.pack(states, np.repeat(model.hover_control()[None], problem.N, axis=0))
    (lbw, ubw), (lbg, ubg), p = nlp.bounds_w(), nlp.bounds_g(), nlp.parameters()
    height = nlp.idx_x[0][2]
    lbw[height] = ubw[height] = w0[height] - 0.5
    step = solver._create("cold")(x0=w0, p=p, lbx=lbw, ubx=ubw, lbg=lbg, ubg=ubg)
    d, lam_x = step["x"] - w0, np.asarray(step["lam_x"]).ravel()
    assert np.allclose(step["x"][nlp.idx_u[0]], 4.0, atol=1e-9) and np.all(lam_x[nlp.idx_u[0]] > 1e-3)

    jac, H, grad = _linearized(solver, w0, p)
    stationarity = H @ d + grad + jac.T @ np.asarray(step["lam_g"]).ravel() + lam_x
    assert np.abs(stationarity[lbw != ubw]).max() < 1e-9


def test_a_placeholder_control_bound_does_not_set_the_controls_unit():
    """Rotors bounded at 1000 (a placeholder far beyond what the cost asks for) are solved for in units of
    ``1 / sqrt`` of the cost's curvature (0.1 weight x 0.05 s step: 0.005, so 16), not of the bound (1024)."""
    from trajopt.solvers.rti import RtiSolver

    _, _, problem, _ = quadrotor_mpc(model=Quadrotor(u_max=1000.0))
    solver = RtiSolver(problem, transcription="multiple_shooting_knot_cost", hessian="gauss-newton", chart=True, compile=False)
    scale = solver._create("cold").scale
    assert np.all(scale[solver.nlp.idx_u] == 16.0) and np.all(np.delete(scale, np.ravel(solver.nlp.idx_u)) == 1.0)


def test_real_time_iteration_refuses_a_bad_regularization():
    from trajopt.solvers.rti import RtiSolver

    model, target, problem, _ = quadrotor_mpc()
    for bad in (-1.0, float("nan"), "big", True):
        with pytest.raises(ValueError, match="regularization"):
            RtiSolver(problem, transcription="multiple_shooting_knot_cost", hessian="gauss-newton", chart=True, compile=False, options={"regularization": bad})


def test_gains_computed_beside_the_qp_are_those_of_the_steps_linearization():
    """From the second plan on, the real-time iteration's Riccati gains run on a second thread while HPIPM
    solves (RtiSolver.alongside); they equal the recursion evaluated afterwards on the same linearization."""
    from trajopt.solvers.rti import RtiSolver

    model, target, problem, mpc = quadrotor_mpc()
    mpc.reset(0.0, hover(model, [0.3, 0.2, 1.0]))
    assert isinstance(mpc.solver, RtiSolver) and mpc.solver.alongside is not None
    h = mpc.step_size
    plan = mpc.step(h, hover(model, [0.25, 0.15, 1.0]))
    assert plan is not None and mpc.solver.last_alongside is plan.gains
    jac, hess = mpc.solver.last_linearization
    expected = RiccatiGains(mpc.nlp, stage_layout(mpc.nlp), jac.sparsity(), hess.sparsity())(jac, hess)
    assert np.abs(expected).max() > 1.0 and np.array_equal(plan.gains, expected)
    assert mpc.step(2 * h, target).gains is not plan.gains  # a new step, new gains
    with pytest.raises(ValueError, match="alongside"):
        mpc.solver.alongside = "gains"


def test_a_forked_child_computes_its_gains_beside_the_qp_too():
    """A process forked after the controller's first step (multiprocessing's default on Linux) inherits the
    gains' thread pool but not its thread: the child starts its own, and its step does not wait forever."""
    import multiprocessing

    model, target, problem, mpc = quadrotor_mpc()
    mpc.reset(0.0, hover(model, [0.3, 0.2, 1.0]))
    assert mpc.step(mpc.step_size, target) is not None  # the worker thread now runs in this process

    def child():
        os._exit(0 if mpc.step(2 * mpc.step_size, target) is not None else 1)

    process = multiprocessing.get_context("fork").Process(target=child)
    process.start()
    process.join(timeout=60)
    if process.exitcode is None:
        process.kill()
    assert process.exitcode == 0
