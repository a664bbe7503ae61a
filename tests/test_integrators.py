"""Integrators on the manifold (issue 4, item 1): order, unit quaternions, tangent-space Jacobians."""
import casadi as ca
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from lie import MRP, UnitQuaternion, axis_angle_to_quat
from models.planar_chain import Cartpole
from models.torque_body import TorqueBody
from trajopt import EULER, IMPLICIT_MIDPOINT, RK3, RK4, DiscreteDynamics, get_integrator

INTEGRATORS = [EULER, RK3, RK4, IMPLICIT_MIDPOINT]


def close(a, b, tol):
    """|a - b| <= tol * max(1, |b|), element-wise."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return np.all(np.abs(a - b) <= tol * np.maximum(1.0, np.abs(b)))


def tumbling_body(rotation=UnitQuaternion):
    """A torque body with body-frame velocity (position, velocity and attitude all coupled)."""
    body = TorqueBody(rotation=rotation, velocity_frame="body", inertia=(1.0, 2.0, 3.0))
    x0 = body.build_state([0.1, 0.2, 0.3], axis_angle_to_quat(np.array([0.3, -0.2, 0.5])), [0.3, -0.2, 0.1], [0.5, -0.4, 0.6])
    return body, x0, np.array([0.2, -0.1, 0.3])


def reference_solution(model, x0, u, T):
    """An independent reference: DOP853 on the raw ODE (quaternion renormalized at the end)."""
    f = model.casadi_function("dynamics")
    sol = solve_ivp(lambda t, x: np.asarray(f(x, u, t)).ravel(), (0.0, T), x0, method="DOP853", rtol=1e-13, atol=1e-13)
    x = sol.y[:, -1].copy()
    if model.rotation is UnitQuaternion:
        x[3:7] /= np.linalg.norm(x[3:7])
    return x


@pytest.mark.parametrize("rotation", [UnitQuaternion, MRP])
@pytest.mark.parametrize("integrator", INTEGRATORS, ids=lambda i: i.name)
def test_convergence_order(integrator, rotation):
    body, x0, u = tumbling_body(rotation)
    T = 1.0
    ref = reference_solution(body, x0, u, T)
    dyn = DiscreteDynamics(body, integrator)
    steps = np.array([8, 16, 32, 64])
    errors = [np.linalg.norm(body.state_error(dyn.rollout(x0, np.tile(u, (n, 1)), T / n)[-1], ref)) for n in steps]
    slope = np.polyfit(np.log(T / steps), np.log(errors), 1)[0]
    assert errors[-1] > 1e-11  # still far above the reference's error, so the slope is meaningful
    assert slope >= integrator.order - 0.15, (integrator.name, errors, slope)


@pytest.mark.parametrize("integrator", INTEGRATORS, ids=lambda i: i.name)
def test_quaternion_stays_unit(integrator):
    body, x0, u = tumbling_body()
    x0[10:13] = [2.0, -1.5, 2.5]  # tumbling over ~20 rad in 10 s, coarse steps
    X = DiscreteDynamics(body, integrator).rollout(x0, np.tile(u, (500, 1)), 0.02)
    assert np.isfinite(X).all()
    assert np.abs(np.linalg.norm(X[:, 3:7], axis=1) - 1).max() <= 1e-13


@pytest.mark.parametrize("integrator", INTEGRATORS, ids=lambda i: i.name)
def test_jacobians_match_finite_differences_in_tangent_space(integrator):
    body, x0, u = tumbling_body()
    dyn = DiscreteDynamics(body, integrator)
    h, t, eps = 0.05, 0.3, 1e-6
    A, Bm = dyn.jacobian(x0, u, t, h)
    x1 = dyn.step(x0, u, t, h)
    m, nu = body.error_dim, body.control_dim
    assert A.shape == (m, m) and Bm.shape == (m, nu)
    A_fd = np.column_stack(
        [(body.state_error(dyn.step(body.apply_dx(x0, eps * e), u, t, h), x1) - body.state_error(dyn.step(body.apply_dx(x0, -eps * e), u, t, h), x1)) / (2 * eps) for e in np.eye(m)]
    )
    B_fd = np.column_stack([(body.state_error(dyn.step(x0, u + eps * e, t, h), x1) - body.state_error(dyn.step(x0, u - eps * e, t, h), x1)) / (2 * eps) for e in np.eye(nu)])
    # central differences: truncation ~eps^2 and round-off ~1e-16 / eps = 1e-10
    assert close(A, A_fd, 1e-8), np.abs(A - A_fd).max()
    assert close(Bm, B_fd, 1e-8), np.abs(Bm - B_fd).max()


def test_rk4_on_a_vector_state_is_the_classic_formula():
    model = Cartpole()
    x, u, h, t = np.array([0.1, 2.5, -0.3, 0.7]), np.array([1.5]), 0.05, 0.0
    f = lambda x: model.dynamics(x, u, t)
    k1 = f(x)
    k2 = f(x + h / 2 * k1)
    k3 = f(x + h / 2 * k2)
    k4 = f(x + h * k3)
    assert close(DiscreteDynamics(model, "rk4").step(x, u, t, h), x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4), 1e-14)


@pytest.mark.parametrize("integrator", [EULER, RK3, RK4], ids=lambda i: i.name)
def test_symbolic_and_numeric_steps_agree(integrator):
    body, x0, u = tumbling_body()
    dyn = DiscreteDynamics(body, integrator)
    xs, us = ca.SX.sym("x", 13), ca.SX.sym("u", 3)
    sym = ca.Function("f", [xs, us], [integrator.step(body, xs, us, 0.0, 0.1)])
    assert close(np.asarray(sym(x0, u)).ravel(), dyn.step(x0, u, 0.0, 0.1), 1e-14)


def test_implicit_midpoint_solves_its_equation():
    body, x0, u = tumbling_body()
    h = 0.1
    x1 = DiscreteDynamics(body, IMPLICIT_MIDPOINT).step(x0, u, 0.0, h)
    # midpoint in the chart of x0: sigma = h C(x0, xm) f(xm), xm = x0 (+) sigma / 2
    sigma = body.state_error(x1, x0)
    xm = body.apply_dx(x0, sigma / 2)
    from trajopt.manifold import chart_velocity

    assert close(sigma, h * chart_velocity(body, x0, xm, body.dynamics(xm, u, h / 2)), 1e-13)


def test_bad_input_is_rejected():
    body, x0, u = tumbling_body()
    dyn = DiscreteDynamics(body, "rk4")
    with pytest.raises(ValueError, match=r"x: expected shape \(13,\), got \(12,\)"):
        dyn.step(x0[:12], u)
    with pytest.raises(ValueError, match="integrator"):
        get_integrator("rk5")
