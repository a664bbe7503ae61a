"""``trajopt sweep NAME``: a registered problem solved over a parameter grid on Dask workers (:mod:`trajopt.batch`, the ``batch`` extra)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Dict

import numpy as np

from ..transcription import TRANSCRIPTIONS
from .arguments import UsageError, add_robot_options, add_solver_options, command_line_hints, command_parser, convert, convert_parameter, robot_parameters, signature_text, solver_settings, split_parameter

SWEEP_EXAMPLES = """\
examples:
  trajopt sweep go1-trot --param step=0.05:0.30:6 --param apex=0.05,0.08,0.11 --out sweeps/trot --plot objective
  trajopt sweep quadrotor --param u_max=3:6:4 --param tf=4,5 --param N=21 --out sweeps/quad --warm-start none
  trajopt sweep go1-jump --param knots="15,10,15;12,8,12" --out sweeps/jump --scheduler tcp://scheduler-host:8786
"""


def add_sweep_parser(sub: Any) -> None:
    """The ``sweep`` subcommand's arguments."""
    run = command_parser(
        sub, "sweep", "solve a registered problem over a grid of parameters on Dask workers",
        "Solve a registered problem at every point of a parameter grid on Dask workers (an embedded cluster, or --scheduler), "
        "with a progress line and a summary; results in OUT/results.parquet and OUT/solutions/. A rerun with the same --out solves only "
        "the points not done yet. Needs the batch extra.",
        SWEEP_EXAMPLES,
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
    add_solver_options(group)
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
    from ..batch.points import range_values

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
    from ..batch import ProblemRef

    try:
        ref = ProblemRef.resolve(name)
    except ValueError as err:
        raise UsageError(str(err)) from None
    accepted, described = ref.parameters(), (name if ref.kind == "registry" else ref.factory())
    grid: Dict[str, list] = {}
    fixed: Dict[str, Any] = {}
    for item in args.param:
        key, text = split_parameter(item)
        if key not in accepted:
            raise UsageError(f"problem {name!r} takes no parameter {key!r}; its parameters: {signature_text(described)}")
        if key in grid or key in fixed:
            raise UsageError(f"parameter {key!r} is given twice")
        default = accepted[key].default
        numeric = default is None or (isinstance(default, (int, float)) and not isinstance(default, bool))
        if isinstance(default, (tuple, list)):
            values = [convert(part.strip(), default, key) for part in text.split(";")]
        elif numeric and ":" in text:
            values = _range_value(text, default, key)
        else:
            values = [convert_parameter(part.strip(), accepted[key], key) for part in text.split(",")]
        if len(values) == 1:
            fixed[key] = values[0]
        else:
            grid[key] = values
    fixed.update(robot_parameters(args, name, accepted, {**grid, **fixed}))
    if not grid:
        raise UsageError("--param: give at least one parameter with several values (A:B:N or V1,V2,...) to sweep over")
    return grid, fixed


def sweep_command(args: argparse.Namespace) -> int:
    """Parse the grid, run :func:`trajopt.batch.sweep` with a progress line, print the summary, plot; the exit code (module docstring)."""
    from ..extras import MissingExtraError, check_extra

    try:
        check_extra("batch", ("distributed", "pyarrow"), "trajopt sweep")
    except MissingExtraError as err:
        raise UsageError(str(err)) from None
    from ..batch import METRICS, sweep
    from ..batch.plot import plot_metric

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
    print(f"sweeping {args.name} over {points} points ({' x '.join(f'{k}: {len(v)}' for k, v in grid.items())})", flush=True)
    try:
        result = sweep(
            args.name, grid, client=args.scheduler, out=args.out, warm_start=None if args.warm_start == "none" else "nearest", retries=args.retries,
            params=fixed, settings=solver_settings(args, transcription=args.transcription), seeds=args.seeds, n_workers=args.workers, progress=sys.stderr,
        )
    except (ValueError, TypeError, RuntimeError, OSError) as err:
        raise UsageError(command_line_hints(str(err))) from None
    print(result.summary())
    if args.plot:
        path = Path(args.out) / f"{args.plot}.png"
        plot_metric(result.table(), args.plot, path, overwrite=True)
        print(f"wrote {path}")
    return 1 if result.errors else 0
