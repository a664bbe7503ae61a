"""Any quadruped from its URDF (issue 17): feet, roles, standing pose, role-keyed gaits, trot and jump.

Oracles: pinocchio's own kinematics (``framesForwardKinematics``, joint
placements ``oMi``, ``getFrameVelocity``, ``rnea``) and the URDFs' effort
limits as pinocchio read them. The solves run the full-length trot (one
period, 31 knots) and jump (40 knots) of the registered templates on Solo12,
ANYmal B, HyQ and A1 from example-robot-data: each takes 1-6 s, so no
shortened horizon is needed.
"""
from __future__ import annotations

import shutil

import numpy as np
import pinocchio as pin
import pytest

import problems
from models import Go1, Go2, Humanoid, LeggedRobot
from models.leg_ik import LegGeometry, knee_direction, leg_points
from models.quadruped import LEG_ROLES, STANDING_REACH, NotAQuadrupedError, find_feet, installed_quadrupeds, leg_roles, order_feet
from models.robot_data import load_pinocchio_model, urdf_path
from trajopt import solve
from trajopt.cli import main
from trajopt.legged import ContactSchedule, LeggedProblem, gait
from trajopt.legged.scaling import REFERENCE_LEG_LENGTH, GaitScale

from .legged_checks import TOL, pinocchio_contact_check

#: Feet of the robots in role order (FL, FR, HL, HR) and their standing knee posture.
ROBOTS = {
    "go1": (("FL_foot", "FR_foot", "RL_foot", "RR_foot"), "backward"),
    "a1": (("FL_foot", "FR_foot", "RL_foot", "RR_foot"), "backward"),
    "solo12": (("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"), "backward"),
    "anymal": (("LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT"), "inward"),
    "anymal_c": (("LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT"), "inward"),
    "hyq": (("lf_foot", "rf_foot", "lh_foot", "rh_foot"), "inward"),
}
#: Knee direction along the base's x of each leg (FL, FR, HL, HR) per posture.
POSTURES = {"backward": (-1, -1, -1, -1), "inward": (-1, -1, 1, 1)}
SOLVED = ["solo12", "anymal", "hyq", "a1"]


def pinocchio_legs(robot, q_nominal):
    """Per leg (thigh-joint origin, knee = calf-joint origin, foot) in the world, from pinocchio's placements."""
    model, data = robot.pin_model, robot.pin_model.createData()
    pin.framesForwardKinematics(model, data, robot.change_order(q_nominal, "nominal", "pinocchio"))
    points = []
    for leg, foot in zip(robot.legs, robot.leg_ends):
        thigh, calf = (data.oMi[model.getJointId(name)].translation.copy() for name in leg.joint_names[1:])
        points.append((thigh, calf, data.oMf[model.getFrameId(foot)].translation.copy()))
    return np.array(points)


def knee_signs(points):
    """+1 where the knee lies ahead (x) of the line from the thigh joint to the foot, -1 behind."""
    signs = []
    for thigh, knee, foot in points:
        line, rel = foot - thigh, knee - thigh
        offset = rel - (rel @ line) / (line @ line) * line
        signs.append(int(np.sign(offset[0])))
    return tuple(signs)


# ----------------------------------------------------------- finding the legs
@pytest.mark.parametrize("name", sorted(ROBOTS))
def test_feet_found_in_role_order(name):
    model = load_pinocchio_model(urdf_path(name))
    feet = find_feet(model)
    assert feet == ROBOTS[name][0]
    data = model.createData()
    pin.framesForwardKinematics(model, data, pin.neutral(model))
    xy = np.array([data.oMf[model.getFrameId(f)].translation[:2] for f in feet])
    assert min(xy[:2, 0]) > max(xy[2:, 0])  # front ahead of hind
    assert xy[0, 1] > xy[1, 1] and xy[2, 1] > xy[3, 1]  # left of right
    shuffled = (feet[3], feet[0], feet[2], feet[1])
    assert order_feet(model, shuffled) == feet


def test_installed_quadrupeds():
    found = {name: quad for quad in installed_quadrupeds() for name in quad.names}
    assert set(ROBOTS) | {"go2", "b1", "laikago", "anymal_b"} <= set(found)
    assert found["anymal"].urdf == found["anymal_b"].urdf == urdf_path("anymal_b")
    assert not {"solo", "bolt", "ur5", "g1", "quadrotor", "panda"} & set(found)  # 2-joint legs, biped, arms, humanoid, drone


@pytest.mark.parametrize(
    "name, why",
    [
        ("bolt", "found 2 legs \\(FL_FOOT, FR_FOOT\\) of three revolute joints"),  # a biped
        ("ur5", "found no leg .* shoulder_pan_joint \\(6 joints, then ending\\)"),  # a manipulator
        ("g1", "found no leg"),  # a humanoid: 6-joint legs
        ("solo", "found no leg .* FL_HFE \\(2 joints, then ending\\)"),  # Solo8: 2-joint legs
    ],
)
def test_not_a_quadruped_says_why_in_one_line(name, why):
    with pytest.raises(NotAQuadrupedError, match=f"not a quadruped: {why}") as err:
        LeggedRobot.from_robot_data(name)
    assert "\n" not in str(err.value)
    with pytest.raises(NotAQuadrupedError, match="no floating base"):
        find_feet(load_pinocchio_model(urdf_path("go1"), floating=False))


def test_bad_feet_and_ambiguous_roles():
    model = load_pinocchio_model(urdf_path("solo12"))
    with pytest.raises(ValueError, match="feet: expected 4 distinct foot frames"):
        order_feet(model, ["FL_FOOT", "FL_FOOT", "HL_FOOT", "HR_FOOT"])
    with pytest.raises(ValueError, match="feet: no frame 'paw'"):
        LeggedRobot.from_robot_data("solo12", feet=["FL_FOOT", "FR_FOOT", "HL_FOOT", "paw"])
    leg = dict(hip_axis=[1, 0, 0], thigh_axis=[0, 1, 0], calf_axis=[0, 1, 0], hip_to_thigh=[0, 0, 0], thigh=[0, 0, -0.2], calf=[0, 0, -0.2])
    in_a_row = [LegGeometry(hip_pos=[0.0, y, 0.0], **leg) for y in (0.3, 0.1, -0.1, -0.3)]
    with pytest.raises(NotAQuadrupedError, match="cannot tell the front feet from the hind feet"):
        leg_roles(in_a_row)
    square = [LegGeometry(hip_pos=[x, y, 0.0], **leg) for x, y in ((-0.2, 0.1), (0.2, -0.1), (0.2, 0.1), (-0.2, -0.1))]
    assert leg_roles(square) == ("HL", "FR", "FL", "HR")


# ----------------------------------------------------------- standing pose
@pytest.mark.parametrize("name", sorted(ROBOTS))
def test_standing_pose_from_the_kinematics(name):
    robot = LeggedRobot.from_robot_data(name)
    feet, posture = ROBOTS[name]
    assert robot.leg_ends == tuple(robot.kinematics_bodies) == feet and robot.leg_roles == LEG_ROLES
    x = robot.init_state()
    assert np.all((x[7 : robot.nq] >= robot.joint_lower) & (x[7 : robot.nq] <= robot.joint_upper))
    points = pinocchio_legs(robot, x[: robot.nq])
    np.testing.assert_allclose(points[:, 2, 2], 0.0, atol=1e-12)  # feet on the ground
    under_hips = robot.leg_ends_under_hips(robot.standing_height) + x[:3]
    np.testing.assert_allclose(points[:, 2], under_hips, atol=1e-12)
    assert knee_signs(points) == POSTURES[posture]  # ANYmal and HyQ stand in their "X"
    assert robot.knee_posture() == posture
    for leg, (thigh, _, foot) in zip(robot.legs, points):  # thigh joint to foot, across the knee axis: the standing reach
        rel = foot - thigh
        in_plane = np.linalg.norm(rel - (rel @ leg.thigh_axis) * leg.thigh_axis)
        assert in_plane == pytest.approx(STANDING_REACH * robot.leg_length, rel=1e-9)


def test_which_rule_sets_the_knees():
    # ANYmal: wide limits, shanks bent at zero angles (feet 0.1 m ahead of the front knees): the zero pose decides.
    # HyQ: straight at zero angles, calf limits of one sign per leg: the limits decide. Solo12: neither, backward.
    zero_pose = {name: tuple(knee_direction(leg, np.zeros(3)) for leg in LeggedRobot.from_robot_data(name).legs) for name in ("anymal", "hyq", "solo12")}
    assert zero_pose == {"anymal": POSTURES["inward"], "hyq": (0, 0, 0, 0), "solo12": (0, 0, 0, 0)}
    hyq = LeggedRobot.from_robot_data("hyq")
    assert np.all(hyq.joint_upper[[2, 8]] < 0) and np.all(hyq.joint_lower[[5, 11]] > 0)  # lf, rf knees < 0; lh, rh > 0


def test_go1_from_robot_data_stands_exactly_as_the_go1_class():
    for cls, name in ((Go1, "go1"), (Go2, "go2")):
        assert np.array_equal(LeggedRobot.from_robot_data(name).init_state(), cls().init_state())


def test_knees_on_request():
    solo = LeggedRobot.from_robot_data("solo12", knees="inward")
    assert knee_signs(pinocchio_legs(solo, solo.init_state()[: solo.nq])) == POSTURES["inward"]
    assert solo.knee_posture() == "inward"
    per_leg = LeggedRobot.from_robot_data("anymal", knees=("forward", "backward", "forward", "backward"))
    assert knee_signs(pinocchio_legs(per_leg, per_leg.init_state()[: per_leg.nq])) == (1, -1, 1, -1)
    with pytest.raises(ValueError, match="knees: leg 'lh_foot' cannot stand with its knee backward within its joint limits"):
        LeggedRobot.from_robot_data("hyq", knees="backward").init_state()
    with pytest.raises(ValueError, match="knees: expected one of"):
        LeggedRobot.from_robot_data("hyq", knees="sideways")
    with pytest.raises(ValueError, match="knees: expected 'forward' or 'backward' for each of the 4"):
        LeggedRobot.from_robot_data("hyq", knees=("forward",))


@pytest.mark.parametrize("name", ["solo12", "anymal", "hyq"])
def test_leg_points_match_pinocchio(name):
    robot = LeggedRobot.from_robot_data(name)
    rng = np.random.default_rng(17)
    for _ in range(20):
        x = robot.init_state()
        x[7 : robot.nq] += rng.normal(scale=0.5, size=robot.nu)
        expected = pinocchio_legs(robot, x[: robot.nq]) - x[:3]
        for leg, rows, points in zip(robot.legs, robot._leg_rows, expected):
            np.testing.assert_allclose(leg_points(leg, x[7 + rows]), points, atol=1e-12)


def test_from_a_urdf_file_anywhere(tmp_path):
    path = tmp_path / "my-quadruped.urdf"
    shutil.copy(urdf_path("solo12"), path)
    robot = LeggedRobot.from_urdf(path, feet=["HR_FOOT", "FL_FOOT", "HL_FOOT", "FR_FOOT"], mu=0.5)
    assert robot.name == "my_quadruped" and robot.leg_ends == ROBOTS["solo12"][0] and robot.mu == 0.5
    reference = LeggedRobot.from_robot_data("solo12")
    assert np.array_equal(robot.init_state(), reference.init_state())
    np.testing.assert_array_equal(robot.torque_limits(), robot.pin_model.effortLimit[6:])
    with pytest.raises(FileNotFoundError):
        LeggedRobot.from_urdf(tmp_path / "missing.urdf")


# ----------------------------------------------------------- schedules by leg role
def test_role_schedules_follow_the_robots_feet():
    # ANYmal's feet in pinocchio's joint order LF, LH, RF, RH: the columns must follow the roles, not the positions
    model = load_pinocchio_model(urdf_path("anymal"))
    robot = LeggedRobot(model, ["LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT"], name="anymal")
    assert robot.leg_roles == ("FL", "HL", "FR", "HR")
    trot = gait("trot")
    bound = trot.for_robot(robot)
    assert bound.foot_names == tuple(robot.kinematics_bodies)
    for role, foot in zip(robot.leg_roles, robot.kinematics_bodies):
        assert np.array_equal(bound.stance[:, bound.foot_names.index(foot)], trot.stance[:, LEG_ROLES.index(role)])
    assert np.array_equal(bound.stance[:, 0], bound.stance[:, 3])  # LF and RH trot together
    by_frame = ContactSchedule(robot.kinematics_bodies, trot.stance, trot.dt)
    assert by_frame.for_robot(robot) is by_frame
    with pytest.raises(ValueError, match="keyed by leg roles .* the robot has no leg roles"):
        LeggedProblem(Humanoid(contacts_per_foot=1), ContactSchedule(("FL", "FR"), np.ones((5, 2), bool), 0.02))


@pytest.mark.parametrize("template", ["trot", "pace", "bound", "pronk", "jump"])
def test_every_template_builds_on_any_quadruped(template):
    problem = problems.get(template, robot="hyq", N=11) if template != "jump" else problems.get(template, robot="hyq", knots=[3, 3, 3])
    scale = problem.robot.leg_length / REFERENCE_LEG_LENGTH
    assert problem.schedule.foot_names == ROBOTS["hyq"][0] and problem.name == f"hyq-{template}"
    assert problem.swing_apex == pytest.approx({"trot": 0.08, "pace": 0.06, "bound": 0.06, "pronk": 0.05, "jump": 0.05}[template] * scale)


def test_gaits_scale_with_leg_length():
    assert GaitScale.of(Go1()).length == 1.0
    hyq = problems.get("trot", robot="hyq")
    s = 0.696 / 0.426  # HyQ thigh + calf 0.35 + 0.346 m
    assert hyq.displacement[0] == pytest.approx(0.15 * s) and hyq.swing_apex == pytest.approx(0.08 * s)
    assert hyq.schedule.duration == pytest.approx(0.6 * np.sqrt(s)) and hyq.schedule.N == 31
    jumping = problems.get("jump", robot="solo12", length=0.1)
    assert jumping.displacement[0] == 0.1 and jumping.schedule.dt == pytest.approx(0.02 * np.sqrt(0.32 / 0.426))
    with pytest.raises(ValueError, match="length: expected a positive scale factor"):
        GaitScale(0.0)
    with pytest.raises(ValueError, match="mass: expected a positive scale factor, got -1"):
        GaitScale(1.0, -1.0)
    assert GaitScale.of(Go1()).mass == pytest.approx(1.0, rel=1e-14) and GaitScale.of(Go1()).torque == pytest.approx(1.0, rel=1e-14)
    assert GaitScale.of(hyq.robot).torque == pytest.approx(hyq.robot.mass / Go1().mass * s, rel=1e-3)  # s from the URDF's 4 digits


def test_templates_on_go1_are_the_go1_problems():
    for template, go1 in (("trot", "go1-trot"), ("jump", "go1-jump")):
        a, b = problems.get(template), problems.get(go1)
        assert np.array_equal(a.x0, b.x0) and np.array_equal(a.schedule.stance, b.schedule.stance) and a.schedule.dt == b.schedule.dt
        assert np.array_equal(a.displacement, b.displacement) and a.swing_apex == b.swing_apex
        assert a.weights == b.weights and a.solver_options == b.solver_options
        for X, Y in zip(a.initial_guess(), b.initial_guess()):
            assert np.array_equal(X, Y)


def test_template_robot_arguments():
    with pytest.raises(ValueError, match="robot/urdf: give a robot name or a URDF file, not both"):
        problems.get("trot", robot="solo12", urdf="x.urdf")
    with pytest.raises(ValueError, match="unknown robot 'go3'; the quadrupeds of example-robot-data are .*solo12"):
        problems.get("trot", robot="go3")
    problem = problems.get("trot", urdf=str(urdf_path("solo12")), feet="HR_FOOT, FL_FOOT, HL_FOOT, FR_FOOT")
    assert problem.robot.leg_ends == ROBOTS["solo12"][0] and problem.recipe["params"]["feet"] == "HR_FOOT, FL_FOOT, HL_FOOT, FR_FOOT"


# ----------------------------------------------------------- trot and jump, checked with pinocchio
@pytest.fixture(scope="module", params=[(robot, gait_) for robot in SOLVED for gait_ in ("trot", "jump")], ids=lambda p: f"{p[0]}-{p[1]}")
def solved(request):
    robot, template = request.param
    problem = problems.get(template, robot=robot)
    return problem, solve(problem)


def test_trot_and_jump_hold_the_contact_plan(solved):
    problem, solution = solved
    assert solution.success, solution.status
    check = pinocchio_contact_check(problem, solution)
    assert check["slip"] < TOL and check["stance_height"] < TOL  # stance feet stay where they touched down, on the ground
    assert check["touchdown_speed"] < TOL
    assert check["swing_floor"] > -TOL and check["lift"] > problem.swing_apex - TOL  # feet lift in swing
    assert check["swing_force"] < TOL and check["min_fz"] > -TOL
    assert check["friction_margin"] > -TOL * max(1.0, problem.mass * 9.81)
    # LeggedProblem turns IPOPT's bound relaxation off (bound_relax_factor 0): the limits hold exactly
    assert check["torque_ratio"] <= 1 + 1e-12
    assert check["dynamics"] < 1e-8
    np.testing.assert_allclose(solution.states[-1, :3], problem.target_base_position, atol=1e-6)


# ----------------------------------------------------------- command line
def run(capsys, *argv):
    """``trajopt ARGV`` in-process: exit code, stdout, stderr."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exit_:
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_lists_the_installed_quadrupeds(capsys):
    code, out, err = run(capsys, "list", "--robots")
    assert code == 0 and err == ""
    rows = {line.split()[0].rstrip(","): line for line in out.splitlines()[1:-2]}
    assert {"a1", "anymal", "anymal_c", "go1", "go2", "hyq", "solo12"} <= set(rows) and not {"bolt", "solo", "ur5", "talos", "g1"} & set(rows)
    assert "LF_FOOT, RF_FOOT, LH_FOOT, RH_FOOT" in rows["anymal"] and "inward" in rows["anymal"]
    assert out.splitlines()[-2].startswith(f"{len(rows)} quadrupeds")
    assert out.splitlines()[-1].startswith("2 humanoids (g1, talos)")


@pytest.mark.parametrize("robot", ["solo12", "anymal", "hyq"])
def test_cli_solves_a_trot_on_the_robot(capsys, tmp_path, robot):
    code, out, err = run(capsys, "solve", "trot", "--robot", robot, "--plot", tmp_path / "trot.png", "--quiet")
    assert code == 0, err
    feet = ROBOTS[robot][0]
    assert f"feet      FL {feet[0]}, FR {feet[1]}, HL {feet[2]}, HR {feet[3]}" in out
    assert f"{robot}-trot: Solve_Succeeded" in out and (tmp_path / "trot.png").stat().st_size > 50_000


def test_cli_solves_from_a_urdf_and_the_saved_solution_rebuilds(capsys, tmp_path, monkeypatch):
    shutil.copy(urdf_path("solo12"), tmp_path / "robot.urdf")
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "solve", "jump", "--urdf", "robot.urdf", "--feet", "HR_FOOT,HL_FOOT,FR_FOOT,FL_FOOT", "--save", "jump.npz", "--quiet")
    assert code == 0, err
    assert "feet      FL FL_FOOT, FR FR_FOOT, HL HL_FOOT, HR HR_FOOT" in out
    monkeypatch.chdir(tmp_path.parent)
    solution = problems.load_solution(tmp_path / "jump.npz")  # the recipe holds the URDF's absolute path
    assert solution.problem.robot.urdf_path == str(tmp_path / "robot.urdf") and solution.problem_name == "robot-jump"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["trot", "--urdf", urdf_path("ur5")], "model 'ur5': not a quadruped: found no leg"),
        (["trot", "--robot", "bolt"], "model 'bolt': not a quadruped: found 2 legs"),
        (["go1-trot", "--robot", "solo12"], "problem 'go1-trot' takes no --robot"),
        (["trot", "--robot", "solo12", "--urdf", urdf_path("solo12")], "--robot/--urdf: give a robot name or a URDF file, not both"),
        (["trot", "--urdf", "missing.urdf"], "--urdf: no such file 'missing.urdf'"),
        (["trot", "--robot", "solo12", "--feet", "FL_FOOT,FR_FOOT"], "--feet: expected four comma-separated frame names"),
        (["trot", "--robot", "solo12", "--feet", "FL_FOOT,FR_FOOT,HL_FOOT,paw"], "feet: no frame 'paw'"),
    ],
)
def test_cli_robot_errors_are_one_line(capsys, argv, message):
    code, out, err = run(capsys, "solve", *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err


@pytest.mark.slow  # 15 solves, ~30 s: the other templates on every robot of the closing table
@pytest.mark.parametrize("template", ["pace", "bound", "pronk"])
@pytest.mark.parametrize("robot", ["go1"] + SOLVED)
def test_other_templates_solve_on_every_robot(robot, template):
    problem = problems.get(template, robot=robot)
    solution = solve(problem)
    assert solution.success, solution.status
    check = pinocchio_contact_check(problem, solution)
    assert check["slip"] < TOL and check["lift"] > problem.swing_apex - TOL and check["swing_force"] < TOL
    assert check["friction_margin"] > -TOL * max(1.0, problem.mass * 9.81) and check["torque_ratio"] <= 1 + 1e-12
