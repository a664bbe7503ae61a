"""trajopt.mujoco.foreign: a MuJoCo model the user brings as the plant (a Menagerie-style Go1 written from the URDF with
other masses, joint friction, soft 2.3 cm feet and position servos), and the joint-level compensation of its friction."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import mujoco
import numpy as np
import pytest

import problems
from trajopt.mpc.joint_compensation import PassiveCompensation
from trajopt.mpc.loop import run_closed_loop
from trajopt.mpc.tasks import mpc_task
from trajopt.mujoco.foreign import ForeignPlant, write_menagerie_style

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def go1(tmp_path_factory):
    task = mpc_task(problems.get("go1-stand"))
    path = write_menagerie_style(task.problem.model.robot, tmp_path_factory.mktemp("mjcf") / "go1.xml")
    return task, path


def test_the_state_round_trips_and_the_robot_stands_on_its_own_feet(go1):
    """The state is the controller's convention; the robot starts lifted by the file's foot radius (2.3 cm) and its
    feet, nothing else, touch the floor."""
    task, path = go1
    plant = ForeignPlant(task.problem.model.robot, path, task.x0)
    x = plant.state()
    lifted = task.x0.copy()
    lifted[2] += 0.023
    np.testing.assert_allclose(x, lifted, rtol=0, atol=1e-12)
    plant.set_state(task.x0)
    np.testing.assert_allclose(plant.state(), task.x0, rtol=0, atol=1e-12)
    assert len(plant.foot_geoms) == 4 and not plant.fallen()
    lines = plant.differences()
    assert lines[0].startswith("plant go1.xml: total mass 12.741 kg against the controller's 13.101 kg (-0.360 kg)")
    assert "  damping: 1 .. 2 per joint; the controller's model has none" in lines
    assert "  12 position servos (kp 100, kv 0): turned into torque motors" in lines


@pytest.mark.parametrize("servos", ["motor", "feedforward"])
def test_the_plans_torques_reach_the_joints(go1, servos):
    """As torque motors, or through the servos with feed-forward, MuJoCo's actuator torques are the commanded ones."""
    task, path = go1
    robot = task.problem.model.robot
    plant = ForeignPlant(robot, path, task.x0, servos=servos)
    u = np.linspace(-5.0, 5.0, robot.nu)
    plant.step(u, np.zeros(3))
    applied = plant.data.qfrc_actuator[plant.dadr]
    np.testing.assert_allclose(applied, u, rtol=0, atol=1e-9)


def test_a_file_that_does_not_fit_is_refused_naming_the_joint(go1, tmp_path):
    task, path = go1
    robot = task.problem.model.robot
    with pytest.raises(ValueError, match="has no joint 'FL_knee' for the controller's joint 'FL_calf_joint'"):
        ForeignPlant(robot, path, task.x0, joint_map={"FL_calf_joint": "FL_knee"})
    renamed = tmp_path / "renamed.xml"
    renamed.write_text(path.read_text().replace('"FL_calf_joint"', '"FL_knee"'))
    plant = ForeignPlant(robot, renamed, task.x0, joint_map={"FL_calf_joint": "FL_knee"})  # mapped: it fits
    assert plant.state().shape == task.x0.shape
    with pytest.raises(ValueError, match="has no joint 'FL_calf_joint'"):
        ForeignPlant(robot, renamed, task.x0)
    with pytest.raises(FileNotFoundError, match="no such file"):
        ForeignPlant(robot, tmp_path / "none.xml", task.x0)
    text = path.read_text()  # a spare joint on the calf: the file models a robot the controller does not
    calf = text.index('<joint name="FL_calf_joint"')
    end = text.index("/>", calf) + 2
    spare = '<body name="spare" pos="0 0 -0.1"><inertial pos="0 0 0" mass="0.1" diaginertia="1e-4 1e-4 1e-4"/><joint name="spare_joint" axis="0 1 0"/></body>'
    extra = tmp_path / "extra.xml"
    extra.write_text(text[:end] + spare + text[end:])
    with pytest.raises(ValueError, match="has joints the controller does not model: spare_joint"):
        ForeignPlant(robot, extra, task.x0)


def test_compensation_is_the_files_passive_torque(go1):
    """At any joint velocity, the compensation cancels MuJoCo's damping and (outside its smoothing band) friction loss."""
    task, path = go1
    robot = task.problem.model.robot
    plant = ForeignPlant(robot, path, task.x0)
    passive = plant.passive()
    compensation = PassiveCompensation(robot, passive["damping"], passive["frictionloss"])
    x = task.x0.copy()
    qdot = np.linspace(-2.0, 2.0, robot.nu)
    x[robot.nq + 6 :] = qdot
    np.testing.assert_allclose(compensation(x), passive["damping"] * qdot + 0.2 * np.tanh(qdot / 0.01), rtol=1e-15)
    plant.set_state(x)
    mujoco.mj_forward(plant.model, plant.data)
    np.testing.assert_allclose(-plant.data.qfrc_damper[plant.dadr], passive["damping"] * qdot, rtol=1e-12)


def test_urdf_compensation_reads_its_dynamics():
    """The Go1 URDF's ``<dynamics damping="0.01" friction="0.2"/>`` on every joint, as pinocchio reads it."""
    import xml.etree.ElementTree as ET

    from models.robot_data import urdf_path

    robot = mpc_task(problems.get("go1-stand")).problem.model.robot
    compensation = PassiveCompensation.from_urdf(robot)
    joints = {j.get("name"): j.find("dynamics") for j in ET.parse(urdf_path("go1")).getroot().iter("joint") if j.get("type") == "revolute"}
    assert compensation.damping.tolist() == [float(joints[name].get("damping")) for name in robot.joint_names]
    assert compensation.frictionloss.tolist() == [float(joints[name].get("friction")) for name in robot.joint_names]


def test_the_controllers_robot_takes_the_files_armature(go1):
    """``with_armature``: the joint-space inertia gains the file's rotor inertias on its joint diagonal (pinocchio's CRBA
    of the copy), the original robot is unchanged, and the controller of a task built with it uses it."""
    import pinocchio as pin

    task, path = go1
    robot = task.problem.model.robot
    armature = ForeignPlant(robot, path, task.x0).passive()["armature"]
    loaded = robot.with_armature(armature)
    q = robot.change_order(task.x0[: robot.nq], "nominal", "pinocchio")
    M0 = pin.crba(robot.pin_model, robot.pin_model.createData(), q)
    M1 = pin.crba(loaded.pin_model, loaded.pin_model.createData(), q)
    np.testing.assert_allclose(np.triu(M1) - np.triu(M0), np.diag(np.r_[np.zeros(6), armature]), rtol=0, atol=1e-14)
    np.testing.assert_allclose(np.asarray(loaded.tree.crba(task.x0[: robot.nq])) - np.asarray(robot.tree.crba(task.x0[: robot.nq])), np.diag(np.r_[np.zeros(6), armature]), rtol=0, atol=1e-14)
    assert not robot.pin_model.armature.any()
    controlled = mpc_task(problems.get("go1-stand"), robot=loaded)
    plant_robot = controlled.plant(mjcf=str(path)).robot
    assert controlled.problem.model.robot is loaded and plant_robot is not loaded and not plant_robot.pin_model.armature.any()


def test_the_go1_stands_in_the_foreign_plant(go1):
    task, path = go1
    result = run_closed_loop(task.controller(mode="rti"), task.plant(mjcf=str(path)), 1.0, 50.0, delay="tick")
    assert not result.fell and abs(result.states[-1][2] - result.states[0][2]) < 0.03


def test_cli_prints_the_differences_and_refuses_misuse(go1):
    _, path = go1
    run = subprocess.run([sys.executable, "-m", "trajopt.cli", "mpc", "go1-stand", "--plant", str(path), "--compensate", "--duration", "0.5", "--delay", "tick"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "plant go1.xml: total mass 12.741 kg against the controller's 13.101 kg" in run.stdout and "no fall" in run.stdout
    for args, message in (
        (("--plant", str(path), "--payload", "2"), "mjcf: the file is the whole plant"),
        (("--model-armature",), "--joint-map, --servos, --model-armature: options of --plant FILE.xml"),
        (("--compensate", "--contact", "matched"), "--compensate: the joints' damping and friction are simulated by"),
        (("--plant", str(path), "--joint-map", "FL_calf_joint"), "--joint-map: expected OURS=THEIRS pairs"),
    ):
        refused = subprocess.run([sys.executable, "-m", "trajopt.cli", "mpc", "go1-stand", *args], capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert refused.returncode == 2 and message in refused.stderr and len(refused.stderr.strip().splitlines()) == 1, refused.stderr


def test_the_feet_sink_is_measured_and_reaches_the_horizon(go1, tmp_path):
    """Menagerie's Go1 feet (solimp 0.015 1 0.031) sink about 18 mm under the robot's weight, MuJoCo's default
    ones about 1 mm. The measured sink (joints locked, 1 s) agrees with the penetration MuJoCo reports under the
    stance feet while the controller holds the robot up, and the task's horizon takes it."""
    task, path = go1
    robot = task.problem.model.robot
    plant = task.plant(mjcf=str(path))
    assert 0.015 < plant.foot_sink < 0.021
    assert task.legged.foot_sink == plant.foot_sink
    result = run_closed_loop(task.controller(mode="rti"), plant, 1.0, 50.0, delay="tick")
    assert not result.fell
    m, d = plant.model, plant.data
    depths = [-d.contact[c].dist for c in range(d.ncon) if {d.contact[c].geom1, d.contact[c].geom2} & plant.foot_geoms]
    assert len(depths) == 4 and abs(np.mean(depths) - plant.foot_sink) < 0.002, (np.mean(depths), plant.foot_sink)
    stiff = ForeignPlant(robot, write_menagerie_style(robot, tmp_path / "stiff.xml", foot_solimp=(0.9, 0.95, 0.001, 0.5, 2.0)), task.x0)
    assert stiff.foot_sink < 0.003


def test_foot_sink_option_is_checked(go1):
    for args, message in (
        (("go1-trot", "--foot-sink", "-0.01"), "--foot-sink: expected a positive number or 0, got -0.01"),
        (("quadrotor-track", "--foot-sink", "0.01"), "--foot-sink: the swing feet of a legged robot's horizon; 'quadrotor-track' has none"),
    ):
        refused = subprocess.run([sys.executable, "-m", "trajopt.cli", "mpc", *args, "--duration", "0.1"], capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert refused.returncode == 2 and message in refused.stderr and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
