"""The transcription interface: how one interval ``[t_k, t_k + h]`` becomes NLP rows.

A transcription turns the continuous problem into stage-wise NLP pieces, each a
``casadi.Function`` of one interval that the NLP maps over the N - 1 intervals
(one stage function, never one expression repeated N times):

``interval_function(model, running_cost)``
    inputs (by name, any subset of) ``x, u, z, x_next, u_next, f, f_next, t, h,
    p, p_mid, p_next, d, d_next`` -- knot states (n) and controls (nu) at both
    ends, the interval's own variables ``z`` (e.g. Hermite-Simpson midpoints),
    the raw state derivatives ``f = model.dynamics(x, u, t, d)`` at both knots
    (computed once per knot by the NLP and shared by neighbouring intervals),
    the start time, the step, running-cost parameters at the start, middle and
    end, and the model's dynamics parameters at both knots (size
    ``model.dynamics_param_dim``, often 0: the interval's own ``d`` holds over
    its inside, e.g. a contact mode);
    outputs ``defect`` (m = model.error_dim rows: the dynamics on the
    manifold, one per tangent direction), ``cost`` (the interval's running
    cost, scalar) and ``residual`` (extra equalities on ``z``, e.g. the unit
    norm of midpoint quaternions; may be empty).

``interpolant(model)``
    ``(x, u, z, x_next, u_next, t, h, tau, d, d_next) -> (x(t + tau), u(t + tau))``,
    the continuous trajectory the transcription assumes between knots.

Implicit schemes are written in the local chart of ``x_k`` (see
:mod:`trajopt.manifold`): ``y = state_error(., x_k)``, ``ydot = C(x_k, .) f``.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Dict, List, Optional, Tuple

import casadi as ca
import numpy as np

#: Input names an interval function may declare, with their size kind.
INTERVAL_INPUTS = ("x", "u", "z", "x_next", "u_next", "f", "f_next", "t", "h", "p", "p_mid", "p_next", "d", "d_next")
#: Inputs of every interpolant, in order.
INTERPOLANT_INPUTS = ["x", "u", "z", "x_next", "u_next", "t", "h", "tau", "d", "d_next"]


class IntervalSymbols:
    """Symbols of one interval for a model, a running cost with ``np`` parameters and ``nz`` interval variables.

    ``kind``: ``ca.SX`` or ``ca.MX`` (default: the model's :attr:`~models.Model.symbol_type`).
    """

    def __init__(self, model: Any, param_dim: int, nz: int, kind: Optional[type] = None) -> None:
        nx, nu, nd = model.state_dim, model.control_dim, model.dynamics_param_dim
        self.kind = model.symbol_type if kind is None else kind
        sym = self.kind.sym
        self.x, self.u, self.z = sym("x", nx), sym("u", nu), sym("z", nz)
        self.x_next, self.u_next = sym("x_next", nx), sym("u_next", nu)
        self.f, self.f_next = sym("f", nx), sym("f_next", nx)
        self.t, self.h, self.tau = sym("t"), sym("h"), sym("tau")
        self.p, self.p_mid, self.p_next = sym("p", param_dim), sym("p_mid", param_dim), sym("p_next", param_dim)
        self.d, self.d_next = sym("d", nd), sym("d_next", nd)

    def empty(self) -> Any:
        """A 0 x 1 column of this kind (an output with no rows)."""
        return self.kind(0, 1)

    def function(self, name: str, inputs: List[str], outputs: Dict[str, Any]) -> ca.Function:
        """A ``casadi.Function`` of the named inputs (in :data:`INTERVAL_INPUTS` order) and outputs."""
        names = [n for n in INTERVAL_INPUTS if n in inputs]
        return ca.Function(name, [getattr(self, n) for n in names], list(outputs.values()), names, list(outputs))

    def interpolant(self, name: str, x_tau: Any, u_tau: Any) -> ca.Function:
        """The interpolant function of :data:`INTERPOLANT_INPUTS` with outputs ``x_tau``, ``u_tau``."""
        return ca.Function(name, [getattr(self, n) for n in INTERPOLANT_INPUTS], [x_tau, u_tau], INTERPOLANT_INPUTS, ["x_tau", "u_tau"])


class Transcription(ABC):
    """A direct transcription: how a :class:`~trajopt.Problem` becomes stage-wise NLP pieces.

    A subclass gives the interval function (the defect that ties knot ``k``
    to ``k + 1``, the interval's running cost and residuals, from its own
    interval variables ``z``) and the interpolant (the trajectory it assumes
    inside an interval); the NLP maps them over the ``N - 1`` intervals.
    Registered by :attr:`name` for :func:`get_transcription`.
    """

    #: registry name ("trapezoidal", ...)
    name: str
    #: order of accuracy of the states for smooth solutions
    order: int
    #: False when the final knot has no control variable (its control is held from knot N - 2)
    final_control: bool = True
    #: True when an interval's end state is an explicit step ``x_end = F(x_k, u_k)`` (an output
    #: ``x_end`` of the interval function), so that the defect can be written as a gap
    #: (structure-exploiting solvers, tangent-chart knots: :mod:`trajopt.nlp`)
    explicit: bool = False
    #: True when the running cost is the rectangle rule ``h l(x_k, u_k, p_k)`` at the knots
    knot_cost: bool = False

    def interval_variables(self, model: Any) -> List[Tuple[str, int]]:
        """Names and sizes of each interval's own decision variables ``z`` (none by default)."""
        return []

    def interval_size(self, model: Any) -> int:
        """Total size ``nz`` of :meth:`interval_variables`."""
        return sum(n for _, n in self.interval_variables(model))

    def interval_points(self, model: Any) -> List[Tuple[slice, slice]]:
        """``(state slice, control slice)`` of ``z`` for each collocation point inside an interval.

        Hermite-Simpson has one (the midpoint); the default is none. Constraints
        with ``midpoints=True`` are imposed there too, and their quaternions
        are normalized in solutions.
        """
        return []

    @abstractmethod
    def interval_function(self, model: Any, running_cost: ca.Function, control_rate: Optional[np.ndarray] = None) -> ca.Function:
        """The ``casadi.Function`` of one interval: its defect, running cost and residual rows.

        Its inputs are named (any of ``x, u, z, x_next, u_next, f, f_next, t,
        h``, ...), its outputs ``defect`` (rows that vanish when the interval
        obeys the dynamics, on the manifold), ``cost`` and ``residual``.

        ``control_rate`` (nu x nu) adds ``1/2 integral udot^T W udot dt`` over
        the interval for the transcription's control interpolant.
        """

    @abstractmethod
    def interpolant(self, model: Any) -> ca.Function:
        """The ``casadi.Function`` of the trajectory the scheme assumes inside one interval:
        ``(x_tau, u_tau)`` at ``tau`` seconds after the interval's first knot."""

    def control_points(self, model: Any) -> Optional[ca.Function]:
        """``(u, z, u_next) -> c`` (nu M,): the interior Bezier control points of the control the scheme
        assumes inside an interval, or ``None`` when the knots' controls bound it already (linear or held
        controls, the default). Bounds on ``u``, ``u_next`` and ``c`` hold the whole interpolant: a Bezier
        curve lies in the convex hull of its control points."""
        return None

    def interval_guess(self, model: Any, states: np.ndarray, controls: np.ndarray) -> np.ndarray:
        """Guess (N - 1, nz) of the interval variables from knot guesses (N, n), (N, nu)."""
        return np.zeros((states.shape[0] - 1, 0))

    def interval_bounds(self, model: Any, x_bounds: Tuple[np.ndarray, np.ndarray], u_bounds: Tuple[np.ndarray, np.ndarray]) -> Tuple[np.ndarray, np.ndarray]:
        """Bounds (N - 1, nz) of the interval variables from per-knot state/control bounds."""
        N = x_bounds[0].shape[0]
        return np.zeros((N - 1, 0)), np.zeros((N - 1, 0))

    def __repr__(self) -> str:
        return f"<transcription {self.name}>"
