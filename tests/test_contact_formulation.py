"""The legged contact formulation (torques only; forces and accelerations from the KKT contact dynamics)
and the stage-wise solve path it comes with: tangent-chart knots, Gauss-Newton Hessians, fatrop, SQP+HPIPM.

Oracles: pinocchio's ``constraintDynamics`` (forces and accelerations, 1e-9) and
``framesForwardKinematics`` (slip, swing heights), finite differences for the
RNEA-identity Jacobian, IPOPT's optimum for the other backends.
"""
import casadi as ca
import numpy as np
import pinocchio as pin
import pytest

import problems
from models import Go1
from models.contact_dynamics import ContactDynamics
from models.multibody.contact import contact_dynamics_function
from tests.legged_checks import pinocchio_contact_check, pinocchio_contact_forces
from trajopt import IpoptSolver, Problem, QuadraticCost, SqpSolver, solve
from trajopt.solvers.fatrop import FatropSolver
from trajopt.nlp import NLP, chart_bounds, plain_coordinates

RNG = np.random.default_rng(7)
MASKS = ([1, 1, 1, 1], [1, 0, 0, 1], [0, 1, 1, 0], [1, 1, 1, 0], [0, 0, 0, 0])


@pytest.fixture(scope="module")
def go1():
    return Go1()


@pytest.fixture(scope="module")
def kkt(go1):
    return contact_dynamics_function(go1.tree, go1._dof_parents, go1.kinematics_bodies, go1.B_func(), "go1_test_kkt")


def random_state(robot) -> np.ndarray:
    x = robot.init_state()
    x[robot.nq :] = 0.5 * RNG.standard_normal(robot.nv)
    x[7 : robot.nq] += 0.1 * RNG.standard_normal(robot.nu)
    return x


@pytest.mark.parametrize("mask", MASKS, ids=lambda m: "".join(map(str, m)))
def test_kkt_contact_dynamics_match_pinocchio(go1, kkt, mask):
    """Accelerations against ``constraintDynamics`` (or ``aba`` in flight), forces against its ``lambda_c``: 1e-9."""
    model = go1.pin_model
    data = model.createData()
    frames = [model.frames[model.getFrameId(f)] for f in go1.kinematics_bodies]
    for _ in range(5):
        x, u = random_state(go1), 5.0 * RNG.standard_normal(go1.nu)
        a, f = (np.asarray(o).ravel() for o in kkt(x, u, np.array(mask, float)))
        q, v, tau = go1.change_order(x[: go1.nq], "nominal", "pinocchio"), x[go1.nq :], go1.B_func() @ u
        active = np.flatnonzero(mask)
        if active.size:
            contacts = pin.StdVec_RigidConstraintModel([pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, model, frames[i].parentJoint, frames[i].placement, pin.LOCAL_WORLD_ALIGNED) for i in active])
            datas = pin.StdVec_RigidConstraintData([c.createData() for c in contacts])
            pin.initConstraintDynamics(model, data, contacts, datas)
            a_ref = pin.constraintDynamics(model, data, q, v, tau, contacts, datas)
            f_ref = np.zeros((4, 3))
            f_ref[active] = np.asarray(data.lambda_c).reshape(-1, 3)
        else:
            a_ref, f_ref = pin.aba(model, data, q, v, tau), np.zeros((4, 3))
        assert np.abs(a - a_ref).max() <= 1e-9 * max(1.0, np.abs(a_ref).max())
        assert np.abs(f - f_ref.ravel()).max() <= 1e-9 * max(1.0, np.abs(f_ref).max())


def test_rnea_identity_jacobian_matches_differences_and_plain_ad(go1, kkt):
    """The custom Jacobian (used on MX graphs) against central differences (1e-6) and against
    automatic differentiation of the factorized solve (1e-9, both in the tangent space)."""
    X, U, S = ca.MX.sym("x", go1.nx), ca.MX.sym("u", go1.nu), ca.MX.sym("s", 4)
    a, f = kkt(X, U, S)
    custom = ca.Function("custom", [X, U, S], [ca.jacobian(ca.vertcat(a, f), ca.vertcat(X, U))]).expand()
    xs, us, ss = ca.SX.sym("x", go1.nx), ca.SX.sym("u", go1.nu), ca.SX.sym("s", 4)
    a_sx, f_sx = kkt(xs, us, ss)  # SX call: the solve inlined, differentiated by AD
    plain = ca.Function("plain", [xs, us, ss], [ca.jacobian(ca.vertcat(a_sx, f_sx), ca.vertcat(xs, us))])
    x, u, s = random_state(go1), 5.0 * RNG.standard_normal(go1.nu), np.array([1.0, 0.0, 1.0, 1.0])
    E = np.asarray(go1.error_jacobian(x))

    def tangent(J):
        J = np.asarray(J)
        return np.hstack([J[:, : go1.nx] @ E, J[:, go1.nx :]])

    T, T_ad = tangent(custom(x, u, s)), tangent(plain(x, u, s))
    assert np.abs(T - T_ad).max() <= 1e-9 * np.abs(T_ad).max()

    def value(xx, uu):
        return np.concatenate([np.asarray(o).ravel() for o in kkt(xx, uu, s)])

    eps, fd = 1e-6, np.zeros_like(T)
    for j in range(go1.error_dim):
        d = np.zeros(go1.error_dim)
        d[j] = eps
        fd[:, j] = (value(np.asarray(go1.apply_dx(x, d)).ravel(), u) - value(np.asarray(go1.apply_dx(x, -d)).ravel(), u)) / (2 * eps)
    for j in range(go1.nu):
        du = np.zeros(go1.nu)
        du[j] = eps
        fd[:, go1.error_dim + j] = (value(x, u + du) - value(x, u - du)) / (2 * eps)
    assert np.abs(T - fd).max() <= 1e-6 * np.abs(T).max()  # central differences: O(eps^2) truncation, O(1e-10/eps) round-off


def test_contact_model_checks_its_inputs(go1):
    cm = ContactDynamics(go1, "contact")
    assert (cm.control_dim, cm.dynamics_param_dim, cm.symbol_type) == (go1.nu, 4, ca.MX)
    x = go1.init_state()
    with pytest.raises(ValueError, match="stance: expected a mask of 0 and 1"):
        cm.contact_solution(x, np.zeros(go1.nu), [1, 0.5, 1, 1])
    with pytest.raises(ValueError, match="params"):
        cm.dynamics(x, np.zeros(go1.nu), 0.0)
    with pytest.raises(ValueError, match="contact_solution: the 'inverse' formulation"):
        ContactDynamics(go1, "inverse").contact_solution(x, np.zeros(go1.nu), [1, 1, 1, 1])


@pytest.fixture(scope="module")
def contact_trot():
    problem = problems.get("go1-trot", formulation="contact")
    return problem, solve(problem, compile=False)  # CI: the virtual machine (the compiled path is benchmarked)


def test_contact_trot_defaults(contact_trot):
    problem, solution = contact_trot
    assert problem.solve_defaults == {"solver": "fatrop", "hessian": "gauss-newton", "chart": True, "compile": True}
    assert solution.transcription == "multiple_shooting_rk3_knot_cost"
    assert solution.controls.shape == (problem.N, 12)
    assert solution.success, solution.status
    assert solution.max_violation <= 1e-8


def test_contact_trot_holds_its_hard_constraints_checked_with_pinocchio(contact_trot):
    """Forces recomputed by pinocchio from the returned states and torques: the problem's equal them to
    1e-9; friction pyramid, unilateral force and torque limits hold; stance feet do not slip."""
    problem, solution = contact_trot
    check = pinocchio_contact_check(problem, solution)
    assert check["dynamics"] <= 1e-9
    assert check["friction_margin"] >= -1e-6 and check["min_fz"] >= -1e-6  # IPOPT-like tolerances on N-scale rows
    assert check["torque_ratio"] <= 1 + 1e-8
    # held by the RK3-integrated acceleration constraint from touchdown on (measured 1.3e-5 m)
    assert check["slip"] <= 5e-5 and check["touchdown_speed"] <= 1e-6
    assert check["swing_floor"] >= -1e-8 and check["lift"] >= problem.swing_apex - 1e-6


def test_contact_trot_forces_from_pinocchio_equal_the_problem_s(contact_trot):
    problem, solution = contact_trot
    K = problem.N - 1
    ours = problem.contact_forces(solution.states[:K], solution.controls[:K], knots=np.arange(K))
    theirs = pinocchio_contact_forces(problem, solution.states[:K], solution.controls[:K])
    assert np.abs(ours - theirs).max() <= 1e-9 * np.abs(theirs).max()
    assert np.abs(ours[~problem.schedule.stance[:K]]).max() == 0.0


@pytest.mark.parametrize("backend", [IpoptSolver, SqpSolver], ids=["ipopt", "sqp"])
def test_contact_trot_agrees_across_backends(contact_trot, backend):
    """IPOPT and SQP + HPIPM on the same NLP (Gauss-Newton, charts) reach fatrop's optimum (fatrop's dual
    tolerance is 1e-6); SQP's steps are capped by HPIPM_INFINITY, which must not bind at the optimum."""
    problem, solution = contact_trot
    other = backend(problem, hessian="gauss-newton", chart=True).solve()
    assert other.success, other.status
    assert other.max_violation <= 1e-8
    assert abs(other.objective - solution.objective) <= 1e-5 * abs(other.objective)
    assert np.abs(other.states - solution.states).max() <= 1e-3


def test_contact_formulation_refuses_collocation():
    with pytest.raises(ValueError, match="'contact' formulation holds knot k's stance"):
        solve(problems.get("go1-trot", formulation="contact", N=7), "trapezoidal", solver="ipopt")


# ------------------------------------------------------------ tangent charts and Gauss-Newton


def test_tangent_chart_round_trip_and_bounds():
    problem = problems.get("go1-trot", formulation="contact", N=7)
    nlp = NLP(problem, chart=True)
    X, U = problem.initial_guess()
    X[:, :3] += 0.01 * RNG.standard_normal((problem.N, 3))
    assert nlp.n_state == 36 and nlp.norm_fn is None
    assert np.abs(nlp.to_states(nlp.to_variables(X)) - X).max() <= 1e-12
    plain = plain_coordinates(problem.model)
    assert plain.sum() == 30  # 12 joint angles, 18 velocities; base position (body frame) and attitude are not plain
    lo, hi = problem.state_lower.copy(), problem.state_upper.copy()
    d_lo, d_hi = chart_bounds(plain, X, lo, hi)
    assert np.array_equal(d_lo[1:, 6:18], lo[1:, 7:19] - X[1:, 7:19])
    lo[3, 0] = -1.0  # a bound on a base position is not expressible in the chart
    with pytest.raises(ValueError, match=r"x\[0\] is bounded at knot 3"):
        chart_bounds(plain, X, lo, hi)


def test_gauss_newton_hessian_is_the_cost_hessian_for_linear_residuals():
    """Cartpole (vector state), quadratic cost: the Gauss-Newton Hessian equals the exact Hessian of the
    Lagrangian with zero multipliers (the residuals are linear), and ignores the multipliers."""
    from trajopt.solvers.derivatives import stagewise_derivatives

    base = problems.get("cartpole")
    nlp = NLP(base, "multiple_shooting_knot_cost")
    gn, exact = stagewise_derivatives(nlp, hessian="gauss-newton"), stagewise_derivatives(nlp)
    w, p = nlp.initial_guess() + 0.1 * RNG.standard_normal(nlp.n_w), nlp.parameters()
    lam = RNG.standard_normal(nlp.n_g)
    H_gn = np.asarray(ca.densify(gn["hess_lag"](w, p, 0.7, lam)))
    assert np.array_equal(H_gn, np.asarray(ca.densify(gn["hess_lag"](w, p, 0.7, 0 * lam))))
    assert np.abs(H_gn - np.asarray(ca.densify(exact["hess_lag"](w, p, 0.7, 0 * lam)))).max() <= 1e-12
    grad_lag = np.asarray(gn["lag_grad"](w, p, 0.7, lam)).ravel()
    jac = np.asarray(ca.densify(exact["jac_g"](w, p)[1]))
    expected = 0.7 * np.asarray(exact["grad_f"](w, p)[1]).ravel() + jac.T @ lam
    assert np.abs(grad_lag - expected).max() <= 1e-12 * max(1.0, np.abs(expected).max())


def test_gauss_newton_needs_costs_at_the_knots():
    with pytest.raises(ValueError, match="Gauss-Newton Hessian needs costs at the knots"):
        IpoptSolver(problems.get("cartpole"), "multiple_shooting", hessian="gauss-newton")


# ------------------------------------------------------------ backends on the quadrotor (quaternion state)


def quadrotor(goal_components=None) -> Problem:
    from models import Quadrotor
    from problems.quadrotor import hover_state
    from trajopt import GoalConstraint

    model = Quadrotor(u_max=4.0)
    x0, xf = hover_state(model, [0, 0, 0]), hover_state(model, [5, 0, 1])
    problem = Problem(model, N=51, tf=5.0, x0=x0, name="quadrotor")
    problem.add_cost(QuadraticCost(model, np.full(12, 1e-2), np.full(4, 1e-1), x_ref=xf, u_ref=model.hover_control()))
    problem.add_constraint(GoalConstraint(model, xf, components=goal_components))
    problem.set_initial_guess(controls=model.hover_control())
    return problem


@pytest.mark.parametrize("backend", [FatropSolver, SqpSolver], ids=["fatrop", "sqp"])
def test_stagewise_backends_reach_ipopts_optimum_with_tangent_charts(backend):
    """Position and attitude goal (6 rows): fatrop and SQP+HPIPM match IPOPT on the same NLP."""
    problem = quadrotor(goal_components=range(6))
    reference = IpoptSolver(problem, transcription="multiple_shooting_knot_cost", hessian="gauss-newton", chart=True).solve()
    sol = backend(problem, transcription="multiple_shooting_knot_cost", hessian="gauss-newton", chart=True).solve()
    assert reference.success and sol.success, (reference.status, sol.status)
    assert abs(sol.objective - reference.objective) <= 1e-6 * reference.objective
    assert np.abs(sol.states[-1, :3] - [5, 0, 1]).max() <= 1e-8


def test_fatrop_that_never_returns_is_stopped_at_its_wall_time():
    """fatrop 1.1.8 loops forever when all 12 goal directions are fixed (trajopt.solvers.watchdog):
    the solve comes back failed, with its status, within the limit."""
    import time

    solver = FatropSolver(quadrotor(), "multiple_shooting_knot_cost", hessian="gauss-newton", chart=True, max_wall_time=3.0)
    start = time.perf_counter()
    sol = solver.solve()
    assert time.perf_counter() - start < 8.0
    assert not sol.success and "no answer within 3 s" in sol.status


def test_contact_formulation_refuses_contacts_sharing_a_body():
    from models import Humanoid
    from trajopt.legged import LeggedProblem
    from trajopt.legged.schedule import ContactSchedule

    robot = Humanoid(contacts_per_foot=4)
    schedule = ContactSchedule(robot.kinematics_bodies, np.ones((5, robot.nc), bool), 0.05)
    with pytest.raises(ValueError, match="contacts on one rigid body"):
        LeggedProblem(robot, schedule, formulation="contact")
