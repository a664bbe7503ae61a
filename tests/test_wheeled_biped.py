"""models.wheeled_biped: sizes, standing state, analytic IK, joint limits, contact kinematics and forces.

Oracle: pinocchio's numeric kinematics and ABA (with the contact force given
as an external wrench on the wheel body, ``fext``) at random states.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from models.wheeled_biped import WheeledBiped
from tests.test_lie_fixtures import assert_close
from trajopt.sim import PinNumerics

FK_TOL = 1e-9


@pytest.fixture(scope="module")
def biped():
    return WheeledBiped()


def _random_state(biped, rng):
    """Random base pose and velocity, joints uniform in their limits (wheels in [-pi, pi])."""
    x = np.zeros(biped.nx)
    x[:3] = rng.standard_normal(3)
    quat = rng.standard_normal(4)
    x[3:7] = quat / np.linalg.norm(quat)
    lower = np.where(np.isfinite(biped.joint_lower), biped.joint_lower, -np.pi)
    upper = np.where(np.isfinite(biped.joint_upper), biped.joint_upper, np.pi)
    x[7 : biped.nq] = rng.uniform(lower, upper)
    x[biped.nq :] = rng.standard_normal(biped.nv)
    return x


def _wheel_frames(biped, num, q):
    """World center, axis, and the wheel joint's placement and LWA Jacobian (pinocchio)."""
    num.update_kinematics(q)
    out = []
    for wheel in biped.wheels:
        fid = num.frame_id(wheel)
        T = num.frame_placement(fid)
        out.append((T[:3, 3], T[:3, 1], T, num.frame_jacobian(fid, "LOCAL_WORLD_ALIGNED")))
    return out


def test_sizes_and_defaults(biped):
    assert (biped.nq, biped.nv, biped.nu, biped.nc) == (15, 14, 8, 2)
    assert biped.mu == 0.3 and biped.is_floating
    assert_close(biped.B_func(), np.vstack([np.zeros((6, 8)), np.eye(8)]), 0.0, "B")
    assert biped.joint_names == ("left_hip", "left_thigh", "left_knee", "left_wheel", "right_hip", "right_thigh", "right_knee", "right_wheel")
    assert np.isinf(biped.joint_lower[[3, 7]]).all() and np.isinf(biped.joint_upper[[3, 7]]).all()
    with pytest.raises(ValueError, match="mu"):
        WheeledBiped(mu=0.0)
    with pytest.raises(ValueError, match="kinematics: expected one of"):
        WheeledBiped(kinematics="feet")


def test_standing_state_touches_the_ground(biped):
    x = biped.init_state()
    contacts = biped.kinematics(x).reshape(2, 3)
    assert np.abs(contacts[:, 2]).max() < FK_TOL
    assert_close(contacts[:, :2], [[0.0, 0.22], [0.0, -0.22]], FK_TOL, "contact points under the hips")
    q_joints = x[7:15]
    assert np.all(q_joints >= biped.joint_lower) and np.all(q_joints <= biped.joint_upper)
    assert q_joints[2] < 0 and q_joints[6] < 0  # knees bend backward only


def test_contact_kinematics_match_pinocchio(biped):
    num = PinNumerics(biped)
    rng = np.random.default_rng(0)
    r = biped.dims.wheel_radius
    for _ in range(5):
        x = _random_state(biped, rng)
        points, rotations, J = biped.kinematics(x).reshape(2, 3), biped.kinematics_rotation(x).reshape(2, 3, 3), biped.kinematics_velocity_matrix(x)
        for i, (c, a, T, Jw) in enumerate(_wheel_frames(biped, num, x[:15])):
            u = np.array([0, 0, 1.0]) - a[2] * a
            u /= np.linalg.norm(u)
            p = c - r * u
            assert_close(points[i], p, FK_TOL, "contact point")
            assert_close(rotations[i], np.column_stack([np.cross(a, u), a, u]), FK_TOL, "contact frame")
            # velocity of the wheel's material point at p
            assert_close(J[3 * i : 3 * i + 3], Jw[:3] - pin.skew(p - c) @ Jw[3:], FK_TOL, "contact Jacobian")
            assert abs(np.linalg.norm(points[i] - c) - r) < FK_TOL and abs((points[i] - c) @ a) < FK_TOL  # on the rim, in the wheel plane


def test_rolling_without_slipping_has_zero_contact_velocity(biped):
    """Upright, the base moving forward at s while both wheels spin at -s/r: the contact points do not slide."""
    x = biped.init_state()
    s = 0.7
    x[15] = s  # base forward velocity (body frame = world, level base)
    x[15 + 6 + 3] = x[15 + 6 + 7] = s / biped.dims.wheel_radius  # about +y: the bottom of the wheel moves backward
    assert np.abs(biped.kinematics_velocity(x)).max() < 1e-12


def test_forward_dynamics_with_contact_forces_match_pinocchio(biped):
    num = PinNumerics(biped)
    rng = np.random.default_rng(1)
    for _ in range(3):
        x = _random_state(biped, rng)
        tau, f = rng.standard_normal(8), rng.standard_normal(6)
        points = biped.kinematics(x).reshape(2, 3)
        fext = [pin.Force.Zero() for _ in range(biped.pin_model.njoints)]
        for i, (c, a, T, Jw) in enumerate(_wheel_frames(biped, num, x[:15])):
            R = T[:3, :3]
            f_local = R.T @ f[3 * i : 3 * i + 3]
            fext[biped.pin_model.getJointId(biped.wheels[i])] = pin.Force(f_local, np.cross(R.T @ (points[i] - c), f_local))
        reference = pin.aba(biped.pin_model, biped.pin_model.createData(), num.to_pinocchio(x[:15]), x[15:], biped.B_func() @ tau, fext)
        assert_close(biped.forward_dynamics(x, tau, f), reference, 1e-9, "vdot with contact forces")
        assert_close(biped.inverse_dynamics(x, reference, f), biped.B_func() @ tau, 1e-9, "tau with contact forces")


def test_center_kinematics_are_the_wheel_center_frames():
    biped = WheeledBiped(kinematics="center")
    num = PinNumerics(biped)
    x = _random_state(biped, np.random.default_rng(2))
    num.update_kinematics(x[:15])
    centers = np.concatenate([num.frame_placement(num.frame_id(c))[:3, 3] for c in biped.wheel_centers])
    assert_close(biped.kinematics(x), centers, FK_TOL, "wheel centers")


def test_inverse_kinematics_recovers_sampled_legs(biped):
    num = PinNumerics(biped)
    rng = np.random.default_rng(3)
    for _ in range(10):
        x = _random_state(biped, rng)
        x[[8, 12]] = rng.uniform(-1.0, 1.0, 2)  # thighs: wheels below the hips, leg_ik's preferred hip branch
        num.update_kinematics(x[:15])
        centers = np.array([num.frame_placement(num.frame_id(c))[:3, 3] for c in biped.wheel_centers])
        sols = biped.inverse_kinematics(x, centers, targets="center")
        assert sols.shape == (8, 2) and not np.isnan(sols).any()
        assert_close(sols[[3, 7]], np.tile(x[[10, 14]], (2, 1)).T, 0.0, "wheel rows keep the wheel angles")
        for col in range(2):  # both solutions put the wheel centers back
            q = x[:15].copy()
            q[7:] = sols[:, col]
            num.update_kinematics(q)
            for c, target in zip(biped.wheel_centers, centers):
                assert np.linalg.norm(num.frame_placement(num.frame_id(c))[:3, 3] - target) < FK_TOL
        nearest = biped.nearest_ik(x, centers, targets="center")  # the knee limits admit the sampled solution only
        assert_close(nearest, x[7:15], 1e-9, "nearest_ik recovers the sampled joints")


def test_unreachable_wheel_gives_nan_and_nearest_ik_raises(biped):
    x = biped.init_state()
    far = np.array([[0.0, 0.22, -2.0], [0.0, -0.22, 0.08]])
    sols = biped.inverse_kinematics(x, far, targets="center")
    assert np.isnan(sols[:3]).all() and not np.isnan(sols[3:]).any()
    with pytest.raises(ValueError, match="leg 0"):
        biped.nearest_ik(x, far, targets="center")
    with pytest.raises(ValueError, match=r"leg_end_locs: expected shape \(2, 3\)"):
        biped.inverse_kinematics(x, np.zeros(5))


def test_fix_joint_limits_wraps_angles(biped):
    x = biped.init_state()
    shifted = x.copy()
    shifted[[8, 12]] += 2 * np.pi  # thighs
    shifted[[10, 14]] += 20.0  # wheels: unbounded, kept
    fixed = biped.fix_joint_limits(shifted)
    assert_close(fixed[[8, 12]], x[[8, 12]], 1e-12, "wrapped thighs")
    assert_close(fixed[[10, 14]], shifted[[10, 14]], 0.0, "wheels untouched")
    bad = x.copy()
    bad[9] = 0.5  # knee outside [-2.6, -0.05] for every 2 pi shift
    with pytest.raises(ValueError, match="left_knee"):
        biped.fix_joint_limits(bad)
    assert biped.fix_joint_limits(bad, suppress_error=True)[9] == -0.05
