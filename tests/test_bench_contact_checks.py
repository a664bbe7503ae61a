"""bench/contact_checks.py: the friction and torque checks every row of bench/go1_trot.py is measured with."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

_PATH = Path(__file__).resolve().parents[1] / "bench" / "contact_checks.py"
_SPEC = importlib.util.spec_from_file_location("contact_checks", _PATH)
checks = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(checks)


def test_friction_violation_by_hand():
    mu = 0.5
    assert checks.friction_violation(np.array([[5.0, -5.0, 10.0]]), mu) == 0.0  # on the pyramid's edge
    assert not np.signbit(checks.friction_violation(np.zeros((4, 2, 3)), mu))  # swing feet: +0.0, printed as such
    assert checks.friction_violation(np.array([[7.0, 1.0, 10.0]]), mu) == pytest.approx(2.0, abs=1e-14)
    assert checks.friction_violation(np.array([[1.0, -6.5, 10.0]]), mu) == pytest.approx(1.5, abs=1e-14)
    assert checks.friction_violation(np.array([[0.0, 0.0, -3.0]]), mu) == pytest.approx(3.0, abs=1e-14)  # pulling on the ground
    # the worst of several feet and knots, whatever the array's leading shape
    forces = np.array([[[0.0, 0.0, 10.0], [6.0, 0.0, 10.0]], [[0.0, 0.0, 0.0], [0.0, 0.0, 20.0]]])
    assert checks.friction_violation(forces, mu) == pytest.approx(1.0, abs=1e-14)


def test_friction_violation_is_the_pyramid_halfspace_excess():
    """Against the pyramid as half-spaces ``A f <= 0`` (crocoddyl's FrictionCone rows for 4 facets, not inner)."""
    rng = np.random.default_rng(0)
    mu = 0.3
    A = np.array([[1.0, 0.0, -mu], [-1.0, 0.0, -mu], [0.0, 1.0, -mu], [0.0, -1.0, -mu], [0.0, 0.0, -1.0]])
    forces = rng.normal(scale=20.0, size=(500, 3)) + [0.0, 0.0, 30.0]
    excess = np.maximum((forces @ A.T).max(axis=1), 0.0)
    assert 0 < np.count_nonzero(excess) < len(forces)  # the sample has forces inside and outside
    for f, e in zip(forces, excess):
        assert checks.friction_violation(f[None], mu) == pytest.approx(e, abs=1e-12)


def test_torque_checks_by_hand():
    limits = np.array([20.0, 30.0])
    torques = np.array([[19.0, -31.5], [-20.0, 10.0]])
    assert checks.torque_violation(torques, limits) == pytest.approx(1.5)
    assert checks.torque_ratio(torques, limits) == pytest.approx(31.5 / 30.0)
    assert checks.torque_violation(np.array([[20.0, -30.0]]), limits) == 0.0
    assert checks.torque_violation(np.zeros((0, 2)), limits) == 0.0


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: checks.friction_violation(np.zeros((3, 2)), 0.5), "forces"),
        (lambda: checks.friction_violation(np.zeros((3, 3)), -0.1), "mu"),
        (lambda: checks.torque_violation(np.zeros((3, 12)), np.ones(11)), "torques, limits"),
        (lambda: checks.torque_ratio(np.zeros((3, 2)), np.ones((2, 1))), "torques, limits"),
    ],
)
def test_bad_shapes_name_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()
