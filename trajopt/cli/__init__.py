"""Command-line interface: ``trajopt list``, ``trajopt solve NAME [options]``, ``trajopt view FILE``, ``trajopt verify FILE``, ``trajopt sweep NAME``, ``trajopt mpc NAME``.

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
at once. An output file the writer cannot make for the problem (``--animate``
of a model that is neither a rigid body nor legged; ``--html`` of a model the
3D viewer cannot draw, or without the ``viz`` extra) is skipped with one
warning line on stderr before solving; the other outputs are still written
and the exit code stays the solve's (0 or 1). ``--view``, a live session
rather than a file, is a usage error (2) where the viewer cannot show the model. Output files are written
to temporary files renamed when complete, so an interrupt leaves none half
written. ``--animate`` prints a progress line while it writes the frames (20
frames per second for a GIF, 30 for an MP4, ``--fps`` to change). ``trajopt list --robots`` lists the
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
in the file, :func:`problems.load_solution`) and ends with a verdict line
(:mod:`trajopt.mujoco.verdict`): exit code 0 for ``verdict: PASS`` (every
check within its threshold: equation-of-motion residual, stance slip,
penetration, friction in the plan's own pyramid or cone, unilateral and
swing-foot forces, torque and joint limits, and the tracked replay standing),
1 for ``verdict: FAIL`` (the line names each failed check, its worst value
and its threshold), 2 for a usage error (including a missing ``mujoco``
extra). MuJoCo's own friction cone is reported beside the plan's, not judged.

``trajopt mpc NAME`` runs the problem in a receding horizon closed around a
simulated plant (:mod:`.mpc`): exit code 0 without a fall, 3 when the robot
fell, 2 for a usage error.

One module per subcommand (:mod:`.listing`, :mod:`.solve`, :mod:`.view`,
:mod:`.verify`, :mod:`.sweep`, :mod:`.mpc`) and the arguments they share
(:mod:`.arguments`). This package is the top of the import chain: nothing in
:mod:`trajopt` imports it.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

import matplotlib

from .. import __version__
from .arguments import INTERRUPTED, UsageError
from .listing import add_list_parser, list_command
from .mpc import add_mpc_parser, mpc_command
from .solve import add_solve_parser, solve_command
from .sweep import add_sweep_parser, parse_grid, sweep_command
from .verify import add_verify_parser, verify_command
from .view import add_view_parser, view_command

__all__ = ["INTERRUPTED", "build_parser", "main", "parse_grid"]

def build_parser() -> argparse.ArgumentParser:
    """The ``trajopt`` argument parser with its ``list``, ``solve``, ``view``, ``verify``, ``sweep`` and ``mpc`` subcommands."""
    parser = argparse.ArgumentParser(prog="trajopt", description="Trajectory optimization for robots (CasADi + IPOPT + pinocchio).")
    parser.add_argument("--version", action="version", version=f"trajopt {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    add_list_parser(sub)
    add_solve_parser(sub)
    add_view_parser(sub)
    add_verify_parser(sub)
    add_sweep_parser(sub)
    add_mpc_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``trajopt`` with ``argv`` (default ``sys.argv[1:]``); return the exit code.

    argparse's own errors (unknown options, missing NAME) exit with code 2 through ``SystemExit``.
    A closed output pipe (``trajopt list | head``) ends the command quietly with code 1.
    """
    matplotlib.use("Agg")  # files only, never a window
    parser = build_parser()
    args = parser.parse_args(argv)
    commands = {"list": list_command, "solve": solve_command, "view": view_command, "verify": verify_command, "sweep": sweep_command, "mpc": mpc_command}
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
