"""Every public ``lie`` function x backend: numpy vs CasADi SX/MX agreement, finiteness at zero angle, bad input.

One table lists each function with the kinds of its arguments; the tests run
the whole table (crocoddyl-style factory), so a new function gets all checks by
adding one row.
"""
from __future__ import annotations

import zlib
from typing import Any, Callable

import casadi as ca
import numpy as np
import pytest

import lie
from lie import ROTATIONS, LieState
from tests.test_lie_fixtures import assert_close, params, quats, rng, rotvecs

N_AGREE = 20
LIE_STATES = {R: LieState(R, 3, 2, 3) for R in ROTATIONS}


def _euler(gen: np.random.Generator, n: int) -> np.ndarray:
    return np.column_stack([gen.uniform(-np.pi, np.pi, n), gen.uniform(-np.pi / 2 + 1e-3, np.pi / 2 - 1e-3, n), gen.uniform(-np.pi, np.pi, n)])


def _states(R: type, gen: np.random.Generator, n: int) -> np.ndarray:
    ls = LIE_STATES[R]
    x = gen.normal(size=(n, len(ls)))
    for i in range(ls.num_rotations):
        x[:, ls.rotation_slice(i)] = params(R, gen, n)
    return x


def _errors(R: type, gen: np.random.Generator, n: int) -> np.ndarray:
    ls = LIE_STATES[R]
    dx = gen.normal(size=(n, ls.error_size))
    for i in range(ls.num_rotations):
        dx[:, ls.rotation_slice(i, tangent=True)] = rotvecs(gen, n)
    return dx


def _identity_state(R: type) -> np.ndarray:
    ls = LIE_STATES[R]
    x = np.zeros(len(ls))
    for i in range(ls.num_rotations):
        x[ls.rotation_slice(i)] = R.identity()
    return x


#: kind -> (shape, sampler(gen, n) -> n samples, zero-angle samples)
KINDS: dict[str, tuple[tuple[int, ...], Callable[[np.random.Generator, int], Any], list[np.ndarray]]] = {
    "v3": ((3,), lambda g, n: g.normal(size=(n, 3)), [np.zeros(3)]),
    "phi": ((3,), lambda g, n: rotvecs(g, n), [np.zeros(3)]),
    "q": ((4,), lambda g, n: quats(g, n), [np.array([1.0, 0, 0, 0]), np.array([-1.0, 0, 0, 0])]),
    "R": ((3, 3), lambda g, n: [lie.quat_to_rot(q) for q in quats(g, n)], [np.eye(3), np.diag([1.0, -1.0, -1.0])]),
    "nu": ((6,), lambda g, n: np.hstack([g.normal(size=(n, 3)), rotvecs(g, n)]), [np.zeros(6)]),
    "T": ((4, 4), lambda g, n: [lie.exp6(nu) for nu in np.hstack([g.normal(size=(n, 3)), rotvecs(g, n)])], [np.eye(4), np.diag([1.0, -1.0, -1.0, 1.0])]),
    "euler": ((3,), _euler, [np.zeros(3)]),
}
for _R in ROTATIONS:
    KINDS[f"p:{_R.name}"] = ((_R.size,), lambda g, n, R=_R: params(R, g, n), [_R.identity()])
    KINDS[f"x:{_R.name}"] = ((len(LIE_STATES[_R]),), lambda g, n, R=_R: _states(R, g, n), [_identity_state(_R)])
    KINDS[f"dx:{_R.name}"] = ((LIE_STATES[_R].error_size,), lambda g, n, R=_R: _errors(R, g, n), [np.zeros(LIE_STATES[_R].error_size)])

#: (label, function, [(argument name, kind), ...])
TABLE: list[tuple[str, Callable[..., Any], list[tuple[str, str]]]] = [
    ("skew", lie.skew, [("v", "v3")]),
    ("quat_conj", lie.quat_conj, [("q", "q")]),
    ("L_mult", lie.L_mult, [("q", "q")]),
    ("R_mult", lie.R_mult, [("q", "q")]),
    ("quat_mult", lie.quat_mult, [("q", "q"), ("q2", "q")]),
    ("attitude_jacobian", lie.attitude_jacobian, [("q", "q")]),
    ("quat_to_rot", lie.quat_to_rot, [("q", "q")]),
    ("rot_to_quat", lie.rot_to_quat, [("R", "R")]),
    ("axis_angle_to_quat", lie.axis_angle_to_quat, [("phi", "phi")]),
    ("quat_to_axis_angle", lie.quat_to_axis_angle, [("q", "q")]),
    ("so3_exp", lie.so3_exp, [("phi", "phi")]),
    ("so3_log", lie.so3_log, [("R", "R")]),
    ("so3_right_jacobian", lie.so3_right_jacobian, [("phi", "phi")]),
    ("so3_right_jacobian_inv", lie.so3_right_jacobian_inv, [("phi", "phi")]),
    ("so3_left_jacobian", lie.so3_left_jacobian, [("phi", "phi")]),
    ("so3_left_jacobian_inv", lie.so3_left_jacobian_inv, [("phi", "phi")]),
    ("exp6", lie.exp6, [("nu", "nu")]),
    ("log6", lie.log6, [("T", "T")]),
    ("Jexp6", lie.Jexp6, [("nu", "nu")]),
    ("Jlog6", lie.Jlog6, [("T", "T")]),
    ("quat_to_mrp", lie.quat_to_mrp, [("q", "q")]),
    ("mrp_to_quat", lie.mrp_to_quat, [("p", "p:MRP")]),
    ("mrp_to_rot", lie.mrp_to_rot, [("p", "p:MRP")]),
    ("mrp_kinematics_matrix", lie.mrp_kinematics_matrix, [("p", "p:MRP")]),
    ("mrp_kinematics_matrix_inv", lie.mrp_kinematics_matrix_inv, [("p", "p:MRP")]),
    ("quat_to_rodrigues", lie.quat_to_rodrigues, [("q", "q")]),
    ("rodrigues_to_quat", lie.rodrigues_to_quat, [("g", "p:RodriguesParam")]),
    ("rodrigues_to_rot", lie.rodrigues_to_rot, [("g", "p:RodriguesParam")]),
    ("rodrigues_kinematics_matrix", lie.rodrigues_kinematics_matrix, [("g", "p:RodriguesParam")]),
    ("rodrigues_kinematics_matrix_inv", lie.rodrigues_kinematics_matrix_inv, [("g", "p:RodriguesParam")]),
    ("cayley_to_quat", lie.cayley_to_quat, [("g", "p:RodriguesParam")]),
    ("quat_to_cayley", lie.quat_to_cayley, [("q", "q")]),
    ("euler_zyx_to_rot", lie.euler_zyx_to_rot, [("e", "euler")]),
    ("rot_to_euler_zyx", lie.rot_to_euler_zyx, [("R", "R")]),
    ("euler_zyx_to_quat", lie.euler_zyx_to_quat, [("e", "euler")]),
    ("quat_to_euler_zyx", lie.quat_to_euler_zyx, [("q", "q")]),
    ("euler_zyx_rate_matrix", lie.euler_zyx_rate_matrix, [("e", "euler")]),
    ("euler_zyx_rate_matrix_inv", lie.euler_zyx_rate_matrix_inv, [("e", "euler")]),
]
for _R in ROTATIONS:
    _p, _ls = f"p:{_R.name}", LIE_STATES[_R]
    TABLE += [
        (f"{_R.name}.to_quat", _R.to_quat, [("p", _p)]),
        (f"{_R.name}.from_quat", _R.from_quat, [("q", "q")]),
        (f"{_R.name}.to_rot", _R.to_rot, [("p", _p)]),
        (f"{_R.name}.kinematics_matrix", _R.kinematics_matrix, [("p", _p)]),
        (f"{_R.name}.error", _R.error, [("p", _p), ("p0", _p)]),
        (f"{_R.name}.compose", _R.compose, [("p0", _p), ("dphi", "phi")]),
        (f"{_R.name}.error_jacobian", _R.error_jacobian, [("p", _p)]),
        (f"{_R.name}.error_jacobian_T", _R.error_jacobian_T, [("p", _p)]),
        (f"{_ls}.state_error", _ls.state_error, [("x", f"x:{_R.name}"), ("x0", f"x:{_R.name}")]),
        (f"{_ls}.apply_dx", _ls.apply_dx, [("x0", f"x:{_R.name}"), ("dx", f"dx:{_R.name}")]),
        (f"{_ls}.error_jacobian", _ls.error_jacobian, [("x", f"x:{_R.name}")]),
        (f"{_ls}.error_jacobian_T", _ls.error_jacobian_T, [("x", f"x:{_R.name}")]),
    ]

table = pytest.mark.parametrize("label, fn, args", TABLE, ids=[row[0] for row in TABLE])


def _symbols(sym: type, args: list[tuple[str, str]]) -> list[Any]:
    return [sym.sym(name, *KINDS[kind][0]) for name, kind in args]


@table
@pytest.mark.parametrize("sym", [ca.SX, ca.MX], ids=["SX", "MX"])
def test_numeric_and_symbolic_agree(label: str, fn: Callable[..., Any], args: list[tuple[str, str]], sym: type) -> None:
    gen = rng(zlib.crc32(label.encode()))
    symbols = _symbols(sym, args)
    out = fn(*symbols)
    assert isinstance(out, sym), f"{label} returned {type(out).__name__} for {sym.__name__} input"
    F = ca.Function("f", symbols, [out])
    samples = [KINDS[kind][1](gen, N_AGREE) for _, kind in args]
    for point in zip(*samples):
        num = np.asarray(fn(*point))
        assert isinstance(num, np.ndarray) and num.ndim == (1 if out.shape[1] == 1 else 2), f"{label}: numeric shape {num.shape}"
        assert_close(num, F(*point).full().reshape(num.shape), 1e-12, label)


MULTI_ARG = [row for row in TABLE if len(row[2]) > 1]


@pytest.mark.parametrize("label, fn, args", MULTI_ARG, ids=[row[0] for row in MULTI_ARG])
def test_mixed_numeric_and_symbolic_arguments(label: str, fn: Callable[..., Any], args: list[tuple[str, str]]) -> None:
    """One argument symbolic, the others numeric (e.g. ``state_error(x_sym, x_ref)``): symbolic result, same values."""
    point = [KINDS[kind][1](rng(1), 1)[0] for _, kind in args]
    expected = np.asarray(fn(*point))
    for i, sym in enumerate(_symbols(ca.SX, args)):
        out = fn(*point[:i], sym, *point[i + 1 :])
        assert isinstance(out, ca.SX), f"{label}: argument {i} symbolic gave {type(out).__name__}"
        assert_close(ca.Function("f", [sym], [out])(point[i]).full().reshape(expected.shape), expected, 1e-12, label)


@table
def test_values_and_derivatives_are_finite_at_zero_angle(label: str, fn: Callable[..., Any], args: list[tuple[str, str]]) -> None:
    """Values and CasADi first derivatives (w.r.t. every argument) at the identity (and at a half turn for matrices)."""
    symbols = _symbols(ca.SX, args)
    out = ca.vec(fn(*symbols))
    F = ca.Function("f", symbols, [out] + [ca.jacobian(out, s) for s in symbols])
    for point in zip(*[KINDS[kind][2] for _, kind in args]):
        for value in F(*point):
            assert np.isfinite(value.full()).all(), f"{label} at {point}: {value}"


@table
def test_bad_input_raises_value_error_naming_the_argument(label: str, fn: Callable[..., Any], args: list[tuple[str, str]]) -> None:
    good = [KINDS[kind][1](rng(0), 1)[0] for _, kind in args]
    for i, (name, kind) in enumerate(args):
        shape = KINDS[kind][0]
        wrong = np.zeros(shape[0] + 1) if len(shape) == 1 else np.zeros((shape[0], shape[1] + 1))
        nan = np.array(good[i], dtype=float)
        nan.flat[0] = np.nan
        for bad, match in [(wrong, rf"{name}: expected shape \({shape[0]}.*got \({wrong.shape[0]}"), (nan, f"{name}: contains NaN")]:
            with pytest.raises(ValueError, match=match):
                fn(*good[:i], bad, *good[i + 1 :])
