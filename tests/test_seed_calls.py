"""Calls written as users of PinnZoo.jl, RobotDynamics.jl and the pinocchio tutorials write them.

Each test names the seed call it checks in its docstring, and checks the
result against an independent computation (pinocchio, numpy, scipy) with the
tolerance it states (relative with floor 1, as ``assert_close``).
"""
from __future__ import annotations

import casadi as ca
import numpy as np
import pinocchio as pin
import pytest
from scipy.optimize import minimize

from lie import MRP, QuatState, RBState, RodriguesParam, UnitQuaternion, mrp_to_rot, quat_to_rot, rodrigues_to_rot
from models import LieGroupModel, Quadrotor, RigidBody, WheeledBiped, pendulum_multibody
from models.hand import Hand
from tests.test_lie_fixtures import assert_close
from trajopt.sim import CapsuleCollisions, ContactSimulator

RNG = np.random.default_rng(20261201)


def random_quat() -> np.ndarray:
    q = RNG.normal(size=4)
    return q / np.linalg.norm(q)


def pin_rot(q: np.ndarray) -> np.ndarray:
    """Rotation matrix of ``[qw, qx, qy, qz]`` by pinocchio (its constructor takes w, x, y, z)."""
    return pin.Quaternion(q[0], q[1], q[2], q[3]).toRotationMatrix()


# ----------------------------------------------------------------- item 1
def test_rbstate_is_a_13_vector_and_its_orientation_a_rotation():
    """Seed call: RobotDynamics.jl's ``RBState`` used as a vector (``x[4]``, ``Vector(x)``) and
    ``orientation(x::RBState)`` returning the rotation: ``rb[3]``, ``np.asarray(rb)``, ``rb.orientation``.

    Order ``[r; q; v; w]``; the quaternion (given unnormalized) is scaled to unit norm.
    Checked against numpy (exact) and pinocchio's rotation matrix (1e-14).
    """
    r, q_raw, v, w = RNG.normal(size=3), 3.0 * random_quat(), RNG.normal(size=3), RNG.normal(size=3)
    q = q_raw / np.linalg.norm(q_raw)
    rb = RBState(r, q_raw, v, w)
    expected = np.concatenate([r, q, v, w])
    arr = np.asarray(rb)
    assert arr.shape == (13,)
    assert_close(arr, expected, 1e-15, "np.asarray(rb)")
    assert rb[3] == pytest.approx(q[0], abs=1e-15) and rb[12] == pytest.approx(w[2], abs=1e-15)
    assert_close(rb[3:7], q, 1e-15, "rb[3:7]")
    assert_close(np.array(list(rb)), expected, 1e-15, "iteration")
    rot = rb.orientation
    assert isinstance(rot, UnitQuaternion)
    assert_close(rot.params, q, 1e-15, "orientation.params")
    assert_close(rot.as_matrix(), pin_rot(q), 1e-14, "orientation as a matrix")
    assert_close(rb.flipquat().orientation.params, -q, 0.0, "flipquat")
    assert_close(rb.to_state(MRP), np.concatenate([r, MRP.from_quat(q), v, w]), 1e-15, "to_state")
    # symbolic: indexing gives the entry, orientation a symbolic rotation
    x = ca.SX.sym("x", 13)
    srb = RBState(x, renormalize=False)
    f = ca.Function("f", [x], [srb[4], srb.orientation.as_matrix()])
    e4, R = f(expected)
    assert float(e4) == pytest.approx(q[1], abs=1e-15)
    assert_close(np.array(R), pin_rot(q), 1e-14, "symbolic orientation")
    with pytest.raises(TypeError, match="symbolic"):
        np.asarray(srb)


# ----------------------------------------------------------------- item 2
class OnlyDynamics(LieGroupModel):
    """A free-spinning body ``[q; w]`` written as a RobotDynamics.jl user writes it: ``dynamics`` only."""

    J = np.diag([1.0, 2.0, 3.0])

    def dynamics(self, x, u, t=0.0):
        q, w = x[0:4], x[4:7]
        qdot = 0.5 * ca.vertcat(-q[1] * w[0] - q[2] * w[1] - q[3] * w[2], q[0] * w[0] + q[2] * w[2] - q[3] * w[1], q[0] * w[1] + q[3] * w[0] - q[1] * w[2], q[0] * w[2] + q[1] * w[1] - q[2] * w[0])
        wdot = ca.solve(ca.DM(self.J), u - ca.cross(w, ca.mtimes(ca.DM(self.J), w)))
        return ca.vertcat(qdot, wdot)


def test_lie_group_model_defining_only_dynamics_instantiates():
    """Seed call: RobotDynamics.jl's ``LieGroupModel`` whose user defines ``dynamics`` (and the
    ``LieState`` and ``control_dim``), never ``continuous_dynamics``.

    Checked against pinocchio's quaternion product (``qdot = 0.5 q * [0; w]``) and numpy's
    Euler equations (1e-13); the derived stage function and its Jacobian against central
    differences (1e-7).
    """
    bare = OnlyDynamics()  # only dynamics: instantiates; the sizes say what is missing
    with pytest.raises(NotImplementedError, match="lie_state"):
        bare.state_dim
    with pytest.raises(NotImplementedError, match="control_dim"):
        bare.control_dim
    model = OnlyDynamics(lie_state=QuatState(7, (0,)), control_dim=3)
    assert model.state_dim == 7 and model.error_dim == 6 and model.control_dim == 3
    q, w, u = random_quat(), RNG.normal(size=3), RNG.normal(size=3)
    x = np.concatenate([q, w])
    dq = pin.Quaternion(q[0], q[1], q[2], q[3]) * pin.Quaternion(0.0, w[0], w[1], w[2])
    expected = np.concatenate([0.5 * np.array([dq.w, dq.x, dq.y, dq.z]), np.linalg.solve(OnlyDynamics.J, u - np.cross(w, OnlyDynamics.J @ w))])
    direct = np.array(model.dynamics(x, u)).reshape(-1)
    assert_close(direct, expected, 1e-13, "the user's dynamics")
    derived = model._call("dynamics", x, u, 0.0)  # through continuous_dynamics, derived from dynamics
    assert_close(derived, expected, 1e-13, "derived continuous_dynamics")
    A, Bm = model.dynamics_jacobian(x, u)
    h = 1e-6
    fd = np.array([(model._call("dynamics", x + h * e, u, 0.0) - model._call("dynamics", x - h * e, u, 0.0)) / (2 * h) for e in np.eye(7)]).T
    assert_close(A, fd, 1e-7, "dynamics_jacobian A")

    class Neither(LieGroupModel):
        pass

    with pytest.raises(TypeError, match="continuous_dynamics"):
        Neither()


# ----------------------------------------------------------------- item 3
def test_dynamics_fills_a_given_array_in_place():
    """Seed call: RobotDynamics.jl's ``dynamics!(model, xdot, x, u)`` as ``model.dynamics(x, u, out=buf)``.

    A rigid body (quadrotor) against numpy's Newton-Euler equations and a multibody pendulum
    against pinocchio's ABA (1e-12); a wrong ``out`` raises one clear line.
    """
    quad = Quadrotor()
    x = np.concatenate([RNG.normal(size=3), random_quat(), RNG.normal(size=3), RNG.normal(size=3)])
    u = np.abs(RNG.normal(size=4))
    buf = np.full(13, np.nan)
    result = quad.dynamics(x, u, out=buf)
    assert result is buf
    assert_close(buf, quad.dynamics(x, u), 0.0, "out= and the returned value agree")
    w = x[10:13]
    F, tau = (np.asarray(a, dtype=float).reshape(-1) for a in quad.wrenches(x, u))
    J = quad.inertia()
    expected = np.concatenate([x[7:10], 0.5 * np.array((pin.Quaternion(*x[3:7]) * pin.Quaternion(0.0, *w)).coeffs())[[3, 0, 1, 2]], F / quad.mass(), np.linalg.solve(J, tau - np.cross(w, J @ w))])
    assert_close(buf, expected, 1e-12, "quadrotor xdot")

    pend = pendulum_multibody()
    xp, up = RNG.normal(size=2), RNG.normal(size=pend.nu)
    out = np.empty(2)
    assert pend.dynamics(xp, up, out=out) is out
    data = pend.pin_model.createData()
    vdot = pin.aba(pend.pin_model, data, xp[:1], xp[1:], pend.B_func() @ up)
    assert_close(out, np.concatenate([xp[1:], vdot]), 1e-12, "pendulum xdot against pinocchio's ABA")
    with pytest.raises(ValueError, match=r"out: expected shape \(13,\), got \(12,\)"):
        quad.dynamics(x, u, out=np.empty(12))
    with pytest.raises(ValueError, match=r"out: expected shape \(2,\), got \(2, 1\)"):
        pend.dynamics(xp, up, out=np.empty((2, 1)))
    with pytest.raises(TypeError, match="out: expected a floating-point numpy array"):
        quad.dynamics(x, u, out=np.zeros(13, dtype=int))
    with pytest.raises(TypeError, match="out: only numeric calls"):
        quad.dynamics(ca.SX.sym("x", 13), u, out=np.empty(13))


# ----------------------------------------------------------------- item 4
@pytest.fixture(scope="module")
def biped():
    return WheeledBiped()


def test_change_order_of_a_row_and_change_orders_in_place(biped):
    """Seed calls: PinnZoo.jl's ``change_order(model, x', :nominal, :pinocchio)`` on a 1 x n row
    (an adjoint vector) and ``change_orders!(model, [q, v, x], from, to)`` in place.

    Checked against the permutation written out with numpy (pinocchio stores the base
    quaternion ``[qx, qy, qz, qw]``), exactly, and against pinocchio reading the result.
    """
    nq, nx = biped.nq, biped.nx
    x = biped.init_state()
    x[3:7] = random_quat()
    x[nq:] = RNG.normal(size=biped.nv)
    perm = np.r_[0, 1, 2, 4, 5, 6, 3, 7:nx]
    row = x[None, :]
    out = biped.change_order(row, "nominal", "pinocchio")  # no axis=1
    assert out.shape == (1, nx)
    assert_close(out, x[perm][None, :], 0.0, "row")
    assert_close(biped.change_order(x[:, None], "nominal", "pinocchio"), x[perm][:, None], 0.0, "column")
    q_pin = out[0, :nq]
    assert_close(pin.Quaternion(q_pin[3:7]).toRotationMatrix(), pin_rot(x[3:7]), 1e-14, "pinocchio reads the reordered quaternion")
    # a matrix whose both axes are permuted is unchanged by the new rule
    jac = RNG.normal(size=(nx, nx))
    assert_close(biped.change_order(jac, "nominal", "pinocchio"), jac[np.ix_(perm, perm)], 0.0, "matrix")
    # change_orders! : in place, same arrays returned
    q, v = x[:nq].copy(), x[nq:].copy()
    q2, v2, xr = x[:nq].copy(), x[nq:].copy(), x[None, :].copy()
    returned = biped.change_orders([q2, v2, xr], "nominal", "pinocchio", inplace=True)
    assert returned[0] is q2 and returned[1] is v2 and returned[2] is xr
    assert_close(q2, x[:nq][perm[:nq]], 0.0, "q in place")
    assert_close(v2, x[nq:], 0.0, "v in place (same order)")
    assert_close(xr, x[perm][None, :], 0.0, "row in place")
    copies = biped.change_orders([q, v], "nominal", "pinocchio")
    assert_close(q, x[:nq], 0.0, "inputs untouched without inplace")
    assert_close(copies[0], x[:nq][perm[:nq]], 0.0, "copy")
    with pytest.raises(TypeError, match=r"values\[1\]: in-place reordering needs"):
        biped.change_orders([q.copy(), list(v)], "nominal", "pinocchio", inplace=True)


# ----------------------------------------------------------------- item 5
@pytest.fixture(scope="module")
def hand():
    return Hand()


def test_acceleration_contact_constraint_matches_the_tutorial_qp(hand):
    """Seed call: the tutorial's contact QP ``min 1/2 (a - a0)^T M (a - a0)`` s.t. the pair
    distances do not accelerate toward penetration (``J a + Jdot v >= 0``; the tutorial's
    ``J a >= 0`` with the drift it says it neglects), as ``contact_constraint="acceleration"``.

    At contact states of a closing hand: ``J`` and ``Jdot v`` against central differences of the
    signed distances (1e-6), then the acceleration against scipy's SLSQP solving the
    tutorial's QP with pinocchio's ``M`` (CRBA) and ``a0`` (ABA) (1e-6), and the KKT conditions
    (multipliers the forces, 1e-9).
    """
    coll = CapsuleCollisions.from_geometry(hand, hand.geometry_model)
    sim = ContactSimulator(hand, coll, contact_constraint="acceleration")
    model, data = hand.pin_model, hand.pin_model.createData()
    nv = model.nv
    inertia = np.diag(pin.crba(model, data, hand.curl(1.0)))
    target, Kp, Kv = hand.curl(1.8), 400.0 * inertia, 40.0 * inertia

    def pd(t, x):
        q, v = x[:nv], x[nv:]
        return -Kp * (q - target) - Kv * v + pin.computeGeneralizedGravity(model, data, q)

    result = sim.simulate(np.zeros(2 * nv), pd, dt=1e-3, T=0.4)
    assert result.success, result.message
    steps = np.flatnonzero(result.active.any(axis=1))
    assert steps.size > 10
    for k in steps[[0, steps.size // 2, -1]]:
        q, v, tau = result.states[k, :nv], result.states[k, nv:], result.torques[k]
        _, contacts = sim.contacts(q, v)
        if not contacts:
            continue
        J = np.array([c.jacobian for c in contacts])
        drift = np.array([c.drift for c in contacts])
        pairs = [c.pair for c in contacts]
        h = 1e-5
        d = lambda s: coll.distances(q + s * v)[pairs]  # revolute joints: integrate is q + v t
        assert_close(J @ v, (d(h) - d(-h)) / (2 * h), 1e-6, "J v")
        assert_close(drift, (d(h) - 2 * d(0.0) + d(-h)) / h**2, 1e-4, "Jdot v")
        M = pin.crba(model, data, q)
        M = np.triu(M) + np.triu(M, 1).T
        a0 = pin.aba(model, data, q, v, tau)
        a, lam = sim.acceleration(q, v, tau, contacts)
        ref = minimize(
            lambda z: 0.5 * (z - a0) @ M @ (z - a0), a0, jac=lambda z: M @ (z - a0), method="SLSQP",
            constraints=[{"type": "ineq", "fun": lambda z: J @ z + drift, "jac": lambda z: J}], options={"ftol": 1e-15, "maxiter": 500},
        )
        assert ref.success, ref.message
        assert_close(a, ref.x, 1e-6, f"acceleration at step {k}")
        assert (J @ a + drift).min() >= -1e-9 * max(1.0, np.abs(drift).max())
        assert_close(M @ (a - a0), J.T @ lam, 1e-9, "M (a - a0) = J^T lambda")
        assert lam.min() >= 0.0
        assert np.abs(lam * (J @ a + drift)).max() <= 1e-9 * max(1.0, lam.max())


# ----------------------------------------------------------------- item 6
def contact_points_by_pinocchio(biped: WheeledBiped, q: np.ndarray) -> np.ndarray:
    """The wheels' ground contact points ``c - r u`` from pinocchio's wheel frames (module docstring of models.wheeled_biped)."""
    model = biped.pin_model
    data = model.createData()
    q_pin = q.copy()
    q_pin[3:7] = q[[4, 5, 6, 3]]
    pin.framesForwardKinematics(model, data, q_pin)
    points = []
    for wheel in biped.wheels:
        M = data.oMf[model.getFrameId(wheel)]
        a = M.rotation[:, 1]
        u = np.array([0.0, 0.0, 1.0]) - a[2] * a
        points.append(M.translation - biped.dims.wheel_radius * u / np.linalg.norm(u))
    return np.array(points)


def test_wheeled_biped_inverse_kinematics_inverts_its_kinematics(biped):
    """Seed call: PinnZoo.jl's ``inverse_kinematics(model, x, kinematics(model, x))`` on the
    wheeled biped (Pineapple's stand-in), whose kinematics are the wheels' contact points.

    For several tilted, random poses: ``kinematics(x)`` against pinocchio (1e-12), then the
    IK of those points holds ``x``'s joints in a column (1e-9) and ``nearest_ik`` returns them
    (1e-9); wheel centres still work with ``targets="center"``.
    """
    for _ in range(6):
        x = biped.init_state()
        x[3:7] = pin.Quaternion(pin.exp3(RNG.normal(scale=0.15, size=3))).coeffs()[[3, 0, 1, 2]]
        x[7:15] += RNG.uniform(-0.3, 0.3, 8)
        x[[9, 13]] = np.minimum(x[[9, 13]], -0.1)  # knees within their one-way limits
        points = biped.kinematics(x).reshape(2, 3)
        assert_close(points, contact_points_by_pinocchio(biped, x[: biped.nq]), 1e-12, "contact points")
        sols = biped.inverse_kinematics(x, points)
        assert min(np.abs(sols[:, j] - x[7:15]).max() for j in range(2)) <= 1e-9
        assert_close(biped.nearest_ik(x, points), x[7:15], 1e-9, "nearest_ik of the contact points")
        for j in range(2):  # every returned solution puts the contact points back
            if not np.isnan(sols[:, j]).any():
                qj = x[: biped.nq].copy()
                qj[7:] = sols[:, j]
                assert_close(contact_points_by_pinocchio(biped, qj), points, 1e-9, f"solution {j}")
        data = biped.pin_model.createData()
        q_pin = x[: biped.nq].copy()
        q_pin[3:7] = x[[4, 5, 6, 3]]
        pin.framesForwardKinematics(biped.pin_model, data, q_pin)
        centers = np.array([data.oMf[biped.pin_model.getFrameId(c)].translation for c in biped.wheel_centers])
        assert_close(biped.nearest_ik(x, centers, targets="center"), x[7:15], 1e-9, "centres")
    with pytest.raises(ValueError, match="targets: expected one of"):
        biped.inverse_kinematics(x, points, targets="feet")


# ----------------------------------------------------------------- item 7
class Thruster(RigidBody):
    """A body pushed along its own z axis, ``wrenches`` written as a RobotDynamics.jl user does."""

    name = "thruster"
    control_dim = 4

    def __init__(self, rotation):
        super().__init__(rotation, mass=2.0, inertia=[0.1, 0.2, 0.3])

    def wrenches(self, x, u, t=0.0):
        thrust = ca.vertcat(0.0, 0.0, u[0]) if isinstance(x, (ca.SX, ca.MX)) else np.array([0.0, 0.0, u[0]])
        return self.rotation.to_rot(self.orientation(x)) @ thrust, u[1:4]


@pytest.mark.parametrize("rotation", [UnitQuaternion, MRP, RodriguesParam])
def test_rotation_functions_accept_rotation_objects(rotation):
    """Seed call: a RigidBody's ``wrenches`` written ``self.rotation.to_rot(self.orientation(x))``
    (``orientation`` returns a rotation object) and the ``lie`` conversions given rotation objects,
    numerically and symbolically (SX and MX).

    Matrices against pinocchio (1e-13); the body's ``xdot`` against numpy's Newton-Euler equations (1e-12).
    """
    q = random_quat()
    R = pin_rot(q)
    rot = rotation(rotation.from_quat(q))
    for f in (UnitQuaternion.to_rot, MRP.to_rot, RodriguesParam.to_rot, quat_to_rot, mrp_to_rot, rodrigues_to_rot):
        assert_close(f(rot), R, 1e-13, f"{f.__qualname__}({rotation.name})")
    assert_close(MRP.kinematics_matrix(rot), MRP.kinematics_matrix(MRP.from_quat(q)), 1e-13, "MRP.kinematics_matrix")
    qq = UnitQuaternion.from_quat(rot)  # the same rotation: q up to sign
    assert_close(qq * np.sign(qq[0]), q * np.sign(q[0]), 1e-13, "from_quat")
    for kind in (ca.SX, ca.MX):
        p = kind.sym("p", rotation.size)
        sym = ca.Function("R", [p], [UnitQuaternion.to_rot(rotation(p)), quat_to_rot(rotation(p))])
        for out in sym(rot.params):
            assert_close(np.array(out), R, 1e-13, f"symbolic {kind.__name__}")
    body = Thruster(rotation)
    x = np.concatenate([RNG.normal(size=3), rot.params, RNG.normal(size=3), RNG.normal(size=3)])
    u = RNG.normal(size=4)
    xdot = body.dynamics(x, u)  # through the symbolic (SX) stage function
    J, w = np.diag([0.1, 0.2, 0.3]), x[-3:]
    assert_close(xdot[-6:-3], R @ np.array([0.0, 0.0, u[0]]) / 2.0, 1e-12, "vdot")
    assert_close(xdot[-3:], np.linalg.solve(J, u[1:] - np.cross(w, J @ w)), 1e-12, "wdot")
    xm, um = ca.MX.sym("x", body.state_dim), ca.MX.sym("u", 4)
    mx = ca.Function("f", [xm, um], [body.dynamics(xm, um)])
    assert_close(np.array(mx(x, u)).reshape(-1), xdot, 1e-13, "MX dynamics")


# ----------------------------------------------------------------- item 8
def test_contact_simulation_that_blows_up_reports_diverged(hand):
    """Seed call: the tutorial's simulation loop with a PD too stiff for its time step
    (``w = 2000 rad/s``, ``dt = 10 ms``): ``ContactSimulator.simulate`` returns status
    ``"diverged"`` and the finite part of the run, instead of raising ``v: contains NaN``.

    Checked against the explicit (semi-implicit Euler) growth of the same run: every returned
    state is finite and the last one is far from the start (numpy).
    """
    full = CapsuleCollisions.from_geometry(hand, hand.geometry_model)
    sim = ContactSimulator(hand, CapsuleCollisions(hand, full.capsules, []))
    model, data = hand.pin_model, hand.pin_model.createData()
    inertia = np.diag(pin.crba(model, data, hand.curl(1.0)))
    target, w = hand.curl(0.3), 2000.0

    def stiff(t, x):
        q, v = x[: model.nq], x[model.nq :]
        return -(w**2) * inertia * (q - target) - 2 * w * inertia * v

    result = sim.simulate(np.zeros(2 * model.nv), stiff, dt=1e-2, T=2.0)
    assert result.status == "diverged" and not result.success
    assert "non-finite" in result.message
    assert 2 <= len(result.states) < 201 and np.isfinite(result.states).all()
    assert np.abs(result.states[-1]).max() > 1e6 and len(result.torques) == len(result.states) - 1
