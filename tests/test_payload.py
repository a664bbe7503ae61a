"""models.payload and the legged problems' ``payload``: masses and centres of mass against pinocchio's own."""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import problems
from models.legged import Go1
from models.payload import add_payload, base_link
from models.robot_data import load_pinocchio_model, urdf_path


def _com(model, q):
    return pin.centerOfMass(model, model.createData(), q)


def test_a_payload_moves_the_centre_of_mass_where_pinocchio_says():
    """3 kg at (0.1, 0.2, 0.05) in the Panda's link 7 frame: total mass + 3 kg, centre of mass the weighted mean of the
    robot's and the payload's world positions (pinocchio's kinematics of the unloaded arm)."""
    arm = load_pinocchio_model(urdf_path("panda"), floating=False)
    loaded = add_payload(arm, "panda_link7", 3.0, com=[0.1, 0.2, 0.05], inertia=np.diag([0.01, 0.02, 0.025]))
    q = np.random.default_rng(2).uniform(arm.lowerPositionLimit, arm.upperPositionLimit)
    data = arm.createData()
    pin.framesForwardKinematics(arm, data, q)
    where = data.oMf[arm.getFrameId("panda_link7")].act(np.array([0.1, 0.2, 0.05]))
    mass = pin.computeTotalMass(arm)
    assert pin.computeTotalMass(loaded) == pytest.approx(mass + 3.0, rel=1e-14)
    np.testing.assert_allclose(_com(loaded, q), (mass * _com(arm, q) + 3.0 * where) / (mass + 3.0), rtol=0, atol=1e-14)
    assert pin.computeTotalMass(arm) == mass  # the original is left as it was


def test_go1_payload_sits_at_the_trunks_centre_of_mass():
    go1, loaded = Go1(), Go1(payload=10.0)
    q = go1.change_order(go1.init_state()[: go1.nq], "nominal", "pinocchio")
    assert loaded.mass == pytest.approx(go1.mass + 10.0, rel=1e-14)
    base = go1.pin_model.inertias[1].lever
    expected = (go1.mass * _com(go1.pin_model, q) + 10.0 * pin.XYZQUATToSE3(q[:7]).act(base)) / (go1.mass + 10.0)
    np.testing.assert_allclose(_com(loaded.pin_model, q), expected, rtol=0, atol=1e-14)
    assert base_link(go1.pin_model) == "base"


@pytest.mark.parametrize("name, params", [("go1-stand", {}), ("trot", {"robot": "solo12"}), ("go1-stairs", {})])
def test_the_legged_factories_take_a_payload(name, params):
    unloaded, loaded = problems.get(name, **params), problems.get(name, payload=2.0, **params)
    assert loaded.model.robot.mass == pytest.approx(unloaded.model.robot.mass + 2.0, rel=1e-14)
    assert loaded.recipe["params"]["payload"] == 2.0


def test_every_periodic_template_can_be_periodic():
    for gait in ("trot", "pace", "bound", "pronk"):
        assert problems.get(gait, robot="solo12", periodic=True).periodic


def test_bad_payloads_are_refused():
    arm = load_pinocchio_model(urdf_path("panda"), floating=False)
    with pytest.raises(ValueError, match=r"link: 'panda_link9' is not a link of the model .*panda_link8"):
        add_payload(arm, "panda_link9", 1.0)
    with pytest.raises(ValueError, match="not a physical body: mass -1 kg"):
        add_payload(arm, "panda_link7", -1.0)
    with pytest.raises(ValueError, match="not a physical body: principal moments .*triangle inequality"):
        add_payload(arm, "panda_link7", 1.0, inertia=np.diag([0.01, 0.01, 0.1]))
    with pytest.raises(ValueError, match="payload: expected a finite number"):
        Go1(payload=float("nan"))
