"""models.locked_joints and MultibodyModel.from_urdf(locked_joints=...): the Panda with its fingers welded, against
pinocchio on the whole robot."""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from models.locked_joints import lock_joints, srdf_pose
from models.multibody_model import MultibodyModel
from models.robot_data import load_pinocchio_model, urdf_path

URDF = urdf_path("panda")
SRDF = URDF.parent.parent / "srdf" / "panda.srdf"
FINGERS = ["panda_finger_joint1", "panda_finger_joint2"]


@pytest.fixture(scope="module")
def arm():
    return MultibodyModel.from_urdf(URDF, floating=False, locked_joints=FINGERS, srdf=SRDF, pose="default", name="panda", kinematics_bodies=["panda_hand_tcp", "panda_leftfinger"])


def test_the_locked_arm_keeps_its_joints_mass_and_kinematics(arm):
    full = load_pinocchio_model(URDF, floating=False)
    assert arm.joint_names == tuple(f"panda_joint{i}" for i in range(1, 8)) and (arm.nq, arm.nv, arm.nu) == (7, 7, 7)
    assert arm.mass == pytest.approx(pin.computeTotalMass(full), rel=1e-14)
    assert arm.urdf_path is None and "mujoco" not in arm.orders
    rng = np.random.default_rng(3)
    q_full = srdf_pose(full, SRDF, "default")
    q_full[:7] = rng.uniform(full.lowerPositionLimit[:7], full.upperPositionLimit[:7])
    data = full.createData()
    pin.framesForwardKinematics(full, data, q_full)
    x = np.r_[q_full[:7], np.zeros(7)]
    expected = np.concatenate([data.oMf[full.getFrameId(f)].translation for f in ("panda_hand_tcp", "panda_leftfinger")])
    np.testing.assert_allclose(arm.kinematics(x), expected, rtol=0, atol=1e-14)
    assert q_full[7] == 0.001  # the SRDF's finger position, where the fingers were locked


def test_srdf_state_is_the_named_pose_at_rest(arm):
    x = arm.srdf_state(SRDF, "default")
    np.testing.assert_array_equal(x, [0, -0.785398, 0, -2.35619, 0, 1.5707, 0.785398] + [0.0] * 7)


def test_locking_at_given_positions_and_bad_requests():
    full = load_pinocchio_model(URDF, floating=False)
    reduced = lock_joints(full, {"panda_finger_joint1": 0.02, "panda_joint7": 0.5})
    assert reduced.nq == 7 and "panda_joint7" not in list(reduced.names)
    with pytest.raises(ValueError, match=r"'panda_joint8' is not a joint of the model .*panda_joint1"):
        lock_joints(full, ["panda_joint8"])
    with pytest.raises(ValueError, match=r"'panda_joint4' locked at 0.0 is outside its limits \[-3.0718, -0.0698\]"):
        lock_joints(full, {"panda_joint4": 0.0})
    with pytest.raises(ValueError, match="the string"):
        lock_joints(full, "panda_joint4")
    with pytest.raises(ValueError, match=r"has no pose 'home'; its poses: \['default'\]"):
        srdf_pose(full, SRDF, "home")
    with pytest.raises(FileNotFoundError, match="srdf"):
        srdf_pose(full, SRDF.with_name("none.srdf"), "default")
    with pytest.raises(ValueError, match="srdf, pose: give both"):
        MultibodyModel.from_urdf(URDF, floating=False, locked_joints=FINGERS, srdf=SRDF)
