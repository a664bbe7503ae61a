"""models.orders: named vector orders, permutations, and MuJoCo's free-joint convention.

The MuJoCo oracle test (skipped without ``mujoco``) loads Go1/Go2 in MuJoCo and
compares body positions, body velocities (exact to 1e-12) and the kinetic
energy (1e-5 relative: MuJoCo bounds the dummy base link's inertia) against
pinocchio for a random state converted by ``change_order`` + ``to_mujoco_state``.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lie import quat_to_rot
from models.orders import (
    BASE_CONFIG_NAMES,
    ConversionIndices,
    StateOrder,
    change_order,
    conversion_indices,
    from_mujoco_state,
    generate_conversions,
    standard_orders,
    to_mujoco_state,
)
from models.robot_data import load_pinocchio_model, urdf_joint_order, urdf_path

LEGS_GO1_FILE = ["FR", "FL", "RR", "RL"]
LEGS_NOMINAL = ["FL", "FR", "RL", "RR"]


def _leg_joints(legs):
    return [f"{leg}_{part}_joint" for leg in legs for part in ("hip", "thigh", "calf")]


@pytest.fixture(scope="module")
def go1():
    path = urdf_path("go1")
    model = load_pinocchio_model(path)
    orders = standard_orders(model, path)
    return model, orders, generate_conversions(orders)


def _random_state(model, rng):
    lower = np.r_[-np.ones(7), model.lowerPositionLimit[7:]]
    upper = np.r_[np.ones(7), model.upperPositionLimit[7:]]
    q = pin.randomConfiguration(model, lower, upper)
    return q, rng.normal(size=model.nv)


# ---------------------------------------------------------------- StateOrder
def test_state_order_defaults_and_validation():
    order = StateOrder(["a", "b"], ["va", "vb"])
    assert order.torque_names == ("va", "vb") and (order.nq, order.nv, order.nu) == (2, 2, 2)
    assert StateOrder(["a"], ["va"], ["ta"]).torque_names == ("ta",)
    with pytest.raises(ValueError, match="config_names: duplicate names \\['a'\\]"):
        StateOrder(["a", "a"], ["va", "vb"])
    with pytest.raises(AttributeError):
        order.config_names = ("b", "a")


def test_conversion_needs_same_names():
    with pytest.raises(ValueError, match="only in source: \\['c'\\]"):
        conversion_indices(StateOrder(["a", "c"], ["a"]), StateOrder(["a", "b"], ["a"]))


# ----------------------------------------------------------- standard orders
def test_go1_orders(go1):
    model, orders, _ = go1
    joints_nominal = _leg_joints(LEGS_NOMINAL)
    assert orders["nominal"].config_names == BASE_CONFIG_NAMES + tuple(joints_nominal)
    assert orders["pinocchio"].config_names[:7] == ("x", "y", "z", "qx", "qy", "qz", "qw")
    assert orders["nominal"].vel_names == ("vx", "vy", "vz", "wx", "wy", "wz", *joints_nominal)
    assert orders["nominal"].torque_names == tuple(joints_nominal)
    assert orders["mujoco"].config_names[7:] == tuple(_leg_joints(LEGS_GO1_FILE))
    assert orders["mujoco"].torque_names == tuple(_leg_joints(LEGS_GO1_FILE))
    assert (orders["nominal"].nq, orders["nominal"].nv, orders["nominal"].nu) == (model.nq, model.nv, 12)


def test_go2_mujoco_order_is_nominal():
    path = urdf_path("go2")
    orders = standard_orders(load_pinocchio_model(path), path)
    assert orders["mujoco"] == orders["nominal"]


def test_fixed_base_orders():
    path = urdf_path("ur5")
    model = load_pinocchio_model(path, floating=False)
    orders = standard_orders(model, path)
    assert orders["nominal"] == orders["pinocchio"]
    assert orders["nominal"].config_names == tuple(model.names[1:])
    assert set(orders["mujoco"].config_names) == set(model.names[1:])


def test_mujoco_order_needs_matching_urdf():
    model = load_pinocchio_model(urdf_path("go1"))
    with pytest.raises(ValueError, match="urdf_path: the movable joints"):
        standard_orders(model, urdf_path("ur5"))


def test_continuous_joints_get_indexed_names():
    from models.robot_data import robot_data_dir

    path = robot_data_dir() / "double_pendulum_description/urdf/double_pendulum_continuous.urdf"
    model = load_pinocchio_model(path, floating=False)
    orders = standard_orders(model)
    assert orders["nominal"].config_names[:2] == (f"{model.names[1]}[0]", f"{model.names[1]}[1]")
    assert orders["nominal"].nq == 4 and orders["nominal"].nv == 2
    with pytest.raises(ValueError, match="MuJoCo order"):
        standard_orders(model, path)


# --------------------------------------------------------------- change_order
def test_every_ordered_pair_is_generated(go1):
    _, orders, conv = go1
    assert set(conv) == {(a, b) for a in orders for b in orders}
    assert all(isinstance(c, ConversionIndices) for c in conv.values())


def test_vector_kinds_against_names(go1):
    model, orders, conv = go1
    nq, nv, nu = model.nq, model.nv, 12
    nominal, mujoco = orders["nominal"], orders["mujoco"]
    # encode each entry by its position in the nominal order, then look names up
    cases = {
        "config": (np.arange(nq), nominal.config_names, mujoco.config_names),
        "vel": (np.arange(nv), nominal.vel_names, mujoco.vel_names),
        "torque": (np.arange(nu), nominal.torque_names, mujoco.torque_names),
    }
    for kind, (value, src, dst) in cases.items():
        out = change_order(conv, value, "nominal", "mujoco", nq, nv, nu)
        np.testing.assert_array_equal(out, [src.index(name) for name in dst], err_msg=kind)
    x = np.arange(nq + nv)
    out = change_order(conv, x, "nominal", "mujoco", nq, nv, nu)
    np.testing.assert_array_equal(out[:nq], change_order(conv, x[:nq], "nominal", "mujoco", nq, nv, nu))
    np.testing.assert_array_equal(out[nq:], nq + change_order(conv, x[nq:] - nq, "nominal", "mujoco", nq, nv, nu))
    dx = np.arange(2 * nv)
    out = change_order(conv, dx, "nominal", "mujoco", nq, nv, nu)
    np.testing.assert_array_equal(out[nv:], nv + out[:nv])
    np.testing.assert_array_equal(out[:nv], change_order(conv, dx[:nv], "nominal", "mujoco", nq, nv, nu))


def test_pinocchio_quaternion_moves(go1):
    model, _, conv = go1
    q = pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq))
    ours = change_order(conv, q, "pinocchio", "nominal", model.nq, model.nv, 12)
    np.testing.assert_array_equal(ours[3:7], [q[6], q[3], q[4], q[5]])
    np.testing.assert_array_equal(ours[7:], q[7:])


def test_matrix_axes(go1):
    model, _, conv = go1
    nq, nv, nu = model.nq, model.nv, 12
    jac = np.random.default_rng(0).normal(size=(nv, nq + nv))  # e.g. d vdot / d x
    pv = conv[("nominal", "mujoco")].vel
    px = conv[("nominal", "mujoco")].state
    args = ("nominal", "mujoco", nq, nv, nu)
    np.testing.assert_array_equal(change_order(conv, jac, *args), jac[np.ix_(pv, px)])
    np.testing.assert_array_equal(change_order(conv, jac, *args, axis=0), jac[pv])
    np.testing.assert_array_equal(change_order(conv, jac, *args, axis=1), jac[:, px])
    traj = np.random.default_rng(1).normal(size=(5, nq + nv))  # 5 knots
    np.testing.assert_array_equal(change_order(conv, traj, *args, axis=1), traj[:, px])
    with pytest.raises(ValueError, match="axis 0 has length 5"):
        change_order(conv, traj, *args)


def test_out_and_round_trip(go1):
    model, orders, conv = go1
    nq, nv, nu = model.nq, model.nv, 12
    x = np.random.default_rng(2).normal(size=nq + nv)
    buf = x.copy()
    result = change_order(conv, buf, "nominal", "mujoco", nq, nv, nu, out=buf)
    assert result is buf
    np.testing.assert_array_equal(buf, change_order(conv, x, "nominal", "mujoco", nq, nv, nu))
    back = change_order(conv, buf, "mujoco", "pinocchio", nq, nv, nu)
    np.testing.assert_array_equal(change_order(conv, back, "pinocchio", "nominal", nq, nv, nu), x)
    np.testing.assert_array_equal(change_order(conv, x, "nominal", "nominal", nq, nv, nu), x)
    with pytest.raises(ValueError, match="out: expected an array of shape"):
        change_order(conv, x, "nominal", "mujoco", nq, nv, nu, out=np.zeros(nq))


def test_errors(go1):
    model, _, conv = go1
    nq, nv, nu = model.nq, model.nv, 12
    with pytest.raises(ValueError, match="known orders: \\['mujoco', 'nominal', 'pinocchio'\\]"):
        change_order(conv, np.zeros(nq), "nominal", "drake", nq, nv, nu)
    with pytest.raises(ValueError, match="length 5, which matches no vector kind"):
        change_order(conv, np.zeros(5), "nominal", "mujoco", nq, nv, nu)
    with pytest.raises(ValueError, match="nu: got 18"):
        change_order(conv, np.zeros(nq), "nominal", "mujoco", nq, nv, nv)
    with pytest.raises(ValueError, match="axis: a vector has only axis 0"):
        change_order(conv, np.zeros(nq), "nominal", "mujoco", nq, nv, nu, axis=1)
    with pytest.raises(ValueError, match="expected a vector or a matrix"):
        change_order(conv, np.zeros((2, 2, 2)), "nominal", "mujoco", nq, nv, nu)
    with pytest.raises(ValueError, match="kind: unknown vector kind"):
        change_order(conv, np.zeros(nq), "nominal", "mujoco", nq, nv, nu, kind="force")


def test_equal_sizes_ambiguity():
    """Fixed base: nq == nv == nu. Equal permutations are fine; different ones need kind=."""
    same = {"a": StateOrder(["j1", "j2"], ["j1", "j2"]), "b": StateOrder(["j2", "j1"], ["j2", "j1"])}
    conv = generate_conversions(same)
    np.testing.assert_array_equal(change_order(conv, np.array([1.0, 2.0]), "a", "b", 2, 2, 2), [2.0, 1.0])
    odd = {"a": StateOrder(["j1", "j2"], ["j1", "j2"]), "b": StateOrder(["j2", "j1"], ["j1", "j2"])}
    conv = generate_conversions(odd)
    args = ("a", "b", 2, 2, 2)
    with pytest.raises(ValueError, match="ambiguous between \\['config', 'vel', 'torque'\\]"):
        change_order(conv, np.array([1.0, 2.0]), "a", "b", 2, 2, 2)
    np.testing.assert_array_equal(change_order(conv, np.array([1.0, 2.0]), *args, kind="config"), [2.0, 1.0])
    np.testing.assert_array_equal(change_order(conv, np.array([1.0, 2.0]), *args, kind="vel"), [1.0, 2.0])


@settings(max_examples=50, deadline=None)
@given(st.permutations(list("abcdef")), st.permutations(list("abcdef")), st.permutations(list("uvw")))
def test_permutation_property(config_perm, vel_perm, torque_perm):
    """Any two orders: change_order moves each entry to where its name is."""
    src = StateOrder(list("abcdefg"), list("abcdef"), list("uvw"))
    dst = StateOrder(list(config_perm) + ["g"], vel_perm, torque_perm)
    conv = generate_conversions({"src": src, "dst": dst})
    x = np.arange(13.0)  # state [q (7); v (6)]
    out = change_order(conv, x, "src", "dst", 7, 6, 3)
    for i, name in enumerate(dst.config_names):
        assert out[i] == src.config_names.index(name)
    for i, name in enumerate(dst.vel_names):
        assert out[7 + i] == 7 + src.vel_names.index(name)
    np.testing.assert_array_equal(change_order(conv, out, "dst", "src", 7, 6, 3), x)


# ------------------------------------------------------- MuJoCo free joint
def test_to_from_mujoco_state(go1):
    model, _, _ = go1
    rng = np.random.default_rng(3)
    quat = rng.normal(size=4)
    quat /= np.linalg.norm(quat)
    x = np.r_[rng.normal(size=3), quat, rng.normal(size=12), rng.normal(size=18)]
    x_mj = to_mujoco_state(x, model.nq)
    np.testing.assert_allclose(x_mj[19:22], quat_to_rot(quat) @ x[19:22], atol=1e-14)
    np.testing.assert_array_equal(np.delete(x_mj, [19, 20, 21]), np.delete(x, [19, 20, 21]))
    np.testing.assert_allclose(from_mujoco_state(x_mj, model.nq), x, atol=1e-14)
    batch = np.stack([x, x_mj])
    np.testing.assert_allclose(to_mujoco_state(batch, model.nq)[0], x_mj, atol=0)
    assert to_mujoco_state(x, model.nq) is not x
    with pytest.raises(ValueError, match="base quaternion"):
        to_mujoco_state(np.r_[x[:3], 2 * quat, x[7:]], model.nq)
    with pytest.raises(ValueError, match="x_mujoco: expected a floating-base state"):
        from_mujoco_state(np.zeros(10), model.nq)


def _mujoco_model(mujoco, path):
    """MuJoCo model of a Unitree URDF: meshes stripped, inertias bounded, free joint on 'base'."""
    root = ET.parse(path).getroot()
    for link in root.findall("link"):
        for tag in ("visual", "collision"):
            for element in link.findall(tag):
                link.remove(element)
    extension = ET.SubElement(root, "mujoco")
    ET.SubElement(
        extension, "compiler", discardvisual="true", balanceinertia="true", boundinertia="1e-9", boundmass="1e-9"
    )
    spec = mujoco.MjSpec.from_string(ET.tostring(root, encoding="unicode"))
    spec.body("base").add_freejoint()
    return spec.compile()


@pytest.mark.parametrize("robot", ["go1", "go2"])
def test_mujoco_oracle(robot):
    mujoco = pytest.importorskip("mujoco")
    path = urdf_path(robot)
    model = load_pinocchio_model(path)
    data = model.createData()
    orders = standard_orders(model, path)
    conv = generate_conversions(orders)
    mj_model = _mujoco_model(mujoco, path)
    mj_model.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
    mj_data = mujoco.MjData(mj_model)
    assert [mj_model.joint(i).name for i in range(1, mj_model.njnt)] == list(orders["mujoco"].config_names[7:])

    nq, nv, nu = model.nq, model.nv, model.nv - 6
    rng = np.random.default_rng(4)
    for _ in range(3):
        q, v = _random_state(model, rng)
        x_nominal = change_order(conv, np.r_[q, v], "pinocchio", "nominal", nq, nv, nu)
        x_mj = to_mujoco_state(change_order(conv, x_nominal, "nominal", "mujoco", nq, nv, nu), nq)
        mj_data.qpos[:], mj_data.qvel[:] = x_mj[:nq], x_mj[nq:]
        mujoco.mj_forward(mj_model, mj_data)
        pin.forwardKinematics(model, data, q, v)
        for jid in range(2, model.njoints):  # every leg body, placed by its joint
            body = mj_model.jnt_bodyid[mj_model.joint(model.names[jid]).id]
            np.testing.assert_allclose(mj_data.xpos[body], data.oMi[jid].translation, atol=1e-12)
            vel = np.zeros(6)  # [angular; linear], world-aligned, at the body origin
            mujoco.mj_objectVelocity(mj_model, mj_data, mujoco.mjtObj.mjOBJ_XBODY, body, vel, 0)
            expected = pin.getVelocity(model, data, jid, pin.LOCAL_WORLD_ALIGNED)
            np.testing.assert_allclose(vel, np.r_[expected.angular, expected.linear], atol=1e-12)
        np.testing.assert_allclose(mj_data.energy[1], pin.computeKineticEnergy(model, data, q, v), rtol=1e-5)
        back = from_mujoco_state(np.r_[mj_data.qpos, mj_data.qvel], nq)
        np.testing.assert_allclose(change_order(conv, back, "mujoco", "nominal", nq, nv, nu), x_nominal, atol=1e-14)
        # the frame conversion matters: body-frame velocities put in qvel give other velocities
        assert not np.allclose(x_mj, change_order(conv, x_nominal, "nominal", "mujoco", nq, nv, nu))


def test_mujoco_orders_interleaved_urdf(tmp_path):
    """MuJoCo numbers joints depth-first, siblings in <joint> element order, as urdf_joint_order."""
    mujoco = pytest.importorskip("mujoco")
    inertial = '<inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>'
    links = "".join(f'<link name="{n}">{inertial}</link>' for n in ("b2", "base", "b1", "a1", "a2"))

    def joint(name, parent, child):
        return (
            f'<joint name="{name}" type="revolute"><parent link="{parent}"/><child link="{child}"/>'
            '<origin xyz="0 0 -0.1"/><axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
        )

    edges = (("j_b2", "b1", "b2"), ("j_b1", "base", "b1"), ("j_a1", "base", "a1"), ("j_a2", "a1", "a2"))
    joints = "".join(joint(*edge) for edge in edges)
    path = tmp_path / "tree.urdf"
    path.write_text(f'<robot name="tree">{links}{joints}</robot>')
    mj_model = mujoco.MjModel.from_xml_path(str(path))
    mj_order = [mj_model.joint(i).name for i in range(mj_model.njnt)]
    assert mj_order == urdf_joint_order(path) == ["j_b1", "j_b2", "j_a1", "j_a2"]
    orders = standard_orders(load_pinocchio_model(path, floating=False), path)
    assert orders["nominal"].config_names == ("j_a1", "j_a2", "j_b1", "j_b2")  # pinocchio's own order differs
