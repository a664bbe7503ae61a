"""FloatingBaseModel (OCS2's floating-base flow map, issue 7) against pinocchio and finite differences.

Models: Go1 with its four feet as point contacts, and the G1 humanoid with
both kinds (hands as point contacts, soles as surface contacts). States are
random: Euler angles with ``|pitch| <= 1.2``, joint angles, base twist, joint
velocities and WORLD-frame contact forces/moments all of order one to tens.

Oracles: pinocchio's ``crba``/``nonLinearEffects``/frame Jacobians (the locked
inertia solve), ``rnea``/``aba`` with the contact wrenches as pinocchio
``fext`` (joint-local wrenches, a second path to the same generalized force),
``integrate`` (the pose path of a body twist), ``getFrameClassicalAcceleration``,
``rpy.rpyToMatrix`` (the ZYX convention), and ``buildReducedModel`` (the robot
with its joints locked: one rigid body whose ``aba`` is the full dynamics the
flow map must reproduce when the joint velocities are zero). The ``"inverse"``
formulation's residual is checked to be ``M_bb (a - a_B)``.

Tolerances are relative with a floor, ``|a - b| <= tol * max(1, |b|)``:
``TOL = 1e-9`` against pinocchio values, ``EXACT = 1e-12`` for identities and
symbolic/numeric agreement; loosened: ``FD_TOL = 1e-6`` against central
differences (step 1e-6: truncation ~1e-12, round-off ~1e-10 times the
function's scale), ``ROLLOUT_TOL = 1e-8`` for two adaptive integrations at
``rtol = atol = 1e-12`` over 0.25 s.
"""
from __future__ import annotations

import warnings
from functools import lru_cache

import casadi as ca
import numpy as np
import pinocchio as pin
import pytest
from scipy.integrate import solve_ivp

from lie import attitude_jacobian, euler_zyx_to_rot, quat_to_rot, rot_to_euler_zyx
from models import Go1, Humanoid
from models.floating_base import (
    BASE_ANGULAR_VELOCITY,
    BASE_EULER,
    BASE_LINEAR_VELOCITY,
    BASE_POSITION,
    JOINT_POSITIONS,
    PITCH,
    FloatingBaseModel,
    GimbalLockWarning,
)
from models.simple_multibody import cartpole_multibody

TOL = 1e-9
EXACT = 1e-12
FD_TOL = 1e-6
FD_STEP = 1e-6
ROLLOUT_TOL = 1e-8
N_STATES = 8
CASES = ("go1", "g1_mixed")


def assert_close(actual, expected, tol, what=""):
    actual, expected = np.asarray(actual, dtype=float), np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    err = np.abs(actual - expected) / np.maximum(1.0, np.abs(expected))
    assert np.all(err <= tol), f"{what}: max relative error {err.max():.3g} > {tol:g}"


@lru_cache(maxsize=None)
def model(case: str) -> FloatingBaseModel:
    if case == "go1":
        robot = Go1()
        return FloatingBaseModel(robot, point_contacts=robot.kinematics_bodies)
    return FloatingBaseModel(Humanoid(), point_contacts=("left_rubber_hand", "right_rubber_hand"), surface_contacts=("left_sole", "right_sole"))


def random_point(fb: FloatingBaseModel, rng: np.random.Generator) -> tuple:
    """A random state (pitch within +-1.2 rad) and input (forces ~ 20 N, moments ~ 5 N m)."""
    x = np.empty(fb.state_dim)
    x[BASE_LINEAR_VELOCITY], x[BASE_ANGULAR_VELOCITY] = rng.normal(0, 1, 3), rng.normal(0, 2, 3)
    x[BASE_POSITION] = rng.normal(0, 1, 3)
    x[BASE_EULER] = rng.uniform(-np.pi, np.pi), rng.uniform(-1.2, 1.2), rng.uniform(-np.pi, np.pi)
    x[JOINT_POSITIONS] = rng.normal(0, 0.5, fb.nj)
    u = np.empty(fb.control_dim)
    for s in fb.contact_slices:
        u[s] = np.r_[rng.normal(0, 20, 3), rng.normal(0, 5, s.stop - s.start - 3)]
    u[fb.joint_velocity_slice] = rng.normal(0, 1, fb.nj)
    return x, u


def points(case: str, n: int = N_STATES, seed: int = 7):
    rng = np.random.default_rng(seed)
    return [random_point(model(case), rng) for _ in range(n)]


# -- pinocchio side -------------------------------------------------------------


def pin_qv(fb: FloatingBaseModel, x, u):
    mb = fb.to_multibody(x, u)
    robot = fb.robot
    return robot.change_order(mb[: robot.nq], "nominal", "pinocchio"), mb[robot.nq :]


def wrenches(fb: FloatingBaseModel, u):
    """Per contact ``(frame, force, moment)``: WORLD axes, moment about the frame origin."""
    out = []
    for frame, s in zip(fb.contacts, fb.contact_slices):
        F = u[s]
        out.append((frame, F[:3], F[3:] if F.size == 6 else np.zeros(3)))
    return out


def pin_fext(model_, data, q, contact_wrenches):
    """The contact wrenches as pinocchio ``fext`` (joint-LOCAL wrenches), from placements at ``q``."""
    pin.framesForwardKinematics(model_, data, q)
    fext = [pin.Force.Zero() for _ in range(model_.njoints)]
    for frame, f, n in contact_wrenches:
        fid = model_.getFrameId(frame)
        joint = model_.frames[fid].parentJoint
        about_world_origin = pin.Force(f, n + np.cross(data.oMf[fid].translation, f))
        fext[joint] = fext[joint] + data.oMi[joint].actInv(about_world_origin)
    return fext


def locked_inertia_acceleration(fb: FloatingBaseModel, x, u):
    """``M[:6,:6]^-1 (sum_i J_b,i^T F_i - nle[:6])`` from pinocchio."""
    m, d = fb.robot.pin_model, fb.robot.pin_model.createData()
    q, v = pin_qv(fb, x, u)
    M = pin.crba(m, d, q)
    M = np.triu(M) + np.triu(M, 1).T
    nle = pin.nonLinearEffects(m, d, q, v)
    pin.computeJointJacobians(m, d, q)
    pin.framesForwardKinematics(m, d, q)
    g = np.zeros(m.nv)
    for frame, s in zip(fb.contacts, fb.contact_slices):
        J = pin.getFrameJacobian(m, d, m.getFrameId(frame), pin.LOCAL_WORLD_ALIGNED)
        g += J[: s.stop - s.start].T @ u[s]
    return np.linalg.solve(M[:6, :6], g[:6] - nle[:6])


# -- the flow map against pinocchio ---------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_base_acceleration_is_the_locked_inertia_solve(case):
    fb = model(case)
    for x, u in points(case):
        expected = locked_inertia_acceleration(fb, x, u)
        assert_close(fb.base_acceleration(x, u), expected, TOL, "base_acceleration")
        assert_close(fb.dynamics(x, u)[:6], expected, TOL, "flow map rows d/dt [v_B; w_B]")


@pytest.mark.parametrize("case", CASES)
def test_base_acceleration_is_aba_with_the_implied_torques(case):
    fb = model(case)
    m, d = fb.robot.pin_model, fb.robot.pin_model.createData()
    for x, u in points(case):
        q, v = pin_qv(fb, x, u)
        fext = pin_fext(m, d, q, wrenches(fb, u))
        a_b = fb.base_acceleration(x, u)
        tau = pin.rnea(m, d, q, v, np.r_[a_b, np.zeros(fb.nj)], fext)
        scale = max(1.0, np.abs(tau).max())
        assert np.abs(tau[:6]).max() <= TOL * scale  # a_B balances the base: no base wrench needed
        assert_close(fb.implied_joint_torques(x, u), tau[6:], TOL, "implied_joint_torques")
        ddq = pin.aba(m, d, q, v, np.r_[np.zeros(6), tau[6:]], fext)
        assert_close(a_b, ddq[:6], TOL, "aba base part")
        assert np.abs(ddq[6:]).max() <= TOL * max(1.0, np.abs(ddq).max())  # joints do not accelerate


@pytest.mark.parametrize("case", CASES)
def test_classical_acceleration_is_pinocchios(case):
    fb = model(case)
    m, d = fb.robot.pin_model, fb.robot.pin_model.createData()
    root = m.getFrameId("root_joint")
    for x, u in points(case, n=3):
        q, v = pin_qv(fb, x, u)
        a = np.r_[fb.base_acceleration(x, u), np.zeros(fb.nj)]
        pin.forwardKinematics(m, d, q, v, a)
        pin.updateFramePlacements(m, d)
        expected = pin.getFrameClassicalAcceleration(m, d, root, pin.LOCAL)
        assert_close(fb.classical_base_acceleration(x, u), expected.vector, TOL, "classical acceleration")
        w, vb = x[BASE_ANGULAR_VELOCITY], x[BASE_LINEAR_VELOCITY]
        assert_close(fb.classical_base_acceleration(x, u)[:3] - fb.base_acceleration(x, u)[:3], np.cross(w, vb), EXACT, "w x v")


def test_kinematic_rows_match_finite_differences_of_the_pose():
    # the pose path of a constant body twist (pinocchio's SE(3) exponential) has
    # rdot = R v_B and Euler rates E(e) w_B at s = 0
    fb = model("go1")
    m = fb.robot.pin_model
    for x, u in points("go1"):
        q, _ = pin_qv(fb, x, u)
        twist = np.r_[x[BASE_LINEAR_VELOCITY], x[BASE_ANGULAR_VELOCITY], np.zeros(fb.nj)]

        def pose(s):
            qs = pin.integrate(m, q, s * twist)
            return qs[:3], np.asarray(rot_to_euler_zyx(pin.Quaternion(qs[3:7]).toRotationMatrix()))

        (r_plus, e_plus), (r_minus, e_minus) = pose(FD_STEP), pose(-FD_STEP)
        de = np.angle(np.exp(1j * (e_plus - e_minus)))  # yaw and roll may wrap at +-pi
        xdot = fb.dynamics(x, u)
        assert_close(xdot[BASE_POSITION], (r_plus - r_minus) / (2 * FD_STEP), FD_TOL, "d/dt r")
        assert_close(xdot[BASE_EULER], de / (2 * FD_STEP), FD_TOL, "d/dt e")
        assert_close(xdot[JOINT_POSITIONS], u[fb.joint_velocity_slice], EXACT, "d/dt q_j")


@pytest.mark.parametrize("case", CASES)
def test_jacobians_match_finite_differences(case):
    fb = model(case)
    for x, u in points(case, n=2):
        A, Bu = fb.dynamics_jacobian(x, u)
        for J, z, f in ((A, x, lambda z: fb.dynamics(z, u)), (Bu, u, lambda z: fb.dynamics(x, z))):
            E = np.eye(z.size) * FD_STEP
            fd = np.column_stack([(f(z + e) - f(z - e)) / (2 * FD_STEP) for e in E])
            assert_close(J, fd, FD_TOL, "dynamics_jacobian")


@pytest.mark.parametrize("case", CASES)
def test_inverse_formulation_residual_is_the_base_equation_of_motion(case):
    forward = model(case)
    inverse = FloatingBaseModel(forward.robot, forward.point_contacts, forward.surface_contacts, formulation="inverse")
    assert inverse.control_dim == forward.control_dim + 6 and inverse.base_acceleration_slice == slice(forward.control_dim, forward.control_dim + 6)
    m, d = forward.robot.pin_model, forward.robot.pin_model.createData()
    rng = np.random.default_rng(11)
    for x, u in points(case, n=3):
        a_b = forward.base_acceleration(x, u)
        other = rng.normal(0, 5, 6)
        q, _ = pin_qv(forward, x, u)
        M = pin.crba(m, d, q)
        M_bb = np.triu(M[:6, :6]) + np.triu(M[:6, :6], 1).T
        # M_bb a + h_b - J_b^T F = M_bb (a - a_B): zero at the flow map's a_B, linear in a
        assert np.abs(inverse.dynamics_residual(x, np.r_[u, a_b])).max() <= TOL * max(1.0, np.abs(M_bb @ a_b).max())
        assert_close(inverse.dynamics_residual(x, np.r_[u, other]), M_bb @ (other - a_b), TOL, "residual")
        assert_close(inverse.dynamics(x, np.r_[u, other]), np.r_[other, forward.dynamics(x, u)[6:]], EXACT, "inverse flow map")
        assert_close(inverse.base_acceleration(x, np.r_[u, other]), a_b, EXACT, "base_acceleration ignores the input's a_B")
    with pytest.raises(ValueError, match="only the 'inverse' formulation"):
        forward.dynamics_residual(x, u)
    with pytest.raises(ValueError, match="formulation: expected one of"):
        FloatingBaseModel(forward.robot, formulation="implicit")


def test_symbolic_calls_match_numeric():
    fb = model("go1")
    (x, u), = points("go1", n=1)
    for kind in (ca.SX, ca.MX):
        xs, us = kind.sym("x", fb.state_dim), kind.sym("u", fb.control_dim)
        outs = [fb.dynamics(xs, us), fb.base_acceleration(xs, us), fb.implied_joint_torques(xs, us), fb.to_multibody(xs, us), *fb.dynamics_jacobian(xs, us)]
        values = ca.Function("f", [xs, us], outs)(x, u)
        expected = [fb.dynamics(x, u), fb.base_acceleration(x, u), fb.implied_joint_torques(x, u), fb.to_multibody(x, u), *fb.dynamics_jacobian(x, u)]
        for got, want in zip(values, expected):
            assert_close(np.asarray(got.full()).reshape(np.shape(want)), want, EXACT, f"{kind.__name__} call")


# -- rollouts: the flow map is the time derivative of its state ------------------


def locked_robot(fb: FloatingBaseModel, q_pin):
    """The robot with every joint locked at ``q_pin``'s angles: one free-flying rigid body."""
    m = fb.robot.pin_model
    reduced = pin.buildReducedModel(m, list(range(2, m.njoints)), q_pin)
    return reduced, reduced.createData()


def rollout_pair(case: str, forces: bool, t_end: float = 0.25):
    """Final states of the flow map and of the locked robot's full dynamics from one initial state.

    Joint velocities zero, constant WORLD-frame contact wrenches (or none).
    Returns ``(x_fb(t_end), (p, R, v, w)(t_end), u, rhs)``.
    """
    fb = model(case)
    rng = np.random.default_rng(3)
    x0, u = random_point(fb, rng)
    x0[BASE_EULER] = 0.4, -0.5, 0.3
    u[fb.joint_velocity_slice] = 0.0
    if not forces:
        u[fb.force_slice] = 0.0
    q_pin, v = pin_qv(fb, x0, u)
    rm, rd = locked_robot(fb, q_pin)
    contact_wrenches = wrenches(fb, u)

    def full_rhs(t, y):
        quat = y[3:7] / np.linalg.norm(y[3:7])
        q = np.r_[y[:3], quat[1:], quat[0]]  # pinocchio's [qx, qy, qz, qw]
        a = pin.aba(rm, rd, q, y[7:], np.zeros(6), pin_fext(rm, rd, q, contact_wrenches))
        return np.r_[quat_to_rot(quat) @ y[7:10], 0.5 * attitude_jacobian(quat) @ y[10:13], a]

    y0 = np.r_[q_pin[:3], q_pin[6], q_pin[3:6], v[:6]]
    opts = dict(method="DOP853", rtol=1e-12, atol=1e-12)
    full = solve_ivp(full_rhs, (0.0, t_end), y0, **opts).y[:, -1]
    quat = full[3:7] / np.linalg.norm(full[3:7])
    flow = solve_ivp(lambda t, x: fb.dynamics(x, u), (0.0, t_end), x0, **opts).y[:, -1]
    return fb, x0, u, flow, (full[:3], quat_to_rot(quat), full[7:10], full[10:13])


@pytest.mark.parametrize("case", CASES)
def test_rollout_matches_the_locked_joint_full_dynamics(case):
    fb, x0, u, flow, (p, R, v, w) = rollout_pair(case, forces=True)
    assert np.linalg.norm(p - x0[BASE_POSITION]) > 0.05  # the body really moves
    assert_close(flow[BASE_POSITION], p, ROLLOUT_TOL, "position")
    assert_close(euler_zyx_to_rot(flow[BASE_EULER]), R, ROLLOUT_TOL, "attitude")
    assert_close(flow[BASE_LINEAR_VELOCITY], v, ROLLOUT_TOL, "v_B")
    assert_close(flow[BASE_ANGULAR_VELOCITY], w, ROLLOUT_TOL, "w_B")
    assert_close(flow[JOINT_POSITIONS], x0[JOINT_POSITIONS], EXACT, "locked joints")


def test_adding_w_cross_v_to_the_spatial_acceleration_drifts():
    # OCS2's README flow map, d/dt v_B = aba_Bv + w x v, on a body without contact forces
    fb, x0, u, _, (p, R, v, w) = rollout_pair("go1", forces=False)
    opts = dict(method="DOP853", rtol=1e-12, atol=1e-12)

    def literal(t, x):
        xdot = fb.dynamics(x, u)
        xdot[BASE_LINEAR_VELOCITY] += np.cross(x[BASE_ANGULAR_VELOCITY], x[BASE_LINEAR_VELOCITY])
        return xdot

    drifted = solve_ivp(literal, (0.0, 0.25), x0, **opts).y[:, -1]
    assert np.linalg.norm(drifted[BASE_POSITION] - p) > 1e-3
    assert np.linalg.norm(drifted[BASE_LINEAR_VELOCITY] - v) > 1e-2


# -- conversions ----------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_conversions_round_trip(case):
    fb = model(case)
    robot = fb.robot
    for x, u in points(case, n=4):
        mb = fb.to_multibody(x, u)
        assert mb.shape == (robot.nx,)
        # ZYX (yaw, pitch, roll) is pinocchio's rpy with R = Rz(yaw) Ry(pitch) Rx(roll)
        yaw, pitch, roll = x[BASE_EULER]
        assert_close(quat_to_rot(mb[3:7]), pin.rpy.rpyToMatrix(roll, pitch, yaw), EXACT, "attitude")
        back, qdot_j = fb.from_multibody(mb)
        assert_close(back, x, EXACT, "from_multibody(to_multibody(x))")
        assert_close(qdot_j, u[fb.joint_velocity_slice], EXACT, "joint velocities")
    x_mb = robot.randn_state(np.random.default_rng(1))
    again = fb.to_multibody(*fb.from_multibody(x_mb)[:1], np.r_[np.zeros(fb.force_slice.stop), x_mb[robot.nq + 6 :]])
    sign = np.sign(again[3] * x_mb[3])
    assert_close(np.r_[again[:3], sign * again[3:7], again[7:]], x_mb, EXACT, "to_multibody(from_multibody(x_mb))")
    assert_close(fb.to_multibody(x)[robot.nq + 6 :], np.zeros(fb.nj), EXACT, "no input: joints at rest")


def test_control_bounds_are_the_joint_velocity_limits():
    fb = model("go1")
    lo, hi = fb.control_bounds()
    assert np.all(np.isinf(hi[fb.force_slice])) and np.all(np.isinf(lo[fb.force_slice]))
    assert np.array_equal(hi[fb.joint_velocity_slice], fb.robot.pin_model.velocityLimit[6:]) and np.array_equal(lo, -hi)


# -- contacts and sizes -----------------------------------------------------------


def test_point_and_surface_contacts_build_and_evaluate():
    fb = model("g1_mixed")
    assert fb.contacts == ("left_rubber_hand", "right_rubber_hand", "left_sole", "right_sole")
    assert [s.stop - s.start for s in fb.contact_slices] == [3, 3, 6, 6]
    assert fb.state_dim == 12 + 29 and fb.control_dim == 18 + 29 and fb.joint_velocity_slice == slice(18, 47)
    (x, u), = points("g1_mixed", n=1)
    xdot = fb.dynamics(x, u)
    A, Bu = fb.dynamics_jacobian(x, u)
    assert xdot.shape == (41,) and A.shape == (41, 41) and Bu.shape == (41, 47)
    assert np.all(np.isfinite(xdot)) and np.all(np.isfinite(A)) and np.all(np.isfinite(Bu))
    # a sole moment turns the base: the wrench's moment rows reach the base acceleration
    assert np.abs(Bu[3:6, fb.contact_slices[2].start + 3 : fb.contact_slices[2].stop]).max() > 0


def test_bad_contacts_and_robots_are_clear_errors():
    robot = model("go1").robot
    with pytest.raises(ValueError, match=r"point_contacts: \['FL_paw'\] are not frames of the model"):
        FloatingBaseModel(robot, point_contacts=("FL_foot", "FL_paw"))
    with pytest.raises(ValueError, match=r"surface_contacts: \['sole'\] are not frames"):
        FloatingBaseModel(robot, surface_contacts=("sole",))
    with pytest.raises(ValueError, match="listed twice"):
        FloatingBaseModel(robot, point_contacts=("FL_foot",), surface_contacts=("FL_foot",))
    with pytest.raises(ValueError, match="sequence of frame names"):
        FloatingBaseModel(robot, point_contacts="FL_foot")
    with pytest.raises(ValueError, match="floating-base MultibodyModel"):
        FloatingBaseModel(cartpole_multibody())


# -- gimbal lock ------------------------------------------------------------------


def test_gimbal_lock_is_guarded():
    fb = model("go1")
    (x, u), = points("go1", n=1)
    x[PITCH] = 0.3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fb.dynamics(x, u)  # far from the singularity: silent
    x[PITCH] = np.pi / 2 - 0.05
    with pytest.warns(GimbalLockWarning, match="within 10 deg of"):
        fb.dynamics(x, u)
    x[PITCH] = -np.pi / 2
    for call in (fb.dynamics, fb.dynamics_jacobian, fb.base_acceleration):
        with pytest.raises(ValueError, match="gimbal lock"):
            call(x, u)
    x_mb = fb.robot.init_state()
    x_mb[3:7] = np.cos(np.pi / 4), 0.0, np.sin(np.pi / 4), 0.0  # pitched by 90 deg
    with pytest.raises(ValueError, match=r"x_mb: pitch = .*\(gimbal lock\)"):
        fb.from_multibody(x_mb)
    xs = ca.SX.sym("x", fb.state_dim)
    assert isinstance(fb.dynamics(xs, u), ca.SX)  # symbolic calls are not checked
