"""Command-line interface: ``trajopt list``, ``trajopt solve NAME [options]``, ``trajopt view FILE``, ``trajopt verify FILE``, ``trajopt sweep NAME``.

``trajopt solve`` builds a registered problem (:mod:`problems`) with the
factory parameters given as ``--N``, ``--tf`` or ``--param KEY=VALUE``
(converted to the type of the factory's default) and, for the quadruped gait
templates (:mod:`problems.quadrupeds`), the robot as ``--robot NAME`` or
``--urdf PATH [--feet A,B,C,D]``, solves it with the problem's solver or
``--solver`` (:func:`trajopt.solve`; the solver's iteration log at
``--print-level`` 5 unless ``--quiet``), prints :func:`trajopt.report.solution_report`, and writes the
requested files: the solution (``--save``, reloadable with ``--warm-start``),
one summary page (``--plot``, :func:`trajopt.plotting.solution.plot_solution`)
and an animation (``--animate``, :func:`~trajopt.plotting.solution.animate_solution`).
The 3D viewer (:mod:`trajopt.viewer`, the ``viz`` extra): ``--html FILE`` writes
a self-contained replay, ``--view`` serves the solution live in meshcat until
Ctrl-C (printing the URL; a browser is opened only where a display exists);
``trajopt view FILE.npz`` does the same for a saved solution.

Exit codes: 0 when the solver succeeds; 1 when it fails (the last iterate is still
saved, plotted and animated as asked); 2 for a usage error (unknown problem or
parameter, bad value, missing warm-start file, an output file that exists
without ``--overwrite``, a URDF that is not a quadruped), reported on one line
of stderr before any solving; 130 after Ctrl-C (SIGINT), which stops the solver
at once. Output files are written to temporary files renamed when complete, so an
interrupt leaves none half written. ``trajopt list --robots`` lists the
quadrupeds of the installed example-robot-data.

``trajopt sweep NAME --param KEY=A:B:N --param KEY=V1,V2 --out DIR`` solves
the problem at every point of the grid (the product of the swept values;
``A:B:N`` is N values from A to B, a single value is fixed) on Dask workers
(:mod:`trajopt.batch`, the ``batch`` extra): an embedded cluster of one
worker process per core, or ``--scheduler tcp://HOST:8786``. It prints a
progress line and a summary, writes ``DIR/results.parquet`` and the solutions,
and ``--plot METRIC`` draws ``DIR/METRIC.png``; rerun with the same ``--out``,
it solves only the points not done yet. Exit code 0 when every point is done
(failed solves included: they are rows with their status), 1 when some
points raised errors (solved again by a rerun).

``trajopt verify FILE`` checks a saved legged solution in MuJoCo
(:func:`trajopt.mujoco.verify`; its problem is rebuilt from the recipe saved
in the file, :func:`problems.load_solution`): exit code 0 when the
equation-of-motion residual is within 1e-6 m g and the tracked replay does
not fall, 1 otherwise, 2 for a usage error (including a missing ``mujoco``
extra).

This module is the top of the import chain: nothing in :mod:`trajopt` imports it.
"""
from __future__ import annotations

import argparse
import ast
import inspect
import os
import sys
import textwrap
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Sequence

import matplotlib
import numpy as np

import problems

from models import LeggedRobot
from models.quadruped import LEG_ROLES, installed_quadrupeds
from models.robot_data import robot_data_dir

from . import __version__
from .derivatives import available_cores
from .legged import LeggedProblem
from .legged.replay import replay
from .plotting.animation import ANIMATION_EXTENSIONS
from .plotting.output import FIGURE_EXTENSIONS, prepare_output_path
from .plotting.solution import animate_solution, check_animatable, plot_solution
from .report import solution_report
from .solution import Solution
from .solver import SOLVERS, solve
from .transcription import TRANSCRIPTIONS, get_transcription

EXAMPLES = """\
examples:
  trajopt solve go1-trot --plot trot.png --animate trot.gif
  trajopt solve trot --robot solo12 --plot solo.png
  trajopt solve jump --urdf my_robot.urdf --feet lf_foot,rf_foot,lh_foot,rh_foot
  trajopt solve pendulum --N 21 --save pendulum.npz
  trajopt solve pendulum --N 81 --warm-start pendulum.npz --quiet
  trajopt solve quadrotor --param u_max=3 --transcription trapezoidal
  trajopt solve go1-trot --html trot.html --view
  trajopt solve go1-jump --save jump.npz && trajopt verify jump.npz --plot jump-mujoco.png
"""
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")
#: Exit status after Ctrl-C (128 + SIGINT, as shells report it).
INTERRUPTED = 130


class UsageError(Exception):
    """A mistake on the command line: one line on stderr, exit code 2."""


# ------------------------------------------------------------------ parser


def build_parser() -> argparse.ArgumentParser:
    """The ``trajopt`` argument parser with its ``list`` and ``solve`` subcommands."""
    parser = argparse.ArgumentParser(prog="trajopt", description="Trajectory optimization for robots (CasADi + IPOPT + pinocchio).")
    parser.add_argument("--version", action="version", version=f"trajopt {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    listing = sub.add_parser("list", help="list the registered problems", description="List the registered problems with a one-line description.")
    listing.add_argument("--params", action="store_true", help="also show each factory's parameters and defaults")
    listing.add_argument("--robots", action="store_true", help="list the quadrupeds of the installed example-robot-data instead (for --robot)")

    run = sub.add_parser(
        "solve",
        help="solve a registered problem",
        description="Solve a registered problem (IPOPT, fatrop or SQP), print a summary, and save, plot or animate the solution.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("name", metavar="NAME", help="problem name (see `trajopt list`)")
    group = run.add_argument_group("problem")
    group.add_argument("--N", metavar="N", help="number of knots (problems with a parameter N)")
    group.add_argument("--tf", metavar="TF", help="final time [s] (problems with a parameter tf)")
    group.add_argument(
        "--param", "-p", action="append", default=[], metavar="KEY=VALUE", help="factory parameter, repeatable; lists as 15,10,15 (see `trajopt list --params`)"
    )
    group.add_argument("--transcription", "-t", metavar="T", help=f"{', '.join(TRANSCRIPTIONS)} or multiple_shooting_<integrator> (default: the problem's)")
    add_robot_options(group)
    group = run.add_argument_group("solver")
    group.add_argument("--warm-start", metavar="FILE", help="start from a solution saved with --save (re-sampled if its N differs)")
    group.add_argument("--max-iter", type=int, metavar="K", help="solver iteration limit (default 1000; sqp: 200)")
    group.add_argument("--print-level", type=int, default=5, metavar="L", help="solver print level 0..12 (default 5: one line per iteration)")
    group.add_argument("--quiet", "-q", action="store_true", help="no solver output (print level 0)")
    group.add_argument("--compile", action="store_true", default=None, help="evaluate the stage functions as compiled C (gcc once, cached on disk; default: the problem's choice)")
    group.add_argument("--solver", choices=tuple(SOLVERS), default=None, help="NLP solver backend (default: the problem's, else ipopt; fatrop and sqp need multiple shooting)")
    group = run.add_argument_group("output")
    group.add_argument("--save", metavar="FILE", help="write the solution (.npz archive)")
    group.add_argument("--plot", metavar="FILE", help=f"write a summary page ({', '.join(FIGURE_EXTENSIONS)})")
    group.add_argument("--animate", metavar="FILE", help=f"write an animation ({', '.join(ANIMATION_EXTENSIONS)}): rigid bodies and legged robots")
    group.add_argument("--fps", type=float, default=30.0, help="animation frame rate (default 30)")
    group.add_argument("--overwrite", action="store_true", help="replace existing output files")
    group.add_argument("--replay", action="store_true", help="legged problems: replay the torques through the full dynamics and print the drift")
    add_viewer_options(group)
    add_view_parser(sub)
    add_verify_parser(sub)
    add_sweep_parser(sub)
    return parser


def add_verify_parser(sub: Any) -> None:
    """The ``verify`` subcommand's arguments."""
    check = sub.add_parser(
        "verify",
        help="check a saved legged solution in MuJoCo",
        description="Check a saved legged solution with MuJoCo's dynamics (equation-of-motion residual, slip, friction, limits) "
        "and replay it in MuJoCo's simulation, tracked by joint PD + feed-forward and with the feed-forward torques alone. Needs the mujoco extra.",
    )
    check.add_argument("file", metavar="FILE", help="a solution saved by `trajopt solve NAME --save FILE`")
    check.add_argument("--kp", type=float, metavar="KP", help="joint stiffness of the tracked replay, N m/rad (default: the robot's)")
    check.add_argument("--kd", type=float, metavar="KD", help="joint damping of the tracked replay, N m s/rad (default: the robot's)")
    check.add_argument("--table", action="store_true", help="also print the checks and the drift at every knot")
    check.add_argument("--plot", metavar="FILE", help=f"write the plan against the replays ({', '.join(FIGURE_EXTENSIONS)})")
    check.add_argument("--overwrite", action="store_true", help="replace an existing --plot file")


# ------------------------------------------------------------------ problems


def _factory(name: str) -> Callable[..., Any]:
    """The registered factory of problem ``name``."""
    if name not in problems.names():
        raise UsageError(f"unknown problem {name!r}; known problems: {', '.join(problems.names())}")
    return problems.factory(name)


def _parameters(factory: Callable[..., Any]) -> Dict[str, inspect.Parameter]:
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return {p.name: p for p in inspect.signature(factory).parameters.values() if p.kind in kinds}


def signature_text(factory: Callable[..., Any]) -> str:
    """``key=default, ...`` of a factory's keyword parameters, or ``(none)``."""
    params = _parameters(factory).values()
    return ", ".join(p.name if p.default is inspect.Parameter.empty else f"{p.name}={p.default!r}" for p in params) or "(none)"


def description(factory: Callable[..., Any]) -> str:
    """First line of a factory's docstring, without reST literal quotes."""
    return (inspect.getdoc(factory) or "").split("\n", 1)[0].replace("``", "")


def _typed(text: str, default: Any) -> Any:
    """``text`` as the type of ``default`` (bool, int, float, str, or a tuple of them); ``ValueError`` if it is none."""
    if isinstance(default, bool):
        if text.lower() not in _TRUE + _FALSE:
            raise ValueError(text)
        return text.lower() in _TRUE
    if isinstance(default, (int, float, str)):
        return type(default)(text)
    if isinstance(default, (tuple, list)) and default:
        return tuple(_typed(part.strip(), default[0]) for part in text.split(","))
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def convert(text: str, default: Any, key: str) -> Any:
    """The value of parameter ``key`` given as ``text``, typed like its ``default`` (a Python literal or the string when it has none)."""
    try:
        return _typed(text, default)
    except ValueError:
        raise UsageError(f"parameter {key}: expected a value like the default {default!r}, got {text!r}") from None


def split_parameter(item: str) -> tuple[str, str]:
    """``(key, text)`` of a ``--param KEY=VALUE``."""
    key, sep, text = item.partition("=")
    if not sep or not key.strip():
        raise UsageError(f"--param: expected KEY=VALUE, got {item!r}")
    return key.strip(), text.strip()


def parse_parameters(name: str, args: argparse.Namespace) -> Dict[str, Any]:
    """Factory keyword arguments from ``--N``, ``--tf`` and ``--param``, checked against the factory's signature."""
    accepted = _parameters(_factory(name))
    pairs = [(key, getattr(args, key)) for key in ("N", "tf") if getattr(args, key) is not None]
    pairs += [split_parameter(item) for item in args.param]
    params: Dict[str, Any] = {}
    for key, text in pairs:
        if key not in accepted:
            option = f"--{key}" if key in ("N", "tf") else f"parameter {key!r}"
            raise UsageError(f"problem {name!r} takes no {option}; its parameters: {signature_text(_factory(name))}")
        if key in params:
            raise UsageError(f"parameter {key!r} is given twice")
        params[key] = convert(text, accepted[key].default, key)
    for key, value in robot_parameters(args).items():
        if key not in accepted:
            raise UsageError(f"problem {name!r} takes no --{key}; the quadruped templates do: {', '.join(robot_templates())}")
        if key in params:
            raise UsageError(f"parameter {key!r} is given twice")
        params[key] = value
    return params


def build_problem(name: str, params: Dict[str, Any]) -> Any:
    """``problems.get(name, **params)``, a factory's ``ValueError`` or ``TypeError`` (a bad parameter value) turned into a usage error."""
    try:
        return problems.get(name, **params)
    except (ValueError, TypeError) as err:
        raise UsageError(f"problem {name!r}: {err}") from None


# ------------------------------------------------------------------ files


def check_output_path(option: str, path: str, overwrite: bool, extensions: Optional[Sequence[str]]) -> None:
    """A usage error unless ``path`` can take the output of ``option``: it must not exist (without
    ``--overwrite``) and must have one of ``extensions`` (``None``: any); its folder is created."""
    if Path(path).exists() and not overwrite:
        raise UsageError(f"{option}: {path!r} exists; pass --overwrite to replace it")
    try:
        if extensions is None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        else:
            prepare_output_path(path, overwrite, extensions)
    except (ValueError, OSError) as err:
        raise UsageError(f"{option}: {err}") from None


def check_outputs(args: argparse.Namespace, problem: Any) -> None:
    """Fail before solving if an output file exists (without ``--overwrite``), has a wrong extension, or cannot be drawn."""
    outputs = [("--save", args.save, None), ("--plot", args.plot, FIGURE_EXTENSIONS), ("--animate", args.animate, ANIMATION_EXTENSIONS)]
    for option, path, extensions in outputs:
        if path is not None:
            check_output_path(option, path, args.overwrite, extensions)
    if args.animate is not None:
        try:
            check_animatable(problem)
        except ValueError as err:
            raise UsageError(f"--animate: {err}") from None
        if not args.fps > 0:
            raise UsageError(f"--fps: expected a positive frame rate, got {args.fps}")
    if args.replay and not isinstance(problem, LeggedProblem):
        raise UsageError(f"--replay: only legged problems can be replayed, {args.name!r} is not one")
    check_viewer_outputs(args, problem)


def load_warm_start(path: str, name: str, params: Dict[str, Any], problem: Any) -> Solution:
    """The solution in ``path`` with a problem attached: ``problem`` itself, or the same
    problem built with the file's ``N`` (so that the solver can re-sample it)."""
    try:
        solution = Solution.load(path)
    except (OSError, ValueError, KeyError) as err:
        raise UsageError(f"--warm-start: {err}") from None
    sizes, want = (solution.states.shape[1], solution.controls.shape[1]), (problem.nx, problem.nu)
    if sizes != want:
        raise UsageError(f"--warm-start: {path!r} holds (states, controls) of sizes {sizes}, problem {name!r} has {want}")
    try:
        if solution.N == problem.N:
            return solution.attach(problem)
        if "N" not in _parameters(_factory(name)):
            raise UsageError(f"--warm-start: {path!r} has N = {solution.N} knots, the problem {problem.N}, and {name!r} takes no parameter N to re-sample it")
        return solution.attach(build_problem(name, {**params, "N": solution.N}))
    except ValueError as err:  # a solution of another model
        raise UsageError(f"--warm-start: {path!r}: {err}") from None


# ------------------------------------------------------------------ commands


def list_command(args: argparse.Namespace) -> int:
    """Print the registered problems, one per line with its description (and parameters with ``--params``);
    with ``--robots``, the quadrupeds instead (:func:`list_robots`)."""
    if args.robots:
        return list_robots()
    names = problems.names()
    width = max(len(n) for n in names)
    for name in names:
        factory = _factory(name)
        print(f"{name:<{width}}  {description(factory)}")
        if args.params:
            print(textwrap.indent(textwrap.fill(signature_text(factory), 100), " " * (width + 4)))
    return 0


def solve_command(args: argparse.Namespace) -> int:
    """Build, check, solve, report and write; the exit code (module docstring)."""
    params = parse_parameters(args.name, args)
    problem = build_problem(args.name, params)
    transcription: Optional[str] = None
    if args.transcription is not None:
        try:
            transcription = get_transcription(args.transcription).name
            problem.check_transcription(transcription)
        except ValueError as err:
            raise UsageError(str(err)) from None
    warm = load_warm_start(args.warm_start, args.name, params, problem) if args.warm_start else None
    check_outputs(args, problem)
    if warm is not None and warm.problem_name != problem.name:
        print(f"note: warm start from a solution of {warm.problem_name!r}")
    options = {"max_iter": args.max_iter} if args.max_iter is not None else None
    print_robot(args, problem)
    print(f"solving {args.name} (nx = {problem.nx}, nu = {problem.nu}, N = {problem.N}, {transcription or problem.default_transcription})", flush=True)
    try:
        solution = solve(problem, transcription, options=options, warm_start=warm, print_level=0 if args.quiet else args.print_level, compile=args.compile, solver=args.solver)
    except ValueError as err:
        raise UsageError(str(err)) from None
    print()
    print(solution_report(solution))
    if args.replay:
        print(replay(problem, solution).summary())
    write_outputs(args, solution)
    write_viewer_outputs(args, solution)
    return 0 if solution.success else 1


def write_outputs(args: argparse.Namespace, solution: Solution) -> None:
    """Write the files asked for by ``--save``, ``--plot`` and ``--animate`` (checked by :func:`check_outputs`)."""
    if args.save:
        solution.save(args.save, overwrite=args.overwrite)
        print(f"wrote {args.save}")
    if args.plot:
        plot_solution(solution, args.plot, overwrite=args.overwrite)
        print(f"wrote {args.plot}")
    if args.animate:
        animate_solution(solution, args.animate, fps=args.fps, overwrite=args.overwrite)
        print(f"wrote {args.animate}")

# ------------------------------------------------------------------ 3D viewer (trajopt.viewer, the viz extra)


def add_viewer_options(group: argparse._ArgumentGroup) -> None:
    """``--html``, ``--view``, ``--no-browser`` and ``--force-scale`` (solve and view commands)."""
    group.add_argument("--html", metavar="FILE", help="write a self-contained 3D replay (.html; meshcat, needs the viz extra)")
    group.add_argument("--view", action="store_true", help="show the solution in a live 3D viewer and serve it until Ctrl-C")
    group.add_argument("--no-browser", action="store_true", help="with --view: only print the URL, open no browser")
    group.add_argument("--force-scale", type=float, metavar="M_PER_N", help="3D viewer: contact-force arrow length per newton (default: the weight 1.5 base heights long)")


def add_view_parser(sub: Any) -> None:
    """The ``trajopt view FILE`` subcommand."""
    view = sub.add_parser(
        "view",
        help="show a saved solution in the 3D viewer",
        description="Show a solution saved with `trajopt solve --save` in a live 3D viewer (until Ctrl-C), or write it as a self-contained HTML replay with --html.",
        epilog="examples:\n  trajopt view trot.npz\n  trajopt view trot.npz --html trot.html\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    view.add_argument("file", metavar="FILE", help="a solution file (.npz) written by `trajopt solve --save`")
    group = view.add_argument_group("output")
    add_viewer_options(group)
    group.add_argument("--overwrite", action="store_true", help="replace an existing --html file")


def check_viewer_outputs(args: argparse.Namespace, problem: Any) -> None:
    """Before any work: the ``viz`` extra is installed, the model can be drawn, ``--html`` can be written."""
    if not (args.view or args.html):
        if args.force_scale is not None or args.no_browser:
            raise UsageError("--force-scale and --no-browser go with --view or --html")
        return
    from .viewer import MissingExtraError, check_viewable, check_viz
    from .viewer.html import HTML_EXTENSIONS

    try:
        check_viz()
        check_viewable(problem)
    except (MissingExtraError, ValueError) as err:
        raise UsageError(f"--{'view' if args.view else 'html'}: {err}") from None
    if args.force_scale is not None and not args.force_scale > 0:
        raise UsageError(f"--force-scale: expected a positive length per newton, got {args.force_scale}")
    if args.html is not None:
        check_output_path("--html", args.html, args.overwrite, HTML_EXTENSIONS)


def write_viewer_outputs(args: argparse.Namespace, solution: Solution) -> None:
    """Write ``--html`` and serve ``--view`` (until Ctrl-C), as checked by :func:`check_viewer_outputs`."""
    if not (args.view or args.html):
        return
    import time

    from .viewer import export_html, show

    start = time.perf_counter()
    options = {"force_scale": args.force_scale}
    if args.html:
        export_html(solution, args.html, overwrite=args.overwrite, **options)
        print(f"wrote {args.html} ({os.path.getsize(args.html) / 1e6:.1f} MB)")
    if args.view:
        viewer = show(solution, open_browser=not args.no_browser, **options)
        print(f"3D viewer at {viewer.url} (ready {time.perf_counter() - start:.2f} s after the solve; Ctrl-C to stop)", flush=True)
        viewer.serve_forever()


def view_command(args: argparse.Namespace) -> int:
    """``trajopt view FILE``: load a saved solution, rebuild its problem, and show or export it."""
    try:
        solution = problems.load_solution(args.file)
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise UsageError(f"{args.file}: {err}") from None
    if not (args.view or args.html):
        args.view = True
    check_viewer_outputs(args, solution.problem)
    print(solution.summary())
    write_viewer_outputs(args, solution)
    return 0


# ------------------------------------------------------------------ robots

def robot_templates() -> list[str]:
    """The registered problems that take a quadruped as ``--robot``/``--urdf`` (a factory parameter ``robot``)."""
    return [name for name in problems.names() if "robot" in _parameters(problems.factory(name))]


def add_robot_options(group: argparse._ArgumentGroup) -> None:
    """``--robot``, ``--urdf`` and ``--feet`` (the quadruped gait templates' robot)."""
    group.add_argument("--robot", metavar="NAME", help=f"quadruped from example-robot-data for {', '.join(robot_templates())} (see `trajopt list --robots`; default go1)")
    group.add_argument("--urdf", metavar="PATH", help="quadruped from a URDF file instead of --robot")
    group.add_argument("--feet", metavar="A,B,C,D", help="its four foot frames, any order (default: found in the URDF)")


def robot_parameters(args: argparse.Namespace) -> Dict[str, Any]:
    """The factory parameters ``robot``, ``urdf`` (made absolute, so that a saved solution's recipe
    finds it from anywhere) and ``feet`` (a list) given as options."""
    params: Dict[str, Any] = {}
    if args.robot is not None and args.urdf is not None:
        raise UsageError("--robot/--urdf: give a robot name or a URDF file, not both")
    if args.robot is not None:
        params["robot"] = args.robot
    if args.urdf is not None:
        if not Path(args.urdf).is_file():
            raise UsageError(f"--urdf: no such file {args.urdf!r}")
        params["urdf"] = str(Path(args.urdf).resolve())
    if args.feet is not None:
        feet = [name.strip() for name in args.feet.split(",")]
        if len(feet) != len(LEG_ROLES) or not all(feet):
            raise UsageError(f"--feet: expected four comma-separated frame names, got {args.feet!r}")
        params["feet"] = feet
    return params


def print_robot(args: argparse.Namespace, problem: Any) -> None:
    """For a gait template, the robot it runs on: feet by role, standing height, knees, limits."""
    if args.name in robot_templates() and isinstance(problem, LeggedProblem) and isinstance(problem.robot, LeggedRobot):
        print(problem.robot.describe(), flush=True)


def list_robots() -> int:
    """Print the quadrupeds of the installed example-robot-data: names, mass, leg length, stance, feet by role, file."""
    found = installed_quadrupeds()
    rows = []
    for quad in found:
        robot = LeggedRobot.from_urdf(quad.urdf, quad.feet)
        cells = (", ".join(quad.names), f"{robot.mass:.1f}", f"{robot.leg_length:.3f}", f"{robot.standing_height:.3f}", robot.knee_posture(), ", ".join(quad.feet))
        rows.append((*cells, quad.urdf.relative_to(robot_data_dir()).as_posix()))
    header = ("name", "kg", "leg m", "stand m", "knees", "feet (" + ", ".join(LEG_ROLES) + ")", "urdf (in example-robot-data)")
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    print(f"{len(rows)} quadrupeds; solve one with `trajopt solve trot --robot NAME`")
    return 0


# ------------------------------------------------------------------ MuJoCo

def verify_command(args: argparse.Namespace) -> int:
    """Load, verify in MuJoCo, print (and plot); 0 when the plan passes, 1 otherwise (module docstring)."""
    try:
        from .mujoco.plot import plot_verification
        from .mujoco.verify import verify
    except ImportError as err:
        raise UsageError(str(err)) from None
    if args.plot is not None:
        check_output_path("--plot", args.plot, args.overwrite, FIGURE_EXTENSIONS)
    for option in ("kp", "kd"):
        value = getattr(args, option)
        if value is not None and not (np.isfinite(value) and value >= 0):
            raise UsageError(f"--{option}: expected a gain >= 0, got {value}")
    try:
        solution = problems.load_solution(args.file)
        report = verify(solution, kp=args.kp, kd=args.kd)
    except (OSError, ValueError, KeyError) as err:
        raise UsageError(str(err)) from None
    print(report.summary())
    if args.table:
        print(report.table())
    if args.plot:
        plot_verification(report, args.plot, overwrite=args.overwrite)
        print(f"wrote {args.plot}")
    return 0 if report.ok else 1


# ------------------------------------------------------------------ sweeps (trajopt.batch, the batch extra)

SWEEP_EXAMPLES = """\
examples:
  trajopt sweep go1-trot --param step=0.05:0.30:6 --param apex=0.05,0.08,0.11 --out sweeps/trot --plot objective
  trajopt sweep quadrotor --param u_max=3:6:4 --param tf=4,5 --param N=21 --out sweeps/quad --warm-start none
  trajopt sweep go1-jump --param knots="15,10,15;12,8,12" --out sweeps/jump --scheduler tcp://scheduler-host:8786
"""


def add_sweep_parser(sub: Any) -> None:
    """The ``sweep`` subcommand's arguments."""
    run = sub.add_parser(
        "sweep",
        help="solve a registered problem over a grid of parameters on Dask workers",
        description="Solve a registered problem at every point of a parameter grid on Dask workers (an embedded cluster, or --scheduler), "
        "with a progress line and a summary; results in OUT/results.parquet and OUT/solutions/. A rerun with the same --out solves only "
        "the points not done yet. Needs the batch extra.",
        epilog=SWEEP_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("name", metavar="NAME", help="problem name (see `trajopt list`), or a factory package.module:function importable on the workers")
    group = run.add_argument_group("grid")
    group.add_argument(
        "--param", "-p", action="append", default=[], metavar="KEY=SPEC",
        help="swept parameter, repeatable: A:B:N (N values from A to B), V1,V2,... (a list; for a list-valued parameter separate the values "
        "with ';'), or one value (fixed); the grid is the product",
    )
    add_robot_options(group)
    group = run.add_argument_group("solver")
    group.add_argument("--transcription", "-t", metavar="T", help=f"{', '.join(TRANSCRIPTIONS)} or multiple_shooting_<integrator> (default: the problem's)")
    group.add_argument("--solver", choices=tuple(SOLVERS), help="NLP solver (default: the problem's)")
    group.add_argument("--max-iter", type=int, metavar="K", help="solver iteration limit (default 1000; sqp: 200)")
    group.add_argument("--compile", action="store_true", help="evaluate the stage functions as compiled C (gcc once per function, cached)")
    group.add_argument("--warm-start", choices=("nearest", "none"), default="nearest", help="nearest: each point starts from its nearest solved neighbour (default); none: from the initial guess")
    group.add_argument("--seeds", type=int, metavar="K", help="with --warm-start nearest: points solved cold, spread over the grid (default: one per 16 points)")
    group = run.add_argument_group("cluster")
    group.add_argument("--scheduler", metavar="ADDRESS", help="address of a running Dask scheduler, e.g. tcp://HOST:8786 (default: an embedded cluster)")
    group.add_argument("--workers", type=int, metavar="N", help="worker processes of the embedded cluster (default: one per core)")
    group.add_argument("--retries", type=int, default=2, metavar="R", help="reruns of a task that raises or whose worker dies (default 2)")
    group = run.add_argument_group("output")
    group.add_argument("--out", required=True, metavar="DIR", help="sweep folder: results.parquet, solutions/, sweep.json")
    group.add_argument("--plot", metavar="METRIC", help="draw METRIC (objective, iterations, solve_time, ...) over the grid to OUT/METRIC.png (replaced on every run)")


def _range_value(text: str, default: Any, key: str) -> list:
    """The values of ``A:B:N`` for parameter ``key``: N numbers from A to B, integers for an ``int`` parameter."""
    from .batch.points import range_values

    parts = [part.strip() for part in text.split(":")]
    try:
        start, stop, count = float(parts[0]), float(parts[1]), int(parts[2])
        values = range_values(start, stop, count)
    except (ValueError, IndexError):
        raise UsageError(f"parameter {key}: expected A:B:N (N >= 1 numbers from A to B), got {text!r}") from None
    integral = (isinstance(default, int) and not isinstance(default, bool)) or (default is None and all(p.lstrip("+-").isdigit() for p in parts[:2]))
    if integral:
        if not all(float(v).is_integer() for v in values):
            raise UsageError(f"parameter {key}: {text!r} gives values that are not integers ({', '.join(f'{v:g}' for v in values)})")
        return [int(v) for v in values]
    return values


def parse_grid(name: str, args: argparse.Namespace) -> tuple[Dict[str, list], Dict[str, Any]]:
    """``(grid, fixed)`` from the sweep's ``--param`` and robot options, typed like the factory's defaults.
    ``name`` is a registered problem or an importable factory ``package.module:function``."""
    from .batch import ProblemRef

    try:
        factory = ProblemRef.resolve(name).factory()
    except ValueError as err:
        raise UsageError(str(err)) from None
    accepted = _parameters(factory)
    grid: Dict[str, list] = {}
    fixed: Dict[str, Any] = {}
    for item in args.param:
        key, text = split_parameter(item)
        if key not in accepted:
            raise UsageError(f"problem {name!r} takes no parameter {key!r}; its parameters: {signature_text(factory)}")
        if key in grid or key in fixed:
            raise UsageError(f"parameter {key!r} is given twice")
        default = accepted[key].default
        numeric = default is None or (isinstance(default, (int, float)) and not isinstance(default, bool))
        if isinstance(default, (tuple, list)):
            values = [convert(part.strip(), default, key) for part in text.split(";")]
        elif numeric and ":" in text:
            values = _range_value(text, default, key)
        else:
            values = [convert(part.strip(), default, key) for part in text.split(",")]
        if len(values) == 1:
            fixed[key] = values[0]
        else:
            grid[key] = values
    for key, value in robot_parameters(args).items():
        if key not in accepted:
            raise UsageError(f"problem {name!r} takes no --{key}; the quadruped templates do: {', '.join(robot_templates())}")
        if key in grid or key in fixed:
            raise UsageError(f"parameter {key!r} is given twice")
        fixed[key] = value
    if not grid:
        raise UsageError("--param: give at least one parameter with several values (A:B:N or V1,V2,...) to sweep over")
    return grid, fixed


def sweep_command(args: argparse.Namespace) -> int:
    """Parse the grid, run :func:`trajopt.batch.sweep` with a progress line, print the summary, plot; the exit code (module docstring)."""
    from .extras import MissingExtraError, check_extra

    try:
        check_extra("batch", ("distributed", "pyarrow"), "trajopt sweep")
    except MissingExtraError as err:
        raise UsageError(str(err)) from None
    from .batch import METRICS, sweep
    from .batch.plot import plot_metric

    grid, fixed = parse_grid(args.name, args)
    if args.plot is not None and args.plot not in METRICS:
        raise UsageError(f"--plot: expected a metric of the table ({', '.join(METRICS)}), got {args.plot!r}")
    for option in ("workers", "seeds", "max_iter"):
        value = getattr(args, option)
        if value is not None and value < 1:
            raise UsageError(f"--{option.replace('_', '-')}: expected an integer >= 1, got {value}")
    if args.retries < 0:
        raise UsageError(f"--retries: expected an integer >= 0, got {args.retries}")
    if args.scheduler is not None and args.workers is not None:
        raise UsageError("--workers: sizes the embedded cluster; a --scheduler's cluster has its own workers")
    points = int(np.prod([len(v) for v in grid.values()]))
    where = args.scheduler or f"an embedded cluster of {args.workers or available_cores()} worker processes"
    print(f"sweeping {args.name} over {points} points ({' x '.join(f'{k}: {len(v)}' for k, v in grid.items())}) on {where}", flush=True)
    try:
        result = sweep(
            args.name, grid, client=args.scheduler, out=args.out, warm_start=None if args.warm_start == "none" else "nearest", retries=args.retries,
            params=fixed, transcription=args.transcription, solver=args.solver, options={"max_iter": args.max_iter} if args.max_iter else None,
            compile=True if args.compile else None, seeds=args.seeds, n_workers=args.workers, progress=sys.stderr,
        )
    except (ValueError, TypeError, RuntimeError, OSError) as err:
        raise UsageError(str(err)) from None
    print(result.summary())
    if args.plot:
        path = Path(args.out) / f"{args.plot}.png"
        plot_metric(result.table(), args.plot, path, overwrite=True)
        print(f"wrote {path}")
    return 1 if result.errors else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``trajopt`` with ``argv`` (default ``sys.argv[1:]``); return the exit code.

    argparse's own errors (unknown options, missing NAME) exit with code 2 through ``SystemExit``.
    A closed output pipe (``trajopt list | head``) ends the command quietly with code 1.
    """
    matplotlib.use("Agg")  # files only, never a window
    parser = build_parser()
    args = parser.parse_args(argv)
    commands = {"list": list_command, "solve": solve_command, "view": view_command, "verify": verify_command, "sweep": sweep_command}
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return commands[args.command](args)
    except UsageError as err:
        print(f"trajopt {args.command}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: the solver stopped, outputs are written whole or not at all
        print(f"\ntrajopt {args.command}: interrupted", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:  # e.g. `trajopt list | head`: stop quietly, and silence the flush at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
