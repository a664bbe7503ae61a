"""Every model class has PinnZoo.jl's error-state maps under the same names (issue 27).

``state_error``, ``apply_dx`` and its alias ``apply_Δx``, ``error_jacobian`` and ``error_jacobian_T``
exist on every concrete model class of :mod:`models` (the list is read from the package, so a new
class without a factory here fails), agree with each other, and their Jacobians match central
differences: ``error_jacobian(x) = d apply_dx(x, d)/dd`` at 0, ``error_jacobian_T(x) = d state_error(y, x)/dy`` at x.
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil

import numpy as np
import pytest

import models
from lie import ROTATIONS
from models import (
    Cartpole,
    DoubleCartpole,
    DoublePendulum,
    FloatingBaseModel,
    FloatingBody,
    Go1,
    Go2,
    Hand,
    Humanoid,
    LeggedRobot,
    Manipulator,
    MultibodyModel,
    MultibodyQuadrotor,
    Pendulum,
    Quadrotor,
    WheeledBiped,
)
from models.contact_dynamics import ContactDynamics
from models.model import Model
from models.torque_body import TorqueBody
from tests.test_lie_fixtures import assert_close, central_diff

FEET = ["FL_foot", "FR_foot", "RL_foot", "RR_foot"]
#: A factory per concrete model class (several for the rigid bodies: one per attitude parameterization).
FACTORIES = {
    Pendulum: [Pendulum],
    DoublePendulum: [DoublePendulum],
    Cartpole: [Cartpole],
    DoubleCartpole: [DoubleCartpole],
    Quadrotor: [lambda R=R: Quadrotor(rotation=R) for R in ROTATIONS],
    TorqueBody: [lambda: TorqueBody(rotation="euler_zyx")],
    MultibodyModel: [lambda: MultibodyModel(models.pinocchio_builders.cartpole_model(), name="cartpole_mb")],
    FloatingBody: [FloatingBody],
    MultibodyQuadrotor: [MultibodyQuadrotor],
    Hand: [Hand],
    Manipulator: [Manipulator],
    WheeledBiped: [WheeledBiped],
    Humanoid: [Humanoid],
    Go1: [Go1],
    Go2: [Go2],
    LeggedRobot: [lambda: LeggedRobot.from_robot_data("solo12")],
    FloatingBaseModel: [lambda: FloatingBaseModel(Go1(), point_contacts=FEET)],
    ContactDynamics: [lambda: ContactDynamics(Go1(), "inverse")],
}
CASES = [(cls, k, f) for cls, fs in FACTORIES.items() for k, f in enumerate(fs)]


def concrete_model_classes() -> set:
    found = set()
    for info in pkgutil.walk_packages(models.__path__, "models."):
        for _, cls in inspect.getmembers(importlib.import_module(info.name), inspect.isclass):
            if issubclass(cls, Model) and not inspect.isabstract(cls) and cls.__module__.startswith("models."):
                found.add(cls)
    return found


def test_every_model_class_is_covered():
    assert concrete_model_classes() == set(FACTORIES)


def _state(model, rng) -> np.ndarray:
    """A random valid state: tangent noise applied to a valid base state."""
    if hasattr(model, "init_state"):
        base = model.init_state()
    elif isinstance(model, ContactDynamics):
        base = model.robot.init_state()
    elif hasattr(model, "build_state"):
        base = model.build_state(np.zeros(3), np.eye(3), np.zeros(3), np.zeros(3))
    else:
        base = np.zeros(model.state_dim)
    return model.apply_dx(base, 0.3 * rng.normal(size=model.error_dim))


@pytest.mark.parametrize("cls, k, factory", CASES, ids=[f"{c.__name__}{k}" for c, k, _ in CASES])
def test_error_state_maps_under_pinnzoo_names(cls, k, factory):
    model = factory()
    assert isinstance(model, cls)
    rng = np.random.default_rng(k)
    for _ in range(2):
        x = _state(model, rng)
        dx = 0.2 * rng.normal(size=model.error_dim)
        assert_close(model.apply_Δx(x, dx), model.apply_dx(x, dx), 0.0, "apply_Δx = apply_dx")
        assert_close(model.state_error(model.apply_Δx(x, dx), x), dx, 1e-12, "state_error(apply_Δx(x, dx), x)")
        E = model.error_jacobian(x)
        assert E.shape == (model.state_dim, model.error_dim)
        assert_close(E, central_diff(lambda d: model.apply_dx(x, d), np.zeros(model.error_dim)), 1e-7, "error_jacobian")
        assert_close(model.error_jacobian_T(x), central_diff(lambda y: model.state_error(y, x), x), 1e-7, "error_jacobian_T")
