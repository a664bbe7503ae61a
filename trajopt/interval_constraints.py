"""Constraints over an interval: rows that read a knot and a later point of the same interval.

An :class:`IntervalConstraint` imposes, on each interval ``[t_k, t_k + h]`` it
names and at each fraction ``s`` of its ``fractions`` (``0 < s <= 1``),

    lower_k <= c(x_k, u_k, x(t_k + s h), u(t_k + s h), p_k) <= upper_k

where ``x(t), u(t)`` is the trajectory the transcription assumes between the
knots (its interpolant, :meth:`trajopt.transcription.Transcription.interpolant`;
``s = 1`` is the next knot itself, ``x_{k+1}, u_{k+1}``). So one object says
"this holds at the end of the interval relative to its start" (a contact
point that does not slip from one knot to the next: ``c = p(y) - p(x)``) or
"this holds at ``m`` points inside the interval" (a swinging foot above the
ground between the knots: ``c = clearance(p(y))``, ``x`` unused). With
``midpoints=True`` it also holds at the transcription's own interior
collocation points (the Hermite-Simpson midpoint), read from the interval's
variables. Every row maps one-to-one onto IPOPT's ``g`` (never a penalty); its
rows sit with knot ``k``'s in the NLP (they couple knots ``k`` and ``k + 1``,
so solvers that need each stage's rows to read that stage alone, fatrop and
the SQP, refuse them).

Bounds and parameters are per interval: a scalar or (nc,) applies to all, a
(K, nc) array gives one row per interval in the order of ``intervals``, held
at every fraction of the interval; bounds may also be given per point, as a
(P nc,) or (K, P nc) array for the ``P = len(fractions)`` fractions (in
order, ``nc`` rows each).
"""
from __future__ import annotations

import inspect
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Sequence, Tuple

import casadi as ca
import numpy as np

from models.casadi_names import casadi_name

from .knot_function import knot_params, per_knot, resolve_knots


@dataclass(frozen=True)
class ResolvedIntervalConstraint:
    """An interval constraint with numeric data for a horizon of N knots (what the NLP consumes).

    ``function`` is ``c(x, u, y, w, p) -> (nc, 1)``; ``intervals`` (K,), ``lower``/``upper``
    (K, nc) or per fraction (K, len(fractions) nc), ``params`` (K, np), ``fractions`` the points of each interval.
    """

    name: str
    function: ca.Function
    intervals: np.ndarray
    fractions: Tuple[float, ...]
    lower: np.ndarray
    upper: np.ndarray
    params: np.ndarray
    midpoints: bool = False

    @property
    def size(self) -> int:
        """Rows per point, ``nc``."""
        return self.function.size1_out(0)

    def points(self, interior_points: int) -> int:
        """Points per interval: its fractions, plus ``interior_points`` collocation points with ``midpoints``."""
        return len(self.fractions) + (interior_points if self.midpoints else 0)

    @property
    def per_point(self) -> bool:
        """True when the bounds are given per fraction."""
        return self.lower.shape[1] != self.size

    def bounds(self, interior_points: int) -> Tuple[np.ndarray, np.ndarray]:
        """``(lower, upper)`` (K, points * nc): each interval's bounds at every point (the
        collocation points of ``midpoints`` take the hull of the fractions' bounds)."""
        extra = self.points(interior_points) - len(self.fractions)
        out = []
        for b, hull in ((self.lower, np.minimum), (self.upper, np.maximum)):
            B = b if self.per_point else np.tile(b, (1, len(self.fractions)))
            blocks = B.reshape(len(B), len(self.fractions), self.size)
            out.append(np.hstack([B] + [hull.reduce(blocks, axis=1)] * extra))
        return out[0], out[1]


class IntervalConstraint:
    """``lower <= fn(x_k, u_k, y, w, p) <= upper`` on ``intervals`` at ``fractions`` (module docstring).

    ``fn``: a callable of ``(x, u, y, w)`` or ``(x, u, y, w, p)`` (column vectors:
    the knot's state and control, the point's state and control, parameters)
    with a column-vector output. ``intervals``: ``"all"``, an index or an
    increasing sequence of interval starts (``0..N-2``). ``fractions``: the
    points ``0 < s <= 1`` of each interval (default the next knot).
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        intervals: Any = "all",
        fractions: Sequence[float] = (1.0,),
        lower: Any = 0.0,
        upper: Any = 0.0,
        params: Any = None,
        name: str = "interval constraint",
        midpoints: bool = False,
    ) -> None:
        if not callable(fn):
            raise ValueError(f"{name}: expected a callable of (x, u, y, w[, p]), got {type(fn).__name__}")
        arity = len([p for p in inspect.signature(fn).parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty])
        if arity not in (4, 5):
            raise ValueError(f"{name}: expected a function of (x, u, y, w) or (x, u, y, w, p), got {arity} arguments")
        s = np.asarray(fractions, dtype=float).reshape(-1)
        if s.size == 0 or not np.all((s > 0) & (s <= 1)) or np.any(np.diff(s) <= 0):
            raise ValueError(f"{name} fractions: expected increasing values in (0, 1], got {list(fractions)}")
        self.fn, self.arity, self.intervals, self.fractions = fn, arity, intervals, tuple(float(v) for v in s)
        self.lower, self.upper, self.raw_params, self.name, self.midpoints = lower, upper, params, name, bool(midpoints)
        self._functions: "weakref.WeakKeyDictionary[Any, Tuple[int, ca.Function]]" = weakref.WeakKeyDictionary()

    def function(self, model: Any) -> ca.Function:
        """``c(x, u, y, w, p)`` as a ``casadi.Function`` of the model's symbol type (built once per model and parameter size)."""
        np_ = 0 if self.raw_params is None else np.shape(self.raw_params)[-1]
        if np_ and self.arity == 4:
            raise ValueError(f"{self.name}: parameters of size {np_} were given but the function takes no p argument")
        cached = self._functions.get(model)
        if cached is None or cached[0] != np_:
            kind, nx, nu = model.symbol_type, model.state_dim, model.control_dim
            x, u, y, w, p = kind.sym("x", nx), kind.sym("u", nu), kind.sym("y", nx), kind.sym("w", nu), kind.sym("p", np_)
            out = self.fn(*[x, u, y, w, p][: self.arity])
            out = kind(np.asarray(out, dtype=float)) if not isinstance(out, (kind, ca.DM)) else out
            if out.shape[1] != 1 and out.shape[0] == 1:
                out = out.T
            if out.shape[1] != 1:
                raise ValueError(f"{self.name}: expected a column-vector output, got shape {out.shape}")
            fn = ca.Function(casadi_name(self.name), [x, u, y, w, p], [ca.densify(out)], ["x", "u", "y", "w", "p"], ["out"])
            cached = self._functions[model] = (np_, fn)
        return cached[1]

    def resolve(self, model: Any, N: int) -> ResolvedIntervalConstraint:
        """Validate the data against the model and horizon; raises ``ValueError`` naming the argument."""
        fn = self.function(model)
        intervals = resolve_knots(self.intervals, N - 1, f"{self.name} intervals")
        K, nc = len(intervals), fn.size1_out(0)
        points = nc * len(self.fractions)
        width = points if len(self.fractions) > 1 and (points,) in (np.shape(self.lower)[-1:], np.shape(self.upper)[-1:]) else nc
        lower = per_knot(self.lower, K, width, f"{self.name} lower")
        upper = per_knot(self.upper, K, width, f"{self.name} upper")
        if (lower > upper).any():
            raise ValueError(f"{self.name}: lower > upper on intervals {sorted(set(intervals[np.nonzero(lower > upper)[0]].tolist()))}")
        params = knot_params(self.raw_params, K, fn.size1_in(4), f"{self.name} params")
        return ResolvedIntervalConstraint(self.name, fn, intervals, self.fractions, lower, upper, params, self.midpoints)


def sampled_function(constraint: ResolvedIntervalConstraint, model: Any, transcription: Any) -> ca.Function:
    """The rows of ``constraint`` on one interval as ``(x, u, z, x_next, u_next, t, h, d, d_next, p) -> rows``.

    Fraction ``s < 1`` reads the transcription's interpolant at ``tau = s h``,
    ``s = 1`` the next knot, and with ``midpoints`` each interior collocation
    point's state and control in ``z``; rows are ordered by point, then row.
    """
    nz = transcription.interval_size(model)
    kind, nx, nu, nd = model.symbol_type, model.state_dim, model.control_dim, model.dynamics_param_dim
    x, u, z, x_next, u_next = kind.sym("x", nx), kind.sym("u", nu), kind.sym("z", nz), kind.sym("x_next", nx), kind.sym("u_next", nu)
    t, h, d, d_next, p = kind.sym("t"), kind.sym("h"), kind.sym("d", nd), kind.sym("d_next", nd), kind.sym("p", constraint.params.shape[1])
    fn = constraint.function
    rows = []
    interpolant = transcription.interpolant(model) if any(s < 1 for s in constraint.fractions) else None
    for s in constraint.fractions:
        if s == 1.0:
            y, w = x_next, u_next
        else:
            y, w = interpolant(x, u, z, x_next, u_next, t, h, s * h, d, d_next)
        rows.append(fn(x, u, y, w, p))
    if constraint.midpoints:
        for xs, us in transcription.interval_points(model):
            rows.append(fn(x, u, z[xs], z[us], p))
    out = ca.vertcat(*rows)
    if kind is ca.SX:  # the points share the interpolant's pieces that do not depend on tau (one copy each)
        out = ca.cse(out)
    names = ["x", "u", "z", "x_next", "u_next", "t", "h", "d", "d_next", "p"]
    return ca.Function(f"{fn.name()}_interval", [x, u, z, x_next, u_next, t, h, d, d_next, p], [out], names, ["rows"])
