"""Assembly of the stage-wise NLP from a :class:`~trajopt.Problem` and a transcription.

Decision vector ``w``, ordered stage by stage (what structure-exploiting
solvers such as fatrop expect)::

    w = [x_0, u_0, z_0,  x_1, u_1, z_1,  ...,  x_{N-1}, (u_{N-1}),  (tau)]

``z_k`` are the transcription's interval variables (e.g. Hermite-Simpson
midpoints), the final control exists only when ``transcription.final_control``
and the durations ``tau`` only when the time is free: ``tf`` alone for a free
final time, one duration per phase for phase durations
(:mod:`trajopt.phase_durations`; interval ``k`` of phase ``j`` then reads
``h_k = tau_j / n_j``, and the durations' linear rows close ``g``). Constraint rows ``g`` are grouped by
stage too: for each knot ``k``, the unit-norm rows of ``x_k`` (quaternions,
omitted at a fixed ``x_0``), the user constraints at ``k`` (in the order they
were added), the interval constraints on ``k -> k+1`` (:mod:`trajopt.interval_constraints`),
then the interval ``k -> k+1`` rows (defect, residual).

Every piece is one ``casadi.Function`` of one knot or interval, mapped over
its knots with ``Function.map`` (one stage function per knot, never one expression repeated N times): the knot dynamics
``f(x_k, u_k, t_k, d_k)`` (shared by the two intervals that touch the knot), the
interval function, each constraint, the unit-norm residual. The mapped outputs
are stacked and brought into stage order by one permutation. Numeric data
(fixed ``tf``, cost references, constraint parameters, the model's dynamics
parameters ``d_k``) enter through the parameter vector ``p``, so one built NLP
is re-solved with new data.

Tangent-chart knots (``chart=True``). A knot state with unit quaternions has
more coordinates (n) than directions (m = ``model.error_dim``). Instead of
``x_k`` and one unit-norm row per quaternion, the decision variable is then
the tangent perturbation ``d_k`` (m,) of a chart centre ``xbar_k`` (a
parameter, a unit state on the manifold)::

    x_k = apply_dx(xbar_k, d_k)                         (p = pbar + R(qbar) dp, q = qbar exp(dphi))
    gap_k = d_{k+1} - state_error(x_end_k, xbar_{k+1})  (m rows, the interval's explicit end state x_end_k)

Every cost and constraint still reads ``x_k``. The gap has the coefficient
``+I`` on ``d_{k+1}`` that Riccati-based solvers (fatrop, HPIPM) need, no norm
rows are left, and ``gap_k = 0`` iff ``x_{k+1} = x_end_k`` (``state_error`` and
``apply_dx`` are inverse charts while the rotation part of ``d`` stays below pi).
So the chart is exact, not a linearization; only its validity region is
bounded: the solver re-centres (``xbar_k = x_k``, ``d_k = 0``) between solves
when a rotation part grows large (:meth:`chart_extent`). Needs an explicit
transcription (multiple shooting); bounds may only limit coordinates that the
chart shifts unchanged (joint angles, velocities; :func:`chart_bounds`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

import casadi as ca
import numpy as np

from models.casadi_names import casadi_name
from models.numeric_call import NumericCall

from .costs import split_costs, sum_costs
from .interval_constraints import sampled_function
from .layout import Layout, RowBlock, columns
from .manifold import normalize_quaternions, unit_norm_residual
from .problem import Problem
from .transcription import Transcription, get_transcription


@dataclass
class Trajectory:
    """Knot values unpacked from a decision vector."""

    states: np.ndarray  # (N, n)
    controls: np.ndarray  # (N, nu); for shooting the last row repeats row N - 2
    intervals: np.ndarray  # (N - 1, nz)
    tf: float
    durations: Optional[np.ndarray] = None  # (P,) when the time is free (a free tf: its one phase)


class NLP:
    """A problem transcribed into a nonlinear program: decision variables, objective, constraints, bounds.

    The decision vector holds the knots' states and controls (or tangent
    perturbations with ``chart=True``) and the transcription's interval
    variables in stage order; numeric data (fixed ``tf``, references,
    constraint parameters) enter through the parameter vector ``p``, so the
    program is re-solved with new data without being rebuilt.

    Attributes used by solvers: ``w``, ``p`` (MX symbols), ``f``, ``g`` (MX
    expressions), ``var_stage`` (stage of each entry of ``w``, -1 for the durations)
    and ``row_stage`` (stage of each row of ``g``).
    """

    def __init__(self, problem: Problem, transcription: Transcription | str | None = None, chart: bool = False) -> None:
        if not isinstance(problem, Problem):
            raise ValueError(f"problem: expected a trajopt.Problem, got {type(problem).__name__}")
        self.problem = problem
        self.transcription = get_transcription(problem.default_transcription if transcription is None else transcription)
        problem.check_transcription(self.transcription.name)
        self.chart = bool(chart)
        if self.chart and not self.transcription.explicit:
            raise ValueError(f"chart: tangent-chart knots need an explicit transcription (multiple shooting), got {self.transcription.name!r}")
        model = problem.model
        #: size of a knot's state variables: the tangent perturbation (chart) or the state
        self.n_state = model.error_dim if self.chart else model.state_dim
        self._chart_fns = chart_functions(model) if self.chart else None
        self._chart_calls: Dict[Tuple[str, int], NumericCall] = {}  # chart maps over K knots, by name and K
        self._plain = plain_coordinates(model) if self.chart else None
        self.chart_centres = normalize_quaternions(model, problem.initial_guess()[0]) if self.chart else None
        self.nz = self.transcription.interval_size(problem.model)
        self.constraints = self._resolved_constraints()
        #: the sampled rows of each constraint over intervals (:func:`~trajopt.interval_constraints.sampled_function`; ``None`` at knots)
        self.interval_functions = [sampled_function(c, model, self.transcription) if c.over_intervals else None for c in self.constraints]
        self.interior_points = len(self.transcription.interval_points(model))
        self._running = [c for c in problem.costs if not c.terminal]
        self._terminal = [c for c in problem.costs if c.terminal]
        self._signature = self._structure()
        self._g_fn: ca.Function | None = None
        self._layout_variables()
        self._check_time_invariance()
        self._layout_parameters()
        blocks = self._stage_functions()
        self._order_rows(blocks)

    def _structure(self) -> tuple:
        """What the built NLP depends on (checked again when data is read at solve time)."""
        prob = self.problem
        costs = tuple((type(c), c.terminal, c.params(prob.model, prob.N).shape) for c in prob.costs)
        rate = None if prob.control_rate_weight is None else prob.control_rate_weight.tobytes()
        timing = None if prob.timing is None else (prob.timing.knots, prob.timing.rows.shape[0])
        return (prob.N, timing, prob.x0 is None, costs, rate, prob.control_bounds_between_knots)

    def _check_time_invariance(self) -> None:
        """``ValueError`` when phase durations meet dynamics or interval constraints that read the time ``t``:
        a knot's time then depends on every earlier phase's duration, which the stage-wise derivatives
        (one interval's variables per term) do not hold."""
        if self.timing is None or self.timing.count == 1:
            return
        model = self.problem.model
        xs, us, ts = model.symbols(model.symbol_type)
        ds = model.symbol_type.sym("d", model.dynamics_param_dim)
        readers = [("the dynamics", ca.depends_on(model.parametric_dynamics(xs, us, ts, ds), ts))]
        for c, fn in zip(self.constraints, self.interval_functions):
            if fn is not None:
                args = fn.mx_in()
                readers.append((f"the interval constraint {c.name!r}", ca.depends_on(fn(*args)[0], args[5])))
        for what, reads in readers:
            if reads:
                raise ValueError(f"tf: {what} of this problem read the time t; phase durations need time-invariant dynamics and interval constraints (a free tf or a fixed one do not)")

    def _layout_variables(self) -> None:
        """Stage-wise decision vector ``w`` and the index arrays of its parts."""
        prob, tr = self.problem, self.transcription
        N, nu, nz = prob.N, prob.nu, self.nz
        wl, stage = Layout(), []
        ns = self.n_state
        self.idx_x, self.idx_u, self.idx_z = np.zeros((N, ns), int), np.zeros((N, nu), int), np.zeros((N - 1, nz), int)
        self.n_controls = N if tr.final_control else N - 1
        for k in range(N):
            self.idx_x[k] = wl.take(ns)
            if k < self.n_controls:
                self.idx_u[k] = wl.take(nu)
            if k < N - 1:
                self.idx_z[k] = wl.take(nz)
            stage += [k] * (wl.size - len(stage))
        if not tr.final_control:
            self.idx_u[N - 1] = self.idx_u[N - 2]  # the held control
        self.timing = prob.timing
        #: the durations' entries of ``w`` (P,): a free ``tf``, or the phase durations; ``None`` for a fixed ``tf``
        self.idx_durations = None if self.timing is None else wl.take(self.timing.count)
        self.var_stage = np.array(stage + [-1] * (wl.size - len(stage)))
        self.w = ca.MX.sym("w", wl.size)

    def _layout_parameters(self) -> None:
        """Parameter vector ``p``: fixed tf, running-cost parameters (knots, midpoints), terminal, the constraints at
        knots (then at their midpoints), dynamics, chart centres, the constraints over intervals."""
        prob, model = self.problem, self.problem.model
        N, nx, nu = prob.N, prob.nx, prob.nu
        run_funcs = [c.function(model) for c in self._running]
        term_funcs = [c.function(model) for c in self._terminal]
        run_dims, term_dims = [f.size1_in(2) for f in run_funcs], [f.size1_in(2) for f in term_funcs]
        self.running_cost = sum_costs(run_funcs, run_dims, nx, nu, "running_cost")
        self.terminal_cost = sum_costs(term_funcs, term_dims, nx, nu, "terminal_cost")
        self.running_split = split_costs(self._running, model, run_dims, "running_cost_split")
        self.terminal_split = split_costs(self._terminal, model, term_dims, "terminal_cost_split")
        pl, npr = Layout(), sum(run_dims)
        self.idx_p_tf = None if prob.free_time else pl.take(1)
        self.idx_p_run, self.idx_p_mid = pl.take(npr * N).reshape(N, npr), pl.take(npr * (N - 1)).reshape(N - 1, npr)
        self.idx_p_term = pl.take(sum(term_dims))

        def take(c: Any) -> np.ndarray:
            return pl.take(c.params.size).reshape(c.params.shape)

        at_knots = {i: take(c) for i, c in enumerate(self.constraints) if not c.over_intervals}
        mid_params = [c.midpoint_data()[3] for c in self.constraints]
        self.idx_p_con_mid = [pl.take(m.size).reshape(m.shape) for m in mid_params]
        self.idx_p_dyn = pl.take(N * model.dynamics_param_dim).reshape(N, model.dynamics_param_dim)
        self.idx_p_chart = pl.take(N * nx).reshape(N, nx) if self.chart else np.zeros((N, 0), dtype=int)
        #: each constraint's parameters (K, np) in ``p``
        self.idx_p_con = [at_knots[i] if i in at_knots else take(c) for i, c in enumerate(self.constraints)]
        self.p = ca.MX.sym("p", pl.size)

    def _stage_functions(self) -> List[Tuple[ca.MX, RowBlock]]:
        """Map the stage functions; sets the objective ``f`` and returns the row blocks of ``g``
        as ``(values (rows x K), RowBlock)``."""
        prob, model, N, w, p = self.problem, self.problem.model, self.problem.N, self.w, self.p
        X, U, Z = columns(w, self.idx_x), columns(w, self.idx_u), columns(w, self.idx_z)
        if self.chart:  # knot states from their tangent perturbations
            Xbar = columns(p, self.idx_p_chart)
            X = self._chart_fns["retract"].map(N)(Xbar, X)
        h, T = self._knot_spacing()
        P, Pm, D = columns(p, self.idx_p_run), columns(p, self.idx_p_mid), columns(p, self.idx_p_dyn)
        self.interval_fn = interval = self.transcription.interval_function(model, self.running_cost, prob.control_rate_weight)
        args: Dict[str, Any] = {
            "x": X[:, :-1], "u": U[:, :-1], "z": Z, "x_next": X[:, 1:], "u_next": U[:, 1:], "t": T[:, :-1], "h": h,
            "p": P[:, :-1], "p_mid": Pm, "p_next": P[:, 1:], "d": D[:, :-1], "d_next": D[:, 1:],
        }  # fmt: skip
        needs = set(interval.name_in())
        if needs & {"f", "f_next"}:  # knot dynamics, evaluated once per knot
            xs, us, ts = model.symbols(model.symbol_type)
            ds = model.symbol_type.sym("d", model.dynamics_param_dim)
            dyn = ca.Function(casadi_name(f"{model.name}_knot_dynamics"), [xs, us, ts, ds], [model.parametric_dynamics(xs, us, ts, ds)], ["x", "u", "t", "d"], ["f"])
            count = N if "f_next" in needs else N - 1
            F = dyn.map(count)(X[:, :count], U[:, :count], T[:, :count], D[:, :count])
            args["f"], args["f_next"] = F[:, : N - 1], F[:, 1:]
        out = interval.map(N - 1)(**{name: args[name] for name in interval.name_in()})
        self.f = ca.sum2(out["cost"]) + self.terminal_cost(X[:, N - 1], U[:, N - 1], p[self.idx_p_term.tolist()])
        if self.chart:
            out["defect"] = self._chart_fns["gap"].map(N - 1)(out["x_end"], columns(w, self.idx_x)[:, 1:], Xbar[:, 1:])

        blocks: List[Tuple[ca.MX, RowBlock]] = []
        self.norm_fn = norm = None if self.chart else unit_norm_residual(model)
        self.norm_knots = np.arange(1 if prob.x0 is not None else 0, N)  # a fixed x0 is unit already
        if norm is not None and self.norm_knots.size:
            blocks.append((norm.map(len(self.norm_knots))(X[:, self.norm_knots.tolist()]), RowBlock("norm", norm.size1_out(0), self.norm_knots)))
        points = self.transcription.interval_points(model)
        for i, (c, idx, idx_mid) in enumerate(zip(self.constraints, self.idx_p_con, self.idx_p_con_mid)):
            K = c.stages.tolist()
            if c.over_intervals:
                fn, K1 = self.interval_functions[i], (c.stages + 1).tolist()
                hK = h if h.shape[1] == 1 else h[:, K]
                rows = fn.map(len(K))(X[:, K], U[:, K], Z[:, K], X[:, K1], U[:, K1], T[:, K], hK, D[:, K], D[:, K1], columns(p, idx))
                blocks.append((rows, RowBlock("interval", fn.size1_out(0), c.stages, i)))
                continue
            blocks.append((c.function.map(len(K))(X[:, K], U[:, K], columns(p, idx)), RowBlock("constraint", c.size, c.stages, i)))
            intervals = c.midpoint_data()[0]
            for j, (xs, us) in enumerate(points if intervals.size else []):
                Zi = Z[:, intervals.tolist()]
                blocks.append((c.function.map(len(intervals))(Zi[xs, :], Zi[us, :], columns(p, idx_mid)), RowBlock("midpoint", c.size, intervals, i, j)))
        self.control_points_fn = self.transcription.control_points(model) if prob.control_bounds_between_knots else None
        if self.control_points_fn is not None:
            hull = self.control_points_fn.map(N - 1)(U[:, :-1], Z, U[:, 1:])
            blocks.append((hull, RowBlock("control_hull", hull.shape[0], np.arange(N - 1))))
        blocks.append((out["defect"], RowBlock("defect", out["defect"].shape[0], np.arange(N - 1))))
        blocks.append((out["residual"], RowBlock("residual", out["residual"].shape[0], np.arange(N - 1))))
        if self.timing is not None and self.timing.rows.shape[0]:
            tau = w[self.idx_durations.tolist()]
            blocks.append((ca.mtimes(ca.DM(self.timing.rows), tau), RowBlock("timing", self.timing.rows.shape[0], np.array([N - 1]))))
        return blocks

    def _knot_spacing(self) -> Tuple[ca.MX, ca.MX]:
        """The knot spacing ``h`` (1 x 1 when even, else 1 x (N - 1)) and the knot times ``T`` (1 x N):
        ``tf / (N - 1)`` of the fixed ``tf`` (a parameter) or of a free one, or each phase's ``tau_j / n_j``."""
        N, w, timing = self.problem.N, self.w, self.timing
        if timing is None:
            h = self.p[int(self.idx_p_tf[0])] / (N - 1)
        elif timing.count == 1:
            h = w[int(self.idx_durations[0])] / (N - 1)
        else:
            tau = w[self.idx_durations.tolist()]
            h = ca.transpose(tau[timing.phase_of_interval.tolist()]) / ca.DM(timing.intervals[timing.phase_of_interval].astype(float)).T
            return h, ca.horzcat(ca.MX(1, 1), ca.cumsum(h, 1))
        return h, h * ca.DM(np.arange(N)).T

    def _order_rows(self, blocks: List[Tuple[ca.MX, RowBlock]]) -> None:
        """Stack the blocks and permute the rows into stage order: by (knot, block, row in block)."""
        keys, offset = [], 0
        self.blocks: List[RowBlock] = [b for _, b in blocks]
        for order, b in enumerate(self.blocks):
            keys += [(int(k), order, r, offset + j * b.rows + r) for j, k in enumerate(b.stages) for r in range(b.rows)]
            offset += b.rows * b.K
        keys.sort()
        self.perm = np.array([key[3] for key in keys], dtype=int)
        self._position = np.empty_like(self.perm)
        self._position[self.perm] = np.arange(self.perm.size)
        self.row_stage = np.array([key[0] for key in keys], dtype=int)
        g_all = ca.vertcat(*[ca.vec(values) for values, _ in blocks])
        self.g = g_all[self.perm.tolist()] if self.perm.size else ca.MX(0, 1)

    def block_rows(self, b: int) -> np.ndarray:
        """Rows of ``g`` (stage order) holding block ``b``: (K, rows), one row per knot or interval."""
        block = self.blocks[b]
        start = sum(x.rows * x.K for x in self.blocks[:b])
        return self._position[start : start + block.rows * block.K].reshape(block.K, block.rows)

    # ------------------------------------------------------------ sizes
    @property
    def n_w(self) -> int:
        """Number of decision variables."""
        return self.w.shape[0]

    @property
    def n_g(self) -> int:
        """Number of constraint rows."""
        return self.g.shape[0]

    # ------------------------------------------------------------ numeric data
    def parameters(self, constraints: Optional[list] = None) -> np.ndarray:
        """Current parameter vector ``p`` from the problem's data (``constraints``: :meth:`current_constraints`, when at hand)."""
        prob, model = self.problem, self.problem.model
        constraints = self.current_constraints() if constraints is None else constraints
        p = np.zeros(self.p.shape[0])
        if self.idx_p_tf is not None:
            p[self.idx_p_tf] = prob.tf
        if self._running:
            P = [c.params(model, prob.N) for c in self._running]
            p[self.idx_p_run] = np.hstack(P)
            if "p_mid" in self.interval_fn.name_in():  # interval midpoints (Hermite-Simpson, integrated shooting costs)
                p[self.idx_p_mid] = np.hstack([c.midpoint_params(model, Pc) for c, Pc in zip(self._running, P)])
        if self._terminal:
            p[self.idx_p_term] = np.hstack([c.params(model, prob.N).ravel() for c in self._terminal])
        for c, idx, idx_mid in zip(constraints, self.idx_p_con, self.idx_p_con_mid):
            p[idx], p[idx_mid] = c.params, c.midpoint_data()[3]
        p[self.idx_p_dyn] = prob.dynamics_params
        if self.chart:
            p[self.idx_p_chart] = self.chart_centres
        return p

    def bounds_w(self) -> Tuple[np.ndarray, np.ndarray]:
        """Variable bounds ``(lbw, ubw)``: state/control bounds, interval bounds, fixed ``x_0``, ``tf``."""
        prob, tr = self.problem, self.transcription
        lb, ub = np.full(self.n_w, -np.inf), np.full(self.n_w, np.inf)
        if self.chart:
            lb[self.idx_x], ub[self.idx_x] = chart_bounds(self._plain, self.chart_centres, prob.state_lower, prob.state_upper)
        else:
            lb[self.idx_x], ub[self.idx_x] = prob.state_lower, prob.state_upper
        nu_rows = self.n_controls
        lb[self.idx_u[:nu_rows]], ub[self.idx_u[:nu_rows]] = prob.control_lower[:nu_rows], prob.control_upper[:nu_rows]
        zl, zu = tr.interval_bounds(prob.model, (prob.state_lower, prob.state_upper), (prob.control_lower, prob.control_upper))
        lb[self.idx_z], ub[self.idx_z] = zl, zu
        if prob.x0 is not None:
            lb[self.idx_x[0]] = ub[self.idx_x[0]] = self.to_variables(prob.x0[None], knots=[0])[0]
        if self.timing is not None:
            lb[self.idx_durations], ub[self.idx_durations] = self.timing.lower, self.timing.upper
        return lb, ub

    def bounds_g(self, constraints: Optional[list] = None) -> Tuple[np.ndarray, np.ndarray]:
        """Constraint bounds ``(lbg, ubg)`` in stage order (equalities are 0 = 0; ``constraints``: :meth:`current_constraints`, when at hand)."""
        constraints = self.current_constraints() if constraints is None else constraints
        lo, hi = [np.zeros(0)], [np.zeros(0)]
        for b in self.blocks:
            if b.kind in ("constraint", "interval"):
                lower, upper = constraints[b.constraint].bounds(self.interior_points)
                lo.append(lower.ravel())
                hi.append(upper.ravel())
            elif b.kind == "midpoint":
                _, lower, upper, _ = constraints[b.constraint].midpoint_data()
                lo.append(lower.ravel())
                hi.append(upper.ravel())
            elif b.kind == "timing":
                lo.append(self.timing.row_lower)
                hi.append(self.timing.row_upper)
            elif b.kind == "control_hull":  # the hull of the interval's knot bounds, for each control point
                points = b.rows // self.problem.nu
                cl, cu = self.problem.control_lower, self.problem.control_upper
                lo.append(np.tile(np.minimum(cl[:-1], cl[1:]), (1, points)).ravel())
                hi.append(np.tile(np.maximum(cu[:-1], cu[1:]), (1, points)).ravel())
            else:
                lo.append(np.zeros(b.rows * b.K))
                hi.append(np.zeros(b.rows * b.K))
        return np.concatenate(lo)[self.perm], np.concatenate(hi)[self.perm]

    def _resolved_constraints(self) -> list:
        """The problem's constraints resolved now, in the order of their rows at a stage: those at knots,
        then those over intervals (each in the order added)."""
        return sorted(self.problem.resolved_constraints(), key=lambda c: c.over_intervals)

    def current_constraints(self) -> list:
        """The problem's constraints resolved now (bounds and parameters may have changed since the build).

        Raises ``ValueError`` if the problem changed structure (horizon, free
        time, free x0, costs, constraint placements or sizes) since the build.
        """
        current = self._resolved_constraints()
        if self._structure() != self._signature or [c.structure() for c in current] != [c.structure() for c in self.constraints]:
            raise ValueError("problem: its structure changed since this NLP was built; build a new solver")
        return current

    def pack(self, states: np.ndarray, controls: np.ndarray, intervals: np.ndarray | None = None, durations: Any = None) -> np.ndarray:
        """Decision vector from knot states (N, n), controls (N, nu), interval variables (N-1, nz) and,
        when the time is free, the durations (P,; a free ``tf``: one).

        Missing interval variables come from the transcription's guess, missing durations from the problem's.
        """
        prob = self.problem
        w = np.zeros(self.n_w)
        w[self.idx_x] = self.to_variables(states)
        w[self.idx_u[: self.n_controls]] = controls[: self.n_controls]
        if intervals is None:
            intervals = self.transcription.interval_guess(prob.model, states, controls)
        w[self.idx_z] = intervals
        if self.timing is not None:
            w[self.idx_durations] = self.timing.guess if durations is None else np.asarray(durations, dtype=float).reshape(-1)
        return w

    def initial_guess(self) -> np.ndarray:
        """Decision vector of the problem's initial guess."""
        X, U = self.problem.initial_guess()
        return self.pack(X, U)

    def unpack(self, w: np.ndarray) -> Trajectory:
        """Knot states, controls, interval variables, ``tf`` and durations of a decision vector."""
        w = np.asarray(w, dtype=float).reshape(-1)
        durations = None if self.timing is None else w[self.idx_durations].copy()
        tf = float(self.problem.tf) if durations is None else float(np.sum(durations))
        return Trajectory(self.to_states(w[self.idx_x]), w[self.idx_u].copy(), w[self.idx_z].copy(), tf, durations)

    # ------------------------------------------------------------ tangent charts
    def to_variables(self, states: np.ndarray, knots: Any = None) -> np.ndarray:
        """Knot state variables (K, n_state) of states (K, n) at ``knots`` (default all):
        ``state_error(x_k, xbar_k)`` with tangent-chart knots, else the states themselves."""
        states = np.asarray(states, dtype=float)
        if not self.chart:
            return states.copy()
        centres = self.chart_centres if knots is None else self.chart_centres[knots]
        return self._chart_map("error", states.shape[0])(states.T, centres.T)

    def to_states(self, variables: np.ndarray) -> np.ndarray:
        """Knot states (N, n) of the knot state variables (N, n_state) (the inverse of :meth:`to_variables`)."""
        variables = np.asarray(variables, dtype=float)
        if not self.chart:
            return variables.copy()
        return self._chart_map("retract", variables.shape[0])(self.chart_centres.T, variables.T)

    def _chart_map(self, name: str, K: int) -> Callable[..., np.ndarray]:
        """The chart map ``name`` (``"error"``, ``"retract"``) over ``K`` knots: ``(A, B) -> C`` with one knot per
        column of the arguments and one per row of the result (n, K), (m, K) -> (K, m), on numpy buffers."""
        if (name, K) not in self._chart_calls:
            self._chart_calls[name, K] = NumericCall(self._chart_fns[name].map(K))
        call = self._chart_calls[name, K]
        return lambda a, b: call(a, b)[0].T

    def recentre(self, states: np.ndarray) -> None:
        """Chart centres at ``states`` (N, n; quaternions normalized): the next solve starts from ``d = 0`` there."""
        if not self.chart:
            raise ValueError("recentre: this NLP has no tangent-chart knots (chart=False)")
        states = np.asarray(states, dtype=float)
        if states.shape != (self.problem.N, self.problem.nx) or not np.isfinite(states).all():
            raise ValueError(f"states: expected a finite array of shape {(self.problem.N, self.problem.nx)}, got {states.shape}")
        self.chart_centres = normalize_quaternions(self.problem.model, states)

    def chart_extent(self, w: np.ndarray) -> float:
        """Largest rotation angle (rad) in the tangent perturbations of ``w`` (0 without charts):
        how far the iterate is from its chart centres on the rotation groups."""
        if not self.chart:
            return 0.0
        d = np.asarray(w, dtype=float)[self.idx_x]
        rows = ~self._plain.any(axis=1)  # tangent directions that are not plain coordinate shifts
        return float(np.abs(d[:, rows]).max(initial=0.0))

    def normalized(self, w: np.ndarray) -> np.ndarray:
        """``w`` with the quaternions of every knot and interval state scaled to unit norm
        (unchanged with tangent-chart knots, whose states are unit by construction)."""
        w = np.array(w, dtype=float)
        if self.chart:
            return w
        model = self.problem.model
        w[self.idx_x] = normalize_quaternions(model, w[self.idx_x])
        for xs, _ in self.transcription.interval_points(model):
            w[self.idx_z[:, xs]] = normalize_quaternions(model, w[self.idx_z[:, xs]])
        return w

    # ------------------------------------------------------------ functions
    def g_function(self) -> ca.Function:
        """``casadi.Function`` ``(w, p) -> g`` (built once)."""
        if self._g_fn is None:
            self._g_fn = ca.Function("nlp_g", [self.w, self.p], [self.g], ["w", "p"], ["g"])
        return self._g_fn

    def violation(self, w: np.ndarray, g: np.ndarray, bounds: Tuple[np.ndarray, ...] | None = None) -> Tuple[float, np.ndarray]:
        """Max violation of the bounds and constraints, and its per-knot max (N,).

        ``bounds`` ``(lbw, ubw, lbg, ubg)`` as :meth:`bounds_w` and :meth:`bounds_g` give them
        (read from the problem when not given). Violations of the durations' bounds count in the max only
        (they belong to no knot).
        """
        lbw, ubw, lbg, ubg = bounds if bounds is not None else (*self.bounds_w(), *self.bounds_g())
        vw = np.maximum(np.maximum(lbw - w, w - ubw), 0.0)
        vg = np.maximum(np.maximum(lbg - g, g - ubg), 0.0) if g.size else np.zeros(0)
        per_knot = np.zeros(self.problem.N)
        np.maximum.at(per_knot, self.var_stage[self.var_stage >= 0], vw[self.var_stage >= 0])
        if vg.size:
            np.maximum.at(per_knot, self.row_stage, vg)
        total = max(float(vw.max(initial=0.0)), float(vg.max(initial=0.0)))
        return total, per_knot


def chart_functions(model: Any) -> Dict[str, ca.Function]:
    """The tangent-chart maps of ``model`` (knots as perturbations ``d`` of reference states ``xbar``), SX:

    ``retract(xbar, d) = apply_dx(xbar, d)``, ``error(x, xbar) = state_error(x, xbar)`` and
    ``gap(x_end, d_next, xbar_next) = d_next - state_error(x_end, xbar_next)``.
    """
    n, m = model.state_dim, model.error_dim
    x, xbar, d = ca.SX.sym("x", n), ca.SX.sym("xbar", n), ca.SX.sym("d", m)
    return {
        "retract": ca.Function(casadi_name(f"{model.name}_chart_retract"), [xbar, d], [model.apply_dx(xbar, d)], ["xbar", "d"], ["x"]),
        "error": ca.Function(casadi_name(f"{model.name}_chart_error"), [x, xbar], [model.state_error(x, xbar)], ["x", "xbar"], ["d"]),
        "gap": ca.Function(casadi_name(f"{model.name}_chart_gap"), [x, d, xbar], [d - model.state_error(x, xbar)], ["x_end", "d_next", "xbar_next"], ["gap"]),
    }


def plain_coordinates(model: Any) -> np.ndarray:
    """Boolean (m, n) matrix: ``P[j, i]`` when tangent coordinate ``j`` is ``x_i - xbar_i`` exactly.

    Found from the symbolic ``state_error``: its row ``j`` must be the plain
    difference of one state coordinate (joint angles and velocities are; the
    floating base's position, expressed in the centre's body frame, and the
    rotations are not). A bound on a state coordinate maps to a bound on its
    tangent coordinate only through such a pair (:func:`chart_bounds`).
    """
    n, m = model.state_dim, model.error_dim
    x, xbar = ca.SX.sym("x", n), ca.SX.sym("xbar", n)
    error = model.state_error(x, xbar)
    jac = ca.jacobian(error, x)
    candidates = [(j, int(np.flatnonzero(np.asarray(ca.evalf(jac[j, :])).ravel())[0])) for j in range(m) if jac[j, :].is_constant() and jac[j, :].nnz() == 1 and ca.evalf(ca.sum2(jac[j, :])) == 1]
    plain = np.zeros((m, n), dtype=bool)
    if candidates:
        rest = ca.Function("rest", [x, xbar], [ca.vertcat(*[error[j] - (x[i] - xbar[i]) for j, i in candidates])])
        rng = np.random.default_rng(0)
        samples = [np.asarray(rest(rng.standard_normal(n), rng.standard_normal(n))).ravel() for _ in range(3)]
        for (j, i), zero in zip(candidates, np.all(np.abs(samples) == 0, axis=0)):
            plain[j, i] = bool(zero)
    return plain


def chart_bounds(plain: np.ndarray, centres: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Bounds (N, m) of tangent perturbations from state bounds (N, n) around ``centres`` (N, n).

    A plain coordinate (:func:`plain_coordinates`) keeps its bound shifted by
    the centre; any other coordinate must be unbounded (``ValueError`` naming it).
    """
    rows, cols = np.nonzero(plain)
    other = np.setdiff1d(np.arange(lower.shape[1]), cols)
    finite = np.isfinite(lower[:, other]) | np.isfinite(upper[:, other])
    if finite.any():
        k, i = np.argwhere(finite)[0]
        raise ValueError(
            f"state bounds: x[{other[i]}] is bounded at knot {k}, but that coordinate is not a plain coordinate of the "
            "tangent chart (a base position or a rotation); bound it through a constraint, or solve without tangent-chart knots"
        )
    m = plain.shape[0]
    lo, hi = np.full((lower.shape[0], m), -np.inf), np.full((lower.shape[0], m), np.inf)
    lo[:, rows], hi[:, rows] = lower[:, cols] - centres[:, cols], upper[:, cols] - centres[:, cols]
    return lo, hi
