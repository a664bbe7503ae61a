"""Command-line arguments shared by the subcommands: usage errors, factory parameters typed like
their defaults (``--N``, ``--tf``, ``--param KEY=VALUE``), the quadruped options (``--robot``,
``--urdf``, ``--feet``) and output paths."""
from __future__ import annotations

import argparse
import ast
import inspect
import re
import sys
from pathlib import Path
from typing import Any, Callable, Container, Dict, Optional, Sequence, Tuple

import problems

from models.quadruped import LEG_ROLES

from ..atomic_file import prepare_output_path
from ..solvers.derivatives import HESSIANS
from ..solvers.registry import SOLVERS
from ..solvers.settings import SolverSettings

_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


#: Exit status after Ctrl-C (128 + SIGINT, as shells report it).
INTERRUPTED = 130


class UsageError(Exception):
    """A mistake on the command line: one line on stderr, exit code 2."""


def problem_factory(name: str) -> Callable[..., Any]:
    """The registered factory of problem ``name``."""
    if name not in problems.names():
        raise UsageError(f"unknown problem {name!r}; known problems: {', '.join(problems.names())}")
    return problems.factory(name)


def factory_parameters(factory: Callable[..., Any]) -> Dict[str, inspect.Parameter]:
    """A factory's keyword parameters by name."""
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return {p.name: p for p in inspect.signature(factory).parameters.values() if p.kind in kinds}


def signature_text(factory: Callable[..., Any] | str) -> str:
    """``key=default, ...`` of a factory's keyword parameters, or of a registered problem's
    (:func:`problems.parameters`: with the legged problems' timing options), or ``(none)``."""
    params = (problems.parameters(factory) if isinstance(factory, str) else factory_parameters(factory)).values()
    return ", ".join(p.name if p.default is inspect.Parameter.empty else f"{p.name}={p.default!r}" for p in params) or "(none)"


def description(factory: Callable[..., Any]) -> str:
    """A factory's summary: the first paragraph of its docstring on one line, reST markup removed
    (````x```` and ``:func:`x``` become ``x``; ``:class:`~a.B``` becomes ``B``). By the registry's
    convention that paragraph is one sentence (checked for every registered problem by the tests)."""
    paragraph = (inspect.getdoc(factory) or "").split("\n\n", 1)[0]
    text = " ".join(paragraph.split())
    text = re.sub(r":\w+:`~(?:[\w.]*\.)?(\w+)`", r"\1", text)  # :class:`~a.B` -> B
    text = re.sub(r":\w+:`([^`]*)`", r"\1", text)  # :func:`a.f` -> a.f
    return text.replace("``", "")


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


def convert_parameter(text: str, parameter: inspect.Parameter, key: str) -> Any:
    """:func:`convert` for a factory's ``parameter``: ``none`` (any case) gives ``None`` to one that
    :func:`problems.accepts_none`, whatever its default."""
    return None if text.lower() == "none" and problems.accepts_none(parameter) else convert(text, parameter.default, key)


def split_parameter(item: str) -> tuple[str, str]:
    """``(key, text)`` of a ``--param KEY=VALUE``."""
    key, sep, text = item.partition("=")
    if not sep or not key.strip():
        raise UsageError(f"--param: expected KEY=VALUE, got {item!r}")
    return key.strip(), text.strip()


def parse_parameters(name: str, args: argparse.Namespace) -> Dict[str, Any]:
    """Factory keyword arguments from ``--N``, ``--tf`` and ``--param``, checked against the problem's parameters
    (:func:`problems.parameters`: its factory's, and a legged problem's timing options); ``KEY=none`` gives ``None``
    to a parameter that :func:`problems.accepts_none`."""
    problem_factory(name)  # a usage error for an unknown problem
    accepted = problems.parameters(name)
    pairs = [(key, getattr(args, key)) for key in ("N", "tf") if getattr(args, key) is not None]
    pairs += [split_parameter(item) for item in args.param]
    params: Dict[str, Any] = {}
    for key, text in pairs:
        if key not in accepted:
            option = f"--{key}" if key in ("N", "tf") else f"parameter {key!r}"
            raise UsageError(f"problem {name!r} takes no {option}; its parameters: {signature_text(name)}")
        if key in params:
            raise UsageError(f"parameter {key!r} is given twice")
        params[key] = convert_parameter(text, accepted[key], key)
    params.update(robot_parameters(args, name, accepted, params))
    return params


def build_problem(name: str, params: Dict[str, Any]) -> Any:
    """``problems.get(name, **params)``, a factory's ``ValueError`` or ``TypeError`` (a bad parameter value) turned into a usage error."""
    try:
        return problems.get(name, **params)
    except (ValueError, TypeError) as err:
        raise UsageError(f"problem {name!r}: {err}") from None


def robot_templates(parameter: str = "robot") -> list[str]:
    """The registered problems whose factory takes ``parameter``: ``"robot"`` (a quadruped's or a humanoid's
    name, ``--robot``), ``"urdf"`` or ``"feet"`` (the quadruped templates)."""
    return [name for name in problems.names() if parameter in factory_parameters(problems.factory(name))]


def add_robot_options(group: argparse._ArgumentGroup) -> None:
    """``--robot``, ``--urdf`` and ``--feet`` (the quadruped gait templates' robot, the humanoid problems' humanoid)."""
    humanoids = [name for name in robot_templates() if name not in robot_templates("urdf")]
    group.add_argument(
        "--robot",
        metavar="NAME",
        help=f"robot from example-robot-data: a quadruped for {', '.join(robot_templates('urdf'))} (see `trajopt list --robots`; default go1), "
        f"a humanoid (g1, the default, or talos) for {', '.join(humanoids)}",
    )
    group.add_argument("--urdf", metavar="PATH", help="quadruped from a URDF file instead of --robot")
    group.add_argument("--feet", metavar="A,B,C,D", help="its four foot frames, any order (default: found in the URDF)")


def robot_parameters(args: argparse.Namespace, name: str, accepted: Container[str], given: Container[str]) -> Dict[str, Any]:
    """The factory parameters ``robot``, ``urdf`` (made absolute, so that a saved solution's recipe
    finds it from anywhere) and ``feet`` (a list) given as options; a usage error for one that the
    factory of problem ``name`` does not take (not in ``accepted``) or that is already ``given``."""
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
    for key in params:
        if key not in accepted:
            raise UsageError(f"problem {name!r} takes no --{key}; these problems do: {', '.join(robot_templates(key))}")
        if key in given:
            raise UsageError(f"parameter {key!r} is given twice")
    return params


#: Hints in the library's error messages, and what to type instead on the command line.
COMMAND_LINE_HINTS = {
    "(chart=True)": "(--chart)",
    "hessian='exact'": "--hessian exact",
    "use a '_knot_cost' multiple shooting": "use a '_knot_cost' multiple shooting (-t multiple_shooting_knot_cost)",
    "use multiple shooting": "use multiple shooting (-t multiple_shooting)",
    "(warm_start, e.g. an IPOPT solution)": "(--warm-start FILE, e.g. an IPOPT solution saved with --save)",
    "solver='ipopt' or 'fatrop'": "--solver ipopt or fatrop",
}


def command_line_hints(message: str) -> str:
    """``message`` of a ``ValueError`` from :func:`trajopt.solve` with its Python hints as options (:data:`COMMAND_LINE_HINTS`)."""
    for python, option in COMMAND_LINE_HINTS.items():
        message = message.replace(python, option)
    return message


def command_parser(sub: Any, name: str, help: str, description: str, examples: Optional[str] = None) -> argparse.ArgumentParser:
    """The parser of subcommand ``name`` with its one-line ``help``, its ``description`` and its
    ``examples`` (printed as written, after the options)."""
    layout = {"epilog": examples, "formatter_class": argparse.RawDescriptionHelpFormatter} if examples else {}
    return sub.add_parser(name, help=help, description=description, **layout)


def add_problem_arguments(run: argparse.ArgumentParser, name_help: str, sizes_help: Tuple[str, str]) -> argparse._ArgumentGroup:
    """The problem ``NAME`` and the "problem" group with ``--N`` and ``--tf`` (``sizes_help``: which problems
    take each); returns the group for the command's other problem options."""
    run.add_argument("name", metavar="NAME", help=name_help)
    group = run.add_argument_group("problem")
    group.add_argument("--N", metavar="N", help=f"number of knots ({sizes_help[0]})")
    group.add_argument("--tf", metavar="TF", help=f"final time [s] ({sizes_help[1]})")
    return group


def add_solver_options(group: argparse._ArgumentGroup) -> None:
    """The solver flags of ``solve``, ``sweep`` and ``mpc``, declared once: ``--solver``, ``--max-iter``,
    ``--compile``, ``--chart`` and ``--hessian`` (each defaults to the problem's choice; :func:`solver_settings`)."""
    group.add_argument("--solver", choices=tuple(SOLVERS), default=None, help="solver backend (default: the problem's, else ipopt; fatrop, sqp and rti need multiple shooting)")
    group.add_argument("--max-iter", type=int, default=None, metavar="K", help="iteration limit (default: the backend's)")
    group.add_argument("--compile", action="store_true", default=None, help="evaluate the stage functions as compiled C (gcc once, cached on disk; default: the problem's choice)")
    group.add_argument("--chart", action="store_true", default=None, help="tangent-chart knots for states with rotations (fatrop and sqp need them; default: the problem's)")
    group.add_argument(
        "--hessian", choices=HESSIANS, default=None,
        help="Hessian of the Lagrangian (gauss-newton needs least-squares costs at the knots, -t multiple_shooting_knot_cost; default: the problem's, else exact)",
    )  # fmt: skip


def solver_settings(args: argparse.Namespace, **more: Any) -> SolverSettings:
    """The :class:`~trajopt.SolverSettings` of the flags :func:`add_solver_options` declared (and ``more`` fields);
    a usage error naming the flag for a bad value."""
    given = {"solver": args.solver, "max_iter": args.max_iter, "compile": args.compile, "chart": args.chart, "hessian": args.hessian, **more}
    try:
        return SolverSettings(**{key: value for key, value in given.items() if value is not None})
    except ValueError as err:
        field, _, reason = str(err).partition(": ")
        raise UsageError(f"--{field.replace('_', '-')}: {reason}") from None


def warn_skipped(command: str, option: str, reason: str) -> None:
    """One warning line on stderr: output ``option`` of ``trajopt command`` is skipped for ``reason``."""
    print(f"trajopt {command}: warning: {option} skipped: {reason}", file=sys.stderr, flush=True)


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
