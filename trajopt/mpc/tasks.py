"""From a registered problem to a closed-loop task: the horizon, its update, the plant and the reference.

:func:`mpc_task` turns the problem ``trajopt solve NAME`` would solve into
what ``trajopt mpc NAME`` runs:

- a legged problem (:class:`trajopt.legged.LeggedProblem`: ``go1-trot``,
  ``go1-stand``, ``trot --robot solo12``, ...): its robot and gait in a
  receding horizon (:class:`~trajopt.mpc.legged.LeggedMPC`), the robot
  starting from its standing state, in MuJoCo (``sim="mujoco"``) or in our
  KKT plant (``sim="own"``, :class:`~trajopt.mpc.legged_plant.KKTPlant`);
  over a terrain, the horizon walks on its plane (a slope: ``go1-slope``,
  ``slope --robot NAME``; :class:`~trajopt.mpc.ground_plane.GroundPlane`) or
  on its horizontal foot regions (stairs with ``follow_plan=False``:
  :class:`~trajopt.mpc.terrain_ground.TerrainGround`, with
  the swing feet's weight :data:`TERRAIN_SWING_WEIGHT`) from the plan's
  start, by default to where the plan ends (the horizon's ``goal``) at the
  plan's mean speed or :data:`TERRAIN_SPEED` if that is lower, and then
  standing there (``duration``: :data:`TERRAIN_TIME_FACTOR` times the walk at
  that speed, and :data:`TERRAIN_STANDING_TIME`), in MuJoCo on the terrain
  :func:`trajopt.mujoco.verify` builds; height maps are refused with the
  reason; a humanoid (``humanoid-stand``,
  ``humanoid-walk``) stands and walks in the same horizon, in a plant stepped
  at :data:`SOLE_PLANT_STEP` (:func:`plant_step`);
- a jump (a legged problem whose schedule is one of :data:`PLANNED_SCHEDULES`:
  ``go1-jump``, ``jump --robot NAME``, ``go1-gap``), a gait over stepping stones (a block
  terrain whose floor gives no footing: ``go1-stones``, ``stones --robot
  NAME``; :func:`requires_its_plan`), a point-footed gait on stairs (``go1-stairs``,
  ``stairs --robot NAME``; :func:`follows_its_plan`), or any
  legged problem with ``follow_plan=True``: its plan solved offline, then followed
  by a receding horizon (:class:`~trajopt.mpc.plan_tracking.PlanTrackingMPC`)
  in MuJoCo (on the stones as :func:`trajopt.mujoco.verify` builds them) or,
  on flat ground, our KKT plant, the robot standing :data:`PLAN_WAIT` s first
  and :data:`PLAN_STANDING_TIME` s after the plan (``duration``); a jump over
  a terrain with :data:`TERRAIN_JUMP_TORQUE_WEIGHT` and :data:`TERRAIN_SWING_WEIGHT`;
  over the stones with the friction pyramid :data:`STONES_PYRAMID`; a plan that
  puts a knee into the ground is refused (Solo12's jump without ``link_clearance``);
- a tracking problem (one with ``reference_states(times)``, such as
  ``quadrotor-track``): a horizon of ``horizon`` seconds over the same model,
  costs and bounds, whose references follow ``reference_states`` from each
  tick's time, run in our simulator (:class:`~trajopt.mpc.plant.ModelPlant`);
- any other problem: the problem itself is the horizon (its ``N`` knots over
  ``tf``), re-solved from each measured state with its own references.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Optional

import numpy as np

from ..costs import QuadraticCost, QuadraticTerminalCost
from ..legged.contact_implicit import ContactImplicitProblem
from ..legged.ocp import LeggedProblem
from ..legged.scaling import GaitScale
from ..problem import Problem
from ..report import shank_below_ground
from ..solvers import solve
from ..terrain.blocks import BlockTerrain
from .controller import MPC, InitialState, Update
from .commands import Command, CommandProfile
from .gaits import GAITS, GaitSchedule
from .ground_plane import GroundPlane
from .legged import DEFAULT_HORIZON, LeggedMPC, LeggedMPCWeights
from .plan_tracking import PlanTrackingMPC
from .plant import ModelPlant
from .terrain_ground import TerrainGround

SIMULATORS = ("mujoco", "own")
#: Seconds a terrain task stands at the end of its walk (module docstring).
TERRAIN_STANDING_TIME = 3.0
#: A terrain task's walking speed at most (m/s, the Go1's; scaled by dynamic similarity): at the stairs plan's mean
#: speed the base lagged its reference until the footholds went out of reach (docs/design/mpc.md).
TERRAIN_SPEED = 0.2
#: A terrain task's default duration allows its walk this many times the time at its speed (a base lags its reference).
TERRAIN_TIME_FACTOR = 1.5
#: Weight of the swing feet's paths over horizontal foot regions (:class:`~trajopt.mpc.legged.LeggedMPCWeights`'
#: ``swing_foot`` elsewhere): with that one the feet fell short of their apex and met the first riser (docs/design/mpc.md).
TERRAIN_SWING_WEIGHT = 3000.0
#: Schedules a receding horizon cannot generate but follows from their solved plan (:func:`_plan_task`): the jumps.
PLANNED_SCHEDULES = ("jump",)
#: Seconds a jump task's robot stands in the plant before its plan starts (it settles on MuJoCo's soft contacts).
PLAN_WAIT = 0.5
#: Seconds a jump task stands after its plan ends.
PLAN_STANDING_TIME = 2.0
#: A jump task's torque weight (:class:`~trajopt.mpc.legged.LeggedMPCWeights`' ``torque`` elsewhere): its horizon follows
#: the plan's torques ten times more closely; with the gaits' weight some landings folded a front leg (docs/design/mpc.md).
PLAN_TORQUE_WEIGHT = 1e-2
#: A jump over a terrain (``go1-gap``) follows its plan's torques ten times more closely again, and its swing feet with
#: the terrain tasks' weight (:data:`TERRAIN_SWING_WEIGHT`): with a jump's weights the robot left the ground late and
#: landed short of the plan's feet, or fell (docs/design/mpc.md has the runs).
TERRAIN_JUMP_TORQUE_WEIGHT = 0.1
#: Over stepping stones, the horizon's friction pyramid ``|f_x|, |f_y| <= c f_z`` has ``c = STONES_PYRAMID mu``: the
#: square inside Coulomb's cone and MuJoCo's pyramidal cone (``|f_x| + |f_y| <= mu f_z``) in every direction. With the
#: gaits' ``mu / sqrt(2)``, Solo12's stance feet, loaded at half their normal force, slid off their stones
#: (docs/design/mpc.md).
STONES_PYRAMID = 0.5
#: The time step (s) of a legged robot's plant (MuJoCo or our KKT plant), which applies the plan's feedback law at every step.
PLANT_STEP = 1e-3
#: The plant's time step (s) for a robot whose contact points share a rigid body (the humanoid's soles): stepped at 1 ms,
#: the feedback law's velocity gains on the G1's light ankle links made its joints shake and every QP failed; at this step
#: it stood (docs/design/mpc.md has the measurements).
SOLE_PLANT_STEP = 5e-4
#: Knots per second of a tracking problem's horizon.
TRACKING_KNOTS_PER_SECOND = 20
#: Weight of a tracking horizon's terminal cost, relative to its running cost.
TRACKING_TERMINAL_FACTOR = 10.0


@dataclass
class MPCTask:
    """What a closed loop needs of a problem: the horizon ``problem`` with its ``update`` (and
    ``on_reset`` and ``initial_state``, for :class:`~trajopt.mpc.MPC`), the plant's initial state ``x0``, a
    ``plant(**options)`` factory, the reference states ``reference(times)`` (for tracking errors;
    ``None`` when there is none) and the legged horizon's builder (``None`` otherwise)."""

    name: str
    problem: Problem
    update: Optional[Update]
    x0: np.ndarray
    plant: Callable[..., Any]
    reference: Optional[Callable[[np.ndarray], np.ndarray]] = None
    legged: Optional[LeggedMPC] = None
    on_reset: Optional[Callable[[float, np.ndarray], None]] = None
    initial_state: Optional[InitialState] = None
    #: a run's default length (s; ``None``: the caller's): a terrain task's is long enough to cross it and stand
    duration: Optional[float] = None
    #: the terrain its plant stands on (:class:`trajopt.terrain.Terrain`; ``None``: the flat ground)
    terrain: Any = None

    def controller(self, **options: Any) -> MPC:
        """The :class:`~trajopt.mpc.MPC` of this task (``options``: its mode, solver, budget, ...)."""
        return MPC(self.problem, update=self.update, on_reset=self.on_reset, initial_state=self.initial_state, **options)


def mpc_task(problem: Problem, horizon: Optional[float] = None, commands: Any = None, gaits: Optional[GaitSchedule] = None, robot: Any = None, follow_plan: Optional[bool] = None) -> MPCTask:
    """The closed-loop task of ``problem``: a legged problem becomes its robot's gait in a receding
    horizon (:class:`~trajopt.mpc.legged.LeggedMPC`, run in MuJoCo or our KKT plant), a tracking
    problem (one with ``reference_states(times)``) a horizon of its model following that reference
    from each tick's time (in our simulator), any other problem its own horizon re-solved from each
    measured state. ``horizon`` (s) is the length of the receding horizon where the task builds one (default: :data:`~trajopt.mpc.legged.DEFAULT_HORIZON`, 0.4 s scaled to a legged robot's legs, 1 s for
    tracking); for a legged robot, ``commands`` (a :class:`~trajopt.mpc.commands.Command` or
    :class:`~trajopt.mpc.commands.CommandProfile`; default: in place) and ``gaits`` (a
    :class:`~trajopt.mpc.gaits.GaitSchedule`; default: the problem's gait throughout) and ``robot``, the
    controller's model of the robot when it is not the problem's (e.g. :meth:`models.LeggedRobot.with_armature`;
    the plant keeps the problem's). ``follow_plan``: whether a legged problem's horizon follows its solved plan
    (``True``) or generates its gait (``False``, refused for a problem that :func:`requires_its_plan`); by default
    (``None``) :func:`follows_its_plan` decides. A legged task's ``plant(mjcf=FILE)`` runs a user's MJCF
    (:class:`~trajopt.mujoco.foreign.ForeignPlant`) and sets the horizon's ``foot_sink`` to the depth the
    file's feet sink under the standing weight, so that the swing feet clear its soft ground. Raises
    ``ValueError`` for commands or gaits given to a problem that is not legged, and for a
    ``horizon`` given to a problem that is its own horizon; for a legged problem with free phase durations
    (its receding horizon keeps the gait's fixed schedule, and would silently drop them), and for a problem that
    finds its gait offline (:class:`~trajopt.legged.contact_implicit.ContactImplicitProblem`)."""
    if isinstance(problem, ContactImplicitProblem):
        raise ValueError(f"problem: {problem.name!r} finds a gait offline (trajopt solve {problem.name}); the receding horizon runs the gaits {', '.join(GAITS)} with their schedules")
    if follow_plan not in (None, True, False):
        raise ValueError(f"follow_plan: expected True, False or None, got {follow_plan!r}")
    if isinstance(problem, LeggedProblem):
        if problem.free_time:
            raise ValueError(f"timing: the receding horizon runs {problem.name!r} on its gait's fixed schedule; free phase durations are for offline plans (timing='fixed')")
        if follow_plan and problem.robot.shared_contacts():  # PlanTrackingMPC refuses soles too; here before the plan's solve
            raise ValueError(f"follow_plan: the plan-following horizon is for point-footed robots; {problem.name!r} stands on soles and its horizon generates its steps")
        if follow_plan is False and requires_its_plan(problem):
            raise ValueError(f"follow_plan: {problem.name!r} ({problem.schedule.name}{' over stepping stones' if problem.schedule.name not in PLANNED_SCHEDULES else ''}) runs only by following its solved plan")
        if follows_its_plan(problem) if follow_plan is None else follow_plan:
            return _plan_task(problem, horizon, commands, gaits, robot)
        return _legged_task(problem, horizon, commands, gaits, robot)
    if follow_plan is not None:
        raise ValueError(f"follow_plan: a legged robot's horizon follows its plan or generates its gait; {problem.name!r} is not legged")
    if robot is not None:
        raise ValueError(f"robot: the controller's robot replaces a legged problem's; {problem.name!r} is not one")
    if _moves(commands) or gaits is not None:
        raise ValueError(f"command: velocity commands and gaits steer a legged robot; {problem.name!r} is not one")
    reference = getattr(problem, "reference_states", None)
    if reference is not None:
        return _tracking_task(problem, 1.0 if horizon is None else horizon, reference)
    if horizon is not None:
        raise ValueError(f"horizon: {problem.name!r} is its own horizon ({problem.tf} s); it takes no other")
    x0 = problem.x0

    def plant(sim: str = "own", dt: float = 1e-3, **unused: Any) -> ModelPlant:
        _own_only(sim, problem.name, unused)
        return ModelPlant(problem.model, x0, dt)

    return MPCTask(problem.name, problem, None, x0.copy(), plant)


def _own_only(sim: str, name: str, options: dict) -> None:
    """Refuse MuJoCo and its mismatch options for a model MuJoCo does not run here."""
    if sim != "own":
        raise ValueError(f"sim: {name!r} runs in our simulator only ('own'), got {sim!r}")
    given = sorted(k for k, v in options.items() if v not in (None, 0.0, "realistic"))
    if given:
        raise ValueError(f"{given[0]}: a plant option of the legged robots in MuJoCo; {name!r} runs in our simulator")


def _moves(commands: Any) -> bool:
    """Whether ``commands`` (a :class:`Command`, a :class:`CommandProfile` or ``None``) ask for any motion."""
    return commands is not None and any(np.any(c.as_array()) for c in (commands.commands if isinstance(commands, CommandProfile) else [commands]))


def _ground(problem: LeggedProblem, robot: Any) -> Any:
    """The ground the horizon of ``problem`` walks on: its terrain's plane (flat ground, a slope), else its horizontal
    foot regions over a floor that gives footing too (stairs; :class:`~trajopt.mpc.terrain_ground.TerrainGround`);
    others refused with the reason."""
    try:
        return GroundPlane.of_terrain(problem.terrain)
    except ValueError:
        pass
    try:
        return TerrainGround.for_robot(problem.terrain, robot, problem.clearance)
    except ValueError as err:
        raise ValueError(
            f"problem: {problem.name!r} plans over a terrain the receding horizon cannot walk ({err}); "
            f"plan it offline with `trajopt solve {problem.name}` and check it with `trajopt verify {problem.name}`"
        ) from None


def _legged_task(problem: LeggedProblem, horizon: Optional[float], commands: Any, gaits: Optional[GaitSchedule], controller_robot: Any = None) -> MPCTask:
    ground = _ground(problem, problem.robot if controller_robot is None else controller_robot)
    if gaits is None:
        if problem.schedule.name not in GAITS:
            raise ValueError(f"problem: {problem.name!r} has the gait {problem.schedule.name!r}; the receding horizon runs {', '.join(GAITS)}")
        gaits = GaitSchedule.constant(problem.schedule.name)
    terrain = problem.terrain if ground.has_regions or ground.inclined or ground.offset != 0.0 else None  # what the plant stands on; None: the floor at z = 0
    duration = goal = weights = None
    controller = problem.robot if controller_robot is None else controller_robot
    if terrain is not None and commands is None:  # to where the plan ends, at its mean speed (at most TERRAIN_SPEED), then standing there
        start, goal = problem.robot.base_position(problem.x0)[:2], np.asarray(problem.target_base_position, dtype=float)[:2]
        distance = float(np.linalg.norm(goal - start))
        speed = min(distance / problem.tf, GaitScale.of(controller).speed(TERRAIN_SPEED))
        commands = Command(speed, 0.0, 0.0)
        duration = TERRAIN_TIME_FACTOR * distance / speed + TERRAIN_STANDING_TIME
    if ground.has_regions:
        weights = replace(LeggedMPCWeights(), swing_foot=TERRAIN_SWING_WEIGHT)
    legged = LeggedMPC(controller, gaits=gaits, commands=commands, horizon=DEFAULT_HORIZON if horizon is None else horizon, ground=ground, goal=goal, weights=weights)
    x0 = problem.x0.copy() if terrain is not None else legged.x_stand.copy()  # on a terrain, the plan's start: its feet on the ground
    plant = _legged_plant(problem, legged, x0, terrain)
    name = f"{problem.name}-mpc" if terrain is not None else legged.problem.name  # the slope's own name, not its gait's
    return MPCTask(name, legged.problem, legged.update, x0, plant, legged=legged, on_reset=legged.start, initial_state=legged.initial_state, duration=duration, terrain=terrain)


def plant_step(robot: Any) -> float:
    """The time step (s) of a legged robot's plant by default: :data:`PLANT_STEP`, or :data:`SOLE_PLANT_STEP` when its
    contact points share a rigid body (the humanoid's soles)."""
    return SOLE_PLANT_STEP if robot.shared_contacts() else PLANT_STEP


def requires_its_plan(problem: LeggedProblem) -> bool:
    """Whether the receding horizon of ``problem`` can only follow its solved plan (:func:`_plan_task`): a jump
    (:data:`PLANNED_SCHEDULES`), or a gait over a block terrain whose floor gives no footing (stepping stones), where
    the plan's footholds are chosen for the whole crossing; chosen one landing at a time, the Go1 fell between the
    stones (docs/design/mpc.md)."""
    terrain = problem.terrain
    return problem.schedule.name in PLANNED_SCHEDULES or (isinstance(terrain, BlockTerrain) and not terrain.floor_standable)


def follows_its_plan(problem: LeggedProblem) -> bool:
    """Whether the receding horizon of ``problem`` follows its solved plan by default rather than generating its gait:
    when it :func:`requires_its_plan`, and for a point-footed gait on stairs (a block terrain whose floor gives footing).
    The generated gait keeps the feet off the edges, not the legs, and plans its footholds from the measured base: a
    hind knee that points forward (ANYmal B's) led its leg into the riser ahead, and Solo12's base crept while its
    swing targets kept its front feet on the first tread, both falling. The plan, one whole-body solve of the climb,
    keeps the legs off the edges and the base moving (the robots tried and their runs: docs/design/mpc.md and the
    benchmarks page). ``follow_plan=False`` still runs the generated gait."""
    if requires_its_plan(problem):
        return True
    return isinstance(problem.terrain, BlockTerrain) and not problem.robot.shared_contacts()


def _plan_task(problem: LeggedProblem, horizon: Optional[float], commands: Any, gaits: Optional[GaitSchedule], controller_robot: Any = None) -> MPCTask:
    """The task whose horizon follows ``problem``'s plan (module docstring): the plan solved offline, then followed by a
    receding horizon, in MuJoCo on the problem's terrain (the flat floor without one)."""
    if _moves(commands) or gaits is not None or controller_robot is not None:
        generated = "" if requires_its_plan(problem) else "; follow_plan=False (--no-follow-plan) generates its gait, which takes them"
        raise ValueError(f"problem: {problem.name!r} runs its offline plan ({problem.schedule.name}) under feedback; it takes no velocity commands, gaits or controller robot{generated}")
    plan = solve(problem)
    if not plan.success:
        raise ValueError(f"problem: the offline plan of {problem.name!r} did not converge ({plan.status}); nothing to follow")
    knee_down = shank_below_ground(plan, problem)
    if knee_down is not None:  # followed, the robot puts that knee on the floor and falls (Solo12's jump without the rows)
        raise ValueError(f"problem: the offline plan of {problem.name!r} cannot be followed: {knee_down}; plan it with -p link_clearance=0.01 (the shanks 1 cm above the ground)")
    jumps = problem.schedule.name in PLANNED_SCHEDULES
    if jumps and problem.terrain_plan is not None:  # a jump over a terrain
        weights = replace(LeggedMPCWeights(), torque=TERRAIN_JUMP_TORQUE_WEIGHT, swing_foot=TERRAIN_SWING_WEIGHT)
    else:
        weights = replace(LeggedMPCWeights(), torque=PLAN_TORQUE_WEIGHT)
    pyramid = None if jumps else STONES_PYRAMID * problem.robot.mu  # a gait over stones: a foot that slides falls off its stone
    legged = PlanTrackingMPC(plan, start=PLAN_WAIT, horizon=DEFAULT_HORIZON if horizon is None else horizon, weights=weights, pyramid_coefficient=pyramid)
    x0 = problem.x0.copy()
    plant = _legged_plant(problem, legged, x0, problem.terrain)
    duration = legged.plan_end + PLAN_STANDING_TIME
    return MPCTask(
        f"{problem.name}-mpc", legged.problem, legged.update, x0, plant, legged=legged, on_reset=legged.start, initial_state=legged.initial_state, duration=duration,
        reference=legged.reference_states, terrain=problem.terrain,
    )  # fmt: skip


def _legged_plant(problem: LeggedProblem, legged: LeggedMPC, x0: np.ndarray, terrain: Any) -> Callable[..., Any]:
    """The plant factory of a legged task: MuJoCo (on ``terrain``, or the floor at ``z = 0``), a user's MJCF, or our KKT plant,
    stepped at ``dt`` (s; default :func:`plant_step`)."""
    robot = problem.robot

    def plant(sim: str = "mujoco", dt: Optional[float] = None, contact: str = "realistic", payload: float = 0.0, mu: Optional[float] = None, mjcf: Optional[str] = None, joint_map: Optional[dict] = None, servos: str = "motor") -> Any:
        dt = plant_step(robot) if dt is None else dt
        if mjcf is not None:  # the user's own MuJoCo model of the robot: it defines its contacts, masses and step
            if sim != "mujoco" or payload or mu is not None or contact != "realistic":
                raise ValueError("mjcf: the file is the whole plant (its contacts, masses, friction); give no sim, contact, payload or mu with it")
            if terrain is not None:
                raise ValueError(f"mjcf: {problem.name!r} walks on a terrain that MuJoCo builds for it; a --plant file brings its own floor")
            from ..mujoco.foreign import ForeignPlant  # the mujoco extra

            foreign = ForeignPlant(robot, mjcf, x0, joint_map, servos)
            legged.foot_sink = foreign.foot_sink  # the swing clears the file's soft feet
            return foreign
        if sim not in SIMULATORS:
            raise ValueError(f"sim: expected one of {SIMULATORS}, got {sim!r}")
        if sim == "own" and terrain is not None:
            raise ValueError(f"sim: {problem.name!r} walks on a terrain; our KKT plant has flat ground only (use MuJoCo)")
        if sim == "own":
            from .legged_plant import KKTPlant

            if payload or mu is not None or contact != "realistic":
                raise ValueError("sim: payload, mu and contact are MuJoCo plant options; the own KKT plant has rigid, sticking contacts")
            return KKTPlant(robot, x0, dt)
        from ..mujoco.plant import MujocoPlant  # the mujoco extra

        return MujocoPlant(robot, x0, contact=contact, timestep=dt, payload=payload, mu=mu, terrain=terrain)

    return plant


def _tracking_task(problem: Problem, horizon: float, reference: Callable[[np.ndarray], np.ndarray]) -> MPCTask:
    """A receding horizon over ``problem``'s model tracking ``reference`` with its first quadratic cost's weights."""
    costs = [c for c in problem.costs if isinstance(c, QuadraticCost)]
    if not costs:
        raise ValueError(f"problem: the tracking problem {problem.name!r} needs a QuadraticCost for the horizon's weights")
    model, weights = problem.model, costs[0]
    N = max(3, int(round(horizon * TRACKING_KNOTS_PER_SECOND)) + 1)
    template = Problem(model, N=N, tf=horizon, x0=problem.x0, name=f"{problem.name}-mpc")
    template.control_lower[:], template.control_upper[:] = problem.control_lower.min(axis=0), problem.control_upper.max(axis=0)
    u_ref = weights.u_ref if weights.u_ref.ndim == 1 else weights.u_ref[0]
    running = QuadraticCost(model, weights.Q, weights.R, x_ref=reference(template.times()), u_ref=u_ref)
    terminal = QuadraticTerminalCost(model, TRACKING_TERMINAL_FACTOR * weights.Q, reference(horizon)[0])
    template.add_cost(running).add_cost(terminal)

    def update(horizon_problem: Problem, t: float, x: np.ndarray) -> None:
        running.x_ref = reference(t + horizon_problem.times())
        terminal.x_ref = reference(t + horizon_problem.tf)[0]

    x0 = problem.x0.copy()

    def plant(sim: str = "own", dt: float = 1e-3, **unused: Any) -> ModelPlant:
        _own_only(sim, problem.name, unused)
        return ModelPlant(model, x0, dt)

    return MPCTask(template.name, template, update, x0, plant, reference=reference)
