"""Receding-horizon gaits for any quadruped and for the humanoid: one NLP for every tick, the gait's phase in its data.

:class:`LeggedMPC` builds the horizon problem once and updates its data at
every tick (:meth:`LeggedMPC.update`, the :class:`~trajopt.mpc.MPC`'s
``update``). The model is the contact formulation of
:mod:`trajopt.legged.ocp`: the controls are the joint torques, the stance
feet are held by the KKT contact dynamics whose stance mask is the model's
dynamics parameter, integrated by explicit Runge-Kutta multiple shooting with
the costs at the knots (Gauss-Newton Hessian). Every constraint exists at
every knot; the gait decides their bounds, so a schedule that moves through
the horizon changes numbers, never the NLP. The ground is a plane
(:class:`~trajopt.mpc.ground_plane.GroundPlane`: the flat ground, or a
slope): on a slope, forces and heights below are taken in the plane's frame
(the pyramid about its normal, heights ``p_z - g_x p_x - g_y p_y``), the
base's reference stands its standing height above the plane with its ``z``
axis along the normal, and the swing targets lie on the plane. Or it is the
horizontal foot regions of a terrain (stairs;
:class:`~trajopt.mpc.terrain_ground.TerrainGround`), which adds rows of its
own (below) and its reference for the trunk:

- the friction pyramid inscribed in Coulomb's cone, ``|f_x|, |f_y| <= mu f_z
  / sqrt(2)``, of every foot's KKT force ``f(x_k, u_k, s_k)`` (its rows' lower
  bound 0 in stance, ``-inf`` in swing, where the force is zero), at the knots
  that hold a control. Inscribed, not circumscribed like the pyramid
  ``|f_x|, |f_y| <= mu f_z`` of the plans: that one admits ``sqrt(2) mu f_z``
  along its diagonals, where a trot plans its internal forces, and feet slid.
  The rows are in the robot's weight ``m g`` (``(c f_z -+ f_x) / (m g)``):
  HPIPM's interior point starts its slacks and multipliers at one scale, and
  rows in newtons cost it iterations;
- a biped's standing soles: each carries at least :data:`SOLE_LOAD_FLOOR` of
  the robot's weight (the sum of its corners' normal forces). The horizon
  holds a standing sole flat, so without it a plan may unload one sole and put
  the whole robot's centre of pressure on the other sole's outer edge. The
  real robot pivots about that edge, the unloaded sole lifts and slides, and
  when it lands again the QPs fail: the pushed G1 fell
  (docs/design/mpc.md has the trials);
- touchdown: at the knot ``k >= 2`` where a foot lands (in stance at ``k``,
  in swing at ``k - 1``) its height is the ground's and its velocity zero
  (``J_i v = 0``: the contact dynamics keep the velocity a foot lands with);
  free elsewhere. The ground's height is the mean height of the feet
  standing now (a soft ground lets them sink a few millimetres); over foot
  regions, the height of the landing's foothold plus the stance feet's mean
  height above the terrain. A knot's touchdown rows are slots for as many
  landings as the gaits put in one knot step (``LeggedMPC.landing_slots``:
  pairs of feet for the trot, pace and bound, one sole for a biped, every
  foot for a plan-tracking horizon's jump): a landing's feet (a point foot,
  or a sole's corners, ``LeggedMPC.landing_groups``) take a slot whose
  parameters select their rows, and a slot without a landing selects
  nothing and is free. A horizon whose gaits never lift a foot
  (:meth:`LeggedMPC.lifts_feet`: standing) has no touchdown rows: they would
  be free in every QP, and an HPIPM iteration costs more with every row,
  bounded or not. Knot 1 is
  left free: it is reached from the measured state in one interval, and a
  foot there often cannot be steered (hard rows there made the QP
  infeasible when the plant's feet landed early or sank; touchdown as a
  cost only let feet land late);
- the URDF's torque and joint limits (bounds);
- over foot regions only: at a landing's touchdown knot the foot inside its
  region's axis-aligned rows, and from knot 3 on, where a swing's envelope
  rises above its lift-off, ``p_z - E(p) >= c(s)`` (the swing's clearance
  over the terrain's edges, :mod:`trajopt.mpc.terrain_ground`).

The horizon starts from the measured state with the velocities of the feet
that landed within the last :data:`SETTLE_TIME` (in stance at knot 0, in
swing at one of the times ``t - j h`` of that span) removed by a plastic impact
(:meth:`LeggedMPC.stance_projection`):

    v+ = v - M^-1 J_s^T (J_s M^-1 J_s^T)^-1 J_s v,

``M`` the joint-space inertia and ``J_s`` the stance feet's WORLD-aligned
linear Jacobian rows (the least change of kinetic energy that stops them).
The KKT contact dynamics hold a stance foot's acceleration at zero, not its
velocity, so a foot that lands with some velocity (in soft contacts) would
have it carried through the whole stance. Feet that have stood longer keep
their measured velocity, so that the slow creep of a standing foot stays
visible to the controller; but a standing sole's corners (points sharing a
rigid body) lose theirs at every tick: MuJoCo's soft contacts let a sole
rock, and a rocking sole that the horizon holds rigid kept rocking in the
prediction, and the pushed G1 fell (docs/design/mpc.md has the trials).

The stance mask of knot ``k`` (time ``t_k = t + k h``) is the gait's stance
at the middle of interval ``k`` (:class:`~trajopt.mpc.gaits.GaitTimeline`: a
gait schedule in continuous time, so a gait may change inside the horizon).
With ``step_timing``, a push sideways makes the horizon end the swing in
progress sooner by advancing that timeline (:mod:`trajopt.mpc.step_timing`),
and the footholds are planned from the measured base as over a terrain
(below): a pushed robot steps under where its body went, not under its
reference, which stays within :data:`MAX_LAG` of it.

The references come from the commands (:mod:`trajopt.mpc.commands`: a
velocity ``(v_x, v_y, omega)`` in the heading frame, piecewise constant in
time) through a generator with memory, advanced at every tick:

- the reference velocity follows the command at bounded accelerations
  (:data:`ACCELERATION` m/s^2 and rad/s^2, the Go1's, scaled; a biped's
  forward and lateral ones :data:`BIPED_ACCELERATION`);
- the reference position ``p_ref`` and heading ``psi_ref`` integrate it, and
  are pulled towards the measured base when it lags by more than
  :data:`MAX_LAG` (m, scaled; rad): a robot trotting in place is pulled back
  to where it started, one that cannot keep up is not dragged;
- over the horizon, the reference keeps ramping towards each knot's command;
- with a ``goal`` (a WORLD position), the command's speed is pointed at the
  goal from the reference position and capped by ``sqrt(2 a d)`` (``d`` the
  distance left), so that the reference stops there; it does not move while
  the gait stands. The terrain tasks walk to where their plans end this way
  (:mod:`trajopt.mpc.tasks`);
- standing still (four feet down at every knot, the reference at rest) the
  reference position is over the feet: the base position that puts the
  measured feet at their standing offsets (in the least-squares sense), so
  that the reference asks the four fixed feet for no steady horizontal
  force.

The cost (least squares, :class:`LeggedMPCWeights`) tracks

- the base: position ``p_ref(t_k)`` at the standing height, level attitude
  with heading ``psi_ref(t_k)``, body velocity ``v_ref``, yaw rate ``omega_ref``;
- the joints: the standing posture, at rest;
- the swing feet: the foothold at their touchdown ``t_td``,

      p_td = p_ref(t_td) + R(psi_ref(t_td)) h_i + v_ref T beta / 2 + sqrt(z0 / g) (v - v_ref),

  clipped to within :data:`REACH` of the hip (a fraction of the leg's length,
  inside the IK's workspace), with ``h_i`` the foot's standing offset from the
  base, ``T beta / 2`` half the stance time (Raibert's neutral point) and the
  capture-point correction of the measured base velocity ``v`` (WORLD frame,
  ``z0`` the standing height), reached along ``(1 - s) p_lo + s p_td + (d + 4 a s
  (1 - s)) e_z`` (``s`` the swing's phase, ``p_lo`` where the foot lifted off,
  ``a`` the apex height above the ground, ``d`` the feet's sink
  ``foot_sink``: on a soft ground the stance feet sit ``d`` below the surface
  the swing must clear, and the ground height is estimated from them).
  Over foot regions, ``p_td`` is taken from the measured base (``p_ref``
  minus the lag ``p_ref - p``: the reference runs up to :data:`MAX_LAG`
  ahead of a robot that climbs, and footholds planned from it overreached
  up a stair and put a shank on its edge) and moved into a foot region
  (:meth:`~trajopt.mpc.terrain_ground.TerrainGround.foothold`); a target
  between two regions goes to the side of the target planned from ``p +``
  the lag's first :data:`EDGE_LEAD` (so that a robot whose hind feet stand
  just before the last stair still steps up to its goal); the path's height
  is at least the swing's envelope plus the clearance;
- the torques, lightly: at a knot with all four feet down around the
  torques that hold the standing posture with vertical forces ``m g / 4``
  per foot (``tau = g(q) - J^T f``, joint rows), elsewhere around zero.
  With four feet down the contact dynamics leave the internal forces (feet
  pushing each other apart) to this term alone: around zero torque the
  cheapest torques pushed the feet outwards until the legs splayed; around
  these torques the plan's forces stay vertical. A gait moves
  its feet before they creep, and on two feet a vertical-force reference
  (``m g / 2`` each) leaves a moment about the base unbalanced, so the
  other knots keep zero.
  The torque weight is the Go1's divided by the robot's torque scale
  ``m_r s`` (mass and leg ratios to the Go1's,
  :attr:`~trajopt.legged.scaling.GaitScale.torque`; :meth:`LeggedMPCWeights.scaled`),
  the other weights are the Go1's: the Go1's weight left light robots' torques
  almost free and the ``(m_r s)^2`` of dynamic similarity left heavy robots'
  too cheap; divided by ``m_r s``, all six robots of ``trajopt solve trot
  --robot`` walk.

A terminal cost weighs the base and joints ``terminal_factor`` times more.

The real-time iteration's step takes no Levenberg-Marquardt term (the
``regularization`` option of :mod:`trajopt.solvers.rti`, ``lambda |d|^2 / 2``,
left at its default 0): with four feet down it froze the torques' null space
(the internal forces) where the trot had left it, and the feet crept apart.

Lengths and times scale with the robot's legs (:class:`~trajopt.legged.scaling.GaitScale`):
the horizon's length, period, apex, standing height, accelerations, lags come
from the robot. The knot step does not: it is ``dt`` (0.02 s, the period of
a 50 Hz controller) for every robot, so that a tick on the controller's grid
moves the horizon by whole knots and its warm start is the previous plan
itself (:mod:`trajopt.mpc.shift`; run the controller at a period that is a
multiple of ``dt``); scaled knots put the ticks between knots and the warm
starts had to be interpolated.

A humanoid's contact points are its soles' corners (:class:`models.Humanoid`
with four contacts per foot): the KKT contact dynamics give the corners of a
sole the least forces that hold it (:mod:`models.multibody.contact`), every
per-foot quantity above is per corner (the vertical-force reference is
``m g / nc`` per point; each corner's force in its pyramid keeps the sole's
centre of pressure inside the diamond through its edges' midpoints), a
landing sole holds six independent rows of its corners' velocities and three
heights (``LeggedMPC._landing_rows``), and it walks with a biped's gait
(:data:`~trajopt.mpc.gaits.BIPED_GAITS`).

Design notes, with the measurements behind each choice: docs/design/mpc.md.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Optional, Sequence, Tuple

import casadi as ca
import numpy as np
from scipy.spatial.transform import Rotation

from lie import quat_to_euler_zyx, yaw_to_quat, yaw_to_rot
from models.contact_dynamics import ContactDynamics
from models.model import GRAVITY
from models.multibody.contact import body_groups
from models.numeric_call import NumericCall

from ..constraints import Constraint
from ..costs import LeastSquaresCost, QuadraticCost, QuadraticTerminalCost
from ..legged.ocp import friction_rows
from ..legged.scaling import GaitScale
from .commands import Command, CommandProfile, command_limits
from .gaits import GaitSchedule, GaitTimeline, is_biped
from .ground_plane import GroundPlane
from .step_timing import StepTiming, heading_offset
from ..problem import Problem

#: Reference accelerations of the Go1 (scaled): forward and lateral (m/s^2), yaw (rad/s^2).
ACCELERATION = (1.0, 1.0, 2.0)
#: A biped's forward and lateral reference accelerations (m/s^2): the G1 fell speeding up at the Go1's (docs/design/mpc.md).
BIPED_ACCELERATION = (0.3, 0.3)
#: How far the reference may lead the measured base of the Go1 (scaled): position (m), heading (rad).
MAX_LAG = (0.1, 0.3)
#: The horizon's length (s, the Go1's; scaled by the robot's legs), the trot's period
#: (:data:`~trajopt.mpc.gaits.GAITS`). Longer horizons let standing robots drift and fall (docs/design/mpc.md).
DEFAULT_HORIZON = 0.4
#: A foothold's largest horizontal distance from its hip, as a fraction of the leg's length.
REACH = 0.45
#: Over a terrain, how far (m, the Go1's; scaled) the reference's lead over the measured base may carry a foothold target
#: that lies between two foot regions to the farther one (module docstring).
EDGE_LEAD = 0.04
#: Over a terrain, the fraction of a swing by which its path's horizontal part reaches the foothold: the rest comes
#: down onto it (feet following the straight path landed short, some on a stair's edge).
SWING_REACH_PHASE = 0.75
#: How long after its touchdown a foot's measured velocity is projected out (s, the Go1's, scaled; module docstring):
#: longer than a trot's stance (0.3 s), so that only a stand keeps its feet's measured velocities.
SETTLE_TIME = 0.5
#: The least normal force (a fraction of the robot's weight) each standing sole of a biped carries in the horizon's
#: plan (module docstring).
SOLE_LOAD_FLOOR = 0.04


@dataclass(frozen=True)
class LeggedMPCWeights:
    """Least-squares weights of the legged horizon's cost, in the Go1's units (:meth:`scaled` carries them to a
    robot): base position (x, y, z, per m^2), orientation (per rad^2), linear and angular velocity (per (m/s)^2,
    (rad/s)^2), joint position and velocity, swing foot position (per m^2), torque (per (N m)^2);
    ``terminal_factor`` for the last knot."""

    base_position: Sequence[float] = (50.0, 50.0, 200.0)
    base_orientation: Sequence[float] = (200.0, 200.0, 50.0)
    base_velocity: Sequence[float] = (10.0, 10.0, 10.0)
    base_angular_velocity: Sequence[float] = (2.0, 2.0, 2.0)
    joint_position: float = 2.0
    joint_velocity: float = 0.02
    swing_foot: float = 300.0
    torque: float = 1e-3
    terminal_factor: float = 5.0

    def scaled(self, scale: GaitScale) -> "LeggedMPCWeights":
        """These Go1 weights for a robot of ``scale``: the torque weight divided by the torque scale ``m_r s``
        (:attr:`~trajopt.legged.scaling.GaitScale.torque`), the others as they are (module docstring). The Go1's
        are unchanged."""
        return replace(self, torque=self.torque / scale.torque)


class LeggedMPC:
    """The horizon problem of a legged robot's receding-horizon gait and its per-tick update.

    One NLP for every tick: joint torques as controls, the KKT contact dynamics with the stance
    mask as dynamics parameter, RK multiple shooting, friction pyramids and touchdown rows at every
    knot whose bounds the gait sets. :meth:`update` moves the gait's phase, the reference (from the
    commanded velocity, at bounded accelerations) and the swing feet's targets (Raibert footholds
    with a capture-point correction) to the tick's time.

    Parameters
    ----------
    robot:
        A :class:`models.LeggedRobot` (``Go1``, ``LeggedRobot.from_robot_data(...)``) with four feet, or a
        :class:`models.Humanoid` with four contacts per sole.
    gaits:
        A gait name (``"stand"``, ``"trot"``, ``"pace"``, ``"bound"``; ``"walk"`` for a biped) or a :class:`GaitSchedule`.
    commands:
        A :class:`Command` or a :class:`CommandProfile` (default: stand still), clamped to
        :func:`~trajopt.mpc.commands.command_limits` with a warning.
    horizon:
        Horizon length (s, Go1 value, scaled by the robot's legs; :data:`DEFAULT_HORIZON`); ``dt`` its knot
        step (s, the same for every robot: the controller's period or a divisor of it; module docstring).
    apex:
        Swing apex (m): the Go1's 8 cm by default, scaled.
    foot_sink:
        How deep (m) the stance feet sink into a soft ground: the swing feet's targets are raised by it
        (module docstring), so that their clearance is over the surface rather than over the sunk stance
        height. 0 by default; :class:`~trajopt.mujoco.foreign.ForeignPlant` measures it for a user's MJCF
        (``plant.foot_sink``), and the attribute of the same name may be set before a run.
    ground:
        What the horizon walks on: a plane (:class:`~trajopt.mpc.ground_plane.GroundPlane`; default the flat
        ground at ``z = 0``) or a terrain's horizontal foot regions (:class:`~trajopt.mpc.terrain_ground.TerrainGround`).
        ``ValueError`` when the horizon's friction pyramid cannot hold the robot standing
        on it (:meth:`~trajopt.mpc.ground_plane.GroundPlane.holding_ratio` above :attr:`pyramid_coefficient`).
    goal:
        A WORLD position ``(x, y)`` (m) the reference walks to at the commands' speed and stops at (module
        docstring); ``None`` (default): the commands' velocities alone.
    weights:
        The cost's :class:`LeggedMPCWeights` in the Go1's units (default: its defaults), scaled to the robot
        (:meth:`LeggedMPCWeights.scaled`); the attribute ``weights`` holds the scaled ones.
    step_timing:
        When a push makes the swinging feet land sooner (:class:`~trajopt.mpc.step_timing.StepTiming`, in the Go1's
        units, scaled to the robot; the attribute of the same name holds the scaled one, :meth:`set_step_timing`
        changes it before a run), the footholds then planned from the measured base (module docstring); ``None`` (default):
        the touchdowns keep the gait's clock and the footholds follow the reference.
    integrator:
        The shooting integrator (``"rk2"`` by default: in MuJoCo it recovered from the 6 N s pushes
        that ``"euler"`` did not, at 2 of RK3's 3 contact solves per interval).
    pyramid_coefficient:
        ``c`` of the friction pyramid ``|f_x|, |f_y| <= c f_z`` (default ``mu / sqrt(2)``, inscribed in Coulomb's
        cone; module docstring); a lower ``c`` keeps the forces further inside the cone.
    """

    def __init__(
        self,
        robot: Any,
        gaits: Any = "trot",
        commands: Any = None,
        horizon: float = DEFAULT_HORIZON,
        dt: float = 0.02,
        apex: Optional[float] = None,
        weights: Optional[LeggedMPCWeights] = None,
        integrator: str = "rk2",
        foot_sink: float = 0.0,
        ground: Any = None,
        goal: Optional[Sequence[float]] = None,
        step_timing: Optional[StepTiming] = None,
        pyramid_coefficient: Optional[float] = None,
    ) -> None:
        if robot.nc < 1:
            raise ValueError(f"robot: expected a legged robot with contact points (kinematics bodies), {robot.name} has none")
        scale = GaitScale.of(robot)
        self.robot, self.scale = robot, scale
        self.schedule = GaitSchedule.constant(gaits) if isinstance(gaits, str) else gaits
        if not isinstance(self.schedule, GaitSchedule):
            raise ValueError(f"gaits: expected a gait name or a GaitSchedule, got {type(gaits).__name__}")
        self.timeline = GaitTimeline(self.schedule, robot)
        self.limits = command_limits(robot)
        profile = CommandProfile.constant(commands or Command()) if not isinstance(commands, CommandProfile) else commands
        self.commands = profile.clamped(self.limits)
        self.weights = (weights or LeggedMPCWeights()).scaled(scale)
        self.set_step_timing(step_timing)
        inscribed = robot.mu / np.sqrt(2.0)
        if pyramid_coefficient is not None and not (np.isfinite(pyramid_coefficient) and 0 < pyramid_coefficient <= inscribed):
            raise ValueError(f"pyramid_coefficient: expected c in (0, mu / sqrt(2)] = (0, {inscribed:.3f}], got {pyramid_coefficient!r}")
        #: ``c`` of the horizon's friction pyramid ``|f_x|, |f_y| <= c f_z``: by default ``mu / sqrt(2)``, inscribed in Coulomb's cone
        self.pyramid_coefficient = inscribed if pyramid_coefficient is None else float(pyramid_coefficient)
        #: what the horizon walks on (:class:`~trajopt.mpc.ground_plane.GroundPlane`, the flat ground by default, or
        #: :class:`~trajopt.mpc.terrain_ground.TerrainGround`)
        self.ground = GroundPlane() if ground is None else ground
        need = self.ground.holding_ratio()
        if need > self.pyramid_coefficient:
            raise ValueError(
                f"ground: standing on this slope ({np.degrees(np.arccos(self.ground.normal[2])):.1f} deg) takes a friction ratio of {need:.3f} along the plane; "
                f"the horizon's pyramid allows {self.pyramid_coefficient:.3f} (mu = {robot.mu:g})"
            )
        self.apex = scale.distance(0.08) if apex is None else float(apex)
        if not (np.isfinite(foot_sink) and foot_sink >= 0):
            raise ValueError(f"foot_sink: expected a depth >= 0 (m), got {foot_sink!r}")
        self.foot_sink = float(foot_sink)
        #: a position (2,) the reference walks to (at the commands' speed, while the gait steps) and stops at (m, world),
        #: or ``None``: the commands' velocities alone
        self.goal = None if goal is None else np.asarray(goal, dtype=float).reshape(2)
        forward, lateral = BIPED_ACCELERATION if is_biped(robot) else ACCELERATION[:2]
        self.acceleration = np.array([forward, lateral, ACCELERATION[2] / scale.time])
        self.max_lag = (scale.distance(MAX_LAG[0]), MAX_LAG[1])
        self.reach = REACH * robot.leg_length
        self.edge_lead = scale.distance(EDGE_LEAD)
        self.settle_time = scale.duration(SETTLE_TIME)
        self.dt = float(dt)
        N = int(round(scale.duration(horizon) / self.dt)) + 1
        if N < 3:
            raise ValueError(f"horizon: {horizon} s is under two knot steps of {dt} s")
        self.model = ContactDynamics(robot, "contact")
        self.x_stand = robot.init_state()
        self.height = float(self.x_stand[2])
        self.hips = self._hip_offsets()
        self._sole_bodies = robot.shared_contacts()
        #: the contact points that share a rigid body with others (a sole's corners), whose measured velocities in stance are always projected out
        self._sole_corners = np.isin(np.arange(robot.nc), [i for body in self._sole_bodies for i in body])
        #: the soles whose least load the friction rows bound (a biped's; module docstring), none for point feet
        self._loaded_soles = self._sole_bodies if is_biped(robot) else []
        forces = np.tile([0.0, 0.0, robot.mass * GRAVITY / robot.nc], robot.nc)
        self._standing_torques = np.asarray(robot.inverse_dynamics(self.x_stand, np.zeros(robot.nv), forces)).ravel()[6:]
        self._plastic_impact: Optional[NumericCall] = None  # the model's plastic impact through buffers, on first use
        name = self.schedule.gaits()[0] if len(self.schedule.segments) == 1 else "gaits"
        self.problem = Problem(self.model, N=N, tf=(N - 1) * self.dt, x0=self.x_stand, name=f"{robot.name}-{name}-mpc")
        self.problem.default_transcription = f"multiple_shooting_{integrator}_knot_cost"
        self._build()
        self.start(0.0, self.x_stand)

    # ------------------------------------------------------------ gait
    def set_step_timing(self, step_timing: Optional[StepTiming]) -> None:
        """Step sooner when pushed with ``step_timing`` (in the Go1's units: :attr:`step_timing` holds it scaled to the
        robot), or keep the gait's clock with ``None`` (the constructor's keyword); before a run."""
        if step_timing is not None and not isinstance(step_timing, StepTiming):
            raise ValueError(f"step_timing: expected a StepTiming or None, got {type(step_timing).__name__}")
        if step_timing is not None and is_biped(self.robot):
            raise ValueError(
                f"step_timing: stepping sooner is the quadrupeds' (tuned on the Go1's trot); {self.robot.name} walks on two soles, "
                "and walking in place with it the G1 fell within 1.3 s without a push"
            )
        #: the :class:`~trajopt.mpc.step_timing.StepTiming` in force, scaled to the robot, or ``None``
        self.step_timing = None if step_timing is None else step_timing.scaled(self.scale)

    def stance(self, times: np.ndarray) -> np.ndarray:
        """Stance (K, nc) of the feet at ``times`` (K,) (:meth:`GaitTimeline.stance`)."""
        return self.timeline.stance(times)

    def lifts_feet(self) -> bool:
        """Whether a foot ever leaves the ground: a gait of the schedule with a duty factor under one. A horizon
        that never lands a foot has no touchdown rows (module docstring)."""
        return bool(np.any(self.timeline.duty < 1.0))

    # ------------------------------------------------------------ building
    def _hip_offsets(self) -> np.ndarray:
        """Each foot's standing position relative to the base (nc, 3), in the base's heading frame."""
        feet = np.asarray(self.robot.kinematics(self.x_stand)).reshape(-1, 3)
        return feet - np.r_[self.x_stand[:2], 0.0]

    def _build(self) -> None:
        robot, model, problem, w = self.robot, self.model, self.problem, self.weights
        N, nj = problem.N, robot.nv - 6
        nc = robot.nc
        feet = range(nc)
        mu = self.pyramid_coefficient
        kkt = model.kkt
        weight = robot.mass * GRAVITY
        ground = self.ground

        soles = self._loaded_soles

        def friction(x: Any, u: Any, mask: Any) -> Any:
            f = kkt(x, u, mask)[1] / weight  # in the robot's weights (module docstring)
            local = [ground.local_force(f[3 * i : 3 * i + 3]) for i in feet]
            rows = [friction_rows(local[i], mu, "pyramid") for i in feet]
            return ca.vertcat(*rows, *[sum(local[i][2] for i in sole) for sole in soles])

        rows = 4 * nc + len(soles)
        self.friction = Constraint(friction, knots=list(range(N - 1)), lower=np.zeros((N - 1, rows)), upper=np.inf, params=np.ones((N - 1, nc)), name="friction pyramid" + (", sole loads" if soles else ""))
        heights = lambda x: ca.vertcat(*[ground.relative_height(robot.kinematics(x)[3 * i : 3 * i + 3]) for i in feet])  # noqa: E731
        constraints = [self.friction]
        self.foot_height = self.touchdown = None
        #: the feet that land together: a sole's corners, each point foot alone, in the order of their first points
        self.landing_groups = body_groups(robot.contact_parents(), nc)
        #: how many ``landing_groups`` the touchdown rows of one knot hold (module docstring; 0 without the rows)
        self.landing_slots = self._most_landings_per_knot() if self.lifts_feet() else 0
        #: the touchdown rows of one knot: heights and velocities, for ``landing_slots`` landings
        self._slot_rows = (0, 0)
        #: the height (N - 1, nc) each contact point is held at by the touchdown rows of knots 1 .. N - 1 at the last
        #: update, NaN where free (``None`` before it, or without the rows)
        self.touchdown_heights: Optional[np.ndarray] = None
        if self.landing_slots:
            rows = self._landing_rows(np.asarray(robot.kinematics(self.x_stand)).reshape(-1, 3))
            n_h = self.landing_slots * max(int(rows[g, 2].sum()) for g in self.landing_groups)
            n_v = self.landing_slots * max(int(rows[g].sum()) for g in self.landing_groups)
            self._slot_rows = (n_h, n_v)
            held_heights = lambda x, u, p: ca.mtimes(ca.reshape(p, n_h, nc), heights(x))  # noqa: E731
            held_velocities = lambda x, u, p: ca.mtimes(ca.reshape(p, n_v, 3 * nc), robot.kinematics_velocity(x))  # noqa: E731
            knots = list(range(1, N))
            self.foot_height = Constraint(held_heights, knots=knots, lower=-np.inf, upper=np.inf, params=np.zeros((N - 1, n_h * nc)), name="touchdown on the ground")
            self.touchdown = Constraint(held_velocities, knots=knots, lower=-np.inf, upper=np.inf, params=np.zeros((N - 1, 3 * n_v * nc)), name="touchdown at rest")
            constraints += [self.foot_height, self.touchdown]
        self.foothold_box = self.swing_clearance = None
        if ground.has_regions:  # over a terrain's foot regions and edges (trajopt.mpc.terrain_ground)
            planar = lambda x: ca.vertcat(*[robot.kinematics(x)[3 * i : 3 * i + 2] for i in feet])  # noqa: E731
            self.foothold_box = Constraint(planar, knots=list(range(1, N)), lower=-np.inf, upper=np.inf, name="foothold in its region")
            size = ground.profile_size
            above = lambda x, u, p: ca.vertcat(*[ground.clearance_row(p[size * i : size * (i + 1)], robot.kinematics(x)[3 * i : 3 * i + 3]) for i in feet])  # noqa: E731
            self.swing_clearance = Constraint(above, knots=list(range(1, N)), lower=-np.inf, upper=np.inf, params=np.tile(ground.flat_params, (N - 1, nc)), name="swing clearance")
            constraints += [self.foothold_box, self.swing_clearance]
        for c in constraints:
            problem.add_constraint(c)
        xl, xu = np.full(problem.nx, -np.inf), np.full(problem.nx, np.inf)
        xl[robot.joint_position_slice], xu[robot.joint_position_slice] = robot.joint_lower, robot.joint_upper
        problem.bound_states(xl, xu, knots=list(range(1, N)))
        Q = np.concatenate([w.base_position, w.base_orientation, np.full(nj, w.joint_position), w.base_velocity, w.base_angular_velocity, np.full(nj, w.joint_velocity)])
        self.state_cost = QuadraticCost(model, Q, np.full(model.control_dim, w.torque), x_ref=np.repeat(self.x_stand[None], N, axis=0))
        self.terminal_cost = QuadraticTerminalCost(model, w.terminal_factor * Q, self.x_stand)
        swing = lambda x, u, p: ca.vertcat(*[p[3 * nc + i] * (robot.kinematics(x)[3 * i : 3 * i + 3] - p[3 * i : 3 * i + 3]) for i in feet])  # noqa: E731
        self.swing_cost = LeastSquaresCost(swing, params=np.zeros((N, 4 * nc)), name="swing feet")
        for c in (self.state_cost, self.terminal_cost, self.swing_cost):
            problem.add_cost(c)

    # ------------------------------------------------------------ per tick
    def start(self, t: float, x: np.ndarray) -> None:
        """Start the reference at the measured base, at rest (before the first solve; :class:`~trajopt.mpc.MPC`'s ``on_reset``)."""
        x = np.asarray(x, dtype=float)
        self._p_ref, self._psi_ref = self.robot.base_position(x)[:2].copy(), float(quat_to_euler_zyx(self.robot.base_orientation(x))[0])
        self._v_ref, self._t_ref = np.zeros(3), float(t)
        self.timeline.advance = 0.0  # the gait back on its clock
        #: ``(time, advance)`` of every tick that advanced the gait (s; :mod:`trajopt.mpc.step_timing`)
        self.timing_advances: list = []
        self._lift_off = np.asarray(self.robot.kinematics(x)).reshape(-1, 3).copy()  # where each foot last stood
        self._landed = np.zeros(self.robot.nc, dtype=bool)  # the feet that landed just before the last update's tick
        self._ground = self.ground.offset
        #: per tick: time, reference position (2,), heading, velocity (3,) and the command in force
        self.history: list = []
        #: ``(foot, landing time) -> foothold (3,)``: where the newest tick before each landing aimed that foot
        self.planned_footholds: dict = {}

    def _ramp(self, v: np.ndarray, command: np.ndarray, dt: float) -> np.ndarray:
        return v + np.clip(command - v, -self.acceleration * dt, self.acceleration * dt)

    def _advance_reference(self, t: float, x: np.ndarray) -> None:
        """Move the reference's state to time ``t`` (module docstring), pulled towards the measured base ``x``."""
        dt = max(t - self._t_ref, 0.0)
        if dt > 0:
            self._v_ref = self._ramp(self._v_ref, self._toward_goal(self.commands.at(t).as_array(), self._p_ref, self._psi_ref, t), dt)
            self._p_ref = self._p_ref + yaw_to_rot(self._psi_ref)[:2, :2] @ self._v_ref[:2] * dt
            self._psi_ref += self._v_ref[2] * dt
            self._t_ref = t
        lag = self._p_ref - self.robot.base_position(x)[:2]
        if np.linalg.norm(lag) > self.max_lag[0]:
            self._p_ref = self.robot.base_position(x)[:2] + self.max_lag[0] * lag / np.linalg.norm(lag)
        yaw = float(quat_to_euler_zyx(self.robot.base_orientation(x))[0])
        heading_lag = np.angle(np.exp(1j * (self._psi_ref - yaw)))
        self._psi_ref = yaw + float(np.clip(heading_lag, -self.max_lag[1], self.max_lag[1]))

    def _toward_goal(self, command: np.ndarray, p: np.ndarray, psi: float, t: float) -> np.ndarray:
        """``command`` (3,) with a :attr:`goal`: its speed ``|(v_x, v_y)|`` (capped by ``sqrt(2 a d)``, ``a`` the forward
        acceleration and ``d`` the distance left, so that it stops there) pointed from ``p`` (2,) at the goal, in the
        heading frame of ``psi``; its yaw rate kept; no speed while the gait at ``t`` (s) stands. ``command`` itself
        without a goal."""
        if self.goal is None:
            return command
        d = self.goal - p
        distance = float(np.hypot(d[0], d[1]))
        speed = min(float(np.hypot(command[0], command[1])), math.sqrt(2.0 * self.acceleration[0] * distance))
        if distance < 1e-9 or speed == 0.0 or self.timeline.duty[self.timeline.segment(t)] >= 1.0:
            return np.array([0.0, 0.0, command[2]])
        c, s = math.cos(psi), math.sin(psi)
        return np.array([(c * d[0] + s * d[1]) * speed / distance, (-s * d[0] + c * d[1]) * speed / distance, command[2]])

    def reference_base(self, times: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Reference base positions (K, 3), headings (K,) and heading-frame velocities (K, 3) at
        ``times`` (increasing, from the reference's time on): its state ramped and integrated forward."""
        times = np.atleast_1d(np.asarray(times, dtype=float))
        commands = self.commands.values_at(times)
        p, psi, v, t = self._p_ref.copy(), self._psi_ref, self._v_ref.copy(), self._t_ref
        P, PSI, V = np.empty((len(times), 3)), np.empty(len(times)), np.empty((len(times), 3))
        for k, tk in enumerate(times.tolist()):
            dt = tk - t
            if dt > 0:
                v_new = self._ramp(v, self._toward_goal(commands[k], p, psi, tk), dt)
                psi = psi + 0.5 * dt * (v[2] + v_new[2])  # trapezoidal in the yaw rate, and in the velocity turned by the new heading
                c, s = math.cos(psi), math.sin(psi)
                vx, vy = 0.5 * (v[0] + v_new[0]), 0.5 * (v[1] + v_new[1])
                p = p + dt * np.array([c * vx - s * vy, s * vx + c * vy])
                v, t = v_new, tk
            P[k, :2], PSI[k], V[k] = p, psi, v
        P[:, 2] = self.height + self.ground.base_frames(P[:, :2], PSI)[0]
        return P, PSI, V

    def update(self, problem: Problem, t: float, x: np.ndarray) -> None:
        """Set ``problem``'s data for a tick at ``t`` (s) with measured state ``x``: its ``x0`` (``x`` with the
        velocities of the feet that just landed projected out, :meth:`stance_projection`), each knot's stance mask, the base
        and joint references and the swing feet's targets; the MPC's ``update``."""
        N, h, nq = problem.N, self.dt, self.robot.nq
        x = np.asarray(x, dtype=float)
        self._advance_reference(t, x)
        yaw = float(quat_to_euler_zyx(self.robot.base_orientation(x))[0])
        capture = self._capture_offset(x, yaw, self._psi_ref)
        self._adapt_step_timing(t, yaw, capture)
        times = t + h * np.arange(N)
        masks = self.stance(times + 0.5 * h)
        past = self.stance(t - np.linspace(0.0, self.settle_time, int(np.ceil(self.settle_time / h)) + 1))
        self._landed = masks[0] & (~past.all(axis=0) | self._sole_corners)  # in stance, but swinging at some time of the last settle_time; a sole's corners always
        problem.x0 = x = self.initial_state(problem, t, x)
        problem.dynamics_params = masks.astype(float)
        self.friction.raw_params = problem.dynamics_params[: N - 1]
        self.friction.lower = np.where(np.repeat(masks[: N - 1], 4, axis=1), 0.0, -np.inf)
        if self._loaded_soles:  # a standing sole's least load, in the robot's weight
            sole_stance = np.stack([masks[: N - 1, sole].all(axis=1) for sole in self._loaded_soles], axis=1)
            self.friction.lower = np.hstack([self.friction.lower, np.where(sole_stance, SOLE_LOAD_FLOOR, -np.inf)])
        positions, headings, velocities = self.reference_base(times)
        X = np.repeat(self.x_stand[None], N, axis=0)
        X[:, self.robot.base_position_slice] = positions
        X[:, self.robot.base_orientation_slice] = self._base_orientations(positions, headings)
        X[:, nq : nq + 2] = velocities[:, :2]  # body frame = heading frame for the level reference
        X[:, nq + 2] = 0.0
        X[:, nq + 5] = velocities[:, 2]
        feet_now = np.asarray(self.robot.kinematics(x)).reshape(-1, 3)
        if masks.all() and not np.any(self._v_ref):  # standing still: the base's reference is over the feet
            self._p_ref = self._support_centre(feet_now)
            X[:, self.robot.base_position_slice.start : self.robot.base_position_slice.start + 2] = self._p_ref
        self.history.append((t, self._p_ref.copy(), self._psi_ref, self._v_ref.copy(), self.commands.at(t).as_array()))
        standing = past[0]  # the stance at t itself
        if standing.any():
            self._ground = self.ground.offset_of(feet_now[standing])  # a soft ground lets the feet sink a few millimetres
            self._lift_off[standing] = feet_now[standing]
        self.swing_cost.raw_params, landings = self._swing_targets(x, times, masks, headings[0], capture)
        touchdown = masks[1:] & ~masks[:-1]
        touchdown[0] = False  # knot 1 is reached from the measured state: its foot can hardly be steered there
        heights = self.ground.relative_height(np.moveaxis(landings[:-1], -1, 0))  # (N - 1, nc) of the footholds aimed at; NaN where none
        if self.touchdown is not None:
            self._hold_landings(touchdown, heights, feet_now)
        if self.foothold_box is not None:
            lower, upper = np.full((N - 1, 2 * self.robot.nc), -np.inf), np.full((N - 1, 2 * self.robot.nc), np.inf)
            for j, i in zip(*np.nonzero(touchdown)):
                box = self.ground.foothold_box(landings[j, i])
                lower[j, 2 * i : 2 * i + 2], upper[j, 2 * i : 2 * i + 2] = box[[0, 2]], box[[1, 3]]
            self.foothold_box.lower, self.foothold_box.upper = lower, upper
        self.state_cost.x_ref = X
        self.state_cost.u_ref = self._stance_torques(masks)
        self.terminal_cost.x_ref = X[-1]

    def _most_landings_per_knot(self) -> int:
        """How many ``landing_groups`` land at one knot at most: the gaits' (:meth:`GaitTimeline.most_landings_per_step`)."""
        return max(self.timeline.most_landings_per_step(self.landing_groups, self.dt), 1)

    def _hold_landings(self, touchdown: np.ndarray, heights: np.ndarray, feet: np.ndarray) -> None:
        """Fill the touchdown rows of knots ``1 .. N - 1`` for the landings ``touchdown`` (N - 1, nc) at ``heights``
        (N - 1, nc): each landing group takes a slot, its rows of :meth:`_landing_rows` (at the feet ``feet`` (nc, 3)
        now) selected by the slot's parameters, bounded to the height and to rest; unused rows select nothing and stay
        free. Records ``touchdown_heights``."""
        rows, nc = self._landing_rows(feet), self.robot.nc
        K, (n_h, n_v) = touchdown.shape[0], self._slot_rows
        select_h, select_v = np.zeros((K, n_h, nc)), np.zeros((K, n_v, 3 * nc))
        height, velocity = np.full((K, n_h), np.nan), np.full((K, n_v), np.nan)
        self.touchdown_heights = np.where(touchdown & rows[:, 2], heights, np.nan)  # a sole's corners land together
        landings = touchdown[:, [g[0] for g in self.landing_groups]]  # (K, groups)
        counts = landings.sum(axis=1)
        if counts.max(initial=0) > self.landing_slots:
            k = int(np.argmax(counts))
            raise RuntimeError(f"touchdown: {counts[k]} feet land at knot {k + 1}, the horizon holds {self.landing_slots} per knot")
        used_h, used_v = np.zeros(K, dtype=int), np.zeros(K, dtype=int)
        for k, j in zip(*np.nonzero(landings)):  # each landing takes the next rows of its knot
            group = self.landing_groups[j]
            points = [i for i in group if rows[i, 2]]
            entries = [3 * i + a for i in group for a in range(3) if rows[i, a]]
            h_rows, v_rows = used_h[k] + np.arange(len(points)), used_v[k] + np.arange(len(entries))
            select_h[k, h_rows, points], height[k, h_rows] = 1.0, heights[k, points]
            select_v[k, v_rows, entries], velocity[k, v_rows] = 1.0, 0.0
            used_h[k] += len(points)
            used_v[k] += len(entries)
        self.foot_height.raw_params = select_h.transpose(0, 2, 1).reshape(K, -1)  # each knot's (n_h, nc) in column-major order
        self.touchdown.raw_params = select_v.transpose(0, 2, 1).reshape(K, -1)
        self.foot_height.lower, self.foot_height.upper = np.nan_to_num(height, nan=-np.inf), np.nan_to_num(height, nan=np.inf)
        self.touchdown.lower, self.touchdown.upper = np.nan_to_num(velocity, nan=-np.inf), np.nan_to_num(velocity, nan=np.inf)

    def _landing_rows(self, feet: np.ndarray) -> np.ndarray:
        """Which velocity rows (x, y, z) of each contact point (nc, 3) the touchdown holds at zero; the z column also says
        whose height it sets. All of a point alone on its body. Of the corners of a sole (a body's points, at ``feet`` (nc, 3)
        now), six independent rows: the first corner's three, the second's z and the horizontal axis across the line
        from the first (the other is fixed by the body's rigidity), the third's z; heights of those three."""
        rows = np.ones((self.robot.nc, 3), dtype=bool)
        for body in self._sole_bodies:
            first, second, third = body[:3]
            rows[body] = False
            rows[first] = True
            across = int(np.argmin(np.abs(feet[second, :2] - feet[first, :2])))  # the axis the line between them crosses
            rows[second, [across, 2]] = True
            rows[third, 2] = True
        return rows

    def _capture_offset(self, x: np.ndarray, yaw: float, heading: float) -> np.ndarray:
        """The capture point's offset (3,) from the reference's, ``sqrt(z0 / g) (v - v_ref)`` with the base's velocity
        ``v`` (from its body-frame velocity in ``x`` turned by its ``yaw``, the base assumed level) and the reference's
        ``v_ref`` (its heading-frame velocity turned by ``heading``), WORLD frame, z component 0."""
        v_world = yaw_to_rot(yaw) @ x[self.robot.nq : self.robot.nq + 3]
        v_ref = yaw_to_rot(heading) @ np.r_[self._v_ref[:2], 0.0]
        capture = np.sqrt(self.height / GRAVITY) * (v_world - v_ref)
        capture[2] = 0.0
        return capture

    def _adapt_step_timing(self, t: float, yaw: float, capture: np.ndarray) -> None:
        """Advance the gait's clock at the tick ``t`` when the capture point's offset ``capture`` (WORLD), seen from
        the base's heading ``yaw``, asks for it (:meth:`StepTiming.advance`)."""
        if self.step_timing is None:
            return
        advance = self.step_timing.advance(self.timeline, t, self.dt, heading_offset(capture, yaw))
        if advance > 0:
            self.timeline.advance += advance
            self.timing_advances.append((float(t), advance))

    def _base_orientations(self, positions: np.ndarray, headings: np.ndarray) -> np.ndarray:
        """Reference base quaternions (K, 4) at ``positions`` (K, 3) and ``headings`` (K,): level and turned by the heading
        about z on flat ground; on a slope, ``z`` along the plane's normal and ``x`` the heading tilted into it
        (:class:`GroundPlane`); over a terrain, along the normal of the ground under the hips (:class:`TerrainGround`)."""
        if not self.ground.tilts_base:
            return yaw_to_quat(headings)
        quats = Rotation.from_matrix(self.ground.base_frames(positions[:, :2], headings)[1]).as_quat(canonical=True)[:, [3, 0, 1, 2]]  # scalar first, w >= 0
        flips = np.r_[False, np.einsum("ij,ij->i", quats[1:], quats[:-1]) < 0]  # one hemisphere along the horizon
        return np.where(np.logical_xor.accumulate(flips)[:, None], -quats, quats)

    def initial_state(self, problem: Problem, t: float, x: np.ndarray) -> np.ndarray:
        """The horizon's first state from the measured ``x`` (n,) at the tick ``t`` of the last :meth:`update`:
        ``x`` with the velocities of the feet that just landed projected out (:meth:`stance_projection`);
        the MPC's ``initial_state``."""
        return self.stance_projection(np.asarray(x, dtype=float), self._landed)

    def _support_centre(self, feet: np.ndarray) -> np.ndarray:
        """The base position (2,) that puts the feet (nc, 3) at their standing offsets from it, in the least-squares
        sense: the feet's mean minus the mean standing offset turned by the reference heading."""
        return feet[:, :2].mean(axis=0) - (yaw_to_rot(self._psi_ref)[:2, :2] @ self.hips[:, :2].mean(axis=0))

    def stance_projection(self, x: np.ndarray, stance: np.ndarray) -> np.ndarray:
        """``x`` (n,) with the velocities of its ``stance`` feet (nc,) removed by a plastic impact (module docstring):
        ``v+ = v - M^-1 J_s^T (J_s M^-1 J_s^T)^+ J_s v``, ``J_s`` the stance feet's WORLD-aligned linear Jacobian rows
        (the pseudo-inverse: the corners of one sole have dependent rows; :attr:`~models.contact_dynamics.ContactDynamics.plastic_impact`
        holds a sole by its six independent rows instead), in one call through buffers."""
        stance = np.asarray(stance, dtype=bool)
        if not stance.any():
            return x
        if self._plastic_impact is None:
            self._plastic_impact = NumericCall(self.model.plastic_impact)
        return self._plastic_impact(x, stance.astype(float))[0].ravel()

    def _stance_torques(self, masks: np.ndarray) -> np.ndarray:
        """Torque references (K, nu) of the stance masks (K, nc) (module docstring)."""
        return np.where(masks.all(axis=1)[:, None], self._standing_torques, 0.0)

    def _swing_targets(self, x: np.ndarray, times: np.ndarray, masks: np.ndarray, heading: float, capture: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """Swing-foot targets and weights (N, 4 nc) per knot, ``[p_0 .. p_nc-1, w_0 .. w_nc-1]``, and the footholds (N, nc, 3)
        each swinging foot is aimed at (NaN at stance knots), with the capture point's offset ``capture`` (3,,
        :meth:`_capture_offset`); over a terrain, the swing clearance rows' envelopes and bounds (module docstring)."""
        N, h, tl, nc = len(times), self.dt, self.timeline, self.robot.nc
        P = np.zeros((N, 4 * nc))
        footholds = np.full((N, nc, 3), np.nan)
        profiles, clearance = (np.tile(self.ground.flat_params, (N, nc, 1)), np.full((N, nc), -np.inf)) if self.ground.has_regions else (None, None)
        lag = self._p_ref - self.robot.base_position(x)[:2]  # how far the reference runs ahead of the measured base
        swings = {i: np.flatnonzero(~masks[:, i]) for i in range(nc)}
        swings = {i: (k, *tl.swing_times(times[k] + 0.5 * h, i)) for i, k in swings.items() if k.size}  # lift-off and landing of the masks' mid-interval times
        landings = np.unique(np.concatenate([np.maximum(land, self._t_ref) for _, _, land in swings.values()])) if swings else np.zeros(0)
        at_landing = self.reference_base(landings)  # the reference base at every landing, in one pass
        if self.ground.has_regions:  # over a terrain: targets from the measured base, the reference's lead only picking the region
            lead = lag * min(1.0, self.edge_lead / max(float(np.linalg.norm(lag)), 1e-12))
        for i, (k, lift, land) in swings.items():
            stance_time = tl.period[tl.segment(land)] * tl.duty[tl.segment(land)]
            index = np.searchsorted(landings, np.maximum(land, self._t_ref))
            base, psi, v = (values[index] for values in at_landing)
            hips = base + np.einsum("kij,j->ki", yaw_to_rot(psi), self.hips[i])
            hold = hips + np.einsum("kij,kj->ki", yaw_to_rot(psi), np.column_stack([v[:, :2], np.zeros(len(k))])) * (stance_time / 2)[:, None] + capture
            offset = hold[:, :2] - hips[:, :2]
            norm = np.linalg.norm(offset, axis=1, keepdims=True)
            hold[:, :2] = hips[:, :2] + offset * np.minimum(1.0, self.reach / np.maximum(norm, 1e-12))
            if self.ground.has_regions:
                hold = self.ground.footholds(hold[:, :2] - lag, self._ground, toward=hold[:, :2] - lag + lead)
            elif self.step_timing is not None:  # stepping where a pushed base went, not where its reference is held (module docstring)
                hold = self.ground.footholds(hold[:, :2] - lag, self._ground)
            else:
                hold = self.ground.footholds(hold[:, :2], self._ground)
            start = np.r_[self._lift_off[i][:2], self.ground.height(self._lift_off[i][:2], self._ground)]  # where the foot stands now, or stood when this swing began
            s = np.clip((times[k] - lift) / (land - lift), 0.0, 1.0)
            path = (1 - s[:, None]) * start + s[:, None] * hold + np.outer(self.foot_sink + 4 * self.apex * s * (1 - s), [0.0, 0.0, 1.0])
            if self.ground.has_regions:  # over a terrain: over the foothold before coming down onto it (module docstring)
                ahead = np.minimum(s / SWING_REACH_PHASE, 1.0)[:, None]
                path[:, :2] = (1 - ahead) * start[:2] + ahead * hold[:, :2]
            for target in np.unique(hold, axis=0) if self.ground.has_regions else ():  # over a terrain's edges (trajopt.mpc.terrain_ground)
                rows = np.all(hold == target, axis=1)
                params = self.ground.swing_params(start, target)
                profiles[k[rows], i] = params
                envelope = self.ground.envelope(params, path[rows, :2])
                rising = envelope > start[2] - self._ground + 1e-3  # over or near an edge up from the lift-off
                clearance[k[rows], i] = np.where(rising, self.ground.required_clearance(s[rows]) + self._ground, -np.inf)
                path[rows, 2] = np.maximum(path[rows, 2], envelope + self.ground.clearance + self._ground + self.foot_sink)
            P[k, 3 * i : 3 * i + 3] = path
            P[k, 3 * nc + i] = np.sqrt(self.weights.swing_foot)
            footholds[k, i] = hold
            if self.ground.has_regions:  # over a terrain, the touchdown knots too: left free, feet landed short (docs/design/mpc.md)
                landing = k[(k + 1 < N) & masks[np.minimum(k + 1, N - 1), i]]
                P[landing + 1, 3 * i : 3 * i + 3] = hold[np.isin(k, landing)]
                P[landing + 1, 3 * nc + i] = np.sqrt(self.weights.swing_foot)
            for land_time, j in zip(*np.unique(land, return_index=True)):  # the newest plan's foothold of each landing
                self.planned_footholds[i, round(float(land_time), 9)] = hold[j].copy()
        if self.swing_clearance is not None:
            clearance[1:3] = -np.inf  # knots 1 and 2: reached from the measured state within two steps, they cannot be steered far
            self.swing_clearance.raw_params, self.swing_clearance.lower = profiles[1:].reshape(N - 1, -1), clearance[1:]
        return P, footholds
