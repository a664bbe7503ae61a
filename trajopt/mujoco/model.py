"""A MuJoCo model of one of our multibody robots, built from the same description.

:func:`build_model` turns a :class:`models.MultibodyModel` into a compiled
``mujoco.MjModel`` with the physics the plans assume:

- URDF robots (Go1, Go2, the G1 humanoid: ``robot.urdf_path``) go through
  MuJoCo's own URDF parser (``MjSpec.from_string``) with visual and collision
  elements stripped; robots built in Python (the hand, a free-floating body)
  are rebuilt body by body from the ``pinocchio.Model`` (joint placements,
  axes, and the inertia pinocchio attaches to each joint). MuJoCo refuses a
  moving body without mass or rotational inertia: the point-mass chains and
  the wheeled biped (a massless hip link) raise ``ValueError``.
- Inertias are kept exactly: ``balanceinertia`` off, ``boundmass`` and
  ``boundinertia`` 0, ``inertiafromgeom`` off (our contact spheres weigh
  nothing), ``alignfree`` off. ``fusestatic`` merges the links welded by
  fixed joints into their moving parent, as pinocchio does.
- URDF inertias MuJoCo refuses are folded, exactly, into the rigid body they
  belong to (:func:`.sources.fold_invalid_inertias`). The example-robot-data Go1's dummy ``base`` link has
  ``ixx = iyy = izz = ixy = ixz = iyz = 1e-6``: the matrix ``1e-6 * ones(3, 3)``
  of rank 1 (eigenvalues 0, 0, 3e-6), not a physical inertia (it breaks the
  triangle inequality), which MuJoCo's ``fullinertia`` rejects ("inertia must
  have positive eigenvalues"). pinocchio adds it to the welded ``trunk``
  link's inertia without complaint; we do the same sum (pinocchio's
  ``Inertia`` algebra, about the combined centre of mass) before MuJoCo sees
  it, so both see the same rigid body: total mass and mass matrix agree to
  1e-15 relative (tests/test_mujoco_model.py). The same holds for ANYmal C
  (a rank-1 ``hatch`` inertia, and depth cameras whose principal moments
  break the triangle inequality, which MuJoCo also refuses) and HyQ.
- Joint damping and dry friction (the Go1 URDF's ``<dynamics damping="0.01"
  friction="0.2"/>``, which MuJoCo would turn into ``damping`` and
  ``frictionloss``) are removed, as the plans' dynamics (and pinocchio's RNEA)
  have none; ``joint_friction=True`` keeps them.
- A floating base gets a free joint on the root link; joint position limits
  stay (MuJoCo enforces them softly); one actuator per actuated joint, gear
  1, its force clamped to the URDF effort limit (``forcerange``); gravity
  ``-9.81 z``. The actuators are motors (force = ``ctrl``) until
  :meth:`MujocoRobot.set_joint_pd` gives them a joint PD law evaluated by
  MuJoCo itself (force = ``ctrl - kp q - kd qdot``), as a motor driver
  does: its damping is then integrated implicitly by the ``implicitfast``
  integrator, which keeps light joints stable, where the same PD computed
  outside MuJoCo made the G1's wrists oscillate (docs/design/mujoco.md).
- Contacts (:class:`ContactParameters`): a sphere of radius ``r`` CENTRED at
  each of the robot's contact points (its kinematics bodies), and a ground
  plane at ``z = -r``, so a sphere resting on it has its centre, the plan's
  contact point, at ``z = 0``. With a ``terrain`` (:mod:`trajopt.terrain`)
  its solids replace the ground, lowered by ``r`` the same way, and the
  links get their URDF collision shapes, so that a body other than a foot
  touching the terrain is simulated and seen (:mod:`trajopt.mujoco.terrain`). MuJoCo's contact then acts ``r`` below the
  planned point; a small radius keeps the moment of the friction force about
  the planned point (``r |f_t|``) and the rolling of the sphere
  (``r dtheta``) small. Friction ``robot.mu`` (condim 3).

:class:`MujocoRobot` holds the compiled model with the index maps between our
nominal vectors and MuJoCo's (``qpos``, ``qvel`` with the free joint's
linear velocity in the WORLD frame, actuator order) and the MuJoCo ids of the
contact points.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Optional, Sequence, Tuple

import mujoco
import numpy as np
import pinocchio as pin

from lie import quat_to_rot
from models.model import GRAVITY
from models.orders import BASE_CONFIG_NAMES, BASE_VEL_NAMES, StateOrder, conversion_indices

from .sources import contact_link, spec_from_pinocchio, spec_from_urdf, urdf_foot_radius
from .terrain import BODY_BITS, FOOT_BITS, LINK_TERRAIN, add_body_collisions, add_terrain, foot_radius

#: MuJoCo integrators by name.
INTEGRATORS = {
    "euler": mujoco.mjtIntegrator.mjINT_EULER,
    "implicitfast": mujoco.mjtIntegrator.mjINT_IMPLICITFAST,
    "implicit": mujoco.mjtIntegrator.mjINT_IMPLICIT,
    "rk4": mujoco.mjtIntegrator.mjINT_RK4,
}
#: MuJoCo friction cones by name.
CONES = {"elliptic": mujoco.mjtCone.mjCONE_ELLIPTIC, "pyramidal": mujoco.mjtCone.mjCONE_PYRAMIDAL}
_BASE_VEL = slice(0, 3)


@dataclass(frozen=True)
class ContactParameters:
    """MuJoCo contact settings of :func:`build_model`.

    ``radius`` of the contact spheres (m); ``solref = (timeconst, dampratio)``
    and ``solimp = (dmin, dmax, width, midpoint, power)`` of every contact
    (MuJoCo's soft-constraint parameters: a smaller ``timeconst`` is a stiffer
    contact; MuJoCo keeps it at least twice the time step); ``cone``
    ``"elliptic"`` or ``"pyramidal"``; ``impratio`` MuJoCo's ratio of
    frictional to normal constraint impedance.

    The defaults are nearer our rigid contacts than MuJoCo's own
    (``solref (0.02, 1)``, ``solimp (0.9, 0.95, 0.001)``) and than the URDF's
    2 cm foot spheres, which roll under the stance feet: the feet sink less
    and the replays drift less (docs/design/mujoco.md).
    """

    radius: float = 0.005
    solref: Tuple[float, float] = (0.005, 1.0)
    solimp: Tuple[float, ...] = (0.95, 0.99, 0.001, 0.5, 2.0)
    cone: str = "elliptic"
    impratio: float = 1.0

    @classmethod
    def mujoco_defaults(cls, radius: float) -> "ContactParameters":
        """MuJoCo's own contact model (what loading the robot into MuJoCo gives): ``solref (0.02, 1)``,
        ``solimp (0.9, 0.95, 0.001, 0.5, 2)``, a pyramidal cone, ``impratio`` 1, with spheres of ``radius``
        (the URDF's feet: :func:`realistic_contact`)."""
        return cls(radius=radius, solref=(0.02, 1.0), solimp=(0.9, 0.95, 0.001, 0.5, 2.0), cone="pyramidal", impratio=1.0)


def realistic_contact(robot: Any) -> ContactParameters:
    """MuJoCo's default contact model with spheres of the URDF's own foot radius
    (:func:`~trajopt.mujoco.sources.urdf_foot_radius`: the foot's collision sphere, 2 cm on the Go1, or the
    half extent of its collision mesh), what :class:`trajopt.mujoco.plant.MujocoPlant` uses unless told
    ``contact="matched"``. ``ValueError`` when the robot has no URDF or its feet neither sphere nor mesh."""
    radius = urdf_foot_radius(robot)
    if radius is None:
        raise ValueError(f"robot: {robot.name} has no URDF foot sphere or mesh to take the realistic contact radius from; use contact='matched'")
    return ContactParameters.mujoco_defaults(radius)


class MujocoRobot:
    """A compiled MuJoCo model of ``robot`` and the maps between our vectors and MuJoCo's.

    Attributes: ``robot`` (ours), ``spec`` and ``model`` (``mujoco.MjSpec`` and
    the compiled ``mujoco.MjModel``), ``contact_geoms`` (geom ids of the
    contact spheres, in the order of ``robot.kinematics_bodies``),
    ``contact_bodies`` (their MuJoCo body ids), ``terrain`` (the
    :class:`trajopt.terrain.Terrain` or ``None``), ``terrain_geoms``,
    ``link_terrain_geoms`` and ``body_geoms`` (ids of its solids the feet
    stand on, of its solids the links are checked against, and of the links'
    collision shapes: :mod:`trajopt.mujoco.terrain`),
    ``folded_links`` (URDF links
    whose inertia was folded into a welded link), ``mass``, ``floating``,
    ``order`` (the :class:`models.orders.StateOrder` of MuJoCo's vectors) and
    the permutations ``q_index``/``v_index``/``u_index`` with
    ``qpos = q_nominal[q_index]``, ``qvel = v_nominal[v_index]`` (up to the
    base velocity frame) and ``ctrl = u[u_index]``.
    """

    def __init__(self, robot: Any, spec: "mujoco.MjSpec", model: "mujoco.MjModel", contact_geoms: Sequence[int], folded_links: Sequence[str] = (), terrain: Any = None) -> None:
        self.robot, self.spec, self.model, self.terrain = robot, spec, model, terrain
        geoms = [model.geom(g).name for g in range(model.ngeom)]
        self.terrain_geoms = np.array([g for g, name in enumerate(geoms) if name.startswith("terrain_")], dtype=int)
        self.link_terrain_geoms = np.array([g for g, name in enumerate(geoms) if name.startswith(LINK_TERRAIN)], dtype=int)
        self.body_geoms = np.array([g for g, name in enumerate(geoms) if name.startswith("body_")], dtype=int)
        self.folded_links = tuple(folded_links)
        self.floating = bool(robot.is_floating)
        self.contact_geoms = np.asarray(contact_geoms, dtype=int)
        self.contact_bodies = model.geom_bodyid[self.contact_geoms].copy()
        self.mass = float(mujoco.mj_getTotalmass(model))
        self.order = mujoco_order(robot, model)
        nominal = robot.orders["nominal"]
        conv = conversion_indices(nominal, self.order)
        self.q_index, self.v_index, self.u_index = conv.config, conv.vel, conv.torque
        self.q_inverse, self.v_inverse = np.argsort(self.q_index), np.argsort(self.v_index)
        self.u_inverse = np.argsort(self.u_index)

    @property
    def nq(self) -> int:
        """Size of MuJoCo's ``qpos``."""
        return self.model.nq

    @property
    def nv(self) -> int:
        """Size of MuJoCo's ``qvel``."""
        return self.model.nv

    # ---------------------------------------------------------------- vectors
    def velocity_transform(self, q: np.ndarray) -> np.ndarray:
        """``T`` (nv x nv) with ``qvel = T v``: the permutation, and ``Rot(q)`` on a free joint's linear velocity.

        ``q`` is a nominal configuration. A generalized force maps back as
        ``tau_nominal = T^T tau_mujoco`` (power is invariant).
        """
        T = np.eye(self.robot.nv)[self.v_index]
        if self.floating:
            T[_BASE_VEL, _BASE_VEL] = quat_to_rot(self.robot.base_orientation(q))
        return T

    def to_mujoco(self, x: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """MuJoCo ``(qpos, qvel)`` of a nominal state ``x = [q; v]``."""
        nq = self.robot.nq
        q, v = np.asarray(x[:nq], dtype=float), np.asarray(x[nq:], dtype=float)
        qvel = v[self.v_index]
        if self.floating:
            qvel[_BASE_VEL] = quat_to_rot(self.robot.base_orientation(q)) @ v[_BASE_VEL]
        return q[self.q_index], qvel

    def from_mujoco(self, qpos: np.ndarray, qvel: np.ndarray) -> np.ndarray:
        """Nominal state ``[q; v]`` of MuJoCo's ``qpos``, ``qvel`` (quaternion normalized)."""
        q, v = np.asarray(qpos, dtype=float)[self.q_inverse], np.asarray(qvel, dtype=float)[self.v_inverse]
        if self.floating:
            q[self.robot.base_orientation_slice] /= np.linalg.norm(self.robot.base_orientation(q))
            v[_BASE_VEL] = quat_to_rot(self.robot.base_orientation(q)).T @ np.asarray(qvel, dtype=float)[_BASE_VEL]
        return np.concatenate([q, v])

    def to_mujoco_acceleration(self, x: np.ndarray, a: np.ndarray) -> np.ndarray:
        """MuJoCo ``qacc`` of a nominal acceleration ``a = dv/dt`` at state ``x``.

        For a free joint ``d/dt (Rot(q) v_b) = Rot(q) (dv_b/dt + w_b x v_b)``;
        every other entry is permuted.
        """
        nq = self.robot.nq
        qacc = np.asarray(a, dtype=float)[self.v_index]
        if self.floating:
            v, w = x[nq : nq + 3], x[nq + 3 : nq + 6]
            qacc[_BASE_VEL] = quat_to_rot(self.robot.base_orientation(x)) @ (a[:3] + np.cross(w, v))
        return qacc

    def to_ctrl(self, u: np.ndarray) -> np.ndarray:
        """MuJoCo ``ctrl`` (actuator order) of our actuator torques ``u`` (nominal order)."""
        return np.asarray(u, dtype=float)[self.u_index]

    def set_joint_pd(self, kp: Any, kd: Any) -> None:
        """Make each actuator apply ``ctrl - kp q_j - kd qdot_j`` on its joint (``kp = kd = 0``: a motor again).

        ``kp``, ``kd``: scalars or arrays in the nominal actuator order (N m/rad,
        N m s/rad). Changes ``model`` in place: controllers work on a
        :meth:`copy`.
        """
        nu = self.model.nu
        gains = [np.broadcast_to(np.asarray(g, dtype=float), (nu,))[self.u_index] for g in (kp, kd)]
        self.model.actuator_biastype[:] = mujoco.mjtBias.mjBIAS_AFFINE
        self.model.actuator_biasprm[:, :3] = np.stack([np.zeros(nu), -gains[0], -gains[1]], axis=1)

    def copy(self) -> "MujocoRobot":
        """The same robot with its own copy of ``model`` (options and actuators can change independently)."""
        other = copy.copy(self)
        other.model = copy.deepcopy(self.model)
        return other

    def set_state(self, data: "mujoco.MjData", x: np.ndarray) -> None:
        """Write the nominal state ``x`` into ``data.qpos``/``data.qvel``."""
        data.qpos[:], data.qvel[:] = self.to_mujoco(x)

    def state(self, data: "mujoco.MjData") -> np.ndarray:
        """The nominal state ``[q; v]`` of ``data``."""
        return self.from_mujoco(data.qpos, data.qvel)

    # ------------------------------------------------------------- contacts
    def contact_points(self, data: "mujoco.MjData") -> np.ndarray:
        """World positions (nc, 3) of the contact points (needs ``mj_kinematics``)."""
        return data.geom_xpos[self.contact_geoms].copy()

    def contact_jacobians(self, data: "mujoco.MjData") -> np.ndarray:
        """World-frame linear Jacobians (nc, 3, nv) of the contact points, MuJoCo's ``mj_jac``, MuJoCo columns."""
        jac = np.zeros((len(self.contact_geoms), 3, self.model.nv))
        for i, (geom, body) in enumerate(zip(self.contact_geoms, self.contact_bodies)):
            mujoco.mj_jac(self.model, data, jac[i], None, data.geom_xpos[geom], body)
        return jac

    def body_contacts(self, data: "mujoco.MjData") -> list:
        """Names of the robot's bodies that touch the ground (or the terrain's copy the links meet) now other than
        by their feet (:func:`bodies_on_ground`, within two sphere radii of the contact spheres' centres)."""
        ground = {int(g) for g in self.link_terrain_geoms} if self.terrain is not None else {mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_GEOM, "ground")}
        return bodies_on_ground(self.model, data, ground, self.contact_geoms, 2.0 * self.model.geom_size[self.contact_geoms, 0])

    def contact_forces(self, data: "mujoco.MjData") -> np.ndarray:
        """WORLD-frame forces (nc, 3) the ground exerts on each contact sphere (MuJoCo's solved contacts)."""
        forces = np.zeros((len(self.contact_geoms), 3))
        slot = {int(g): i for i, g in enumerate(self.contact_geoms)}
        wrench = np.zeros(6)
        for c in range(data.ncon):
            con = data.contact[c]
            i, sign = (slot.get(con.geom2), 1.0) if con.geom2 in slot else (slot.get(con.geom1), -1.0)
            if i is None:
                continue
            mujoco.mj_contactForce(self.model, data, c, wrench)
            # the contact frame's rows are its axes in world coordinates; the force acts on geom2 along +normal
            forces[i] += sign * con.frame.reshape(3, 3).T @ wrench[:3]
        return forces


def mujoco_order(robot: Any, model: "mujoco.MjModel") -> StateOrder:
    """The vector order of ``model``: its joints in ``qpos`` order, actuators in ``ctrl`` order.

    Names come from the compiled model, so the map holds whatever order
    MuJoCo chose (for a URDF, :func:`models.robot_data.urdf_joint_order`).
    """
    joints = []
    for j in range(model.njnt):
        if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            continue
        joints.append(model.joint(j).name)
    base_q = list(BASE_CONFIG_NAMES) if robot.is_floating else []
    base_v = list(BASE_VEL_NAMES) if robot.is_floating else []
    actuators = [model.actuator(a).name for a in range(model.nu)]
    return StateOrder(base_q + joints, base_v + joints, actuators)


# ------------------------------------------------------------------ building
def bodies_on_ground(model: "mujoco.MjModel", data: "mujoco.MjData", ground: set, feet: Sequence[int], reach: np.ndarray) -> list:
    """Names of the bodies whose geoms touch a ``ground`` geom now other than at the feet: a contact of a geom
    other than the ``feet`` geoms counts unless it lies within ``reach`` (m, per foot) of a foot geom's centre
    (the lower leg's tip beside a foot that sank into a soft ground is the foot's)."""
    feet = [int(g) for g in feet]
    centres, names = data.geom_xpos[feet], set()
    for c in range(data.ncon):
        con = data.contact[c]
        other = con.geom2 if con.geom1 in ground else con.geom1 if con.geom2 in ground else None
        if other is None or other in ground or int(other) in feet or (np.linalg.norm(centres - con.pos, axis=1) < reach).any():
            continue
        names.add(model.body(model.geom_bodyid[other]).name)
    return sorted(names)


def build_model(
    robot: Any,
    timestep: float = 1e-3,
    contact: Optional[ContactParameters] = None,
    integrator: str = "implicitfast",
    joint_friction: bool = False,
    body_collisions: bool = False,
    terrain: Any = None,
) -> MujocoRobot:
    """A :class:`MujocoRobot` of ``robot``: a compiled MuJoCo model with the same bodies, joints, masses and
    inertias (from its URDF through MuJoCo's parser, or rebuilt from the ``pinocchio.Model``), contact
    spheres on its feet and a ground plane.

    ``robot`` is a :class:`models.MultibodyModel` (for contacts, with
    kinematics bodies and a friction coefficient ``mu``; 1.0 when it has
    none). ``timestep`` (s) and ``integrator`` (``"euler"``,
    ``"implicitfast"``, ``"implicit"``, ``"rk4"``) set MuJoCo's stepping;
    ``contact`` the contact spheres and MuJoCo's contact model;
    ``joint_friction`` keeps the URDF's joint damping and dry friction;
    ``body_collisions`` keeps the URDF's collision shapes of the other links
    (trunk, hips, thighs, calves), which then touch the ground too (a fall
    shows as their contacts, :meth:`MujocoRobot.body_contacts`); the robot's
    own geoms never collide with each other;
    ``terrain`` (a :class:`trajopt.terrain.Terrain`) replaces the ground by
    its solids and adds the links' collision shapes (module docstring). The
    joints our model has locked (``robot.welded_joints``) are welded at zero.
    """
    contact = contact or ContactParameters()
    if not (np.isfinite(timestep) and timestep > 0):
        raise ValueError(f"timestep: expected a positive time step, got {timestep!r}")
    if integrator not in INTEGRATORS:
        raise ValueError(f"integrator: expected one of {sorted(INTEGRATORS)}, got {integrator!r}")
    _check_contact(contact)
    if not hasattr(robot, "pin_model"):
        raise ValueError(f"robot: expected a MultibodyModel (with a pin_model), got {type(robot).__name__}")
    urdf = getattr(robot, "urdf_path", None)
    if body_collisions and not urdf:
        raise ValueError(f"body_collisions: needs the robot's URDF (its collision shapes); {robot.name} has none")
    spec, folded = spec_from_urdf(urdf, keep_collisions=body_collisions, drop_collisions_of=[contact_link(robot, b) for b in robot.kinematics_bodies]) if urdf else (spec_from_pinocchio(robot.pin_model), [])
    compiler = spec.compiler
    compiler.balanceinertia, compiler.boundmass, compiler.boundinertia = False, 0.0, 0.0
    compiler.inertiafromgeom = mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_FALSE
    compiler.alignfree, compiler.fusestatic, compiler.discardvisual = False, True, True
    opt = spec.option
    opt.timestep, opt.gravity, opt.integrator = timestep, (0.0, 0.0, -GRAVITY), INTEGRATORS[integrator]
    opt.cone = CONES[contact.cone]
    opt.impratio = contact.impratio
    if robot.is_floating:
        spec.worldbody.first_body().add_freejoint(name="root")
    welded = set(getattr(robot, "welded_joints", ()))
    for joint in [j for j in spec.joints if j.name in welded]:  # locked in our model: the child body welded at zero
        spec.delete(joint)
    for joint in spec.joints:
        if not joint_friction:
            joint.damping, joint.frictionloss = np.zeros(3), 0.0
        joint.armature = 0.0
    names = _add_contacts(spec, robot, contact, terrain)
    try:
        _add_actuators(spec, robot, spec.compile())
        model = spec.compile()
    except ValueError as err:  # MuJoCo's compiler errors, e.g. a massless or point-mass moving link
        raise ValueError(f"robot: MuJoCo cannot compile a model of {robot.name!r}: {err}".replace("\n", "; ")) from None
    geoms = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, n) for n in names]
    return MujocoRobot(robot, spec, model, geoms, folded, terrain)


def _check_contact(contact: ContactParameters) -> None:
    if contact.cone not in CONES:
        raise ValueError(f"contact.cone: expected one of {sorted(CONES)}, got {contact.cone!r}")
    if not (np.isfinite(contact.radius) and contact.radius > 0):
        raise ValueError(f"contact.radius: expected a positive radius (m), got {contact.radius!r}")
    if len(contact.solref) != 2 or not np.isfinite(contact.solref).all():
        raise ValueError(f"contact.solref: expected (timeconst, dampratio), got {contact.solref!r}")
    if len(contact.solimp) != 5 or not np.isfinite(contact.solimp).all():
        raise ValueError(f"contact.solimp: expected (dmin, dmax, width, midpoint, power), got {contact.solimp!r}")


def _joint_body(spec: "mujoco.MjSpec", pin_model: pin.Model, joint_id: int) -> Any:
    """The MuJoCo body whose frame is pinocchio joint ``joint_id``'s frame (the world for 0, the root link for a free flyer)."""
    if joint_id == 0:
        return spec.worldbody
    if pin_model.joints[joint_id].shortname() == "JointModelFreeFlyer":
        return spec.worldbody.first_body()
    return spec.joint(pin_model.names[joint_id]).parent


def _add_actuators(spec: "mujoco.MjSpec", robot: Any, draft: "mujoco.MjModel") -> None:
    """One motor per actuator of ``robot`` (a column of ``B`` that drives one joint), gear ``B[i, k]``,
    force range the torque limit, ordered like the joints' velocities in ``draft`` (MuJoCo's order)."""
    Bmat, pin_model = robot.B_func(), robot.pin_model
    names, limits = robot.orders["nominal"].torque_names, robot.torque_limits()
    actuators = []
    for k in range(robot.nu):
        rows = np.flatnonzero(Bmat[:, k])
        if rows.size != 1:
            raise ValueError(f"robot: actuator {names[k]!r} drives {rows.size} coordinates; a MuJoCo motor drives one joint")
        joint = _joint_of_velocity(pin_model, int(rows[0]))
        dof = draft.jnt_dofadr[mujoco.mj_name2id(draft, mujoco.mjtObj.mjOBJ_JOINT, joint)]
        actuators.append((dof, k, joint, Bmat[rows[0], k]))
    for _, k, joint, gear in sorted(actuators):
        act = spec.add_actuator(name=names[k], target=joint, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        act.set_to_motor()
        act.gear = np.array([gear, 0, 0, 0, 0, 0], dtype=float)
        act.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE
        if np.isfinite(limits[k]):
            act.forcelimited, act.forcerange = mujoco.mjtLimited.mjLIMITED_TRUE, np.array([-limits[k], limits[k]])


def _joint_of_velocity(pin_model: pin.Model, i: int) -> str:
    """Name of the joint owning velocity coordinate ``i``."""
    for jid in range(1, pin_model.njoints):
        joint = pin_model.joints[jid]
        if joint.idx_v <= i < joint.idx_v + joint.nv:
            return pin_model.names[jid]
    raise ValueError(f"pin_model: no joint owns velocity coordinate {i}")


def _add_contacts(spec: "mujoco.MjSpec", robot: Any, contact: ContactParameters, terrain: Any = None) -> list:
    """Contact spheres centred at the robot's kinematics bodies and the ground plane (or the terrain, and
    the links' collision shapes: :mod:`trajopt.mujoco.terrain`); the spheres' geom names."""
    pin_model = robot.pin_model
    friction = np.array([float(getattr(robot, "mu", 1.0)), 0.0, 0.0])
    if terrain is None:
        geoms = [spec.worldbody.add_geom(name="ground", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1], pos=[0, 0, -contact.radius])]
    else:
        geoms = add_terrain(spec, terrain, contact.radius)
    for frame_name in robot.kinematics_bodies:
        frame = pin_model.frames[pin_model.getFrameId(frame_name)]
        body = _joint_body(spec, pin_model, frame.parentJoint)
        geoms.append(body.add_geom(name=f"contact_{frame_name}", type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[contact.radius, 0, 0], pos=frame.placement.translation))
    ground, links_ground, bodies = geoms[: len(geoms) - robot.nc], [], set()
    if terrain is not None:
        links_ground = add_terrain(spec, terrain, foot_radius(robot, contact.radius), prefix=LINK_TERRAIN)
        bodies = set(add_body_collisions(spec, robot, lambda joint: _joint_body(spec, pin_model, joint)))
    for geom in spec.geoms:  # the URDF's collision shapes (when kept) and the contact spheres: against the ground only
        geom.contype, geom.conaffinity = (BODY_BITS, 0) if geom.name in bodies else (FOOT_BITS, 0)
    for geom in ground:  # the ground plane (against the feet and any kept shapes), or the terrain the feet stand on
        geom.contype, geom.conaffinity = 0, FOOT_BITS if terrain is not None else FOOT_BITS | BODY_BITS
    for geom in links_ground:  # the terrain the links' shapes are checked against
        geom.contype, geom.conaffinity, geom.group = 0, BODY_BITS, 3
    for geom in spec.geoms:
        geom.friction, geom.condim = friction, 3
        geom.solref, geom.solimp = np.array(contact.solref, dtype=float), np.array(contact.solimp, dtype=float)
    return [g.name for g in geoms[len(geoms) - robot.nc :]]
