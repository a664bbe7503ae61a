"""trajopt.frame_targets: a frame's target as a constraint or a cost, against pinocchio's frame placements."""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from models.multibody_model import MultibodyModel
from models.robot_data import urdf_path
import problems
from trajopt import frame_target, frame_target_cost


@pytest.fixture(scope="module")
def arm():
    return MultibodyModel.from_urdf(urdf_path("panda"), floating=False, locked_joints=["panda_finger_joint1", "panda_finger_joint2"], name="panda")


def _placement(model, q, frame):
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    return data.oMf[model.getFrameId(frame)]


def test_position_and_rotation_rows_match_pinocchio(arm):
    rng = np.random.default_rng(7)
    q = rng.uniform(arm.joint_lower, arm.joint_upper)
    x = np.r_[q, rng.standard_normal(7)]
    target, R_target = np.array([0.4, -0.1, 0.5]), pin.exp3(np.array([0.3, -0.2, 1.0]))
    constraint = frame_target(arm, "panda_hand_tcp", target, rotation=R_target)
    rc = constraint.resolve(arm, 5)
    values = np.asarray(rc.function(x, np.zeros(7), np.zeros(0))).reshape(-1)
    oMf = _placement(arm.pin_model, q, "panda_hand_tcp")
    np.testing.assert_allclose(values[:3], oMf.translation - target, rtol=0, atol=1e-14)
    np.testing.assert_allclose(values[3:], pin.log3(R_target.T @ oMf.rotation), rtol=0, atol=1e-12)
    assert rc.stages.tolist() == [4] and (rc.lower == 0).all() and (rc.upper == 0).all()
    loose = frame_target(arm, "panda_hand_tcp", target, knot=[1, 2], tolerance=0.01).resolve(arm, 5)
    assert loose.stages.tolist() == [1, 2] and (loose.lower == -0.01).all() and (loose.upper == 0.01).all()


def test_costs_are_half_the_weighted_square_distance(arm):
    x = np.r_[0.5 * (arm.joint_lower + arm.joint_upper), np.zeros(7)]
    target = np.array([0.3, 0.3, 0.3])
    distance = np.sum((_placement(arm.pin_model, x[:7], "panda_link7").translation - target) ** 2)
    terminal = frame_target_cost(arm, "panda_link7", target, weight=4.0)
    running = frame_target_cost(arm, "panda_link7", target, weight=4.0, running=True)
    assert float(terminal.function(arm)(x, np.zeros(7), np.zeros(0))) == pytest.approx(2.0 * distance, rel=1e-13)
    assert float(running.function(arm)(x, np.zeros(7), np.zeros(0))) == pytest.approx(2.0 * distance, rel=1e-13)


def test_a_legged_model_and_bad_arguments(arm):
    """The Go1's contact model (state = the robot's) takes a foot target; unknown frames and bad targets raise."""
    trot = problems.get("go1-trot")
    foot = frame_target(trot.model, "FL_foot", [0.2, 0.15, 0.0], knot=0).resolve(trot.model, trot.N)
    assert foot.size == 3
    with pytest.raises(ValueError, match=r"\['panda_hand_tc'\] are not frames .*close: .*panda_hand_tcp"):
        frame_target(arm, "panda_hand_tc", [0, 0, 0])
    with pytest.raises(ValueError, match="position: expected a finite world position"):
        frame_target(arm, "panda_hand_tcp", [0, 0])
    with pytest.raises(ValueError, match="rotation: expected a 3x3 rotation matrix"):
        frame_target(arm, "panda_hand_tcp", [0, 0, 0], rotation=2 * np.eye(3))
    with pytest.raises(ValueError, match="model: expected a MultibodyModel"):
        frame_target(problems.get("quadrotor").model, "base", [0, 0, 0])
