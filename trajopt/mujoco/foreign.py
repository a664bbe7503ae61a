"""A MuJoCo model the user brings (an MJCF of the robot, e.g. MuJoCo Menagerie's) as the plant of a closed loop.

:class:`~trajopt.mujoco.plant.MujocoPlant` builds its model from the same URDF
as the controller. A model the user brings differs: its own masses and
inertias, rotor armature, joint damping and friction loss, its own foot
geometry and contact parameters, position servos instead of motors.
:class:`ForeignPlant` runs such a model as the plant:

- **Joints** are matched to the controller's by name (``joint_map`` where
  the names differ). A controller joint the file lacks, or a file joint the
  controller does not model, is refused with one line naming it; a floating
  robot needs the file's free joint.
- **Actuators**: each controller joint needs one actuator on it. Position
  servos (MuJoCo's ``position`` actuators: ``force = kp (ctrl - q) - kv
  qdot``) are turned into torque motors with the same gear and force range
  (``servos="motor"``, the default), so that the plan's torques are applied
  as torques; ``servos="feedforward"`` keeps them and commands
  ``ctrl = q + tau / kp`` (with ``kv qdot / kp`` added back), the plan's torque
  through the servo.
- **The state** is read in the controller's convention (free joint:
  quaternion ``w`` first, WORLD linear velocity turned into the base frame).
  At the start, the robot is lifted so that its lowest foot geom touches the
  floor: the file's feet need not be the controller's points.
- **A fall**: a non-finite state, the base below half its standing height,
  or a contact of the floor with a geom of the robot other than its feet (those within
  :data:`FOOT_REACH` of a foot point at the start) farther than two foot radii from every foot
  (:func:`~trajopt.mujoco.model.bodies_on_ground`: Menagerie's Go1 sinks its feet so far into
  their soft contacts that the shins' tips come within the contact margin of the floor).

:meth:`ForeignPlant.differences` lists what the controller's model does not
know: the total mass, each joint's armature, damping and friction loss, the
actuators' force ranges and servo gains.
"""
from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import mujoco
import numpy as np

from lie import quat_to_rot

from .model import ContactParameters, bodies_on_ground, build_model

#: A geom whose centre is this close to a foot point (m) at the start is that foot's.
FOOT_REACH = 0.04
#: How long (s) the robot stands on its locked joints when :class:`ForeignPlant` measures how far its feet sink.
SETTLE_TIME = 1.0
#: ``solimp`` of MuJoCo Menagerie's Go1 feet (``dmin, dmax, width`` of its ``foot`` class; MuJoCo's midpoint and power).
MENAGERIE_FOOT_SOLIMP = (0.015, 1.0, 0.031, 0.5, 2.0)
#: What :class:`ForeignPlant` does with position servos.
SERVO_MODES = ("motor", "feedforward")


class ForeignPlant:
    """``robot`` (the controller's :class:`models.MultibodyModel`) simulated by the MJCF at ``path``, from state ``x0``.

    ``joint_map``: controller joint name -> the file's, where they differ; ``servos``: see the module docstring.
    ``ValueError`` names a missing or extra joint, a joint without an actuator, a file MuJoCo cannot load, or one
    without a floor (a plane geom).
    """

    def __init__(self, robot: Any, path: str | os.PathLike, x0: np.ndarray, joint_map: Optional[Dict[str, str]] = None, servos: str = "motor") -> None:
        if servos not in SERVO_MODES:
            raise ValueError(f"servos: expected one of {SERVO_MODES}, got {servos!r}")
        self.path, self.robot, self.servos = Path(path), robot, servos
        if not self.path.is_file():
            raise FileNotFoundError(f"plant: no such file {os.fspath(self.path)}")
        try:
            model = mujoco.MjModel.from_xml_path(os.fspath(self.path))
        except ValueError as err:
            raise ValueError(f"plant: MuJoCo cannot load {os.fspath(self.path)}: {err}".replace("\n", "; ")) from None
        self.model, self.data = model, mujoco.MjData(model)
        self.dt, self.t = float(model.opt.timestep), 0.0
        self._joints(joint_map or {})
        self._actuators()
        floors = [g for g in range(model.ngeom) if int(model.geom_type[g]) == int(mujoco.mjtGeom.mjGEOM_PLANE)]
        if not floors:
            raise ValueError(f"plant: {os.fspath(self.path)} has no floor (a plane geom) for the robot to stand on")
        self.floors = set(floors)
        self._start(np.asarray(x0, dtype=float))
        #: why :meth:`fallen` last said so ("" while standing)
        self.fall_reason = ""

    # ------------------------------------------------------------ building
    def _joints(self, joint_map: Dict[str, str]) -> None:
        model, robot = self.model, self.robot
        hinges = {model.joint(j).name: j for j in range(model.njnt) if int(model.jnt_type[j]) in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))}
        frees = [j for j in range(model.njnt) if int(model.jnt_type[j]) == int(mujoco.mjtJoint.mjJNT_FREE)]
        mapped = {name: joint_map.get(name, name) for name in robot.joint_names}
        for name, theirs in mapped.items():
            if theirs not in hinges:
                raise ValueError(f"plant: {self.path.name} has no joint {theirs!r} for the controller's joint {name!r} (its joints: {', '.join(sorted(hinges))}; map names with joint_map)")
        extra = sorted(set(hinges) - set(mapped.values()))
        if extra:
            raise ValueError(f"plant: {self.path.name} has joints the controller does not model: {', '.join(extra)}")
        if robot.is_floating != (len(frees) == 1) or len(frees) > 1:
            raise ValueError(f"plant: {self.path.name} has {len(frees)} free joints; the controller's robot is {'floating' if robot.is_floating else 'fixed'}")
        self.joint_ids = np.array([hinges[mapped[name]] for name in robot.joint_names], dtype=int)
        self.qadr, self.dadr = model.jnt_qposadr[self.joint_ids], model.jnt_dofadr[self.joint_ids]
        self.free = frees[0] if frees else None
        self.root = int(model.jnt_bodyid[self.free]) if self.free is not None else 0

    def _actuators(self) -> None:
        model = self.model
        by_joint = {int(model.actuator_trnid[a, 0]): a for a in range(model.nu) if int(model.actuator_trntype[a]) == int(mujoco.mjtTrn.mjTRN_JOINT)}
        missing = [self.robot.joint_names[k] for k, j in enumerate(self.joint_ids) if int(j) not in by_joint]
        if missing:
            raise ValueError(f"plant: {self.path.name} has no actuator on the controller's joints {', '.join(missing)}")
        self.actuators = np.array([by_joint[int(j)] for j in self.joint_ids], dtype=int)
        self.gear = model.actuator_gear[self.actuators, 0].copy()
        bias = model.actuator_biastype[self.actuators] == int(mujoco.mjtBias.mjBIAS_AFFINE)
        self.kp = np.where(bias, -model.actuator_biasprm[self.actuators, 1], 0.0)
        self.kv = np.where(bias, -model.actuator_biasprm[self.actuators, 2], 0.0)
        self.servo = self.kp > 0
        self.force_range = np.where(model.actuator_forcelimited[self.actuators] == 1, model.actuator_forcerange[self.actuators, 1], np.inf)
        if self.servos == "motor" and self.servo.any():  # a torque motor with the same gear and force range
            a = self.actuators[self.servo]
            model.actuator_gaintype[a] = int(mujoco.mjtGain.mjGAIN_FIXED)
            model.actuator_gainprm[a, 0] = 1.0
            model.actuator_biastype[a] = int(mujoco.mjtBias.mjBIAS_NONE)
            model.actuator_biasprm[a, :3] = 0.0
            model.actuator_ctrllimited[a] = 0

    def _start(self, x0: np.ndarray) -> None:
        """Set ``x0``, then lift the robot until its lowest foot geom touches the floor."""
        self.set_state(x0)
        mujoco.mj_forward(self.model, self.data)
        feet = np.asarray(self.robot.kinematics(x0), dtype=float).reshape(-1, 3) if self.robot.nc else np.zeros((0, 3))
        robot_geoms = [g for g in range(self.model.ngeom) if self.model.geom_bodyid[g] != 0 and g not in getattr(self, "floors", ())]
        self.foot_geoms = {g for g in robot_geoms if len(feet) and np.linalg.norm(feet - self.data.geom_xpos[g], axis=1).min() < FOOT_REACH}
        if self.free is not None and self.foot_geoms:
            bottoms = [self.data.geom_xpos[g][2] - self.model.geom_rbound[g] for g in self.foot_geoms if int(self.model.geom_type[g]) == int(mujoco.mjtGeom.mjGEOM_SPHERE)]
            if bottoms:
                self.data.qpos[self.model.jnt_qposadr[self.free] + 2] -= min(bottoms)
                mujoco.mj_forward(self.model, self.data)
        self.standing_height = float(self.data.qpos[self.model.jnt_qposadr[self.free] + 2]) if self.free is not None else 0.0
        self.foot_sink = self._foot_sink() if self.free is not None and self.foot_geoms else 0.0

    def _foot_sink(self) -> float:
        """How deep (m) the foot spheres sink into the floor under the robot's standing weight (mean over the feet).

        A copy of the model with every controlled joint locked at ``x0`` (its range shrunk to a point) stands on
        its feet for :data:`SETTLE_TIME`; the sink is the floor's height minus the lowest point of each foot
        sphere. MuJoCo's soft contacts let feet sink, Menagerie's Go1 feet (``solimp 0.015 1 0.031``) far deeper
        than MuJoCo's default ones."""
        model = copy.deepcopy(self.model)
        q0 = self.data.qpos[self.qadr]
        model.jnt_limited[self.joint_ids] = 1
        model.jnt_range[self.joint_ids] = np.column_stack([q0, q0])
        data = mujoco.MjData(model)
        data.qpos[:], data.qvel[:] = self.data.qpos, 0.0
        for _ in range(int(round(SETTLE_TIME / model.opt.timestep))):
            mujoco.mj_step(model, data)
        feet = sorted(g for g in self.foot_geoms if int(model.geom_type[g]) == int(mujoco.mjtGeom.mjGEOM_SPHERE))
        if not feet:
            return 0.0
        floor = max(float(data.geom_xpos[g][2]) for g in self.floors)
        return float(np.mean([max(floor - (data.geom_xpos[g][2] - model.geom_size[g, 0]), 0.0) for g in feet]))

    # ------------------------------------------------------------ the plant
    def set_state(self, x: np.ndarray) -> None:
        """Write the controller-convention state ``x`` into the file's ``qpos``/``qvel``."""
        robot, m = self.robot, self.model
        q, v = x[: robot.nq], x[robot.nq :]
        if self.free is not None:
            a, d = m.jnt_qposadr[self.free], m.jnt_dofadr[self.free]
            self.data.qpos[a : a + 7] = q[:7]
            self.data.qvel[d : d + 3] = quat_to_rot(q[3:7]) @ v[:3]
            self.data.qvel[d + 3 : d + 6] = v[3:6]
            q, v = q[7:], v[6:]
        self.data.qpos[self.qadr], self.data.qvel[self.dadr] = q, v

    def state(self) -> np.ndarray:
        """The state in the controller's convention (n,)."""
        m, d = self.model, self.data
        joints_q, joints_v = d.qpos[self.qadr], d.qvel[self.dadr]
        if self.free is None:
            return np.concatenate([joints_q, joints_v])
        a, b = m.jnt_qposadr[self.free], m.jnt_dofadr[self.free]
        base_q = d.qpos[a : a + 7].copy()
        base_q[3:7] /= np.linalg.norm(base_q[3:7])
        v_body = quat_to_rot(base_q[3:7]).T @ d.qvel[b : b + 3]
        return np.concatenate([base_q, joints_q, v_body, d.qvel[b + 3 : b + 6], joints_v])

    def step(self, u: np.ndarray, force: np.ndarray) -> None:
        """Advance one ``dt`` with joint torques ``u`` (the controller's order, N m) and a WORLD force on the root body (N)."""
        u = np.asarray(u, dtype=float)
        ctrl = u / self.gear
        if self.servos == "feedforward" and self.servo.any():
            q, qd = self.data.qpos[self.qadr], self.data.qvel[self.dadr]
            ctrl = np.where(self.servo, q + (u / self.gear + self.kv * qd) / np.where(self.servo, self.kp, 1.0), ctrl)
        self.data.ctrl[self.actuators] = ctrl
        self.data.xfrc_applied[self.root, :3] = force
        mujoco.mj_step(self.model, self.data)
        self.t += self.dt

    def fallen(self) -> bool:
        """Whether the robot fell (module docstring); :attr:`fall_reason` says why."""
        d, m = self.data, self.model
        if not np.isfinite(d.qpos).all():
            self.fall_reason = "non-finite state"
        elif self.free is not None and d.qpos[m.jnt_qposadr[self.free] + 2] < 0.5 * self.standing_height:
            self.fall_reason = f"base at {d.qpos[m.jnt_qposadr[self.free] + 2]:.3f} m, below half its standing height"
        else:
            feet = sorted(self.foot_geoms)
            bodies = bodies_on_ground(m, d, self.floors, feet, 2.0 * m.geom_rbound[feet])
            self.fall_reason = f"{', '.join(bodies)} on the ground" if bodies else ""
        return bool(self.fall_reason)

    # ------------------------------------------------------------ report
    def passive(self) -> Dict[str, np.ndarray]:
        """The file's passive joint dynamics per controller joint: ``armature`` (kg m^2), ``damping`` (N m s/rad), ``frictionloss`` (N m)."""
        m = self.model
        return {"armature": m.dof_armature[self.dadr].copy(), "damping": m.dof_damping[self.dadr].copy(), "frictionloss": m.dof_frictionloss[self.dadr].copy()}

    def differences(self) -> List[str]:
        """Lines on what the controller's model does not know of this plant (module docstring)."""
        robot, m = self.robot, self.model
        mass = float(mujoco.mj_getTotalmass(m))
        lines = [f"plant {self.path.name}: total mass {mass:.3f} kg against the controller's {robot.mass:.3f} kg ({mass - robot.mass:+.3f} kg)"]
        for key, values in self.passive().items():
            if np.any(values):
                lines.append(f"  {key}: {_spread(values)} per joint; the controller's model has none")
        effort = np.asarray(robot.torque_limits(), dtype=float)
        if np.any(np.abs(self.force_range - effort) > 1e-9):
            lines.append(f"  actuator force limits {_spread(self.force_range)} N m against the URDF's {_spread(effort)} N m")
        if self.servo.any():
            how = "turned into torque motors" if self.servos == "motor" else "commanded with the plan's torque as feed-forward"
            lines.append(f"  {int(self.servo.sum())} position servos (kp {_spread(self.kp[self.servo])}, kv {_spread(self.kv[self.servo])}): {how}")
        radii = sorted({round(float(m.geom_rbound[g]), 4) for g in self.foot_geoms})
        lines.append(
            f"  feet: {len(self.foot_geoms)} geoms of radius {', '.join(f'{r:g}' for r in radii)} m, sinking {1e3 * self.foot_sink:.1f} mm under the standing weight; "
            f"timestep {self.dt:g} s, cone {'elliptic' if int(m.opt.cone) == int(mujoco.mjtCone.mjCONE_ELLIPTIC) else 'pyramidal'}"
        )
        return lines


def _spread(values: np.ndarray) -> str:
    """``a`` when all values are equal, else ``a .. b``."""
    lo, hi = float(np.min(values)) + 0.0, float(np.max(values)) + 0.0  # + 0.0: -0 prints as 0
    return f"{lo:g}" if np.isclose(lo, hi) else f"{lo:g} .. {hi:g}"


def write_menagerie_style(
    robot: Any, path: str | os.PathLike, mass_change: float = -0.36, armature: float = 0.01, damping: float = 2.0, abduction_damping: float = 1.0,
    frictionloss: float = 0.2, foot_radius: float = 0.023, foot_solimp: Tuple[float, ...] = MENAGERIE_FOOT_SOLIMP, kp: float = 100.0, kv: float = 0.0,
    timestep: float = 0.002,
) -> Path:
    """Write an MJCF of ``robot`` that differs from its URDF as MuJoCo Menagerie's models do (a plant for
    :class:`ForeignPlant` to be tried on): the root body ``mass_change`` kg off, rotor ``armature`` (kg m^2),
    joint ``damping`` (``abduction_damping`` on the hip abductions, the joints named ``*hip*`` or ``*HAA*``) and
    ``frictionloss`` (N m), feet as soft spheres of ``foot_radius`` (m) and ``foot_solimp`` (default Menagerie's
    Go1 feet, :data:`MENAGERIE_FOOT_SOLIMP`, far softer than MuJoCo's default ones) on a floor at ``z = 0``,
    an elliptic cone, MuJoCo's ``timestep`` (Menagerie keeps MuJoCo's default 2 ms), and position servos of gains
    ``kp``, ``kv`` with the URDF's effort limits as force ranges."""
    contact = ContactParameters(radius=foot_radius, solref=(0.02, 1.0), solimp=tuple(foot_solimp), cone="elliptic", impratio=100.0)
    spec = build_model(robot, timestep=timestep, contact=contact, joint_friction=True).spec
    root = spec.worldbody.first_body()
    root.mass += mass_change
    for joint in spec.joints:
        if int(joint.type) == int(mujoco.mjtJoint.mjJNT_FREE):
            continue
        abduction = "hip" in joint.name.lower() or "haa" in joint.name.lower()
        joint.armature, joint.frictionloss = armature, frictionloss
        joint.damping = np.array([abduction_damping if abduction else damping, 0.0, 0.0])
    for actuator in spec.actuators:
        limit = actuator.forcerange.copy()
        actuator.set_to_position(kp=kp, kv=kv)
        actuator.forcelimited, actuator.forcerange = mujoco.mjtLimited.mjLIMITED_TRUE, limit
    ground = spec.geom("ground")
    ground.pos = np.zeros(3)
    path = Path(path)
    path.write_text(spec.to_xml())
    return path
