"""SE(3) exp6/log6/Jexp6/Jlog6 against pinocchio (the oracle) and finite differences."""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from lie import se3
from tests.test_lie_fixtures import FD_STEP, FD_TOL, assert_close, rng, rotvecs

_gen = rng(20)
#: Twists [v; w]: angular parts from the shared sampler (near 0 up to pi - 1e-3), linear parts N(0, 1).
NUS = np.hstack([_gen.normal(size=(200, 3)), rotvecs(_gen)])
E6 = np.eye(6)


def test_exp6_matches_pinocchio() -> None:
    for nu in NUS:
        assert_close(se3.exp6(nu), pin.exp6(pin.Motion(nu)).homogeneous, 1e-14, f"exp6({nu})")


def test_log6_matches_pinocchio_and_inverts_exp6() -> None:
    for nu in NUS:
        T = se3.exp6(nu)
        assert_close(se3.log6(T), nu, 1e-14, "log6(exp6(nu))")
        assert_close(se3.log6(T), pin.log6(pin.SE3(T)).vector, 1e-11, "pin.log6")  # pinocchio's log3 loses ~1e-12 near pi


def test_jexp6_matches_pinocchio() -> None:
    for nu in NUS:
        # pinocchio evaluates closed forms down to small angles, losing up to ~1e-12 to cancellation
        assert_close(se3.Jexp6(nu), pin.Jexp6(pin.Motion(nu)), 1e-11, f"Jexp6({nu})")


def test_jlog6_matches_pinocchio() -> None:
    for nu in NUS:
        T = se3.exp6(nu)
        assert_close(se3.Jlog6(T), pin.Jlog6(pin.SE3(T)), 1e-11, f"Jlog6 at {nu}")  # pinocchio: ~4e-12 near pi


def test_jlog6_inverts_jexp6() -> None:
    for nu in NUS:
        assert_close(se3.Jlog6(se3.exp6(nu)) @ se3.Jexp6(nu), E6, 1e-13, "Jlog6 Jexp6")


def test_jlog6_matches_finite_differences() -> None:
    for nu in NUS:
        T = se3.exp6(nu)
        fd = np.array([(se3.log6(T @ se3.exp6(FD_STEP * e)) - se3.log6(T @ se3.exp6(-FD_STEP * e))) / (2 * FD_STEP) for e in E6]).T
        assert_close(se3.Jlog6(T), fd, FD_TOL, f"Jlog6 at {nu}")
