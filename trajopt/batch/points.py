"""The points of a sweep: which problem, which parameters, and the hash that names each point.

- :class:`ProblemRef` names the problem factory as the workers find it: a
  registry name (``"go1-trot"``, :mod:`problems`) or an importable factory
  ``"package.module:function"`` (a function object is turned into that form,
  so it must be importable by name on the workers: not a lambda, a nested
  function or a function of ``__main__``).
- :func:`expand_grid` turns a grid into points: a mapping ``{key: values}``
  (the product of the value lists, in key order) or a sequence of mappings
  (explicit points, e.g. Monte Carlo samples), each merged with the fixed
  parameters.
- :func:`canonical_params` types every value like the factory's default (an
  integral float for an ``int`` parameter becomes an ``int``, an ``int`` for a
  ``float`` parameter a ``float``), turns numpy scalars and tuples into Python
  floats and lists, and rounds floats to 12 significant digits, so that
  ``numpy.linspace(0.05, 0.3, 6)[1]`` and ``0.1`` are the same point.
- :func:`point_key` is the first 16 hex digits of the sha256 of the problem's
  name and the canonical JSON of all its parameters (sorted keys): the file
  name of the point's solution and the key of its table row, which make a
  rerun skip the points already done.
"""
from __future__ import annotations

import hashlib
import importlib
import inspect
import itertools
import json
import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Sequence, Union

import numpy as np

import problems
from problems.registry import check_arguments, check_parameters

#: Significant digits kept of every float parameter.
FLOAT_DIGITS = 12
#: Hex digits of a point's key.
KEY_DIGITS = 16

#: A parameter grid: a mapping of parameter names to their values (the sweep takes their product),
#: or a sequence of points, each a mapping of parameter names to values.
Grid = Union[Mapping[str, Sequence[Any]], Sequence[Mapping[str, Any]]]


@dataclass(frozen=True)
class ProblemRef:
    """A problem factory by name: ``kind`` is ``"registry"`` or ``"factory"`` (``"module:function"``)."""

    name: str
    kind: str

    @classmethod
    def resolve(cls, problem: Union[str, Callable[..., Any]]) -> "ProblemRef":
        """The reference to ``problem``: a registry name, ``"module:function"``, or an importable function."""
        if callable(problem) and not isinstance(problem, str):
            module, qualname = getattr(problem, "__module__", None), getattr(problem, "__qualname__", "")
            if not module or module == "__main__" or "<" in qualname:
                raise ValueError(f"problem: the workers import the factory by name; {problem!r} is not importable (define it in a module, or pass a registry name)")
            ref = cls(f"{module}:{qualname}", "factory")
            if ref.factory() is not problem:
                raise ValueError(f"problem: {ref.name!r} does not import as the function given")
            return ref
        if not isinstance(problem, str):
            raise TypeError(f"problem: expected a registry name, 'module:function' or a function, got {type(problem).__name__} {problem!r}")
        if ":" in problem:
            ref = cls(problem, "factory")
            ref.factory()
            return ref
        problems.factory(problem)  # ValueError naming the known problems
        return cls(problem, "registry")

    def factory(self) -> Callable[..., Any]:
        """The factory function (imports its module)."""
        if self.kind == "registry":
            return problems.factory(self.name)
        module, _, qualname = self.name.partition(":")
        try:
            target: Any = importlib.import_module(module)
            for part in qualname.split("."):
                target = getattr(target, part)
        except (ImportError, AttributeError) as err:
            raise ValueError(f"problem: cannot import the factory {self.name!r} ({err})") from None
        if not callable(target):
            raise ValueError(f"problem: {self.name!r} is not a function")
        return target

    def build(self, params: Mapping[str, Any]) -> Any:
        """The problem with ``params``; registry problems record their recipe (:func:`problems.get`)."""
        if self.kind == "registry":
            return problems.get(self.name, **params)
        return self.factory()(**params)

    def parameters(self) -> Dict[str, inspect.Parameter]:
        """The keyword parameters the problem takes by name: a registered problem's (:func:`problems.parameters`,
        with the legged problems' timing options), or the factory's."""
        if self.kind == "registry":
            return problems.parameters(self.name)
        kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        return {p.name: p for p in inspect.signature(self.factory()).parameters.values() if p.kind in kinds}

    def defaults(self) -> Dict[str, Any]:
        """The keyword parameters and their defaults (``inspect.Parameter.empty`` when none)."""
        return {name: p.default for name, p in self.parameters().items()}


def _canonical(value: Any, default: Any, key: str) -> Any:
    """``value`` as a JSON value typed like ``default`` (module docstring)."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    elif isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (list, tuple)):
        inner = default[0] if isinstance(default, (list, tuple)) and default else None
        return [_canonical(v, inner, key) for v in value]
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{key}: expected a finite number, got {value!r}")
        if isinstance(default, int) and not isinstance(default, bool) and value.is_integer():
            return int(value)
        return float(f"{value:.{FLOAT_DIGITS}g}")
    if isinstance(value, int) and not isinstance(value, bool) and isinstance(default, float):
        return float(value)
    if value is None or isinstance(value, (bool, int, str)):
        return value
    raise TypeError(f"{key}: expected a number, string, bool, None or a list of them, got {type(value).__name__} {value!r}")


def canonical_params(ref: ProblemRef, params: Mapping[str, Any]) -> Dict[str, Any]:
    """``params`` in canonical form (module docstring), checked against the factory's signature."""
    defaults = ref.defaults()
    out = {}
    for key, value in params.items():
        if not isinstance(key, str):
            raise TypeError(f"grid: parameter names are strings, got {key!r}")
        default = defaults.get(key)
        out[key] = _canonical(value, None if default is inspect.Parameter.empty else default, key)
    if ref.kind == "registry":
        check_parameters(ref.name, out)
    else:
        check_arguments(ref.factory(), out, ref.name)
    return out


def _values(key: str, values: Any) -> List[Any]:
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray, range)) or len(values) == 0:
        raise ValueError(f"grid: {key!r} needs a non-empty list of values, got {values!r} (fixed values go to params=)")
    return list(values)


def expand_grid(grid: Grid, fixed: Mapping[str, Any] | None = None) -> tuple[List[Dict[str, Any]], List[str]]:
    """``(points, keys)``: every point's parameters (fixed ones included) and the grid's own keys, in order."""
    fixed = dict(fixed or {})
    if isinstance(grid, Mapping):
        keys = list(grid)
        columns = [_values(k, grid[k]) for k in keys]
        points = [dict(zip(keys, combo)) for combo in itertools.product(*columns)]
    elif isinstance(grid, Sequence) and not isinstance(grid, (str, bytes)) and len(grid) and all(isinstance(p, Mapping) for p in grid):
        points = [dict(p) for p in grid]
        keys = list(dict.fromkeys(k for p in points for k in p))
    else:
        raise TypeError(f"grid: expected a mapping of parameter lists or a non-empty list of parameter mappings, got {type(grid).__name__}")
    clash = sorted(set(keys) & set(fixed))
    if clash:
        raise ValueError(f"grid: {clash} are both swept and fixed (params=)")
    return [{**fixed, **p} for p in points], keys


def point_key(ref: ProblemRef, params: Mapping[str, Any]) -> str:
    """The hash naming a point (module docstring); ``params`` in canonical form."""
    text = json.dumps({"problem": ref.name, "params": params}, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()[:KEY_DIGITS]


def range_values(start: float, stop: float, count: int) -> List[float]:
    """``count`` evenly spaced values from ``start`` to ``stop``, both included (``numpy.linspace``)."""
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
        raise ValueError(f"count: expected an int >= 1, got {count!r}")
    if count == 1 and start != stop:
        raise ValueError(f"count: 1 value cannot span {start}..{stop}")
    return [float(v) for v in np.linspace(start, stop, int(count))]
