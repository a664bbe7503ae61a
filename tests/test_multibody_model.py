"""MultibodyModel (PinnZoo-style API) against pinocchio, finite differences and closed forms.

Models: Go1 and Go2 (floating, from URDF, kinematics bodies = the 4 feet), the
G1 humanoid (``g1_29dof_rev_1_0.urdf``, kinematics bodies = the two ankle-roll
links) and the floating body of :mod:`models.pinocchio_builders` (with an
off-centre frame added), each at ``N_STATES`` random states (random unit
quaternions, joint positions, velocities, accelerations, torques, world-frame
forces at the kinematics bodies). Each model's casadi.Functions are built once
(module-scoped cache) and evaluated at all states at once with
``Function.map``; pinocchio is called per state.

Tolerances are relative with a floor, ``|ours - ref| <= tol * max(1, |ref|)``
element-wise: ``TOL = 1e-9`` against pinocchio values, ``DERIV_TOL = 1e-8``
against pinocchio derivatives, ``FD_TOL = 1e-6`` against central differences,
``EXACT = 1e-12`` for identities and for numeric/symbolic agreement.
Vectors are converted between our order (quaternion ``[qw, qx, qy, qz]``) and
pinocchio's (``[qx, qy, qz, qw]``) with the model's own ``change_order``.

Derivative convention. Our derivatives are raw in the quaternion; their
tangent contraction ``J[:, :nq] @ E(q)`` is compared with pinocchio's
``computeABADerivatives`` / ``computeRNEADerivatives`` configuration
derivatives. Pinocchio's free-flyer tangent moves ``q`` by the SE(3)
exponential, ``M exp(dq)``, ours (``apply_dx``) by ``p + R dp`` and
``quat * exp(dphi)`` separately; both are ``p + R dp + O(|dq|^2)`` and
``R exp(dphi)``, so first derivatives agree in every column, the base position
included: the comparison is direct, no finite differences needed. Pinocchio's
analytical derivatives hold ``fext`` constant in the joint frames, whereas our
point forces are constant in the WORLD frame; with forces the derivatives are
therefore compared with central differences of pinocchio's ``aba``/``rnea``
along ``pinocchio.integrate`` directions, the forces re-expressed at each
perturbed configuration.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

import casadi as ca
import numpy as np
import pinocchio as pin
import pytest

from models import planar_chain
from models import pinocchio_builders as builders
from models.multibody_model import MultibodyModel
from models.robot_data import urdf_path

TOL = 1e-9
DERIV_TOL = 1e-8
FD_TOL = 1e-6
FD_STEP = 1e-6
EXACT = 1e-12
N_STATES = 50

UNITREE_FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")
G1_FEET = ("left_ankle_roll_link", "right_ankle_roll_link")
CASES = ("go1", "go2", "g1", "floating_body")


# -- comparison ---------------------------------------------------------------


def assert_close(actual: Any, expected: Any, tol: float, what: str = "") -> None:
    """``|actual - expected| <= tol * max(1, |expected|)`` element-wise."""
    actual, expected = np.asarray(actual, dtype=float), np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    err = np.abs(actual - expected) / np.maximum(1.0, np.abs(expected))
    assert np.all(err <= tol), f"{what}: max relative error {err.max():.3g} > {tol:g}"


def from_upper(A: np.ndarray) -> np.ndarray:
    """The symmetric matrix of ``A``'s upper triangle (pinocchio may fill only that part)."""
    return np.triu(A) + np.triu(A, 1).T


# -- models and states ----------------------------------------------------------


def floating_body() -> MultibodyModel:
    """The builders' floating body (m = 2, diagonal inertia) with a frame off its centre."""
    model = builders.floating_body_model(2.0, (0.1, 0.2, 0.3))
    offset = pin.SE3(pin.utils.rpyToMatrix(0.3, -0.2, 0.5), np.array([0.1, -0.2, 0.3]))
    model.addFrame(pin.Frame("corner", 1, 0, offset, pin.FrameType.OP_FRAME))
    return MultibodyModel(model, kinematics_bodies=["corner"], input_matrix=np.eye(6), name="floating_body")


def build_model(name: str) -> MultibodyModel:
    if name == "floating_body":
        return floating_body()
    feet = G1_FEET if name == "g1" else UNITREE_FEET
    return MultibodyModel.from_urdf(urdf_path(name), kinematics_bodies=feet, name=name)


@dataclass
class Case:
    """A model, its pinocchio data and ``N_STATES`` random inputs (one row per state)."""

    name: str
    model: MultibodyModel
    data: Any
    X: np.ndarray  # (N, nx)
    tau: np.ndarray  # (N, nv)
    u: np.ndarray  # (N, nu)
    acc: np.ndarray  # (N, nv)
    F: np.ndarray  # (N, 3 nc) world-frame forces
    dirs: np.ndarray  # (N, 2 nv) tangent directions
    lam_x: np.ndarray  # (N, nx)
    lam_v: np.ndarray  # (N, nv)

    @property
    def pin_model(self) -> Any:
        return self.model.pin_model

    def q_pin(self, x: np.ndarray) -> np.ndarray:
        return self.model.change_order(x[: self.model.nq], "nominal", "pinocchio")

    def qv(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Pinocchio configuration and velocity of state ``k``."""
        return self.q_pin(self.X[k]), self.X[k, self.model.nq :]

    def fext(self, q_pin: np.ndarray, forces: np.ndarray) -> list:
        """Pinocchio's joint-local ``fext`` of WORLD-frame forces at the kinematics bodies' origins."""
        pm, data = self.pin_model, self.data
        pin.framesForwardKinematics(pm, data, q_pin)
        fext = [pin.Force.Zero() for _ in range(pm.njoints)]
        for k, body in enumerate(self.model.kinematics_bodies):
            fid = pm.getFrameId(body)
            frame = pm.frames[fid]
            local = pin.Force(data.oMf[fid].rotation.T @ forces[3 * k : 3 * k + 3], np.zeros(3))
            fext[frame.parentJoint] = fext[frame.parentJoint] + frame.placement.act(local)
        return fext


@lru_cache(maxsize=None)
def get_case(name: str) -> Case:
    model = build_model(name)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    n, nv = N_STATES, model.nv
    X = np.array([model.randn_state(rng) for _ in range(n)])
    return Case(
        name=name,
        model=model,
        data=model.pin_model.createData(),
        X=X,
        tau=5 * rng.standard_normal((n, nv)),
        u=5 * rng.standard_normal((n, model.nu)),
        acc=rng.standard_normal((n, nv)),
        F=20 * rng.standard_normal((n, 3 * model.nc)),
        dirs=rng.standard_normal((n, 2 * nv)),
        lam_x=rng.standard_normal((n, model.nx)),
        lam_v=rng.standard_normal((n, nv)),
    )


@pytest.fixture(scope="module", params=CASES)
def case(request: pytest.FixtureRequest) -> Case:
    return get_case(request.param)


def evaluate(model: MultibodyModel, key: str, *rows: np.ndarray) -> list[np.ndarray]:
    """Outputs of ``model.casadi_function(key)`` at every row of the inputs: arrays (N, r, c)."""
    f = model.casadi_function(key)
    n = rows[0].shape[0]
    outs = f.map(n)(*[ca.DM(np.asarray(r, dtype=float).reshape(n, -1).T) for r in rows])
    outs = outs if isinstance(outs, tuple) else (outs,)
    result = []
    for k, o in enumerate(outs):
        r, c = f.size_out(k)
        result.append(np.asarray(o.full()).reshape(r, n, c).transpose(1, 0, 2))
    return result


def tangent(case: Case, dirs: np.ndarray) -> np.ndarray:
    """Raw state directions ``error_jacobian(x) @ d`` (N, nx) of tangent directions ``d`` (N, 2 nv)."""
    m = case.model
    E = evaluate(m, "velocity_kinematics", case.X)[0]
    return np.hstack([directional(E, dirs[:, : m.nv]), dirs[:, m.nv :]])


def along(case: Case, g: Callable[[np.ndarray], np.ndarray], dirs: np.ndarray, h: float = FD_STEP) -> np.ndarray:
    """Central difference of ``g`` (states (N, nx) -> (N, ...)) along ``apply_dx(x, t d)``."""
    m = case.model
    plus = np.array([m.apply_dx(x, h * d) for x, d in zip(case.X, dirs)])
    minus = np.array([m.apply_dx(x, -h * d) for x, d in zip(case.X, dirs)])
    return (g(plus) - g(minus)) / (2 * h)


def directional(J: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Row-wise products ``J[k] @ d[k]`` (N, r) of matrices (N, r, c) and vectors (N, c)."""
    return np.einsum("nij,nj->ni", J, d)


# -- values against pinocchio ------------------------------------------------


def test_mass_matrix_and_bias(case: Case) -> None:
    M = evaluate(case.model, "M_func", case.X)[0]
    C = evaluate(case.model, "C_func", case.X)[0][:, :, 0]
    for k in range(N_STATES):
        q, v = case.qv(k)
        assert_close(M[k], from_upper(pin.crba(case.pin_model, case.data, q)), TOL, "M")
        assert_close(C[k], pin.nle(case.pin_model, case.data, q, v), TOL, "C")


def test_forward_and_inverse_dynamics(case: Case) -> None:
    m = case.model
    vdot = evaluate(m, "forward_dynamics", case.X, case.tau, case.F)[0][:, :, 0]
    tau = evaluate(m, "inverse_dynamics", case.X, case.acc, case.F)[0][:, :, 0]
    for k in range(N_STATES):
        q, v = case.qv(k)
        fext = case.fext(q, case.F[k])
        assert_close(vdot[k], pin.aba(case.pin_model, case.data, q, v, case.tau[k], fext), TOL, "aba")
        assert_close(tau[k], pin.rnea(case.pin_model, case.data, q, v, case.acc[k], fext), TOL, "rnea")


def test_dynamics_is_the_state_derivative(case: Case) -> None:
    """``xdot = [E(q) v; vdot]``; ``E(q) v`` is the rate of pinocchio's ``integrate(q, t v)``."""
    m = case.model
    xdot = evaluate(m, "dynamics", case.X, case.tau, case.F)[0][:, :, 0]
    vdot = evaluate(m, "forward_dynamics", case.X, case.tau, case.F)[0][:, :, 0]
    assert_close(xdot[:, m.nq :], vdot, EXACT, "vdot block")
    h = FD_STEP
    for k in range(N_STATES):
        q, v = case.qv(k)
        rate = (pin.integrate(case.pin_model, q, h * v) - pin.integrate(case.pin_model, q, -h * v)) / (2 * h)
        assert_close(xdot[k, : m.nq], m.change_order(rate, "pinocchio", "nominal"), FD_TOL, "qdot")


def test_actuator_torques_map_through_B(case: Case) -> None:
    m = case.model
    Bu = case.u @ m.B_func().T
    for k in range(3):
        x, u, f = case.X[k], case.u[k], case.F[k]
        assert_close(m.forward_dynamics(x, u, f), m.forward_dynamics(x, Bu[k], f), EXACT, "forward_dynamics(u)")
        assert_close(m.dynamics(x, u, forces=f), m.dynamics(x, Bu[k], forces=f), EXACT, "dynamics(u)")
        A, Bmat = m.dynamics_jacobian(x, u)
        A_tau, B_tau = m.dynamics_deriv(x, Bu[k])
        assert_close(A, A_tau, EXACT, "A")
        assert_close(Bmat, B_tau @ m.B_func(), EXACT, "dxdot/du")
        if m.nu != m.nv:
            assert_close(m.forward_dynamics_deriv(x, u, f)[1], m.forward_dynamics_deriv(x, Bu[k], f)[1] @ m.B_func(), EXACT, "dvdot/du")


def test_kinematics(case: Case) -> None:
    m, pm, data = case.model, case.pin_model, case.data
    pos = evaluate(m, "kinematics", case.X)[0][:, :, 0]
    rot = evaluate(m, "kinematics_rotation", case.X)[0]
    J = evaluate(m, "kinematics_velocity_matrix", case.X)[0]
    J_raw = evaluate(m, "kinematics_jacobian_q", case.X)[0]
    E = evaluate(m, "velocity_kinematics", case.X)[0]
    vel = evaluate(m, "kinematics_velocity", case.X)[0][:, :, 0]
    JTf = evaluate(m, "kinematics_jacobianTvp", case.X, case.F)[0][:, :, 0]
    fids = [pm.getFrameId(b) for b in m.kinematics_bodies]
    for k in range(N_STATES):
        q, v = case.qv(k)
        pin.framesForwardKinematics(pm, data, q)
        J_pin = np.vstack([pin.computeFrameJacobian(pm, data, q, f, pin.LOCAL_WORLD_ALIGNED)[:3] for f in fids])
        assert_close(pos[k], np.concatenate([data.oMf[f].translation for f in fids]), TOL, "positions")
        assert_close(rot[k], np.vstack([data.oMf[f].rotation for f in fids]), TOL, "rotations")
        assert_close(J[k], J_pin, TOL, "frame Jacobians")
        assert_close(J_raw[k] @ E[k], J_pin, TOL, "kinematics_jacobian @ E")
        assert_close(vel[k], J_pin @ v, TOL, "body velocities")
        assert_close(JTf[k], J_pin.T @ case.F[k], TOL, "J^T f")


# -- derivatives against pinocchio ------------------------------------------


#: Our derivative function -> pinocchio's analytical derivatives and the name of the second input.
PIN_DERIVATIVES = {
    "forward_dynamics_deriv": (pin.computeABADerivatives, "tau"),
    "inverse_dynamics_deriv": (pin.computeRNEADerivatives, "acc"),
}


@pytest.mark.parametrize("key", sorted(PIN_DERIVATIVES))
def test_derivatives_vs_pinocchio(case: Case, key: str) -> None:
    """Without forces: pinocchio's analytical derivatives (tangent contraction, see module docstring).

    The second outputs are ``d vdot/dtau = M^-1`` and ``d tau/dvdot = M``.
    """
    m, (pin_derivatives, second) = case.model, PIN_DERIVATIVES[key]
    inputs = getattr(case, second)
    dx, d_second = evaluate(m, key, case.X, inputs, np.zeros_like(case.F))
    E = evaluate(m, "velocity_kinematics", case.X)[0]
    for k in range(N_STATES):
        q, v = case.qv(k)
        d_dq, d_dv, d_d2 = pin_derivatives(case.pin_model, case.data, q, v, inputs[k])
        assert_close(dx[k][:, : m.nq] @ E[k], d_dq, DERIV_TOL, f"{key} d/dq (tangent)")
        assert_close(dx[k][:, m.nq :], d_dv, DERIV_TOL, f"{key} d/dv")
        assert_close(d_second[k], from_upper(d_d2), DERIV_TOL, f"{key} d/d{second}")


def test_derivatives_with_forces_vs_pinocchio_differences(case: Case) -> None:
    """With world-frame forces: central differences of pinocchio's aba/rnea along ``pinocchio.integrate``."""
    m, pm, data = case.model, case.pin_model, case.data
    fd_dx = evaluate(m, "forward_dynamics_deriv", case.X, case.tau, case.F)[0]
    id_dx = evaluate(m, "inverse_dynamics_deriv", case.X, case.acc, case.F)[0]
    E = evaluate(m, "velocity_kinematics", case.X)[0]
    h = FD_STEP
    for k in range(10):
        q, v = case.qv(k)
        d = case.dirs[k]

        def diff(fun: Callable[..., np.ndarray], second: np.ndarray) -> np.ndarray:
            vals = []
            for s in (h, -h):
                qs, vs = pin.integrate(pm, q, s * d[: m.nv]), v + s * d[m.nv :]
                vals.append(fun(pm, data, qs, vs, second, case.fext(qs, case.F[k])))
            return (vals[0] - vals[1]) / (2 * h)

        for J, fun, second, what in ((fd_dx, pin.aba, case.tau[k], "aba"), (id_dx, pin.rnea, case.acc[k], "rnea")):
            ours = J[k][:, : m.nq] @ E[k] @ d[: m.nv] + J[k][:, m.nq :] @ d[m.nv :]
            assert_close(ours, diff(fun, second), FD_TOL, f"{what} derivative with forces")


# -- derivatives against finite differences along tangent directions -------


def test_first_derivatives_match_finite_differences(case: Case) -> None:
    """Every Jacobian ``J`` (raw in x): ``J @ error_jacobian(x) @ d`` vs a central difference along ``apply_dx``."""
    m, X, F = case.model, case.X, case.F
    xdir = tangent(case, case.dirs)
    lam_v = case.lam_v
    qdot = directional(evaluate(m, "velocity_kinematics", X)[0], lam_v)
    checks = {
        "forward_dynamics_deriv": (lambda Y: evaluate(m, "forward_dynamics", Y, case.tau, F)[0], (case.tau, F)),
        "dynamics_deriv": (lambda Y: evaluate(m, "dynamics", Y, case.tau, F)[0], (case.tau, F)),
        "inverse_dynamics_deriv": (lambda Y: evaluate(m, "inverse_dynamics", Y, case.acc, F)[0], (case.acc, F)),
        "kinematics_velocity_jacobian": (lambda Y: evaluate(m, "kinematics_velocity", Y)[0], ()),
        "kinematics_force_jacobian": (lambda Y: evaluate(m, "kinematics_jacobianTvp", Y, F)[0], (F,)),
        "velocity_kinematics_jvp_deriv": (lambda Y: evaluate(m, "velocity_kinematics", Y)[0] @ lam_v[:, :, None], (lam_v,)),
        "velocity_kinematics_T_jvp_deriv": (lambda Y: evaluate(m, "velocity_kinematics_T", Y)[0] @ qdot[:, :, None], (qdot,)),
    }
    for key, (g, extra) in checks.items():
        J = evaluate(m, key, X, *extra)[0]
        assert_close(directional(J, xdir), along(case, g, case.dirs)[:, :, 0], FD_TOL, key)
    J = evaluate(m, "kinematics_jacobian_q", X)[0]
    assert_close(directional(J, xdir[:, : m.nq]), along(case, lambda Y: evaluate(m, "kinematics", Y)[0], case.dirs)[:, :, 0], FD_TOL, "kinematics_jacobian")


@pytest.mark.parametrize(
    "key, function, second",
    [("forward_dynamics_deriv", "forward_dynamics", "tau"), ("dynamics_deriv", "dynamics", "tau"), ("inverse_dynamics_deriv", "inverse_dynamics", "acc")],
)
def test_input_derivatives(case: Case, key: str, function: str, second: str) -> None:
    """Derivatives w.r.t. ``tau`` or ``vdot`` (the outputs are linear in them) against differences."""
    m, d = case.model, case.lam_v
    inputs = getattr(case, second)
    J = evaluate(m, key, case.X, inputs, case.F)[1]
    diff = evaluate(m, function, case.X, inputs + d, case.F)[0] - evaluate(m, function, case.X, inputs - d, case.F)[0]
    assert_close(directional(J, d), diff[:, :, 0] / 2, FD_TOL, f"{key} d/d{second}")


def test_second_derivatives_match_differences_of_products(case: Case) -> None:
    """hvp/hTvp functions against central differences of the matching Jacobian-vector products."""
    m, X, F, A = case.model, case.X, case.F, case.acc
    lam_x, lam_v, d = case.lam_x, case.lam_v, case.dirs
    xdir = tangent(case, d)
    adir = case.lam_v[::-1]
    dq = lam_x[:, : m.nq]
    mult_x, mult_v = lam_x[::-1], lam_v[::-1]

    def id_jac(Y: np.ndarray, acc: np.ndarray = A) -> np.ndarray:
        return evaluate(m, "inverse_dynamics_deriv", Y, acc, F)[0]

    def force_jac(Y: np.ndarray, forces: np.ndarray = F) -> np.ndarray:
        return evaluate(m, "kinematics_force_jacobian", Y, forces)[0]

    hx, ha = evaluate(m, "inverse_dynamics_hvp", X, A, lam_x, F)
    assert_close(directional(hx, xdir), along(case, lambda Y: directional(id_jac(Y), lam_x), d), FD_TOL, "hvp d/dx")
    assert_close(directional(ha, adir), directional(id_jac(X, A + adir) - id_jac(X, A - adir), lam_x) / 2, FD_TOL, "hvp d/dvdot")

    hx, hm = evaluate(m, "inverse_dynamics_hTvp", X, A, lam_v, F)
    jTlam = lambda Y: np.einsum("nij,ni->nj", id_jac(Y), lam_v)  # noqa: E731
    assert_close(directional(hx, xdir), along(case, jTlam, d), FD_TOL, "hTvp d/dx")
    assert_close(hx, hx.transpose(0, 2, 1), EXACT, "hTvp symmetric")
    M_lam = lambda Y: directional(evaluate(m, "M_func", Y)[0], lam_v)  # noqa: E731
    assert_close(directional(hm, xdir), along(case, M_lam, d), FD_TOL, "hTvp M lam")

    hk = evaluate(m, "kinematics_hvp_q", X, dq)[0]
    jdq = lambda Y: directional(evaluate(m, "kinematics_jacobian_q", Y)[0], dq)  # noqa: E731
    assert_close(directional(hk, xdir[:, : m.nq]), along(case, jdq, d), FD_TOL, "kinematics_hvp")

    fdir = F[::-1]
    hx, hf = evaluate(m, "kinematics_force_hvp", X, F, mult_x)
    assert_close(directional(hx, xdir), along(case, lambda Y: directional(force_jac(Y), mult_x), d), FD_TOL, "force hvp d/dx")
    assert_close(directional(hf, fdir), directional(force_jac(X, fdir), mult_x), FD_TOL, "force hvp d/df")
    hx, hf = evaluate(m, "kinematics_force_hTvp", X, F, mult_v)
    kTm = lambda Y: np.einsum("nij,ni->nj", force_jac(Y), mult_v)  # noqa: E731
    assert_close(directional(hx, xdir), along(case, kTm, d), FD_TOL, "force hTvp d/dx")
    assert_close(directional(hf, fdir), np.einsum("nij,ni->nj", force_jac(X, fdir), mult_v), FD_TOL, "force hTvp d/df")


# -- error state and velocity kinematics ------------------------------------


def test_velocity_kinematics_inverse(case: Case) -> None:
    E = evaluate(case.model, "velocity_kinematics", case.X)[0]
    E_T = evaluate(case.model, "velocity_kinematics_T", case.X)[0]
    identity = np.tile(np.eye(case.model.nv), (N_STATES, 1, 1))
    assert_close(E_T @ E, identity, EXACT, "E_T E")


def _same_state(model: MultibodyModel, a: np.ndarray, b: np.ndarray, tol: float, what: str) -> None:
    """Equal states, the base quaternion up to sign."""
    if model.is_floating and np.dot(a[3:7], b[3:7]) < 0:
        a = a.copy()
        a[3:7] *= -1
    assert_close(a, b, tol, what)


def test_error_state_round_trips(case: Case) -> None:
    m, rng = case.model, np.random.default_rng(7)
    for k in range(N_STATES):
        x, x0 = case.X[k], case.X[-1 - k]
        _same_state(m, m.apply_dx(x0, m.state_error(x, x0)), x, EXACT, "apply_dx(x0, state_error(x, x0))")
        dx = case.dirs[k].copy()
        dx[3:6] *= rng.uniform(0, 3.0) / np.linalg.norm(dx[3:6]) if m.is_floating else 1.0  # |dphi| < pi
        assert_close(m.state_error(m.apply_dx(x0, dx), x0), dx, EXACT, "state_error(apply_dx(x0, dx), x0)")


def test_error_jacobians_are_derivatives_of_the_maps(case: Case) -> None:
    m = case.model
    x, y, dx = ca.SX.sym("x", m.nx), ca.SX.sym("y", m.nx), ca.SX.sym("dx", 2 * m.nv)
    jac = ca.Function("map_jacobians", [x, dx, y], [ca.jacobian(m.apply_dx(x, dx), dx), ca.jacobian(m.state_error(y, x), y)])
    zero = np.zeros(2 * m.nv)
    for k in range(5):
        xk = case.X[k]
        J_apply, J_error = (o.full() for o in jac(xk, zero, xk))
        assert_close(m.error_jacobian(xk), J_apply, EXACT, "error_jacobian")
        assert_close(m.error_jacobian_T(xk), J_error, EXACT, "error_jacobian_T")
        E = m.velocity_kinematics(xk)
        assert_close(m.error_jacobian(xk)[: m.nq, : m.nv], E, EXACT, "error_jacobian = blkdiag(E, I)")


# -- vector orders ------------------------------------------------------------


def test_change_order_round_trips(case: Case) -> None:
    m, rng = case.model, np.random.default_rng(3)
    orders = [o for o in ("pinocchio", "mujoco") if o in m.orders]
    vectors = [rng.standard_normal(n) for n in {m.nq, m.nv, m.nx, 2 * m.nv, m.nu}]
    matrix = rng.standard_normal((m.nv, m.nx))
    for other in orders:
        for v in vectors:
            back = m.change_order(m.change_order(v, "nominal", other), other, "nominal")
            assert np.array_equal(back, v), f"{other}: vector of size {v.size}"
        back = m.change_order(m.change_order(matrix, "nominal", other), other, "nominal")
        assert np.array_equal(back, matrix), f"{other}: matrix"
        a, b = m.change_orders([case.X[0], matrix], "nominal", other)
        assert np.array_equal(a, m.change_order(case.X[0], "nominal", other)) and b.shape == matrix.shape
    if m.is_floating:
        assert np.array_equal(case.q_pin(case.X[0])[3:7], case.X[0][[4, 5, 6, 3]])


# -- pinocchio-built planar models against their closed forms ----------------

PLANAR = {
    "pendulum": (builders.pendulum_model, planar_chain.Pendulum),
    "double_pendulum": (builders.double_pendulum_model, planar_chain.DoublePendulum),
    "cartpole": (builders.cartpole_model, planar_chain.Cartpole),
    "double_cartpole": (builders.double_cartpole_model, planar_chain.DoubleCartpole),
}


@pytest.mark.parametrize("name", sorted(PLANAR))
def test_planar_models_match_closed_forms(name: str) -> None:
    build, closed_type = PLANAR[name]
    closed = closed_type()
    model = MultibodyModel(build(), kinematics_bodies=["tip"], input_matrix=closed.input_matrix, name=name)
    rng = np.random.default_rng(11)
    q_sym = ca.SX.sym("q", model.nq)
    tip = ca.Function("tip", [q_sym], [closed.mass_positions(q_sym)[-1]])
    for _ in range(N_STATES):
        x, u = 2 * rng.standard_normal(model.nx), rng.standard_normal(model.nu)
        q, qd = x[: model.nq], x[model.nq :]
        assert_close(model.M_func(x), closed.mass_matrix(q), EXACT, "M")
        assert_close(model.C_func(x), closed.bias_force(q, qd), EXACT, "C")
        assert_close(model.dynamics(x, u), closed.dynamics(x, u), EXACT, "dynamics")
        for ours, ref in zip(model.dynamics_jacobian(x, u), closed.dynamics_jacobian(x, u)):
            assert_close(ours, ref, EXACT, "dynamics_jacobian")
        assert_close(model.kinematics(x), tip(q).full().ravel(), EXACT, "tip position")


# -- numeric and symbolic calls ------------------------------------------------

#: Public methods and the names of their arguments (see ``_arguments``).
CALLS = (
    ("M_func", ("x",)),
    ("C_func", ("x",)),
    ("forward_dynamics", ("x", "tau", "f")),
    ("forward_dynamics", ("x", "u")),
    ("forward_dynamics_deriv", ("x", "tau", "f")),
    ("forward_dynamics_deriv", ("x", "u")),
    ("dynamics", ("x", "tau")),
    ("dynamics_deriv", ("x", "tau", "f")),
    ("dynamics_jacobian", ("x", "u")),
    ("inverse_dynamics", ("x", "a", "f")),
    ("inverse_dynamics_deriv", ("x", "a", "f")),
    ("inverse_dynamics_hvp", ("x", "a", "lam_x", "f")),
    ("inverse_dynamics_hTvp", ("x", "a", "lam_v", "f")),
    ("velocity_kinematics", ("x",)),
    ("velocity_kinematics_T", ("x",)),
    ("velocity_kinematics_jvp_deriv", ("x", "lam_v")),
    ("velocity_kinematics_T_jvp_deriv", ("x", "qdot")),
    ("state_error", ("x", "x0")),
    ("apply_dx", ("x0", "dx")),
    ("error_jacobian", ("x",)),
    ("error_jacobian_T", ("x",)),
    ("kinematics", ("x",)),
    ("kinematics_rotation", ("x",)),
    ("kinematics_jacobian", ("x",)),
    ("kinematics_hvp", ("x", "lam_x")),
    ("kinematics_velocity", ("x",)),
    ("kinematics_velocity_jacobian", ("x",)),
    ("kinematics_velocity_matrix", ("x",)),
    ("kinematics_jacobianTvp", ("x", "f")),
    ("kinematics_force_jacobian", ("x", "f")),
    ("kinematics_force_hvp", ("x", "f", "lam_x")),
    ("kinematics_force_hTvp", ("x", "f", "lam_v")),
)


def _arguments(case: Case, k: int) -> dict[str, np.ndarray]:
    return {
        "x": case.X[k], "x0": case.X[k + 1], "tau": case.tau[k], "u": case.u[k], "a": case.acc[k],
        "f": case.F[k], "lam_x": case.lam_x[k], "lam_v": case.lam_v[k], "qdot": case.lam_x[k, : case.model.nq],
        "dx": case.dirs[k],
    }  # fmt: skip


def _outputs(value: Any) -> list[np.ndarray]:
    values = value if isinstance(value, tuple) else (value,)
    return [np.asarray(v.full() if isinstance(v, ca.DM) else v, dtype=float) for v in values]


@pytest.mark.parametrize("kind", [ca.SX, ca.MX], ids=["SX", "MX"])
@pytest.mark.parametrize("name", CASES)
def test_numeric_and_symbolic_calls_agree(name: str, kind: type) -> None:
    case = get_case(name)
    m, args = case.model, _arguments(case, 0)
    for method, arg_names in CALLS:
        numeric = _outputs(getattr(m, method)(*[args[a] for a in arg_names]))
        symbols = [kind.sym(a, args[a].size) for a in arg_names]
        outs = getattr(m, method)(*symbols)
        f = ca.Function("f", symbols, list(outs) if isinstance(outs, tuple) else [outs])
        values = _outputs(f(*[args[a] for a in arg_names]))
        assert len(values) == len(numeric), method
        for ours, ref in zip(values, numeric):
            assert_close(ours.reshape(ref.shape), ref, EXACT, f"{method}{arg_names} {kind.__name__}")


# -- bad input ------------------------------------------------------------------


def test_bad_urdf(tmp_path: Any) -> None:
    with pytest.raises(FileNotFoundError, match="urdf"):
        MultibodyModel.from_urdf(tmp_path / "missing.urdf")
    broken = tmp_path / "broken.urdf"
    broken.write_text("<robot name='broken'><link name='a'></robot")
    with pytest.raises(ValueError, match="urdf"):
        MultibodyModel.from_urdf(broken)


def test_bad_arguments() -> None:
    case = get_case("go1")
    m, x = case.model, case.X[0]
    with pytest.raises(ValueError, match=r"x: expected shape \(37,\), got \(36,\)"):
        m.forward_dynamics(x[:-1], case.tau[0])
    bad = x.copy()
    bad[20] = np.nan
    with pytest.raises(ValueError, match="x: contains NaN"):
        m.M_func(bad)
    bad = x.copy()
    bad[3:7] *= 1.1
    with pytest.raises(ValueError, match=r"x\[3:7\] \(base quaternion\)"):
        m.kinematics(bad)
    with pytest.raises(ValueError, match=r"x0\[3:7\]"):
        m.apply_dx(bad, np.zeros(2 * m.nv))
    with pytest.raises(ValueError, match=r"tau: expected generalized forces \(18,\) or actuator torques \(12,\)"):
        m.dynamics(x, np.zeros(5))
    with pytest.raises(ValueError, match=r"forces: expected shape \(12,\)"):
        m.forward_dynamics(x, case.tau[0], np.zeros(3))
    with pytest.raises(ValueError, match="from_/to"):
        m.change_order(x, "nominal", "drake")
    with pytest.raises(ValueError, match=r"dx: expected shape \(36,\)"):
        m.apply_dx(x, np.zeros(37))


def test_bad_model_definitions() -> None:
    model = builders.pendulum_model()
    with pytest.raises(ValueError, match="kinematics_bodies: .*'toe'"):
        MultibodyModel(model, kinematics_bodies=["tip", "toe"])
    with pytest.raises(ValueError, match="kinematics_bodies: expected a sequence of frame names"):
        MultibodyModel(model, kinematics_bodies="tip")
    with pytest.raises(ValueError, match="input_matrix"):
        MultibodyModel(model, input_matrix=np.ones((2, 1)))
    with pytest.raises(ValueError, match="name"):
        MultibodyModel(model, name=" ")
    spherical = pin.Model()
    spherical.addJoint(0, pin.JointModelSpherical(), pin.SE3.Identity(), "ball")
    with pytest.raises(ValueError, match="unsupported type JointModelSpherical"):
        MultibodyModel(spherical)


def test_torque_limits() -> None:
    m = get_case("go1").model
    assert_close(m.torque_limits(), m.pin_model.effortLimit[6:], EXACT, "Go1 limits")
    assert np.all(np.isinf(get_case("floating_body").model.torque_limits()))
