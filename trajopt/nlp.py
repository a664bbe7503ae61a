"""Assembly of the stage-wise NLP from a :class:`~trajopt.Problem` and a transcription.

Decision vector ``w``, ordered stage by stage (what structure-exploiting
solvers such as fatrop expect)::

    w = [x_0, u_0, z_0,  x_1, u_1, z_1,  ...,  x_{N-1}, (u_{N-1}),  (tf)]

``z_k`` are the transcription's interval variables (e.g. Hermite-Simpson
midpoints), the final control exists only when ``transcription.final_control``
and ``tf`` only for a free final time. Constraint rows ``g`` are grouped by
stage too: for each knot ``k``, the unit-norm rows of ``x_k`` (quaternions,
omitted at a fixed ``x_0``), the user constraints at ``k`` (in the order they
were added), then the interval ``k -> k+1`` rows (defect, residual).

Every piece is one ``casadi.Function`` of one knot or interval, mapped over
its knots with ``Function.map`` (DESIGN rule 3): the knot dynamics
``f(x_k, u_k, t_k)`` (shared by the two intervals that touch the knot), the
interval function, each constraint, the unit-norm residual. The mapped outputs
are stacked and brought into stage order by one permutation. Numeric data
(fixed ``tf``, cost references, constraint parameters) enter through the
parameter vector ``p``, so one built NLP is re-solved with new data.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Tuple

import casadi as ca
import numpy as np

from .costs import sum_costs
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


class NLP:
    """The transcribed problem: symbols, bounds, parameters and layout (module docstring).

    Attributes used by solvers: ``w``, ``p`` (MX symbols), ``f``, ``g`` (MX
    expressions), ``var_stage`` (stage of each entry of ``w``, -1 for ``tf``)
    and ``row_stage`` (stage of each row of ``g``).
    """

    def __init__(self, problem: Problem, transcription: Transcription | str | None = None) -> None:
        if not isinstance(problem, Problem):
            raise ValueError(f"problem: expected a trajopt.Problem, got {type(problem).__name__}")
        self.problem = problem
        self.transcription = get_transcription(problem.default_transcription if transcription is None else transcription)
        problem.check_transcription(self.transcription.name)
        self.nz = self.transcription.interval_size(problem.model)
        self.constraints = problem.resolved_constraints()
        self._running = [c for c in problem.costs if not c.terminal]
        self._terminal = [c for c in problem.costs if c.terminal]
        self._signature = self._structure()
        self._g_fn: ca.Function | None = None
        self._layout_variables()
        self._layout_parameters()
        blocks = self._stage_functions()
        self._order_rows(blocks)

    def _structure(self) -> tuple:
        """What the built NLP depends on (checked again when data is read at solve time)."""
        prob = self.problem
        costs = tuple((type(c), c.terminal, c.params(prob.model, prob.N).shape) for c in prob.costs)
        rate = None if prob.control_rate_weight is None else prob.control_rate_weight.tobytes()
        return (prob.N, prob.free_time, prob.x0 is None, costs, rate)

    def _layout_variables(self) -> None:
        """Stage-wise decision vector ``w`` and the index arrays of its parts."""
        prob, tr = self.problem, self.transcription
        N, nx, nu, nz = prob.N, prob.nx, prob.nu, self.nz
        wl, stage = Layout(), []
        self.idx_x, self.idx_u, self.idx_z = np.zeros((N, nx), int), np.zeros((N, nu), int), np.zeros((N - 1, nz), int)
        self.n_controls = N if tr.final_control else N - 1
        for k in range(N):
            self.idx_x[k] = wl.take(nx)
            if k < self.n_controls:
                self.idx_u[k] = wl.take(nu)
            if k < N - 1:
                self.idx_z[k] = wl.take(nz)
            stage += [k] * (wl.size - len(stage))
        if not tr.final_control:
            self.idx_u[N - 1] = self.idx_u[N - 2]  # the held control
        self.idx_tf = int(wl.take(1)[0]) if prob.free_time else None
        self.var_stage = np.array(stage + [-1] * (wl.size - len(stage)))
        self.w = ca.MX.sym("w", wl.size)

    def _layout_parameters(self) -> None:
        """Parameter vector ``p``: fixed tf, running-cost parameters (knots, midpoints), terminal, constraints."""
        prob, model = self.problem, self.problem.model
        N, nx, nu = prob.N, prob.nx, prob.nu
        run_funcs = [c.function(model) for c in self._running]
        term_funcs = [c.function(model) for c in self._terminal]
        run_dims, term_dims = [f.size1_in(2) for f in run_funcs], [f.size1_in(2) for f in term_funcs]
        self.running_cost = sum_costs(run_funcs, run_dims, nx, nu, "running_cost")
        self.terminal_cost = sum_costs(term_funcs, term_dims, nx, nu, "terminal_cost")
        pl, npr = Layout(), sum(run_dims)
        self.idx_p_tf = None if prob.free_time else pl.take(1)
        self.idx_p_run, self.idx_p_mid = pl.take(npr * N).reshape(N, npr), pl.take(npr * (N - 1)).reshape(N - 1, npr)
        self.idx_p_term = pl.take(sum(term_dims))
        self.idx_p_con = [pl.take(c.params.size).reshape(c.params.shape) for c in self.constraints]
        mid_params = [c.midpoint_data()[3] for c in self.constraints]
        self.idx_p_con_mid = [pl.take(m.size).reshape(m.shape) for m in mid_params]
        self.p = ca.MX.sym("p", pl.size)

    def _stage_functions(self) -> List[Tuple[ca.MX, RowBlock]]:
        """Map the stage functions; sets the objective ``f`` and returns the row blocks of ``g``
        as ``(values (rows x K), RowBlock)``."""
        prob, model, N, w, p = self.problem, self.problem.model, self.problem.N, self.w, self.p
        X, U, Z = columns(w, self.idx_x), columns(w, self.idx_u), columns(w, self.idx_z)
        tf = w[self.idx_tf] if prob.free_time else p[int(self.idx_p_tf[0])]
        h = tf / (N - 1)
        T = h * ca.DM(np.arange(N)).T
        P, Pm = columns(p, self.idx_p_run), columns(p, self.idx_p_mid)
        self.interval_fn = interval = self.transcription.interval_function(model, self.running_cost, prob.control_rate_weight)
        args: Dict[str, Any] = {"x": X[:, :-1], "u": U[:, :-1], "z": Z, "x_next": X[:, 1:], "u_next": U[:, 1:], "t": T[:, :-1], "h": h, "p": P[:, :-1], "p_mid": Pm, "p_next": P[:, 1:]}
        needs = set(interval.name_in())
        if needs & {"f", "f_next"}:  # knot dynamics, evaluated once per knot
            xs, us, ts = model.symbols(ca.SX)
            dyn = ca.Function(f"{model.name}_knot_dynamics", [xs, us, ts], [model.dynamics(xs, us, ts)], ["x", "u", "t"], ["f"])
            count = N if "f_next" in needs else N - 1
            F = dyn.map(count)(X[:, :count], U[:, :count], T[:, :count])
            args["f"], args["f_next"] = F[:, : N - 1], F[:, 1:]
        out = interval.map(N - 1)(**{name: args[name] for name in interval.name_in()})
        self.f = ca.sum2(out["cost"]) + self.terminal_cost(X[:, N - 1], U[:, N - 1], p[self.idx_p_term.tolist()])

        blocks: List[Tuple[ca.MX, RowBlock]] = []
        self.norm_fn = norm = unit_norm_residual(model)
        self.norm_knots = np.arange(1 if prob.x0 is not None else 0, N)  # a fixed x0 is unit already
        if norm is not None and self.norm_knots.size:
            blocks.append((norm.map(len(self.norm_knots))(X[:, self.norm_knots.tolist()]), RowBlock("norm", norm.size1_out(0), self.norm_knots)))
        points = self.transcription.interval_points(model)
        for i, (c, idx, idx_mid) in enumerate(zip(self.constraints, self.idx_p_con, self.idx_p_con_mid)):
            K = c.knots.tolist()
            blocks.append((c.function.map(len(K))(X[:, K], U[:, K], columns(p, idx)), RowBlock("constraint", c.size, c.knots, i)))
            intervals = c.midpoint_data()[0]
            for j, (xs, us) in enumerate(points if intervals.size else []):
                Zi = Z[:, intervals.tolist()]
                blocks.append((c.function.map(len(intervals))(Zi[xs, :], Zi[us, :], columns(p, idx_mid)), RowBlock("midpoint", c.size, intervals, i, j)))
        blocks.append((out["defect"], RowBlock("defect", out["defect"].shape[0], np.arange(N - 1))))
        blocks.append((out["residual"], RowBlock("residual", out["residual"].shape[0], np.arange(N - 1))))
        return blocks

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
    def parameters(self) -> np.ndarray:
        """Current parameter vector ``p`` from the problem's data."""
        prob, model = self.problem, self.problem.model
        constraints = self._current_constraints()
        p = np.zeros(self.p.shape[0])
        if self.idx_p_tf is not None:
            p[self.idx_p_tf] = prob.tf
        if self._running:
            P = np.hstack([c.params(model, prob.N) for c in self._running])
            Pm = np.hstack([c.midpoint_params(model, c.params(model, prob.N)) for c in self._running])
            p[self.idx_p_run], p[self.idx_p_mid] = P, Pm
        if self._terminal:
            p[self.idx_p_term] = np.hstack([c.params(model, prob.N).ravel() for c in self._terminal])
        for c, idx, idx_mid in zip(constraints, self.idx_p_con, self.idx_p_con_mid):
            p[idx], p[idx_mid] = c.params, c.midpoint_data()[3]
        return p

    def bounds_w(self) -> Tuple[np.ndarray, np.ndarray]:
        """Variable bounds ``(lbw, ubw)``: state/control bounds, interval bounds, fixed ``x_0``, ``tf``."""
        prob, tr = self.problem, self.transcription
        lb, ub = np.full(self.n_w, -np.inf), np.full(self.n_w, np.inf)
        lb[self.idx_x], ub[self.idx_x] = prob.state_lower, prob.state_upper
        nu_rows = self.n_controls
        lb[self.idx_u[:nu_rows]], ub[self.idx_u[:nu_rows]] = prob.control_lower[:nu_rows], prob.control_upper[:nu_rows]
        zl, zu = tr.interval_bounds(prob.model, (prob.state_lower, prob.state_upper), (prob.control_lower, prob.control_upper))
        lb[self.idx_z], ub[self.idx_z] = zl, zu
        if prob.x0 is not None:
            lb[self.idx_x[0]] = ub[self.idx_x[0]] = prob.x0
        if self.idx_tf is not None:
            lb[self.idx_tf], ub[self.idx_tf] = prob.tf.lower, prob.tf.upper
        return lb, ub

    def bounds_g(self) -> Tuple[np.ndarray, np.ndarray]:
        """Constraint bounds ``(lbg, ubg)`` in stage order (equalities are 0 = 0)."""
        constraints = self._current_constraints()
        lo, hi = [np.zeros(0)], [np.zeros(0)]
        for b in self.blocks:
            if b.kind == "constraint":
                c = constraints[b.constraint]
                lo.append(c.lower.ravel())
                hi.append(c.upper.ravel())
            elif b.kind == "midpoint":
                _, lower, upper, _ = constraints[b.constraint].midpoint_data()
                lo.append(lower.ravel())
                hi.append(upper.ravel())
            else:
                lo.append(np.zeros(b.rows * b.K))
                hi.append(np.zeros(b.rows * b.K))
        return np.concatenate(lo)[self.perm], np.concatenate(hi)[self.perm]

    def _current_constraints(self) -> list:
        """The problem's constraints resolved now (bounds and parameters may have changed since the build).

        Raises ``ValueError`` if the problem changed structure (horizon, free
        time, free x0, costs, constraint knots or sizes) since the build.
        """
        current = self.problem.resolved_constraints()
        same = self._structure() == self._signature and len(current) == len(self.constraints) and all(
            a.knots.tolist() == b.knots.tolist() and a.size == b.size and a.params.shape == b.params.shape and a.midpoints == b.midpoints
            for a, b in zip(current, self.constraints)
        )
        if not same:
            raise ValueError("problem: its structure changed since this NLP was built; build a new solver")
        return current

    def pack(self, states: np.ndarray, controls: np.ndarray, intervals: np.ndarray | None = None, tf: float | None = None) -> np.ndarray:
        """Decision vector from knot states (N, n), controls (N, nu), interval variables (N-1, nz), ``tf``.

        Missing interval variables come from the transcription's guess.
        """
        prob = self.problem
        w = np.zeros(self.n_w)
        w[self.idx_x] = states
        w[self.idx_u[: self.n_controls]] = controls[: self.n_controls]
        if intervals is None:
            intervals = self.transcription.interval_guess(prob.model, states, controls)
        w[self.idx_z] = intervals
        if self.idx_tf is not None:
            w[self.idx_tf] = prob.tf_guess if tf is None else tf
        return w

    def initial_guess(self) -> np.ndarray:
        """Decision vector of the problem's initial guess."""
        X, U = self.problem.initial_guess()
        return self.pack(X, U)

    def unpack(self, w: np.ndarray) -> Trajectory:
        """Knot states, controls, interval variables and ``tf`` of a decision vector."""
        w = np.asarray(w, dtype=float).reshape(-1)
        tf = float(w[self.idx_tf]) if self.idx_tf is not None else float(self.problem.tf)
        return Trajectory(w[self.idx_x].copy(), w[self.idx_u].copy(), w[self.idx_z].copy(), tf)

    def normalized(self, w: np.ndarray) -> np.ndarray:
        """``w`` with the quaternions of every knot and interval state scaled to unit norm."""
        w = np.array(w, dtype=float)
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

    def violation(self, w: np.ndarray, g: np.ndarray) -> Tuple[float, np.ndarray]:
        """Max violation of the bounds and constraints, and its per-knot max (N,).

        ``tf`` bound violations count in the max only (they belong to no knot).
        """
        lbw, ubw = self.bounds_w()
        lbg, ubg = self.bounds_g()
        vw = np.maximum(np.maximum(lbw - w, w - ubw), 0.0)
        vg = np.maximum(np.maximum(lbg - g, g - ubg), 0.0) if g.size else np.zeros(0)
        per_knot = np.zeros(self.problem.N)
        np.maximum.at(per_knot, self.var_stage[self.var_stage >= 0], vw[self.var_stage >= 0])
        if vg.size:
            np.maximum.at(per_knot, self.row_stage, vg)
        total = max(float(vw.max(initial=0.0)), float(vg.max(initial=0.0)))
        return total, per_knot
