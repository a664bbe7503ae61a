"""LieState / QuatState: layout, error-state maps and Jacobians for every partition x parameterization.

Each (parameterization, partition) pair is checked at 200 random states against
CasADi's derivatives; central differences run at 25 states per pair, i.e. at
200 states per parameterization over the 8 partitions (the per-rotation blocks
get 200 finite-difference points each in ``test_lie_rotations``).
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import lie
from lie import MRP, ROTATIONS, LieState, QuatState, RodriguesParam, UnitQuaternion
from tests.test_lie_fixtures import (
    FD_TOL,
    N_POINTS,
    assert_close,
    casadi_function,
    central_diff,
    evaluate,
    params,
    rng,
    rotvecs,
)

#: Leading/trailing/middle vector parts of every size including 0, no rotation, adjacent rotations.
PARTITIONS = [(3, 6), (3, 2, 3), (0, 4), (2, 0), (0, 0), (0, 0, 0), (5,), (1, 2, 0, 3)]
N_FD = 25
CASES = list(itertools.product(ROTATIONS, PARTITIONS))
cases = pytest.mark.parametrize("R, partition", CASES, ids=[f"{R.name}-{p}" for R, p in CASES])


def random_states(ls: LieState, seed: int, n: int = N_POINTS) -> np.ndarray:
    """``n`` states (n x len): N(0, 1) vector parts, rotations from the shared sampler."""
    gen = rng(seed)
    x = gen.normal(size=(n, len(ls)))
    for i in range(ls.num_rotations):
        x[:, ls.rotation_slice(i)] = params(ls.rotation, gen, n)
    return x


def random_errors(ls: LieState, seed: int, n: int = N_POINTS) -> np.ndarray:
    """``n`` error states (n x m): N(0, 1) vector parts, rotation steps with |dphi| <= pi - 1e-3."""
    gen = rng(seed)
    dx = gen.normal(size=(n, ls.error_size))
    for i in range(ls.num_rotations):
        dx[:, ls.rotation_slice(i, tangent=True)] = rotvecs(gen, n)
    return dx


def assert_same_state(ls: LieState, a: np.ndarray, b: np.ndarray, tol: float, what: str) -> None:
    """Equal vector parts; rotations equal up to quaternion sign / MRP shadow set.

    An MRP ``a`` composed near its 2 pi singularity (``|a| >> 1``, possible
    from a shadow-set ``x0``) fixes its quaternion only to ``~eps |a|``.
    """
    for i in range(len(ls.partition)):
        s = ls.vector_slice(i)
        assert_close(a[s], b[s], tol, f"{what}: vector part {i}")
    for i in range(ls.num_rotations):
        s = ls.rotation_slice(i)
        qa, qb = ls.rotation.to_quat(a[s]), ls.rotation.to_quat(b[s])
        scale = max(1.0, np.linalg.norm(a[s])) if ls.rotation is MRP else 1.0
        assert_close(qa * np.sign(qa @ qb), qb, tol * scale, f"{what}: rotation {i}")


# ---------------------------------------------------------------- layout
def test_constructors_and_layout_match_robotdynamics_example() -> None:
    ls = LieState(UnitQuaternion, (3, 2, 3))
    assert ls == LieState(UnitQuaternion, 3, 2, 3) == QuatState(16, (3, 9)) == QuatState(16, np.array([3, 9]))
    assert hash(ls) == hash(QuatState(16, [3, 9]))
    assert ls != LieState(MRP, 3, 2, 3) and ls != LieState(UnitQuaternion, 3, 2, 2)
    assert repr(ls) == "LieState(UnitQuaternion, (3, 2, 3))"
    assert (len(ls), ls.size, ls.error_size, ls.num_rotations) == (16, 16, 14, 2)
    assert ls.rotation_slice(0) == slice(3, 7) and ls.rotation_slice(1) == slice(9, 13)
    assert ls.vector_slice(1) == slice(7, 9) and ls.vector_slice(2) == slice(13, 16)
    assert ls.rotation_slice(1, tangent=True) == slice(8, 11) and ls.vector_slice(2, tangent=True) == slice(11, 14)
    assert ls.rotation_indices(0) == range(3, 7) and ls.vector_indices(1, tangent=True) == range(6, 8)
    assert len(LieState(RodriguesParam, 3, 6)) == 12 and LieState(RodriguesParam, 3, 6).error_size == 12
    with pytest.raises(IndexError):
        ls.rotation_slice(2)


def test_quat_state_partitions() -> None:
    assert QuatState(7, (0,)) == LieState(UnitQuaternion, 0, 3)
    assert QuatState(8, (0, 4)) == LieState(UnitQuaternion, 0, 0, 0)
    assert QuatState(5, ()) == LieState(UnitQuaternion, 5)
    for n, starts in [(16, (3, 5)), (16, (13,)), (16, (-1,))]:
        with pytest.raises(ValueError, match="quat_starts"):
            QuatState(n, starts)


@pytest.mark.parametrize("args", [(UnitQuaternion, (3, -1)), (UnitQuaternion, (0,)), (UnitQuaternion, ()), (UnitQuaternion, (True, 2)), (UnitQuaternion, (1.5,)), (object, (3, 3))])
def test_bad_constructor_arguments_raise(args: tuple) -> None:
    with pytest.raises(ValueError, match="partition|rotation"):
        LieState(*args)


def test_bad_vectors_raise_naming_the_argument() -> None:
    ls = LieState(UnitQuaternion, 3, 6)
    x = random_states(ls, 0, 1)[0]
    with pytest.raises(ValueError, match=r"x0: expected shape \(13,\), got \(12,\)"):
        ls.state_error(x, x[:12])
    with pytest.raises(ValueError, match=r"dx: expected shape \(12,\), got \(13,\)"):
        ls.apply_dx(x, x)
    with pytest.raises(ValueError, match="x: contains NaN"):
        ls.error_jacobian(np.where(np.arange(13) == 4, np.nan, x))


def test_error_jacobian_structure() -> None:
    ls = LieState(MRP, 3, 2, 3)
    x = random_states(ls, 1, 1)[0]
    E, E_T = ls.error_jacobian(x), ls.error_jacobian_T(x)
    assert E.shape == (14, 14) and E_T.shape == (14, 14)
    for i in range(2):
        s, t = ls.rotation_slice(i), ls.rotation_slice(i, tangent=True)
        assert_close(E[s, t], MRP.kinematics_matrix(x[s]), 0.0, "K block")
        assert_close(E_T[t, s], MRP.error_jacobian_T(x[s]), 0.0, "K^-1 block")
    assert_close(E[ls.vector_slice(1), ls.vector_slice(1, tangent=True)], np.eye(2), 0.0, "identity block")


# ---------------------------------------------------------------- identities
@cases
def test_apply_dx_and_state_error_are_inverse(R: type, partition: tuple) -> None:
    ls = LieState(R, partition)
    for x0, x, dx in zip(random_states(ls, 2), random_states(ls, 3), random_errors(ls, 4)):
        assert_close(ls.state_error(ls.apply_dx(x0, dx), x0), dx, 1e-14, "state_error(apply_dx(x0, dx), x0)")
        assert_same_state(ls, ls.apply_dx(x0, ls.state_error(x, x0)), x, 1e-14, "apply_dx(x0, state_error(x, x0))")
        assert_close(ls.apply_Δx(x0, np.zeros(ls.error_size)), x0, 1e-15, "apply_dx(x0, 0)")
        assert_close(ls.state_error(x0, x0), np.zeros(ls.error_size), 1e-15, "state_error(x0, x0)")


@cases
def test_error_jacobians_are_left_inverses(R: type, partition: tuple) -> None:
    ls = LieState(R, partition)
    for x in random_states(ls, 5):
        # Rodrigues near pi: |E| ~ 1e6 and |E_T| ~ 1e-3, as in test_lie_rotations
        assert_close(ls.error_jacobian_T(x) @ ls.error_jacobian(x), np.eye(ls.error_size), 1e-12, "E_T E")


# ---------------------------------------------------------------- Jacobians
@cases
def test_error_jacobian_matches_casadi_and_finite_differences(R: type, partition: tuple) -> None:
    ls = LieState(R, partition)
    F = casadi_function(ls.apply_dx, [len(ls), ls.error_size], jacobian_of=1)
    zero = np.zeros(ls.error_size)
    for k, x in enumerate(random_states(ls, 6)):
        E = ls.error_jacobian(x)
        assert_close(E, evaluate(F, x, zero), 1e-14, "casadi")
        if k < N_FD:
            assert_close(E, central_diff(lambda dx: ls.apply_dx(x, dx), zero), FD_TOL, "finite differences")


@cases
def test_error_jacobian_T_matches_casadi_and_finite_differences(R: type, partition: tuple) -> None:
    ls = LieState(R, partition)
    F = casadi_function(ls.state_error, [len(ls), len(ls)], jacobian_of=0)
    for k, x in enumerate(random_states(ls, 7)):
        E_T = ls.error_jacobian_T(x)
        assert_close(E_T, evaluate(F, x, x), 1e-14, "casadi")
        if k < N_FD:
            assert_close(E_T, central_diff(lambda y: ls.state_error(y, x), x), FD_TOL, "finite differences")


def test_rigid_body_error_is_world_position_and_body_axis_angle() -> None:
    ls = LieState(UnitQuaternion, 3, 6)
    x0, x = random_states(ls, 8, 2)
    dx = ls.state_error(x, x0)
    assert_close(dx[0:3], x[0:3] - x0[0:3], 0.0, "world-frame position difference")
    assert_close(dx[3:6], lie.quat_to_axis_angle(lie.quat_mult(lie.quat_conj(x0[3:7]), x[3:7])), 0.0, "axis-angle")
    assert_close(dx[6:12], x[7:13] - x0[7:13], 0.0, "velocities")
