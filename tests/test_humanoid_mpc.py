"""The humanoids in a receding horizon: the G1 and Talos with locked joints, their soles' corners in the KKT contact
dynamics, the biped's walk, and the tasks of ``trajopt mpc humanoid-stand`` and ``humanoid-walk``.

Oracles: pinocchio's ``constraintDynamics`` with a 6D contact per sole (accelerations and each sole's force,
1e-9, with the soles at rest: there the corners' rigid motion and the sole's coincide) and central differences
for the Jacobian identity.
"""
import warnings
from pathlib import Path

import casadi as ca
import numpy as np
import pinocchio as pin
import pytest

import problems
import trajopt
from models import Go1, Humanoid
from models.contact_dynamics import ContactDynamics
from models.humanoid import HUMANOIDS
from models.multibody.contact import ContactKKT, body_groups
from trajopt.mpc.gaits import GaitSchedule, GaitTimeline
from trajopt.mpc.legged import SOLE_LOAD_FLOOR
from trajopt.mpc.tasks import PLANT_STEP, SOLE_PLANT_STEP, mpc_task, plant_step

RNG = np.random.default_rng(7)
SIDES = ("left", "right")


@pytest.fixture(scope="module")
def g1():
    return Humanoid(contacts_per_foot=4, locked=("waist", "arms"), knee=0.6)


@pytest.fixture(scope="module", params=sorted(HUMANOIDS))
def humanoid(request):
    """Each humanoid with every lockable group locked (the robots of ``humanoid-stand`` and ``humanoid-walk``)."""
    return Humanoid(contacts_per_foot=4, locked=tuple(HUMANOIDS[request.param].lockable), knee=0.6, robot=request.param)


@pytest.fixture(scope="module")
def kkt(humanoid):
    return ContactDynamics(humanoid, "contact").kkt


def soles_at_rest(robot, x):
    """``x`` with random joint velocities projected so that both soles (the links the corners sit on) are at rest."""
    model, data = robot.pin_model, robot.pin_model.createData()
    q = robot.change_order(x[: robot.nq], "nominal", "pinocchio")
    pin.computeJointJacobians(model, data, q)
    feet = robot.description.joints(robot.description.foot_link)
    J = np.vstack([pin.getFrameJacobian(model, data, model.getFrameId(foot), pin.LOCAL_WORLD_ALIGNED) for foot in feet])
    v = x[robot.nq :]
    out = x.copy()
    out[robot.nq :] = v - np.linalg.pinv(J) @ (J @ v)
    return out


def random_state(robot):
    x = robot.init_state()
    x[7 : robot.nq] += 0.1 * RNG.standard_normal(robot.nu)
    quat = np.r_[1.0, 0.05 * RNG.standard_normal(3)]
    x[3:7] = quat / np.linalg.norm(quat)
    x[robot.nq :] = 0.5 * RNG.standard_normal(robot.nv)
    return soles_at_rest(robot, x)


@pytest.mark.parametrize("standing", [SIDES, ("left",)], ids=["both", "left"])
def test_sole_corners_match_pinocchio_6d_contacts(humanoid, kkt, standing):
    """The corners of a standing sole hold it as pinocchio's 6D contact does; each sole's force is the sum of its
    corners' (1e-9); the corners of a swinging sole carry nothing."""
    model, data = humanoid.pin_model, humanoid.pin_model.createData()
    mask = np.array([1.0 if name.split("_")[0] in standing else 0.0 for name in humanoid.kinematics_bodies])
    for _ in range(3):
        x, u = random_state(humanoid), 5.0 * RNG.standard_normal(humanoid.nu)
        a, f = (np.asarray(o).ravel() for o in kkt(x, u, mask))
        q, v, tau = humanoid.change_order(x[: humanoid.nq], "nominal", "pinocchio"), x[humanoid.nq :], humanoid.B_func() @ u
        soles = [model.frames[model.getFrameId(f"{s}_heel_left")] for s in standing]
        contacts = pin.StdVec_RigidConstraintModel([pin.RigidConstraintModel(pin.ContactType.CONTACT_6D, model, frame.parentJoint, frame.placement, pin.LOCAL_WORLD_ALIGNED) for frame in soles])
        datas = pin.StdVec_RigidConstraintData([c.createData() for c in contacts])
        pin.initConstraintDynamics(model, data, contacts, datas)
        a_ref = pin.constraintDynamics(model, data, q, v, tau, contacts, datas)
        assert np.abs(a - a_ref).max() <= 1e-9 * max(1.0, np.abs(a_ref).max())
        wrenches = np.asarray(data.lambda_c).reshape(-1, 6)
        corners = f.reshape(2, 4, 3)
        for k, side in enumerate(standing):
            np.testing.assert_allclose(corners[SIDES.index(side)].sum(axis=0), wrenches[k, :3], rtol=0, atol=1e-9 * np.abs(wrenches).max())
        assert np.all(f.reshape(8, 3)[mask == 0] == 0.0)


def corner_wrench_maps(humanoid, x):
    """Per sole, ``W`` (6 x 12): its corners' forces to their wrench about the corners' centroid (WORLD axes), from the
    corners' positions at ``x`` (pinocchio's frame placements)."""
    model, data = humanoid.pin_model, humanoid.pin_model.createData()
    pin.framesForwardKinematics(model, data, humanoid.change_order(x[: humanoid.nq], "nominal", "pinocchio"))
    points = np.array([data.oMf[model.getFrameId(name)].translation for name in humanoid.kinematics_bodies])
    maps = []
    for sole in humanoid.shared_contacts():
        r = points[sole] - points[sole].mean(axis=0)
        maps.append((sole, np.hstack([np.vstack([np.eye(3), pin.skew(ri)]) for ri in r])))
    return maps


def test_sole_corners_carry_the_least_forces(humanoid, kkt):
    """No internal forces: the corner forces of each sole are orthogonal to those with zero net wrench (their
    projector ``I - W^T (W W^T)^-1 W``, built here from the corners' positions)."""
    x, u = random_state(humanoid), 5.0 * RNG.standard_normal(humanoid.nu)
    f = np.asarray(kkt(x, u, np.ones(8))[1]).ravel().reshape(8, 3)
    for sole, W in corner_wrench_maps(humanoid, x):
        P = np.eye(12) - W.T @ np.linalg.solve(W @ W.T, W)
        assert np.linalg.matrix_rank(P) == 6  # 6 internal directions per sole
        assert np.abs(P @ f[sole].ravel()).max() <= 1e-9 * np.abs(f).max()


def test_moving_soles_keep_their_rigid_motion(humanoid, kkt):
    """Away from rest (the soles turning and sliding), the corners' classical accelerations (pinocchio's, at the
    accelerations the dynamics give) are orthogonal to every corner force with a net wrench on the sole:
    ``W (J a + gamma) = 0`` for each standing sole (1e-9), the rows that hold it; the accelerations satisfy the RNEA
    identity with the corner forces (pinocchio's ``rnea`` with them as external forces, 1e-9)."""
    model, data = humanoid.pin_model, humanoid.pin_model.createData()
    for mask in (np.ones(8), np.r_[np.ones(4), np.zeros(4)]):
        x, u = random_state(humanoid), 5.0 * RNG.standard_normal(humanoid.nu)
        x[humanoid.nq :] = 0.5 * RNG.standard_normal(humanoid.nv)  # the soles move
        a, f = (np.asarray(o).ravel() for o in kkt(x, u, mask))
        q = humanoid.change_order(x[: humanoid.nq], "nominal", "pinocchio")
        v = x[humanoid.nq :]
        pin.forwardKinematics(model, data, q, v, a)
        pin.updateFramePlacements(model, data)
        corners = np.array([pin.getFrameClassicalAcceleration(model, data, model.getFrameId(name), pin.LOCAL_WORLD_ALIGNED).linear for name in humanoid.kinematics_bodies])
        for sole, W in corner_wrench_maps(humanoid, x):
            if mask[sole[0]]:
                assert np.abs(W @ corners[sole].ravel()).max() <= 1e-9 * max(1.0, np.abs(corners).max())
            else:
                assert np.all(f.reshape(8, 3)[sole] == 0.0)
        external = pin.StdVec_Force([pin.Force.Zero() for _ in range(model.njoints)])
        for name, force in zip(humanoid.kinematics_bodies, f.reshape(8, 3)):
            frame = model.frames[model.getFrameId(name)]
            point = data.oMf[model.getFrameId(name)].translation
            world = pin.Force(force, np.cross(point, force))  # at the WORLD origin
            external[frame.parentJoint] += data.oMi[frame.parentJoint].actInv(world)
        tau = pin.rnea(model, data, q, v, a, external)
        np.testing.assert_allclose(tau, humanoid.B_func() @ u, rtol=0, atol=1e-9 * max(1.0, np.abs(tau).max()))


def test_sole_corner_jacobian_matches_central_differences(humanoid, kkt):
    """The RNEA identity's Jacobian with shared bodies, in the tangent space, against central differences (1e-6)."""
    X, U, S = ca.MX.sym("x", humanoid.nx), ca.MX.sym("u", humanoid.nu), ca.MX.sym("s", 8)
    a, f = kkt(X, U, S)
    jac = ca.Function("kkt_jacobian", [X, U, S], [ca.jacobian(ca.vertcat(a, f), ca.vertcat(X, U))])
    x, u, s = humanoid.init_state(), 5.0 * RNG.standard_normal(humanoid.nu), np.ones(8)
    x[humanoid.nq :] = 0.3 * RNG.standard_normal(humanoid.nv)
    J = np.asarray(jac(x, u, s))
    E = np.asarray(humanoid.error_jacobian(x))
    analytic = np.hstack([J[:, : humanoid.nx] @ E, J[:, humanoid.nx :]])
    step = 1e-6
    columns = []
    for k in range(2 * humanoid.nv + humanoid.nu):
        d = np.zeros(2 * humanoid.nv + humanoid.nu)
        d[k] = step
        plus = np.concatenate([np.asarray(o).ravel() for o in kkt(humanoid.apply_dx(x, d[: 2 * humanoid.nv]), u + d[2 * humanoid.nv :], s)])
        minus = np.concatenate([np.asarray(o).ravel() for o in kkt(humanoid.apply_dx(x, -d[: 2 * humanoid.nv]), u - d[2 * humanoid.nv :], s)])
        columns.append((plus - minus) / (2 * step))
    numeric = np.column_stack(columns)
    assert np.abs(analytic - numeric).max() <= 1e-6 * max(1.0, np.abs(numeric).max())


def test_two_points_on_a_body_are_refused():
    with pytest.raises(ValueError, match="two contact points on one body"):
        body_groups((3, 3), 2)
    assert body_groups((5, 5, 5, 5, 9, 9, 9, 9), 8) == [[0, 1, 2, 3], [4, 5, 6, 7]] and body_groups((), 3) == [[0], [1], [2]]


def test_soles_are_held_by_six_rows_each(g1):
    """Two soles of four corners: twelve rows (a multiplier per sole's wrench); point feet keep their own three rows."""
    q, v = ca.SX.sym("q", g1.nq), ca.SX.sym("v", g1.nv)
    sole_kkt = ContactKKT(g1.tree, g1._dof_parents, g1.kinematics_bodies, q, v, ca.SX.sym("s", 8), g1.contact_parents())
    assert sole_kkt.T.shape == (24, 12) and sole_kkt.Lambda.shape == (12, 12)
    go1 = Go1()
    q, v = ca.SX.sym("q", go1.nq), ca.SX.sym("v", go1.nv)
    point_kkt = ContactKKT(go1.tree, go1._dof_parents, go1.kinematics_bodies, q, v, ca.SX.sym("s", 4), go1.contact_parents())
    assert point_kkt.T is None and point_kkt.Lambda.shape == (12, 12)


def test_locked_humanoid_model(g1):
    assert (g1.nq, g1.nv, g1.nu) == (19, 18, 12)
    assert g1.shared_contacts() == [[0, 1, 2, 3], [4, 5, 6, 7]] and Go1().shared_contacts() == []
    assert len(g1.welded_joints) == 17 and "waist_yaw_joint" in g1.welded_joints
    assert sorted(g1.orders["mujoco"].torque_names) == sorted(g1.joint_names) and len(g1.joint_names) == 12  # the welded joints left out
    x = g1.init_state()
    assert np.abs(g1.contact_heights(x)).max() < 1e-12
    joints = dict(zip(g1.joint_names, x[7 : g1.nq]))
    assert joints["left_knee_joint"] == pytest.approx(0.6) and joints["right_hip_pitch_joint"] == pytest.approx(-0.3) and joints["left_ankle_pitch_joint"] == pytest.approx(-0.3)
    full = Humanoid(contacts_per_foot=4)
    assert full.nv == 35 and full.init_state()[7 : full.nq].tolist() == [0.0] * 29  # the default posture is unchanged
    assert g1.leg_length == pytest.approx(full.leg_length)


def test_talos_model_and_its_soles():
    """Talos with its waist, arms and head locked: the legs alone; its sole corners lie on the flat bottom of the
    URDF's foot collision mesh (read by pinocchio), inside its outline; the plant's spheres are 5 mm."""
    pytest.importorskip("mujoco")
    from trajopt.mujoco.model import realistic_contact

    talos = Humanoid(contacts_per_foot=4, locked=("waist", "arms", "head"), knee=0.6, robot="talos")
    assert (talos.nq, talos.nv, talos.nu, talos.nc) == (19, 18, 12, 8) and len(talos.welded_joints) == 20
    assert sorted(talos.orders["mujoco"].torque_names) == sorted(talos.joint_names)
    x = talos.init_state()
    assert np.abs(talos.contact_heights(x)).max() < 1e-12
    joints = dict(zip(talos.joint_names, x[7 : talos.nq]))
    assert joints["leg_left_4_joint"] == pytest.approx(0.6) and joints["leg_right_3_joint"] == pytest.approx(-0.3) and joints["leg_left_5_joint"] == pytest.approx(-0.3)
    assert talos.leg_length == pytest.approx(0.38 + 0.325)  # the URDF's knee and ankle joint offsets
    assert talos.sole_sides == ("L",) * 4 + ("R",) * 4 and talos.shared_contacts() == [[0, 1, 2, 3], [4, 5, 6, 7]]
    model = talos.pin_model
    package = str(next(p for p in Path(talos.urdf_path).parents if p.name == "example-robot-data").parent)
    geometry = pin.buildGeomFromUrdf(model, talos.urdf_path, pin.GeometryType.COLLISION, package_dirs=[package])
    foot = model.getFrameId("leg_left_6_link")
    (mesh,) = [o for o in geometry.geometryObjects if o.parentFrame == foot]
    vertices = np.asarray(mesh.geometry.vertices()) @ mesh.placement.rotation.T + mesh.placement.translation
    sole = vertices[vertices[:, 2] < vertices[:, 2].min() + 2e-3]  # the bottom, flat to 2 mm (its edges are rounded)
    for name in ("left_heel_left", "left_heel_right", "left_toe_left", "left_toe_right"):
        corner = model.frames[model.getFrameId(name)].placement.translation
        assert corner[2] == pytest.approx(vertices[:, 2].min(), abs=1e-3)
        assert np.all(corner[:2] > sole[:, :2].min(axis=0) + 6e-3) and np.all(corner[:2] < sole[:, :2].max(axis=0) - 6e-3)
    assert realistic_contact(talos).radius == 0.005


def test_unknown_humanoids_and_groups_are_refused():
    with pytest.raises(ValueError, match="unknown humanoid 'atlas'; the humanoids are \\['g1', 'talos'\\]"):
        Humanoid(robot="atlas")
    with pytest.raises(ValueError, match="locked: expected groups of g1's"):
        Humanoid(contacts_per_foot=4, locked=("head",))
    with pytest.raises(ValueError, match="unknown humanoid"):
        problems.get("humanoid-stand", robot="go1")


def test_talos_walks_offline_and_in_the_horizon():
    """``humanoid-walk`` on Talos: the offline plan converges, and its horizon's task builds for the same robot."""
    problem = problems.get("humanoid-walk", robot="talos")
    solution = trajopt.solve(problem)
    assert solution.success and solution.iterations <= 40
    assert np.asarray(problem.robot.base_position(solution.states[-1])) == pytest.approx(problem.target_base_position, abs=1e-6)
    task = mpc_task(problems.get("humanoid-walk", robot="talos"))
    assert task.legged.robot.name.startswith("talos") and plant_step(task.legged.robot) == SOLE_PLANT_STEP


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"locked": ("legs",)}, "locked"), ({"locked": "arms"}, "locked"), ({"knee": -0.1}, "knee"), ({"knee": float("nan")}, "knee"),
        ({"hip_roll": -0.05}, "hip_roll"), ({"hip_roll": 0.3}, "hip_roll"), ({"hip_roll": float("nan")}, "hip_roll"),
    ],  # fmt: skip
)
def test_humanoid_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Humanoid(contacts_per_foot=4, **kwargs)


@pytest.mark.parametrize("robot", sorted(HUMANOIDS))
def test_hip_roll_widens_the_stance_with_the_soles_flat(robot):
    """``hip_roll`` turns each leg outwards: every sole corner lands further from the midline, the soles lie flat
    (pinocchio's foot frames' z axes vertical, the corners at z = 0) and every joint stays within its limits."""
    locked = tuple(HUMANOIDS[robot].lockable)
    narrow, wide = (Humanoid(contacts_per_foot=4, locked=locked, knee=0.6, robot=robot, hip_roll=roll) for roll in (0.0, 0.08))
    x = wide.init_state()
    corners = np.asarray(wide.kinematics(x)).reshape(-1, 3)
    before = np.asarray(narrow.kinematics(narrow.init_state())).reshape(-1, 3)
    assert np.all(np.abs(corners[:, 1]) > np.abs(before[:, 1]) + 0.03) and np.abs(corners[:, 2]).max() < 1e-12
    model, data = wide.pin_model, wide.pin_model.createData()
    pin.framesForwardKinematics(model, data, wide.change_order(x[: wide.nq], "nominal", "pinocchio"))
    for foot in wide.description.joints(wide.description.foot_link):
        assert data.oMf[model.getFrameId(foot)].rotation[:, 2] == pytest.approx([0.0, 0.0, 1.0], abs=1e-12)
    q = x[7 : wide.nq]
    assert np.all((q >= wide.joint_lower) & (q <= wide.joint_upper))
    joints = dict(zip(wide.joint_names, q))
    roll = wide.description.hip_roll
    assert joints[roll.format(side="left")] == 0.08 and joints[roll.format(side="right")] == -0.08


def test_biped_walk_moves_each_sole_as_one(g1):
    """In a walk the corners of a sole stand and swing together, the soles half a period apart, both down for
    ``duty - 1/2`` of the period twice a cycle; a quadruped's gait is refused for a biped and the other way round."""
    timeline = GaitTimeline(GaitSchedule.parse("0:stand,1:walk"), g1)
    T, duty = timeline.period[1], timeline.duty[1]
    times = 1.0 + np.linspace(0.0, 2 * T, 4001)[:-1]
    stance = timeline.stance(times)
    left, right = stance[:, :4], stance[:, 4:]
    assert (left == left[:, :1]).all() and (right == right[:, :1]).all()
    assert left[:, 0].mean() == pytest.approx(duty, abs=1e-3) and right[:, 0].mean() == pytest.approx(duty, abs=1e-3)
    assert (left[:, 0] & right[:, 0]).mean() == pytest.approx(2 * duty - 1, abs=1e-3)
    assert not (~left[:, 0] & ~right[:, 0]).any()
    assert timeline.stance(np.array([0.0, 0.99])).all()
    with pytest.raises(ValueError, match="biped; it walks with \\['walk'\\], not 'trot'"):
        GaitTimeline(GaitSchedule.parse("0:stand,1:trot"), g1)
    with pytest.raises(ValueError, match="'walk' is a biped's gait; go1 has four legs"):
        GaitTimeline(GaitSchedule.constant("walk"), Go1())


def test_offline_walk_schedule_matches_the_horizons(g1):
    from trajopt.legged.schedule import walk

    schedule = walk(g1.sole_sides, g1.kinematics_bodies, dt=0.04, period=0.72, cycles=1)
    assert (schedule.stance[:, :4] == schedule.stance[:, :1]).all() and not (schedule.stance[:, 0] == schedule.stance[:, 4]).all()
    with pytest.raises(ValueError, match="sides"):
        walk(("L",) * 7, g1.kinematics_bodies)


def test_a_landing_sole_holds_six_independent_rows(g1):
    """The touchdown of a sole: six rows of its corners' velocities (and three heights) with a Jacobian of rank 6, in
    any heading; a quadruped's feet keep all three rows each."""
    task = mpc_task(problems.get("humanoid-walk"))
    legged = task.legged
    for yaw in (0.0, 0.7, np.pi / 2):
        x = legged.x_stand.copy()
        x[3:7] = [np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)]
        feet = np.asarray(g1.kinematics(x)).reshape(8, 3)
        rows = legged._landing_rows(feet)
        J = np.asarray(g1.kinematics_velocity_matrix(x))
        for sole in (slice(0, 4), slice(4, 8)):
            selected = J[3 * sole.start : 3 * sole.stop][rows[sole].ravel()]
            assert selected.shape[0] == 6 and np.linalg.matrix_rank(selected) == 6
            assert rows[sole, 2].sum() == 3
    go1 = mpc_task(problems.get("go1-trot")).legged
    assert go1._landing_rows(np.zeros((4, 3))).all()


def test_humanoid_stand_task():
    task = mpc_task(problems.get("humanoid-stand"))
    legged = task.legged
    assert plant_step(task.legged.robot) == SOLE_PLANT_STEP and plant_step(Go1()) == PLANT_STEP
    assert legged.robot.nc == 8 and legged.friction.lower.shape == (legged.problem.N - 1, 34)  # 4 per corner, 1 per sole
    assert legged.swing_cost.raw_params.shape == (legged.problem.N, 32)
    forces = np.asarray(legged.model.kkt(legged.x_stand, legged._standing_torques, np.ones(8))[1]).reshape(8, 3)
    assert np.all(forces[:, 2] > 0) and forces[:, 2].sum() == pytest.approx(legged.robot.mass * 9.81, rel=0.05)


def test_each_standing_sole_carries_its_least_load():
    """A biped's horizon bounds each standing sole's normal force (its corners' sum, in the robot's weight) below by
    SOLE_LOAD_FLOOR, a swinging sole's not at all; the rows are the KKT forces' sums. A quadruped has no such rows."""
    task = mpc_task(problems.get("humanoid-walk"))
    legged, problem = task.legged, task.problem
    legged.update(problem, 1.0, legged.x_stand)
    masks = problem.dynamics_params[:-1].astype(bool)
    lower = legged.friction.lower[:, -2:]
    for j, sole in enumerate(legged.robot.shared_contacts()):
        assert np.array_equal(lower[:, j], np.where(masks[:, sole].all(axis=1), SOLE_LOAD_FLOOR, -np.inf))
    assert np.isinf(lower).any() and (lower == SOLE_LOAD_FLOOR).any()  # this tick's horizon holds a swing and a double support
    rows = np.asarray(ca.DM(legged.friction.fn(legged.x_stand, legged._standing_torques, np.ones(8)))).ravel()[-2:]
    forces = np.asarray(legged.model.kkt(legged.x_stand, legged._standing_torques, np.ones(8))[1]).reshape(8, 3)
    assert rows == pytest.approx(np.array([forces[:4, 2].sum(), forces[4:, 2].sum()]) / (legged.robot.mass * 9.81), rel=1e-12)
    assert mpc_task(problems.get("go1-trot")).legged.friction.lower.shape[1] == 16


def test_standing_soles_lose_their_measured_velocity():
    """At every tick, not only after a landing: the horizon starts with the standing soles at rest, the rest of the
    measured velocity changed by the least kinetic energy (the plastic impact of LeggedMPC.stance_projection)."""
    task = mpc_task(problems.get("humanoid-stand"))
    legged, problem = task.legged, task.problem
    x = legged.x_stand.copy()
    x[legged.robot.nq :] = 0.2 * RNG.standard_normal(legged.robot.nv)
    for t in (0.0, 3.0):
        legged.update(problem, t, x)
        assert np.abs(np.asarray(legged.robot.kinematics_velocity(problem.x0))).max() < 1e-10
        assert not np.allclose(problem.x0[legged.robot.nq :], 0.0)


@pytest.mark.parametrize("standing", [SIDES, ("left",), ("right",)], ids=["both", "left", "right"])
def test_a_soles_plastic_impact_is_the_least_kinetic_energy_change(humanoid, standing):
    """The plastic impact that stops the standing soles (held by six rows each) against the one of their corners' own
    rows, ``v - M^-1 J^T (J M^-1 J^T)^+ J v`` from pinocchio's mass matrix and frame Jacobians (the pseudo-inverse
    for the corners' dependent rows): 1e-10; the standing corners at rest after it, the others moving."""
    model, data = humanoid.pin_model, humanoid.pin_model.createData()
    mask = np.array([1.0 if name.split("_")[0] in standing else 0.0 for name in humanoid.kinematics_bodies])
    impact = ContactDynamics(humanoid, "contact").plastic_impact
    for _ in range(2):
        x = random_state(humanoid)
        x[humanoid.nq :] = 0.5 * RNG.standard_normal(humanoid.nv)
        projected = np.asarray(impact(x, mask)).ravel()
        q, v = humanoid.change_order(x[: humanoid.nq], "nominal", "pinocchio"), x[humanoid.nq :]
        M = pin.crba(model, data, q)
        M = np.triu(M) + np.triu(M, 1).T
        pin.computeJointJacobians(model, data, q)
        pin.updateFramePlacements(model, data)
        J = np.vstack([pin.getFrameJacobian(model, data, model.getFrameId(name), pin.LOCAL_WORLD_ALIGNED)[:3] for name, s in zip(humanoid.kinematics_bodies, mask) if s])
        MinvJT = np.linalg.solve(M, J.T)
        expected = v - MinvJT @ np.linalg.lstsq(J @ MinvJT, J @ v, rcond=None)[0]
        assert np.array_equal(projected[: humanoid.nq], x[: humanoid.nq])
        assert np.abs(projected[humanoid.nq :] - expected).max() <= 1e-10 * max(1.0, np.abs(expected).max())
        corners = np.asarray(humanoid.kinematics_velocity(projected)).reshape(8, 3)
        assert np.abs(corners[mask == 1]).max() < 1e-10 and (mask.all() or np.abs(corners[mask == 0]).max() > 1e-3)


def test_biped_commands_are_clamped_to_what_it_walked(g1):
    """Beyond BIPED_LIMITS (slower backward than forward), one warning per clamped component naming its limit, and
    the command clamped to it; within them, none."""
    from trajopt.mpc.commands import BIPED_LIMITS, Command, clamp, command_limits

    lower, upper = command_limits(g1)
    assert lower.tolist() == [low for low, _ in BIPED_LIMITS] and upper.tolist() == [high for _, high in BIPED_LIMITS]
    assert -lower[0] < upper[0]
    with pytest.warns(UserWarning) as caught:
        clamped = clamp(Command(0.5, 0.1, -0.2), (lower, upper))
    assert [str(w.message).split(" = ")[0] for w in caught] == ["command: vx", "command: vy"]
    assert "+0.3 m/s" in str(caught[0].message) and "+0.075 m/s" in str(caught[1].message)
    assert clamped.as_array().tolist() == [upper[0], upper[1], -0.2]
    with pytest.warns(UserWarning) as caught:
        clamped = clamp(Command(-0.3, -0.1), (lower, upper))
    assert len(caught) == 2 and "-0.125 m/s" in str(caught[0].message)
    assert clamped.as_array().tolist() == [lower[0], lower[1], 0.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert clamp(Command(-0.125, 0.075, 0.3), (lower, upper)) == Command(-0.125, 0.075, 0.3)


def test_a_biped_speeds_up_at_its_own_acceleration():
    """A biped's reference velocity rises at BIPED_ACCELERATION (0.15 m/s after 0.5 s toward 0.3 m/s), a quadruped's
    at the Go1's ACCELERATION."""
    from trajopt.mpc.commands import Command
    from trajopt.mpc.legged import ACCELERATION, BIPED_ACCELERATION

    legged = mpc_task(problems.get("humanoid-walk"), commands=Command(0.3)).legged
    assert legged.acceleration[:2].tolist() == list(BIPED_ACCELERATION)
    legged.start(0.0, legged.x_stand)
    legged._advance_reference(0.5, legged.x_stand)
    assert legged._v_ref[0] == pytest.approx(0.5 * BIPED_ACCELERATION[0], rel=1e-12)
    assert mpc_task(problems.get("go1-trot")).legged.acceleration[:2].tolist() == list(ACCELERATION[:2])


def test_closed_loop_plot_shows_the_centre_of_pressure_within_the_soles():
    """A short loop in MuJoCo (0.3 s of humanoid-walk, uncompiled): its figure has the centre-of-pressure panel, whose
    points lie within the stance corners' extent."""
    pytest.importorskip("mujoco")
    import matplotlib

    matplotlib.use("Agg")
    from trajopt.mpc.loop import run_closed_loop
    from trajopt.plotting.mpc import plot_closed_loop

    task = mpc_task(problems.get("humanoid-walk"))
    result = run_closed_loop(task.controller(mode="rti", compile=False), task.plant(), 0.3, 50.0, delay="tick")
    assert not result.fell
    fig = plot_closed_loop(result, task)
    ax = next(a for a in fig.axes if a.get_ylabel() == "from the base [m]")
    bands = [c for c in ax.collections if c.get_label().startswith("stance corners")]
    points = [line for line in ax.lines if line.get_label().startswith("centre of pressure")]
    assert len(bands) == 2 and len(points) == 2
    for band, line in zip(bands, points):
        y = line.get_ydata()
        (outline,) = band.get_paths()
        lo, hi = outline.vertices[:, 1].min(), outline.vertices[:, 1].max()
        assert len(y) >= 10 and np.all((y >= lo - 1e-9) & (y <= hi + 1e-9))


@pytest.mark.slow
@pytest.mark.parametrize("speed", [0.3, 0.5])
def test_a_standing_g1_recovers_a_lateral_push(speed):
    """Pushed sideways while standing by 0.3 m/s of base velocity (10 N s; the ankles' bounded correction of
    trajopt.mpc.stance_gate: unbounded, it fell after every push of 0.2 m/s and more) or 0.5 m/s (16.7 N s; the wider
    stance of humanoid-stand and each sole's least load in the horizon: with neither it fell after every push, without the
    least load after 6 of 10), compiled, one-tick delay, the G1 stands without a failed QP (docs/design/mpc.md)."""
    from trajopt.mpc.disturbances import Push
    from trajopt.mpc.loop import run_closed_loop
    from trajopt.mpc.report import loop_statistics

    task = mpc_task(problems.get("humanoid-stand"))
    impulse = speed * task.legged.robot.mass
    result = run_closed_loop(task.controller(mode="rti", compile=True), task.plant(), 5.0, 50.0, delay="tick", disturbances=(Push(impulse, 90.0, 2.05),))
    stats = loop_statistics(result, task.problem.model)
    assert not stats.fell, stats
    assert stats.failed == 0
