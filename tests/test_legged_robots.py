"""Go1/Go2/G1 robot classes: standing states, IK in the model's joint order, limits, bad input."""
import numpy as np
import pinocchio as pin
import pytest

from lie import axis_angle_to_quat
from models import Go1, Go2, Humanoid

RNG = np.random.default_rng(3)


@pytest.fixture(scope="module", params=[Go1, Go2], ids=["go1", "go2"])
def robot(request):
    return request.param()


def pinocchio_feet(robot, q):
    """Foot positions from pinocchio's own forward kinematics (oracle)."""
    data = robot.pin_model.createData()
    pin.framesForwardKinematics(robot.pin_model, data, robot.change_order(q, "nominal", "pinocchio"))
    return np.array([data.oMf[robot.pin_model.getFrameId(f)].translation.copy() for f in robot.leg_ends])


def test_init_state_stands_with_feet_under_hips(robot):
    x = robot.init_state()
    feet = pinocchio_feet(robot, x[: robot.nq])
    assert np.max(np.abs(feet[:, 2])) < 1e-12  # on the ground
    hips = np.array([leg.hip_pos for leg in robot.legs])
    assert np.max(np.abs(feet[:, 0] - hips[:, 0])) < 1e-12  # under the hips (x)
    assert np.all((x[7:19] >= robot.joint_lower) & (x[7:19] <= robot.joint_upper))
    assert np.all(x[robot.nq :] == 0) and x[3] == 1.0


def test_inverse_kinematics_rows_follow_nominal_joint_order(robot):
    for _ in range(50):
        q = robot.init_state()[: robot.nq]
        q[:3] += RNG.normal(scale=0.05, size=3)
        q[3:7] = axis_angle_to_quat(RNG.normal(scale=0.2, size=3))
        q[7:] += RNG.normal(scale=0.2, size=12)
        feet = pinocchio_feet(robot, q)
        sols = robot.inverse_kinematics(q, feet)
        for j in range(2):
            qj = q.copy()
            qj[7:] = sols[:, j]
            assert np.max(np.abs(pinocchio_feet(robot, qj) - feet)) < 1e-9
        q_near = robot.nearest_ik(q, feet)
        assert np.max(np.abs(q_near - q[7:])) < 1e-9


def test_unreachable_feet_give_nan_and_nearest_ik_raises(robot):
    q = robot.init_state()[: robot.nq]
    feet = pinocchio_feet(robot, q)
    feet[0, 2] = -5.0  # 5 m below the base
    sols = robot.inverse_kinematics(q, feet)
    assert np.isnan(sols[0:3]).all() and not np.isnan(sols[3:]).any()
    with pytest.raises(ValueError, match="unreachable"):
        robot.nearest_ik(q, feet)


def test_fix_joint_limits_wraps_and_clamps(robot):
    x = robot.init_state()
    wrapped = x.copy()
    wrapped[8] += 2 * np.pi  # a thigh angle off by a full turn
    assert np.allclose(robot.fix_joint_limits(wrapped), x, atol=1e-12)
    bad = x.copy()
    bad[7] = 2.0  # hip abduction beyond its limit, no 2 pi representative fits
    with pytest.raises(ValueError):
        robot.fix_joint_limits(bad)
    clamped = robot.fix_joint_limits(bad, suppress_error=True)
    assert np.isclose(clamped[7], robot.joint_upper[0])


def test_limits_come_from_the_urdf(robot):
    lim = robot.torque_limits()
    assert lim.shape == (12,) and np.all(lim > 20) and np.all(np.isfinite(lim))
    lo, hi = robot.control_bounds()
    assert np.array_equal(hi, lim) and np.array_equal(lo, -lim)
    assert robot.mu == 0.3


def test_bad_input(robot):
    with pytest.raises(ValueError, match="configuration"):
        robot.inverse_kinematics(np.zeros(5), np.zeros(12))
    with pytest.raises(ValueError, match="leg_end_locs"):
        robot.inverse_kinematics(robot.init_state(), np.zeros(7))
    with pytest.raises(ValueError, match="mu"):
        type(robot)(mu=-1.0)


@pytest.mark.parametrize("n", [1, 4])
def test_humanoid_contacts_on_the_ground(n):
    h = Humanoid(contacts_per_foot=n)
    x = h.init_state()
    assert h.nc == 2 * n and h.nu == 29
    feet = h.kinematics(x).reshape(-1, 3)
    assert np.max(np.abs(feet[:, 2])) < 1e-12
    assert np.all(feet[: n, 1] > 0) and np.all(feet[n:, 1] < 0)  # left foot first


def test_humanoid_bad_contacts():
    with pytest.raises(ValueError, match="contacts_per_foot"):
        Humanoid(contacts_per_foot=2)


@pytest.mark.parametrize("ori", ["quaternion", "axis_angle"])
def test_humanoid_foot_orientation_in_kinematics(ori):
    h = Humanoid(contacts_per_foot=1, kinematics_ori=ori)
    x = h.randn_state(RNG)
    k = h.kinematics(x)
    per_foot = 7 if ori == "quaternion" else 6
    assert k.shape == (2 * per_foot,)
    data = h.pin_model.createData()
    pin.framesForwardKinematics(h.pin_model, data, h.change_order(x[: h.nq], "nominal", "pinocchio"))
    for i, body in enumerate(h.kinematics_bodies):
        placement = data.oMf[h.pin_model.getFrameId(body)]
        block = k[per_foot * i : per_foot * (i + 1)]
        assert np.allclose(block[:3], placement.translation, atol=1e-12)
        if ori == "quaternion":
            R = pin.Quaternion(block[3], *block[4:7]).toRotationMatrix()
        else:
            R = pin.exp3(block[3:6])
        assert np.allclose(R, placement.rotation, atol=1e-12)
    assert h.kinematics_jacobian(x, wrt="q").shape == (2 * per_foot, h.nq)
    assert h.kinematics_velocity(x).shape == (6,)  # contact points stay 3D
    with pytest.raises(ValueError, match="contacts_per_foot=1"):
        Humanoid(contacts_per_foot=4, kinematics_ori=ori)
