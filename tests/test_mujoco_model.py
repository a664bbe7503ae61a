"""trajopt.mujoco.model (issue 16, item 1): a MuJoCo model from the same robot description, against pinocchio.

pinocchio is the oracle: at random states the total mass, the mass matrix,
the bias forces and the inverse dynamics of MuJoCo (``mj_fullM``,
``qfrc_bias``) must equal pinocchio's to 1e-9 relative once the vectors are
converted (MuJoCo's free joint has its linear velocity in the WORLD frame:
``M_ours = T^T M_mj T``, ``C_ours = T^T (C_mj + M_mj Tdot v)``); measured
~1e-15. The contact spheres must sit at our contact points with our
Jacobians (``mj_jac``).
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

mujoco = pytest.importorskip("mujoco")

from models import Go1, Go2, LeggedRobot  # noqa: E402
from models.hand import Hand  # noqa: E402
from models.humanoid import Humanoid  # noqa: E402
from models.multibody_model import MultibodyModel  # noqa: E402
from models.orders import to_mujoco_state  # noqa: E402
from models.pinocchio_builders import floating_body_model, pendulum_model  # noqa: E402
from models.robot_data import urdf_path  # noqa: E402
from trajopt.mujoco import ContactParameters, build_model  # noqa: E402
from trajopt.sim.pin_numerics import PinNumerics  # noqa: E402

TOL = 1e-9  # the tolerance (relative, with a floor of 1); measured ~1e-15

ROBOTS = {
    "go1": lambda: Go1(mu=0.7),
    "go2": Go2,
    "g1": lambda: Humanoid(contacts_per_foot=4),
    "g1_legs": lambda: Humanoid(contacts_per_foot=4, locked=("waist", "arms"), knee=0.6),  # the welded joints in MuJoCo too
    "talos": lambda: Humanoid(contacts_per_foot=4, robot="talos"),
    "talos_legs": lambda: Humanoid(contacts_per_foot=4, locked=("waist", "arms", "head"), knee=0.6, robot="talos"),
    # URDFs with other inertias MuJoCo refuses: ANYmal C's rank-1 hatch and depth cameras breaking
    # the triangle inequality, HyQ's base and feet; Solo12 has none
    "anymal_c": lambda: LeggedRobot.from_robot_data("anymal_c"),
    "hyq": lambda: LeggedRobot.from_robot_data("hyq"),
    "solo12": lambda: LeggedRobot.from_robot_data("solo12"),
    "hand": Hand,  # built in Python: MuJoCo bodies from the pinocchio model
    "floating_body": lambda: MultibodyModel(floating_body_model(2.0, (0.1, 0.2, 0.3)), name="box"),
}


@pytest.fixture(scope="module", params=sorted(ROBOTS))
def pair(request):
    robot = ROBOTS[request.param]()
    return robot, build_model(robot)


def random_state(robot, rng):
    model = robot.pin_model
    lower = np.where(np.isfinite(model.lowerPositionLimit) & (np.abs(model.lowerPositionLimit) < 1e10), model.lowerPositionLimit, -1.0)
    upper = np.where(np.isfinite(model.upperPositionLimit) & (np.abs(model.upperPositionLimit) < 1e10), model.upperPositionLimit, 1.0)
    q = PinNumerics(robot).from_pinocchio(pin.randomConfiguration(model, lower, upper))
    return np.r_[q, rng.normal(size=robot.nv)]


def mujoco_terms(mr, x, a):
    """``(M, C + M a)`` of MuJoCo at nominal state ``x`` and acceleration ``a``, in our coordinates."""
    data = mujoco.MjData(mr.model)
    mr.set_state(data, x)
    mujoco.mj_forward(mr.model, data)
    M = np.zeros((mr.nv, mr.nv))
    mujoco.mj_fullM(mr.model, data, M)
    T = mr.velocity_transform(x[: mr.robot.nq])
    return T.T @ M @ T, T.T @ (M @ mr.to_mujoco_acceleration(x, a) + data.qfrc_bias)


def assert_close(a, b, what):
    err = np.abs(np.asarray(a) - np.asarray(b)).max() / max(1.0, np.abs(b).max())
    assert err < TOL, f"{what}: relative error {err:.2e}"


def test_mass_matrix_bias_and_inverse_dynamics_match_pinocchio(pair):
    robot, mr = pair
    pn = PinNumerics(robot)
    assert mr.mass == pytest.approx(pin.computeTotalMass(robot.pin_model), rel=1e-12)
    rng = np.random.default_rng(0)
    for _ in range(5):
        x = random_state(robot, rng)
        q, v = x[: robot.nq], x[robot.nq :]
        a = rng.normal(size=robot.nv)
        M, bias = mujoco_terms(mr, x, np.zeros(robot.nv))
        assert_close(M, pn.mass(q), "mass matrix")
        assert_close(bias, pn.bias(q, v), "bias forces")
        assert_close(mujoco_terms(mr, x, a)[1], pn.rnea(q, v, a), "inverse dynamics")


def test_contact_spheres_sit_at_the_contact_points(pair):
    robot, mr = pair
    if robot.nc == 0:
        pytest.skip("no contact points")
    data = mujoco.MjData(mr.model)
    rng = np.random.default_rng(1)
    for _ in range(3):
        x = random_state(robot, rng)
        mr.set_state(data, x)
        mujoco.mj_forward(mr.model, data)
        np.testing.assert_allclose(mr.contact_points(data), np.asarray(robot.kinematics(x)).reshape(-1, 3), atol=1e-12)
        ours = np.asarray(robot.kinematics_velocity(x)).reshape(-1, 3)  # J v, world frame
        np.testing.assert_allclose(mr.contact_jacobians(data) @ data.qvel, ours, atol=1e-12)


def test_state_round_trip_and_vector_order(pair):
    robot, mr = pair
    x = random_state(robot, np.random.default_rng(2))
    np.testing.assert_allclose(mr.from_mujoco(*mr.to_mujoco(x)), x, atol=1e-14)
    if "mujoco" in robot.orders:  # URDF robots: the compiled model follows models.orders' MuJoCo order
        assert mr.order == robot.orders["mujoco"]
        x_mj = to_mujoco_state(robot.change_order(x, "nominal", "mujoco"), robot.nq)
        np.testing.assert_array_equal(np.concatenate(mr.to_mujoco(x)), x_mj)
    names = [mr.model.actuator(a).name for a in range(mr.model.nu)]
    joints = [mr.model.joint(mr.model.actuator_trnid[a, 0]).name for a in range(mr.model.nu)]
    assert names == joints == list(mr.order.torque_names)  # one motor per joint, in MuJoCo's joint order
    np.testing.assert_array_equal(mr.model.actuator_forcerange[:, 1], robot.torque_limits()[mr.u_index])


def go1_urdf_without_meshes():
    root = ET.parse(urdf_path("go1")).getroot()
    for link in root.findall("link"):
        for tag in ("visual", "collision"):
            for element in link.findall(tag):
                link.remove(element)
    return root


def test_go1_dummy_base_inertia_is_folded_exactly():
    # MuJoCo rejects the URDF's base link as it is: its inertia 1e-6 * ones((3, 3)) has rank 1
    root = go1_urdf_without_meshes()
    ET.SubElement(ET.SubElement(root, "mujoco"), "compiler", balanceinertia="false")
    spec = mujoco.MjSpec.from_string(ET.tostring(root, encoding="unicode"))
    spec.body("base").add_freejoint()
    with pytest.raises(ValueError, match="inertia must have positive eigenvalues"):
        spec.compile()
    np.testing.assert_allclose(np.linalg.eigvalsh(np.full((3, 3), 1e-6)), [0, 0, 3e-6], atol=1e-20)
    # ours folds it into the welded trunk: the base body is pinocchio's joint-1 body, exactly
    robot = Go1()
    mr = build_model(robot)
    assert mr.folded_links == ("base",)
    body = mr.model.body("base")
    expected = robot.pin_model.inertias[1]
    assert body.mass[0] == pytest.approx(expected.mass, rel=1e-15)
    np.testing.assert_allclose(body.ipos, expected.lever, atol=1e-15)
    rot = np.zeros(9)
    mujoco.mju_quat2Mat(rot, body.iquat)
    rot = rot.reshape(3, 3)
    np.testing.assert_allclose(rot @ np.diag(body.inertia) @ rot.T, expected.inertia, atol=1e-15)


def test_refused_inertias_are_reported():
    assert build_model(LeggedRobot.from_robot_data("anymal_c")).folded_links == (
        "depth_camera_front_camera", "depth_camera_rear_camera", "depth_camera_left_camera", "depth_camera_right_camera", "hatch")
    assert build_model(Go2()).folded_links == ()


def test_inertias_are_not_rewritten_and_joint_friction_is_optional():
    robot = Go1()
    mr = build_model(robot)
    options = mr.spec.compiler
    assert not options.balanceinertia and options.boundmass == 0 and options.boundinertia == 0 and not options.alignfree
    assert options.inertiafromgeom == mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_FALSE
    assert not mr.model.dof_damping.any() and not mr.model.dof_frictionloss.any()
    kept = build_model(robot, joint_friction=True).model  # the URDF's <dynamics damping="0.01" friction="0.2"/>
    np.testing.assert_allclose(kept.dof_frictionloss[6:], 0.2)
    np.testing.assert_allclose(kept.dof_damping[6:], 0.01)
    assert mr.model.opt.gravity[2] == -9.81 and mr.model.opt.timestep == 1e-3


def test_contact_parameters_reach_the_model():
    contact = ContactParameters(radius=0.01, solref=(0.004, 1.0), cone="pyramidal", impratio=10.0)
    mr = build_model(Go1(mu=0.6), timestep=5e-4, contact=contact, integrator="rk4")
    model = mr.model
    assert model.opt.cone == mujoco.mjtCone.mjCONE_PYRAMIDAL and model.opt.integrator == mujoco.mjtIntegrator.mjINT_RK4
    assert model.opt.impratio == 10.0 and model.opt.timestep == 5e-4
    np.testing.assert_allclose(model.geom_size[mr.contact_geoms, 0], 0.01)
    np.testing.assert_allclose(model.geom_friction[mr.contact_geoms, 0], 0.6)
    np.testing.assert_allclose(model.geom_solref[mr.contact_geoms], [[0.004, 1.0]] * 4)
    assert model.geom("ground").pos[2] == -0.01  # a sphere resting on it has its centre at z = 0


def test_standing_robot_rests_on_its_contact_points():
    """The standing Go1, its weight shared by the feet, stays on its contact points (z = 0)."""
    robot = Go1()
    mr = build_model(robot)
    data = mujoco.MjData(mr.model)
    x = robot.init_state()
    assert np.abs(np.asarray(robot.kinematics(x)).reshape(-1, 3)[:, 2]).max() < 1e-12
    mr.set_state(data, x)
    forces = np.tile([0.0, 0.0, mr.mass * 9.81 / 4], 4)
    tau = np.asarray(robot.inverse_dynamics(x, np.zeros(robot.nv), forces=forces)).reshape(-1)
    mr.set_joint_pd(50.0, 2.0)  # feed-forward plus the PD holding the posture, inside MuJoCo's actuators
    for _ in range(500):
        data.ctrl[:] = mr.to_ctrl(tau[6:] + 50.0 * x[7 : robot.nq])
        mujoco.mj_step(mr.model, data)
    mujoco.mj_forward(mr.model, data)
    assert np.abs(mr.contact_points(data)[:, 2]).max() < 1e-3  # soft contact: ~0.2 mm into the ground
    assert np.abs(mr.state(data)[2] - x[2]) < 2e-3
    np.testing.assert_allclose(mr.contact_forces(data)[:, 2].sum(), mr.mass * 9.81, rtol=1e-3)


def test_bad_input():
    with pytest.raises(ValueError, match="timestep"):
        build_model(Go1(), timestep=0.0)
    with pytest.raises(ValueError, match="integrator"):
        build_model(Go1(), integrator="verlet")
    with pytest.raises(ValueError, match="contact.radius"):
        build_model(Go1(), contact=ContactParameters(radius=-1.0))
    with pytest.raises(ValueError, match="contact.cone"):
        build_model(Go1(), contact=ContactParameters(cone="round"))
    with pytest.raises(ValueError, match="robot: expected a MultibodyModel"):
        build_model(object())
    with pytest.raises(ValueError, match="MuJoCo cannot compile a model of 'pendulum'.*mass and inertia"):
        build_model(MultibodyModel(pendulum_model(), name="pendulum"))  # a point mass has no MuJoCo counterpart


def _stl_vertices(path):
    """The vertices (K, 3) of a binary or ASCII STL file, read with numpy alone."""
    import re
    import struct

    data = open(path, "rb").read()
    if data[:5] == b"solid" and b"facet" in data[:300]:
        return np.array([[float(v) for v in m.groups()] for m in re.finditer(rb"vertex\s+(\S+)\s+(\S+)\s+(\S+)", data)])
    count = struct.unpack("<I", data[80:84])[0]
    facets = np.frombuffer(data[84 : 84 + 50 * count], dtype=np.dtype([("normal", "<f4", 3), ("v", "<f4", (3, 3)), ("attr", "<u2")]))
    return facets["v"].reshape(-1, 3).astype(float)


@pytest.mark.parametrize("name, mesh", [("go2", "go2_description/collisions/foot_convex.stl"), ("solo12", "solo_description/meshes/stl/with_foot/solo_foot.stl")])
def test_realistic_contact_takes_a_mesh_foots_radius_from_its_stl(name, mesh):
    """Go2 and Solo12 model their feet as collision meshes (placed at the foot frame): the realistic plant's
    spheres get half the mesh's largest extent, read here from the STL file itself."""
    import problems
    from trajopt.mujoco.model import realistic_contact
    from trajopt.mujoco.sources import urdf_foot_radius

    robot = problems.get("trot", robot=name).robot
    robots = next(parent for parent in Path(robot.urdf_path).parents if parent.name == "robots" and parent.parent.name == "example-robot-data")
    vertices = _stl_vertices(robots / mesh)
    expected = 0.5 * np.max(vertices.max(axis=0) - vertices.min(axis=0))
    assert abs(urdf_foot_radius(robot) - expected) < 1e-7  # the STL stores float32
    assert realistic_contact(robot).radius == urdf_foot_radius(robot)


def test_realistic_plant_of_a_robot_with_collision_meshes_resolves_their_package_paths():
    """The Go2's URDF names its collision meshes ``package://example-robot-data/...``: MuJoCo gets the files
    next to the URDF (it could not open the package path), and the calves' meshes are in the model."""
    import problems
    from trajopt.mujoco.plant import MujocoPlant

    robot = problems.get("trot", robot="go2").robot
    plant = MujocoPlant(robot, robot.init_state())
    model = plant.robot.model
    meshes = [g for g in range(model.ngeom) if model.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH]
    assert len(meshes) >= 8  # the base, hips, thighs and two parts of each calf


def test_realistic_plant_leaves_out_collision_meshes_mujoco_cannot_read():
    """HyQ's trunk collision is a COLLADA file, which MuJoCo has no decoder for: the plant leaves it out
    and keeps the legs' cylinders (MuJoCo refused to build the model)."""
    import problems
    from trajopt.mujoco.plant import MujocoPlant

    robot = problems.get("trot", robot="hyq").robot
    model = MujocoPlant(robot, robot.init_state()).robot.model
    kinds = [model.geom_type[g] for g in range(model.ngeom)]
    assert mujoco.mjtGeom.mjGEOM_MESH not in kinds and kinds.count(mujoco.mjtGeom.mjGEOM_CYLINDER) >= 4
