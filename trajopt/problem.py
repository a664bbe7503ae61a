"""The optimal-control problem: model, horizon, costs, constraints, bounds, initial guess.

A :class:`Problem` states *what* to solve, independently of the transcription::

    minimize    sum integral_0^tf l(x, u, p) dt + sum phi(x(tf), p_f)
    subject to  xdot = f(x, u, t)                          (model)
                x(0) = x0                                  (if x0 is given)
                lower_k <= c(x_k, u_k, p_k) <= upper_k      (constraints at chosen knots)
                lower_k <= c(x_k, u_k, x(t), u(t), p_k) <= upper_k   (interval constraints, t in (t_k, t_k+1])
                x_lb_k <= x_k <= x_ub_k,  u_lb_k <= u_k <= u_ub_k   (per-knot bounds)
                tf fixed, or tf in [lower, upper] (:class:`FreeTime`), or each phase's
                duration in its bounds (:class:`~trajopt.phase_durations.PhaseDurations`)

on ``N`` knots ``t_k = k tf / (N - 1)``, k = 0..N-1 (with phase durations,
evenly spaced within each phase). Every call that adds data
validates it immediately and raises ``ValueError`` naming the argument with
its expected and actual shape.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from lie import _backend as B

from .constraints import Constraint, GoalConstraint, ResolvedConstraint
from .costs import Cost, weight_matrix
from .knot_function import per_knot, resolve_knots
from .manifold import check_states, interpolate_states, normalize_quaternions
from .phase_durations import PhaseDurations
from .problem_check import check_problem

@dataclass(frozen=True)
class FreeTime:
    """A free final time ``tf`` in ``[lower, upper]`` with initial guess ``guess``."""

    lower: float
    upper: float
    guess: float

    def __post_init__(self) -> None:
        vals = (self.lower, self.upper, self.guess)
        if not all(np.isfinite(v) for v in vals) or not 0 < self.lower <= self.guess <= self.upper:
            raise ValueError(f"tf: FreeTime needs finite 0 < lower <= guess <= upper, got lower={self.lower}, guess={self.guess}, upper={self.upper}")


class Problem:
    """An optimal-control problem on ``N`` knots ``t_k = k tf / (N - 1)``: model, costs, constraints, bounds.

    It states what to solve, independently of the transcription: minimize the
    costs added with :meth:`add_cost` (running costs integrated over
    ``[0, tf]``, terminal costs at ``tf``) subject to the model's dynamics
    ``xdot = f(x, u, t)``, ``x(0) = x0`` when ``x0`` is given, the
    constraints added with :meth:`add_constraint` at their knots or over their intervals, and the
    per-knot state and control bounds (:meth:`bound_states`,
    :meth:`bound_controls`; the model's ``control_bounds()`` by default).
    Every call that adds data checks it at once and raises ``ValueError``
    naming the argument with its expected and actual shape.

    :attr:`default_transcription` is what :func:`trajopt.solve` uses when no
    transcription is given, and :attr:`solver_options` are backend options added
    to the solver's defaults; problem classes whose formulation suits another
    scheme or scaling better (e.g. the legged problem) override them.

    Parameters
    ----------
    model:
        A :class:`models.Model` (its ``control_bounds()`` are the default control bounds).
    N:
        Number of knots (>= 2).
    tf:
        Final time (> 0), a :class:`FreeTime`, or :class:`~trajopt.phase_durations.PhaseDurations`
        (:meth:`set_time`).
    x0:
        Initial state (n,), fixed; ``None`` leaves it free. Quaternions must be unit (1e-6).
    """

    default_transcription: str = "hermite_simpson"
    #: Options this kind of problem solves best with, per backend name (``{"ipopt": {...},
    #: "fatrop": {...}}``); a solve's own ``options`` override them.
    solver_options: Dict[str, Dict[str, Any]] = {}
    #: Whether IPOPT solves for variables scaled so that the constraint Jacobian is equilibrated
    #: (:mod:`trajopt.solvers.scaling`): for problems whose variables mix units over orders of
    #: magnitude (forces, torques, accelerations, angles), where round-off otherwise steers the solve.
    scale_variables: bool = False
    #: Backend and settings :func:`trajopt.solve` uses for this problem unless its call says
    #: otherwise: any of ``solver``, ``compile``, ``hessian``, ``chart`` (see :mod:`trajopt.solvers`).
    solve_defaults: Dict[str, Any] = {}
    #: How to build this problem again: ``{"name": registry name, "params": factory keyword
    #: arguments}`` when :func:`problems.get` built it (``None`` otherwise). A :class:`Solution`
    #: saves it, so that :func:`problems.load_solution` can rebuild the problem from a file.
    recipe: Optional[Dict[str, Any]] = None
    #: How :func:`trajopt.solve` solves this problem as a sequence of solves on one NLP, e.g. a
    #: :class:`~trajopt.homotopy.BoundHomotopy` (its ``solve(solver, warm_start)``, :mod:`trajopt.homotopy`); ``None``: one solve.
    homotopy: Optional[Any] = None

    def __init__(self, model: Any, N: int, tf: float | FreeTime | PhaseDurations, x0: Any = None, name: str = "problem") -> None:
        if not all(hasattr(model, a) for a in ("state_dim", "control_dim", "dynamics", "state_error")):
            raise TypeError(f"model: expected a models.Model, got {type(model).__name__} {model!r:.60}")
        if isinstance(N, bool) or not isinstance(N, (int, np.integer)) or N < 2:
            raise ValueError(f"N: expected an int >= 2, got {N!r}")
        self.model, self.N, self.name = model, int(N), name
        self.set_time(tf)
        self.nx, self.nu = model.state_dim, model.control_dim
        self._x0 = None if x0 is None else self._check_state(x0, "x0")
        self.costs: List[Cost] = []
        #: every constraint, at knots or over intervals (its :class:`~trajopt.constraints.Placement`), in the order added
        self.constraints: List[Constraint] = []
        lb, ub = model.control_bounds()
        self.state_lower = np.full((self.N, self.nx), -np.inf)
        self.state_upper = np.full((self.N, self.nx), np.inf)
        self.control_lower = per_knot(lb, self.N, self.nu, "model.control_bounds() lower")
        self.control_upper = per_knot(ub, self.N, self.nu, "model.control_bounds() upper")
        self.control_rate_weight: Optional[np.ndarray] = None
        #: True when the control bounds hold on the transcription's control between knots too (:meth:`bound_controls`)
        self.control_bounds_between_knots = False
        self._dynamics_params = np.zeros((self.N, model.dynamics_param_dim))
        self._guess_states: Optional[np.ndarray] = None
        self._guess_controls: Optional[np.ndarray] = None

    def __repr__(self) -> str:
        if isinstance(self.tf, PhaseDurations):
            tf = f"{self.tf.count} free phase durations"
        else:
            tf = f"tf in [{self.tf.lower}, {self.tf.upper}]" if isinstance(self.tf, FreeTime) else f"tf={self.tf}"
        return f"<Problem {self.name}: {type(self.model).__name__}, N={self.N}, {tf}, {len(self.costs)} costs, {len(self.constraints)} constraints>"

    # ------------------------------------------------------------ validation
    def _check_state(self, x: Any, name: str) -> np.ndarray:
        return check_states(self.model, x, name)

    # ------------------------------------------------------------ building
    @property
    def x0(self) -> Optional[np.ndarray]:
        """The fixed initial state (n,), or ``None`` when it is free.

        Assigning a new state (validated) is read by an already built solver at
        its next solve; switching between fixed and free needs a new solver.
        """
        return self._x0

    @x0.setter
    def x0(self, value: Any) -> None:
        self._x0 = None if value is None else self._check_state(value, "x0")

    @property
    def dynamics_params(self) -> np.ndarray:
        """The model's dynamics parameters per knot (N, ``model.dynamics_param_dim``); zeros by default.

        Knot ``k``'s column holds at the knot and over the interval that starts
        there (e.g. which feet are in contact). Assign a new (N, nd) array
        (validated); an already built solver reads it at its next solve.
        """
        return self._dynamics_params

    @dynamics_params.setter
    def dynamics_params(self, value: Any) -> None:
        D = np.asarray(value, dtype=float)
        want = (self.N, self.model.dynamics_param_dim)
        if D.shape != want or not np.isfinite(D).all():
            raise ValueError(f"dynamics_params: expected a finite array of shape {want}, got shape {D.shape}")
        self._dynamics_params = D.copy()

    def check(self) -> None:
        """Test the states this problem fixes (``x0``, knots pinned by their bounds, a full-state goal)
        against the state bounds and the constraints that do not read the control, before any solve.

        Raises :class:`~trajopt.problem_check.InfeasibleProblem` (a ``ValueError``), one line naming
        the state, the bound or constraint, the knot, the entry (a joint's name for a robot) and the
        value against the bound (:func:`trajopt.problem_check.check_problem`). :func:`trajopt.solve`
        runs it first, unless called with ``check=False``.
        """
        check_problem(self)

    def check_transcription(self, name: str) -> None:
        """Raise ``ValueError`` if the transcription ``name`` cannot solve this problem (all can, here)."""

    def set_time(self, tf: float | FreeTime | PhaseDurations) -> None:
        """Set the horizon's time: a fixed final time ``tf`` (> 0), a :class:`FreeTime`, or
        :class:`~trajopt.phase_durations.PhaseDurations` over this problem's ``N`` knots."""
        if isinstance(tf, PhaseDurations):
            if tf.N != self.N:
                raise ValueError(f"tf: the phase durations span {tf.N} knots, the problem has N = {self.N}")
        elif not isinstance(tf, FreeTime):
            if isinstance(tf, bool) or not isinstance(tf, (int, float, np.number)) or not np.isfinite(tf) or tf <= 0:
                raise ValueError(f"tf: expected a finite float > 0, a FreeTime or PhaseDurations, got {tf!r}")
            tf = float(tf)
        self.tf = tf

    @property
    def free_time(self) -> bool:
        """True when the time is a decision variable (a free ``tf`` or free phase durations)."""
        return isinstance(self.tf, (FreeTime, PhaseDurations))

    @property
    def timing(self) -> Optional[PhaseDurations]:
        """The durations that are decision variables: the phase durations, one phase for a
        :class:`FreeTime`, ``None`` for a fixed ``tf``."""
        if isinstance(self.tf, FreeTime):
            return PhaseDurations.of_free_time(self.tf.lower, self.tf.upper, self.tf.guess, self.N)
        return self.tf if isinstance(self.tf, PhaseDurations) else None

    @property
    def tf_guess(self) -> float:
        """The fixed ``tf``, or the guess of a free one (the sum of the phase durations' guesses)."""
        if isinstance(self.tf, PhaseDurations):
            return float(np.sum(self.tf.guess))
        return self.tf.guess if isinstance(self.tf, FreeTime) else self.tf

    def times(self, durations: Any = None) -> np.ndarray:
        """Knot times (N,): for phase durations (P,), evenly spaced within each phase; else for the
        final time ``durations`` (a float or one duration), evenly spaced. Default: the guess (:attr:`tf_guess`)."""
        if isinstance(self.tf, PhaseDurations):
            return self.tf.times(durations)
        tf = self.tf_guess if durations is None else float(np.asarray(durations, dtype=float).reshape(-1)[0])
        return np.linspace(0.0, tf, self.N)

    def add_cost(self, cost: Cost) -> "Problem":
        """Add a running or terminal :class:`trajopt.costs.Cost` (validated now). Returns ``self``."""
        if not isinstance(cost, Cost):
            raise ValueError(f"cost: expected a trajopt.costs.Cost, got {type(cost).__name__}")
        cost.function(self.model)
        cost.params(self.model, self.N)
        self.costs.append(cost)
        return self

    def penalize_control_rate(self, W: Any) -> "Problem":
        """Add ``1/2 integral udot^T W udot dt`` to the objective (W: (nu,) diagonal or (nu, nu)).

        ``udot`` is the derivative of the transcription's control interpolant
        (linear for trapezoidal, quadratic for Hermite-Simpson); it damps
        controls that alternate from knot to knot, a mode that collocation
        leaves free when controls enter the dynamics only through their
        averages. Multiple shooting (held controls) does not support it.
        Returns ``self``.
        """
        self.control_rate_weight = weight_matrix(W, self.nu, "W")
        return self

    def add_constraint(self, constraint: Constraint) -> "Problem":
        """Add a :class:`trajopt.constraints.Constraint`, at knots or over intervals (validated now). Returns ``self``."""
        if not isinstance(constraint, Constraint):
            raise ValueError(f"constraint: expected a trajopt.constraints.Constraint, got {type(constraint).__name__}")
        constraint.resolve(self.model, self.N)
        self.constraints.append(constraint)
        return self

    def add_interval_constraint(self, constraint: Constraint) -> "Problem":
        """Add a constraint placed over intervals, a :class:`trajopt.interval_constraints.IntervalConstraint`
        (validated now): :meth:`add_constraint`, for that placement only. Returns ``self``."""
        if not isinstance(constraint, Constraint) or not constraint.placement.over_intervals:
            raise ValueError(f"constraint: expected a trajopt.IntervalConstraint, got {type(constraint).__name__}")
        return self.add_constraint(constraint)

    def resolved_constraints(self) -> List[ResolvedConstraint]:
        """Every constraint with its numeric data for this horizon, in the order added."""
        return [c.resolve(self.model, self.N) for c in self.constraints]

    def _bound(self, lo: np.ndarray, hi: np.ndarray, lower: Any, upper: Any, knots: Any, name: str) -> None:
        ks = resolve_knots(knots, self.N, f"{name} knots")
        width = lo.shape[1]
        L = per_knot(-np.inf if lower is None else lower, len(ks), width, f"{name} lower")
        U = per_knot(np.inf if upper is None else upper, len(ks), width, f"{name} upper")
        newlo, newhi = np.maximum(lo[ks], L), np.minimum(hi[ks], U)
        if (newlo > newhi).any():
            raise ValueError(f"{name}: empty bounds (lower > upper) at knots {sorted(set(ks[np.nonzero(newlo > newhi)[0]].tolist()))}")
        lo[ks], hi[ks] = newlo, newhi

    def bound_states(self, lower: Any = None, upper: Any = None, knots: Any = "all") -> "Problem":
        """Intersect the state bounds at ``knots`` with ``[lower, upper]`` (scalar, (n,) or (K, n)).

        Bounds act on the raw state vector (a quaternion's components are
        bounded as numbers) and become IPOPT variable bounds. Returns ``self``.
        """
        self._bound(self.state_lower, self.state_upper, lower, upper, knots, "state bounds")
        return self

    def bound_controls(self, lower: Any = None, upper: Any = None, knots: Any = "all", interior: bool = False) -> "Problem":
        """Intersect the control bounds at ``knots`` with ``[lower, upper]`` (scalar, (nu,) or (K, nu)).

        Per-knot arrays express e.g. contact forces that must vanish in swing.
        ``interior=True``: every control bound of the problem also holds between knots, on the control
        the transcription assumes there (Hermite-Simpson's quadratic, whose middle Bezier point then
        gets the hull of its knots' bounds: :meth:`~trajopt.transcription.Transcription.control_points`;
        linear and held controls hold them already). It stays on once asked. Returns ``self``.
        """
        self._bound(self.control_lower, self.control_upper, lower, upper, knots, "control bounds")
        if interior:
            self.control_bounds_between_knots = True
        return self

    # ------------------------------------------------------------ initial guess
    def set_initial_guess(self, states: Any = None, controls: Any = None) -> "Problem":
        """Initial guess: ``states`` (N, n) and/or ``controls`` (N, nu) or (nu,) for every knot.

        Quaternions in the guess are normalized. Returns ``self``.
        """
        if states is not None:
            X = B.numeric_array(states, "states")
            if X.shape != (self.N, self.nx):
                raise ValueError(f"states: expected shape ({self.N}, {self.nx}), got {X.shape}")
            B.check_finite(X, "states")
            self._guess_states = normalize_quaternions(self.model, X)
        if controls is not None:
            self._guess_controls = B.check_finite(per_knot(controls, self.N, self.nu, "controls"), "controls")
        return self

    def goal(self) -> Optional[np.ndarray]:
        """The state of a full-state :class:`GoalConstraint` at the final knot, if any."""
        for c in self.constraints:
            if isinstance(c, GoalConstraint) and c.full_state and resolve_knots(c.knots, self.N, "goal knots").tolist() == [self.N - 1]:
                return c.x_goal
        return None

    def initial_guess(self) -> Tuple[np.ndarray, np.ndarray]:
        """``(states (N, n), controls (N, nu))``: the user's guess, else defaults.

        Default states interpolate from ``x0`` to the final goal on the manifold
        (:func:`trajopt.manifold.interpolate_states`), or repeat ``x0`` without a
        goal. Default controls hold the model where the guessed states put it:
        the model's :meth:`~models.Model.equilibrium_control` at each knot's
        state, time and dynamics parameters, within the problem's control bounds
        (hover thrust, gravity-compensating torques; the smallest accelerations
        an underactuated model can reach). Zero controls would start a model
        with gravity in free fall, which costs iterations and can end at a
        worse optimum (docs/design/solvers.md).
        """
        X = self._guess_states
        if X is None:
            if self.x0 is None:
                raise ValueError("initial guess: x0 is free and no states were given; call set_initial_guess(states=...)")
            goal = self.goal()
            X = interpolate_states(self.model, self.x0, self.x0 if goal is None else goal, np.linspace(0, 1, self.N))
        U = self._guess_controls
        if U is None:
            U = self.equilibrium_guess(X)
        return X.copy(), U.copy()

    def equilibrium_guess(self, states: np.ndarray) -> np.ndarray:
        """Controls (N, nu) holding the model at ``states`` (N, n): :meth:`~models.Model.equilibrium_control`
        at each knot (its time, dynamics parameters and the problem's control bounds there)."""
        times = self.times()
        U = np.empty((self.N, self.nu))
        for k in range(self.N):
            params = self._dynamics_params[k] if self.model.dynamics_param_dim else None
            U[k] = self.model.equilibrium_control(states[k], times[k], params, bounds=(self.control_lower[k], self.control_upper[k]))
        return np.clip(U, self.control_lower, self.control_upper)
