"""``trajopt mpc NAME``: run a registered problem in a receding horizon, closed around a simulated plant.

NAME is any problem of ``trajopt solve`` (:func:`trajopt.mpc.tasks.mpc_task`
says what each kind becomes): ``go1-stand``, ``go1-trot`` (trotting in place
unless a velocity is commanded), ``trot --robot solo12``, ``quadrotor-track``,
``cartpole``, ... The legged robots run in MuJoCo with its default contacts
(``--contact matched``: the stiff contacts of ``trajopt verify``) or in our
KKT plant (``--sim own``); ``--follow-plan`` / ``--no-follow-plan`` choose
whether a legged robot's horizon follows the problem's solved plan or
generates its gait (by default jumps, stepping stones and stairs follow
their plans). The controller ticks at ``--rate`` Hz; its plan
reaches the plant after the measured solve time (``--delay measured``, the
default: the plant does not wait), one tick late (``--delay tick``) or a
fixed delay in seconds; with ``--realtime`` nothing is emulated: the plant
steps on the wall clock in another process (:mod:`trajopt.mpc.process_plant`,
:mod:`trajopt.mpc.realtime`). Disturbances the controller does not know:
``--push IMPULSE,ANGLE_DEG,T`` (N s over 0.1 s on the base, angle 0 = +x,
90 = +y; repeatable), ``--payload`` (kg on the trunk), ``--mu`` (the
ground's friction), ``--latency`` (s, torque commands), ``--noise`` (the
state estimate's standard deviation per tangent direction).

One line per simulated second while it runs, a summary at the end, and the
files asked for: ``--log`` (``.csv``, ``.parquet`` or ``.mcap`` for
Foxglove: one row or set of messages per tick, written as the run goes,
:mod:`trajopt.mpc.log_writers`), ``--plot`` (:func:`trajopt.plotting.mpc.plot_closed_loop`),
``--html`` (the plant's motion in the 3D viewer, pushes as arrows),
``--view`` (the plant live in the browser while it runs, with the plan's
feet and base paths, :mod:`trajopt.viewer.live_loop`; then the whole run
until Ctrl-C; ``--host`` and ``--no-browser`` as for ``trajopt solve``). Exit
status 0 when the run ends without a fall, 3 when the robot fell, 2 for a
usage error (reported before anything runs), 130 after Ctrl-C, which stops
the run and still writes the files with every tick that ran (the log marks
its last row ``interrupted``).
"""
from __future__ import annotations

import argparse
import math
import sys
import warnings
from typing import Any

import numpy as np

from ..mpc import MODES
from ..mpc.commands import Command, read_commands
from ..mpc.disturbances import parse_push
from ..mpc.gaits import GaitSchedule
from ..extras import MissingExtraError
from ..mpc.log import base_motion
from ..mpc.log_writers import LOG_EXTENSIONS, open_tick_log
from ..mpc.loop import parse_delay, run_closed_loop
from ..mpc.plan_tracking import PlanTrackingMPC
from ..mpc.report import loop_statistics, summary
from ..mpc.step_timing import StepTiming
from ..mpc.tasks import SIMULATORS, mpc_task
from ..plotting.output import FIGURE_EXTENSIONS
from .arguments import INTERRUPTED, UsageError, add_problem_arguments, add_robot_options, add_solver_options, build_problem, check_output_path, command_parser, parse_parameters, solver_settings

#: Exit status of a run in which the robot fell.
FELL = 3

EXAMPLES = """\
examples:
  trajopt mpc go1-stand --duration 10 --push 6,90,3
  trajopt mpc go1-trot --duration 20 --log trot.csv --plot trot.png --html trot.html
  trajopt mpc go1-trot --payload 2 --mu 0.5 --latency 0.005
  trajopt mpc trot --robot solo12 --duration 5 --sim own
  trajopt mpc quadrotor-track --duration 8 --plot track.png
  trajopt mpc go1-trot --vx 0.3 --duration 20 --view
  trajopt mpc go1-slope --html slope.html
  trajopt mpc go1-trot --vx 0.3 --plant go1.xml --compensate
"""


def add_mpc_parser(sub: Any) -> None:
    """The ``mpc`` subcommand's arguments."""
    run = command_parser(
        sub, "mpc", "run a problem in a receding horizon, closed around a simulated plant",
        "Model-predictive control of a registered problem in a plant it does not model exactly (MuJoCo, or our simulator).", EXAMPLES,
    )  # fmt: skip
    group = add_problem_arguments(run, "problem name, as for `trajopt solve` (see `trajopt list`)", ("problems that are their own horizon",) * 2)
    group.add_argument("--param", "-p", action="append", default=[], metavar="KEY=VALUE", help="factory parameter, repeatable")
    add_robot_options(group)
    group = run.add_argument_group("controller")
    group.add_argument("--mode", choices=MODES, default="rti", help="rti: one SQP step per tick (default); converged: a warm-started solve")
    add_solver_options(group)
    group.add_argument("--rate", type=float, default=50.0, metavar="HZ", help="controller rate (default 50)")
    group.add_argument("--horizon", type=float, metavar="S", help="horizon length [s] (legged: 0.4 s scaled to the legs; tracking: 1 s)")
    group.add_argument("--budget", type=float, metavar="S", help="wall time a tick may take; later ticks count as failed")
    group.add_argument("--vx", type=float, default=0.0, metavar="V", help="commanded forward velocity [m/s], heading frame (legged)")
    group.add_argument("--vy", type=float, default=0.0, metavar="V", help="commanded lateral velocity [m/s], heading frame (legged)")
    group.add_argument("--yaw-rate", type=float, default=0.0, metavar="W", help="commanded yaw rate [rad/s] (legged)")
    group.add_argument("--command", dest="command_file", metavar="FILE", help="time-varying commands (legged): CSV with columns t,vx,vy,yaw_rate[,gait], held piecewise constant")
    group.add_argument("--step-sooner", action="store_true", help="a push sideways ends the swing in progress sooner, and the footholds follow the measured base (quadrupeds, flat ground; default: the feet land on the gait's clock, under the reference)")
    group.add_argument(
        "--follow-plan", action=argparse.BooleanOptionalAction, default=None,
        help="follow the problem's solved plan, or generate the gait (legged; default: jumps, stepping stones and stairs follow their plans, other gaits are generated)",
    )  # fmt: skip
    group.add_argument("--gait-schedule", metavar="S", help="gaits over time (legged), e.g. 0:stand,2:trot,15:stand (changes at the next cycle boundary)")
    group = run.add_argument_group("plant")
    group.add_argument("--duration", type=float, metavar="S", help="simulated time [s] (default 5; on a slope, the plan's walk and 3 s standing)")
    group.add_argument("--sim", choices=SIMULATORS, help="mujoco (legged default) or own (our simulator)")
    group.add_argument("--contact", choices=("realistic", "matched"), default="realistic", help="MuJoCo's contacts: its defaults with the URDF's feet (default) or ours")
    group.add_argument("--delay", default="measured", metavar="D", help="when a plan reaches the plant: measured (solve time, default), tick, or seconds")
    group.add_argument("--push", action="append", default=[], metavar="I,DEG,T", help="push of I N s along DEG degrees at T s, over 0.1 s; repeatable")
    group.add_argument("--payload", type=float, default=0.0, metavar="KG", help="mass added to the trunk, unknown to the controller")
    group.add_argument("--mu", type=float, metavar="MU", help="the ground's friction coefficient (default: the robot's)")
    group.add_argument("--latency", type=float, default=0.0, metavar="S", help="delay of the torque commands [s]")
    group.add_argument("--noise", type=float, default=0.0, metavar="STD", help="state-estimate noise, standard deviation per tangent direction")
    group.add_argument("--seed", type=int, default=0, help="random seed of the noise")
    group.add_argument("--plant", dest="mjcf", metavar="FILE.xml", help="the plant is this MuJoCo model of the robot (e.g. MuJoCo Menagerie's): its own masses, joint friction, contacts and actuators (legged)")
    group.add_argument("--joint-map", metavar="OURS=THEIRS,...", help="with --plant: the file's names of the controller's joints where they differ")
    group.add_argument("--servos", choices=("motor", "feedforward"), default="motor", help="with --plant: position servos become torque motors (default), or carry the torques as feed-forward")
    group.add_argument("--model-armature", action="store_true", help="with --plant: the controller's model takes the file's rotor armature")
    group.add_argument("--foot-sink", type=float, metavar="M", help="how deep the stance feet sink into the ground [m]: the swing feet's clearance is raised by it (legged; default: the --plant file's sink under the standing weight, measured at start, else 0)")
    group.add_argument("--compensate", action="store_true", help="add the joints' damping and friction torques to the commands at every plant step: the --plant file's, else the URDF's <dynamics> (legged, realistic MuJoCo plant)")
    group.add_argument("--realtime", action="store_true", help="run the plant in another process on the wall clock, as a robot runs (nothing emulated: the plan reaches it when it is sent); no --push, --delay, --latency or --noise")
    group = run.add_argument_group("output")
    group.add_argument("--log", metavar="FILE", help=f"per-tick log ({', '.join(LOG_EXTENSIONS)})")
    group.add_argument("--plot", metavar="FILE", help=f"the run's figure ({', '.join(FIGURE_EXTENSIONS)})")
    group.add_argument("--html", metavar="FILE", help="the plant's motion in the 3D viewer (.html; the viz extra)")
    group.add_argument("--view", action="store_true", help="show the plant live in the 3D viewer while it runs (the plan's feet and base paths too), then the whole run until Ctrl-C (the viz extra)")
    group.add_argument("--no-browser", action="store_true", help="with --view: only print the URL, open no browser")
    group.add_argument("--host", default="127.0.0.1", metavar="ADDRESS", help="with --view: the address the viewer listens on (default 127.0.0.1: this machine only; 0.0.0.0 for every interface)")
    group.add_argument("--overwrite", action="store_true", help="replace existing output files")
    group.add_argument("--quiet", "-q", action="store_true", help="no per-second progress lines")


#: Simulated seconds of a run without --duration (a terrain task gives its own).
DEFAULT_DURATION = 5.0


def _checked(args: argparse.Namespace) -> Any:
    """The delay as run_closed_loop takes it; a usage error for every bad number, before anything is built."""
    for option, value, ok in (
        ("--duration", args.duration, args.duration is None or args.duration > 0), ("--rate", args.rate, args.rate > 0), ("--payload", args.payload, args.payload >= 0),
        ("--latency", args.latency, args.latency >= 0), ("--noise", args.noise, args.noise >= 0),
        ("--mu", args.mu, args.mu is None or args.mu > 0), ("--horizon", args.horizon, args.horizon is None or args.horizon > 0),
        ("--budget", args.budget, args.budget is None or args.budget > 0), ("--foot-sink", args.foot_sink, args.foot_sink is None or args.foot_sink >= 0),
    ):  # fmt: skip
        if value is not None and (not math.isfinite(value) or not ok):
            raise UsageError(f"{option}: expected a positive number{' or 0' if option in ('--payload', '--latency', '--noise', '--foot-sink') else ''}, got {value}")
    try:
        return parse_delay(args.delay)
    except ValueError as err:
        raise UsageError(f"--{err}") from None


def _joint_map(text: Any) -> dict:
    """``--joint-map OURS=THEIRS,...`` as a dict (a usage error for a malformed entry)."""
    if not text:
        return {}
    pairs = [entry.split("=") for entry in text.split(",")]
    if any(len(pair) != 2 or not all(part.strip() for part in pair) for pair in pairs):
        raise UsageError(f"--joint-map: expected OURS=THEIRS pairs separated by commas, got {text!r}")
    return {ours.strip(): theirs.strip() for ours, theirs in pairs}


def _commands(args: argparse.Namespace) -> tuple:
    """The command profile and gait schedule the options give (a usage error for a bad file or schedule)."""
    velocity = Command(args.vx, args.vy, args.yaw_rate)
    gaits = None
    if args.command_file is not None:
        if any(velocity.as_array()):
            raise UsageError("--command: give either a command file or --vx/--vy/--yaw-rate, not both")
        try:
            commands, gaits = read_commands(args.command_file)
        except (OSError, ValueError) as err:
            raise UsageError(f"--command: {err}") from None
    else:
        commands = velocity if any(velocity.as_array()) else None  # none given: the task's own (in place, or a terrain plan's walk)
    if args.gait_schedule is not None:
        if gaits is not None:
            raise UsageError("--gait-schedule: the command file has a gait column already")
        try:
            gaits = GaitSchedule.parse(args.gait_schedule)
        except ValueError as err:
            raise UsageError(f"--gait-schedule: {err}") from None
    return commands, gaits


def _live_view(args: argparse.Namespace, model: Any, x0: np.ndarray, terrain: Any) -> Any:
    """``--view``: the viewer's server on ``--host``, its URL printed (and opened unless ``--no-browser``), the robot at ``x0``."""
    from ..viewer.live import LiveViewer
    from ..viewer.live_loop import LoopView

    try:
        viewer = LiveViewer(host=args.host)
    except RuntimeError as err:
        raise UsageError(f"--view: {err}") from None
    view = LoopView(viewer, model, x0, terrain=terrain)
    opened = not args.no_browser and viewer.open_browser()
    print(f"3D viewer at {viewer.url} (the plant, live{'; opened in the browser' if opened else ''})", flush=True)
    return view


def _serve_run(view: Any, result: Any, model: Any, title: str, terrain: Any) -> None:
    """After the run: the whole run as the viewer's animation, served until Ctrl-C."""
    from ..viewer import scene_of

    view.close()
    if len(result.times) > 1:
        view.viewer.display(scene_of((result, model), title=title, terrain=terrain))
    print(f"3D viewer at {view.viewer.url} (the whole run; Ctrl-C to stop)", flush=True)
    view.viewer.serve_forever()


def mpc_command(args: argparse.Namespace) -> int:
    """Build the task, check every input, run the loop, print and write; the exit code (module docstring)."""
    delay = _checked(args)
    try:
        pushes = [parse_push(p) for p in args.push]
    except ValueError as err:
        raise UsageError(f"--push: {err}") from None
    for option, path, extensions in (("--log", args.log, LOG_EXTENSIONS), ("--plot", args.plot, FIGURE_EXTENSIONS), ("--html", args.html, (".html", ".htm"))):
        if path is not None:
            check_output_path(option, path, args.overwrite, extensions)
    if args.no_browser and not args.view:
        raise UsageError("--no-browser goes with --view")
    if args.html or args.view:
        from ..viewer.extra import check_viz

        try:
            check_viz()
        except MissingExtraError as err:
            raise UsageError(f"--{'view' if args.view else 'html'}: {err}") from None
    commands, gaits = _commands(args)
    if args.realtime:
        given = [option for option, value in (("--push", args.push), ("--latency", args.latency), ("--noise", args.noise), ("--delay", args.delay != "measured")) if value]
        if given:
            raise UsageError(f"{given[0]}: the emulated loop's option; with --realtime the plant runs on its own clock")
    params = parse_parameters(args.name, args)
    problem = build_problem(args.name, params)
    if args.html or args.view:
        from ..viewer import check_viewable

        try:
            check_viewable(problem)
        except ValueError as err:
            raise UsageError(f"--{'view' if args.view else 'html'}: {err}") from None
    try:
        with warnings.catch_warnings(record=True) as clamped:
            warnings.simplefilter("always")
            task = mpc_task(problem, args.horizon, commands, gaits, follow_plan=args.follow_plan)
        for warning in clamped:
            print(f"warning: {warning.message}", file=sys.stderr)
        plant_options = {"payload": args.payload, "mu": args.mu, "contact": args.contact}
        if args.mjcf is not None:
            plant_options.update(mjcf=args.mjcf, joint_map=_joint_map(args.joint_map), servos=args.servos)
        elif args.joint_map or args.servos != "motor" or args.model_armature:
            raise UsageError("--joint-map, --servos, --model-armature: options of --plant FILE.xml")
        elif args.compensate and (args.sim == "own" or args.contact != "realistic" or not hasattr(problem.model, "robot")):
            raise UsageError("--compensate: the joints' damping and friction are simulated by a legged robot's realistic MuJoCo plant, or by a --plant FILE.xml")
        plant = task.plant(**({"sim": args.sim} if args.sim else {}), **plant_options)
        if args.model_armature:  # the controller's robot with the file's rotor inertias; the plant stays
            task = mpc_task(problem, args.horizon, commands, gaits, robot=problem.robot.with_armature(plant.passive()["armature"]), follow_plan=args.follow_plan)
            task.legged.foot_sink = plant.foot_sink  # what task.plant(mjcf=) gave the first horizon
        if args.step_sooner:
            if task.legged is None or task.terrain is not None or isinstance(task.legged, PlanTrackingMPC):
                raise UsageError(f"--step-sooner: the touchdown times of a legged robot's gait on flat ground; {problem.name!r} is not one")
            task.legged.set_step_timing(StepTiming())
        mpc = task.controller(mode=args.mode, settings=solver_settings(args), budget=args.budget)
    except (ValueError, FileNotFoundError) as err:
        raise UsageError(str(err)) from None
    model = task.problem.model
    if args.duration is None:
        args.duration = task.duration if task.duration is not None else DEFAULT_DURATION
    if args.foot_sink is not None:
        if task.legged is None:
            raise UsageError(f"--foot-sink: the swing feet of a legged robot's horizon; {args.name!r} has none")
        task.legged.foot_sink = args.foot_sink
    compensation = None
    if args.mjcf is not None:
        print("\n".join(plant.differences()))
    if args.compensate:
        from ..mpc.joint_compensation import PassiveCompensation

        compensation = PassiveCompensation.of_plant(plant, model.robot)
    print(f"{task.name}: {args.mode} at {args.rate:g} Hz, horizon {task.problem.tf:.3g} s ({task.problem.N} knots), plant {type(plant).__name__}, delay {delay}", flush=True)

    def progress(t: float, log: list) -> None:
        if args.quiet:
            return
        recent = [r for r in log[1:] if r.t > t - 1.0]
        p, v = base_motion(model, log[-1].state)
        tick = sorted(r.preparation_time + r.compute_time for r in recent) or [float("nan")]
        feedback = sorted(r.compute_time for r in recent) or [float("nan")]
        print(
            f"t = {t:5.1f} s  base ({p[0]:+.3f}, {p[1]:+.3f}, {p[2]:.3f}) m  v ({v[0]:+.2f}, {v[1]:+.2f}) m/s  "
            f"tick p50 {1e3 * tick[len(tick) // 2]:.1f} ms (feedback {1e3 * feedback[len(feedback) // 2]:.1f})  failed {sum(not r.success for r in recent)}",
            flush=True,
        )

    try:
        log = open_tick_log(args.log, model, overwrite=args.overwrite) if args.log else None
    except (ValueError, MissingExtraError) as err:
        raise UsageError(f"--log: {err}") from None
    terrain = task.terrain
    view = _live_view(args, model, plant.state(), terrain) if args.view else None
    try:
        hooks = [hook for hook in (log.write if log is not None else None, view.on_tick if view is not None else None) if hook is not None]

        def on_tick(record: Any, timing: Any, plan: Any) -> None:
            for hook in hooks:
                hook(record, timing, plan)

        if args.realtime:
            from ..mpc.process_plant import ProcessPlant
            from ..mpc.realtime import run_realtime_loop

            process = ProcessPlant(args.name, params, model.state_dim, plant.dt, args.horizon, {**({"sim": args.sim} if args.sim else {}), **plant_options}, compensate=args.compensate)
            try:
                result = run_realtime_loop(mpc, process, args.duration, args.rate, progress=progress, on_tick=on_tick)
            finally:
                process.close()
        else:
            result = run_closed_loop(
                mpc, plant, args.duration, args.rate, delay=delay, disturbances=pushes, latency=args.latency, noise=args.noise or None, seed=args.seed,
                progress=progress, on_tick=on_tick, compensation=compensation,
            )  # fmt: skip
        if result.interrupted:
            print(f"interrupted at t = {result.log[-1].t if result.log else 0.0:.2f} s")
        print(summary(loop_statistics(result, model, task.reference), args.rate))
        if args.step_sooner:
            advances = task.legged.timing_advances
            print(f"the gait ran {1e3 * task.legged.timeline.advance:.0f} ms ahead of its clock at the end: advanced at {len(advances)} ticks" + (f" ({advances[0][0]:.2f}-{advances[-1][0]:.2f} s)" if advances else ""))
        if args.realtime and process.latencies:
            latency = 1e3 * np.array([seconds for _, seconds in process.latencies])
            print(f"measurement to plan at the plant (across the process boundary): p50 {np.percentile(latency, 50):.1f} ms, p99 {np.percentile(latency, 99):.1f} ms over {len(latency)} plans")
        if log is not None:
            print(f"wrote {log.close(result.fell, result.interrupted)} ({log.ticks} rows: the first plan and each tick)")
        if args.plot:
            from ..plotting.mpc import plot_closed_loop

            plot_closed_loop(result, task, args.plot, overwrite=args.overwrite)
            print(f"wrote {args.plot}")
        if args.html:
            from ..viewer import export_html

            print(f"wrote {export_html((result, model), args.html, overwrite=args.overwrite, title=f'{task.name} in {type(plant).__name__}', terrain=terrain)}")
    except BaseException:  # the viewer's server runs in its own session: stop it with the run
        if view is not None:
            view.close()
            view.viewer.close()
        raise
    sys.stdout.flush()
    if view is not None:
        _serve_run(view, result, model, f"{task.name} in {type(plant).__name__}", terrain)
    return INTERRUPTED if result.interrupted else FELL if result.fell else 0
