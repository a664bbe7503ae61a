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

from typing import Any, Callable, Sequence

import casadi as ca

from .constraints import Constraint, Placement, ResolvedConstraint


class IntervalConstraint(Constraint):
    """``lower <= fn(x_k, u_k, y, w, p) <= upper`` on ``intervals`` at ``fractions`` (module docstring):
    a :class:`~trajopt.constraints.Constraint` placed over intervals (:meth:`Placement.intervals`).

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
        super().__init__(fn, lower=lower, upper=upper, params=params, name=name, placement=Placement.intervals(intervals, fractions, midpoints))


def sampled_function(constraint: ResolvedConstraint, model: Any, transcription: Any) -> ca.Function:
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
