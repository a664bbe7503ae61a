"""Velocity-commanded walking (:mod:`trajopt.mpc.commands`, :class:`trajopt.mpc.legged.LeggedMPC`) judged in MuJoCo.

CI walks the Go1 for 2 s on CasADi's virtual machine with plans a tick late
(a result independent of the machine's load); the slow set runs the 20 s
command sequence of ``bench/locomotion.py``. Command files and limits are
checked without a plant.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import problems
from lie import quat_to_rot
from trajopt.mpc.commands import Command, CommandProfile, command_limits, read_commands
from trajopt.mpc.loop import run_closed_loop
from trajopt.mpc.tasks import mpc_task

SEQUENCE = "t,vx,vy,yaw_rate,gait\n0,0,0,0,stand\n1,0,0,0,trot\n2,0.4,0,0,trot\n8,0.3,0,0.5,trot\n12,0,0,0,trot\n15,0,0,0,stand\n"


def walk(commands, duration, gaits=None):
    task = mpc_task(problems.get("go1-trot"), commands=commands, gaits=gaits)
    mpc = task.controller(mode="rti", compile=False)
    return task, run_closed_loop(mpc, task.plant(), duration, 50.0, delay="tick")


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
    limits = command_limits(robot)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clamped = CommandProfile.constant(Command(5.0)).clamped(limits)
    assert len(caught) == 1 and "vx = 5" in str(caught[0].message) and "clamped" in str(caught[0].message)
    assert clamped.at(0.0).vx == pytest.approx(limits[0]) and limits[0] < 5.0


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
