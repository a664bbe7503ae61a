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

import weakref
from dataclasses import dataclass
from typing import Any, Tuple

import casadi as ca
import numpy as np

from .knot_function import KnotFunctionLike, knot_function, knot_params, per_knot, resolve_knots
from .manifold import check_states


@dataclass(frozen=True)
class ResolvedConstraint:
    """A constraint with numeric data for a horizon of N knots (what the NLP consumes).

    ``function`` is ``c(x, u, p) -> (nc, 1)``; ``knots`` (K,), ``lower``/``upper``
    (K, nc) and ``params`` (K, np).
    """

    name: str
    function: ca.Function
    knots: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    params: np.ndarray
    midpoints: bool = False

    @property
    def size(self) -> int:
        """Rows per knot, ``nc``."""
        return self.function.size1_out(0)

    def midpoint_data(self) -> tuple:
        """``(intervals (M,), lower (M, nc), upper (M, nc), params (M, np))`` between consecutive knots.

        Interval ``k`` is included when ``k`` and ``k + 1`` are both constrained;
        its bounds are the hull of the two knots' bounds and its parameters
        their mean. Empty unless ``midpoints``.
        """
        j = np.nonzero(np.diff(self.knots) == 1)[0] if self.midpoints else np.zeros(0, dtype=int)
        lower = np.minimum(self.lower[j], self.lower[j + 1])
        upper = np.maximum(self.upper[j], self.upper[j + 1])
        return self.knots[j], lower, upper, 0.5 * (self.params[j] + self.params[j + 1])


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
    ) -> None:
        self.fn, self.knots, self.lower, self.upper, self.raw_params, self.name = fn, knots, lower, upper, params, name
        self.midpoints = bool(midpoints)
        self._functions: "weakref.WeakKeyDictionary[Any, Tuple[Any, int, ca.Function]]" = weakref.WeakKeyDictionary()

    def function(self, model: Any) -> ca.Function:
        """The residual as ``c(x, u, p)`` (built once per model and parameter size: every solve resolves the constraints)."""
        np_ = 0 if self.raw_params is None else np.shape(self.raw_params)[-1]
        cached = self._functions.get(model)
        if cached is None or cached[0] is not self.fn or cached[1] != np_:
            cached = self._functions[model] = (self.fn, np_, knot_function(self.fn, model.state_dim, model.control_dim, np_, self.name, kind=model.symbol_type))
        return cached[2]

    def resolve(self, model: Any, N: int) -> ResolvedConstraint:
        """Validate the data against the model and horizon; raises ``ValueError`` naming the argument."""
        fn = self.function(model)
        knots = resolve_knots(self.knots, N, f"{self.name} knots")
        K, nc = len(knots), fn.size1_out(0)
        lower = per_knot(self.lower, K, nc, f"{self.name} lower")
        upper = per_knot(self.upper, K, nc, f"{self.name} upper")
        if (lower > upper).any():
            raise ValueError(f"{self.name}: lower > upper at knots {sorted(set(knots[np.nonzero(lower > upper)[0]].tolist()))}")
        params = knot_params(self.raw_params, K, fn.size1_in(2), f"{self.name} params")
        return ResolvedConstraint(self.name, fn, knots, lower, upper, params, self.midpoints)


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
