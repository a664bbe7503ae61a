"""SO(3) exponential, logarithm and Jacobians against pinocchio, scipy, finite differences and CasADi."""
from __future__ import annotations

import casadi as ca
import numpy as np
import pinocchio as pin
from scipy.spatial.transform import Rotation

from lie import so3
from tests.test_lie_fixtures import FD_STEP, FD_TOL, assert_close, rng, rotvecs

PHIS = rotvecs(rng(10))
E3 = np.eye(3)


def test_exp_matches_scipy_and_pinocchio() -> None:
    for phi in PHIS:
        R = so3.exp(phi)
        assert_close(R, Rotation.from_rotvec(phi).as_matrix(), 1e-14, "scipy")
        assert_close(R, pin.exp3(phi), 1e-14, "pin.exp3")


def test_log_inverts_exp_up_to_pi() -> None:
    for phi in PHIS:
        assert_close(so3.log(so3.exp(phi)), phi, 1e-14, "log(exp(phi))")
    for angle in (np.pi - 1e-12, np.pi):
        R = so3.exp(angle * np.array([0.6, 0.0, -0.8]))
        phi = so3.log(R)
        assert abs(np.linalg.norm(phi) - angle) < 1e-12
        assert_close(so3.exp(phi), R, 1e-14, "exp(log(R)) at pi")


def test_log_matches_pinocchio() -> None:
    for phi in PHIS:
        assert_close(so3.log(so3.exp(phi)), pin.log3(so3.exp(phi)), 1e-11, "pin.log3")  # pinocchio loses ~1e-12 near pi


def test_right_jacobian_matches_finite_differences() -> None:
    for phi in PHIS:
        R = so3.exp(phi)
        fd = np.array([(so3.log(R.T @ so3.exp(phi + FD_STEP * e)) - so3.log(R.T @ so3.exp(phi - FD_STEP * e))) / (2 * FD_STEP) for e in E3]).T
        assert_close(so3.right_jacobian(phi), fd, FD_TOL, f"Jr at {phi}")


def test_right_jacobian_inv_matches_finite_differences() -> None:
    for phi in PHIS:
        R = so3.exp(phi)
        fd = np.array([(so3.log(R @ so3.exp(FD_STEP * e)) - so3.log(R @ so3.exp(-FD_STEP * e))) / (2 * FD_STEP) for e in E3]).T
        assert_close(so3.right_jacobian_inv(phi), fd, FD_TOL, f"Jr^-1 at {phi}")


def test_left_jacobians_match_finite_differences() -> None:
    for phi in PHIS:
        R = so3.exp(phi)
        fd = np.array([(so3.log(so3.exp(phi + FD_STEP * e) @ R.T) - so3.log(so3.exp(phi - FD_STEP * e) @ R.T)) / (2 * FD_STEP) for e in E3]).T
        assert_close(so3.left_jacobian(phi), fd, FD_TOL, f"Jl at {phi}")
        fd_inv = np.array([(so3.log(so3.exp(FD_STEP * e) @ R) - so3.log(so3.exp(-FD_STEP * e) @ R)) / (2 * FD_STEP) for e in E3]).T
        assert_close(so3.left_jacobian_inv(phi), fd_inv, FD_TOL, f"Jl^-1 at {phi}")


def test_right_jacobian_matches_casadi_derivative() -> None:
    d = ca.SX.sym("d", 3)
    phi = ca.SX.sym("phi", 3)
    rel = so3.log(so3.exp(phi).T @ so3.exp(phi + d))
    F = ca.Function("J", [phi, d], [ca.jacobian(rel, d)])
    for p in PHIS:
        assert_close(so3.right_jacobian(p), F(p, 0).full(), 1e-13, f"Jr at {p}")


def test_jacobian_identities() -> None:
    for phi in PHIS:
        Jr, Jl = so3.right_jacobian(phi), so3.left_jacobian(phi)
        assert_close(Jr @ so3.right_jacobian_inv(phi), E3, 1e-13, "Jr Jr^-1")
        assert_close(Jl @ so3.left_jacobian_inv(phi), E3, 1e-13, "Jl Jl^-1")
        assert_close(Jl, so3.right_jacobian(-phi), 1e-15, "Jl(phi) = Jr(-phi)")
        assert_close(Jl, so3.exp(phi) @ Jr, 1e-14, "Jl = R Jr")


def test_jacobians_match_pinocchio() -> None:
    for phi in PHIS:
        assert_close(so3.right_jacobian(phi), pin.Jexp3(phi), 1e-13, "pin.Jexp3")
        assert_close(so3.right_jacobian_inv(phi), pin.Jlog3(so3.exp(phi)), 1e-11, "pin.Jlog3")  # pinocchio's log3 loses ~1e-12 near pi


def test_series_branch_is_continuous() -> None:
    """The Taylor and closed-form branches agree at the switch angle."""
    axis = np.array([0.36, 0.48, 0.8])
    below, above = (so3.SERIES_ANGLE * (1 - 1e-12)) * axis, (so3.SERIES_ANGLE * (1 + 1e-12)) * axis
    for f in (so3.right_jacobian, so3.right_jacobian_inv):
        assert_close(f(below), f(above), 1e-12, f.__name__)  # the inputs differ by 2e-13, |dJ/dphi| < 1

