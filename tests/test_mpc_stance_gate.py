"""Stance feedback only on legs that stand (trajopt.mpc.stance_gate): the legs come from pinocchio's Jacobians, the
replaced rows from the plan's schedule and the measured contacts, a joint PD replaces them, a sole's ankles have their
correction bounded, and the plan's law keeps everything else."""
from __future__ import annotations

import dataclasses

import numpy as np
import pinocchio as pin
import pytest

import problems
from models import Go1, Humanoid
from models.contact_dynamics import ContactDynamics
from models.model import GRAVITY
from trajopt.legged.joint_gains import default_gains
from trajopt.mpc.loop import run_closed_loop
from trajopt.mpc.plan import Plan
from trajopt.mpc.stance_gate import ANKLE_CORRECTION, TOUCH_FORCE, StanceGate, touching
from trajopt.mpc.tasks import mpc_task
from trajopt.transcription import get_transcription

RNG = np.random.default_rng(3)


def jacobian_actuators(robot) -> np.ndarray:
    """(nc, nu): the actuators that move each contact point at a random configuration, from pinocchio's frame
    Jacobians (``J_i B`` has a nonzero column ``k``)."""
    model, data = robot.pin_model, robot.pin_model.createData()
    q = pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq))
    pin.computeJointJacobians(model, data, q)
    pin.updateFramePlacements(model, data)
    out = []
    for body in robot.kinematics_bodies:
        J = pin.getFrameJacobian(model, data, model.getFrameId(body), pin.LOCAL_WORLD_ALIGNED)[:3]
        out.append(np.abs(J @ robot.B_func()).max(axis=0) > 1e-9)
    return np.array(out)


@pytest.mark.parametrize("make", [Go1, lambda: Humanoid(contacts_per_foot=4)], ids=["go1", "g1-full"])
def test_contact_actuators_are_those_that_move_each_contact_point(make):
    robot = make()
    actuators = robot.contact_actuators()
    assert actuators.shape == (robot.nc, robot.nu)
    assert np.array_equal(actuators, jacobian_actuators(robot))


def test_the_gate_replaces_a_standing_leg_in_the_air_and_keeps_a_sole_on_one_corner():
    go1 = StanceGate.of(ContactDynamics(Go1(), "contact"))
    legs = np.repeat(np.arange(4), 3)  # FL, FR, RL, RR: hip, thigh, calf each
    stance = np.ones(4)
    assert not go1.rows(stance, np.ones(4, dtype=bool)).any()
    assert np.array_equal(go1.rows(stance, np.array([False, True, True, True])), legs == 0)
    assert np.array_equal(go1.rows(np.array([0.0, 1.0, 1.0, 0.0]), np.array([False, True, False, False])), legs == 2)  # swings keep theirs
    g1 = Humanoid(contacts_per_foot=4, locked=("waist", "arms"))
    gate = StanceGate.of(ContactDynamics(g1, "contact"))
    left = np.arange(g1.nu) < 6
    corners = np.ones(8)
    assert not gate.rows(corners, np.array([True, False, False, False, True, True, True, True])).any()  # a left heel corner touches
    assert np.array_equal(gate.rows(corners, np.array([False] * 4 + [True] * 4)), left)
    assert np.array_equal(gate.rows(np.array([0.0] * 4 + [1.0] * 4), np.zeros(8, dtype=bool)), ~left)


def test_a_plant_touches_where_its_ground_force_exceeds_the_threshold():
    class Feet:
        def foot_forces(self):
            return np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.5 * TOUCH_FORCE], [0.8 * TOUCH_FORCE, 0.0, 0.8 * TOUCH_FORCE], [1.0, 2.0, 80.0]])

    assert touching(Feet()).tolist() == [False, False, True, True]
    assert touching(object()) is None


@pytest.fixture(scope="module")
def go1_plan():
    """A plan of the Go1's contact model by hand: random states near standing, torques, gains, all feet in stance."""
    model = ContactDynamics(Go1(), "contact")
    N, h = 4, 0.02
    x0 = model.robot.init_state()
    states = np.array([x0 + np.r_[np.zeros(model.robot.nq), 0.01 * RNG.standard_normal(model.robot.nv)] for _ in range(N)])
    controls = 2.0 * RNG.standard_normal((N, model.nu))
    gains = 0.5 * RNG.standard_normal((N - 1, model.nu, model.error_dim))
    lower, upper = model.control_bounds()
    return Plan(
        model, "multiple_shooting", h * np.arange(N), states, controls, np.zeros((N - 1, 0)), gains, np.ones((N, model.robot.nc)), lower, upper,
        interpolant_function=get_transcription("multiple_shooting").interpolant(model), gate=StanceGate.of(model),
    )  # fmt: skip


def test_the_joint_pd_rows_hold_each_joint_on_the_plan_with_the_robots_gains():
    model = ContactDynamics(Go1(), "contact")
    gate, (kp, kd) = StanceGate.of(model), default_gains(model.robot)
    dx = RNG.standard_normal(model.error_dim)  # [base (6), joints (12)] positions, then velocities
    np.testing.assert_allclose(gate.joint_gains @ dx, kp * dx[6:18] + kd * dx[24:36], rtol=1e-15, atol=0)


def test_the_plans_law_is_its_reference_less_its_gains_times_the_state_error(go1_plan):
    """``u = clip(u_ref(t) - K_k state_error(x, x_ref(t)))`` (one call of the plan's reference-and-error function)
    against the plan's interpolation and the model's numeric ``state_error``, inside the horizon, before it and
    past its last knot (where the last interval's law holds)."""
    plan = dataclasses.replace(go1_plan, gate=None, reference_error=None)
    for t in (-0.01, 0.0, 0.013, 0.03, 0.059, 0.2):
        x_ref, u_ref = plan.reference(t)
        x = np.asarray(plan.model.apply_dx(x_ref, 0.05 * RNG.standard_normal(plan.model.error_dim)), dtype=float).reshape(-1)
        error = np.asarray(plan.model.state_error(x, x_ref), dtype=float).reshape(-1)
        expected = np.clip(u_ref - plan.gains[plan.interval(t)] @ error, plan.lower, plan.upper)
        np.testing.assert_allclose(plan.control(t, x), expected, rtol=1e-12, atol=1e-12)


def test_the_plans_prediction_carries_the_deviation_along_its_motion(go1_plan):
    """``predict(t, x, d) = apply_dx(x_ref(t + d), state_error(x, x_ref(t)))``, against the plan's interpolation and the
    model's numeric ``state_error`` and ``apply_dx``."""
    plan, model = go1_plan, go1_plan.model
    for t, duration in ((0.0, 0.02), (0.013, 0.011), (0.05, 0.03)):
        x_now, x_then = plan.reference(t)[0], plan.reference(t + duration)[0]
        x = np.asarray(model.apply_dx(x_now, 0.05 * RNG.standard_normal(model.error_dim)), dtype=float).reshape(-1)
        expected = np.asarray(model.apply_dx(x_then, np.asarray(model.state_error(x, x_now), dtype=float).reshape(-1)), dtype=float).reshape(-1)
        np.testing.assert_allclose(plan.predict(t, x, duration), expected, rtol=1e-12, atol=1e-12)


def test_the_plans_law_replaces_only_the_rows_of_the_leg_in_the_air(go1_plan):
    plan, t = go1_plan, 0.03
    x_ref, u_ref = plan.reference(t)
    x = np.asarray(plan.model.apply_dx(x_ref, 0.02 * RNG.standard_normal(plan.model.error_dim)), dtype=float).reshape(-1)
    full = plan.control(t, x)
    assert np.array_equal(plan.control(t, x, touching=np.ones(4, dtype=bool)), full)
    gated = plan.control(t, x, touching=np.array([True, True, False, True]))
    rl = np.arange(12) // 3 == 2
    kp, kd = default_gains(plan.model.robot)
    q, v = x[7:19], x[25:37]  # the joints' positions and velocities
    q_ref, v_ref = x_ref[7:19], x_ref[25:37]
    np.testing.assert_allclose(gated[rl], (u_ref + kp * (q_ref - q) + kd * (v_ref - v))[rl], rtol=1e-12, atol=1e-12)
    assert np.array_equal(gated[~rl], full[~rl])
    assert not np.allclose(full[rl], gated[rl])


@pytest.mark.parametrize("robot, ankles, half_width", [
    ("g1", ("ankle_pitch", "ankle_roll"), 0.03),  # the URDF's toe spheres at y = +-0.03
    ("talos", ("leg_left_5", "leg_left_6", "leg_right_5", "leg_right_6"), 0.05),  # the corners' y = +-0.05
])  # fmt: skip
def test_a_humanoids_ankles_are_the_joints_just_above_its_soles(robot, ankles, half_width):
    humanoid = Humanoid(contacts_per_foot=4, locked=("waist", "arms"), robot=robot)
    names = [humanoid.pin_model.names[j] for j in range(2, humanoid.pin_model.njoints)]  # one actuator per joint, in order
    expected = [any(a in name for a in ankles) for name in names]
    assert humanoid.sole_actuators().tolist() == expected and sum(expected) == 4
    assert humanoid.sole_half_width() == pytest.approx(half_width, abs=1e-12)
    assert not Go1().sole_actuators().any() and np.isnan(Go1().sole_half_width())


def test_a_soles_ankle_correction_is_bounded_and_the_other_rows_are_not():
    """The G1's plan law: a correction far beyond the sole's is clipped to rho w m g on the ankles only, also on the rows
    a leg in the air gets; the Go1's gate bounds nothing."""
    model = ContactDynamics(Humanoid(contacts_per_foot=4, locked=("waist", "arms")), "contact")
    robot, gate = model.robot, StanceGate.of(model)
    bound = ANKLE_CORRECTION * 0.03 * robot.mass * GRAVITY
    ankles = robot.sole_actuators()
    np.testing.assert_array_equal(gate.correction_limit, np.where(ankles, bound, np.inf))
    rng = np.random.default_rng(7)  # its own draws: the assertion that every ankle row is clipped holds for these
    K = 50.0 * rng.standard_normal((robot.nu, model.error_dim))
    error = rng.standard_normal(model.error_dim)
    stance = np.ones(robot.nc)
    for touching_now in (None, np.ones(robot.nc, dtype=bool)):
        correction = gate.correction(K, error, stance, touching_now)
        np.testing.assert_array_equal(correction[~ankles], (K @ error)[~ankles])
        np.testing.assert_array_equal(correction[ankles], np.clip((K @ error)[ankles], -bound, bound))
        assert np.all(np.abs((K @ error)[ankles]) > bound)  # every ankle row was clipped
    in_air = np.array([False] * 4 + [True] * 4)  # the left sole scheduled to stand is in the air
    left = np.arange(robot.nu) < 6
    correction = gate.correction(K, error, stance, in_air)
    pd = gate.joint_gains @ error
    np.testing.assert_array_equal(correction[left & ~ankles], pd[left & ~ankles])
    np.testing.assert_array_equal(correction[left & ankles], np.clip(pd[left & ankles], -bound, bound))
    np.testing.assert_array_equal(correction[~left], gate.correction(K, error, stance, None)[~left])
    assert np.all(np.isinf(StanceGate.of(ContactDynamics(Go1(), "contact")).correction_limit))


def test_a_horizon_without_a_stance_schedule_has_no_gate():
    assert StanceGate.of(ContactDynamics(Go1(), "forward")) is None
    assert StanceGate.of(Go1()) is None


def test_go2_climbs_the_stairs_in_mujoco():
    """``stairs --robot go2`` under MPC: no fall, no failed QP, all four feet over the top tread at the end. With every row of the gains
    kept it fell at 3.2 s: its front foot touched down a millimetre late on the top tread, the stance gains drove that
    leg to its torque limits within 12 ms and the foot flew up 5 cm (docs/design/mpc.md)."""
    problem = problems.get("stairs", robot="go2")
    task = mpc_task(problem)
    result = run_closed_loop(task.controller(mode="rti"), task.plant(), task.duration, 50.0, delay="tick")
    assert not result.fell, result.fall_reason
    assert not any(record.status.startswith("QP failed") for record in result.log)
    top = max(block.top for block in problem.terrain.blocks)
    edge = max(block.vertices[:, 0].min() for block in problem.terrain.blocks)
    feet = np.asarray(problem.robot.kinematics(result.states[-1])).reshape(4, 3)
    assert (feet[:, 0] > edge).all() and (feet[:, 2] > top - 0.03).all()  # past the last edge, on the top (a diagonal may swing)
