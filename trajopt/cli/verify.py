"""``trajopt verify FILE``: a saved legged solution checked and replayed in MuJoCo (:mod:`trajopt.mujoco`, the ``mujoco`` extra)."""
from __future__ import annotations

import argparse
from typing import Any

import numpy as np

import problems

from ..plotting.output import FIGURE_EXTENSIONS
from .arguments import UsageError, check_output_path, command_parser


def add_verify_parser(sub: Any) -> None:
    """The ``verify`` subcommand's arguments."""
    check = command_parser(
        sub, "verify", "check a saved legged solution in MuJoCo",
        "Check a saved legged solution with MuJoCo's dynamics (equation-of-motion residual, slip, friction, limits) "
        "and replay it in MuJoCo's simulation, tracked by joint PD + feed-forward and with the feed-forward torques alone; "
        "ends with a verdict line. Exit status 0 when every check is within its threshold (verdict: PASS), 1 when one is not "
        "(verdict: FAIL, naming it), 2 for a usage error. Friction is judged in the plan's own model (pyramid or cone); "
        "MuJoCo's cone is reported beside it. Needs the mujoco extra.",
    )
    check.add_argument("file", metavar="FILE", help="a solution saved by `trajopt solve NAME --save FILE`")
    check.add_argument("--kp", type=float, metavar="KP", help="joint stiffness of the tracked replay, N m/rad (default: the robot's)")
    check.add_argument("--kd", type=float, metavar="KD", help="joint damping of the tracked replay, N m s/rad (default: the robot's)")
    check.add_argument("--table", action="store_true", help="also print the checks and the drift at every knot")
    check.add_argument("--plot", metavar="FILE", help=f"write the plan against the replays ({', '.join(FIGURE_EXTENSIONS)})")
    check.add_argument("--overwrite", action="store_true", help="replace an existing --plot file")


def verify_command(args: argparse.Namespace) -> int:
    """Load, verify in MuJoCo, print the report ending with its verdict (and plot); 0 when the verdict is PASS, 1 when FAIL."""
    try:
        from ..mujoco.plot import plot_verification
        from ..mujoco.verify import verify
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
    if args.plot:
        plot_verification(report, args.plot, overwrite=args.overwrite)
        print(f"wrote {args.plot}")
    if args.table:
        print(report.table())
    print(report.summary())  # its last line is the verdict
    return 0 if report.ok else 1
