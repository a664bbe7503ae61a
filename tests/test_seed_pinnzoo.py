"""PinnZoo.jl forms of issue 27: conversions extended in place, kinematics derivatives w.r.t. the whole state.

Oracles: pinocchio's frame Jacobians and velocities, central differences along ``apply_dx``, and the
name-by-name permutation written out here.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from models import Go1
from models.orders import ConversionIndices, StateOrder, generate_conversions
from tests.test_lie_fixtures import assert_close

FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")


@pytest.fixture(scope="module")
def go1():
    return Go1()


def _states(model, n, seed):
    rng = np.random.default_rng(seed)
    return [model.randn_state(rng) for _ in range(n)]


# ---------------------------------------------------------------- generate_conversions
def test_generate_conversions_extends_an_existing_set(go1):
    conversions = dict(go1.conversions)
    kept = conversions[("nominal", "pinocchio")]
    nominal = go1.orders["nominal"]
    # a new order: the legs listed hind first, and the base quaternion last
    legs = [name for name in nominal.config_names[7:]]
    hind_first = legs[6:] + legs[:6]
    mine = StateOrder(tuple(nominal.config_names[:3]) + tuple(hind_first) + tuple(nominal.config_names[3:7]), tuple(nominal.vel_names[:6]) + tuple(hind_first), tuple(hind_first))
    orders = {**go1.orders, "mine": mine}
    returned = generate_conversions(orders, conversions)
    assert returned is conversions  # extended in place, as PinnZoo's generate_conversions(orders, conversions)
    assert conversions[("nominal", "pinocchio")] is kept  # existing pairs are not recomputed
    assert {("mine", o) for o in orders} | {(o, "mine") for o in orders} <= set(conversions)
    x = go1.randn_state(np.random.default_rng(3))
    out = go1.change_order(x, "nominal", "mujoco")  # the model's own pairs still work
    idx = conversions[("nominal", "mine")]
    mine_x = x[idx.state]
    for i, name in enumerate(mine.config_names):  # each entry lands where its name is
        assert mine_x[i] == x[nominal.config_names.index(name)]
    for i, name in enumerate(mine.vel_names):
        assert mine_x[go1.nq + i] == x[go1.nq + nominal.vel_names.index(name)]
    assert_close(x[idx.state][conversions[("mine", "nominal")].state], x, 0.0, "round trip")
    assert out.shape == x.shape


def test_generate_conversions_from_scratch_recomputes(go1):
    stale = ConversionIndices(*(np.zeros(1, dtype=int) for _ in range(5)))
    conversions = {("nominal", "pinocchio"): stale}
    generate_conversions(go1.orders, conversions)
    assert conversions[("nominal", "pinocchio")] is stale
    generate_conversions(go1.orders, conversions, from_scratch=True)
    assert np.array_equal(conversions[("nominal", "pinocchio")].config, go1.conversions[("nominal", "pinocchio")].config)
    fresh = generate_conversions(go1.orders)
    assert set(fresh) == {(a, b) for a in go1.orders for b in go1.orders}
    with pytest.raises(TypeError, match="orders: expected a mapping"):
        generate_conversions([go1.orders["nominal"]])
    with pytest.raises(TypeError, match="conversions: expected a dict"):
        generate_conversions(go1.orders, [])
    with pytest.raises(ValueError, match="config_names: orders name different entries"):
        generate_conversions({"a": go1.orders["nominal"], "b": StateOrder(("x",), ("x",))})


# ---------------------------------------------------------------- kinematics derivatives
def test_kinematics_jacobian_is_taken_with_respect_to_the_state(go1):
    pm, data = go1.pin_model, go1.pin_model.createData()
    fids = [pm.getFrameId(f) for f in FEET]
    for x in _states(go1, 5, 11):
        J = go1.kinematics_jacobian(x)
        assert J.shape == (3 * go1.nc, go1.nx)
        assert_close(J[:, : go1.nq], go1.kinematics_jacobian(x, wrt="q"), 0.0, "configuration block")
        assert not J[:, go1.nq :].any()  # the kinematics do not depend on the velocity
        q_pin = go1.change_order(x[: go1.nq], "nominal", "pinocchio")
        pin.framesForwardKinematics(pm, data, q_pin)
        J_pin = np.vstack([pin.computeFrameJacobian(pm, data, q_pin, f, pin.LOCAL_WORLD_ALIGNED)[:3] for f in fids])
        assert_close(J @ go1.error_jacobian(x), np.hstack([J_pin, np.zeros((12, go1.nv))]), 1e-10, "tangent contraction")
        xdot = go1.dynamics(x, np.zeros(go1.nu))  # J xdot is the feet's world velocity (xdot's qdot = E v)
        assert_close(J @ xdot, J_pin @ x[go1.nq :], 1e-10, "J xdot")


@pytest.mark.parametrize("wrt", ["x", "q"])
def test_kinematics_hvp_matches_differences_of_the_jacobian(go1, wrt):
    rng = np.random.default_rng(5)
    h = 1e-6
    n = go1.nx if wrt == "x" else go1.nq
    for x in _states(go1, 4, 12):
        dx, d = rng.normal(size=n), rng.normal(size=2 * go1.nv)
        H = go1.kinematics_hvp(x, dx, wrt=wrt)
        assert H.shape == (3 * go1.nc, n)
        jdx = lambda y: go1.kinematics_jacobian(y, wrt=wrt) @ dx  # noqa: E731
        fd = (jdx(go1.apply_dx(x, h * d)) - jdx(go1.apply_dx(x, -h * d))) / (2 * h)
        assert_close(H @ (go1.error_jacobian(x) @ d)[:n], fd, 1e-6, f"kinematics_hvp wrt {wrt}")
    with pytest.raises(ValueError, match="wrt: expected 'x'"):
        go1.kinematics_jacobian(x, wrt="v")
    with pytest.raises(ValueError, match=r"dx: expected shape \(37,\)"):
        go1.kinematics_hvp(x, np.zeros(go1.nq))


def test_dynamics_in_pinnzoo_form(go1):
    """dynamics(x, tau, tangent=True) = [v; vdot] = error_jacobian_T(x) @ xdot (PinnZoo's form, not the default),
    and its derivatives against central differences along apply_dx."""
    rng = np.random.default_rng(6)
    h = 1e-6
    for x in _states(go1, 3, 13):
        u, d = rng.normal(size=go1.nu), rng.normal(size=2 * go1.nv)
        f = go1.dynamics(x, u, tangent=True)
        assert f.shape == (2 * go1.nv,)
        assert_close(f, go1.error_jacobian_T(x) @ go1.dynamics(x, u), 1e-12, "[v; vdot]")
        A, Bu = go1.dynamics_deriv(x, u, tangent=True)
        fd = (go1.dynamics(go1.apply_dx(x, h * d), u, tangent=True) - go1.dynamics(go1.apply_dx(x, -h * d), u, tangent=True)) / (2 * h)
        assert_close(A @ go1.error_jacobian(x) @ d, fd, 1e-6, "d[v; vdot]/dx")
        e = rng.normal(size=go1.nu)
        assert_close(Bu @ e, (go1.dynamics(x, u + h * e, tangent=True) - go1.dynamics(x, u - h * e, tangent=True)) / (2 * h), 1e-6, "d/du")
