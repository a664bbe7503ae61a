"""Attitude conversions (MRP, Rodrigues/Cayley, ZYX Euler, matrices) and their kinematics."""
from __future__ import annotations

import casadi as ca
import numpy as np
import pinocchio as pin
import pytest
from scipy.spatial.transform import Rotation

import lie
from tests.test_lie_fixtures import FD_STEP, FD_TOL, assert_close, central_diff, quats, rng, rotvecs, unit_vectors

Q = quats(rng(30))


def assert_same_quat(a: np.ndarray, b: np.ndarray, tol: float, what: str) -> None:
    """Equal up to the quaternion sign."""
    assert_close(a * np.sign(np.dot(a, b) or 1.0), b, tol, what)


# ---------------------------------------------------------------- quaternion conventions
def test_quat_to_rot_matches_scipy_and_pinocchio() -> None:
    for q in Q:
        R = lie.quat_to_rot(q)
        assert_close(R, Rotation.from_quat(np.r_[q[1:], q[0]]).as_matrix(), 1e-14, "scipy")
        assert_close(R, pin.Quaternion(*q).matrix(), 1e-14, "pinocchio")


def test_rot_to_quat_is_robust_near_half_turns() -> None:
    axes = np.vstack([np.eye(3), -np.eye(3), unit_vectors(rng(31), 50)])
    for axis in axes:
        for delta in (0.0, 1e-15, 1e-12, 1e-8, 1e-4):
            q_true = lie.axis_angle_to_quat((np.pi - delta) * axis)
            q = lie.rot_to_quat(lie.quat_to_rot(q_true))
            assert q[0] >= 0
            assert_same_quat(q, q_true, 1e-15, f"axis {axis}, pi - {delta}")
            assert_close(np.linalg.norm(q), 1.0, 1e-15, "norm")


def test_rot_to_quat_round_trip() -> None:
    for q in Q:
        assert_same_quat(lie.rot_to_quat(lie.quat_to_rot(q)), q, 1e-15, "rot_to_quat")


# ---------------------------------------------------------------- MRP
def test_mrp_round_trips_and_shadow_sets() -> None:
    for q in Q:
        p = lie.quat_to_mrp(q)
        assert np.linalg.norm(p) <= 1 + 1e-15
        assert_close(lie.quat_to_mrp(-q), p, 1e-15, "q and -q give the canonical set")
        assert_same_quat(lie.mrp_to_quat(p), q, 1e-15, "mrp_to_quat(quat_to_mrp(q))")
        assert_close(lie.quat_to_mrp(lie.mrp_to_quat(p)), p, 1e-14, "quat_to_mrp(mrp_to_quat(p))")
        angle = np.linalg.norm(lie.quat_to_axis_angle(q))
        assert_close(np.linalg.norm(p), np.tan(angle / 4), 1e-15, "|p| = tan(th/4)")
        assert_close(lie.mrp_to_rot(p), lie.quat_to_rot(q), 1e-14, "mrp_to_rot")
        if -np.cos(0.5) < q[0] < 0:  # a turn over 1 rad: |shadow| < 4
            shadow = lie.quat_to_mrp(q, canonical=False)
            assert_close(shadow, -p / np.dot(p, p), 1e-15, "shadow")
            assert_close(lie.mrp_to_quat(shadow), q, 1e-15, "shadow keeps the quaternion sign")


def test_mrp_closed_form_rotation() -> None:
    for p in [lie.quat_to_mrp(q) for q in Q]:
        s, K = p @ p, lie.skew(p)
        R = np.eye(3) + (8 * K @ K + 4 * (1 - s) * K) / (1 + s) ** 2
        assert_close(lie.mrp_to_rot(p), R, 1e-14, "R(p)")


# ---------------------------------------------------------------- Rodrigues / Cayley
def test_rodrigues_round_trips() -> None:
    for q in Q:
        g = lie.quat_to_rodrigues(q)
        assert_close(lie.quat_to_rodrigues(-q), g, 1e-15, "sign-free")
        assert_same_quat(lie.rodrigues_to_quat(g), q, 1e-15, "rodrigues_to_quat")
        assert_close(lie.quat_to_rodrigues(lie.rodrigues_to_quat(g)), g, 1e-14, "round trip")
        angle = np.linalg.norm(lie.quat_to_axis_angle(q))
        assert_close(np.linalg.norm(g), np.tan(angle / 2), 1e-13, "|g| = tan(th/2)")  # tan near pi/2: cond ~1e3
        assert_close(lie.rodrigues_to_rot(g), lie.quat_to_rot(q), 1e-14, "rodrigues_to_rot")


def test_cayley_is_the_gibbs_map_and_half_the_axis_angle() -> None:
    for phi in rotvecs(rng(32), max_angle=0.1):
        g = lie.quat_to_cayley(lie.axis_angle_to_quat(phi))
        assert_close(lie.cayley_to_quat(g), np.r_[1.0, g] / np.sqrt(1 + g @ g), 1e-15, "cayley_to_quat")
        assert_close(g, lie.quat_to_rodrigues(lie.axis_angle_to_quat(phi)), 0.0, "same as Gibbs")
        assert_close(2 * g, phi, np.linalg.norm(phi) ** 3, "g = phi/2 + O(th^3)")


# ---------------------------------------------------------------- kinematics
@pytest.mark.parametrize(
    "to_param, K, K_inv",
    [
        (lambda q: lie.quat_to_mrp(q, canonical=False), lie.mrp_kinematics_matrix, lie.mrp_kinematics_matrix_inv),
        (lie.quat_to_rodrigues, lie.rodrigues_kinematics_matrix, lie.rodrigues_kinematics_matrix_inv),
    ],
    ids=["mrp", "rodrigues"],
)
def test_kinematics_matrices_match_finite_differences(to_param, K, K_inv) -> None:
    """``pdot`` along ``q(t) = q exp(w t)`` (body rate ``w``) equals ``K(p) w``.

    Quaternions with ``qw < 0`` are kept only for turns over 1 rad, so MRP shadow
    sets are covered without coming near their 2 pi singularity.
    """
    gen = rng(33)
    for q in Q:
        if abs(q[0]) > np.cos(0.5):
            q = q * np.sign(q[0])
        w = gen.normal(size=3)
        pdot = central_diff(lambda t: to_param(lie.quat_mult(q, lie.axis_angle_to_quat(t[0] * w))), np.zeros(1), FD_STEP)[:, 0]
        p = to_param(q)
        assert_close(K(p) @ w, pdot, FD_TOL, "pdot")
        assert_close(K_inv(p) @ K(p), np.eye(3), 1e-13, "K^-1 K")  # Rodrigues near pi: |K| ~ 1e6


# ---------------------------------------------------------------- ZYX Euler angles
def euler_angles(n: int = 200) -> np.ndarray:
    gen = rng(34)
    return np.column_stack([gen.uniform(-np.pi, np.pi, n), gen.uniform(-np.pi / 2 + 1e-3, np.pi / 2 - 1e-3, n), gen.uniform(-np.pi, np.pi, n)])


def test_euler_to_rot_matches_scipy_intrinsic_zyx() -> None:
    for e in euler_angles():
        assert_close(lie.euler_zyx_to_rot(e), Rotation.from_euler("ZYX", e).as_matrix(), 1e-14, f"R({e})")


def test_euler_round_trips() -> None:
    for e in euler_angles():
        R = lie.euler_zyx_to_rot(e)
        assert_close(lie.rot_to_euler_zyx(R), e, 1e-14, "rot_to_euler_zyx")
        q = lie.euler_zyx_to_quat(e)
        assert_close(lie.quat_to_rot(q), R, 1e-14, "euler_zyx_to_quat")
        assert_close(lie.quat_to_euler_zyx(q), e, 1e-13, "quat_to_euler_zyx")  # R from q: pitch near +-pi/2 has cond ~1e2


def test_euler_at_gimbal_lock_reproduces_the_rotation() -> None:
    for pitch in (np.pi / 2, -np.pi / 2):
        for yaw, roll in [(0.3, -1.1), (-2.0, 3.0), (0.0, 0.0)]:
            for dp in (0.0, 1e-12, -1e-9):
                R = lie.euler_zyx_to_rot([yaw, pitch + dp, roll])
                e = lie.rot_to_euler_zyx(R)
                assert abs(abs(e[1]) - (np.pi / 2 - abs(dp))) < 2e-15  # past +-pi/2: the mirrored pitch
                assert_close(lie.euler_zyx_to_rot(e), R, 1e-15, "R at gimbal lock")
        exact = np.array([[0.0, 0.0, np.sign(pitch)], [0.0, 1.0, 0.0], [-np.sign(pitch), 0.0, 0.0]])
        assert_close(lie.rot_to_euler_zyx(exact), [0.0, pitch, 0.0], 1e-15, "exact Ry(+-pi/2)")
        with pytest.raises(ValueError, match="pitch"):
            lie.euler_zyx_rate_matrix(np.array([0.0, pitch, 0.0]))


def test_euler_rate_matrices_match_finite_differences() -> None:
    """Body rate ``w = vee(R^T Rdot)`` along ``e(t) = e + t edot`` equals ``E^-1 edot``, and ``edot = E w``."""
    gen = rng(35)
    for e in euler_angles():
        edot = gen.normal(size=3)
        Rdot = central_diff(lambda t: lie.euler_zyx_to_rot(e + t[0] * edot).reshape(-1), np.zeros(1), FD_STEP)[:, 0].reshape(3, 3)
        W = lie.euler_zyx_to_rot(e).T @ Rdot
        w = np.array([W[2, 1], W[0, 2], W[1, 0]])
        assert_close(lie.euler_zyx_rate_matrix_inv(e) @ edot, w, FD_TOL, "E^-1 edot")
        assert_close(lie.euler_zyx_rate_matrix(e) @ w, edot, FD_TOL, "E w")
        assert_close(lie.euler_zyx_rate_matrix(e) @ lie.euler_zyx_rate_matrix_inv(e), np.eye(3), 1e-13, "E E^-1")


# ---------------------------------------------------------------- unit-norm checks
@pytest.mark.parametrize("fn", [lie.quat_to_mrp, lie.quat_to_euler_zyx, lie.MRP.from_quat])
def test_numeric_conversions_needing_unit_quaternions_check_them(fn) -> None:
    q = Q[0]
    fn(q * (1 + 5e-7))  # within the 1e-6 tolerance
    with pytest.raises(ValueError, match="q: expected a unit quaternion"):
        fn(q * (1 + 2e-6))
    fn(2 * ca.SX.sym("q", 4))  # symbolic input is never checked
