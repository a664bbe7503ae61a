"""Check a legged plan with MuJoCo: its dynamics and contacts at the knots, and two replays.

:func:`verify` evaluates at every knot, with MuJoCo's own functions on the
model of :func:`.model.build_model`:

- the equation-of-motion residual ``M qacc + qfrc_bias - tau - sum_i J_i^T f_i``
  from the planned ``q``, ``v``, accelerations ``a`` (the control's ``a`` of
  the ``"inverse"`` formulation, our forward dynamics for ``"forward"``),
  torques and WORLD-frame contact forces; ``M`` from ``mj_fullM``, the bias
  ``qfrc_bias``, ``J_i`` from ``mj_jac`` at the contact points, ``tau``
  through the actuators' transmissions. MuJoCo's free joint differs from our
  tangent (world-frame linear velocity), so ``qacc`` gets the ``w x v`` term
  (:meth:`MujocoRobot.to_mujoco_acceleration`) and the residual is mapped back
  by ``T^T`` (:meth:`MujocoRobot.velocity_transform`). Reported as
  ``max |residual| / (m g)``;
- for every contact: speed and displacement (since its stance began) of a
  stance foot, penetration of the ground, the friction excess in the plan's
  own model (the pyramid ``max(|f_t1|, |f_t2|) - mu f_n`` or the cone
  ``|f_t| - mu f_n``, as ``problem.friction`` says) and in MuJoCo's cone
  (elliptic ``|f_t| - mu f_n``; or MuJoCo's pyramid ``|f_t1| + |f_t2| - mu
  f_n``), the normal force (negative is a unilateral violation) and any
  force on a swing foot; ``n`` is ``z`` and ``t1, t2`` are ``x, y`` on the
  flat ground;
- torques beyond the actuators' force ranges and joint angles beyond the joints' ranges;
- on a terrain (:mod:`trajopt.terrain`; the model then holds its solids and
  the links' collision shapes, :mod:`trajopt.mujoco.terrain`): penetration, normal and
  tangential forces are taken about the terrain's height and local normal
  ``n`` at the foot (tangents :func:`trajopt.terrain.surface.surface_tangents`),
  and ``body_clearance`` is the smallest distance from a link other than a
  foot to the terrain (MuJoCo's ``mj_geomDistance``; negative is a collision);
- on the flat ground, for point feet, ``shank_height``: the height of each shank's lower end
  (of its knee, the anchor of the joint that carries the foot, and the point
  :data:`~trajopt.legged.link_clearance.FOOT_GAP` above the foot, from
  MuJoCo's kinematics) above the ground that carries the feet's centres
  (negative: a knee planned into the ground).

Then it replays the plan in MuJoCo's simulation (:func:`.track.track`) from
its initial state: tracked by :class:`.track.PDFeedforward` (the robot's
default gains unless given) and with the feed-forward torques alone; on a
terrain the replays record every contact of a link with it. The tracked
replay's contacts are compared with the plan's: ``contact_mismatch`` is the
fraction of its steps at which some foot carries force (above 1 N) where
the plan has it in the air, or none where the plan stands on it.
:meth:`VerificationReport.verdict` judges the plan (:mod:`.verdict`: each
check against its threshold, the friction in the plan's own model; on a
terrain also no link on it, at the knots and in the tracked replay).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import mujoco
import numpy as np

from models.model import GRAVITY

from ..legged.link_clearance import FOOT_GAP
from ..terrain.surface import surface_tangents
from .model import MujocoRobot, build_model
from .reference import legged_problem, plan_terrain, plan_timestep, sample_plan
from .terrain import terrain_distance
from .track import Feedforward, PDFeedforward, TrackingResult, track
from .verdict import EOM_TOLERANCE, FORCE_TOLERANCE, Check, verdict_checks, verdict_line

__all__ = ["EOM_TOLERANCE", "KnotChecks", "VerificationReport", "knot_checks", "verify"]

#: The plans' friction models (``problem.friction``) and how the summary writes them.
PLAN_FRICTION = {"pyramid": "pyramid |f_x|, |f_y| <= mu f_n", "cone": "cone |f_t| <= mu f_n"}
#: MuJoCo's cones (the report's ``cone``) and how the summary writes them.
MUJOCO_FRICTION = {"elliptic": "elliptic cone |f_t| <= mu f_n", "pyramidal": "pyramid |f_x| + |f_y| <= mu f_n"}


@dataclass(frozen=True, eq=False)
class KnotChecks:
    """Per-knot checks in MuJoCo (NaN where a check does not apply).

    ``eom_residual`` (N,) relative to ``m g``; ``stance_speed`` (N, nc) m/s
    and ``stance_slip`` (N, nc) m of stance feet; ``penetration`` (N, nc) m
    (depth below the ground, 0 above); ``friction_excess`` (N, nc) N
    (positive: outside MuJoCo's cone); ``plan_friction_excess`` (N, nc) N
    (positive: outside the plan's own pyramid or cone); ``normal_force`` (N, nc) N of stance
    feet; ``swing_force`` (N, nc) N (norm, swing feet); ``torque_excess``
    (N, nu) N m and ``joint_excess`` (N, nj) rad (positive: beyond the limit);
    ``body_clearance`` (N,) m, the smallest distance of a non-foot link to the
    terrain (NaN without a terrain); ``shank_height`` (N, nc) m, each shank's
    lower end above the flat ground (NaN on a terrain, for soles, or for a foot
    whose body has no joint of its own).
    """

    times: np.ndarray
    stance: np.ndarray
    eom_residual: np.ndarray
    stance_speed: np.ndarray
    stance_slip: np.ndarray
    penetration: np.ndarray
    friction_excess: np.ndarray
    plan_friction_excess: np.ndarray
    normal_force: np.ndarray
    swing_force: np.ndarray
    torque_excess: np.ndarray
    joint_excess: np.ndarray
    body_clearance: np.ndarray
    shank_height: np.ndarray


@dataclass(frozen=True, eq=False)
class VerificationReport:
    """The result of :func:`verify`: knot checks and the two replays (:class:`.track.TrackingResult`).

    ``cone`` is MuJoCo's friction cone (``"elliptic"``: ``|f_t| <= mu f_n``, or
    ``"pyramidal"``: ``|f_x| + |f_y| <= mu f_n``), ``plan_friction`` the plan's
    own model (``"pyramid"``: ``|f_x|, |f_y| <= mu f_n``, or ``"cone"``:
    ``|f_t| <= mu f_n``); the friction check judges the plan's.
    """

    name: str
    mass: float
    cone: str
    foot_names: tuple
    knots: KnotChecks
    tracked: TrackingResult
    feedforward: TrackingResult
    plan_friction: str = "pyramid"
    contact_mismatch: float = 0.0

    @property
    def collision_free(self) -> bool:
        """No link other than a foot touches the terrain in the plan's knots or in the tracked replay."""
        clearance = self.knots.body_clearance
        return bool(not self.tracked.terrain_contacts and not (np.isfinite(clearance) & (clearance < 0)).any())

    def checks(self) -> list[Check]:
        """The verdict's rows: every check's worst value against its threshold (:mod:`.verdict`)."""
        return verdict_checks(self.knots, self.tracked, self.mass, self.plan_friction)

    @property
    def ok(self) -> bool:
        """Every check of :meth:`checks` within its threshold (the tracked replay standing, and no link on a terrain, included)."""
        return all(check.passed for check in self.checks())

    def verdict(self) -> str:
        """One line: ``verdict: PASS (...)``, or ``verdict: FAIL:`` and each failed check with its value and threshold."""
        return verdict_line(self.checks())

    def worst(self) -> dict:
        """Worst case of every check (floats; NaN-aware)."""
        k = self.knots
        return {
            "eom_residual": float(k.eom_residual.max()),
            "stance_speed": _nanmax(k.stance_speed),
            "stance_slip": _nanmax(k.stance_slip),
            "penetration": float(k.penetration.max()),
            "friction_excess": _nanmax(k.friction_excess),
            "plan_friction_excess": _nanmax(k.plan_friction_excess),
            "min_normal_force": -_nanmax(-k.normal_force),
            "swing_force": _nanmax(k.swing_force, empty=0.0),
            "torque_excess": float(k.torque_excess.max()),
            "joint_excess": float(k.joint_excess.max(initial=-np.inf)),
            "body_clearance": _nanmin(k.body_clearance),
            "shank_height": _nanmin(k.shank_height),
        }

    def summary(self) -> str:
        """Worst cases, the replays and the verdict line, a few lines."""
        w, k = self.worst(), self.knots
        at = lambda a: int(np.unravel_index(np.nanargmax(a), a.shape)[0]) if np.isfinite(a).any() else -1  # noqa: E731
        lines = [
            f"MuJoCo verification of {self.name} ({len(k.times)} knots, m g = {self.mass * GRAVITY:.2f} N)",
            f"  EOM residual (mj_fullM, qfrc_bias, mj_jac)  {w['eom_residual']:.2e} m g (knot {at(k.eom_residual)})",
            f"  stance feet: speed {w['stance_speed']:.2e} m/s (knot {at(k.stance_speed)}), slip {w['stance_slip']:.2e} m, ground penetration {w['penetration']:.2e} m",
            f"  friction, the plan's {PLAN_FRICTION.get(self.plan_friction, self.plan_friction)}: worst {w['plan_friction_excess']:+.3g} N (knot {at(k.plan_friction_excess)})",
            f"  friction, MuJoCo's {MUJOCO_FRICTION.get(self.cone, self.cone)}: worst {w['friction_excess']:+.3g} N (knot {at(k.friction_excess)}){self._cone_note()}",
            f"  contact forces: min normal force {w['min_normal_force']:.3g} N, swing-foot force {w['swing_force']:.2e} N",
            f"  limits: torque {w['torque_excess']:+.3g} N m, joint angle {w['joint_excess']:+.3g} rad (positive = violated)",
            *([f"  terrain: links at least {1e3 * w['body_clearance']:.1f} mm from it at the knots; replay contacts match the plan's at {100 * (1 - self.contact_mismatch):.1f} % of the steps"] if np.isfinite(w["body_clearance"]) else []),
            *([f"  shanks: lowest end at z = {1e3 * w['shank_height']:+.1f} mm (knot {at(-k.shank_height)}; the ground at z = 0 carries the feet's centres)"] if np.isfinite(w["shank_height"]) else []),
            f"  replay, {self.tracked.summary()}",
            f"  replay, {self.feedforward.summary()}",
            self.verdict(),
        ]
        return "\n".join(lines)

    def _cone_note(self) -> str:
        """Why MuJoCo's cone excess is no violation when the plan keeps its own model but leaves MuJoCo's."""
        w, tolerance = self.worst(), FORCE_TOLERANCE * self.mass * GRAVITY
        if not (w["friction_excess"] > tolerance and not w["plan_friction_excess"] > tolerance):
            return ""
        return f"; not judged: the plan's {self.plan_friction} reaches outside MuJoCo's {'cone' if self.cone == 'elliptic' else 'pyramid'}"

    def table(self) -> str:
        """One line per knot: time, stance, EOM residual, stance slip speed, friction excess, torque use, both replays' drift."""
        k, T, F = self.knots, self.tracked, self.feedforward
        head = f"{'k':>3} {'t [s]':>6} {'stance':<{k.stance.shape[1]}} {'EOM/mg':>8} {'slip m/s':>8} {'fric N':>7} {'tau N m':>7} {'PD mm':>6} {'PD deg':>6} {'FF mm':>6} {'FF deg':>6}"
        rows = [head]
        for j, t in enumerate(k.times):
            drift = []
            for result in (T, F):
                step = result.knot_steps[j] if j < len(result.knot_steps) else None
                drift += ["-", "-"] if step is None else [f"{1e3 * result.base_position_error[step]:.1f}", f"{np.degrees(result.base_orientation_error[step]):.2f}"]
            stance = "".join("#" if s else "-" for s in k.stance[j])
            rows.append(
                f"{j:>3} {t:6.3f} {stance} {k.eom_residual[j]:8.1e} {_text(_nanmax(k.stance_speed[j]), '8.1e')} {_text(_nanmax(k.friction_excess[j]), '+7.2f')} "
                f"{k.torque_excess[j].max():+7.2f} {drift[0]:>6} {drift[1]:>6} {drift[2]:>6} {drift[3]:>6}"
            )
        return "\n".join(rows)


def _nanmin(a: np.ndarray) -> float:
    a = np.asarray(a, dtype=float)
    return float(np.nanmin(a)) if np.isfinite(a).any() else float("nan")


def _nanmax(a: np.ndarray, empty: float = float("nan")) -> float:
    """Largest finite entry of ``a``; ``empty`` when it has none."""
    a = np.asarray(a, dtype=float)
    return float(np.nanmax(a)) if np.isfinite(a).any() else empty


def _text(value: float, fmt: str) -> str:
    width = int(fmt.lstrip("+").split(".")[0])
    return f"{value:{fmt}}" if np.isfinite(value) else "-".rjust(width)


def verify(solution: Any, robot: Optional[MujocoRobot] = None, kp: Any = None, kd: Any = None) -> VerificationReport:
    """Verify ``solution`` (a legged plan with its problem attached) in MuJoCo: per-knot checks and two replays.

    At every knot, with MuJoCo's mass matrix, bias and contact Jacobians: the equation-of-motion
    residual (relative to ``m g``), stance-foot speed and slip, ground penetration, friction excess
    (in the plan's model and in MuJoCo's cone), normal and swing-foot forces, torque and joint limits
    (:func:`knot_checks`). Then the plan replayed in MuJoCo from its initial state under PD +
    feed-forward control and with the feed-forward torques alone (:func:`.track.track`). Returns a
    :class:`VerificationReport` (its :meth:`~VerificationReport.verdict` judges the plan).

    ``robot`` defaults to :func:`.model.build_model` of the plan's robot
    with steps of :func:`.reference.plan_timestep` (about 1 ms);
    ``kp``, ``kd`` are the PD gains of the tracked replay (default: the
    robot's, :data:`trajopt.legged.joint_gains.DEFAULT_GAINS`).
    """
    problem = legged_problem(solution)
    robot = robot or build_model(problem.robot, timestep=plan_timestep(solution), terrain=plan_terrain(problem))
    checks = knot_checks(robot, problem, solution)
    tracked = track(solution, PDFeedforward(kp, kd), robot=robot)
    feedforward = track(solution, Feedforward(), robot=robot)
    cone = "elliptic" if robot.model.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC else "pyramidal"
    mismatch = contact_mismatch(tracked, sample_plan(solution, robot.model.opt.timestep).stance)
    return VerificationReport(problem.name, robot.mass, cone, tuple(problem.robot.kinematics_bodies), checks, tracked, feedforward, problem.friction, mismatch)


def contact_mismatch(result: TrackingResult, stance: np.ndarray, threshold: float = 1.0) -> float:
    """Fraction of the replay's steps at which a foot's MuJoCo force (above ``threshold`` N) disagrees with
    the plan's ``stance`` (steps, nc): force in the air, or none on the ground."""
    steps = min(len(stance), len(result.forces))
    loaded = np.linalg.norm(result.forces[:steps], axis=-1) > threshold
    return float(np.mean((loaded != stance[:steps]).any(axis=1))) if steps else 0.0


def knot_checks(robot: MujocoRobot, problem: Any, solution: Any) -> KnotChecks:
    """The per-knot checks of :func:`verify` on ``robot``'s MuJoCo model: equation-of-motion residual, contact
    speed, slip, penetration, friction, normal and swing forces, torque and joint-limit excesses (:class:`KnotChecks`)."""
    model, ours, cm = robot.model, robot.robot, problem.contact_model
    data = mujoco.MjData(model)
    X, W = np.asarray(solution.states), np.asarray(solution.controls)
    N, nc, nq = X.shape[0], ours.nc, ours.nq
    stance = np.asarray(problem.solution_schedule(solution).stance, dtype=bool)
    mu = model.geom_friction[robot.contact_geoms, 0]
    weight = robot.mass * GRAVITY
    M = np.zeros((model.nv, model.nv))
    dof = model.jnt_dofadr[model.actuator_trnid[:, 0]]
    gear = model.actuator_gear[:, 0]
    limited = np.flatnonzero(model.jnt_limited.astype(bool) & (model.jnt_type != mujoco.mjtJoint.mjJNT_FREE))
    out = {name: np.full((N, nc), np.nan) for name in ("speed", "slip", "friction", "plan_friction", "normal", "swing")}
    eom, penetration, clearance, shanks = np.zeros(N), np.zeros((N, nc)), np.full(N, np.nan), np.full((N, nc), np.nan)
    knee_joints, soles = model.body_jntadr[robot.contact_bodies], bool(problem.robot.shared_contacts())
    terrain = robot.terrain
    torque_excess, joint_excess = np.zeros((N, ours.nu)), np.zeros((N, len(limited)))
    stance_start = np.zeros((nc, 3))
    pyramid = model.opt.cone == mujoco.mjtCone.mjCONE_PYRAMIDAL
    accelerations, forces = problem.contact_solution(X, W)
    for k in range(N):
        x, u, a, f = X[k], W[k, cm.u_slice], accelerations[k], forces[k]
        robot.set_state(data, x)
        mujoco.mj_forward(model, data)
        mujoco.mj_fullM(model, data, M)
        jac = robot.contact_jacobians(data)
        qfrc = np.zeros(model.nv)
        np.add.at(qfrc, dof, gear * robot.to_ctrl(u))
        residual = M @ robot.to_mujoco_acceleration(x, a) + data.qfrc_bias - qfrc - np.einsum("cij,ci->j", jac, f)
        eom[k] = np.abs(robot.velocity_transform(x[:nq]).T @ residual).max() / weight
        points = robot.contact_points(data)
        ground = terrain.height(points[:, :2]) if terrain is not None else np.zeros(nc)
        normals = terrain.normal(points[:, :2]) if terrain is not None else np.tile([0.0, 0.0, 1.0], (nc, 1))
        penetration[k] = np.maximum(ground - points[:, 2], 0.0)
        if robot.body_geoms.size:
            clearance[k] = terrain_distance(model, data, robot.body_geoms, robot.link_terrain_geoms)[0]
        if terrain is None and not soles:
            shanks[k] = shank_heights(data.xanchor, knee_joints, points)
        for i in range(nc):
            if not stance[k, i]:
                out["swing"][k, i] = np.linalg.norm(f[i])
                continue
            if k == 0 or not stance[k - 1, i]:
                stance_start[i] = points[i]
            out["speed"][k, i] = np.linalg.norm(jac[i] @ data.qvel)
            out["slip"][k, i] = np.linalg.norm(points[i] - stance_start[i])
            f_n = f[i] @ normals[i]
            f_t = np.abs([f[i] @ t for t in surface_tangents(normals[i])])
            out["friction"][k, i] = (f_t.sum() if pyramid else np.linalg.norm(f[i] - f_n * normals[i])) - mu[i] * f_n
            plan_tangent = f_t.max() if problem.friction == "pyramid" else np.linalg.norm(f[i] - f_n * normals[i])
            out["plan_friction"][k, i] = plan_tangent - problem.robot.mu * f_n
            out["normal"][k, i] = f_n
        ctrl = robot.to_ctrl(u)
        bound = np.where(model.actuator_forcelimited.astype(bool), model.actuator_forcerange[:, 1], np.inf)
        torque_excess[k] = (np.abs(ctrl) - bound)[robot.u_inverse]
        qpos = data.qpos[model.jnt_qposadr[limited]]
        joint_excess[k] = np.maximum(model.jnt_range[limited, 0] - qpos, qpos - model.jnt_range[limited, 1])
    return KnotChecks(
        times=np.asarray(solution.times, dtype=float), stance=stance, eom_residual=eom, stance_speed=out["speed"], stance_slip=out["slip"],
        penetration=penetration, friction_excess=out["friction"], plan_friction_excess=out["plan_friction"], normal_force=out["normal"], swing_force=out["swing"],
        torque_excess=torque_excess, joint_excess=joint_excess, body_clearance=clearance, shank_height=shanks,
    )


def shank_heights(anchors: np.ndarray, knee_joints: np.ndarray, feet: np.ndarray) -> np.ndarray:
    """Each shank's lower end height (nc,): the lower of its knee (``anchors[knee_joints[i]]``, MuJoCo's joint
    anchors) and its point :data:`~trajopt.legged.link_clearance.FOOT_GAP` above the foot ``feet[i]``; NaN where
    the foot's body has no joint (``knee_joints[i] < 0``) or the foot is within ``FOOT_GAP`` of its knee."""
    out = np.full(len(feet), np.nan)
    for i, (joint, foot) in enumerate(zip(knee_joints, feet)):
        if joint < 0:
            continue
        knee = anchors[joint]
        length = np.linalg.norm(foot - knee)
        if length > FOOT_GAP:
            out[i] = min(knee[2], knee[2] + (1.0 - FOOT_GAP / length) * (foot[2] - knee[2]))
    return out
