"""Property-based tests (hypothesis) of the lie functions and the model interfaces (issue 15).

Properties, each over generated inputs that favour the hard places (rotation
angles at and near 0, down to subnormal numbers, and near pi; quaternions with
``qw`` near 0 or near 1; positions up to 1e6 m, angles up to 1e3 rad):

- exp/log round trips: quaternion <-> axis-angle, SO(3), SE(3), MRP, Rodrigues, ZYX Euler;
- composition with the inverse: ``q * conj(q) = 1``, ``exp6(nu) exp6(-nu) = I``,
  ``Rot(q1 q2) = Rot(q1) Rot(q2)``;
- error states: ``apply_dx(x, state_error(y, x)) == y`` (as rotations: up to the
  quaternion sign and the MRP shadow) and ``state_error(apply_dx(x, dx), x) == dx``
  for ``LieState`` with every parameterization, ``RBState``, rigid bodies and
  multibody models (floating body, Go1);
- Jacobians against central finite differences: the SO(3)/SE(3) exponential
  Jacobians, ``error_jacobian`` (and ``error_jacobian_T error_jacobian = I``),
  and model dynamics Jacobians in the tangent space (docs/conventions.md);
- numpy and CasADi SX give the same numbers.

Tolerances: round trips 1e-12 relative with a floor of 1 (double precision
round-off of a few operations); finite differences 1e-6 (central differences
with step 1e-6 have truncation and round-off errors ~1e-10 relative, times the
second and third derivatives of the maps, which reach 1e2-1e3 for Go1).

The number of examples is set by the hypothesis profile (tests/conftest.py):
``ci`` by default, ``--hypothesis-profile=slow`` for 10,000 per property.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import casadi as ca
import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st

import lie
from lie import MRP, LieState, RBState, RodriguesParam, UnitQuaternion
from models import MultibodyModel, Quadrotor
from models import pinocchio_builders as builders
from models.legged import Go1

EXACT = 1e-12
FD = 1e-6
STEP = 1e-6
PI = np.pi


def close(a: Any, b: Any, tol: float = EXACT) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= tol * np.maximum(1.0, np.abs(b))))


def same_rotation(q1: Any, q2: Any, tol: float = EXACT) -> bool:
    """Two unit quaternions of one rotation (``q`` and ``-q``)."""
    return close(q1, q2, tol) or close(-np.asarray(q1), q2, tol)


# ------------------------------------------------------------ strategies


@st.composite
def axes(draw: Any) -> np.ndarray:
    v = np.array(draw(st.lists(st.floats(-1, 1), min_size=3, max_size=3)))
    assume(np.linalg.norm(v) > 1e-3)
    return v / np.linalg.norm(v)


def angles(upper: float = PI) -> st.SearchStrategy:
    """Rotation angles in [0, upper): zero, subnormal and tiny ones, the Taylor-series switch, generic, and next to ``upper``."""
    return st.one_of(
        st.just(0.0),
        st.floats(0.0, 1e-150),
        st.floats(1e-12, 1e-3),
        st.floats(9e-5, 1.1e-4),  # around lie.quaternion.SMALL_ANGLE
        st.floats(0.09, 0.11),  # around lie.so3.SERIES_ANGLE
        st.floats(1e-3, upper - 1e-3),
        st.floats(upper - 1e-6, upper, exclude_max=True),
    )


@st.composite
def rotation_vectors(draw: Any, upper: float = PI) -> np.ndarray:
    return draw(angles(upper)) * draw(axes())


@st.composite
def unit_quaternions(draw: Any) -> np.ndarray:
    """Unit quaternions of either sign, including ``qw`` near 0 (half turns) and near +-1."""
    family = draw(st.sampled_from(["generic", "half_turn", "identity"]))
    axis = draw(axes())
    if family == "generic":
        v = np.array(draw(st.lists(st.floats(-1, 1), min_size=4, max_size=4)))
        assume(np.linalg.norm(v) > 1e-3)
        q = v / np.linalg.norm(v)
    else:
        small = draw(st.floats(0.0, 1e-6))
        q = np.r_[small, np.sqrt(1 - small**2) * axis] if family == "half_turn" else np.r_[np.sqrt(1 - small**2), small * axis]
    return q * draw(st.sampled_from([1.0, -1.0]))


def vectors(n: int, bound: float = 1e6) -> st.SearchStrategy:
    return st.lists(st.floats(-bound, bound), min_size=n, max_size=n).map(np.array)


# ------------------------------------------------------------ lie: round trips and inverses


@given(rotation_vectors())
def test_axis_angle_round_trip(phi: np.ndarray) -> None:
    q = lie.axis_angle_to_quat(phi)
    assert abs(np.linalg.norm(q) - 1) <= EXACT
    assert close(lie.quat_to_axis_angle(q), phi)


@given(unit_quaternions())
def test_quaternion_round_trip(q: np.ndarray) -> None:
    phi = lie.quat_to_axis_angle(q)
    assert np.linalg.norm(phi) <= PI * (1 + EXACT)
    assert same_rotation(lie.axis_angle_to_quat(phi), q)


@given(unit_quaternions())
def test_rotation_matrix_round_trip(q: np.ndarray) -> None:
    R = lie.quat_to_rot(q)
    assert close(R.T @ R, np.eye(3)) and abs(np.linalg.det(R) - 1) <= EXACT
    assert same_rotation(lie.rot_to_quat(R), q)


@given(rotation_vectors())
def test_so3_log_of_exp(phi: np.ndarray) -> None:
    assert close(lie.so3_log(lie.so3_exp(phi)), phi, 1e-10)


@given(st.floats(0.0, 1e3).flatmap(lambda a: axes().map(lambda n: a * n)))
def test_so3_exp_of_log_any_angle(phi: np.ndarray) -> None:
    """Any rotation vector, however large: log gives an equivalent one with |phi| <= pi."""
    R = lie.so3_exp(phi)
    back = lie.so3_log(R)
    assert np.linalg.norm(back) <= PI * (1 + EXACT)
    assert close(lie.so3_exp(back), R, 1e-10)


@given(unit_quaternions(), unit_quaternions())
def test_quaternion_product_is_a_homomorphism_and_conj_the_inverse(q1: np.ndarray, q2: np.ndarray) -> None:
    assert close(lie.quat_to_rot(lie.quat_mult(q1, q2)), lie.quat_to_rot(q1) @ lie.quat_to_rot(q2))
    assert close(lie.quat_mult(q1, lie.quat_conj(q1)), [1.0, 0, 0, 0])
    assert close(lie.L_mult(q1) @ q2, lie.R_mult(q2) @ q1)


@given(vectors(3, 1e3), rotation_vectors())
def test_se3_round_trip_and_inverse(v: np.ndarray, w: np.ndarray) -> None:
    nu = np.r_[v, w]
    T = lie.exp6(nu)
    assert close(T @ lie.exp6(-nu), np.eye(4), 1e-10)
    assert close(lie.log6(T), nu, 1e-9)


@given(st.lists(st.floats(-1, 1), min_size=3, max_size=3).map(np.array))
def test_mrp_round_trip(p: np.ndarray) -> None:
    """Canonical MRPs (|p| <= 1) and back; the shadow set (|p| > 1) gives the same rotation."""
    assume(np.linalg.norm(p) <= 1)
    q = lie.mrp_to_quat(p)
    assert close(lie.quat_to_mrp(q), p)
    assume(np.linalg.norm(p) > 1e-3)
    shadow = -p / np.dot(p, p)
    assert same_rotation(lie.mrp_to_quat(shadow), q)


@given(vectors(3, 1e6))
def test_rodrigues_round_trip(g: np.ndarray) -> None:
    q = lie.rodrigues_to_quat(g)
    assert q[0] > 0 and close(lie.quat_to_rodrigues(q), g, 1e-10)


@given(st.floats(-PI, PI), st.floats(-PI / 2 + 1e-3, PI / 2 - 1e-3), st.floats(-PI, PI))
def test_euler_zyx_round_trip(yaw: float, pitch: float, roll: float) -> None:
    e = np.array([yaw, pitch, roll])
    q = lie.euler_zyx_to_quat(e)
    assert close(lie.euler_zyx_to_rot(e), lie.quat_to_rot(q))
    assert close(lie.quat_to_rot(lie.euler_zyx_to_quat(lie.quat_to_euler_zyx(q))), lie.quat_to_rot(q), 1e-10)


# ------------------------------------------------------------ lie: Jacobians against finite differences


def central_difference(f: Callable[[np.ndarray], np.ndarray], x: np.ndarray, h: float = STEP) -> np.ndarray:
    """``df/dx`` (len f x len x) by central differences."""
    if x.size == 0:
        return np.zeros((np.size(f(x)), 0))
    cols = []
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = h
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h))
    return np.column_stack(cols)


@given(rotation_vectors(upper=2 * PI - 0.1))
def test_so3_jacobians_against_finite_differences(phi: np.ndarray) -> None:
    """``exp(phi + d) = exp(phi) exp(Jr d) = exp(Jl d) exp(phi)`` to first order; the inverses invert."""
    R = lie.so3_exp(phi)
    right = central_difference(lambda p: lie.so3_log(R.T @ lie.so3_exp(p)), phi)
    left = central_difference(lambda p: lie.so3_log(lie.so3_exp(p) @ R.T), phi)
    assert close(lie.so3_right_jacobian(phi), right, FD)
    assert close(lie.so3_left_jacobian(phi), left, FD)
    assert close(lie.so3_right_jacobian(phi) @ lie.so3_right_jacobian_inv(phi), np.eye(3), 1e-9)
    assert close(lie.so3_left_jacobian(phi) @ lie.so3_left_jacobian_inv(phi), np.eye(3), 1e-9)


@given(vectors(3, 10.0), rotation_vectors(upper=PI - 0.1))
def test_se3_jacobians_against_finite_differences(v: np.ndarray, w: np.ndarray) -> None:
    nu = np.r_[v, w]
    T_inv = np.linalg.inv(lie.exp6(nu))
    numeric = central_difference(lambda n: lie.log6(T_inv @ lie.exp6(n)), nu)
    assert close(lie.Jexp6(nu), numeric, FD)
    assert close(lie.Jlog6(lie.exp6(nu)) @ lie.Jexp6(nu), np.eye(6), 1e-8)


@given(unit_quaternions(), vectors(3, 10.0))
def test_attitude_jacobian_against_finite_differences(q: np.ndarray, w: np.ndarray) -> None:
    """``qdot = 1/2 G(q) w``: the derivative of ``q exp(w t)`` at ``t = 0``."""
    numeric = central_difference(lambda t: lie.quat_mult(q, lie.axis_angle_to_quat(w * t[0])), np.zeros(1))
    assert close(0.5 * lie.attitude_jacobian(q) @ w, numeric[:, 0], FD)


# ------------------------------------------------------------ numpy and CasADi agree


SX_CASES = {
    "axis_angle_to_quat": (lie.axis_angle_to_quat, 3),
    "so3_right_jacobian": (lie.so3_right_jacobian, 3),
    "so3_left_jacobian_inv": (lie.so3_left_jacobian_inv, 3),
    "exp6": (lie.exp6, 6),
}


@functools.lru_cache(maxsize=None)
def sx_function(name: str) -> ca.Function:
    f, n = SX_CASES[name]
    x = ca.SX.sym("x", n)
    return ca.Function(name, [x], [f(x)])


@given(st.sampled_from(sorted(SX_CASES)), rotation_vectors(), vectors(3, 10.0))
def test_numpy_and_casadi_agree(name: str, phi: np.ndarray, v: np.ndarray) -> None:
    f, n = SX_CASES[name]
    x = phi if n == 3 else np.r_[v, phi]
    assert close(np.asarray(sx_function(name)(x)).reshape(np.shape(f(x))), f(x), 1e-11)


@given(unit_quaternions())
def test_quat_to_axis_angle_numpy_and_casadi_agree(q: np.ndarray) -> None:
    assert close(np.asarray(quat_to_axis_angle_sx()(q)).reshape(3), lie.quat_to_axis_angle(q), 1e-11)


@functools.lru_cache(maxsize=None)
def quat_to_axis_angle_sx() -> ca.Function:
    q = ca.SX.sym("q", 4)
    return ca.Function("quat_to_axis_angle", [q], [lie.quat_to_axis_angle(q)])


# ------------------------------------------------------------ error states


ROTATION_TYPES = {"quaternion": UnitQuaternion, "mrp": MRP, "rodrigues": RodriguesParam}


@st.composite
def lie_states(draw: Any, layout: LieState, bound: float = 1e6) -> np.ndarray:
    """A state of ``layout``: vector parts up to ``bound``, rotations from :func:`unit_quaternions` in its parameterization."""
    x = np.array(draw(vectors(layout.size, bound)))
    for i in range(layout.num_rotations):
        q = draw(unit_quaternions())
        if layout.rotation is RodriguesParam:
            assume(abs(q[0]) > 1e-3)  # Rodrigues parameters are singular at a half turn
        x[layout.rotation_slice(i)] = layout.rotation.from_quat(q)
    return x


@st.composite
def lie_errors(draw: Any, layout: LieState, bound: float = 1e6) -> np.ndarray:
    dx = np.array(draw(vectors(layout.error_size, bound)))
    for i in range(layout.num_rotations):
        dx[layout.rotation_slice(i, tangent=True)] = draw(rotation_vectors(upper=PI - 1e-6))
    return dx


LAYOUTS = {name: LieState(R, 3, 2, 3) for name, R in ROTATION_TYPES.items()}


def mrp_composition_singular(layout: LieState, x: np.ndarray, dx: np.ndarray) -> bool:
    """Whether ``apply_dx(x, dx)`` meets the MRP singularity: ``MRP.compose`` keeps the quaternion sign of
    ``x``'s MRPs (continuity in ``dx``), so a product ``q0 exp(dphi)`` near ``-1`` (a 2 pi turn) has no MRP."""
    for i in range(layout.num_rotations):
        q = lie.quat_mult(MRP.to_quat(x[layout.rotation_slice(i)]), lie.axis_angle_to_quat(dx[layout.rotation_slice(i, tangent=True)]))
        if q[0] < -1 + 1e-3:
            return True
    return False


@given(st.sampled_from(sorted(LAYOUTS)).flatmap(lambda name: st.tuples(st.just(name), lie_states(LAYOUTS[name]), lie_states(LAYOUTS[name]))))
def test_lie_state_apply_dx_of_state_error(case: tuple) -> None:
    name, x, y = case
    layout = LAYOUTS[name]
    dx = layout.state_error(y, x)
    if layout.rotation is MRP:
        assume(not mrp_composition_singular(layout, x, dx))
    back = layout.apply_dx(x, dx)
    assert close(layout.state_error(back, y), np.zeros(layout.error_size), 1e-9)


@given(st.sampled_from(sorted(LAYOUTS)).flatmap(lambda name: st.tuples(st.just(name), lie_states(LAYOUTS[name]), lie_errors(LAYOUTS[name]))))
def test_lie_state_state_error_of_apply_dx(case: tuple) -> None:
    name, x, dx = case
    layout = LAYOUTS[name]
    if layout.rotation is MRP:
        assume(not mrp_composition_singular(layout, x, dx))
    y = layout.apply_dx(x, dx)
    if layout.rotation is RodriguesParam:
        for i in range(layout.num_rotations):
            assume(abs(UnitQuaternion.from_quat(RodriguesParam.to_quat(y[layout.rotation_slice(i)]))[0]) > 1e-3)
    assert close(layout.state_error(y, x), dx, 1e-9)


@given(st.sampled_from(sorted(LAYOUTS)).flatmap(lambda name: st.tuples(st.just(name), lie_states(LAYOUTS[name], bound=10.0))))
def test_lie_state_error_jacobians(case: tuple) -> None:
    name, x = case
    layout = LAYOUTS[name]
    if layout.rotation is RodriguesParam:
        assume(all(np.linalg.norm(x[layout.rotation_slice(i)]) < 1e3 for i in range(layout.num_rotations)))
    J = layout.error_jacobian(x)
    assert close(J, central_difference(lambda d: layout.apply_dx(x, d), np.zeros(layout.error_size)), FD)
    assert close(layout.error_jacobian_T(x) @ J, np.eye(layout.error_size), 1e-9)


@given(vectors(3), unit_quaternions(), vectors(3, 1e3), vectors(3, 1e3), vectors(3), unit_quaternions(), vectors(3, 1e3), vectors(3, 1e3))
def test_rbstate_difference_and_apply(r1, q1, v1, w1, r2, q2, v2, w2) -> None:  # type: ignore[no-untyped-def]
    a, b = RBState(r1, q1, v1, w1), RBState(r2, q2, v2, w2)
    dx = a - b
    back = RBState.lie_state.apply_dx(b.vector(), dx)
    assert RBState(back[:3], back[3:7], back[7:10], back[10:]).isapprox(a, 1e-9)


# ------------------------------------------------------------ models


@functools.lru_cache(maxsize=None)
def model(name: str) -> Any:
    if name == "go1":
        return Go1()
    if name == "floating_body":
        return MultibodyModel(builders.floating_body_model(2.0, (0.1, 0.2, 0.3)), kinematics_bodies=["root_body"], name="floating_body")
    return Quadrotor(rotation=ROTATION_TYPES[name.split("-")[1]])


MODELS = ["quadrotor-quaternion", "quadrotor-mrp", "quadrotor-rodrigues", "floating_body", "go1"]


@st.composite
def model_states(draw: Any, m: Any, bound: float = 1e6) -> np.ndarray:
    if isinstance(m, MultibodyModel):
        x = np.array(draw(vectors(m.nx, bound)))
        x[3:7] = draw(unit_quaternions())
        return x
    return draw(lie_states(m.lie_state(), bound))


@st.composite
def model_errors(draw: Any, m: Any, bound: float = 1e6) -> np.ndarray:
    dx = np.array(draw(vectors(m.error_dim, bound)))
    rotation = slice(3, 6) if isinstance(m, MultibodyModel) else m.lie_state().rotation_slice(0, tangent=True)
    dx[rotation] = draw(rotation_vectors(upper=PI - 1e-6))
    return dx


@given(st.sampled_from(MODELS).flatmap(lambda name: st.tuples(st.just(name), model_states(model(name)), model_states(model(name)))))
def test_model_apply_dx_of_state_error(case: tuple) -> None:
    name, x, y = case
    m = model(name)
    dx = m.state_error(y, x)
    if name.endswith("mrp"):
        assume(not mrp_composition_singular(m.lie_state(), x, dx))
    back = m.apply_dx(x, dx)
    assert close(m.state_error(back, y), np.zeros(m.error_dim), 1e-8)


@given(st.sampled_from(MODELS).flatmap(lambda name: st.tuples(st.just(name), model_states(model(name)), model_errors(model(name)))))
def test_model_state_error_of_apply_dx(case: tuple) -> None:
    name, x, dx = case
    m = model(name)
    if name.endswith("mrp"):
        assume(not mrp_composition_singular(m.lie_state(), x, dx))
    y = m.apply_dx(x, dx)
    if name.endswith("rodrigues"):
        assume(abs(RodriguesParam.to_quat(y[3:6])[0]) > 1e-3)
    assert close(m.state_error(y, x), dx, 1e-8)


@given(st.sampled_from(MODELS).flatmap(lambda name: st.tuples(st.just(name), model_states(model(name), bound=10.0), vectors(model(name).control_dim, 10.0))))
def test_model_dynamics_jacobian_against_finite_differences(case: tuple) -> None:
    """``A E(x)`` and ``B`` against central differences of ``f(apply_dx(x, d), u)`` in ``d`` and of ``f(x, u)`` in ``u``."""
    name, x, u = case
    m = model(name)
    if name.endswith("rodrigues"):
        assume(np.linalg.norm(x[3:6]) < 1e2)
    dynamics = m.dynamics  # apply_dx keeps the quaternions unit, as the numeric call checks
    A, Bu = m.dynamics_jacobian(x, u)
    tangent = central_difference(lambda d: dynamics(m.apply_dx(x, d), u), np.zeros(m.error_dim))
    assert close(A @ m.error_jacobian(x), tangent, FD * 10)
    assert close(Bu, central_difference(lambda v: dynamics(x, v), u), FD * 10)
