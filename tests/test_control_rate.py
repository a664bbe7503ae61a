"""Control-rate cost ``1/2 integral udot^T W udot dt`` of each transcription's control interpolant."""
import casadi as ca
import numpy as np
import pytest

from models import Cartpole
from trajopt import HermiteSimpson, MultipleShooting, Problem, Trapezoidal

RNG = np.random.default_rng(5)


def zero_running_cost(model):
    x, u, p = ca.SX.sym("x", model.state_dim), ca.SX.sym("u", model.control_dim), ca.SX.sym("p", 0)
    return ca.Function("zero", [x, u, p], [ca.SX(0)])


def rate_integral(interpolant, args, h, W, n=4001):
    """Reference: the rate of the transcription's own control interpolant, by central
    differences, integrated with the trapezoid rule on a fine grid."""
    taus = np.linspace(0.0, h, n)
    us = np.array([np.asarray(interpolant(*args, tau, np.zeros(0), np.zeros(0))[1]).ravel() for tau in taus])  # no dynamics parameters
    du = np.gradient(us, taus, axis=0, edge_order=2)
    integrand = 0.5 * np.einsum("ki,ij,kj->k", du, W, du)
    return float(np.sum(0.5 * (integrand[1:] + integrand[:-1]) * np.diff(taus)))


@pytest.mark.parametrize("transcription", [Trapezoidal(), HermiteSimpson()], ids=lambda t: t.name)
def test_rate_cost_is_the_integral_of_the_interpolated_control_rate(transcription):
    model = Cartpole()
    W = np.array([[2.0]])
    fn = transcription.interval_function(model, zero_running_cost(model), W)
    nz = transcription.interval_size(model)
    x, x_next, u, u_next = RNG.normal(size=4), RNG.normal(size=4), RNG.normal(size=1), RNG.normal(size=1)
    z = RNG.normal(size=nz)
    h = 0.1
    values = {"x": x, "u": u, "z": z, "x_next": x_next, "u_next": u_next, "f": np.zeros(4), "f_next": np.zeros(4), "t": 0.0, "h": h}
    out = fn(**{k: v for k, v in values.items() if k in fn.name_in()}, **{k: np.zeros(0) for k in fn.name_in() if k.startswith("p")})
    reference = rate_integral(transcription.interpolant(model), [x, u, z, x_next, u_next, 0.0, h], h, W)
    assert abs(float(out["cost"]) - reference) <= 1e-6 * max(1.0, reference)  # fine-grid quadrature error ~1e-8


def test_multiple_shooting_refuses_a_rate_cost():
    model = Cartpole()
    with pytest.raises(ValueError, match="control_rate"):
        MultipleShooting().interval_function(model, zero_running_cost(model), np.eye(1))


def test_penalize_control_rate_validates_the_weight():
    problem = Problem(Cartpole(), N=11, tf=1.0, x0=np.zeros(4))
    with pytest.raises(ValueError, match="W: expected shape"):
        problem.penalize_control_rate(np.ones(3))
    assert problem.penalize_control_rate(3.0 * np.ones(1)).control_rate_weight.shape == (1, 1)
