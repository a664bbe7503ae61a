"""Registry of named problems: ``names()``, ``get(name, **params)``, ``register``, ``load_solution``.

A problem built by :func:`get` carries its recipe (``problem.recipe``: the name
and the parameters, as JSON values), which a saved :class:`trajopt.Solution`
keeps; :func:`load_solution` reads such a file and rebuilds its problem, so a
file alone can be evaluated, plotted, replayed or used as a warm start.
"""
from __future__ import annotations

import json
import os
from typing import Any, Callable, Dict

from trajopt.solution import Solution

_FACTORIES: Dict[str, Callable[..., Any]] = {}


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
    if name not in _FACTORIES:
        raise ValueError(f"unknown problem {name!r}; known problems: {', '.join(names()) or '(none)'}")
    return _FACTORIES[name]


def get(name: str, **params: Any) -> Any:
    """Build the problem ``name`` with keyword parameters overriding its defaults.

    The problem's ``recipe`` records ``name`` and ``params`` when the parameters
    are JSON values (numbers, strings, booleans, None and lists of them; tuples
    are recorded as lists), else it stays ``None``.
    """
    problem = factory(name)(**params)
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
