"""pinocchio's "snap your fingers" tutorial with its own choices (issue 27).

``ContactSimulator(..., impact_model="projection", contact_constraint="distance")`` must be the
tutorial's question 5 exactly: PD torques, every pair checked, pairs closer than 1e-3 m active, a new
active pair projects the velocity by ``v - J^+ J v``, the acceleration is the free one or quadprog's
``min 1/2 (a - a0)^T M (a - a0)`` s.t. ``J a >= -dist``, then ``v += a dt``, ``q += v dt``. The
oracle is that loop written out below with pinocchio and quadprog directly (only the capsule
geometry, tested against coal and sampling in tests/test_capsules.py, is shared).

The hand example of the tutorial drives every joint along ``-1 + cos(10 (t + dt) (1 + i/5))``
(``i`` the joint index); our hand curls toward the palm for positive angles, so the reference
here is its mirror ``1 - cos(...)``. The tutorial's PD ``tau = -Kp (q - q_des) - Kv v`` with
``Kv = 2 sqrt(Kp)`` is critical damping for unit inertias; the capsule hand's phalanges weigh
grams, so each joint gets ``Kp = w^2 M_ii``, ``Kv = 2 sqrt(Kp M_ii)`` (w = 50 rad/s): the same rule
per unit of inertia.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
import quadprog

from models.hand import Hand
from tests.test_lie_fixtures import assert_close
from trajopt.sim import PD, CapsuleCollisions, ContactSimulator, PinNumerics

DT, T, THRESHOLD = 1e-3, 1.0, 1e-3
TUTORIAL = {"impact_model": "projection", "contact_constraint": "distance"}


def hand_example_reference(t: float) -> np.ndarray:
    """The tutorial hand example's joint reference, mirrored to close our hand (module docstring)."""
    return 1.0 - np.cos(10.0 * (t + DT) * (1.0 + np.arange(12) / 5.0))


@pytest.fixture(scope="module")
def setup():
    hand = Hand()
    inertia = np.diag(PinNumerics(hand).mass(hand.curl(1.0)))
    Kp = 50.0**2 * inertia
    controller = PD(hand, hand_example_reference, Kp=Kp, Kv=2 * np.sqrt(Kp * inertia))
    return hand, CapsuleCollisions.from_geometry(hand, hand.geometry_model), controller


def tutorial_question_5(hand, collisions, controller):
    """The tutorial's complete loop, written out (states (K+1, 24), number of projections)."""
    model, data = hand.pin_model, hand.pin_model.createData()
    q, v = np.zeros(12), np.zeros(12)
    previous: set = set()
    states, projections = [np.zeros(24)], 0
    for k in range(int(round(T / DT))):
        tau = controller(k * DT, np.r_[q, v])
        collisions.update(q)  # distances and Jacobians only: the tutorial has no drift term
        near = [p for p in range(collisions.num_pairs) if collisions.pair_distance(p).distance < THRESHOLD]
        active = [collisions.pair_contact(p) for p in near]
        J = np.array([c.jacobian for c in active]).reshape(len(active), 12)
        if any(c.pair not in previous for c in active):  # a new collision: project on the contacts' null space
            v = v - np.linalg.pinv(J) @ (J @ v)
            projections += 1
        M = pin.crba(model, data, q)
        M = np.triu(M) + np.triu(M, 1).T
        b = pin.rnea(model, data, q, v, np.zeros(12))
        a = np.linalg.solve(M, tau - b)
        if active:
            a = quadprog.solve_qp(M, M @ a, J.T, -np.array([c.distance for c in active]))[0]
        v = v + a * DT
        q = q + v * DT
        previous = {c.pair for c in active}
        states.append(np.r_[q, v])
    return np.array(states), projections


@pytest.fixture(scope="module")
def runs(setup):
    """The hand example simulated with the tutorial's choices and with the defaults."""
    hand, collisions, controller = setup
    return {
        name: ContactSimulator(hand, collisions, threshold=THRESHOLD, **options).simulate(np.zeros(24), controller, dt=DT, T=T)
        for name, options in (("tutorial", TUTORIAL), ("default", {}))
    }


def test_hand_example_runs_with_the_tutorial_choices(setup, runs):
    hand, collisions, controller = setup
    result = runs["tutorial"]
    assert result.success, result.message
    expected, projections = tutorial_question_5(hand, collisions, controller)
    assert result.states.shape == expected.shape and result.active.any(axis=0).sum() >= 4
    assert len(result.impacts) == projections > 0
    assert_close(result.states, expected, 1e-9, "our loop with the tutorial's options = the tutorial's loop")
    for impact in result.impacts:  # v+ = v - J^+ J v cancels every active pair's normal velocity
        assert np.abs(impact.normal_velocity_after).max() <= 1e-12 and np.isnan(impact.impulses).all()


def test_default_choices_differ_from_the_tutorial(runs):
    """Same run with the default impact QP and Baumgarte constraint: the same pairs touch, but they
    stay in contact where ``J a >= -d`` lets them bounce off and touch again (measured: 8 impacts
    against the tutorial's 26), no normal velocity after an impact points into a contact, and the
    impulses push; the tutorial's projection also stops pairs that were opening."""
    default, tutorial = runs["default"], runs["tutorial"]
    assert default.success and tutorial.success
    assert set(np.flatnonzero(default.active.any(axis=0))) == set(np.flatnonzero(tutorial.active.any(axis=0)))
    assert len(default.impacts) < len(tutorial.impacts)
    for impact in default.impacts:
        assert impact.normal_velocity_after.min() >= -1e-10 and impact.impulses.min() >= 0.0
    separating = [i for i in tutorial.impacts if (i.normal_velocity_before > 1e-6).any()]
    assert separating  # the projection also stopped pairs that were opening


def test_unknown_choices_are_refused(setup):
    hand, collisions, _ = setup
    with pytest.raises(ValueError, match=r"impact_model: expected one of \('mass_weighted', 'projection'\), got 'pinv'"):
        ContactSimulator(hand, collisions, impact_model="pinv")
    with pytest.raises(ValueError, match="contact_constraint: expected one of"):
        ContactSimulator(hand, collisions, contact_constraint="plain")
