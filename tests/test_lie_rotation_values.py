"""Rotations held in a parameterization (``MRP(p)``, ...) and RBState's RobotDynamics.jl constructors."""
from __future__ import annotations

import casadi as ca
import numpy as np
import pytest

import lie
from lie import MRP, ROTATIONS, EulerZYX, RBState, UnitQuaternion
from tests.test_lie_fixtures import assert_close, quats, rng

rotations = pytest.mark.parametrize("R", ROTATIONS, ids=[R.name for R in ROTATIONS])
QS = quats(rng(71), 20, max_angle=3.0)


@rotations
def test_a_rotation_converts_and_acts_like_its_matrix(R):
    for qa, qb in zip(QS[:-1], QS[1:]):
        a, b = R(R.from_quat(qa)), R(R.from_quat(qb))
        Ma, Mb = lie.quat_to_rot(qa), lie.quat_to_rot(qb)
        assert_close(a.as_matrix(), Ma, 1e-14, "as_matrix")
        assert_close(np.asarray(a), R.from_quat(qa), 0.0, "numpy array = parameters")
        assert len(a) == R.size and list(a) == list(a.params) and a[0] == a.params[0]
        v = np.array([0.3, -1.0, 2.0])
        assert_close(a @ v, Ma @ v, 1e-14, "rot @ v")
        assert_close((a @ b).as_matrix(), Ma @ Mb, 1e-13, "composition")
        assert type(a @ b) is R
        assert_close(a.inv().as_matrix(), Ma.T, 1e-14, "inverse")
        for other in ROTATIONS:  # every conversion is the same rotation
            assert_close(other(a).as_matrix(), Ma, 1e-13, f"{R.name} -> {other.name}")
        assert_close(R(Ma).as_matrix(), Ma, 1e-13, "from a rotation matrix")
        assert a == R(a.params) and a != b
        assert repr(a).startswith(f"{R.name}([")


def test_unit_quaternion_rotation_is_checked_or_renormalized():
    q = QS[0]
    assert_close(UnitQuaternion(3 * q, renorm=True).params, q, 1e-15, "renorm")
    with pytest.raises(ValueError, match="params: expected a unit quaternion"):
        UnitQuaternion(3 * q)
    with pytest.raises(ValueError, match=r"params: expected shape \(3,\), got \(4,\)"):
        MRP(q)
    with pytest.raises(ValueError, match="params: a 3x3 attitude must be a rotation matrix"):
        EulerZYX(2 * np.eye(3))
    with pytest.raises(ValueError, match="params: contains NaN"):
        MRP([np.nan, 0.0, 0.0])


def test_symbolic_rotation():
    p = ca.SX.sym("p", 3)
    rot = MRP(p)
    F = ca.Function("F", [p], [rot.as_matrix(), rot @ ca.DM([1.0, 2.0, 3.0])])
    value = np.array([0.1, -0.2, 0.3])
    M, v = (np.asarray(o) for o in F(value))
    assert_close(M, MRP.to_rot(value), 1e-15, "symbolic as_matrix")
    assert_close(v.ravel(), MRP.to_rot(value) @ [1.0, 2.0, 3.0], 1e-15, "symbolic rot @ v")
    with pytest.raises(TypeError, match="symbolic"):
        np.asarray(rot)


class _Model:
    """What RBState(model, x) reads of a model: its attitude parameterization."""

    def __init__(self, rotation):
        self.rotation = rotation


@rotations
def test_rbstate_constructors_of_robotdynamics(R):
    r, v, w = np.array([1.0, 2.0, 3.0]), np.array([-1.0, 0.5, 0.2]), np.array([0.3, 0.2, -0.1])
    q = QS[3]
    x = RBState(r, q, v, w)
    assert RBState(x.vector()).isapprox(x, 0.0) and RBState(x).isapprox(x, 0.0)
    assert RBState(r, R(R.from_quat(q)), v, w).isapprox(x, 1e-14)
    state = x.to_state(R)
    assert RBState(_Model(R), state).isapprox(x, 1e-14)
    assert RBState(_Model(R), state, True).isapprox(x, 1e-14)


def test_rbstate_renorm_defaults_follow_robotdynamics():
    r, v, w, q = np.zeros(3), np.zeros(3), np.zeros(3), QS[0]
    x13 = np.r_[r, 2 * q, v, w]
    assert_close(RBState(x13).orientation, q, 1e-15, "RBState(x) renormalizes")
    with pytest.raises(ValueError, match="q: expected a unit quaternion"):
        RBState(_Model(UnitQuaternion), x13)  # RBState(model, x) does not, by default
    assert_close(RBState(_Model(UnitQuaternion), x13, True).orientation, q, 1e-15, "renorm=true")
    with pytest.raises(TypeError, match="renorm given twice"):
        RBState(_Model(UnitQuaternion), x13, True, renormalize=True)
    with pytest.raises(TypeError, match="expected \\(r, q, v, w\\)"):
        RBState(r, q)
