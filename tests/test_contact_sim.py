"""trajopt.sim.contact_sim: the hand closing on itself under PD control, impacts, QP failures.

Measured at the time of writing (hand, PD to 1.8 rad per joint, dt = 1 ms,
0.6 s): no penetration (smallest distance +2e-8 m), one impact (the four
distal phalanges reaching the palm together at 0.77 m/s), normal velocity
after it 1e-16 m/s, contact forces in [0, 0.057] N.
"""
from __future__ import annotations

import numpy as np
import pytest

from models.hand import Hand
from tests.test_lie_fixtures import assert_close
from trajopt.sim import Capsule, CapsuleCollisions, ContactQPError, ContactSimulator, PinNumerics, solve_projection_qp

#: Allowed penetration (m): the Baumgarte term keeps pairs apart to round-off, this leaves room for O(dt^2) drift.
PENETRATION_TOL = 1e-6


class ClosingPD:
    """PD with gravity compensation toward a curled hand, gains scaled by the joint inertias (w = 20 rad/s)."""

    def __init__(self, hand: Hand, angle: float = 1.8, w: float = 20.0) -> None:
        self.num = PinNumerics(hand)
        inertia = np.diag(self.num.mass(hand.curl(1.0)))
        self.Kp, self.Kv = w**2 * inertia, 2 * w * inertia
        self.target, self.nq = hand.curl(angle), hand.nq

    def __call__(self, t, x):
        q, v = x[: self.nq], x[self.nq :]
        return -self.Kp * (q - self.target) - self.Kv * v + self.num.gravity(q)


@pytest.fixture(scope="module")
def hand():
    return Hand()


@pytest.fixture(scope="module")
def closing(hand):
    sim = ContactSimulator(hand, CapsuleCollisions.from_geometry(hand, hand.geometry_model))
    return sim, sim.simulate(np.zeros(2 * hand.nq), ClosingPD(hand), dt=1e-3, T=0.6)


def test_hand_closes_without_penetration(closing):
    sim, result = closing
    assert result.success, result.message
    assert result.states.shape == (601, 24) and result.distances.shape == (601, 20) and result.forces.shape == (600, 20)
    assert result.max_penetration <= PENETRATION_TOL
    assert result.active.any(axis=0).sum() >= 4  # every finger touches the palm
    final = result.distances[-1]
    assert final.min() < sim.threshold  # still in contact at the end, pushed by the PD


def test_contact_forces_are_nonnegative_and_only_on_active_pairs(closing):
    _, result = closing
    assert result.forces.min() >= 0.0
    assert np.all(result.forces[~result.active] == 0.0)
    assert result.forces.max() > 1e-3  # the PD pushes the fingertips into the palm


def test_impacts_stop_the_new_contacts(closing):
    _, result = closing
    assert result.impacts
    for impact in result.impacts:
        new = [impact.pairs.index(p) for p in impact.new_pairs]
        approaching = impact.normal_velocity_before[new] < 0
        assert approaching.any()
        assert np.abs(impact.normal_velocity_after[new][approaching]).max() <= 1e-10
        assert impact.normal_velocity_after.min() >= -1e-10  # no active pair approaches after the impact
        assert impact.impulses.min() >= 0.0


def test_acceleration_qp_satisfies_gauss_principle(hand, closing):
    """At a contact state: M (a - a0) = J^T lambda, lambda >= 0, complementarity with the constraints."""
    sim, result = closing
    k = int(np.flatnonzero(result.active.any(axis=1))[-1])
    q, v = result.states[k, :12], result.states[k, 12:]
    tau = result.torques[k]
    _, contacts = sim.contacts(q, v)
    a, lam = sim.acceleration(q, v, tau, contacts)
    J = np.array([c.jacobian for c in contacts])
    M, a0 = sim.numerics.mass(q), sim.numerics.aba(q, v, tau)
    assert_close(M @ (a - a0), J.T @ lam, 1e-9, "M (a - a0) = J^T lambda")
    rhs = -sim.stiffness * np.array([c.distance for c in contacts]) - sim.damping * (J @ v) - np.array([c.drift for c in contacts])
    slack = J @ a - rhs
    assert slack.min() >= -1e-9 and np.abs(slack * lam).max() <= 1e-9


def test_impact_with_one_contact_matches_the_closed_form(hand):
    """One approaching contact: v+ = v - M^-1 J^T (J v) / (J M^-1 J^T) (kinetic-energy-weighted projection)."""
    sim = ContactSimulator(hand, CapsuleCollisions.from_geometry(hand, hand.geometry_model))
    q = hand.curl(1.47)
    _, contacts = sim.contacts(q, np.zeros(12))
    contacts = contacts[:1]
    J = contacts[0].jacobian
    v = -0.5 * J / (J @ J)  # J v = -0.5
    v_plus, impulse = sim.impact(q, v, contacts)
    Minv_J = np.linalg.solve(sim.numerics.mass(q), J)
    assert_close(v_plus, v - Minv_J * (J @ v) / (J @ Minv_J), 1e-10, "v+")
    assert abs(J @ v_plus) <= 1e-12 and impulse[0] > 0
    M = sim.numerics.mass(q)
    assert v_plus @ M @ v_plus < v @ M @ v  # an inelastic impact loses kinetic energy


def test_infeasible_qp_is_reported(hand):
    with pytest.raises(ContactQPError, match="inconsistent"):
        solve_projection_qp(np.eye(2), np.zeros(2), np.array([[1.0, 0.0], [-1.0, 0.0]]), np.array([1.0, 1.0]))
    # a static probe sunk into the (fixed) palm: its pair asks for d_ddot > 0 with a zero Jacobian
    palm = CapsuleCollisions.from_geometry(hand, hand.geometry_model).capsules[0]
    probe = Capsule("probe", "universe", np.array([-0.012, 0.0, 0.0]), np.array([-0.012, 0.0, 0.02]), 0.01)
    coll = CapsuleCollisions(hand, [palm, probe], [("palm_distal", "probe")])
    result = ContactSimulator(hand, coll).simulate(np.zeros(24), lambda t, x: np.zeros(12), dt=1e-3, T=0.01)
    assert result.status == "qp_infeasible" and not result.success
    assert "step 0" in result.message and result.states.shape == (1, 24)


def test_contact_simulator_rejects_bad_arguments(hand):
    coll = CapsuleCollisions.from_geometry(hand, hand.geometry_model)
    with pytest.raises(ValueError, match="threshold"):
        ContactSimulator(hand, coll, threshold=-1.0)
    with pytest.raises(ValueError, match="collisions: built for a different model"):
        ContactSimulator(Hand(), coll)
    with pytest.raises(ValueError, match=r"x0: expected shape \(24,\)"):
        ContactSimulator(hand, coll).simulate(np.zeros(12), lambda t, x: np.zeros(12), dt=1e-3, T=0.01)
