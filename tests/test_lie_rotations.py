"""Attitude parameterization classes: conversions, error maps and their Jacobians.

Every Jacobian of every parameterization is checked at 200 points (angles from
1e-9 to pi - 1e-3, MRP shadow sets included) against CasADi's derivative of
the same map and against central differences of the numeric map.
"""
from __future__ import annotations

import numpy as np
import pytest

import lie
from lie import MRP, ROTATIONS, RodriguesParam, UnitQuaternion
from tests.test_lie_fixtures import (
    FD_TOL,
    assert_close,
    casadi_function,
    central_diff,
    evaluate,
    params,
    rng,
    rotvecs,
)

POINTS = {R: params(R, rng(40 + i)) for i, R in enumerate(ROTATIONS)}
STEPS = rotvecs(rng(50))
rotations = pytest.mark.parametrize("R", ROTATIONS, ids=[R.name for R in ROTATIONS])


def assert_same_rotation(R: type, a: np.ndarray, b: np.ndarray, tol: float, what: str) -> None:
    """Parameters of the same rotation (quaternions up to sign, MRPs up to the shadow set)."""
    qa, qb = R.to_quat(a), R.to_quat(b)
    assert_close(qa * np.sign(qa @ qb), qb, tol, what)


@rotations
def test_identity_and_conversions(R: type) -> None:
    assert_close(R.to_quat(R.identity()), [1.0, 0.0, 0.0, 0.0], 0.0, "identity")
    assert R.size == len(R.identity()) and R.name == R.__name__
    for p in POINTS[R]:
        q = R.to_quat(p)
        assert_close(np.linalg.norm(q), 1.0, 1e-15, "unit")
        assert_same_rotation(R, R.from_quat(q), p, 1e-15, "from_quat(to_quat(p))")
        assert_close(R.to_rot(p), lie.quat_to_rot(q), 1e-14, "to_rot")


@rotations
def test_error_jacobian_matches_casadi(R: type) -> None:
    F = casadi_function(R.compose, [R.size, 3], jacobian_of=1)
    for p in POINTS[R]:
        assert_close(R.error_jacobian(p), evaluate(F, p, np.zeros(3)), 1e-14, f"casadi E {R.name} at {p}")


@rotations
def test_error_jacobian_matches_finite_differences(R: type) -> None:
    for p in POINTS[R]:
        fd = central_diff(lambda d: R.compose(p, d), np.zeros(3))
        assert_close(R.error_jacobian(p), fd, FD_TOL, f"fd E {R.name} at {p}")


@rotations
def test_error_jacobian_T_matches_casadi(R: type) -> None:
    F = casadi_function(R.error, [R.size, R.size], jacobian_of=0)
    for p in POINTS[R]:
        assert_close(R.error_jacobian_T(p), evaluate(F, p, p), 1e-14, f"casadi E_T {R.name} at {p}")


@rotations
def test_error_jacobian_T_matches_finite_differences(R: type) -> None:
    for p in POINTS[R]:
        fd = central_diff(lambda y: R.error(y, p), p)
        assert_close(R.error_jacobian_T(p), fd, FD_TOL, f"fd E_T {R.name} at {p}")


@rotations
def test_error_jacobians_are_left_inverses(R: type) -> None:
    for p in POINTS[R]:
        assert_close(R.error_jacobian_T(p) @ R.error_jacobian(p), np.eye(3), 1e-12, "E_T E")  # Rodrigues near pi: |E| ~ 1e6, |E_T| ~ 1e-3
        assert_close(R.error_jacobian(p), R.kinematics_matrix(p), 0.0, "E = K")


@rotations
def test_compose_and_error_are_inverse(R: type) -> None:
    for p0, dphi in zip(POINTS[R], STEPS):
        p = R.compose(p0, dphi)
        assert_close(R.error(p, p0), dphi, 1e-14, "error(compose(p0, dphi), p0)")
        assert_same_rotation(R, R.compose(p0, R.error(p, p0)), p, 1e-14, "compose(p0, error(p, p0))")
        assert_close(R.compose(p0, np.zeros(3)), p0, 1e-15, "compose(p0, 0)")


@rotations
def test_error_is_the_full_angle_in_the_body_frame(R: type) -> None:
    for p0, dphi in zip(POINTS[R], STEPS):
        q = lie.quat_mult(R.to_quat(p0), lie.axis_angle_to_quat(dphi))
        assert_close(R.error(R.from_quat(q), p0), dphi, 1e-14, "body-frame axis-angle")
        small = dphi * 1e-3
        cayley = lie.quat_to_cayley(lie.quat_mult(lie.quat_conj(R.to_quat(p0)), R.to_quat(R.compose(p0, small))))
        assert_close(R.error(R.compose(p0, small), p0), 2 * cayley, (small @ small) ** 1.5 / 6 + 1e-15, "2x Cayley")  # 2 tan(th/2) - th ~ th^3/12


def test_mrp_compose_keeps_the_set_of_p0() -> None:
    for p0, dphi in zip(POINTS[MRP], STEPS):
        p, canonical = MRP.compose(p0, dphi), MRP.from_quat(lie.quat_mult(MRP.to_quat(p0), lie.axis_angle_to_quat(dphi)))
        expected = canonical if lie.quat_mult(MRP.to_quat(p0), lie.axis_angle_to_quat(dphi))[0] >= 0 else -canonical / (canonical @ canonical)
        assert_close(p, expected, 1e-14, "compose = from_quat or its shadow")


def test_quaternion_jacobians_are_attitude_jacobians() -> None:
    for q in POINTS[UnitQuaternion]:
        G = lie.attitude_jacobian(q)
        assert_close(UnitQuaternion.error_jacobian(q), 0.5 * G, 0.0, "0.5 G")
        assert_close(UnitQuaternion.error_jacobian_T(q), 2 * G.T, 0.0, "2 G^T")


def test_rodrigues_is_singular_at_a_half_turn() -> None:
    with pytest.raises(ValueError, match="turn by pi"):
        RodriguesParam.from_quat(lie.axis_angle_to_quat([np.pi, 0.0, 0.0]))
