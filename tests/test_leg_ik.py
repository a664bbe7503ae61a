"""models.leg_ik and models.joint_limits, with pinocchio forward kinematics as the oracle.

Targets are feet placed by pinocchio (``framesForwardKinematics``) at random
joint angles inside the URDF limits; every returned solution must put the foot
back on its target to 1e-9 m. ``leg_ik`` returns the hip branch with the foot
on the "below the hip" side (the zero-pose side), so recovering the sampled
angles with ``nearest_ik`` is checked on the samples of that branch.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from models.joint_limits import LIMIT_TOL, fix_joint_limits, wrap_into_limits, wrap_to_pi
from models.leg_ik import (
    LegGeometry,
    leg_geometry_from_model,
    leg_ik,
    leg_limits,
    legs_from_feet,
    nearest_ik,
    quadruped_ik,
)
from models.robot_data import load_pinocchio_model, urdf_path

FK_TOL = 1e-9
UNITREE_FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")
OTHER_ROBOTS = {
    "a1": UNITREE_FEET,
    "b1": UNITREE_FEET,
    "laikago": UNITREE_FEET,
    "solo12": ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"),
    "anymal_b": ("LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT"),
    "anymal_c": ("LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT"),
    "hyq": ("lf_foot", "rf_foot", "lh_foot", "rh_foot"),
}


class Robot:
    """A pinocchio model, its legs and helpers to place joints and read feet."""

    def __init__(self, model: pin.Model, feet) -> None:
        self.model, self.data, self.feet = model, model.createData(), list(feet)
        self.legs = legs_from_feet(model, feet)
        self.q_idx = [[model.idx_qs[model.getJointId(n)] for n in leg.joint_names] for leg in self.legs]
        self.hip_ids = [model.getJointId(leg.joint_names[0]) for leg in self.legs]
        self.foot_ids = [model.getFrameId(f) for f in feet]

    def sample(self, rng, n, leg):
        """(n, 3) joint angles uniform inside the leg's limits ([-pi, pi] where unbounded)."""
        leg = self.legs[leg]
        lower = np.where(np.isinf(leg.lower), -np.pi, leg.lower)
        upper = np.where(np.isinf(leg.upper), np.pi, leg.upper)
        return rng.uniform(lower, upper, size=(n, 3))

    def configuration(self, angles_per_leg, base=(np.zeros(3), np.array([1.0, 0, 0, 0]))):
        q = pin.neutral(self.model)
        q[:3] = base[0]
        q[3:7] = np.r_[base[1][1:], base[1][0]]  # pinocchio stores [qx, qy, qz, qw]
        for idx, angles in zip(self.q_idx, angles_per_leg):
            q[idx] = angles
        return q

    def foot(self, leg, angles, base=(np.zeros(3), np.array([1.0, 0, 0, 0]))):
        """World position of one foot with that leg at ``angles`` (others at zero)."""
        per_leg = [np.zeros(3)] * len(self.legs)
        per_leg[leg] = angles
        pin.framesForwardKinematics(self.model, self.data, self.configuration(per_leg, base))
        return self.data.oMf[self.foot_ids[leg]].translation.copy()

    def below_hip(self, leg, angles):
        """Component of the foot along e2 = n x a in the rotated hip frame (the hip branch side)."""
        foot = self.foot(leg, angles)
        local = self.data.oMi[self.hip_ids[leg]].actInv(foot)
        g = self.legs[leg]
        return local @ np.cross(g.thigh_axis, g.hip_axis)


def _wheeled_leg_model() -> pin.Model:
    """A leg with rotated joint frames, offsets in every direction, a knee axis
    opposite to the thigh axis and a wheel whose centre is the foot point."""
    model = pin.Model()
    root = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "root")
    tilt = pin.rpy.rpyToMatrix(0.3, -0.2, 0.5)
    hip = model.addJoint(root, pin.JointModelRX(), pin.SE3(tilt, np.array([0.2, 0.15, 0.05])), "hip")
    thigh = model.addJoint(hip, pin.JointModelRY(), pin.SE3(np.eye(3), np.array([0.03, 0.08, -0.02])), "thigh")
    flip = pin.rpy.rpyToMatrix(0.0, 0.0, np.pi)  # calf axis (local y) becomes -thigh axis
    calf = model.addJoint(thigh, pin.JointModelRY(), pin.SE3(flip, np.array([0.01, 0.02, -0.2])), "calf")
    wheel = model.addJoint(calf, pin.JointModelRUBY(), pin.SE3(np.eye(3), np.array([0.0, 0.03, -0.22])), "wheel")
    for jid in (hip, thigh, calf, wheel):
        model.appendBodyToJoint(jid, pin.Inertia.FromSphere(0.5, 0.05), pin.SE3.Identity())
    model.addFrame(pin.Frame("wheel_center", wheel, pin.SE3.Identity(), pin.FrameType.OP_FRAME))
    return model


@pytest.fixture(scope="module", params=["go1", "go2"])
def unitree(request):
    return Robot(load_pinocchio_model(urdf_path(request.param)), UNITREE_FEET)


# ----------------------------------------------------------------- geometry
def test_go1_geometry():
    robot = Robot(load_pinocchio_model(urdf_path("go1")), UNITREE_FEET)
    fl, fr = robot.legs[0], robot.legs[1]
    np.testing.assert_allclose(fl.hip_pos, [0.1881, 0.04675, 0.0])
    np.testing.assert_allclose(fl.hip_axis, [1, 0, 0])
    np.testing.assert_allclose(fl.thigh_axis, [0, 1, 0])
    assert fl.lateral_offset == pytest.approx(0.08) and fr.lateral_offset == pytest.approx(-0.08)
    assert fl.thigh_length == pytest.approx(0.213) and fl.calf_length == pytest.approx(0.213)
    assert fl.joint_names == ("FL_hip_joint", "FL_thigh_joint", "FL_calf_joint")
    assert [leg.v_indices for leg in robot.legs] == [(6, 7, 8), (9, 10, 11), (12, 13, 14), (15, 16, 17)]
    np.testing.assert_allclose(fr.lower, [-0.863, -0.686, -2.818])
    np.testing.assert_allclose(fr.upper, [0.863, 4.501, -0.888])
    lower, upper = leg_limits(robot.legs)
    assert lower.shape == upper.shape == (12,)


def test_explicit_joints_match_inferred():
    model = load_pinocchio_model(urdf_path("go2"))
    explicit = leg_geometry_from_model(model, "RR_hip_joint", "RR_thigh_joint", "RR_calf_joint", "RR_foot")
    inferred = legs_from_feet(model, ["RR_foot"])[0]
    for name in ("hip_pos", "hip_axis", "thigh_axis", "calf_axis", "hip_to_thigh", "thigh", "calf", "lower", "upper"):
        np.testing.assert_array_equal(getattr(explicit, name), getattr(inferred, name))


def test_geometry_errors():
    model = load_pinocchio_model(urdf_path("go1"))
    with pytest.raises(ValueError, match="hip_joint: no joint 'FL_hip'"):
        leg_geometry_from_model(model, "FL_hip", "FL_thigh_joint", "FL_calf_joint", "FL_foot")
    with pytest.raises(ValueError, match="thigh_joint: joint 'FR_thigh_joint' is not a child of 'FL_hip_joint'"):
        leg_geometry_from_model(model, "FL_hip_joint", "FR_thigh_joint", "FL_calf_joint", "FL_foot")
    with pytest.raises(ValueError, match="foot_frame: 'FR_foot' is not attached below"):
        leg_geometry_from_model(model, "FL_hip_joint", "FL_thigh_joint", "FL_calf_joint", "FR_foot")
    with pytest.raises(ValueError, match="foot_frame: no frame"):
        leg_geometry_from_model(model, "FL_hip_joint", "FL_thigh_joint", "FL_calf_joint", "FL_toe")
    with pytest.raises(ValueError, match="foot_frames: fewer than three joints move 'trunk'"):
        legs_from_feet(model, ["trunk"])
    good = dict(hip_pos=np.zeros(3), hip_axis=[1, 0, 0], thigh_axis=[0, 1, 0], calf_axis=[0, 1, 0],
                hip_to_thigh=[0, 0.08, 0], thigh=[0, 0, -0.2], calf=[0, 0, -0.2])
    LegGeometry(**good)
    with pytest.raises(ValueError, match="thigh_axis: must be perpendicular"):
        LegGeometry(**{**good, "thigh_axis": [0.6, 0.8, 0]})
    with pytest.raises(ValueError, match="calf_axis: must be parallel"):
        LegGeometry(**{**good, "calf_axis": [0, 0, 1]})
    with pytest.raises(ValueError, match="hip_axis: expected a unit vector"):
        LegGeometry(**{**good, "hip_axis": [2, 0, 0]})
    with pytest.raises(ValueError, match="thigh: expected shape \\(3,\\)"):
        LegGeometry(**{**good, "thigh": [0, 0.2]})


def test_wheel_between_calf_and_foot_is_skipped_unless_it_moves_the_foot():
    model = _wheeled_leg_model()
    leg = legs_from_feet(model, ["wheel_center"])[0]
    assert leg.joint_names == ("hip", "thigh", "calf")
    np.testing.assert_allclose(leg.calf_axis, -leg.thigh_axis, atol=1e-15)
    rim = pin.SE3(np.eye(3), np.array([0, 0, -0.05]))
    model.addFrame(pin.Frame("rim", model.getJointId("wheel"), rim, pin.FrameType.OP_FRAME))
    with pytest.raises(ValueError, match="joint 'wheel' between calf_joint and 'rim' moves the foot"):
        leg_geometry_from_model(model, "hip", "thigh", "calf", "rim")


# ---------------------------------------------------------------- leg_ik
def _check_solutions_reach(robot, leg, targets, solutions):
    errors = [
        np.linalg.norm(robot.foot(leg, sol) - target)
        for target, pair in zip(targets, solutions)
        for sol in pair
    ]
    assert not np.isnan(solutions).any()
    assert max(errors) < FK_TOL


@pytest.mark.parametrize("leg", range(4))
def test_leg_ik_reaches_1000_random_targets(unitree, leg):
    rng = np.random.default_rng(10 + leg)
    angles = unitree.sample(rng, 1000, leg)
    targets = np.array([unitree.foot(leg, a) for a in angles])
    solutions = leg_ik(unitree.legs[leg], targets)  # batched: (1000, 2, 3)
    assert solutions.shape == (1000, 2, 3)
    _check_solutions_reach(unitree, leg, targets, solutions)
    np.testing.assert_array_equal(leg_ik(unitree.legs[leg], targets[7]), solutions[7])
    assert np.all(np.abs(solutions) <= np.pi)


@pytest.mark.parametrize("leg", range(4))
def test_nearest_ik_recovers_sampled_joints(unitree, leg):
    """Random base pose and joints; current joints = sampled + noise; nearest_ik returns the sample."""
    rng = np.random.default_rng(20 + leg)
    g = unitree.legs[leg]
    recovered = 0
    for angles in unitree.sample(rng, 1000, leg):
        if unitree.below_hip(leg, angles) < 1e-3:
            continue  # the other hip branch: leg_ik returns a different (valid) solution
        quat = rng.normal(size=4)
        base = (rng.normal(size=3), quat / np.linalg.norm(quat))
        target = unitree.foot(leg, angles, base)
        solutions = quadruped_ik([g], base[0], base[1], target)
        assert solutions.shape == (3, 2)
        current = np.clip(angles + rng.normal(scale=0.05, size=3), g.lower, g.upper)
        got = nearest_ik(current, solutions, limits=leg_limits([g]))
        np.testing.assert_allclose(got, angles, atol=1e-9)
        recovered += 1
    assert recovered > 300


def test_quadruped_ik_standing_poses_in_nominal_order(unitree):
    rng = np.random.default_rng(30)
    lower, upper = leg_limits(unitree.legs)
    for _ in range(50):
        stand = [rng.uniform([-0.5, 0.3, -2.2], [0.5, 1.3, -1.0]) for _ in unitree.legs]
        quat = np.r_[1.0, rng.normal(scale=0.2, size=3)]
        base = (np.r_[0.0, 0.0, 0.3] + rng.normal(scale=0.1, size=3), quat / np.linalg.norm(quat))
        pin.framesForwardKinematics(unitree.model, unitree.data, unitree.configuration(stand, base))
        feet = np.array([unitree.data.oMf[f].translation for f in unitree.foot_ids])
        solutions = quadruped_ik(unitree.legs, base[0], base[1], feet)
        assert solutions.shape == (12, 2)
        np.testing.assert_array_equal(quadruped_ik(unitree.legs, base[0], base[1], feet.reshape(-1)), solutions)
        got = nearest_ik(np.concatenate(stand) + 0.1, solutions, limits=(lower, upper))
        np.testing.assert_allclose(got, np.concatenate(stand), atol=1e-9)
        q = unitree.configuration(got.reshape(4, 3), base)
        q_nominal_order = q[7:]  # Go1/Go2: pinocchio's joint order is the nominal FL, FR, RL, RR
        np.testing.assert_array_equal(q_nominal_order, got)


@pytest.mark.parametrize("name", sorted(OTHER_ROBOTS) + ["wheeled"])
def test_other_leg_geometries(name):
    model = _wheeled_leg_model() if name == "wheeled" else load_pinocchio_model(urdf_path(name))
    robot = Robot(model, ["wheel_center"] if name == "wheeled" else OTHER_ROBOTS[name])
    rng = np.random.default_rng(40)
    for leg in range(len(robot.legs)):
        angles = robot.sample(rng, 100, leg)
        targets = np.array([robot.foot(leg, a) for a in angles])
        _check_solutions_reach(robot, leg, targets, leg_ik(robot.legs[leg], targets))


def test_unreachable_targets_give_nan(unitree):
    g = unitree.legs[0]
    reach = np.linalg.norm(g.hip_to_thigh) + g.thigh_length + g.calf_length
    far = g.hip_pos + np.array([0.3, 0.2, -1.0]) / np.linalg.norm([0.3, 0.2, -1.0]) * 1.01 * reach
    at_hip = g.hip_pos  # inside the cylinder of radius |lateral offset| about the hip axis
    ok = unitree.foot(0, np.array([0.1, 0.8, -1.5]))
    out = leg_ik(g, np.stack([far, at_hip, ok]))
    assert np.isnan(out[:2]).all() and not np.isnan(out[2]).any()
    solutions = quadruped_ik(unitree.legs[:1], np.zeros(3), np.array([1.0, 0, 0, 0]), far)
    assert np.isnan(solutions).all()
    with pytest.raises(ValueError, match="leg 0 .* unreachable target"):
        nearest_ik(np.zeros(3), solutions, limits=leg_limits(unitree.legs[:1]))


def test_fully_stretched_leg_is_reachable():
    g = LegGeometry(hip_pos=np.zeros(3), hip_axis=[1, 0, 0], thigh_axis=[0, 1, 0], calf_axis=[0, 1, 0],
                    hip_to_thigh=[0, 0.08, 0], thigh=[0, 0, -0.2], calf=[0, 0, -0.2])
    solutions = leg_ik(g, [0.0, 0.08, -0.4])
    np.testing.assert_allclose(solutions, np.zeros((2, 3)), atol=1e-7)


def test_ik_input_errors(unitree):
    with pytest.raises(ValueError, match="foot_pos_in_base: expected shape \\(3,\\) or \\(N, 3\\), got \\(4,\\)"):
        leg_ik(unitree.legs[0], np.zeros(4))
    feet = np.zeros((4, 3))
    with pytest.raises(ValueError, match="base_quat: expected a unit quaternion"):
        quadruped_ik(unitree.legs, np.zeros(3), np.array([2.0, 0, 0, 0]), feet)
    with pytest.raises(ValueError, match="foot_positions_world: expected shape \\(4, 3\\) or \\(12,\\), got \\(3, 4\\)"):
        quadruped_ik(unitree.legs, np.zeros(3), np.array([1.0, 0, 0, 0]), feet.reshape(3, 4))
    with pytest.raises(ValueError, match="base_pos: expected shape \\(3,\\)"):
        quadruped_ik(unitree.legs, np.zeros(2), np.array([1.0, 0, 0, 0]), feet)


# --------------------------------------------------------------- nearest_ik
def test_nearest_ik_without_limits_wraps_towards_current():
    solutions = np.array([[0.1, -3.0], [0.2, 3.0], [0.3, 3.1]])  # one leg, two solutions
    current = np.array([-2.9 + 2 * np.pi, 3.0, 3.2])
    got = nearest_ik(current, solutions, obey_limits=False)
    np.testing.assert_allclose(got, [-3.0 + 2 * np.pi, 3.0, 3.1])
    np.testing.assert_allclose(nearest_ik(np.zeros(3), solutions, obey_limits=False), [0.1, 0.2, 0.3])


def test_nearest_ik_limits_exclude_the_closer_solution():
    solutions = np.array([[0.1, 0.2], [0.2, 0.3], [0.3, -0.4]])
    limits = (np.array([-1.0, -1.0, -1.0]), np.array([1.0, 1.0, 0.0]))
    np.testing.assert_allclose(nearest_ik(np.array([0.1, 0.2, 0.3]), solutions, limits=limits), [0.2, 0.3, -0.4])
    with pytest.raises(ValueError, match="no solution within the joint limits"):
        nearest_ik(np.zeros(3), solutions, limits=(limits[0], np.full(3, -0.5)))


def test_nearest_ik_argument_errors():
    solutions = np.zeros((3, 2))
    with pytest.raises(ValueError, match="limits: required"):
        nearest_ik(np.zeros(3), solutions)
    with pytest.raises(ValueError, match="expected shapes \\(3 L,\\) and \\(3 L, 2\\)"):
        nearest_ik(np.zeros(3), np.zeros((6, 2)), obey_limits=False)
    with pytest.raises(ValueError, match="limits\\[1\\]: expected shape \\(3,\\)"):
        nearest_ik(np.zeros(3), solutions, limits=(np.zeros(3), np.zeros(2)))


# ---------------------------------------------------------- joint limits
def test_wrap_to_pi():
    angles = np.array([np.pi, -np.pi, 3 * np.pi, 7.0, -0.5])
    np.testing.assert_allclose(wrap_to_pi(angles), [np.pi, np.pi, np.pi, 7 - 2 * np.pi, -0.5])


def test_fix_joint_limits_cases():
    lower = np.array([-0.863, -0.686, -2.818, -np.inf])
    upper = np.array([0.863, 4.501, -0.888, np.inf])
    inside = np.array([0.5, 4.0, -1.5, 100.0])
    np.testing.assert_array_equal(fix_joint_limits(inside, lower, upper), inside)  # unchanged
    wrapped = fix_joint_limits(np.array([0.5 + 2 * np.pi, 4.0 - 2 * np.pi, -1.5 + 4 * np.pi, 100.0]), lower, upper)
    np.testing.assert_allclose(wrapped, inside, atol=1e-12)
    np.testing.assert_allclose(fix_joint_limits(np.array([0.0, 0.0, -2.818 - 1e-12, 0.0]), lower, upper)[2], -2.818)
    trajectory = np.stack([inside, inside + np.array([2 * np.pi, 0, 0, 0])])
    np.testing.assert_allclose(fix_joint_limits(trajectory, lower, upper), np.stack([inside, inside]), atol=1e-12)


def test_fix_joint_limits_errors_and_clamping():
    lower, upper = np.array([-0.5, -0.5]), np.array([0.5, 0.5])
    with pytest.raises(ValueError, match="q_joints: joint 'knee' = 3 cannot be wrapped by 2 pi into \\[-0.5, 0.5\\]"):
        fix_joint_limits(np.array([0.0, 3.0]), lower, upper, names=["hip", "knee"])
    with pytest.raises(ValueError, match="joint index 1"):
        fix_joint_limits(np.array([0.0, 3.0]), lower, upper)
    # 2.0 is 1.5 from +0.5 and 2*pi - 2.5 = 3.78 from -0.5; -2.9 is 2.4 from -0.5 but 2*pi - 3.4 = 2.88 from +0.5
    clamped = fix_joint_limits(np.array([2.0, -2.9]), lower, upper, suppress_error=True)
    np.testing.assert_array_equal(clamped, [0.5, -0.5])
    clamped = fix_joint_limits(np.array([2.0 + 2 * np.pi, -2.0 - 2 * np.pi]), lower, upper, suppress_error=True)
    np.testing.assert_array_equal(clamped, [0.5, -0.5])
    with pytest.raises(ValueError, match="lower: expected shape \\(2,\\)"):
        fix_joint_limits(np.zeros(2), np.zeros(3), upper)
    with pytest.raises(ValueError, match="lower > upper"):
        fix_joint_limits(np.zeros(2), upper, lower)
    with pytest.raises(ValueError, match="q_joints: contains NaN"):
        fix_joint_limits(np.array([np.nan, 0.0]), lower, upper)


def test_wrap_into_limits_reference_and_wide_ranges():
    # range wider than 2 pi: several representatives fit; default keeps the smallest shift
    assert wrap_into_limits(1.0, -10.0, 10.0) == 1.0
    np.testing.assert_allclose(wrap_into_limits(1.0, -10.0, 10.0, reference=7.0), 1.0 + 2 * np.pi)
    # the shift is capped by the limit
    np.testing.assert_allclose(wrap_into_limits(1.0, -10.0, 10.0, reference=100.0), 1.0 + 2 * np.pi)
    assert np.isnan(wrap_into_limits(3.0, -0.5, 0.5))
    assert wrap_into_limits(0.5 + LIMIT_TOL / 2, -0.5, 0.5) == 0.5


def _leg_fk(g: LegGeometry, angles) -> np.ndarray:
    """Foot in the base frame by composing the three joint rotations (independent of leg_ik)."""
    hip, thigh, calf = (pin.exp3(axis * angle) for axis, angle in zip((g.hip_axis, g.thigh_axis, g.calf_axis), angles))
    return g.hip_pos + hip @ (g.hip_to_thigh + thigh @ (g.thigh + calf @ g.calf))


def test_other_hip_branch_when_preferred_is_out_of_reach():
    """Thigh joint 0.1 above the hip: a foot 0.35 above the hip is out of reach with the
    foot-below branch (|w| = 0.45 > 0.4) but reachable with the flipped one (|w| = 0.25)."""
    g = LegGeometry(hip_pos=np.zeros(3), hip_axis=[1, 0, 0], thigh_axis=[0, 1, 0], calf_axis=[0, 1, 0],
                    hip_to_thigh=[0, 0.08, 0.1], thigh=[0, 0, -0.2], calf=[0, 0, -0.2])
    target = np.array([0.0, 0.08, 0.35])
    solutions = leg_ik(g, target)
    assert not np.isnan(solutions).any()
    for sol in solutions:
        np.testing.assert_allclose(_leg_fk(g, sol), target, atol=FK_TOL)
    below = np.array([0.05, 0.1, -0.2])
    for sol in leg_ik(g, below):  # the usual case keeps the foot-below branch: hip near zero
        np.testing.assert_allclose(_leg_fk(g, sol), below, atol=FK_TOL)
        assert abs(sol[0]) < 0.5
