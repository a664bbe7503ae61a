"""Export for controllers (issue 16, item 3): Solution.to_csv and Solution.to_mujoco_keyframes, read back.

The "mujoco" rows are checked by MuJoCo itself: a row's ``qpos``/``qvel``
put into the MuJoCo model of the robot must place the contact spheres where
our kinematics puts the feet, and move them with our foot velocities; the
keyframes are parsed by MuJoCo's XML reader.
"""
from __future__ import annotations

import csv
import os

import numpy as np
import pytest

from trajopt.sim.pin_numerics import PinNumerics

from .solved_plans import solved


def read_csv(path):
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    return rows[0], np.array(rows[1:], dtype=float)


def columns(header, table, prefix):
    return table[:, [i for i, name in enumerate(header) if name.startswith(prefix)]]


@pytest.fixture(scope="module")
def trot():
    return solved("go1-trot")


def test_nominal_csv_holds_the_knots(tmp_path, trot):
    path = tmp_path / "trot.csv"
    trot.to_csv(path)
    header, table = read_csv(path)
    robot, cm = trot.problem.robot, trot.problem.contact_model
    assert header[:8] == ["t", "q:x", "q:y", "q:z", "q:qw", "q:qx", "q:qy", "q:qz"]
    assert header[8] == "q:FL_hip_joint" and "v:vx" in header and "tau:RR_calf_joint" in header
    assert header[-3:] == ["f:RR_foot:x", "f:RR_foot:y", "f:RR_foot:z"]
    assert len(header) == 1 + robot.nq + robot.nv + robot.nu + 3 * robot.nc
    np.testing.assert_array_equal(table[:, 0], trot.times)  # repr precision: bit-exact
    np.testing.assert_array_equal(np.hstack([columns(header, table, "q:"), columns(header, table, "v:")]), trot.states)
    np.testing.assert_array_equal(columns(header, table, "tau:"), trot.controls[:, cm.u_slice])
    np.testing.assert_array_equal(columns(header, table, "f:"), trot.controls[:, cm.f_slice])


def test_pinocchio_csv_has_pinocchios_quaternion(tmp_path, trot):
    path = tmp_path / "trot.csv"
    trot.to_csv(path, order="pinocchio")
    header, table = read_csv(path)
    assert header[4:8] == ["q:qx", "q:qy", "q:qz", "q:qw"]
    pn = PinNumerics(trot.problem.robot)
    np.testing.assert_array_equal(columns(header, table, "q:"), [pn.to_pinocchio(x[: pn.nq]) for x in trot.states])


def test_mujoco_csv_is_mujocos_state(tmp_path, trot):
    mujoco = pytest.importorskip("mujoco")
    from trajopt.mujoco import build_model

    path = tmp_path / "trot.csv"
    trot.to_csv(path, order="mujoco", dt=0.01)
    header, table = read_csv(path)
    robot = trot.problem.robot
    assert header[8:11] == ["q:FR_hip_joint", "q:FR_thigh_joint", "q:FR_calf_joint"]  # the Go1 URDF's leg order
    assert header[20:23] == ["v:vx_world", "v:vy_world", "v:vz_world"]
    np.testing.assert_allclose(table[:, 0], np.arange(61) * 0.01, atol=1e-15)
    X, W = trot.evaluate(table[:, 0])
    mr = build_model(robot)
    data = mujoco.MjData(mr.model)
    tau, qpos, qvel = columns(header, table, "tau:"), columns(header, table, "q:"), columns(header, table, "v:")
    assert [name[4:] for name in header if name.startswith("tau:")] == [mr.model.actuator(a).name for a in range(mr.model.nu)]
    for k in range(0, len(table), 7):
        data.qpos[:], data.qvel[:] = qpos[k], qvel[k]
        mujoco.mj_forward(mr.model, data)
        np.testing.assert_allclose(mr.contact_points(data), np.asarray(robot.kinematics(X[k])).reshape(-1, 3), atol=1e-12)
        np.testing.assert_allclose(mr.contact_jacobians(data) @ data.qvel, np.asarray(robot.kinematics_velocity(X[k])).reshape(-1, 3), atol=1e-12)
        np.testing.assert_allclose(tau[k], mr.to_ctrl(W[k, trot.problem.contact_model.u_slice]), atol=1e-12)


def test_keyframes_load_in_mujoco(tmp_path, trot):
    mujoco = pytest.importorskip("mujoco")
    from trajopt.mujoco import build_model

    path = tmp_path / "keys.xml"
    text = trot.to_mujoco_keyframes(path)
    assert path.read_text() == text
    mr = build_model(trot.problem.robot)
    xml = mr.spec.to_xml()
    model = mujoco.MjModel.from_xml_string(xml.replace("</mujoco>", text.split("<mujoco>")[1]))
    assert model.nkey == trot.N
    data = mujoco.MjData(model)
    cm = trot.problem.contact_model
    for k in (0, 7, trot.N - 1):
        mujoco.mj_resetDataKeyframe(model, data, k)
        qpos, qvel = mr.to_mujoco(trot.states[k])
        assert data.time == pytest.approx(trot.times[k], abs=1e-15)
        np.testing.assert_allclose(data.qpos, qpos, atol=1e-15)
        np.testing.assert_allclose(data.qvel, qvel, atol=1e-15)
        np.testing.assert_allclose(data.ctrl, mr.to_ctrl(trot.controls[k, cm.u_slice]), atol=1e-15)


def test_files_are_not_overwritten(tmp_path, trot):
    path = tmp_path / "trot.csv"
    trot.to_csv(path)
    before = path.read_text()
    with pytest.raises(FileExistsError, match="overwrite=True"):
        trot.to_csv(path, order="pinocchio")
    assert path.read_text() == before
    trot.to_csv(path, order="pinocchio", overwrite=True)
    assert path.read_text() != before
    assert sorted(os.listdir(tmp_path)) == ["trot.csv"]  # no temporary file left behind


def test_other_problems_and_bad_input(tmp_path, trot):
    pendulum = solved("pendulum", N=21)
    pendulum.to_csv(tmp_path / "pendulum.csv", dt=0.5)
    header, table = read_csv(tmp_path / "pendulum.csv")
    assert header == ["t", "x[0]", "x[1]", "u[0]"]
    np.testing.assert_allclose(table[:, 1:3], pendulum.evaluate(table[:, 0])[0], atol=1e-15)
    with pytest.raises(ValueError, match="order: 'mujoco' needs a multibody robot"):
        pendulum.to_csv(tmp_path / "p.csv", order="mujoco")
    with pytest.raises(ValueError, match="order: expected one of"):
        trot.to_csv(tmp_path / "t.csv", order="drake")
    with pytest.raises(ValueError, match="dt: expected a positive"):
        trot.to_csv(tmp_path / "t.csv", dt=-0.1)
    from trajopt import Solution

    trot.save(tmp_path / "trot.npz")
    with pytest.raises(ValueError, match="no problem attached"):
        Solution.load(tmp_path / "trot.npz").to_csv(tmp_path / "t.csv")
