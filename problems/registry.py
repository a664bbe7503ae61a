"""Registry of named problems: ``names()``, ``get(name, **params)``, ``register``, ``load_solution``.

Every legged problem (a factory annotated to return a problem class with a
``set_timing`` method: :class:`trajopt.legged.LeggedProblem`,
:class:`trajopt.legged.KinodynamicProblem`) also takes the timing options
:data:`TIMING_OPTIONS` (``timing="free"``; ``-p timing=free`` on the command
line) beside its factory's parameters (:func:`parameters`): :func:`get` passes
them to :meth:`~trajopt.legged.LeggedProblem.set_timing`.

A problem built by :func:`get` carries its recipe (``problem.recipe``: the name
and the parameters, as JSON values), which a saved :class:`trajopt.Solution`
keeps; :func:`load_solution` reads such a file and rebuilds its problem, so a
file alone can be evaluated, plotted, replayed or used as a warm start.
"""
from __future__ import annotations

import difflib
import inspect
import json
import os
import typing
from typing import Any, Callable, Dict

import numpy as np

from trajopt.legged.timing import MIN_STANCE, MIN_SWING
from trajopt.solution import Solution

_FACTORIES: Dict[str, Callable[..., Any]] = {}
#: Parameters every legged problem takes, with their defaults (:meth:`trajopt.legged.LeggedProblem.set_timing`).
TIMING_OPTIONS: Dict[str, Any] = {"timing": "fixed", "min_stance": MIN_STANCE, "min_swing": MIN_SWING}


def register(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator registering a problem factory under ``name``."""

    def deco(factory: Callable[..., Any]) -> Callable[..., Any]:
        if name in _FACTORIES:
            raise ValueError(f"problem {name!r} is already registered")
        _FACTORIES[name] = factory
        return factory

    return deco


def names() -> list[str]:
    """Sorted names of all registered problems."""
    return sorted(_FACTORIES)


def factory(name: str) -> Callable[..., Any]:
    """The registered factory of problem ``name`` (its signature lists the parameters)."""
    if not isinstance(name, str) or name not in _FACTORIES:
        close = difflib.get_close_matches(name, names(), n=3) if isinstance(name, str) else []
        hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
        raise ValueError(f"name: unknown problem {name!r}{hint}; known problems: {', '.join(names()) or '(none)'}")
    return _FACTORIES[name]


def parameters(name: str) -> Dict[str, inspect.Parameter]:
    """The keyword parameters problem ``name`` takes by name: its factory's, then for a legged problem the
    timing options (:data:`TIMING_OPTIONS`) its factory does not list."""
    fn = factory(name)
    accepted = {p.name: p for p in inspect.signature(fn).parameters.values() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    returns = typing.get_type_hints(fn).get("return")
    if isinstance(returns, type) and hasattr(returns, "set_timing"):
        for key, default in TIMING_OPTIONS.items():
            accepted.setdefault(key, inspect.Parameter(key, inspect.Parameter.KEYWORD_ONLY, default=default))
    return accepted


def check_parameters(name: str, params: Dict[str, Any]) -> None:
    """``TypeError`` naming a parameter that problem ``name`` does not take (:func:`parameters`), or whose
    value is not of its default's kind (a number for a number, a string for a string, a bool for a bool,
    a sequence for a sequence; defaults of ``None`` accept anything, ``Optional`` parameters ``None``)."""
    _check_kinds(parameters(name), params, name)


def check_arguments(fn: Callable[..., Any], params: Dict[str, Any], name: str) -> None:
    """:func:`check_parameters` for any problem factory ``fn`` (called ``name`` in the messages)."""
    _check_kinds({p.name: p for p in inspect.signature(fn).parameters.values() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}, params, name)


def accepts_none(parameter: inspect.Parameter) -> bool:
    """Whether a factory's ``parameter`` takes ``None`` (its annotation is ``Optional[...]`` or names ``None``), whatever its default."""
    annotation = parameter.annotation
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return "Optional[" in text or "None" in text


def _check_kinds(accepted: Dict[str, inspect.Parameter], params: Dict[str, Any], name: str) -> None:
    """``TypeError`` for a parameter not in ``accepted`` or of another kind than its default (``None`` is of every
    kind for a parameter that :func:`accepts_none`)."""
    for key, value in params.items():
        if key not in accepted:
            signature = ", ".join(f"{p.name}={p.default!r}" for p in accepted.values())
            raise TypeError(f"{key}: problem {name!r} takes no parameter {key!r}; its parameters: {signature}")
        default = accepted[key].default
        if default is inspect.Parameter.empty or default is None or (value is None and accepts_none(accepted[key])):
            continue
        if isinstance(default, bool):
            ok = isinstance(value, (bool, np.bool_))
        elif isinstance(default, (int, float)):
            ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)) and (isinstance(default, float) or float(value).is_integer())
        elif isinstance(default, str):
            ok = isinstance(value, str)
        elif isinstance(default, (tuple, list)):
            ok = isinstance(value, (tuple, list, np.ndarray))
        else:
            ok = True
        if not ok:
            raise TypeError(f"{key}: problem {name!r} expects a value like the default {default!r}, got {type(value).__name__} {value!r}")


def get(name: str, **params: Any) -> Any:
    """Build the problem ``name`` with keyword parameters overriding its defaults.

    The problem's ``recipe`` records ``name`` and ``params`` when the parameters
    are JSON values (numbers, strings, booleans, None and lists of them; tuples
    are recorded as lists), else it stays ``None``.
    """
    check_parameters(name, params)
    own = inspect.signature(factory(name)).parameters
    timing = {key: value for key, value in params.items() if key in TIMING_OPTIONS and key not in own}
    problem = factory(name)(**{key: value for key, value in params.items() if key not in timing})
    if timing:
        problem.set_timing(**{**TIMING_OPTIONS, **timing})
    try:
        problem.recipe = {"name": name, "params": json.loads(json.dumps(params, allow_nan=False))}
    except (TypeError, ValueError):  # a parameter that is not a JSON value: the problem cannot be rebuilt from a file
        problem.recipe = None
    return problem


def rebuild(solution: Solution) -> Any:
    """The problem ``solution`` was solved on, built again from its saved recipe.

    Raises ``ValueError`` when the solution has no recipe (its problem was not
    built by :func:`get`), names a problem that is not registered, or the
    rebuilt problem's sizes differ from the solution's.
    """
    recipe = solution.problem_recipe
    if not recipe:
        raise ValueError(f"solution: {solution.problem_name or 'this solution'!r} records no registry recipe; build its problem yourself and pass it to Solution.load(path, problem=...)")
    problem = get(recipe["name"], **recipe["params"])
    solution.attach(problem)
    return problem


def load_solution(path: str | os.PathLike) -> Solution:
    """Read a solution file and attach its problem, rebuilt from the recipe saved in it (:func:`rebuild`)."""
    solution = Solution.load(path)
    rebuild(solution)
    return solution
