"""Where a gait goes over a terrain: footholds on foot regions, swing envelopes, the base pose, the start.

:func:`plan_on_terrain` carries a contact schedule's template over a
:class:`trajopt.terrain.Terrain` before anything is solved:

1. **Start.** The robot stands with its feet on the terrain: each foot of
   the standing pose (:meth:`models.LeggedRobot.init_state`, ``x0``'s feet
   when given) goes to the nearest point of the foot region under it
   (:meth:`Terrain.region_at`, shrunk by the terrain's margin).
2. **Footholds.** The template moves each foot by ``displacement / n_i`` per
   swing (:func:`.footholds.foothold_table`, horizontal part). Each stance
   phase takes the foot region nearest the template's point
   (:meth:`Terrain.regions_near` within one leg length) and its point nearest
   the template's: the nominal foothold. The problem holds the foot on that
   region's surface and inside it, not on the point.
3. **Base.** Each foot has a ground point at every knot: its stance
   foothold, or, in the air, the point between its lift-off and landing
   footholds at its progress through the swing. In a walk the base keeps
   its start offset from the ground points' centroid in ``(x, y)`` (it moves
   with the feet); in a plan with a flight (every foot in the air) it goes
   from its start to the same offset from the last centroid along the
   minimum-jerk path ``Q(t / t_f)`` (:func:`trajopt.terrain.smoothstep`: at
   rest at both ends, fastest in the middle of the horizon); its height and
   tilt follow the plane fitted (least squares) through the ground points:
   the base is :attr:`models.LeggedRobot.standing_height` above that plane
   at its ``(x, y)``, plus, while every foot is in the air, the ballistic
   rise ``g t (T - t) / 2`` of a flight of duration ``T``; its ``z`` axis is
   along the plane's normal, its ``x`` axis the heading (the displacement's
   direction, or the start's yaw) tilted into the plane.
4. **Swings.** Each swing gets the envelope of the terrain between its
   lift-off and landing footholds (:meth:`Terrain.swing_profile`); its nominal
   path runs straight between them in ``(x, y)``, lifted over the line
   between their heights by a parabola that peaks ``apex`` above the higher
   of the two, and at least ``clearance`` plus 1 cm above the envelope.

Checks that raise ``ValueError`` before a solve (what cannot work): a start
foot farther than half a leg length from any footing, a foothold with no foot
region within a leg length ("stones out of reach"), a stance foot its leg
cannot reach from the base pose (analytic IK within the joint limits), a
swing over ground that rises above the hips' standing height ("a stair taller
than the leg"), the terrain under the robot tilted beyond :data:`MAX_TILT`,
and a flight (every foot in the air) whose take-off needs more kinetic
energy than the legs can give (:func:`check_flights`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence

import numpy as np
import pinocchio as pin

from lie import quat_to_rot, rot_to_quat
from models.joint_limits import wrap_into_limits
from models.leg_ik import quadruped_ik
from models.model import GRAVITY

from ..terrain import SWING_HALF_WIDTH, Surface, SwingProfile, Terrain, smoothstep
from ..terrain.base import nearest_regions
from .base_path import flight_phases
from .footholds import foothold_table, swing_apex_knots
from .schedule import ContactSchedule

#: Largest tilt (rad) of the plane under the robot a plan may ask for.
MAX_TILT = np.radians(40.0)
#: How far [m] a start foot may move to the nearest footing, as a fraction of the leg length.
START_SHIFT = 0.5
#: Extra height [m] of the nominal swing path above the clearance it needs.
PATH_EXTRA = 0.01


@dataclass(frozen=True, eq=False)
class StancePhase:
    """Foot ``foot`` in stance on knots ``first..last`` on ``region``, nominally at ``foothold`` (3,)."""

    foot: int
    first: int
    last: int
    region: Surface
    foothold: np.ndarray


@dataclass(frozen=True, eq=False)
class SwingPhase:
    """Foot ``foot`` in the air on knots ``first..last``, from ``lift`` (3,) toward ``land`` (3,) over ``profile``."""

    foot: int
    first: int
    last: int
    lift: np.ndarray
    land: np.ndarray
    profile: SwingProfile
    apex_knot: int


@dataclass(eq=False)
class TerrainPlan:
    """What :func:`plan_on_terrain` decides (module docstring); arrays per knot ``k`` and foot ``i``.

    ``x0`` the start state; ``stances``/``swings`` the phases; ``footholds``
    (N, nf, 3) the nominal foothold of the stance a foot is in or lands in
    next; ``nominal_feet`` (N, nf, 3) the nominal foot paths;
    ``base_positions`` (N, 3) and ``base_quaternions`` (N, 4) the base's
    reference; ``heading`` (rad).
    """

    terrain: Terrain
    x0: np.ndarray
    stances: List[StancePhase]
    swings: List[SwingPhase]
    footholds: np.ndarray
    nominal_feet: np.ndarray
    base_positions: np.ndarray
    base_quaternions: np.ndarray
    heading: float

    def stance_at(self, foot: int, k: int) -> Optional[StancePhase]:
        """The stance phase of ``foot`` holding knot ``k`` (``None`` in swing)."""
        return next((s for s in self.stances if s.foot == foot and s.first <= k <= s.last), None)


def plan_on_terrain(
    robot: Any,
    schedule: ContactSchedule,
    terrain: Terrain,
    displacement: Sequence[float],
    apex: float,
    clearance: float,
    x0: Optional[np.ndarray] = None,
    half_width: float = SWING_HALF_WIDTH,
) -> TerrainPlan:
    """The :class:`TerrainPlan` of ``schedule`` (keyed by ``robot``'s feet) over ``terrain`` (module docstring).

    ``displacement`` (m, world frame; its ``z`` is ignored: the terrain sets
    the heights), ``apex`` (m) the swing lift, ``clearance`` (m) the margin
    swinging feet keep above the terrain, ``x0`` a start state whose feet
    stand on the terrain (default: :meth:`~models.LeggedRobot.init_state`
    carried onto it), ``half_width`` (m) of the swing corridors.
    """
    nf, N = robot.nc, schedule.N
    shift = np.r_[np.asarray(displacement, dtype=float)[:2], 0.0]
    if x0 is None:
        start = robot.init_state()
        feet0 = _start_footholds(robot, terrain, np.asarray(robot.kinematics(start), dtype=float).reshape(nf, 3))
        heading = float(np.arctan2(shift[1], shift[0])) if np.linalg.norm(shift) > 1e-9 else 0.0
    else:
        start = np.asarray(x0, dtype=float)
        feet0 = np.asarray(robot.kinematics(start), dtype=float).reshape(nf, 3)
        _check_on_terrain(robot, terrain, feet0, schedule)
        R0 = quat_to_rot(robot.base_orientation(start))
        heading = float(np.arctan2(R0[1, 0], R0[0, 0]))
    table = foothold_table(schedule, np.c_[feet0[:, :2], np.zeros(nf)], shift)[:, :, :2]
    stances = _stance_phases(robot, schedule, terrain, table, feet0)
    footholds = _foothold_array(schedule, stances, table)
    swings = _swing_phases(schedule, terrain, stances, footholds, half_width, heading)
    ground = _ground_points(schedule, footholds, swings)
    centroid = ground[:, :, :2].mean(axis=1)
    base_xy = centroid + (robot.base_position(start)[:2] - centroid[0])
    rise = flight_rise(schedule)
    if rise.any():
        base_xy = base_xy[0] + np.outer(smoothstep(np.linspace(0.0, 1.0, N)), base_xy[-1] - base_xy[0])
    positions, quats = _base_poses(robot, ground, base_xy, heading)
    positions[:, 2] += rise
    if x0 is None:
        start = _standing_state(robot, start, positions[0], quats[0], feet0)
    else:
        positions[0], quats[0] = robot.base_position(start), robot.base_orientation(start)
    nominal = _nominal_paths(schedule, footholds, swings, apex, clearance)
    plan = TerrainPlan(terrain, start, stances, swings, footholds, nominal, positions, quats, heading)
    check_reach(robot, plan)
    check_rises(robot, plan, clearance)
    check_flights(robot, schedule, plan)
    return plan


# ------------------------------------------------------------------ footholds
def _start_footholds(robot: Any, terrain: Terrain, feet: np.ndarray) -> np.ndarray:
    """The standing pose's feet moved onto the nearest footing (module docstring, step 1)."""
    out = np.zeros_like(feet)
    for i, p in enumerate(feet):
        region = terrain.region_at(p[:2])
        candidates = nearest_regions([region] if region is not None else terrain.regions_near(p[:2], START_SHIFT * robot.leg_length), p[:2])
        if not candidates or candidates[0][0] > START_SHIFT * robot.leg_length:
            raise ValueError(
                f"terrain: the start foot {robot.kinematics_bodies[i]} at ({p[0]:.3f}, {p[1]:.3f}) m has no footing within "
                f"{START_SHIFT * robot.leg_length:.3f} m on {terrain.describe()}"
            )
        _, point, region = candidates[0]
        out[i] = region.point(point)
    return out


def _check_on_terrain(robot: Any, terrain: Terrain, feet: np.ndarray, schedule: ContactSchedule, tol: float = 1e-3) -> None:
    for i, p in enumerate(feet):
        if schedule.stance[0, i] and abs(p[2] - float(terrain.height(p[:2])[0])) > tol:
            raise ValueError(f"x0: the stance foot {robot.kinematics_bodies[i]} is at z = {p[2]:.4f} m, the terrain at {float(terrain.height(p[:2])[0]):.4f} m; x0's stance feet must stand on the terrain (to {tol:g} m)")


def _stance_phases(robot: Any, schedule: ContactSchedule, terrain: Terrain, table: np.ndarray, feet0: np.ndarray) -> List[StancePhase]:
    """Every stance phase with its region and nominal foothold (module docstring, step 2)."""
    phases = []
    for i in range(robot.nc):
        col = schedule.stance[:, i]
        k = 0
        while k < schedule.N:
            if not col[k]:
                k += 1
                continue
            first = k
            while k < schedule.N and col[k]:
                k += 1
            if first == 0:
                region = terrain.region_at(feet0[i, :2])
                phases.append(StancePhase(i, 0, k - 1, region, feet0[i].copy()))
                continue
            xy = table[first, i]
            candidates = nearest_regions(terrain.regions_near(xy, robot.leg_length), xy)
            if not candidates:
                raise ValueError(
                    f"terrain: no foothold within reach of {robot.kinematics_bodies[i]}'s step at knot {first}: nothing to stand on within "
                    f"{robot.leg_length:.3f} m of ({xy[0]:.3f}, {xy[1]:.3f}) m on {terrain.describe()}"
                )
            _, point, region = candidates[0]
            phases.append(StancePhase(i, first, k - 1, region, region.point(point)))
    return phases


def _foothold_array(schedule: ContactSchedule, stances: List[StancePhase], table: np.ndarray) -> np.ndarray:
    """(N, nf, 3): the foothold of the current stance, or of the next one during a swing (the last
    swing without a landing keeps the template's point at its last stance's height)."""
    N, nf = schedule.N, table.shape[1]
    out = np.zeros((N, nf, 3))
    for i in range(nf):
        own = sorted((s for s in stances if s.foot == i), key=lambda s: s.first)
        for k in range(N):
            after = next((s for s in own if s.last >= k), None)
            if after is not None:
                out[k, i] = after.foothold
            else:
                last = own[-1].foothold if own else np.r_[table[k, i], 0.0]
                out[k, i] = np.r_[table[k, i], last[2]]
    return out


def _swing_phases(schedule: ContactSchedule, terrain: Terrain, stances: List[StancePhase], footholds: np.ndarray, half_width: float, heading: float) -> List[SwingPhase]:
    """Every swing with its lift-off and landing footholds and the terrain's envelope between them."""
    out = []
    for i in range(footholds.shape[1]):
        apexes = swing_apex_knots(schedule, i)
        for (a, b), apex_knot in zip(schedule.swings(i), apexes):
            lift = footholds[a - 1, i] if a > 0 else footholds[a, i]
            land = footholds[b + 1, i] if b + 1 < schedule.N else footholds[b, i]
            out.append(SwingPhase(i, a, b, lift.copy(), land.copy(), terrain.swing_profile(lift, land, half_width, heading), apex_knot))
    return out


# ------------------------------------------------------------------ base
def _ground_points(schedule: ContactSchedule, footholds: np.ndarray, swings: List[SwingPhase]) -> np.ndarray:
    """(N, nf, 3) the feet's ground points the base's plane is fitted through (module docstring, step 3)."""
    ground = footholds.copy()
    for sw in swings:
        for k in range(sw.first, sw.last + 1):
            s = (k - sw.first + 1) / (sw.last - sw.first + 2)
            ground[k, sw.foot] = (1 - s) * sw.lift + s * sw.land
    return ground


def flight_rise(schedule: ContactSchedule) -> np.ndarray:
    """(N,) the ballistic rise ``g t (T - t) / 2`` [m] at the knots of every flight (no foot in stance),
    ``t`` from the last stance knot before it, ``T`` to the first one after it; 0 elsewhere."""
    rise = np.zeros(schedule.N)
    for a, b in flight_phases(schedule):
        T, t = (b - a + 2) * schedule.dt, (np.arange(a, b + 1) - a + 1) * schedule.dt
        rise[a : b + 1] = 0.5 * GRAVITY * t * (T - t)
    return rise


def fit_plane(points: np.ndarray) -> tuple:
    """``(c0, gx, gy)`` of the least-squares plane ``z = c0 + gx x + gy y`` through points (M >= 3, 3)."""
    M = np.c_[np.ones(len(points)), points[:, :2]]
    return np.linalg.lstsq(M, points[:, 2], rcond=None)[0]


def base_rotation(normal: np.ndarray, heading: Any) -> np.ndarray:
    """The rotation whose ``z`` axis is ``normal`` and whose ``x`` axis is the heading tilted into the plane:
    (3, 3) for a unit ``normal`` (3,) and a ``heading`` (rad); (K, 3, 3) for normals (K, 3) or headings (K,)."""
    heading = np.asarray(heading, dtype=float)
    normal = np.asarray(normal, dtype=float)
    h = np.stack([np.cos(heading), np.sin(heading), np.zeros_like(heading)], axis=-1)
    x = h - np.sum(h * normal, axis=-1, keepdims=True) * normal
    x = x / np.linalg.norm(x, axis=-1, keepdims=True)
    n = np.broadcast_to(normal, x.shape)
    return np.stack([x, np.cross(n, x), n], axis=-1)


def _base_poses(robot: Any, ground: np.ndarray, base_xy: np.ndarray, heading: float) -> tuple:
    positions, quats = np.zeros((len(ground), 3)), np.zeros((len(ground), 4))
    for k, points in enumerate(ground):
        c0, gx, gy = fit_plane(points)
        normal = np.array([-gx, -gy, 1.0]) / np.sqrt(1 + gx * gx + gy * gy)
        tilt = float(np.arccos(normal[2]))
        if tilt > MAX_TILT:
            raise ValueError(
                f"terrain: the ground under the robot at knot {k} tilts {np.degrees(tilt):.1f} deg (feet at heights "
                f"{np.round(points[:, 2], 3).tolist()} m); at most {np.degrees(MAX_TILT):g} deg"
            )
        x, y = base_xy[k]
        positions[k] = (x, y, c0 + gx * x + gy * y + robot.standing_height)
        quats[k] = rot_to_quat(base_rotation(normal, heading))
        if k and quats[k] @ quats[k - 1] < 0:
            quats[k] = -quats[k]
    return positions, quats


def _standing_state(robot: Any, start: np.ndarray, position: np.ndarray, quat: np.ndarray, feet: np.ndarray) -> np.ndarray:
    """``start`` moved to the base pose, its legs reaching ``feet`` (IK nearest the standing joints), at rest."""
    x = np.zeros(robot.nx)
    x[robot.base_position_slice], x[robot.base_orientation_slice] = position, quat
    x[robot.joint_position_slice] = robot.joint_positions(start)
    x[robot.joint_position_slice] = robot.nearest_ik(x, feet)
    return x


# ------------------------------------------------------------------ swings
def _nominal_paths(schedule: ContactSchedule, footholds: np.ndarray, swings: List[SwingPhase], apex: float, clearance: float) -> np.ndarray:
    """(N, nf, 3) nominal foot positions (module docstring, step 4)."""
    paths = footholds.copy()
    for sw in swings:
        for k in range(sw.first, sw.last + 1):
            s = (k - sw.first + 1) / (sw.last - sw.first + 2)
            p = (1 - s) * sw.lift + s * sw.land
            top = max(sw.lift[2], sw.land[2]) + apex - 0.5 * (sw.lift[2] + sw.land[2])  # the lift at mid-swing
            p[2] = max(p[2] + 4 * top * s * (1 - s), float(sw.profile.envelope(p[:2])[0]) + clearance + PATH_EXTRA)
            paths[k, sw.foot] = p
    return paths


# ------------------------------------------------------------------ checks
def _leg_reaches(leg: Any, position: np.ndarray, quat: np.ndarray, foot: np.ndarray) -> bool:
    """Whether ``leg`` reaches ``foot`` (world) from the base pose with angles within its limits."""
    sols = quadruped_ik([leg], position, quat, foot[None])
    return any(not np.isnan(wrap_into_limits(sols[:, j], leg.lower, leg.upper)).any() for j in range(sols.shape[1]))


def check_reach(robot: Any, plan: TerrainPlan) -> None:
    """``ValueError`` when a stance foot cannot be reached from the base's reference pose (module docstring)."""
    for st in plan.stances:
        leg = robot.legs[st.foot]
        for k in range(st.first, st.last + 1):
            if not _leg_reaches(leg, plan.base_positions[k], plan.base_quaternions[k], st.foothold):
                hip = plan.base_positions[k] + quat_to_rot(plan.base_quaternions[k]) @ (leg.hip_pos + leg.hip_to_thigh)
                raise ValueError(
                    f"terrain: {robot.kinematics_bodies[st.foot]}'s foothold {np.round(st.foothold, 3).tolist()} m on {st.region.name} at knot {k} "
                    f"is out of reach: {np.linalg.norm(st.foothold - hip):.3f} m from its thigh joint, legs of {robot.leg_length:.3f} m within their joint limits"
                )


def check_rises(robot: Any, plan: TerrainPlan, clearance: float, samples: int = 50) -> None:
    """``ValueError`` when a swing must lift its foot above its hip (module docstring): over ground
    rising more than :attr:`~models.LeggedRobot.standing_height` minus ``clearance`` above the lower of its footholds."""
    for sw in plan.swings:
        s = np.linspace(0.0, 1.0, samples)[:, None]
        path = (1 - s) * sw.lift[:2] + s * sw.land[:2]
        rise = float(sw.profile.envelope(path).max()) - min(sw.lift[2], sw.land[2])
        if rise + clearance > robot.standing_height:
            raise ValueError(
                f"terrain: {robot.kinematics_bodies[sw.foot]}'s swing at knots {sw.first}..{sw.last} must pass over ground {rise:.3f} m above its "
                f"lower foothold, {rise + clearance:.3f} m with the {clearance:g} m clearance, above the hips' standing height "
                f"{robot.standing_height:.3f} m: a step taller than {robot.name}'s legs can climb"
            )


def leg_push_work(robot: Any, x: np.ndarray) -> float:
    """An upper bound [J] of the work the legs can do in one push: sum over legs of the largest
    vertical foot force the torque limits allow at ``x`` (``min_j tau_max_j / |J_z,j|``, foot Jacobian
    world-aligned) times the leg length (the most a foot can move while pushing)."""
    model, data = robot.pin_model, robot.pin_model.createData()
    q = robot.change_order(x[: robot.nq], "nominal", "pinocchio")
    pin.computeJointJacobians(model, data, q)
    pin.updateFramePlacements(model, data)
    limits = robot.torque_limits()
    total = 0.0
    for foot, leg in zip(robot.kinematics_bodies, robot.legs):
        J = pin.getFrameJacobian(model, data, model.getFrameId(foot), pin.LOCAL_WORLD_ALIGNED)[2, list(leg.v_indices)]
        joints = np.asarray(leg.v_indices) - 6
        with np.errstate(divide="ignore"):
            total += float(np.min(np.where(np.abs(J) > 1e-9, limits[joints] / np.abs(J), np.inf)))
    return total * robot.leg_length


def check_flights(robot: Any, schedule: ContactSchedule, plan: TerrainPlan) -> None:
    """``ValueError`` when a flight needs more take-off energy than :func:`leg_push_work` (a gap too wide to jump).

    During a flight of duration ``T`` (every foot in the air, knots ``a..b``,
    ``T = (b - a + 2) dt``) the feet travel at least ``d`` (the smallest
    horizontal distance between a foot's lift-off and landing footholds); the
    base must cover at least ``d - 2 L`` of it in the air (each foot may reach
    a leg length ``L`` behind its hip at take-off and ahead at landing): a
    horizontal speed ``v_x >= (d - 2 L) / T``, and to come down again after
    ``T`` a vertical speed ``v_z >= g T / 2 + dz / T`` (``dz`` the landing
    footholds' mean height over the take-off ones'). The take-off kinetic
    energy ``m (v_x^2 + v_z^2) / 2`` must not exceed the legs' work.
    """
    for a, b in flight_phases(schedule):
        T = (b - a + 2) * schedule.dt
        lifts, lands = plan.footholds[a - 1], plan.footholds[b + 1]
        d = float(np.min(np.linalg.norm(lands[:, :2] - lifts[:, :2], axis=1)))
        vx = max(0.0, d - 2 * robot.leg_length) / T
        vz = max(0.0, GRAVITY * T / 2 + float(np.mean(lands[:, 2] - lifts[:, 2])) / T)
        need, can = 0.5 * robot.mass * (vx * vx + vz * vz), leg_push_work(robot, plan.x0)
        if need > can:
            raise ValueError(
                f"terrain: the flight at knots {a}..{b} ({T:.2f} s) carries the feet {d:.3f} m: a take-off at {vx:.2f} m/s forward and "
                f"{vz:.2f} m/s up needs {need:.0f} J, more than the {can:.0f} J {robot.name}'s legs can give in one push (a gap too wide to jump)"
            )
