"""Velocity-commanded walking (:mod:`trajopt.mpc.commands`, :class:`trajopt.mpc.legged.LeggedMPC`) judged in MuJoCo.

CI walks the Go1, ANYmal B and Solo12 for 1.5-2 s on CasADi's virtual
machine with plans a tick late (a result independent of the machine's load);
the slow set runs the 20 s command sequence of ``bench/locomotion.py``,
10 s walks of every quadruped, and of ANYmal B and HyQ with their plans
delayed by the measured solve time. Command files and limits are checked without
a plant.
"""
from __future__ import annotations

import math
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import problems
from lie import quat_to_rot
from models.robot_data import urdf_path
from trajopt.mpc.commands import Command, CommandProfile, command_limits, read_commands
from trajopt.mpc.gaits import GaitSchedule, GaitTimeline
from trajopt.mpc.loop import run_closed_loop
from trajopt.mpc.tasks import mpc_task
from trajopt.plotting.mpc import plot_closed_loop

SEQUENCE = "t,vx,vy,yaw_rate,gait\n0,0,0,0,stand\n1,0,0,0,trot\n2,0.4,0,0,trot\n8,0.3,0,0.5,trot\n12,0,0,0,trot\n15,0,0,0,stand\n"


def walk(commands, duration, gaits=None, robot="go1", delay="tick", compile=False):
    problem = problems.get("go1-trot") if robot == "go1" else problems.get("trot", robot=robot)
    task = mpc_task(problem, commands=commands, gaits=gaits)
    mpc = task.controller(mode="rti", compile=compile)
    return task, run_closed_loop(mpc, task.plant(), duration, 50.0, delay=delay)


#: Thigh + calf (m) of each robot, from its URDF's joint origins.
URDF_LEGS = {"go1": 0.213 + 0.213, "solo12": 0.16 + 0.16, "anymal": 0.25 + math.hypot(0.1, 0.32125), "hyq": 0.35 + 0.346}


def scaled_forward(robot):
    """bench/locomotion.py's command of the robots section: 0.3 m/s x sqrt(L / L_Go1), the Go1's legs 0.213 + 0.213 m."""
    return Command(0.3 * math.sqrt(problems.get("trot", robot=robot).robot.leg_length / 0.426))


def urdf_mass(robot):
    """The sum of the link masses in the example-robot-data URDF of ``robot`` (kg), read from the file."""
    return sum(float(m.get("value")) for m in ET.parse(urdf_path(robot)).getroot().iter("mass"))


def world_base_velocity(task, x):
    nq = task.legged.robot.nq
    return quat_to_rot(x[3:7]) @ x[nq : nq + 3]


def test_command_file_is_read_piecewise_constant_with_its_gaits(tmp_path):
    path = tmp_path / "walk.csv"
    path.write_text(SEQUENCE)
    profile, gaits = read_commands(path)
    assert profile.at(0.5).as_array().tolist() == [0.0, 0.0, 0.0]
    assert profile.at(2.0).as_array().tolist() == [0.4, 0.0, 0.0]
    assert profile.at(11.99).as_array().tolist() == [0.3, 0.0, 0.5]
    assert profile.at(30.0).as_array().tolist() == [0.0, 0.0, 0.0]
    assert gaits.gaits() == ["stand", "trot", "stand"]


@pytest.mark.parametrize(
    "text, message",
    [
        ("t,vx,vy\n0,0,0\n", "line 1: expected the header"),
        ("t,vx,vy,yaw_rate\n0,0,0,0\n1,0.3,0\n", "line 3: expected 4 values"),
        ("t,vx,vy,yaw_rate\n0,0,0,0\n1,fast,0,0\n", "line 3: expected numbers"),
        ("t,vx,vy,yaw_rate\n0,0,0,0\n2,0,0,0\n1,0,0,0\n", "line 4: time 1 s is not after"),
        ("t,vx,vy,yaw_rate\n1,0,0,0\n", "first command must be at t = 0"),
    ],
)
def test_a_malformed_command_file_names_its_line(tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        read_commands(path)


def test_a_command_beyond_the_robot_is_clamped_with_one_warning():
    robot = problems.get("go1-trot").robot
    lower, upper = command_limits(robot)
    np.testing.assert_array_equal(lower, -upper)  # a quadruped's are the same both ways
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clamped = CommandProfile.constant(Command(5.0)).clamped((lower, upper))
    assert len(caught) == 1 and "vx = 5" in str(caught[0].message) and "clamped" in str(caught[0].message)
    assert clamped.at(0.0).vx == pytest.approx(upper[0]) and upper[0] < 5.0


def test_go1_walks_forward_at_the_commanded_velocity():
    """0.3 m/s forward, 2 s in MuJoCo's default contacts: the reference ramps at 1 m/s^2, so over the last
    second the base moves at the command (within 0.1 m/s), with no failed tick and the feet's forces
    in their cones."""
    task, result = walk(Command(0.3), 2.0)
    assert not result.fell and all(r.success for r in result.log)
    last = result.times >= 1.0
    velocity = np.array([world_base_velocity(task, x) for x in result.states[last]])
    assert abs(velocity[:, 0].mean() - 0.3) < 0.1 and abs(velocity[:, 1].mean()) < 0.05
    distance = result.states[-1, 0] - result.states[0, 0]
    assert 0.25 < distance < 0.6  # ~0.3 m/s for 1.7 s after the ramp
    assert max(r.first_violation for r in result.log) < 1e-6
    # every landing has one planned foothold (the plot's crosses), on the ground, ahead of where the foot lifted off
    robot, masks = task.legged.robot, np.array([r.params > 0.5 for r in result.log])
    planned = task.legged.planned_footholds
    landings = 0
    for i in range(4):
        for k in np.flatnonzero(masks[1:, i] & ~masks[:-1, i]) + 1:
            t = result.log[k].t
            aims = [p for (foot, land), p in planned.items() if foot == i and abs(land - t) <= task.legged.dt]
            assert len(aims) == 1, (i, t)
            lifted = np.asarray(robot.kinematics(result.log[[j for j in range(k) if masks[j, i]][-1]].state)).reshape(4, 3)[i]
            assert abs(aims[0][2]) < 0.01 and aims[0][0] > lifted[0], (i, t, aims[0], lifted)
            landings += 1
    assert landings >= 16 and len(planned) >= landings  # 2 s of a trot at ~0.4 s a cycle; the horizon's own later landings too


@pytest.mark.slow
def test_the_command_sequence_ends_standing(tmp_path):
    """bench/locomotion.py's sequence (stand, trot at 0.4 m/s, turn, stop, stand), 20 s: no fall, and at the end
    all four feet down and the base at rest. With the real-time iteration's Levenberg-Marquardt term
    (0.01) the feet crept apart in the final stand and the Go1 fell at 19.6 s (measured)."""
    path = tmp_path / "sequence.csv"
    path.write_text(SEQUENCE)
    commands, gaits = read_commands(path)
    task, result = walk(commands, 20.0, gaits)
    assert not result.fell
    final = result.states[-1]
    feet = np.asarray(task.legged.robot.kinematics(final)).reshape(4, 3)
    assert np.abs(feet[:, 2]).max() < 0.01 and np.linalg.norm(world_base_velocity(task, final)) < 0.05


def test_a_stand_has_no_swing_even_where_its_phase_rounds_to_one():
    """Ticks under a measured delay fall at any time: just below a multiple of the stand's period its phase
    rounded to within 1e-12 of 1 and the feet counted as swinging there (a division by zero in the swing
    targets, measured in bench/mpc.py)."""
    timeline = mpc_task(problems.get("go1-stand")).legged.timeline
    times = np.arange(1, 200) * timeline.period[0] * (1 - 1e-15)
    assert timeline.stance(times).all()


@pytest.mark.parametrize("name, projected", [("go1-trot", True), ("go1-stand", False)])
def test_the_trots_stance_feet_are_projected_and_a_stands_are_not(name, projected):
    """The horizon starts with the velocities of the feet that landed within SETTLE_TIME projected out: every
    stance foot of a trot (its stance is shorter), none of a stand (whose feet would then hide their creep)."""
    legged = mpc_task(problems.get(name)).legged
    x = legged.x_stand.copy()
    x[legged.robot.nq :] = np.random.default_rng(2).standard_normal(legged.robot.nv)
    for t in (1.0, 1.13, 1.27, 1.4):
        legged.update(legged.problem, t, x)
        x0 = legged.problem.x0
        stance = legged.stance(np.array([t + 0.5 * legged.dt]))[0]
        feet = np.asarray(legged.robot.kinematics_velocity(x0)).reshape(4, 3)
        if projected:
            assert stance.any() and np.abs(feet[stance]).max() < 1e-10
            assert np.all(np.abs(feet[~stance]).max(axis=1) > 1e-3)  # swinging feet keep theirs
        else:
            assert np.array_equal(x0, x)


@pytest.mark.parametrize("robot, legs", URDF_LEGS.items())
def test_the_horizons_torque_weight_scales_with_the_robots_weight_and_legs(robot, legs):
    """The torque weight is the Go1's 1e-3 over m_r s, the ratios of the masses (summed from the URDF files) and
    of the legs (thigh + calf, from the URDFs' joint origins); the other weights are the Go1's. With the Go1's
    torque weight Solo12 (m_r s = 0.14) planned gains of 1300 N m/rad on the base attitude, its swing legs
    whirled at 1 kHz and it fell at 1.2 s (measured)."""
    legged = mpc_task(problems.get("go1-trot") if robot == "go1" else problems.get("trot", robot=robot)).legged
    factor = (urdf_mass(robot) / urdf_mass("go1")) * (legs / 0.426)
    assert np.allclose(np.diag(legged.state_cost.R), 1e-3 / factor, rtol=1e-3)  # leg lengths to the URDF's 4 digits
    assert np.allclose(np.diag(legged.state_cost.Q)[:3], [50.0, 50.0, 200.0])
    if robot == "go1":
        assert np.all(np.diag(legged.state_cost.R) == pytest.approx(1e-3, rel=1e-14))


def test_anymals_planned_forces_stay_in_coulombs_cone():
    """Every stance force of ANYmal B's first trot plan is inside the cone |f_t| <= mu f_z (written out here):
    the horizon's pyramid is the one inscribed in it. With the pyramid |f_x|, |f_y| <= mu f_z the plan pushed
    the diagonal feet towards each other at |f_t| / f_z up to 0.76 (mu 0.7), beyond any ground's friction."""
    task = mpc_task(problems.get("trot", robot="anymal"), commands=scaled_forward("anymal"))
    mpc = task.controller(mode="rti", compile=False)
    mpc.reset(0.0, task.x0)
    solution, masks, mu = mpc._last, task.problem.dynamics_params, task.legged.robot.mu
    forces = np.array([np.asarray(task.legged.model.kkt(solution.states[k], solution.controls[k], masks[k])[1]).reshape(4, 3) for k in range(task.problem.N - 1)])
    stance = masks[:-1].astype(bool)
    tangential, normal = np.linalg.norm(forces[..., :2], axis=2)[stance], forces[..., 2][stance]
    assert normal.min() > 0
    # the pyramid's rows hold to HPIPM's residuals (1e-4) at the last linearization, 1e-5 relative after the reset's steps
    assert np.all(tangential <= mu * normal * (1 + 1e-5))
    assert (tangential / normal).max() > 0.6  # the diagonal's internal forces still use the friction there is


@pytest.mark.parametrize("robot, legs", [(robot, legs) for robot, legs in URDF_LEGS.items() if robot != "go1"])
def test_the_knot_step_is_the_controllers_period_whatever_the_legs(robot, legs):
    """The horizon is 0.4 s x sqrt(L / L_Go1) long (legs from the URDFs' joint origins) in knots of 0.02 s, the
    period of the 50 Hz loop, so that every tick moves it by whole knots. With the knot step scaled too, ANYmal B's
    and HyQ's warm starts were interpolated between knots and HPIPM took 14-15 iterations per QP (measured)."""
    legged = mpc_task(problems.get("trot", robot=robot)).legged
    assert legged.dt == 0.02
    assert legged.problem.tf == pytest.approx(0.02 * (legged.problem.N - 1), rel=1e-14)
    assert legged.problem.N - 1 == round(0.4 * math.sqrt(legs / 0.426) / 0.02)


def test_the_friction_rows_are_in_the_robots_weight():
    """The horizon's friction rows are ``(c f_z -+ f_x) / (m g)``, ``(c f_z -+ f_y) / (m g)`` per foot, written out
    here from the KKT forces, ``c = mu / sqrt(2)`` and the mass summed from the URDF (HyQ, 87 kg)."""
    legged = mpc_task(problems.get("trot", robot="hyq")).legged
    rng = np.random.default_rng(3)
    x = legged.x_stand.copy()
    x[legged.robot.nq :] += 0.3 * rng.standard_normal(legged.robot.nv)
    u = legged._standing_torques + 5.0 * rng.standard_normal(12)
    mask = np.array([1.0, 0.0, 0.0, 1.0])
    f = np.asarray(legged.model.kkt(x, u, mask)[1]).reshape(4, 3)
    c = legged.robot.mu / math.sqrt(2.0)
    expected = np.concatenate([[c * fz - fx, c * fz + fx, c * fz - fy, c * fz + fy] for fx, fy, fz in f]) / (urdf_mass("hyq") * 9.81)
    rows = np.asarray(legged.friction.function(legged.model)(x, u, mask)).reshape(-1)
    assert np.abs(f[[0, 3], 2]).min() > 100.0  # the stance feet carry HyQ's weight, in newtons
    assert np.allclose(rows, expected, rtol=1e-6, atol=1e-12)  # the URDF's masses to its printed digits


@pytest.mark.parametrize("robot", ["anymal", "solo12"])
def test_anymal_and_solo12_walk_in_mujocos_default_contacts(robot):
    """The robots section's forward walk for 2 s in the realistic MuJoCo plant: no fall, no failed tick, the base
    moving forward, HPIPM's QPs solved in at most 8 interior-point iterations on average (measured: ANYmal B 5.3,
    Solo12 4.6; ANYmal B 14 with the knot step scaled to its legs and the friction rows in newtons). Before the
    inscribed friction pyramid ANYmal B's stance feet slid (0.37 m/s median) in MuJoCo's pyramidal cone and it fell
    at 0.45 s; before the torque weight's scaling Solo12 fell at 1.2 s (a swing leg whirling under the feedback
    gains; the first plan, with HPIPM's residuals at 1e-6, failed)."""
    command = scaled_forward(robot)
    task, result = walk(command, 2.0, robot=robot)
    assert not result.fell, result.fall_reason
    assert all(r.success for r in result.log)
    iterations = [r.qp_iterations for r in result.log[1:]]  # after the first plan's steps
    assert min(iterations) >= 1 and np.mean(iterations) <= 8.0, np.mean(iterations)
    distance = result.states[-1, 0] - result.states[0, 0]
    assert 0.5 * command.vx < distance < 2.0 * command.vx  # a ramp of ~0.3 s to the command, then ~1.7 s at it
    assert max(r.first_violation for r in result.log) < 1e-6
    if robot == "anymal":  # the figure's friction ratio is 1 on the horizon's pyramid, which ANYmal's diagonal forces reach
        figure = plot_closed_loop(result, task)
        ratio = next(line for ax in figure.axes for line in ax.get_lines() if line.get_label().startswith("friction ratio")).get_ydata()
        assert 0.9 < max(ratio) < 1 + 1e-6


@pytest.mark.slow
@pytest.mark.parametrize("robot", ["go1", "go2", "a1", "solo12", "anymal", "hyq"])
def test_every_quadruped_walks_ten_seconds(robot):
    """bench/locomotion.py's robots section: 10 s at 0.3 m/s x sqrt(L / L_Go1), no fall, RMS forward velocity
    error after 2 s under 0.1 m/s (measured 0.022-0.046)."""
    command = Command(0.3) if robot == "go1" else scaled_forward(robot)
    task, result = walk(command, 10.0, robot=robot)
    assert not result.fell, result.fall_reason
    keep = result.times >= 2.0
    forward = np.array([world_base_velocity(task, x)[0] for x in result.states[keep]])
    assert np.sqrt(np.mean((forward - command.vx) ** 2)) < 0.1


@pytest.mark.slow
@pytest.mark.parametrize("robot", ["anymal", "hyq"])
def test_the_heavy_quadrupeds_walk_with_their_measured_solve_time(robot):
    """The robots section with ``--delay measured``, compiled: 10 s without a fall or a failed tick. Before the knot
    step was the controller's period and the friction rows were in the robot's weight, their QPs took 14-15 HPIPM
    iterations, their ticks 42-50 ms at the median, and ANYmal B fell at 1.0-1.1 s, HyQ at 2.6-9.5 s (measured);
    now 5.4 and 6.4 iterations, ticks 25-34 ms (p50, on this 2-core machine; a slower one may miss more periods)."""
    task, result = walk(scaled_forward(robot), 10.0, robot=robot, delay="measured", compile=True)
    assert not result.fell, result.fall_reason
    assert all(r.success for r in result.log)



def test_the_horizon_has_a_touchdown_slot_for_each_foot_that_lands_with_another():
    """The trot, pace and bound land their feet in pairs, a biped's walk one sole (four corners) at a time, a stand
    none; feet whose landings fall within one step of each other count together, a whole step apart too."""
    go1, g1 = problems.get("go1-trot").robot, mpc_task(problems.get("humanoid-walk")).legged.robot
    feet = [[0], [1], [2], [3]]
    for gait, slots in (("trot", 2), ("pace", 2), ("bound", 2), ("stand", 0)):
        assert GaitTimeline(GaitSchedule.constant(gait), go1).most_landings_per_step(feet, 0.02) == slots
    assert GaitTimeline(GaitSchedule.parse("0:stand,1:trot,3:pace"), go1).most_landings_per_step(feet, 0.02) == 2
    assert GaitTimeline(GaitSchedule.constant("walk"), g1).most_landings_per_step([[0, 1, 2, 3], [4, 5, 6, 7]], 0.02) == 1
    trot = GaitTimeline(GaitSchedule.constant("trot"), go1)  # its pairs land half the 0.4 s period apart: 0.2 s
    assert trot.most_landings_per_step(feet, 0.199) == 2 and trot.most_landings_per_step(feet, 0.2) == 4


@pytest.mark.parametrize("name, t", [("go1-trot", 0.13), ("go1-bound", 0.31), ("humanoid-walk", 0.52)])
def test_the_touchdown_rows_hold_each_landing_at_its_height_and_at_rest(name, t):
    """A knot's touchdown rows are slots (LeggedMPC.landing_slots, fewer than the feet): at every knot 2 .. N - 1 where
    the gait lands a foot (or a sole), its independent rows (``_landing_rows``: every axis of a point foot) select
    that foot's velocity and height and are bounded to rest and to its target, the rest are free; at a random state
    the rows' values are the selected entries of the contact points' velocities and heights, in landing order."""
    task = mpc_task(problems.get(name))
    legged, problem = task.legged, task.problem
    robot, nc, N, h = legged.robot, legged.robot.nc, problem.N, legged.dt
    legged.update(problem, t, legged.x_stand)
    assert legged.landing_slots < len(legged.landing_groups)
    masks = legged.stance(t + h * np.arange(N) + 0.5 * h)
    landing = masks[1:] & ~masks[:-1]
    landing[0] = False  # knot 1 is left free
    assert landing.any()
    rng = np.random.default_rng(5)
    x = legged.x_stand + np.r_[np.zeros(robot.nq), 0.3 * rng.standard_normal(robot.nv)]
    velocities = np.asarray(robot.kinematics_velocity(x), dtype=float).ravel()
    heights = np.asarray(robot.kinematics(x), dtype=float).reshape(nc, 3)[:, 2]  # the flat ground: the height is z
    rows = legged._landing_rows(np.asarray(robot.kinematics(legged.x_stand)).reshape(nc, 3))
    u = np.zeros(robot.nv - 6)
    velocity_rows = lambda i: [3 * i + a for a in range(3) if rows[i, a]]  # noqa: E731
    height_rows = lambda i: [i] if rows[i, 2] else []  # noqa: E731
    for constraint, values, selected in ((legged.touchdown, velocities, velocity_rows), (legged.foot_height, heights, height_rows)):
        resolved = constraint.resolve(legged.model, N)
        for j in range(N - 1):
            feet = [i for group in legged.landing_groups if landing[j, group[0]] for i in group]
            expected = [e for i in feet for e in selected(i)]
            n = len(expected)
            target = np.zeros(n) if constraint is legged.touchdown else legged.touchdown_heights[j, expected]
            np.testing.assert_array_equal(resolved.lower[j, :n], target)
            np.testing.assert_array_equal(resolved.upper[j, :n], target)
            assert np.all(np.isneginf(resolved.lower[j, n:])) and np.all(np.isposinf(resolved.upper[j, n:]))
            value = np.asarray(resolved.function(x, u, resolved.params[j]), dtype=float).ravel()
            np.testing.assert_allclose(value[:n], values[expected], rtol=0, atol=1e-12)
            assert not value[n:].any()
    np.testing.assert_array_equal(np.isfinite(legged.touchdown_heights), landing & rows[:, 2])


def test_the_swing_targets_rise_by_the_feet_sink_and_nothing_else_moves():
    """foot_sink raises every swing foot's target by the sink (its clearance is over the surface, not over the sunk
    stance height); the stance knots, the touchdown rows and the weights stay as they were."""
    legged = mpc_task(problems.get("go1-trot")).legged
    x = legged.x_stand.copy()
    legged.update(legged.problem, 1.13, x)
    flat = np.array(legged.swing_cost.raw_params)
    touchdown = (legged.foot_height.lower.copy(), legged.foot_height.upper.copy())
    legged.foot_sink = 0.018
    legged.update(legged.problem, 1.13, x)
    sunk = np.array(legged.swing_cost.raw_params)
    swinging = flat[:, 12:] > 0  # a foot's weight is on at its swing knots only
    assert swinging.any() and not swinging.all()
    rise = (sunk - flat)[:, :12].reshape(-1, 4, 3)
    np.testing.assert_allclose(rise[..., 2], np.where(swinging, 0.018, 0.0), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(rise[..., :2], 0.0)
    np.testing.assert_array_equal(sunk[:, 12:], flat[:, 12:])
    np.testing.assert_array_equal(legged.foot_height.lower, touchdown[0])
    np.testing.assert_array_equal(legged.foot_height.upper, touchdown[1])


def test_a_negative_foot_sink_is_refused():
    from trajopt.mpc.legged import LeggedMPC

    with pytest.raises(ValueError, match="foot_sink"):
        LeggedMPC(mpc_task(problems.get("go1-trot")).legged.robot, foot_sink=-0.01)


def test_a_friction_pyramid_outside_the_inscribed_one_is_refused():
    from trajopt.mpc.legged import LeggedMPC

    robot = mpc_task(problems.get("go1-trot")).legged.robot
    for c in (0.0, -0.1, robot.mu, float("nan")):
        with pytest.raises(ValueError, match=r"pyramid_coefficient: expected c in \(0, mu / sqrt\(2\)\] = \(0, 0\.495\]"):
            LeggedMPC(robot, pyramid_coefficient=c)
