"""RBState: construction from any attitude, conversion to model states, equality and difference."""
from __future__ import annotations

import casadi as ca
import numpy as np
import pytest

import lie
from lie import MRP, ROTATIONS, RBState, RodriguesParam, UnitQuaternion
from tests.test_lie_fixtures import assert_close, quats, rng

_gen = rng(60)
Q = quats(_gen, 50)
PARTS = [(_gen.normal(size=3), q, _gen.normal(size=3), _gen.normal(size=3)) for q in Q]
rotations = pytest.mark.parametrize("R", ROTATIONS, ids=[R.name for R in ROTATIONS])


def test_parts_and_vector() -> None:
    for r, q, v, w in PARTS:
        x = RBState(r, q, v, w)
        assert_close(x.vector(), np.r_[r, q, v, w], 1e-15, "vector")
        assert_close(x.position, r, 0.0, "r")
        assert_close(x.orientation, q, 1e-15, "q")
        assert_close(x.linear_velocity, v, 0.0, "v")
        assert_close(x.angular_velocity, w, 0.0, "w")
        assert len(x) == 13


def test_quaternion_is_normalized_or_checked() -> None:
    r, q, v, w = PARTS[0]
    assert_close(RBState(r, 3 * q, v, w).orientation, q, 1e-15, "renormalized")
    assert np.array_equal(RBState(r, q, v, w, renormalize=False).orientation, q)
    with pytest.raises(ValueError, match="unit quaternion"):
        RBState(r, q * (1 + 1e-5), v, w, renormalize=False)
    RBState(r, q * (1 + 1e-7), v, w, renormalize=False)  # within the 1e-6 tolerance
    with pytest.raises(ValueError, match="zero quaternion"):
        RBState(r, np.zeros(4), v, w)


def test_rotation_matrix_attitude() -> None:
    for r, q, v, w in PARTS:
        x = RBState(r, lie.quat_to_rot(q), v, w)
        assert x == RBState(r, lie.rot_to_quat(lie.quat_to_rot(q)), v, w)
        assert x.isapprox(RBState(r, q, v, w), 1e-15)
    with pytest.raises(ValueError, match="rotation matrix"):
        RBState(r, 1.01 * np.eye(3), v, w)
    with pytest.raises(ValueError, match="rotation matrix"):
        RBState(r, np.diag([1.0, 1.0, -1.0]), v, w)


@rotations
def test_model_state_round_trip(R: type) -> None:
    for r, q, v, w in PARTS:
        x = RBState(r, q, v, w)
        s = x.to_state(R)
        assert s.shape == (9 + R.size,)
        assert_close(s[3 : 3 + R.size], R.from_quat(x.orientation), 0.0, "attitude")
        assert x.isapprox(RBState.from_state(s, R), 1e-14)
        assert x.isapprox(RBState.from_attitude(r, R.from_quat(q), v, w, rotation=R), 1e-14)


def test_from_state_renormalizes_or_checks_quaternions() -> None:
    r, q, v, w = PARTS[1]
    s = np.r_[r, 2 * q, v, w]
    assert_close(RBState.from_state(s).orientation, q, 1e-15, "renormalized")
    with pytest.raises(ValueError, match="unit quaternion"):
        RBState.from_state(s, UnitQuaternion, renormalize=False)
    with pytest.raises(ValueError, match=r"x: expected shape \(12,\), got \(13,\)"):
        RBState.from_state(s, MRP)


def test_equality_treats_q_and_minus_q_alike() -> None:
    for r, q, v, w in PARTS:
        x = RBState(r, q, v, w)
        assert x == x.flipquat() and x.flipquat() == x
        assert_close(x.flipquat().orientation, -x.orientation.params, 0.0, "flipquat")
        assert x != RBState(r + 1e-12, q, v, w)
        assert x != RBState(r, lie.quat_mult(q, lie.axis_angle_to_quat([1e-6, 0.0, 0.0])), v, w)
        assert x.isapprox(RBState(r + 1e-13, -q, v, w), 1e-12)
    assert RBState(*PARTS[0]) != "not a state"


def test_difference_is_the_rigid_body_error_state() -> None:
    for (r1, q1, v1, w1), (r2, q2, v2, w2) in zip(PARTS, PARTS[1:]):
        x1, x2 = RBState(r1, q1, v1, w1), RBState(r2, q2, v2, w2)
        phi = lie.quat_to_axis_angle(lie.quat_mult(lie.quat_conj(q2), q1))
        assert_close(x1 - x2, np.r_[r1 - r2, phi, v1 - v2, w1 - w2], 1e-15, "x1 - x2")
        assert_close(x1 - x2.flipquat(), x1 - x2, 1e-15, "sign-free")
        assert_close(x1 - x1, np.zeros(12), 0.0, "x - x")


def test_symbolic_states() -> None:
    xs = ca.SX.sym("x", 12)
    x = RBState.from_state(xs, RodriguesParam)
    s = x.to_state(MRP)
    assert isinstance(s, ca.SX) and s.shape == (12, 1)
    F = ca.Function("f", [xs], [s])
    num = np.r_[PARTS[2][0], RodriguesParam.from_quat(PARTS[2][1]), PARTS[2][2], PARTS[2][3]]
    assert_close(F(num).full()[:, 0], RBState.from_state(num, RodriguesParam).to_state(MRP), 1e-14, "symbolic = numeric")
    assert isinstance(x - x, ca.SX)
    with pytest.raises(TypeError, match="symbolic"):
        _ = x == x


@pytest.mark.parametrize(
    "args, match",
    [
        ((np.zeros(2), [1, 0, 0, 0], np.zeros(3), np.zeros(3)), r"r: expected shape \(3,\), got \(2,\)"),
        ((np.zeros(3), [1, 0, 0], np.zeros(3), np.zeros(3)), r"q: expected shape \(4,\), got \(3,\)"),
        ((np.zeros(3), [1, 0, 0, 0], np.zeros(3), [0, np.nan, 0]), "w: contains NaN"),
        ((np.zeros(3), [1, 0, 0, np.nan], np.zeros(3), np.zeros(3)), "q: contains NaN"),
    ],
)
def test_bad_input_raises(args: tuple, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        RBState(*args)
