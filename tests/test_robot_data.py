"""models.robot_data: locating example-robot-data offline, loading URDFs, reading limits."""
from __future__ import annotations

import site
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from models.robot_data import (
    KNOWN_ROBOTS,
    is_floating,
    load_pinocchio_model,
    read_urdf_limits,
    robot_data_dir,
    urdf_joint_order,
    urdf_path,
)


def test_robot_data_dir_has_the_robots():
    root = robot_data_dir()
    assert (root / "go1_description" / "urdf" / "go1.urdf").is_file()


def test_robot_data_dir_missing_raises(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    monkeypatch.setattr(site, "getsitepackages", lambda: [])
    monkeypatch.setattr(site, "getusersitepackages", lambda: str(tmp_path / "user"))
    with pytest.raises(FileNotFoundError, match="example-robot-data"):
        robot_data_dir()


@pytest.mark.parametrize("name", sorted(KNOWN_ROBOTS))
def test_every_known_robot_loads(name):
    path = urdf_path(name)
    assert path.is_file()
    model = load_pinocchio_model(path, floating=False)
    assert model.nq >= 0 and not is_floating(model)


def test_unknown_robot_lists_known_names():
    with pytest.raises(ValueError, match="known robots: .*go1.*go2"):
        urdf_path("go3")


def test_floating_and_fixed_go1():
    floating = load_pinocchio_model(urdf_path("go1"))
    fixed = load_pinocchio_model(urdf_path("go1"), floating=False)
    assert (floating.nq, floating.nv) == (19, 18) and is_floating(floating)
    assert (fixed.nq, fixed.nv) == (12, 12) and not is_floating(fixed)
    assert list(floating.names)[2:5] == ["FL_hip_joint", "FL_thigh_joint", "FL_calf_joint"]


def test_load_errors_name_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.urdf"):
        load_pinocchio_model(tmp_path / "nope.urdf")
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot name='x'><link name='a'>")
    with pytest.raises(ValueError, match="bad.urdf"):
        load_pinocchio_model(bad)


def _go1_edited(tmp_path, link, old, new):
    """The Go1's URDF with ``old`` replaced by ``new`` inside ``<link name=link>``, its meshes found from the copy's folder."""
    source = urdf_path("go1")
    text = source.read_text().replace('filename="../', f'filename="{source.parent.parent}/')
    start = text.index(f'<link name="{link}">')
    end = text.index("</link>", start)
    assert text.count(old, start, end) == 1
    path = tmp_path / "go1_edited.urdf"
    path.write_text(text[:start] + text[start:end].replace(old, new) + text[end:])
    return path




@pytest.mark.parametrize(
    "link, old, new, message",
    [
        ("trunk", '<mass value="5.204"/>', '<mass value="5.2O4"/>', "link 'trunk': Inertial: mass \\[5.2O4\\] is not a float"),
        ("trunk", '<mass value="5.204"/>', "", "link 'trunk': Inertial element must have a mass element"),
        ("trunk", 'ixx="0.0168128557"', 'ixx="abc"', "link 'trunk': Inertial: inertia element ixx is not a valid double"),
        ("trunk", '<mass value="5.204"/>', '<mass value="-5.204"/>', "link 'trunk' .*non-physical inertia: mass -5.204 kg"),
        ("trunk", 'ixx="0.0168128557"', 'ixx="-0.0168128557"', "link 'trunk' .*principal moments -0.01681, .*not positive semi-definite"),
        ("trunk", 'izz="0.0716547275"', 'izz="0.2"', "link 'trunk' .*break the triangle inequality"),
        ("FL_hip", '<mass value="0.591"/>', '<mass value="-0.591"/>', "link 'FL_hip' \\(with the links fixed to it: FL_thigh_rotor\\), moved by joint 'FL_hip_joint', .*mass -0\\.\\d+ kg"),
    ],
    ids=["unparsable-mass", "missing-mass", "unparsable-inertia", "negative-mass", "negative-moment", "triangle", "hip"],
)
def test_a_broken_inertial_raises_naming_the_link(tmp_path, capfd, link, old, new, message):
    """Pinocchio loads these files without a word (the trunk's mass dropped, a negative inertia kept): a wrong robot."""
    path = _go1_edited(tmp_path, link, old, new)
    with pytest.raises(ValueError, match=message):
        load_pinocchio_model(path)
    assert capfd.readouterr().err == ""


def test_loading_prints_nothing_and_tolerates_rounded_inertias(capfd):
    """The Go1's dummy ``base`` link (moments 0, 0, 3e-6 kg m^2) breaks the triangle inequality on its own;
    merged with the trunk, the body is physical. No installed robot's load writes anything."""
    import pinocchio as pin

    model = load_pinocchio_model(urdf_path("go1"))
    assert capfd.readouterr().err == ""
    masses = [float(m.get("value")) for m in ET.parse(urdf_path("go1")).getroot().iter("mass")]
    assert pin.computeTotalMass(model) == pytest.approx(sum(masses), rel=1e-12)


def test_a_non_physical_shipped_urdf_is_refused():
    """romeo_small of example-robot-data: the right shoulder's moments 6.6e-4, 6.8e-4 and 6.6e-3 kg m^2."""
    with pytest.raises(ValueError, match="link 'RShoulderYawLink', moved by joint 'RShoulderYaw', .*triangle inequality"):
        load_pinocchio_model(urdf_path("romeo_small"), floating=False)


def _urdf_limits(path):
    """Limits straight from the URDF XML, independent of pinocchio."""
    out = {}
    for joint in ET.parse(path).getroot().findall("joint"):
        limit = joint.find("limit")
        if joint.get("type") == "revolute":
            out[joint.get("name")] = {k: float(limit.get(k)) for k in ("lower", "upper", "velocity", "effort")}
    return out


@pytest.mark.parametrize("name", ["go1", "go2", "g1"])
def test_read_urdf_limits_matches_the_file(name):
    model = load_pinocchio_model(urdf_path(name))
    limits = read_urdf_limits(model)
    expected = _urdf_limits(urdf_path(name))
    assert set(limits.names) == set(expected)
    np.testing.assert_array_equal(limits.v_indices, np.arange(6, model.nv))
    np.testing.assert_array_equal(limits.q_indices, np.arange(7, model.nq))
    for i, joint in enumerate(limits.names):
        got = (limits.lower[i], limits.upper[i], limits.velocity[i], limits.effort[i])
        want = tuple(expected[joint][k] for k in ("lower", "upper", "velocity", "effort"))
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12, err_msg=joint)


def test_go1_calf_limits():
    limits = read_urdf_limits(load_pinocchio_model(urdf_path("go1")))
    i = limits.names.index("FR_calf_joint")
    assert (limits.lower[i], limits.upper[i], limits.velocity[i], limits.effort[i]) == (-2.818, -0.888, 20.06, 35.55)


def test_continuous_joints_are_unbounded():
    path = robot_data_dir() / "double_pendulum_description/urdf/double_pendulum_continuous.urdf"
    model = load_pinocchio_model(path, floating=False)
    limits = read_urdf_limits(model)
    assert model.nq == 4 and model.nv == 2
    np.testing.assert_array_equal(limits.q_indices, [0, 2])
    assert np.all(limits.lower == -np.inf) and np.all(limits.upper == np.inf)


def test_urdf_joint_order_is_tree_order_with_file_order_siblings(tmp_path):
    links = "".join(f'<link name="{n}"/>' for n in ("b2", "base", "b1", "a1", "a2"))

    def joint(name, parent, child, kind="revolute"):
        return (
            f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            '<axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
        )

    joints = joint("j_b2", "b1", "b2") + joint("j_a1", "base", "a1") + joint("j_b1", "base", "b1")
    joints += joint("fixed_a2", "a1", "a2", "fixed")
    path = tmp_path / "tree.urdf"
    path.write_text(f'<robot name="tree">{links}{joints}</robot>')
    assert urdf_joint_order(path) == ["j_a1", "j_b1", "j_b2"]


def test_urdf_joint_order_go1_go2():
    go1 = urdf_joint_order(urdf_path("go1"))
    go2 = urdf_joint_order(urdf_path("go2"))
    assert [j.split("_")[0] for j in go1[::3]] == ["FR", "FL", "RR", "RL"]
    assert [j.split("_")[0] for j in go2[::3]] == ["FL", "FR", "RL", "RR"]
    assert go1[:3] == ["FR_hip_joint", "FR_thigh_joint", "FR_calf_joint"]

