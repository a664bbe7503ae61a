"""Classic models and rigid bodies (issue 2): physics checks and the numeric/symbolic contract."""
import casadi as ca
import numpy as np
import pytest

from lie import MRP, RodriguesParam, UnitQuaternion, axis_angle_to_quat, quat_to_rot
from models import Cartpole, DoubleCartpole, DoublePendulum, Pendulum, Quadrotor, RigidBody

ROTATIONS = [UnitQuaternion, MRP, RodriguesParam]
RNG = np.random.default_rng(7)


def close(a, b, tol):
    """|a - b| <= tol * max(1, |b|), element-wise."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return np.all(np.abs(a - b) <= tol * np.maximum(1.0, np.abs(b)))


class FreeBody(RigidBody):
    """A torque- and force-free body (gravity off): energy and momentum are conserved."""

    name = "free_body"

    def __init__(self, rotation, velocity_frame="world"):
        super().__init__(rotation, velocity_frame)
        self.set_mass_properties(2.0, [[1.0, 0.1, 0.0], [0.1, 2.0, -0.2], [0.0, -0.2, 3.0]])

    @property
    def control_dim(self):
        return 0


def rk4_rollout(model, x0, u, dt, steps):
    xs, uk = ca.SX.sym("x", model.state_dim), ca.SX.sym("u", model.control_dim)
    f = lambda x: model.continuous_dynamics(x, uk, 0.0)
    k1 = f(xs)
    k2 = f(xs + dt / 2 * k1)
    k3 = f(xs + dt / 2 * k2)
    k4 = f(xs + dt * k3)
    step = ca.Function("step", [xs, uk], [xs + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)])
    traj = step.mapaccum(steps)(x0, np.tile(np.reshape(u, (-1, 1)), (1, steps)))
    return np.hstack([np.reshape(x0, (-1, 1)), np.asarray(traj)]).T


@pytest.mark.parametrize("rotation", ROTATIONS)
@pytest.mark.parametrize("velocity_frame", ["world", "body"])
def test_free_rigid_body_conserves_energy_and_momentum(rotation, velocity_frame):
    body = FreeBody(rotation, velocity_frame)
    w0 = np.array([0.5, -0.4, 0.6])  # turns about 0.9 rad in 1 s: far from the Rodrigues singularity
    x0 = body.build_state([0.1, 0.2, 0.3], np.eye(3), [0.3, -0.2, 0.1], w0)
    traj = rk4_rollout(body, x0, np.zeros(0), 1e-3, 1000)
    J, m = body.inertia(), body.mass()

    def invariants(x):
        r, attitude, v, w = body.parse_state(x)
        R = attitude.as_matrix()
        v_world = v if velocity_frame == "world" else R @ v
        return 0.5 * m * v_world @ v_world + 0.5 * w @ J @ w, R @ J @ w, v_world

    E0, h0, p0 = invariants(traj[0])
    for x in traj[::50]:
        E, h, p = invariants(x)
        assert abs(E - E0) < 1e-8 * abs(E0)
        assert np.linalg.norm(h - h0) < 1e-8 * np.linalg.norm(h0)
        assert np.linalg.norm(p - p0) < 1e-8 * np.linalg.norm(p0)
    # the body really turned (the test is not vacuous) and stayed within pi/2
    qf = body.parse_state(traj[-1])[1].as_quat()
    angle = 2 * np.arccos(min(1.0, abs(qf[0])))
    assert 0.5 < angle < np.pi / 2


@pytest.mark.parametrize("rotation", ROTATIONS)
def test_quadrotor_hovers_at_mg_over_4(rotation):
    quad = Quadrotor(rotation=rotation)
    for _ in range(5):
        att = axis_angle_to_quat(np.array([0.0, 0.0, RNG.uniform(-3, 3)]))  # any yaw hovers
        x = quad.build_state(RNG.normal(size=3), att, np.zeros(3), np.zeros(3))
        xdot = quad.dynamics(x, np.full(4, quad.mass() * 9.81 / 4))
        # exact up to the round-off of Rot(q)[2, 2] = 1 for a yaw-only quaternion (a few ulps of g)
        assert np.max(np.abs(xdot)) < 1e-14
    assert np.allclose(quad.hover_control(), 0.5 * 9.81 / 4)


def test_quadrotor_moments_follow_rotor_layout():
    quad = Quadrotor()
    x = quad.build_state(np.zeros(3), np.eye(3), np.zeros(3), np.zeros(3))
    u = quad.hover_control() + np.array([0.0, 0.1, 0.0, 0.0])  # rotor 2 at (0, L): rolls about +x
    wdot = quad.dynamics(x, u)[quad.gen_inds()["w"]]
    J = np.diag([0.0023, 0.0023, 0.004])
    expected = np.linalg.solve(J, [0.175 * 0.1, 0.0, -0.0245 * 0.1])
    assert close(wdot, expected, 1e-12)


def test_pendulum_closed_form():
    p = Pendulum()
    for _ in range(20):
        th, thd, u = RNG.normal(size=3)
        assert close(p.dynamics([th, thd], [u]), [thd, 9.81 * np.sin(th) + u], 1e-12)


def test_cartpole_against_hand_derived_equations():
    mc, mp, l, g = 1.3, 0.7, 0.9, 9.81
    cp = Cartpole(cart_mass=mc, pole_mass=mp, length=l)
    for _ in range(20):
        y, th, yd, thd, F = RNG.normal(size=5)
        # (mc + mp) ydd - mp l cos(th) thdd + mp l sin(th) thd^2 = F ;  -mp l cos(th) ydd + mp l^2 thdd - mp g l sin(th) = 0
        A = np.array([[mc + mp, -mp * l * np.cos(th)], [-mp * l * np.cos(th), mp * l**2]])
        b = np.array([F - mp * l * np.sin(th) * thd**2, mp * g * l * np.sin(th)])
        assert close(cp.dynamics([y, th, yd, thd], [F]), np.r_[yd, thd, np.linalg.solve(A, b)], 1e-12)


@pytest.mark.parametrize("model", [Pendulum(), DoublePendulum(), DoublePendulum(actuated=(1,)), Cartpole(), DoubleCartpole()], ids=lambda m: f"{m.name}{m.control_dim}")
def test_point_mass_models_conserve_energy(model):
    x0 = np.r_[RNG.normal(size=model.nv), RNG.normal(size=model.nv)]
    traj = rk4_rollout(model, x0, np.zeros(model.control_dim), 1e-3, 1000)

    def energy(x):
        q, qd = x[: model.nv], x[model.nv :]
        return 0.5 * qd @ model.mass_matrix(q) @ qd + potential(model, q)

    E0 = energy(traj[0])
    assert max(abs(energy(x) - E0) for x in traj[::100]) < 1e-8 * max(1.0, abs(E0))


def potential(model, q):
    qs = ca.SX.sym("q", model.nv)
    V = sum(m * 9.81 * p[2] for m, p in zip(model.masses, model.mass_positions(qs)))
    return float(ca.Function("V", [qs], [V])(q))


def all_models():
    return [Pendulum(), DoublePendulum(), Cartpole(), DoubleCartpole()] + [Quadrotor(rotation=r) for r in ROTATIONS] + [Quadrotor(velocity_frame="body")]


def random_state(model):
    x = RNG.normal(size=model.state_dim)
    if isinstance(model, RigidBody) and model.rotation is UnitQuaternion:
        x[3:7] /= np.linalg.norm(x[3:7])
    return x


@pytest.mark.parametrize("kind", [ca.SX, ca.MX])
@pytest.mark.parametrize("model", all_models(), ids=lambda m: m.name)
def test_numeric_and_symbolic_calls_agree(model, kind):
    xs, us, ts = kind.sym("x", model.state_dim), kind.sym("u", model.control_dim), kind.sym("t")
    f_sym = ca.Function("f", [xs, us, ts], [model.dynamics(xs, us, ts), *model.dynamics_jacobian(xs, us, ts)])
    assert isinstance(model.dynamics(xs, us, ts), kind)
    for _ in range(10):
        x, u = random_state(model), RNG.normal(size=model.control_dim)
        f, A, Bm = (np.asarray(o) for o in f_sym(x, u, 0.0))
        assert isinstance(model.dynamics(x, u), np.ndarray)
        assert close(model.dynamics(x, u), f.ravel(), 1e-12)
        An, Bn = model.dynamics_jacobian(x, u)
        assert close(An, A, 1e-12) and close(Bn, Bm, 1e-12)


def test_dynamics_jacobian_matches_finite_differences():
    quad = Quadrotor(rotation=MRP)
    x, u = random_state(quad), quad.hover_control() + RNG.normal(size=4) * 0.1
    A, Bm = quad.dynamics_jacobian(x, u)
    eps = 1e-6
    A_fd = np.column_stack([(quad.dynamics(x + eps * e, u) - quad.dynamics(x - eps * e, u)) / (2 * eps) for e in np.eye(quad.state_dim)])
    assert close(A, A_fd, 1e-7)  # central differences: truncation ~eps^2, round-off ~1e-16/eps


@pytest.mark.parametrize("rotation", ROTATIONS)
def test_rigid_body_helpers(rotation):
    quad = Quadrotor(rotation=rotation)
    q = axis_angle_to_quat(np.array([0.3, -0.2, 0.5]))
    x = quad.build_state([1, 2, 3], q, [4, 5, 6], [7, 8, 9])
    assert len(x) == 13 if rotation is UnitQuaternion else len(x) == 12
    assert close(quad.position(x), [1, 2, 3], 0) and close(quad.linear_velocity(x), [4, 5, 6], 0)
    assert close(quad.angular_velocity(x), [7, 8, 9], 0)
    attitude = quad.parse_state(x)[1]
    qq = attitude.as_quat()
    assert type(attitude) is rotation and close(attitude.params, x[quad.gen_inds()["q"]], 0)
    assert close(qq * np.sign(qq[0]), q, 1e-12)
    assert close(quad.rotation_matrix(x), quat_to_rot(q), 1e-12)
    assert close(quad.build_state([1, 2, 3], quat_to_rot(q), [4, 5, 6], [7, 8, 9]), x, 1e-12)
    inds = quad.gen_inds()
    assert inds["w"].stop == quad.state_dim
    if rotation is UnitQuaternion:
        flipped = quad.flipquat(x)
        assert close(flipped[3:7], -x[3:7], 0) and close(quad.dynamics(flipped, np.ones(4)), quad.flipquat(quad.dynamics(x, np.ones(4))), 1e-12)
    else:
        with pytest.raises(ValueError, match="flipquat"):
            quad.flipquat(x)


def test_parse_state_renormalizes():
    quad = Quadrotor()
    x = quad.build_state(np.zeros(3), np.eye(3), np.zeros(3), np.zeros(3))
    x[3:7] *= 1.1
    assert np.isclose(np.linalg.norm(quad.parse_state(x, renormalize=True)[1]), 1.0)


def test_bad_input_raises_value_error():
    quad = Quadrotor()
    x = quad.build_state(np.zeros(3), np.eye(3), np.zeros(3), np.zeros(3))
    with pytest.raises(ValueError, match=r"x: expected shape \(13,\), got \(12,\)"):
        quad.dynamics(x[:12], np.zeros(4))
    with pytest.raises(ValueError, match=r"u: expected shape \(4,\), got \(3,\)"):
        quad.dynamics(x, np.zeros(3))
    bad = x.copy()
    bad[0] = np.nan
    with pytest.raises(ValueError, match="x: contains NaN"):
        quad.dynamics(bad, np.zeros(4))
    nonunit = x.copy()
    nonunit[3] = 2.0
    with pytest.raises(ValueError, match="unit quaternion"):
        quad.dynamics(nonunit, np.zeros(4))
    with pytest.raises(ValueError, match="rotation: unsupported"):
        Quadrotor(rotation="euler")
    with pytest.raises(ValueError, match="attitude"):
        quad.build_state(np.zeros(3), np.zeros(5), np.zeros(3), np.zeros(3))
    with pytest.raises(ValueError, match="x: expected shape"):
        Pendulum().dynamics(np.zeros(3), np.zeros(1))
