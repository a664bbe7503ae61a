"""A jump under feedback (trajopt.mpc.plan_tracking): the horizon follows the offline plan's schedule, states,
torques and feet, and the Go1 lands its jump in MuJoCo where the plan lands it."""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import problems
from trajopt import solve
from trajopt.mpc.commands import Command
from trajopt.mpc.legged import LeggedMPCWeights
from trajopt.mpc.loop import run_closed_loop
from trajopt.mpc.plan_tracking import PlanTrackingMPC
from trajopt.mpc.tasks import PLAN_STANDING_TIME, PLAN_TORQUE_WEIGHT, PLAN_WAIT, TERRAIN_JUMP_TORQUE_WEIGHT, TERRAIN_SWING_WEIGHT, mpc_task
from trajopt.sim.pin_numerics import PinNumerics


@pytest.fixture(scope="module")
def plan():
    solution = solve(problems.get("go1-jump"))
    assert solution.success, solution.status
    return solution


def test_the_horizon_carries_the_plans_schedule_through_the_flight(plan):
    mpc = PlanTrackingMPC(plan, start=0.3)
    assert mpc.plan_end == pytest.approx(0.3 + plan.tf)
    flight = 0.3 + plan.times[15] + 0.01  # inside the plan's flight (knots 15-24)
    stance = mpc.stance(np.array([0.0, 0.29, 0.31, flight, 0.3 + plan.times[30], mpc.plan_end + 0.1]))
    assert stance.tolist() == [[True] * 4, [True] * 4, [True] * 4, [False] * 4, [True] * 4, [True] * 4]
    # a tick in the flight: every knot's stance, the state and torque references and the swing targets are the plan's
    x = plan.evaluate(flight - 0.3)[0]
    problem = mpc.problem
    mpc.update(problem, flight, x)
    times = flight + mpc.dt * np.arange(problem.N)
    states, controls = plan.evaluate(np.clip(times - 0.3, 0.0, plan.tf))
    assert np.array_equal(problem.dynamics_params.astype(bool), mpc.stance(times + 0.5 * mpc.dt))
    assert np.allclose(mpc.state_cost.x_ref, states, rtol=0, atol=1e-12)
    inside = times < mpc.plan_end
    assert np.allclose(mpc.state_cost.u_ref[inside], plan.problem.joint_torques(controls)[inside], rtol=0, atol=1e-12)
    swinging = ~problem.dynamics_params[:, 0].astype(bool)
    feet = np.array([np.asarray(plan.problem.robot.kinematics(s)).reshape(4, 3) for s in states])
    targets = mpc.swing_cost.raw_params
    assert np.allclose(targets[swinging, 0:3], feet[swinging, 0], rtol=0, atol=1e-12) and (targets[~swinging, 12] == 0).all()
    # its gait is the stand's, but the plan lands the feet: the touchdown rows are there, bounded at the landing's knot
    landing = 0.3 + plan.times[25]
    mpc.update(problem, landing - 2 * mpc.dt, plan.evaluate(landing - 2 * mpc.dt - 0.3)[0])
    assert mpc.lifts_feet() and np.isfinite(mpc.touchdown.lower).any() and np.isfinite(mpc.foot_height.lower).any()


def test_what_a_plan_tracking_horizon_refuses():
    with pytest.raises(ValueError, match="plan: expected a solution of a legged problem"):
        PlanTrackingMPC(solve(problems.get("pendulum")))
    with pytest.raises(ValueError, match="^plan: a plan-tracking horizon follows point feet; 'humanoid-walk' stands on soles"):
        PlanTrackingMPC(type("Plan", (), {"problem": problems.get("humanoid-walk")})())  # refused before its states are read
    legged_plan = type("Plan", (), {"problem": problems.get("go1-jump")})()
    with pytest.raises(ValueError, match="start: expected a wait >= 0 s"):
        PlanTrackingMPC(legged_plan, start=-1.0)
    with pytest.raises(ValueError, match="commands: a plan-tracking horizon follows its plan"):
        PlanTrackingMPC(legged_plan, commands=Command(0.3))
    with pytest.raises(ValueError, match="runs its offline plan \\(jump\\) under feedback; it takes no velocity commands"):
        mpc_task(problems.get("go1-jump"), commands=Command(0.3))
    with pytest.raises(ValueError, match=r"plan of 'solo12-jump' cannot be followed: HR_FOOT's shank goes 5\.\d\d cm below the ground .* -p link_clearance=0\.01"):
        mpc_task(problems.get("jump", robot="solo12"))  # planned without the shank rows, its landing kneels


@pytest.mark.parametrize("name, params", [("go1-jump", {}), ("go1-gap", {}), ("jump", {"robot": "solo12", "link_clearance": 0.01})], ids=["go1-jump", "go1-gap", "solo12-jump"])
def test_a_quadruped_lands_its_jump_in_mujoco_where_the_plan_lands_it(name, params):
    """The jump on flat ground and the jump across the gap (MuJoCo on the gap's terrain, its own weights), one tick
    late; Solo12's jump planned with its shanks 1 cm above the ground."""
    pytest.importorskip("mujoco")
    task = mpc_task(problems.get(name, **params))
    legged = task.legged
    assert task.duration == pytest.approx(PLAN_WAIT + legged.plan.tf + PLAN_STANDING_TIME)
    over_terrain = legged.plan.problem.terrain_plan is not None
    torque, swing = (TERRAIN_JUMP_TORQUE_WEIGHT, TERRAIN_SWING_WEIGHT) if over_terrain else (PLAN_TORQUE_WEIGHT, LeggedMPCWeights().swing_foot)
    assert (legged.weights.torque, legged.weights.swing_foot) == (torque / legged.scale.torque, swing)  # in the Go1's units, scaled
    result = run_closed_loop(task.controller(mode="rti"), task.plant(), task.duration, 50.0, delay="tick")
    assert not result.fell, result.fall_reason
    robot = legged.robot
    feet = np.array([np.asarray(robot.kinematics(s)).reshape(4, 3) for s in result.states])
    airborne = (feet[:, :, 2] > 0.01).all(axis=1).sum() * (result.times[1] - result.times[0])
    assert airborne > 0.1  # it jumped: every foot off the ground for the flight
    at_end = int(np.searchsorted(result.times, legged.plan_end))
    assert np.linalg.norm(feet[at_end, :, :2] - legged.plan_feet[-1, :, :2], axis=1).max() < 0.05  # landed where the plan lands
    assert np.linalg.norm(result.states[-1, :2] - legged.plan.states[-1, :2]) < 0.05  # and stands where it ends


def _pinocchio_feet(robot, q):
    """The feet (nc, 3) of configuration ``q`` (our convention) by pinocchio's own forward kinematics."""
    model = robot.pin_model
    data = model.createData()
    pin.framesForwardKinematics(model, data, PinNumerics(robot).to_pinocchio(q))
    return np.array([data.oMf[model.getFrameId(name)].translation for name in robot.kinematics_bodies])


def test_standing_after_the_plan_holds_its_posture_on_the_feet_where_they_landed(plan):
    """A landing short of the plan's feet: the standing reference is the plan's last state with its base moved by the
    feet's mean displacement, its joints re-fitted so that pinocchio's forward kinematics puts every foot where it
    stands, at rest; its torques hold that posture on vertical forces alone (pinocchio's RNEA with those forces as
    external wrenches: the base rows vanish)."""
    mpc = PlanTrackingMPC(plan, start=0.3)
    robot, nq = mpc.robot, mpc.robot.nq
    last, planned = plan.states[-1], mpc.plan_feet[-1]
    feet = planned + np.array([[-0.02, 0.005, -0.002], [-0.02, -0.01, -0.002], [0.025, 0.0, 0.0], [0.025, -0.005, 0.0]])
    posture = mpc.posture_on(last, planned, feet)
    np.testing.assert_allclose(_pinocchio_feet(robot, posture[:nq]), feet, rtol=0, atol=1e-9)
    np.testing.assert_allclose(posture[:3], last[:3] + (feet - planned).mean(axis=0), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(posture[3:7], last[3:7])  # the plan's orientation kept
    assert not posture[nq:].any()
    # the horizon's references at a tick after the plan's end, the robot standing in that posture
    mpc.update(mpc.problem, mpc.plan_end + 0.1, posture)
    np.testing.assert_allclose(mpc.state_cost.x_ref, np.tile(posture, (mpc.problem.N, 1)), rtol=0, atol=1e-9)
    torques = mpc.holding_torques(posture)
    # the update fits its posture on the feet of x, which are ``feet`` to the fit's 1e-12 m: torques within 1e-8 N m
    np.testing.assert_allclose(mpc.state_cost.u_ref, np.tile(torques, (mpc.problem.N, 1)), rtol=0, atol=1e-8)
    # pinocchio: tau(f) = rnea(q, 0, 0, f_ext) is affine in the feet's vertical forces; the torques are one of them, base rows zero
    model, data = robot.pin_model, robot.pin_model.createData()
    q = PinNumerics(robot).to_pinocchio(posture[:nq])
    pin.framesForwardKinematics(model, data, q)

    def rnea(f_z):
        external = [pin.Force.Zero() for _ in range(model.njoints)]
        for name, f in zip(robot.kinematics_bodies, f_z):
            frame = model.frames[model.getFrameId(name)]
            joint = data.oMi[frame.parentJoint]
            force, at = np.array([0.0, 0.0, f]), data.oMf[model.getFrameId(name)].translation
            external[frame.parentJoint] += pin.Force(joint.rotation.T @ force, joint.rotation.T @ np.cross(at - joint.translation, force))
        return pin.rnea(model, data, q, np.zeros(model.nv), np.zeros(model.nv), external)

    gravity = rnea(np.zeros(robot.nc))
    columns = np.column_stack([rnea(np.eye(robot.nc)[i]) - gravity for i in range(robot.nc)])
    f_z = np.linalg.lstsq(columns[6:], torques - gravity[6:], rcond=None)[0]
    np.testing.assert_allclose(rnea(f_z), np.r_[np.zeros(6), torques], rtol=0, atol=1e-9)
    assert f_z.sum() == pytest.approx(robot.mass * 9.81, rel=1e-3) and (f_z > 0).all()


def test_the_knots_past_the_plans_end_hold_its_last_posture_at_rest(plan):
    """At a tick before the plan ends, its knots past the end reference the plan's last configuration with every velocity
    zero, and the torques that hold it (those of :meth:`PlanTrackingMPC.holding_torques`), not the last state's velocity:
    a gait's plan ends moving, and held as the reference past its end, that velocity asked the horizon to move and
    stay in place at once (Solo12 slid off its top tread, docs/design/mpc.md)."""
    mpc = PlanTrackingMPC(plan, start=0.3)
    robot, problem = mpc.robot, mpc.problem
    t = mpc.plan_end - 5.5 * mpc.dt
    mpc.update(problem, t, plan.evaluate(t - 0.3)[0])
    after = t + mpc.dt * np.arange(problem.N) >= mpc.plan_end
    assert after.sum() == problem.N - 6
    rest = np.r_[plan.states[-1][: robot.nq], np.zeros(robot.nv)]
    np.testing.assert_array_equal(mpc.state_cost.x_ref[after], np.tile(rest, (after.sum(), 1)))
    np.testing.assert_array_equal(mpc.state_cost.u_ref[after], np.tile(mpc.holding_torques(rest), (after.sum(), 1)))
    np.testing.assert_array_equal(mpc.terminal_cost.x_ref, rest)
    states, controls = plan.evaluate(t - 0.3 + mpc.dt * np.arange(6))  # the knots before the end: the plan's own
    np.testing.assert_allclose(mpc.state_cost.x_ref[~after], states, rtol=0, atol=1e-12)
    np.testing.assert_allclose(mpc.state_cost.u_ref[~after], plan.problem.joint_torques(controls), rtol=0, atol=1e-12)
