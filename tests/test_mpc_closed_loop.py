"""Closed loops judged in the plant: the Go1 in MuJoCo with MuJoCo's own contacts, and ``trajopt mpc``.

CI runs short loops on CasADi's virtual machine with a one-tick delay (a
result independent of the machine's load); the slow set runs the 20 s
acceptance loops compiled, in real-time emulation.
"""
from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import problems
from trajopt.mpc.disturbances import Push
from trajopt.mpc.loop import run_closed_loop
from trajopt.mpc.report import loop_statistics
from trajopt.mpc.tasks import mpc_task

pytest.importorskip("mujoco")
ROOT = Path(__file__).resolve().parents[1]


def closed_loop(name, duration, compile=False, delay="tick", disturbances=(), rate=50.0, **plant):
    task = mpc_task(problems.get(name))
    mpc = task.controller(mode="rti", compile=compile)
    result = run_closed_loop(mpc, task.plant(**plant), duration, rate, delay=delay, disturbances=disturbances)
    return task, result, loop_statistics(result, task.problem.model, task.reference)


def test_go1_trots_in_place_in_mujocos_default_contacts():
    task, result, stats = closed_loop("go1-trot", 1.2)
    assert not stats.fell and stats.failed == 0, stats
    assert stats.drift < 0.03 and stats.worst_violation < 1e-6
    feet = np.array([np.asarray(task.legged.robot.kinematics(x)).reshape(4, 3)[:, 2] for x in result.states])
    assert feet.max() > 0.03  # the feet really lift (a trot, not a stand)
    forces = np.array([r.first_violation for r in result.log])
    assert np.all(forces[np.isfinite(forces)] < 1e-6)


def test_go1_trots_ticking_every_second_knot():
    """25 Hz on 20 ms knots (a tick that overran its period skips the next one): each warm start appends two
    knots. Continued with the last plan's last control, which braked a swing leg into the terminal cost,
    the appended knots whirled the swing legs to 30-300 rad/s, the steps diverged and the Go1 fell at
    1.2 s (measured); held by each state's equilibrium control, it trots."""
    task, result, stats = closed_loop("go1-trot", 2.0, rate=25.0)
    assert not stats.fell and stats.failed == 0, stats
    assert stats.drift < 0.05 and stats.worst_violation < 1e-6


def test_go1_stands_in_mujocos_default_contacts_without_splaying():
    """With four feet down only the torque cost fixes the internal forces; around zero torque they
    pushed the feet apart, which crept in MuJoCo's soft contacts: 3 cm outwards and 0.11 rad of hip
    abduction in 2 s, a fall at 4.5 s (measured). Around the vertical-force torques: under 1 mm."""
    task, result, stats = closed_loop("go1-stand", 2.0)
    assert not stats.fell and stats.failed == 0, stats
    feet = np.array([np.asarray(task.legged.robot.kinematics(x)).reshape(4, 3) for x in result.states])
    assert np.abs(feet[:, :, :2] - feet[0, :, :2]).max() < 1e-3
    assert np.abs(result.states[:, [7, 10, 13, 16]]).max() < 0.02  # hip abduction angles (rad)


def test_go1_stand_recovers_from_a_push_in_our_kkt_plant():
    task, result, stats = closed_loop("go1-stand", 1.5, disturbances=(Push(3.0, 90.0, 0.3),), sim="own")
    assert not stats.fell and stats.failed == 0, stats
    y = result.states[:, 1]
    assert np.abs(y).max() > 0.005 and abs(y[-1]) < np.abs(y).max()  # pushed sideways, coming back


@pytest.mark.parametrize("stance", [(1, 0, 0, 1), (0, 1, 1, 0), (1, 1, 1, 1), (1, 1, 1, 0)], ids=lambda m: "".join(map(str, m)))
def test_stance_projection_is_pinocchios_plastic_impact(stance):
    """The measured state's stance-foot velocities removed as pinocchio's ``impulseDynamics`` (restitution 0)
    does with the stance feet's LOCAL_WORLD_ALIGNED linear Jacobian rows: 1e-10."""
    import pinocchio as pin

    legged = mpc_task(problems.get("go1-trot")).legged
    robot = legged.robot
    model, rng = robot.pin_model, np.random.default_rng(5)
    data = model.createData()
    frames = [model.getFrameId(f) for f in robot.kinematics_bodies]
    for _ in range(3):
        x = robot.init_state()
        x[7 : robot.nq] += 0.1 * rng.standard_normal(robot.nu)
        x[robot.nq :] = rng.standard_normal(robot.nv)
        projected = legged.stance_projection(x, np.array(stance, dtype=bool))
        q = robot.change_order(x[: robot.nq], "nominal", "pinocchio")
        pin.computeJointJacobians(model, data, q)
        pin.updateFramePlacements(model, data)
        J = np.vstack([pin.getFrameJacobian(model, data, frames[i], pin.LOCAL_WORLD_ALIGNED)[:3] for i in np.flatnonzero(stance)])
        v_after = pin.impulseDynamics(model, data, q, x[robot.nq :], J, 0.0)
        assert np.allclose(projected[: robot.nq], x[: robot.nq], rtol=0, atol=0)
        assert np.abs(projected[robot.nq :] - v_after).max() <= 1e-10 * max(1.0, np.abs(v_after).max())
        feet = np.asarray(robot.kinematics_velocity(projected)).reshape(4, 3)
        assert np.abs(feet[np.flatnonzero(stance)]).max() < 1e-10


def test_a_lateral_push_right_after_touchdown_is_recovered():
    """6 N s sideways at 2.211 s, while the diagonal pair lands: MuJoCo's soft feet land with some velocity
    (one bounced 1 cm up), which the KKT model kept for the whole stance (its stance feet hold their
    acceleration, not their velocity), planning a stance foot rising through the horizon; the real-time
    iterations diverged, their QPs became infeasible and the robot fell at 2.5 s (measured). The horizon
    now starts from the measured state with the velocities of the feet that just landed projected out."""
    task, result, stats = closed_loop("go1-trot", 3.2, disturbances=(Push(6.0, 90.0, 2.211),))
    assert not stats.fell and stats.failed == 0, stats


def test_a_lateral_push_as_a_pair_lifts_off_is_recovered():
    """6 N s sideways at 2.036 s, just before one diagonal pair lifts off (phase 0.09 of the cycle starting at
    2 s): the horizon must hold the next touchdown of both pairs. With a 0.5 s trot on the 0.4 s horizon,
    the same phase (2.045 s) failed 9 ticks and the Go1 fell at 2.66 s (measured); the trot's period is
    now the horizon's length."""
    task, result, stats = closed_loop("go1-trot", 3.0, disturbances=(Push(6.0, 90.0, 2.036),))
    assert task.legged.timeline.period[0] == pytest.approx(task.problem.tf)
    assert not stats.fell and stats.failed == 0, stats


def run_cli(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "trajopt.cli", "mpc", *args], capture_output=True, text=True, cwd=ROOT, timeout=timeout)


def test_cli_tracks_the_figure_eight_and_writes_its_log_plot_and_html(tmp_path):
    log, plot, html = tmp_path / "track.csv", tmp_path / "track.png", tmp_path / "track.html"
    out = run_cli("quadrotor-track", "--duration", "2", "--delay", "tick", "--push", "0.5,90,1", "--log", str(log), "--plot", str(plot), "--html", str(html))
    assert out.returncode == 0, out.stderr
    assert "no fall" in out.stdout and "t =   1.0 s" in out.stdout and "position RMS" in out.stdout
    rows = list(csv.DictReader(log.open()))
    assert len(rows) == 100  # the first plan at t = 0, then a tick every 20 ms before t = 2 s
    assert {"t", "solve_time", "iterations", "qp_iterations", "success", "base_x", "base_y", "base_z", "base_vx", "base_vy", "fallen"} <= set(rows[0])
    assert all(int(r["qp_iterations"]) >= 1 for r in rows)  # real-time iterations: HPIPM's count of each tick's QP
    assert all(r["success"] == "true" for r in rows) and all(r["fallen"] == "false" for r in rows)
    assert plot.stat().st_size > 10_000 and "push" in html.read_text()[:2_000_000]


@pytest.mark.parametrize(
    "args, message",
    [
        (("go1-trot", "--duration", "-1"), "--duration: expected a positive number"),
        (("go1-trot", "--rate", "0"), "--rate: expected a positive number"),
        (("go1-trot", "--push", "6;90;2"), "--push: expected IMPULSE,ANGLE_DEG,T"),
        (("no-such-problem",), "unknown problem 'no-such-problem'"),
        (("go1-trot", "--delay", "soon"), "--delay: expected measured, tick or seconds"),
        (("cartpole", "--vx", "1"), "velocity commands and gaits steer a legged robot"),
        (("pronk",), "the receding horizon runs stand, trot, pace, bound"),
        (("go1-jump", "--vx", "0.3"), "runs its offline plan (jump) under feedback; it takes no velocity commands"),
        (("go1-stones", "--sim", "own"), "'go1-stones' walks on a terrain; our KKT plant has flat ground only"),
        (("go1-stairs", "-p", "rise=0.3"), "terrain: the ground under the robot at knot"),
        (("go1-trot", "--no-browser"), "--no-browser goes with --view"),
        (("go1-slope", "--sim", "own"), "'go1-slope' walks on a terrain; our KKT plant has flat ground only"),
    ],
)
def test_cli_refuses_bad_input_in_one_line(args, message):
    out = run_cli(*args, timeout=120)
    assert out.returncode == 2 and message in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_cli_never_overwrites_a_log(tmp_path):
    log = tmp_path / "log.csv"
    log.write_text("keep me")
    out = run_cli("go1-stand", "--log", str(log), timeout=120)
    assert out.returncode == 2 and "exists" in out.stderr and log.read_text() == "keep me"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["go1-stand", "go1-trot"])
def test_twenty_seconds_without_a_fall_in_real_time(name):
    """Acceptance: 20 s in MuJoCo's default contacts, compiled, plans delayed by their measured solve time."""
    task, result, stats = closed_loop(name, 20.0, compile=True, delay="measured")
    assert not stats.fell, stats
    assert stats.drift <= 0.1 and stats.worst_violation <= 1e-6


@pytest.mark.slow
def test_trot_exits_with_status_3_when_it_falls():
    out = run_cli("go1-trot", "--duration", "3", "--delay", "tick", "--push", "40,90,1", timeout=900)
    assert out.returncode == 3 and "fell at" in out.stdout
