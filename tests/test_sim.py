"""trajopt.sim: manifold integration (pinocchio as oracle), closed-loop simulation, controllers.

Measured at the time of writing (RK4, 2 s): energy drift 1.5e-7 J for the
hand (|E0| = 8.3e-4 J, free fingers under gravity) and 4.7e-8 J for the
manipulator (|E0| = 51 J) at dt = 1e-3; computed-torque tracking error of a
sinusoid 5.9e-9 rad after the transient (what is left of the initial 0.2 rad
offset at t = 2 s) with the controller evaluated at every stage, and 4.6e-4,
2.3e-4, 1.2e-4 rad with the controller held per step at dt = 4, 2, 1 ms
(slopes 0.99, 0.99); 0.06 rad with the diagonal mass matrix.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from models.hand import Hand
from models.manipulator import Manipulator
from models.pinocchio_builders import floating_body_model
from models.multibody_model import MultibodyModel
from models.quadrotor import Quadrotor
from models.wheeled_biped import WheeledBiped
from tests.test_lie_fixtures import assert_close
from trajopt.sim import PD, ComputedTorque, ConstantTorque, JointFriction, PinNumerics, TrackingController, integrate, lqr_gains, mechanical_energy, pd_gains, simulate

ENERGY_TOL = 1e-6


@pytest.fixture(scope="module")
def hand():
    return Hand()


@pytest.fixture(scope="module")
def arm():
    return Manipulator()


def _mixed_model() -> pin.Model:
    """Free-flyer, spherical, unbounded revolute, revolute and prismatic joints in one chain."""
    model = pin.Model()
    rng = np.random.default_rng(3)
    parent = 0
    for name, joint in [("ff", pin.JointModelFreeFlyer()), ("sph", pin.JointModelSpherical()), ("rub", pin.JointModelRUBY()), ("rx", pin.JointModelRX()), ("pz", pin.JointModelPZ())]:
        placement = pin.SE3(pin.exp3(rng.standard_normal(3)), rng.standard_normal(3))
        parent = model.addJoint(parent, joint, placement, name)
    return model


def _same_configuration(model: pin.Model, a: np.ndarray, b: np.ndarray) -> float:
    """Largest difference of two pinocchio configurations, quaternions compared up to sign."""
    diff = np.abs(a - b)
    for jid in range(1, model.njoints):
        joint = model.joints[jid]
        start = {"JointModelFreeFlyer": 3, "JointModelSpherical": 0}.get(joint.shortname())
        if start is not None:
            s = slice(joint.idx_q + start, joint.idx_q + start + 4)
            diff[s] = np.minimum(np.abs(a[s] - b[s]), np.abs(a[s] + b[s]))
    return float(diff.max())


# ------------------------------------------------------------------ integrate
@pytest.mark.parametrize("make", [_mixed_model, lambda: WheeledBiped().pin_model, lambda: floating_body_model()], ids=["mixed", "biped", "body"])
def test_integrate_matches_pinocchio(make):
    model = make()
    num = PinNumerics(model)
    rng = np.random.default_rng(0)
    for _ in range(20):
        q_pin = pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq))
        v, dt = 2.0 * rng.standard_normal(model.nv), rng.uniform(0.01, 1.5)
        ours = num.to_pinocchio(integrate(model, num.from_pinocchio(q_pin), v, dt))
        assert _same_configuration(model, ours, pin.integrate(model, q_pin, v * dt)) <= 1e-12


def test_integrate_accepts_multibody_model_and_keeps_unit_quaternions():
    biped = WheeledBiped()
    x = biped.init_state()
    q = x[: biped.nq]
    for _ in range(1000):
        q = integrate(biped, q, np.linspace(-3, 3, biped.nv), 0.01)
    assert abs(np.linalg.norm(q[3:7]) - 1) <= 1e-14


def test_integrate_rejects_bad_input(arm):
    with pytest.raises(ValueError, match=r"q: expected shape \(6,\)"):
        integrate(arm, np.zeros(5), np.zeros(6), 0.1)
    with pytest.raises(ValueError, match="v: contains NaN"):
        integrate(arm, np.zeros(6), np.full(6, np.nan), 0.1)
    body = floating_body_model()
    with pytest.raises(ValueError, match="quaternion"):
        integrate(body, np.r_[0, 0, 0, 2.0, 0, 0, 0], np.zeros(6), 0.1)
    planar = pin.Model()
    planar.addJoint(0, pin.JointModelPlanar(), pin.SE3.Identity(), "planar")
    with pytest.raises(ValueError, match="JointModelPlanar is not supported"):
        integrate(planar, pin.neutral(planar), np.zeros(3), 0.1)
    with pytest.raises(ValueError, match="model: expected a pinocchio.Model"):
        integrate(object(), np.zeros(6), np.zeros(6), 0.1)


# ------------------------------------------------------------------- energy
def _random_state(model: MultibodyModel, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.concatenate([0.3 * rng.standard_normal(model.nq), rng.standard_normal(model.nv)])


@pytest.mark.parametrize("name", ["hand", "arm"])
def test_free_motion_conserves_energy(name, request):
    model = request.getfixturevalue(name)
    result = simulate(model, _random_state(model, 1), ConstantTorque(np.zeros(model.nv)), dt=1e-3, T=2.0)
    assert result.success and result.states.shape == (2001, model.nx)
    E = mechanical_energy(model, result.states)
    assert np.abs(E - E[0]).max() <= ENERGY_TOL * max(1.0, abs(E[0]))


def test_free_floating_body_conserves_energy_and_momentum():
    """Torque-free rigid body (chart path of the floating base): energy and world angular momentum."""
    body = MultibodyModel(floating_body_model(2.0, (0.1, 0.2, 0.3)), name="body")
    x0 = np.r_[0, 0, 0, 1.0, 0, 0, 0, 0.5, -0.2, 0.1, 0.3, 2.0, -0.5]
    result = simulate(body, x0, ConstantTorque(np.zeros(6)), dt=2e-3, T=1.0)
    E = mechanical_energy(body, result.states)
    assert np.abs(E - E[0]).max() <= ENERGY_TOL * max(1.0, abs(E[0]))
    num = PinNumerics(body)
    inertia = np.diag([0.1, 0.2, 0.3])
    L = []
    for x in result.states[::100]:
        num.update_kinematics(x[:7])
        L.append(num.data.oMi[1].rotation @ inertia @ x[10:13])
    assert_close(np.array(L), np.tile(L[0], (len(L), 1)), 1e-9, "world angular momentum")


@pytest.mark.parametrize("name, Kf", [("hand", 1e-5), ("arm", 1.0)])
def test_friction_dissipates_energy_monotonically(name, Kf, request):
    model = request.getfixturevalue(name)
    result = simulate(model, _random_state(model, 2), JointFriction(model, Kf), dt=1e-3, T=1.0)
    E = mechanical_energy(model, result.states)
    assert np.diff(E).max() <= 1e-12 * max(1.0, abs(E[0]))
    assert E[-1] < E[0] - 1e-3 * max(1e-3, abs(E[0]))


def test_pd_with_gravity_compensation_converges(arm):
    target = np.array([0.3, -0.2, 0.5, 0.4, -0.3, 0.2])
    pd = PD(arm, target, Kp=200.0, Kv=60.0, gravity_compensation=True)
    result = simulate(arm, np.zeros(12), pd, dt=2e-3, T=8.0)
    assert_close(result.states[-1], np.r_[target, np.zeros(6)], 1e-6, "final state")
    without = simulate(arm, np.zeros(12), PD(arm, target, Kp=200.0, Kv=60.0), dt=2e-3, T=8.0)
    assert np.abs(without.states[-1, :6] - target).max() > 1e-3  # gravity leaves a steady-state error


def test_pd_default_damping_is_two_sqrt_kp(arm):
    pd = PD(arm, np.zeros(6), Kp=np.array([1.0, 4.0, 9.0, 16.0, 25.0, 36.0]))
    assert_close(pd.Kv, np.diag([2.0, 4.0, 6.0, 8.0, 10.0, 12.0]), 1e-14, "Kv")
    A = np.random.default_rng(0).standard_normal((6, 6))
    full = PD(arm, np.zeros(6), Kp=A @ A.T + np.eye(6))
    assert_close(full.Kv, full.Kv.T, 1e-12, "Kv symmetric")
    assert_close(0.25 * full.Kv @ full.Kv, A @ A.T + np.eye(6), 1e-12, "(Kv / 2)^2 = Kp")


def test_pd_on_floating_base_uses_manifold_error():
    """A PD on all six base coordinates brings a free body to a rotated target pose."""
    body = MultibodyModel(floating_body_model(1.0, (1.0, 1.0, 1.0)), name="body")
    target = np.r_[0.3, -0.2, 0.1, np.cos(1.2), np.sin(1.2) * np.array([0.6, 0.0, 0.8])]
    result = simulate(body, body.init_state(), PD(body, target, Kp=25.0, gravity_compensation=True), dt=1e-2, T=6.0)
    err = body.state_error(result.states[-1], np.r_[target, np.zeros(6)])
    assert np.abs(err).max() <= 1e-6


# -------------------------------------------------------- computed torque
AMPLITUDE, OMEGA = 0.5, 2.0


def _sinusoid(t):
    phase = np.linspace(0, 1, 6)
    return (
        AMPLITUDE * np.sin(OMEGA * t + phase),
        AMPLITUDE * OMEGA * np.cos(OMEGA * t + phase),
        -AMPLITUDE * OMEGA**2 * np.sin(OMEGA * t + phase),
    )


def _tracking_error(arm, control, dt, mass_matrix=None):
    ct = ComputedTorque(arm, lambda t: _sinusoid(t)[0], Kp=100.0, v_des=lambda t: _sinusoid(t)[1], a_des=lambda t: _sinusoid(t)[2], mass_matrix=mass_matrix)
    x0 = np.r_[_sinusoid(0.0)[0] + 0.2, np.zeros(6)]
    result = simulate(arm, x0, ct, dt=dt, T=3.0, control=control)
    late = result.times >= 2.0  # transient exp(-10 t)(1 + 10 t) * 0.2 < 1e-7 after 2 s
    return max(np.abs(x[:6] - _sinusoid(t)[0]).max() for t, x in zip(result.times[late], result.states[late]))


def test_computed_torque_evaluated_at_every_stage_tracks_exactly(arm):
    assert _tracking_error(arm, "stage", 4e-3) < 1e-6


def test_computed_torque_held_per_step_converges_at_first_order(arm):
    dts = np.array([4e-3, 2e-3, 1e-3])
    errors = np.array([_tracking_error(arm, "hold", dt) for dt in dts])
    slopes = np.diff(np.log(errors)) / np.diff(np.log(dts))
    assert np.all(np.abs(slopes - 1.0) < 0.1), f"errors {errors}, slopes {slopes}"
    assert errors[-1] > 1e-5  # first order: far above the per-stage error


def test_computed_torque_with_diagonal_mass_matrix_is_approximate(arm):
    err = _tracking_error(arm, "stage", 4e-3, mass_matrix="diagonal")
    assert 1e-4 < err < 0.2


# -------------------------------------------------------- engines and errors
def test_pinocchio_and_casadi_engines_agree():
    biped = WheeledBiped()
    x0 = biped.init_state()
    x0[biped.nq :] = np.linspace(-1, 1, biped.nv)
    inertia = np.diag(PinNumerics(biped).mass(x0[: biped.nq]))
    pd = PD(biped, x0[: biped.nq], Kp=100.0 * inertia, Kv=20.0 * inertia, gravity_compensation=True)
    fast = simulate(biped, x0, pd, dt=2e-3, T=0.1, engine="pinocchio")
    slow = simulate(biped, x0, pd, dt=2e-3, T=0.1, engine="casadi")
    assert_close(fast.states, slow.states, 1e-9, "pinocchio vs casadi engine")


def test_simulate_rejects_bad_arguments(arm):
    zero = ConstantTorque(np.zeros(6))
    with pytest.raises(ValueError, match=r"controller: expected an output of shape \(6,\), got \(5,\)"):
        simulate(arm, np.zeros(12), ConstantTorque(np.zeros(5)), 1e-2, 0.1)
    with pytest.raises(ValueError, match="T: expected a whole number of steps"):
        simulate(arm, np.zeros(12), zero, 0.03, 0.1)
    with pytest.raises(ValueError, match=r"x0: expected shape \(12,\)"):
        simulate(arm, np.zeros(11), zero, 1e-2, 0.1)
    with pytest.raises(ValueError, match="control: expected one of"):
        simulate(arm, np.zeros(12), zero, 1e-2, 0.1, control="zoh")
    with pytest.raises(ValueError, match="integrator: simulate needs an explicit method"):
        simulate(arm, np.zeros(12), zero, 1e-2, 0.1, integrator="implicit_midpoint")
    with pytest.raises(ValueError, match="engine: 'pinocchio' needs a MultibodyModel"):
        simulate(Quadrotor(), np.r_[0, 0, 0, 1.0, np.zeros(9)], lambda t, x: np.zeros(4), 1e-2, 0.1, engine="pinocchio")
    with pytest.raises(ValueError, match=r"x0\[3:7\] \(quaternion\)"):
        simulate(Quadrotor(), np.r_[0, 0, 0, 2.0, np.zeros(9)], lambda t, x: np.zeros(4), 1e-2, 0.1)
    with pytest.raises(ValueError, match="Kp: expected a scalar"):
        PD(arm, np.zeros(6), Kp=np.ones(5))


def test_unstable_simulation_reports_divergence(arm):
    result = simulate(arm, np.r_[np.zeros(6), np.ones(6)], JointFriction(arm, 1e4), dt=1e-2, T=2.0)
    assert result.status == "diverged" and not result.success
    assert np.isfinite(result.states).all() and result.times.shape[0] == result.states.shape[0]


# ----------------------------------------------------------------- tracking
def test_tracking_controller_with_pd_gains_follows_knots(arm):
    """Knots of the sinusoid with inverse-dynamics feedforward; PD feedback removes the initial offset."""
    times = np.linspace(0.0, 3.0, 301)
    states = np.array([np.r_[_sinusoid(t)[0], _sinusoid(t)[1]] for t in times])
    num = PinNumerics(arm)
    controls = np.array([num.rnea(x[:6], x[6:], _sinusoid(t)[2]) for t, x in zip(times, states)])
    ctrl = TrackingController(arm, (times, states, controls), pd_gains(arm, 400.0, 80.0))
    result = simulate(arm, states[0] + np.r_[0.1 * np.ones(6), np.zeros(6)], ctrl, dt=2e-3, T=3.0)
    late = result.times >= 2.0
    err = max(np.abs(x[:6] - _sinusoid(t)[0]).max() for t, x in zip(result.times[late], result.states[late]))
    assert err < 2e-3  # knots 10 ms apart: the interpolated feedforward is off by O(h^2)


def test_lqr_tracking_of_a_quadrotor_hover():
    quad = Quadrotor()
    hover = np.r_[0, 0, 1.0, 1.0, 0, 0, 0, np.zeros(6)]
    times = np.linspace(0.0, 4.0, 41)
    states, controls = np.tile(hover, (41, 1)), np.tile(quad.hover_control(), (41, 1))
    K = lqr_gains(quad, times, states, controls, Q=np.r_[np.full(6, 10.0), np.ones(6)], R=0.1)
    assert K.shape == (40, 4, 12)
    ctrl = TrackingController(quad, (times, states, controls), K)
    tilt = np.r_[np.cos(0.15), np.sin(0.15), 0, 0]
    x0 = np.r_[0.2, -0.1, 0.9, tilt, np.zeros(6)]
    result = simulate(quad, x0, ctrl, dt=1e-2, T=4.0)
    assert np.abs(quad.state_error(result.states[-1], hover)).max() < 2e-3
    assert np.abs(quad.state_error(result.states[0], hover)).max() > 0.1
    with pytest.raises(ValueError, match=r"K: expected a finite gain of shape \(4, 12\)"):
        TrackingController(quad, (times, states, controls), np.zeros((4, 11)))
