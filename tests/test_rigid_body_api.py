"""RobotDynamics.jl's rigid-body API (issue 27): mass/inertia methods, build_state and parse_state
overloads, every lie parameterization as the attitude, against pinocchio, finite differences and
the equations written out here.
"""
from __future__ import annotations

import casadi as ca
import numpy as np
import pinocchio as pin
import pytest

import lie
from lie import MRP, ROTATIONS, EulerZYX, RBState, RotationVec, UnitQuaternion, axis_angle_to_quat, quat_to_rot, skew
from models import Quadrotor, RigidBody
from trajopt import GoalConstraint, Problem, QuadraticCost, solve
from tests.test_lie_fixtures import assert_close, central_diff

RNG = np.random.default_rng(27)
rotations = pytest.mark.parametrize("R", ROTATIONS, ids=[R.name for R in ROTATIONS])
#: An attitude 0.7 rad from the identity about a generic axis (every parameterization is regular there).
Q = axis_angle_to_quat(np.array([0.3, -0.2, 0.6]))


class FuelBody(RigidBody):
    """A body whose mass falls with the throttle ``u[3]`` and whose inertia grows with ``|w|^2``.

    Force ``u[:3]`` (world), moment ``0.1 u[:3]`` (body); ``forces``/``moments`` written without the
    time, as RobotDynamics.jl allows.
    """

    name = "fuel_body"

    def __init__(self, rotation=UnitQuaternion, velocity_frame="world"):
        super().__init__(rotation, velocity_frame, mass=2.0, inertia=[[1.0, 0.1, 0.0], [0.1, 2.0, -0.2], [0.0, -0.2, 3.0]])

    @property
    def control_dim(self):
        return 4

    def mass(self, x=None, u=None):
        return super().mass() * (1.0 - 0.2 * u[3])

    def inertia(self, x, u):
        w = x[self.gen_inds()["w"]]
        return super().inertia() * (1.0 + 0.1 * lie._backend.dot(w, w))

    def forces(self, x, u):
        return u[:3]

    def moments(self, x, u):
        return 0.1 * u[:3]


class Drifter(RigidBody):
    """No input: a RigidBody subclass that only declares its sizes."""

    control_dim = 0


def random_state(model: RigidBody) -> np.ndarray:
    return model.build_state(RNG.normal(size=3), Q, RNG.normal(size=3), RNG.normal(size=3))


# ---------------------------------------------------------------- mass and inertia
def test_mass_and_inertia_are_methods_returning_the_constants():
    body = Drifter(mass=2.5, inertia=[1.0, 2.0, 3.0])
    x, u = np.zeros(13), np.zeros(0)
    assert body.mass() == body.mass(x, u) == 2.5
    assert_close(body.inertia(x, u), np.diag([1.0, 2.0, 3.0]), 0.0, "inertia")
    body.inertia()[0, 0] = 9.0  # a copy: the model's constant is not changed through it
    assert body.inertia()[0, 0] == 1.0
    quad = Quadrotor(mass=0.7)
    assert quad.mass(random_state(quad), quad.hover_control()) == 0.7
    assert_close(quad.hover_control(), np.full(4, 0.7 * 9.81 / 4), 1e-15, "hover uses mass()")
    with pytest.raises(ValueError, match="mass: Drifter has no mass set"):
        Drifter().mass()
    with pytest.raises(ValueError, match="mass: Drifter has no mass set"):
        Drifter().dynamics(np.r_[np.zeros(3), 1.0, np.zeros(9)], np.zeros(0))
    with pytest.raises(ValueError, match="inertia: Drifter has no inertia set"):
        Drifter().inertia()
    with pytest.raises(ValueError, match="mass, inertia: give both"):
        Drifter(mass=1.0)


@pytest.mark.parametrize("velocity_frame", ["world", "body"])
def test_dynamics_call_state_dependent_mass_and_inertia(velocity_frame):
    """xdot against the rigid-body equations written out with the overridden m(x, u) and J(x, u)."""
    body = FuelBody(MRP, velocity_frame)
    for _ in range(5):
        x, u = random_state(body), RNG.normal(size=4)
        r, p, v, w = x[:3], x[3:6], x[6:9], x[9:12]
        R = MRP.to_rot(p)
        m = 2.0 * (1 - 0.2 * u[3])
        J = np.array([[1.0, 0.1, 0.0], [0.1, 2.0, -0.2], [0.0, -0.2, 3.0]]) * (1 + 0.1 * w @ w)
        F, tau = u[:3], 0.1 * u[:3]
        wdot = np.linalg.solve(J, tau - np.cross(w, J @ w))
        if velocity_frame == "world":
            rdot, vdot = v, F / m
        else:
            rdot, vdot = R @ v, R.T @ F / m - np.cross(w, v)
        expected = np.concatenate([rdot, lie.mrp_kinematics_matrix(p) @ w, vdot, wdot])
        assert_close(body.dynamics(x, u), expected, 1e-12, "xdot")
        A, Bu = body.dynamics_jacobian(x, u)  # through the symbolic m(x, u), J(x, u): CasADi solves J
        assert_close(A, central_diff(lambda y: body.dynamics(y, u), x), 1e-6, "A")
        assert_close(Bu, central_diff(lambda c: body.dynamics(x, c), u), 1e-6, "B")


@rotations
def test_rigid_body_dynamics_match_pinocchio(R):
    """Every parameterization: pinocchio's aba on a free-flyer gives the same accelerations,
    and pdot = K(p) w turns the rotation matrix as Rdot = R skew(w) (central differences)."""
    quad = Quadrotor(rotation=R, inertia=[[0.0023, 0.0002, 0.0], [0.0002, 0.0025, 0.0001], [0.0, 0.0001, 0.004]])
    model = pin.Model()
    J = quad.inertia()
    model.appendBodyToJoint(model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "base"), pin.Inertia(quad.mass(), np.zeros(3), J), pin.SE3.Identity())
    data = model.createData()
    for _ in range(5):
        x, u = random_state(quad), quad.hover_control() + RNG.normal(size=4)
        xdot = quad.dynamics(x, u)
        i = quad.gen_inds()
        rot = quad.rotation_matrix(x)
        v_world, w = x[i["v"]], x[i["w"]]
        thrust = quad.kf * u.sum()
        L, kf, km = quad.arm_length, quad.kf, quad.km
        wrench = np.r_[0, 0, thrust, L * kf * (u[1] - u[3]), L * kf * (u[2] - u[0]), km * (u[0] - u[1] + u[2] - u[3])]
        q_pin = np.r_[x[i["r"]], lie.rot_to_quat(rot)[[1, 2, 3, 0]]]
        v_body = rot.T @ v_world
        a = pin.aba(model, data, q_pin, np.r_[v_body, w], wrench)
        assert_close(xdot[i["v"]], rot @ (a[:3] + np.cross(w, v_body)), 1e-12, f"{R.name} vdot (world)")
        assert_close(xdot[i["w"]], a[3:], 1e-10, f"{R.name} wdot")
        assert_close(xdot[i["r"]], v_world, 0.0, "rdot")
        h = 1e-6
        p, pdot = x[i["q"]], xdot[i["q"]]
        assert_close((R.to_rot(p + h * pdot) - R.to_rot(p - h * pdot)) / (2 * h), rot @ skew(w), 1e-8, f"{R.name} Rdot")


def test_forces_take_an_optional_time():
    body = FuelBody()
    x = random_state(body)
    u = RNG.normal(size=4)
    assert_close(body.forces(x, u), u[:3], 0.0, "forces(x, u)")
    F, tau = body.wrenches(x, u, 0.3)
    assert_close(F, u[:3], 0.0, "F")
    assert_close(tau, 0.1 * u[:3], 0.0, "tau")
    quad = Quadrotor()
    assert_close(quad.wrenches(x, quad.hover_control())[0], quad.wrenches(x, quad.hover_control(), 1.0)[0], 0.0, "default t")


# ---------------------------------------------------------------- build_state / parse_state
@rotations
def test_build_state_forms_agree(R):
    quad = Quadrotor(rotation=R)
    r, v, w = np.array([1.0, 2.0, 3.0]), np.array([0.1, -0.2, 0.3]), np.array([-0.3, 0.2, 0.1])
    x = quad.build_state(r, Q, v, w)
    assert x.shape == (quad.state_dim,)
    assert_close(quad.rotation_matrix(x), quat_to_rot(Q), 1e-14, "attitude")
    rb = RBState(r, Q, v, w)
    assert_close(quad.build_state(rb), x, 1e-14, "build_state(rbstate)")
    assert_close(quad.build_state(rb.vector()), x, 1e-14, "build_state([r; q; v; w])")
    assert_close(quad.build_state(x), x, 0.0, "build_state(own state)")
    for other in ROTATIONS:  # a rotation of any parameterization as the attitude
        assert_close(quad.build_state(r, other(other.from_quat(Q)), v, w), x, 1e-13, f"attitude {other.name}")
    assert RBState(quad, x).isapprox(rb, 1e-14) and RBState(quad, x, True).isapprox(rb, 1e-14)
    with pytest.raises(TypeError, match="build_state: expected"):
        quad.build_state(r, Q)
    with pytest.raises(ValueError, match=r"x: expected \[r; q; v; w\]"):
        quad.build_state(np.zeros(7))


@rotations
def test_parse_state_returns_the_model_rotation_type(R):
    quad = Quadrotor(rotation=R)
    x = quad.build_state(np.zeros(3), Q, np.ones(3), np.ones(3))
    r, attitude, v, w = quad.parse_state(x)
    assert type(attitude) is R and isinstance(quad.orientation(x), R)
    assert_close(np.asarray(attitude), x[quad.gen_inds()["q"]], 0.0, "parameters")
    assert_close(attitude.as_matrix(), quat_to_rot(Q), 1e-14, "as_matrix")
    assert_close(attitude @ np.array([1.0, 0.0, 0.0]), quat_to_rot(Q)[:, 0], 1e-14, "rot @ v")
    assert_close(UnitQuaternion(attitude).as_matrix(), quat_to_rot(Q), 1e-14, "conversion")
    assert_close((attitude @ attitude.inv()).as_matrix(), np.eye(3), 1e-14, "inverse")
    assert quad.gen_inds()["ω"] == quad.gen_inds()["w"]
    sym = quad.parse_state(ca.SX.sym("x", quad.state_dim))[1]
    assert isinstance(sym, R) and isinstance(sym.as_quat(), ca.SX)


def test_parse_state_renorm():
    quad = Quadrotor()
    x = quad.build_state(np.zeros(3), Q, np.zeros(3), np.zeros(3))
    x[3:7] *= 1.1
    with pytest.raises(ValueError, match="params: expected a unit quaternion"):
        quad.parse_state(x)
    assert_close(quad.parse_state(x, renorm=True)[1].params, Q, 1e-15, "renormalized")
    mrp = Quadrotor(rotation=MRP)
    y = mrp.build_state(np.zeros(3), Q, np.zeros(3), np.zeros(3))
    assert np.array_equal(mrp.parse_state(y, renorm=True)[1].params, y[3:6])  # renorm does not touch 3-parameter sets


# ---------------------------------------------------------------- every parameterization as an attitude
@rotations
def test_error_state_of_every_attitude(R):
    """state_error / apply_dx inverse to each other; error_jacobian(_T) against central differences."""
    quad = Quadrotor(rotation=R)
    for _ in range(5):
        x = random_state(quad)
        dx = 0.3 * RNG.normal(size=12)
        assert_close(quad.state_error(quad.apply_dx(x, dx), x), dx, 1e-13, "state_error(apply_dx)")
        assert_close(quad.apply_Δx(x, np.zeros(12)), x, 0.0, "apply_Δx(x, 0)")
        assert_close(quad.error_jacobian(x), central_diff(lambda d: quad.apply_dx(x, d), np.zeros(12)), 1e-7, "error_jacobian")
        assert_close(quad.error_jacobian_T(x), central_diff(lambda y: quad.state_error(y, x), x), 1e-7, "error_jacobian_T")
        assert_close(quad.error_jacobian_T(x) @ quad.error_jacobian(x), np.eye(12), 1e-12, "E_T E")


def test_euler_and_rotation_vector_charts_stay_continuous():
    """Yaw wound past pi and rotation vectors longer than pi: apply_dx moves them continuously."""
    e0 = np.array([3.0, 0.2, -3.1])
    for dphi in (np.array([0.0, 0.0, 0.5]), np.array([0.4, -0.3, 0.2])):
        e = EulerZYX.compose(e0, dphi)
        assert np.abs(e - e0).max() < 1.0
        assert_close(EulerZYX.to_rot(e), EulerZYX.to_rot(e0) @ lie.so3_exp(dphi), 1e-14, "Euler compose")
    phi0 = np.array([0.0, 0.0, 3.1])
    phi = RotationVec.compose(phi0, np.array([0.0, 0.0, 0.2]))
    assert_close(phi, [0.0, 0.0, 3.3], 1e-14, "past pi")
    with pytest.raises(ValueError, match="rotation: unsupported"):
        Quadrotor(rotation="euler")  # which order? ZYX is "euler_zyx"
    assert Quadrotor(rotation="euler_zyx").rotation is EulerZYX and Quadrotor(rotation="cayley").rotation is lie.Cayley


@pytest.fixture(scope="module")
def quaternion_flight():
    return _solve_flight(UnitQuaternion)


def _solve_flight(R: type):
    """Hover at the origin to hover at (2, 1, 1) m turned 1.3 rad about (0.3, -0.4, 1), in 3 s (Hermite-Simpson, N = 21)."""
    model = Quadrotor(rotation=R, u_max=4.0)
    turn = 1.3 * np.array([0.3, -0.4, 1.0]) / np.linalg.norm([0.3, -0.4, 1.0])
    x0 = model.build_state(np.zeros(3), np.eye(3), np.zeros(3), np.zeros(3))
    xf = model.build_state([2.0, 1.0, 1.0], axis_angle_to_quat(turn), np.zeros(3), np.zeros(3))
    problem = Problem(model, N=21, tf=3.0, x0=x0)
    problem.add_cost(QuadraticCost(model, Q=np.full(12, 1e-2), R=np.full(4, 1e-1), x_ref=xf, u_ref=model.hover_control()))
    problem.add_constraint(GoalConstraint(model, xf))
    problem.set_initial_guess(controls=model.hover_control())
    return model, xf, solve(problem, transcription="hermite_simpson", print_level=0)


@rotations
def test_quadrotor_solves_with_every_attitude(R, quaternion_flight):
    """The same flight with each parameterization: it converges, reaches the goal, and flies the
    quaternion model's path (same objective and attitudes: the parameterization is only a chart)."""
    model, xf, solution = _solve_flight(R)
    _, _, reference = quaternion_flight
    assert solution.success, solution.status
    assert np.abs(model.state_error(solution.states[-1], xf)).max() < 1e-9
    assert abs(solution.objective - reference.objective) <= 1e-6 * reference.objective
    for x, x_ref in zip(solution.states, reference.states):
        assert_close(model.rotation_matrix(x), quat_to_rot(x_ref[3:7]), 1e-5, f"{R.name} attitude path")
        assert_close(model.position(x), x_ref[:3], 1e-5, f"{R.name} position path")
