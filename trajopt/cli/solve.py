"""``trajopt solve NAME``: build a registered problem, solve it, print its report and write the files asked for."""
from __future__ import annotations

import argparse
import sys
from typing import Any, Dict, Optional

from models import LeggedRobot

from ..legged import LeggedProblem
from ..plotting.output import ANIMATION_EXTENSIONS, FIGURE_EXTENSIONS
from ..report import solution_report
from ..solution import Solution
from ..solvers import solve
from ..transcription import TRANSCRIPTIONS, get_transcription
from .arguments import UsageError, add_problem_arguments, add_robot_options, add_solver_options, build_problem, check_output_path, command_line_hints, command_parser, factory_parameters, parse_parameters, problem_factory, robot_templates, solver_settings, warn_skipped
from .view import add_viewer_options, check_viewer_outputs, write_viewer_outputs

EXAMPLES = """\
examples:
  trajopt solve go1-trot --plot trot.png --animate trot.gif
  trajopt solve trot --robot solo12 --plot solo.png
  trajopt solve jump --urdf my_robot.urdf --feet lf_foot,rf_foot,lh_foot,rh_foot
  trajopt solve pendulum --N 21 --save pendulum.npz
  trajopt solve pendulum --N 81 --warm-start pendulum.npz --quiet
  trajopt solve quadrotor --param u_max=3 --transcription trapezoidal
  trajopt solve quadrotor --solver sqp -t multiple_shooting --chart
  trajopt solve go1-trot --html trot.html --view
  trajopt solve go1-jump --save jump.npz && trajopt verify jump.npz --plot jump-mujoco.png
"""


def add_solve_parser(sub: Any) -> None:
    """The ``solve`` subcommand's arguments."""
    run = command_parser(
        sub, "solve", "solve a registered problem",
        "Solve a registered problem (IPOPT, fatrop or SQP), print a summary, and save, plot or animate the solution.", EXAMPLES,
    )  # fmt: skip
    group = add_problem_arguments(run, "problem name (see `trajopt list`)", ("problems with a parameter N", "problems with a parameter tf"))
    group.add_argument(
        "--param", "-p", action="append", default=[], metavar="KEY=VALUE", help="factory parameter, repeatable; lists as 15,10,15; none drops an optional one (see `trajopt list --params`)"
    )
    group.add_argument("--transcription", "-t", metavar="T", help=f"{', '.join(TRANSCRIPTIONS)} or multiple_shooting_<integrator> (default: the problem's)")
    add_robot_options(group)
    group = run.add_argument_group("solver")
    group.add_argument("--warm-start", metavar="FILE", help="start from a solution saved with --save (re-sampled if its N differs)")
    group.add_argument("--print-level", type=int, default=5, metavar="L", help="solver print level 0..12 (default 5: one line per iteration)")
    group.add_argument("--quiet", "-q", action="store_true", help="no solver output (print level 0)")
    group.add_argument("--no-check", dest="check", action="store_false", help="solve even when the start, the goal or a pinned knot breaks the problem's bounds or constraints (checked first by default)")
    add_solver_options(group)
    group = run.add_argument_group("output")
    group.add_argument("--save", metavar="FILE", help="write the solution (.npz archive)")
    group.add_argument("--plot", metavar="FILE", help=f"write a summary page ({', '.join(FIGURE_EXTENSIONS)})")
    group.add_argument("--animate", metavar="FILE", help=f"write an animation ({', '.join(ANIMATION_EXTENSIONS)}): rigid bodies and legged robots")
    group.add_argument("--fps", type=float, default=None, help="animation frame rate (default 20 for a GIF, whose frame delays are whole 1/100 s; 30 for an MP4)")
    group.add_argument("--overwrite", action="store_true", help="replace existing output files")
    group.add_argument("--replay", action="store_true", help="legged problems: replay the torques through the full dynamics and print the drift")
    add_viewer_options(group)


def check_outputs(args: argparse.Namespace, problem: Any) -> None:
    """Before solving: a usage error if an output file exists (without ``--overwrite``) or has a wrong
    extension, or an option makes no sense (``--view`` of a model the viewer cannot show included);
    an output file the writer cannot make for this problem (``--animate`` or ``--html`` of a model
    it cannot draw, ``--html`` without the ``viz`` extra) is dropped from ``args`` with one warning
    line on stderr, and the others are still written."""
    outputs = [("--save", args.save, None), ("--plot", args.plot, FIGURE_EXTENSIONS), ("--animate", args.animate, ANIMATION_EXTENSIONS)]
    for option, path, extensions in outputs:
        if path is not None:
            check_output_path(option, path, args.overwrite, extensions)
    if args.fps is not None and not args.fps > 0:
        raise UsageError(f"--fps: expected a positive frame rate, got {args.fps}")
    if args.replay and not isinstance(problem, LeggedProblem):
        raise UsageError(f"--replay: only legged problems can be replayed, {args.name!r} is not one")
    if args.animate is not None:
        from ..plotting.solution import check_animatable  # matplotlib only for the commands that draw

        try:
            check_animatable(problem)
        except ValueError as err:
            warn_skipped("solve", f"--animate {args.animate}", str(err))
            args.animate = None
    check_viewer_outputs(args, problem, skip_html=True)


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
        if "N" not in factory_parameters(problem_factory(name)):
            raise UsageError(f"--warm-start: {path!r} has N = {solution.N} knots, the problem {problem.N}, and {name!r} takes no parameter N to re-sample it")
        return solution.attach(build_problem(name, {**params, "N": solution.N}))
    except ValueError as err:  # a solution of another model
        raise UsageError(f"--warm-start: {path!r}: {err}") from None


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
    settings = solver_settings(args, transcription=transcription, print_level=0 if args.quiet else args.print_level)
    print_robot(args, problem)
    print(f"solving {args.name} (nx = {problem.nx}, nu = {problem.nu}, N = {problem.N}, {transcription or problem.default_transcription})", flush=True)
    try:
        solution = solve(problem, settings, warm_start=warm, check=args.check)
    except ValueError as err:
        raise UsageError(command_line_hints(str(err))) from None
    print()
    print(solution_report(solution))
    if args.replay:
        from ..legged.replay import replay  # scipy's linear algebra only for the command that replays

        print(replay(problem, solution).summary())
    write_outputs(args, solution)
    write_viewer_outputs(args, solution)
    return 0 if solution.success else 1


def write_outputs(args: argparse.Namespace, solution: Solution) -> None:
    """Write the files asked for by ``--save``, ``--plot`` and ``--animate`` (checked by :func:`check_outputs`)."""
    if args.save:
        solution.save(args.save, overwrite=args.overwrite)
        print(f"wrote {args.save}")
    from ..plotting import animate_solution, plot_solution  # matplotlib only for the commands that draw

    if args.plot:
        plot_solution(solution, args.plot, overwrite=args.overwrite)
        print(f"wrote {args.plot}")
    if args.animate:
        animate_solution(solution, args.animate, fps=args.fps, overwrite=args.overwrite, progress=sys.stdout)  # prints "wrote ..."


def print_robot(args: argparse.Namespace, problem: Any) -> None:
    """For a gait template, the robot it runs on: feet by role, standing height, knees, limits."""
    if args.name in robot_templates() and isinstance(problem, LeggedProblem) and isinstance(problem.robot, LeggedRobot):
        print(problem.robot.describe(), flush=True)
