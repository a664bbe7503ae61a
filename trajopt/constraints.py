"""Constraints: a residual function of one knot plus its bounds, at chosen knots.

A :class:`Constraint` is ``lower_k <= c(x_k, u_k, p_k) <= upper_k`` for every knot
``k`` in ``knots``; it maps one-to-one onto IPOPT's ``g``, ``lbg``, ``ubg`` rows
(never a penalty). Equalities have ``lower == upper``. Bounds and parameters
may differ per knot: a scalar or (nc,) vector applies to every chosen knot, a
(K, nc) array gives one row per knot (K = number of knots), in the order of
``knots``.

Simple bounds on states and controls are not constraints here: they become
IPOPT variable bounds (see :meth:`trajopt.Problem.bound_states`).
"""
from __future__ import annotations

import inspect
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Tuple

import casadi as ca
import numpy as np

from models.casadi_names import casadi_name

from .knot_function import KnotFunctionLike, knot_function, knot_params, per_knot, resolve_knots
from .manifold import check_states


@dataclass(frozen=True)
class Placement:
    """Where a constraint's rows hold: at knots, or over intervals at fractions of each.

    At knots (:meth:`knots`): ``c(x_k, u_k, p_k)`` at each knot ``k`` of ``at``
    (``"all"``, an index or an increasing sequence; negative indices count from
    the end). Over intervals (:meth:`intervals`): ``c(x_k, u_k, y, w, p_k)`` on
    each interval that starts at a knot ``k`` of ``at`` (``0..N-2``), with ``y, w``
    the trajectory at each fraction ``0 < s <= 1`` of ``fractions``
    (:mod:`trajopt.interval_constraints`). ``midpoints``: also at the
    transcription's interior collocation points (between two constrained knots,
    or inside each constrained interval).
    """

    over_intervals: bool
    at: Any = "all"
    fractions: Tuple[float, ...] = ()
    midpoints: bool = False

    @classmethod
    def knots(cls, knots: Any = "all", midpoints: bool = False) -> "Placement":
        """At ``knots``."""
        return cls(False, knots, (), bool(midpoints))

    @classmethod
    def intervals(cls, intervals: Any = "all", fractions: Any = (1.0,), midpoints: bool = False) -> "Placement":
        """Over ``intervals`` at ``fractions`` of each (default the next knot)."""
        return cls(True, intervals, tuple(float(v) for v in np.asarray(fractions, dtype=float).reshape(-1)), bool(midpoints))

    @property
    def arguments(self) -> Tuple[str, ...]:
        """The arguments of the constraint's function."""
        return ("x", "u", "y", "w", "p") if self.over_intervals else ("x", "u", "p")

    def check(self, name: str) -> None:
        """``ValueError`` naming ``name`` unless the fractions of an interval placement are increasing in (0, 1]."""
        s = np.asarray(self.fractions, dtype=float)
        if self.over_intervals and (s.size == 0 or not np.all((s > 0) & (s <= 1)) or np.any(np.diff(s) <= 0)):
            raise ValueError(f"{name} fractions: expected increasing values in (0, 1], got {list(self.fractions)}")

    def stages(self, N: int, name: str) -> np.ndarray:
        """The knots (or interval starts) of a horizon of ``N`` knots, (K,)."""
        return resolve_knots(self.at, N - 1, f"{name} intervals") if self.over_intervals else resolve_knots(self.at, N, f"{name} knots")

    def bound_width(self, nc: int, lower: Any, upper: Any) -> int:
        """Bound columns per stage: ``nc``, or ``len(fractions) nc`` for bounds given per fraction."""
        points = nc * len(self.fractions)
        return points if len(self.fractions) > 1 and (points,) in (np.shape(lower)[-1:], np.shape(upper)[-1:]) else nc


@dataclass(frozen=True)
class ResolvedConstraint:
    """A constraint with numeric data for a horizon of N knots (what the NLP consumes).

    ``function`` is ``c(x, u, p) -> (nc, 1)`` at knots, ``c(x, u, y, w, p)`` over
    intervals (:attr:`Placement.arguments`); ``stages`` (K,) the knots or interval
    starts, ``lower``/``upper`` (K, nc) (over intervals also per fraction,
    (K, len(fractions) nc)) and ``params`` (K, np).
    """

    name: str
    function: ca.Function
    placement: Placement
    stages: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    params: np.ndarray

    @property
    def size(self) -> int:
        """Rows per knot or point, ``nc``."""
        return self.function.size1_out(0)

    @property
    def over_intervals(self) -> bool:
        """True when the rows hold over intervals (they read a knot and a later point)."""
        return self.placement.over_intervals

    @property
    def fractions(self) -> Tuple[float, ...]:
        """The points of each interval (none at knots)."""
        return self.placement.fractions

    @property
    def midpoints(self) -> bool:
        """Also at the transcription's interior collocation points."""
        return self.placement.midpoints

    @property
    def knots(self) -> np.ndarray:
        """The knots whose rows read that knot alone: the stages at knots, none over intervals."""
        return self.stages[:0] if self.over_intervals else self.stages

    def structure(self) -> tuple:
        """What an NLP built from this constraint depends on (its data may change, not this)."""
        return (self.over_intervals, self.stages.tolist(), self.size, self.params.shape, self.fractions, self.midpoints)

    def midpoint_data(self) -> tuple:
        """``(intervals (M,), lower (M, nc), upper (M, nc), params (M, np))`` at the collocation points:
        :meth:`between_knots_data` with ``midpoints`` at knots, else empty (over intervals the interior
        points are rows of the interval's own, :meth:`bounds`)."""
        if self.midpoints and not self.over_intervals:
            return self.between_knots_data()
        return self.stages[:0], self.lower[:0], self.upper[:0], self.params[:0]

    def between_knots_data(self) -> tuple:
        """``(intervals (M,), lower (M, nc), upper (M, nc), params (M, np))`` between consecutive knots.

        Interval ``k`` is included when ``k`` and ``k + 1`` are both constrained;
        its bounds are the hull of the two knots' bounds and its parameters
        their mean. Empty over intervals.
        """
        j = np.nonzero(np.diff(self.stages) == 1)[0] if not self.over_intervals else np.zeros(0, dtype=int)
        lower = np.minimum(self.lower[j], self.lower[j + 1])
        upper = np.maximum(self.upper[j], self.upper[j + 1])
        return self.stages[j], lower, upper, 0.5 * (self.params[j] + self.params[j + 1])

    def points(self, interior_points: int) -> int:
        """Points per stage: one at a knot; over an interval its fractions, plus ``interior_points``
        collocation points with ``midpoints``."""
        if not self.over_intervals:
            return 1
        return len(self.fractions) + (interior_points if self.midpoints else 0)

    @property
    def per_point(self) -> bool:
        """True when the bounds are given per fraction."""
        return self.lower.shape[1] != self.size

    def bounds(self, interior_points: int) -> Tuple[np.ndarray, np.ndarray]:
        """``(lower, upper)`` (K, points * nc): each stage's bounds at every point (over intervals, the
        collocation points of ``midpoints`` take the hull of the fractions' bounds)."""
        if not self.over_intervals:
            return self.lower, self.upper
        extra = self.points(interior_points) - len(self.fractions)
        out = []
        for b, hull in ((self.lower, np.minimum), (self.upper, np.maximum)):
            B = b if self.per_point else np.tile(b, (1, len(self.fractions)))
            blocks = B.reshape(len(B), len(self.fractions), self.size)
            out.append(np.hstack([B] + [hull.reduce(blocks, axis=1)] * extra))
        return out[0], out[1]


class Constraint:
    """A path or point constraint ``lower <= fn(x, u, p) <= upper`` imposed at ``knots``.

    Each constrained knot adds the rows of ``fn`` to the NLP's constraints
    with these bounds (an equality where ``lower == upper``), never a
    penalty. ``lower`` and ``upper`` are (k,) or (K, k) per knot; ``-inf``/``inf``
    leave a side open.

    ``fn``: a ``casadi.Function`` or callable of ``(x)``, ``(x, u)`` or
    ``(x, u, p)`` with a column-vector output. ``knots``: ``"all"``, an index or
    an increasing sequence (negative indices count from the end, -1 is the
    final knot). ``params``: (np,) or (K, np). ``midpoints``: also impose it
    at the transcription's collocation points inside each interval between
    two constrained knots (Hermite-Simpson midpoints; no effect for
    transcriptions without interior points), e.g. an inverse-dynamics residual
    whose acceleration is a control.

    ``placement`` (a :class:`Placement`) replaces ``knots`` and ``midpoints``:
    with :meth:`Placement.intervals`, ``fn`` is a callable of ``(x, u, y, w)`` or
    ``(x, u, y, w, p)`` held over intervals (:class:`~trajopt.IntervalConstraint`
    spells it so).
    """

    def __init__(
        self,
        fn: KnotFunctionLike,
        knots: Any = "all",
        lower: Any = 0.0,
        upper: Any = 0.0,
        params: Any = None,
        name: str = "constraint",
        midpoints: bool = False,
        placement: Placement | None = None,
    ) -> None:
        self.placement = Placement.knots(knots, midpoints) if placement is None else placement
        self.arity = _interval_arity(fn, name) if self.placement.over_intervals else None
        self.placement.check(name)
        self.fn, self.lower, self.upper, self.raw_params, self.name = fn, lower, upper, params, name
        self._functions: "weakref.WeakKeyDictionary[Any, Tuple[Any, int, ca.Function]]" = weakref.WeakKeyDictionary()

    @property
    def knots(self) -> Any:
        """The knots (or interval starts) as given."""
        return self.placement.at

    @property
    def midpoints(self) -> bool:
        """Also at the transcription's interior collocation points."""
        return self.placement.midpoints

    def function(self, model: Any) -> ca.Function:
        """The residual as ``c(x, u, p)`` at knots, ``c(x, u, y, w, p)`` over intervals (built once per
        model and parameter size: every solve resolves the constraints)."""
        np_ = 0 if self.raw_params is None else np.shape(self.raw_params)[-1]
        cached = self._functions.get(model)
        if cached is None or cached[0] is not self.fn or cached[1] != np_:
            if self.placement.over_intervals:
                fn = _interval_function(self.fn, self.arity, model, np_, self.name)
            else:
                fn = knot_function(self.fn, model.state_dim, model.control_dim, np_, self.name, kind=model.symbol_type)
            cached = self._functions[model] = (self.fn, np_, fn)
        return cached[2]

    def resolve(self, model: Any, N: int) -> ResolvedConstraint:
        """Validate the data against the model and horizon; raises ``ValueError`` naming the argument."""
        fn, placement = self.function(model), self.placement
        stages = placement.stages(N, self.name)
        K, nc = len(stages), fn.size1_out(0)
        width = placement.bound_width(nc, self.lower, self.upper)
        lower = per_knot(self.lower, K, width, f"{self.name} lower")
        upper = per_knot(self.upper, K, width, f"{self.name} upper")
        if (lower > upper).any():
            where = "on intervals" if placement.over_intervals else "at knots"
            raise ValueError(f"{self.name}: lower > upper {where} {sorted(set(stages[np.nonzero(lower > upper)[0]].tolist()))}")
        params = knot_params(self.raw_params, K, fn.size1_in(fn.n_in() - 1), f"{self.name} params")
        return ResolvedConstraint(self.name, fn, placement, stages, lower, upper, params)


def _interval_arity(fn: Any, name: str) -> int:
    """The number of arguments of an interval constraint's function, 4 ``(x, u, y, w)`` or 5 (and ``p``)."""
    if not callable(fn):
        raise ValueError(f"{name}: expected a callable of (x, u, y, w[, p]), got {type(fn).__name__}")
    arity = len([p for p in inspect.signature(fn).parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty])
    if arity not in (4, 5):
        raise ValueError(f"{name}: expected a function of (x, u, y, w) or (x, u, y, w, p), got {arity} arguments")
    return arity


def _interval_function(fn: Callable[..., Any], arity: int, model: Any, np_: int, name: str) -> ca.Function:
    """``c(x, u, y, w, p)`` of an interval constraint as a ``casadi.Function`` of the model's symbol type."""
    if np_ and arity == 4:
        raise ValueError(f"{name}: parameters of size {np_} were given but the function takes no p argument")
    kind, nx, nu = model.symbol_type, model.state_dim, model.control_dim
    x, u, y, w, p = kind.sym("x", nx), kind.sym("u", nu), kind.sym("y", nx), kind.sym("w", nu), kind.sym("p", np_)
    out = fn(*[x, u, y, w, p][:arity])
    out = kind(np.asarray(out, dtype=float)) if not isinstance(out, (kind, ca.DM)) else out
    if out.shape[1] != 1 and out.shape[0] == 1:
        out = out.T
    if out.shape[1] != 1:
        raise ValueError(f"{name}: expected a column-vector output, got shape {out.shape}")
    return ca.Function(casadi_name(name), [x, u, y, w, p], [ca.densify(out)], ["x", "u", "y", "w", "p"], ["out"])


class GoalConstraint(Constraint):
    """Reach ``x_goal`` at a knot (the final one by default): ``state_error(x_k, x_goal)[components] = 0``.

    The error is taken on the manifold (one equation per tangent direction, so
    a quaternion goal gives 3 rows, sign-invariant). ``components`` selects
    error-state entries (all by default) to leave others free.
    """

    def __init__(self, model: Any, x_goal: Any, components: Any = None, knot: int = -1, name: str = "goal") -> None:
        self.x_goal = check_states(model, x_goal, "x_goal")
        m = self.error_dim = model.error_dim
        self.components = np.arange(m) if components is None else np.asarray(components, dtype=int).reshape(-1)
        if self.components.size == 0 or self.components.min() < -m or self.components.max() >= m:
            raise ValueError(f"components: expected indices into the error state (size {m}), got {components!r}")
        comps = self.components.tolist()
        super().__init__(lambda x, u, p: model.state_error(x, p)[comps], knots=knot, params=self.x_goal, name=name)

    @property
    def full_state(self) -> bool:
        """True when every error-state component is constrained."""
        return set((self.components % self.error_dim).tolist()) == set(range(self.error_dim))
