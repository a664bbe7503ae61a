"""NLP derivatives assembled from per-stage derivatives (gradient, Jacobian, Hessian of the Lagrangian).

The NLP is a sum of stage terms, each a function of a few variables only: one
interval (its knots, interval variables and its phase's duration if the time is free), one knot (a user
constraint, a unit norm) or the final knot (terminal cost). A term's column
(one knot or interval) is

    (c, l) = term(v, q):   c its constraint rows, l its cost,   v its variables, q its parameters

For each term, SX functions give ``[c; l]`` and the nonzeros of ``dc/dv``,
``dl/dv`` and ``triu(d^2 (sigma l + lam^T c)/dv^2)`` of one column; they are
mapped over the columns and scattered into the global vectors and sparse
matrices (a permutation where every nonzero comes from one term, as in the
Jacobian; one constant sparse product where terms add up, as in the Hessian).
Building them differentiates one small term at a time (never the whole
expanded NLP), so large models stay cheap to build, and each stage function is
the unit of code generation (``compile=True``, cached on disk).
Interval terms inline the knot dynamics (the NLP's ``g`` shares
``f(x_k, u_k, t_k)`` between neighbouring intervals): the same function of
``w``, so the derivatives are exact; the price is that a knot's dynamics
derivatives are evaluated by both of its intervals (cheap for the
inverse-dynamics legged formulation, where ``f = [E(q) v; a]``; half of the
forward formulation's evaluation time, where ``f`` holds ABA).

Heavy mapped functions split their columns over ``threads`` threads
(``Function.map(K, "thread", n)``): at least :data:`THREAD_MIN_INSTRUCTIONS`
SX instructions over all columns on CasADi's virtual machine, ten times that
when compiled (compiled code runs faster per instruction). Below those sizes
thread start-up eats the gain. Design notes, with the measurements:
docs/design/solvers.md.

:func:`stagewise_nlp` returns the NLP function and the ``casadi.nlpsol``
options (``grad_f``, ``jac_g``, ``hess_lag``, :data:`NLPSOL_OPTIONS`);
:func:`stagewise_derivatives` the three derivative functions alone.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import casadi as ca
import numpy as np

from models.compiled import compile_functions

from ..layout import columns

#: Mapped VM functions with at least this many SX instructions (per call, all columns) run on
#: threads; compiled ones from ten times as many.
THREAD_MIN_INSTRUCTIONS = 200_000
#: Hessians of the Lagrangian the stage-wise derivatives can give (:func:`stagewise_nlp`).
HESSIANS = ("exact", "gauss-newton")
#: Key of the Lagrangian-gradient function among :func:`stagewise_nlp`'s functions (not an
#: ``nlpsol`` option: backends that take the gradient with the Hessian use it, :mod:`trajopt.solvers.fatrop`).
LAG_GRAD = "lag_grad"
#: Key of the first knot's path rows and their Jacobian among :func:`stagewise_nlp`'s functions
#: (``(w, p) -> (g_0, J_0)``, :func:`first_knot_rows`; not an ``nlpsol`` option: the real-time
#: iteration re-linearizes them at the measured state, :mod:`trajopt.solvers.rti`).
FIRST_KNOT = "first_knot_jac"
#: ``casadi.nlpsol`` options of the stage-wise NLP: CasADi must not differentiate the NLP graph
#: (compiled stage functions have no derivatives) just to recompute ``f``, ``g`` and the
#: multipliers after the solve; IPOPT's own final values (the same numbers) are returned.
NLPSOL_OPTIONS: Dict[str, Any] = {"no_nlp_grad": True, "calc_lam_p": False, "calc_lam_x": False, "calc_f": False, "calc_g": False}


@dataclass
class StageTerm:
    """One stage function mapped over K columns (module docstring).

    ``fn``: SX ``(v, q) -> (c, l)``; ``var_idx`` (K, n_v) indices into ``w``
    (no repeats within a column); ``params`` (n_q x K) MX; ``rows`` (K, n_c)
    indices into ``g``.
    """

    name: str
    fn: ca.Function
    var_idx: np.ndarray
    params: ca.MX
    rows: np.ndarray
    #: ``(v, q) -> (r, rest)`` with the term's cost ``l = 1/2 |r|^2 + rest`` (a Gauss-Newton
    #: Hessian's input, :func:`split_costs`), or ``None`` when it is not known
    gauss_newton: Optional[ca.Function] = None


def _term_function(name: str, v: Dict[str, Any], q: Dict[str, Any], c: Any, l: Any) -> ca.Function:
    """``(v, q) -> (c, l)`` of the stacked variables ``v`` and parameters ``q`` (SX or MX, like ``c``)."""
    kind = type(c)
    vv = ca.vertcat(*v.values()) if v else kind(0, 1)
    qq = ca.vertcat(*q.values()) if q else kind(0, 1)
    return ca.Function(name, [vv, qq], [c, kind(l) if not isinstance(l, kind) else l], ["v", "q"], ["c", "l"])


def stage_terms(nlp: Any) -> List[StageTerm]:
    """The stage terms of a :class:`trajopt.nlp.NLP` (intervals, constraints, norms, terminal cost).

    A knot's state enters a term as its variables: the state itself, or with
    tangent-chart knots (``nlp.chart``) the perturbation ``d`` of a chart
    centre ``xbar`` (a parameter of the term), ``x = apply_dx(xbar, d)``; the
    interval's rows are then the gap ``d_next - state_error(x_end, xbar_next)``.
    Symbols are the model's :attr:`~models.Model.symbol_type`.
    """
    prob, model = nlp.problem, nlp.problem.model
    N, nx, nu, ns, nd = prob.N, prob.nx, prob.nu, nlp.n_state, model.dynamics_param_dim
    sym = model.symbol_type.sym
    chart = nlp._chart_fns
    terms: List[StageTerm] = []
    X_centres = columns(nlp.p, nlp.idx_p_chart)

    def knot_state(name: str, v: Dict[str, Any], q: Dict[str, Any]) -> Any:
        """The state of knot variables ``v[name]`` (adding the chart centre ``q["xbar_" + name]``)."""
        v[name] = sym(name, ns)
        if chart is None:
            return v[name]
        q[f"xbar_{name}"] = sym(f"xbar_{name}", nx)
        return chart["retract"](q[f"xbar_{name}"], v[name])

    # ---- intervals (knot dynamics inlined); t_k = k h (phase durations need time-invariant dynamics: NLP), h: _knot_spacing
    fn, names = nlp.interval_fn, nlp.interval_fn.name_in()
    v: Dict[str, Any] = {}
    q: Dict[str, Any] = {"k": sym("k")}
    states = {n: knot_state(n, v, q) for n in ("x", "x_next") if n in names or (chart is not None and n == "x_next")}
    for n, size in (("u", nu), ("z", nlp.nz), ("u_next", nu)):
        if n in names:
            v[n] = sym(n, size)
    h = _knot_spacing(nlp, v, q)
    for n in ("p", "p_mid", "p_next"):
        if n in names:
            q[n] = sym(n, nlp.idx_p_run.shape[1])
    for n in ("d", "d_next"):
        if n in names or (n == "d" and "f" in names) or (n == "d_next" and "f_next" in names):
            q[n] = sym(n, nd)
    k = q["k"]
    args = {**{n: v[n] for n in ("u", "z", "u_next") if n in v}, **states, **{n: q[n] for n in q if n.startswith(("p", "d"))}, "t": k * h, "h": h}
    if "f" in names:
        args["f"] = model.parametric_dynamics(states["x"], v["u"], k * h, q.get("d"))
    if "f_next" in names:
        args["f_next"] = model.parametric_dynamics(states["x_next"], v["u_next"], (k + 1) * h, q.get("d_next"))
    out = fn(**{n: args[n] for n in names})
    if chart is not None:
        rows_c = chart["gap"](out["x_end"], v["x_next"], q["xbar_x_next"])
    else:
        rows_c = ca.vertcat(out["defect"], out["residual"])
    rows = {b.kind: nlp.block_rows(i) for i, b in enumerate(nlp.blocks) if b.kind in ("defect", "residual")}
    idx = {"x": nlp.idx_x[:-1], "u": nlp.idx_u[:-1], "z": nlp.idx_z, "x_next": nlp.idx_x[1:], "u_next": nlp.idx_u[1:], "duration": _duration_index(nlp, np.arange(N - 1))}
    P, D = columns(nlp.p, nlp.idx_p_run), columns(nlp.p, nlp.idx_p_dyn)
    qvals = {
        "k": ca.DM(np.arange(N - 1)).T, **_knot_spacing_values(nlp, np.arange(N - 1)),
        "p": P[:, :-1], "p_mid": columns(nlp.p, nlp.idx_p_mid), "p_next": P[:, 1:], "d": D[:, :-1], "d_next": D[:, 1:],
        "xbar_x": X_centres[:, :-1], "xbar_x_next": X_centres[:, 1:],
    }  # fmt: skip
    gauss_newton = None
    if nlp.transcription.knot_cost:  # cost = h l(x_k, u_k, p_k) = 1/2 |sqrt(h) r|^2 + h rest
        r, rest = nlp.running_split(states["x"], v["u"], q["p"])
        gauss_newton = _term_function("interval_term_gn", v, q, ca.sqrt(h) * r, h * rest)
    terms.append(
        StageTerm(
            "interval",
            _term_function("interval_term", v, q, rows_c, out["cost"]),
            np.hstack([idx[n] for n in v]),
            ca.vertcat(*[qvals[n] for n in q]),
            np.hstack([rows["defect"], rows["residual"]]),
            gauss_newton,
        )
    )

    # ---- knots: unit norms and user constraints
    points = nlp.transcription.interval_points(model)
    for b, block in enumerate(nlp.blocks):
        if block.kind == "norm":
            vk: Dict[str, Any] = {}
            qk: Dict[str, Any] = {}
            xs = knot_state("x", vk, qk)
            fn_b = _term_function("norm_term", vk, qk, nlp.norm_fn(xs), 0)
            terms.append(StageTerm("norm", fn_b, nlp.idx_x[nlp.norm_knots], ca.MX(0, block.K), nlp.block_rows(b)))
        elif block.kind in ("constraint", "midpoint"):
            c = nlp.constraints[block.constraint]
            vk, qk = {}, {}
            if block.kind == "constraint":
                xs = knot_state("x", vk, qk)
            else:  # interior collocation points hold plain states (no charts there)
                xs = vk["x"] = sym("x", nx)
            vk["u"] = us = sym("u", nu)
            qk["p"] = pc = sym("p", c.params.shape[1])
            fn_b = _term_function(f"{c.function.name()}_term", vk, qk, c.function(xs, us, pc), 0)
            if block.kind == "constraint":
                var_idx = np.hstack([nlp.idx_x[c.knots], nlp.idx_u[c.knots]])
                params = ca.vertcat(*([X_centres[:, c.knots.tolist()]] if chart is not None else []), columns(nlp.p, nlp.idx_p_con[block.constraint]))
            else:
                z = nlp.idx_z[block.stages]
                x_sl, u_sl = points[block.point]
                var_idx, params = np.hstack([z[:, x_sl], z[:, u_sl]]), columns(nlp.p, nlp.idx_p_con_mid[block.constraint])
            terms.append(StageTerm(c.name, fn_b, var_idx, params, nlp.block_rows(b)))
        elif block.kind == "interval":
            terms += _interval_constraint_terms(nlp, b, knot_state, X_centres)
        elif block.kind == "timing":  # linear rows of the durations alone
            vd = {"durations": sym("durations", nlp.timing.count)}
            fn_b = _term_function("timing_term", vd, {}, ca.mtimes(ca.DM(nlp.timing.rows), vd["durations"]), 0)
            terms.append(StageTerm("timing", fn_b, nlp.idx_durations[None, :], ca.MX(0, 1), nlp.block_rows(b)))
        elif block.kind == "control_hull":
            vh = {"u": sym("u", nu), "z": sym("z", nlp.nz), "u_next": sym("u_next", nu)}
            fn_b = _term_function("control_hull_term", vh, {}, nlp.control_points_fn(vh["u"], vh["z"], vh["u_next"]), 0)
            terms.append(StageTerm("control hull", fn_b, np.hstack([nlp.idx_u[:-1], nlp.idx_z, nlp.idx_u[1:]]), ca.MX(0, block.K), nlp.block_rows(b)))

    # ---- terminal cost
    vt: Dict[str, Any] = {}
    qt: Dict[str, Any] = {}
    xs = knot_state("x", vt, qt)
    vt["u"] = us = sym("u", nu)
    qt["p"] = pt = sym("p", nlp.idx_p_term.size)
    fn_t = _term_function("terminal_term", vt, qt, model.symbol_type(0, 1), nlp.terminal_cost(xs, us, pt))
    gn_t = _term_function("terminal_term_gn", vt, qt, *nlp.terminal_split(xs, us, pt))
    params_t = ca.vertcat(*([X_centres[:, N - 1]] if chart is not None else []), nlp.p[nlp.idx_p_term.tolist()])
    terms.append(StageTerm("terminal", fn_t, np.hstack([nlp.idx_x[N - 1], nlp.idx_u[N - 1]]).reshape(1, -1), params_t, np.zeros((1, 0), dtype=int), gn_t))
    for term in terms:
        if any(len(set(row.tolist())) != len(row) for row in term.var_idx):
            raise AssertionError(f"stage term {term.name}: a variable appears twice in one column")
    if sorted(np.concatenate([t.rows.ravel() for t in terms]).tolist()) != list(range(nlp.n_g)):
        raise AssertionError("stage terms: the rows of g are not covered exactly once")
    return terms


def _knot_spacing(nlp: Any, v: Dict[str, Any], q: Dict[str, Any]) -> Any:
    """The knot spacing ``h`` of an interval term: with a free time, ``tau / n`` of the variable
    ``v["duration"]`` (the duration of the interval's phase, ``tf`` for a free final time) and the
    parameter ``q["phase_intervals"]`` (its ``n`` intervals), else the parameter ``q["h"]``
    (:func:`_knot_spacing_values`), so that the term's functions depend neither on ``N`` nor on
    ``tf`` and problems that differ only in them share compiled code."""
    sym = nlp.problem.model.symbol_type.sym
    if nlp.timing is not None:
        v["duration"], q["phase_intervals"] = sym("duration"), sym("phase_intervals")
        return v["duration"] / q["phase_intervals"]
    q["h"] = sym("h")
    return q["h"]


def _knot_spacing_values(nlp: Any, intervals: np.ndarray) -> Dict[str, Any]:
    """The values of :func:`_knot_spacing`'s parameter on the columns of ``intervals``: ``{"h": ...}``, or with
    a free time ``{"phase_intervals": ...}`` (the count of intervals of each one's phase)."""
    if nlp.timing is not None:
        return {"phase_intervals": ca.DM(nlp.timing.intervals[nlp.timing.phase_of_interval[intervals]].astype(float)).T}
    return {"h": ca.repmat(nlp.p[int(nlp.idx_p_tf[0])] / (nlp.problem.N - 1), 1, len(intervals))}


def _duration_index(nlp: Any, intervals: np.ndarray) -> np.ndarray:
    """The entries of ``w`` (K, 1) holding the duration of each interval's phase (empty with a fixed ``tf``)."""
    if nlp.timing is None:
        return np.zeros((len(intervals), 0), dtype=int)
    return nlp.idx_durations[nlp.timing.phase_of_interval[intervals]][:, None]


def _interval_constraint_terms(nlp: Any, b: int, knot_state: Any, X_centres: ca.MX) -> List[StageTerm]:
    """The stage terms of row block ``b``, an interval constraint (:mod:`trajopt.interval_constraints`).

    A term's variables are those its rows read among ``x_k, u_k, z_k, x_(k+1),
    u_(k+1)`` and the duration of its phase when the time is free. Multiple shooting holds the last knot's control
    from knot ``N - 2``: there ``u_(k+1)`` is ``u_k``, so the last interval,
    when its rows read ``u_(k+1)``, gets its own term with ``u_k`` in its place.
    """
    prob, model = nlp.problem, nlp.problem.model
    N, nu, nd = prob.N, prob.nu, model.dynamics_param_dim
    block = nlp.blocks[b]
    c, fn, idx_p = nlp.constraints[block.constraint], nlp.interval_functions[block.constraint], nlp.idx_p_con[block.constraint]
    sym = model.symbol_type.sym
    v: Dict[str, Any] = {}
    q: Dict[str, Any] = {"k": sym("k")}
    x, x_next = knot_state("x", v, q), knot_state("x_next", v, q)
    v.update(u=sym("u", nu), z=sym("z", nlp.nz), u_next=sym("u_next", nu))
    h = _knot_spacing(nlp, v, q)
    q.update(d=sym("d", nd), d_next=sym("d_next", nd), p=sym("p", idx_p.shape[1]))
    rows = fn(x, v["u"], v["z"], x_next, v["u_next"], q["k"] * h, h, q["d"], q["d_next"], q["p"])
    used = {n: val for n, val in v.items() if val.numel() and ca.depends_on(rows, val)}
    ks = c.stages
    P, D = columns(nlp.p, idx_p), columns(nlp.p, nlp.idx_p_dyn)
    values = {"k": ca.DM(ks).T, **_knot_spacing_values(nlp, ks), "d": D[:, ks.tolist()], "d_next": D[:, (ks + 1).tolist()], "p": P, "xbar_x": X_centres[:, ks.tolist()], "xbar_x_next": X_centres[:, (ks + 1).tolist()]}
    idx = {"x": nlp.idx_x[ks], "u": nlp.idx_u[ks], "z": nlp.idx_z[ks], "x_next": nlp.idx_x[ks + 1], "u_next": nlp.idx_u[ks + 1], "duration": _duration_index(nlp, ks)}
    groups = [(np.ones(len(ks), dtype=bool), used, rows)]
    held = ks == N - 2
    if not nlp.transcription.final_control and "u_next" in used and held.any():
        alone = {n: val for n, val in used.items() if n != "u_next"}
        groups = [(~held, used, rows), (held, alone, ca.substitute(rows, v["u_next"], v["u"]))]
    rows_g = nlp.block_rows(b)
    terms = []
    for j, (cols, variables, expr) in enumerate(groups):
        if not cols.any():
            continue
        name = f"{fn.name()}_term" + ("" if j == 0 else "_held")
        params = ca.vertcat(*[values[n][:, np.flatnonzero(cols).tolist()] for n in q])
        var_idx = np.hstack([idx[n][cols] for n in variables]) if variables else np.zeros((int(cols.sum()), 0), dtype=int)
        terms.append(StageTerm(c.name, _term_function(name, variables, q, expr, 0), var_idx, params, rows_g[cols]))
    return terms


def _scatter(values: List[ca.MX], rows: List[np.ndarray], cols: List[np.ndarray], shape: tuple) -> ca.MX:
    """Sparse ``shape`` matrix with ``values[i][j]`` added at ``(rows[i][j], cols[i][j])`` (duplicates sum).

    Without duplicates the values are only permuted (an indexing node); with
    them, one constant sparse product sums them.
    """
    if not values:
        return ca.MX(*shape)
    rr, cc = np.concatenate(rows), np.concatenate(cols)
    S = ca.Sparsity.triplet(shape[0], shape[1], rr.tolist(), cc.tolist())
    target = np.array(S.get_nz((rr + cc * shape[0]).tolist()), dtype=int)
    stacked = ca.vertcat(*values)
    if S.nnz() == rr.size:
        source = np.empty(rr.size, dtype=int)
        source[target] = np.arange(rr.size)
        return ca.sparsity_cast(stacked[source.tolist()], S)
    scatter = ca.DM(ca.Sparsity.triplet(S.nnz(), rr.size, target.tolist(), list(range(rr.size))), 1.0)
    return ca.sparsity_cast(ca.mtimes(scatter, stacked), S)


@dataclass
class _Piece:
    """One function of one stage term (SX, or its compiled version), mapped over the term's K columns.

    ``fn`` (one column) has one or two outputs, each a vector of nonzeros;
    output ``i`` goes to positions ``targets[i] = (rows, cols)`` (K, nnz each)
    of a global vector or matrix. ``inputs`` are its mapped arguments (one
    column per stage). The mapped call is made once (:meth:`outputs`), so a
    function giving a value and its derivative evaluates their shared
    expressions once. ``threads``: how many threads evaluate the columns;
    ``instructions``: the SX instruction count of one column (kept when
    ``fn`` is replaced by its compiled version).
    """

    fn: ca.Function
    inputs: List[Any]
    targets: List[Tuple[np.ndarray, np.ndarray]]
    threads: int = 1
    instructions: int = field(init=False)
    _outputs: Any = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.instructions = self.fn.n_instructions()

    @property
    def K(self) -> int:
        """Number of columns (stages) the function is mapped over."""
        return self.targets[0][0].shape[0]

    def outputs(self) -> List[ca.MX]:
        """The mapped outputs, each ``(nnz * K, 1)`` column by column (one call node shared by all users)."""
        if self._outputs is None:
            threads = min(self.threads, self.K)
            mapped = self.fn.map(self.K, "thread", threads) if threads > 1 else self.fn.map(self.K)
            out = mapped(*self.inputs)
            self._outputs = [ca.vec(o) for o in (out if isinstance(out, (list, tuple)) else [out])]
        return self._outputs


def available_cores() -> int:
    """CPU cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _set_threads(pieces: List[_Piece], threads: int) -> None:
    """Give the heavy pieces (:data:`THREAD_MIN_INSTRUCTIONS`) ``threads`` threads; the others stay serial."""
    for piece in pieces:
        minimum = THREAD_MIN_INSTRUCTIONS * (1 if piece.fn.is_a("SXFunction") else 10)
        piece.threads = threads if piece.instructions * piece.K >= minimum else 1


def _parameter_pruned(name: str, v: Any, q: Any, extra: Sequence[Any], outputs: List[Any]) -> Tuple[ca.Function, np.ndarray]:
    """``(v, q_used, *extra) -> outputs`` with ``q_used`` the entries of the parameters ``q`` that the
    outputs depend on, and their indices in ``q``. A stage function then carries no parameter it does
    not read (a term's Jacobian none of its cost references), so problems whose data differ only
    there share its compiled library."""
    used = np.flatnonzero(ca.which_depends(ca.vertcat(*[ca.vec(o) for o in outputs]), q, 1, False)) if q.numel() else np.zeros(0, dtype=int)
    kind = type(q)
    q_used = kind.sym("q", used.size)
    spread = ca.DM(ca.Sparsity.triplet(q.numel(), used.size, used.tolist(), list(range(used.size))), 1.0)  # q = spread q_used where it matters
    full = ca.Function("full", [v, q, *extra], outputs)
    return ca.Function(name, [v, q_used, *extra], full.call([v, ca.mtimes(spread, q_used), *extra])), used


def _pieces(nlp: Any, sigma: ca.MX, lam: ca.MX, hessian: str = "exact", lag_grad: bool = True) -> Dict[str, List[_Piece]]:
    """Every stage term's pieces: ``"g"`` (the rows), ``"f"`` (the cost, summed into a 1-vector),
    ``"grad"`` (the cost and its gradient), ``"jac"`` (the rows and their
    Jacobian), ``"hess"``. The value pieces compute only what they output, so
    ``f`` never evaluates the defects and ``g`` never the costs; the derivative
    pieces output their value too, which the same call computes on the way
    (IPOPT asks for ``f`` with the gradient and ``g`` with the Jacobian).

    ``hessian``: ``"exact"`` (the Hessian of each term's Lagrangian) or
    ``"gauss-newton"`` (:data:`HESSIANS`). Terms built on MX (models whose
    dynamics carry custom Jacobians) are differentiated on MX, where CasADi
    uses those Jacobians, and the derivative functions expanded to SX.
    ``lag_grad``: build the ``"lag_grad"`` pieces (:data:`LAG_GRAD`).
    """
    pieces: Dict[str, List[_Piece]] = {"g": [], "f": [], "grad": [], "jac": [], "hess": [], "lag_grad": []}
    for term in stage_terms(nlp):
        mx = term.fn.is_a("MXFunction")
        kind = ca.MX if mx else ca.SX

        v, q = term.fn.mx_in() if mx else term.fn.sx_in()

        def function(name: str, outputs: List[Any], *extra: Any) -> Tuple[ca.Function, Any]:
            """:func:`_parameter_pruned` of the term's symbols (expanded to SX for MX terms) and its mapped parameters."""
            fn, used = _parameter_pruned(name, v, q, extra, outputs)
            return (fn.expand() if mx else fn), term.params[used.tolist(), :]

        c, l = term.fn(v, q)
        K, cols_w, name = term.var_idx.shape[0], term.var_idx, term.fn.name()
        V = columns(nlp.w, cols_w)
        zeros = np.zeros((K, 1), dtype=int)
        value_targets = {"c": (term.rows, np.zeros_like(term.rows)), "l": (zeros, zeros)}
        if c.numel():
            J = ca.jacobian(c, v)
            jr, jc = J.sparsity().get_triplet()
            fn, params = function(f"{name}_g", [c])
            pieces["g"].append(_Piece(fn, [V, params], [value_targets["c"]]))
            fn, params = function(f"{name}_jac", [c, ca.vertcat(*J.nonzeros())])
            pieces["jac"].append(_Piece(fn, [V, params], [value_targets["c"], (term.rows[:, jr], cols_w[:, jc])]))
        has_cost = not l.is_zero()
        if has_cost:
            gl = ca.gradient(l, v)
            r = np.array(gl.sparsity().get_triplet()[0], dtype=int)
            fn, params = function(f"{name}_f", [l])
            pieces["f"].append(_Piece(fn, [V, params], [value_targets["l"]]))
            fn, params = function(f"{name}_grad", [l, ca.vertcat(*gl.nonzeros())])
            pieces["grad"].append(_Piece(fn, [V, params], [value_targets["l"], (cols_w[:, r], np.zeros((K, r.size), dtype=int))]))
        lam_t, sig_t = kind.sym("lam", c.numel()), kind.sym("sigma")  # Hessian of the term's Lagrangian (upper triangle)
        if hessian == "exact":
            H = ca.triu(ca.hessian(sig_t * l + (ca.dot(lam_t, c) if c.numel() else 0), v)[0])
        elif not has_cost:
            H = kind(v.numel(), v.numel())
        elif term.gauss_newton is None:
            raise ValueError(f"hessian: a Gauss-Newton Hessian needs costs at the knots; the {term.name} cost of {nlp.transcription.name!r} integrates through the dynamics (use a '_knot_cost' multiple shooting or hessian='exact')")
        else:
            res, rest = term.gauss_newton(v, q)
            Jr = ca.jacobian(res, v)
            H = ca.triu(sig_t * (ca.mtimes(Jr.T, Jr) + ca.hessian(rest, v)[0]))
        hr, hc = H.sparsity().get_triplet()
        L = columns(lam, term.rows) if c.numel() else ca.MX(0, K)
        if hr:
            fn, params = function(f"{name}_hess", [ca.vertcat(*H.nonzeros())], lam_t, sig_t)
            a, b = cols_w[:, hr], cols_w[:, hc]
            pieces["hess"].append(_Piece(fn, [V, params, L, sigma], [(np.minimum(a, b), np.maximum(a, b))]))
        if lag_grad and (c.numel() or has_cost):  # gradient of the term's Lagrangian by one reverse sweep of its (SX) value
            value = term.fn.expand() if mx else term.fn
            vs, qs = value.sx_in()
            cs, ls = value(vs, qs)
            lam_s, sig_s = ca.SX.sym("lam", cs.numel()), ca.SX.sym("sigma")
            glag = ca.jtimes(sig_s * ls + (ca.dot(lam_s, cs) if cs.numel() else 0), vs, ca.SX.ones(1), True)
            r = np.array(glag.sparsity().get_triplet()[0], dtype=int)
            fn, used = _parameter_pruned(f"{name}_lag_grad", vs, qs, (lam_s, sig_s), [ca.vertcat(*glag.nonzeros())])
            pieces["lag_grad"].append(_Piece(fn, [V, term.params[used.tolist(), :], L, sigma], [(cols_w[:, r], np.zeros((K, r.size), dtype=int))]))
    return pieces


def _assemble(pieces: List[_Piece], shape: tuple, output: int = 0) -> ca.MX:
    """Output ``output`` of the pieces, mapped over their columns and scattered into one ``shape`` matrix."""
    targets = [piece.targets[output] for piece in pieces]
    return _scatter([piece.outputs()[output] for piece in pieces], [r.ravel() for r, _ in targets], [c.ravel() for _, c in targets], shape)


def _first_knot_jacobian(nlp: Any, pieces: List[_Piece]) -> ca.Function:
    """``(w, p) -> (g_0, J_0)``: the path rows of the first knot (:data:`FIRST_KNOT`) and their Jacobian (rows x n_w),
    from the columns of the row pieces ``pieces`` that hold only such rows, each called on that column alone."""
    rows = first_knot_rows(nlp)
    position = np.full(nlp.n_g, -1)
    position[rows] = np.arange(rows.size)
    values, jacobians = [], []
    for piece in pieces:
        (value_rows, _), (jac_rows, jac_cols) = piece.targets
        for k in np.flatnonzero((position[value_rows] >= 0).all(axis=1)):
            c, nonzeros = piece.fn(*[argument[:, int(k)] for argument in piece.inputs])
            values.append((c, position[value_rows[k]]))
            jacobians.append((nonzeros, position[jac_rows[k]], jac_cols[k]))
    if sorted(np.concatenate([r for _, r in values] or [np.zeros(0, dtype=int)]).tolist()) != list(range(rows.size)):
        raise AssertionError("the first knot's path rows are not covered exactly once by single-knot columns")
    g = _scatter([v for v, _ in values], [r for _, r in values], [np.zeros_like(r) for _, r in values], (rows.size, 1))
    jac = _scatter([v for v, _, _ in jacobians], [r for _, r, _ in jacobians], [c for _, _, c in jacobians], (rows.size, nlp.n_w))
    return ca.Function("nlp_first_knot_jac", [nlp.w, nlp.p], [ca.densify(g), jac], ["x", "p"], ["g", "jac_g_x"])


def first_knot_rows(nlp: Any) -> np.ndarray:
    """The rows of ``g`` (increasing) that are the first knot's path constraints: every row of stage 0 but the
    first interval's dynamics (its defects and interval residuals)."""
    dynamics = np.concatenate([nlp.block_rows(i).ravel() for i, b in enumerate(nlp.blocks) if b.kind in ("defect", "residual")] or [np.zeros(0, dtype=int)])
    first = np.asarray(nlp.row_stage) == 0
    first[dynamics] = False
    return np.flatnonzero(first)


def stage_functions(nlp: Any, hessian: str = "exact", lag_grad: bool = True) -> List[ca.Function]:
    """Every SX stage function of ``nlp`` (each term's value and derivatives): what ``compile=True`` compiles."""
    pieces = _pieces(nlp, ca.MX.sym("lam_f", 1), ca.MX.sym("lam_g", nlp.n_g), hessian, lag_grad)
    return [piece.fn for kind in pieces.values() for piece in kind]


def stagewise_nlp(nlp: Any, compile: bool = False, threads: int = 1, hessian: str = "exact", lag_grad: bool = True) -> Tuple[ca.Function, Dict[str, Any]]:
    """The NLP ``(x, p) -> (f, g)`` and its ``casadi.nlpsol`` options: ``grad_f``, ``jac_g``, ``hess_lag`` and :data:`NLPSOL_OPTIONS`.

    ``f`` is summed from the terms' cost functions and ``g`` scattered from
    their row functions, so evaluating the objective (or its gradient) never
    evaluates the defects, nor the constraints the costs. With ``compile`` every stage function,
    the values as well as the derivatives, is generated as C and compiled
    (:func:`models.compiled.compile_functions`: in parallel, cached on disk,
    never rebuilt while unchanged, left on CasADi's virtual machine with a
    :class:`models.compiled.CompilerWarning` when it cannot be compiled). The
    compiled code performs the same operations as the virtual machine, so
    both give the same numbers. With ``lag_grad`` the functions also hold :data:`LAG_GRAD`, the
    gradient of the Lagrangian ``sigma grad f + J^T lam`` by one reverse sweep
    of each stage's value (a backend that takes it with the Hessian, fatrop,
    would otherwise evaluate the whole Jacobian twice per iteration). They
    always hold :data:`FIRST_KNOT`, the first knot's path rows and their
    Jacobian. Pop both before handing the rest to ``casadi.nlpsol``. A backend that does not use
    it passes ``lag_grad=False``: its stage functions are then neither built nor
    compiled (on the legged MPC horizon problem, 139k of the 752k SX
    instructions that ``compile=True`` would give to gcc). ``threads`` (>= 1): threads for the heavy
    maps (module docstring); the numbers do not depend on it. ``hessian``
    (:data:`HESSIANS`): ``"exact"``, or ``"gauss-newton"``: the constraints'
    curvature dropped and each cost ``1/2 |r|^2 + rest`` taken as ``J_r^T J_r +
    d^2 rest`` (needs costs at the knots; positive semi-definite when every
    cost is least squares, as crocoddyl's DDP solvers assume).
    """
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise ValueError(f"threads: expected an int >= 1, got {threads!r}")
    if hessian not in HESSIANS:
        raise ValueError(f"hessian: expected one of {HESSIANS}, got {hessian!r}")
    w, p, n_w, n_g = nlp.w, nlp.p, nlp.n_w, nlp.n_g
    sigma, lam = ca.MX.sym("lam_f", 1), ca.MX.sym("lam_g", n_g)
    pieces = _pieces(nlp, sigma, lam, hessian, lag_grad)
    every = [piece for kind in pieces.values() for piece in kind]
    first_knot = _first_knot_jacobian(nlp, pieces["jac"]).expand()  # one SX function of the first knot's columns: called at every feedback
    if compile:
        compiled = compile_functions([piece.fn for piece in every] + [first_knot], progress=sys.stderr, what="stage functions")
        for piece, fn in zip(every, compiled):
            piece.fn = fn
        first_knot = compiled[-1]
    _set_threads(every, int(threads))
    f = ca.densify(_assemble(pieces["f"], (1, 1)))
    g = ca.densify(_assemble(pieces["g"], (n_g, 1)))
    f_grad = ca.densify(_assemble(pieces["grad"], (1, 1)))
    grad = ca.densify(_assemble(pieces["grad"], (n_w, 1), output=1))
    g_jac = ca.densify(_assemble(pieces["jac"], (n_g, 1)))
    jac = _assemble(pieces["jac"], (n_g, n_w), output=1)
    functions = {
        "grad_f": ca.Function("nlp_grad_f", [w, p], [f_grad, grad], ["x", "p"], ["f", "grad_f_x"]),
        "jac_g": ca.Function("nlp_jac_g", [w, p], [g_jac, jac], ["x", "p"], ["g", "jac_g_x"]),
        "hess_lag": ca.Function("nlp_hess_l", [w, p, sigma, lam], [_assemble(pieces["hess"], (n_w, n_w))], ["x", "p", "lam_f", "lam_g"], ["hess_gamma_x_x"]),
    }
    functions[FIRST_KNOT] = first_knot
    if lag_grad:
        functions[LAG_GRAD] = ca.Function("nlp_lag_grad", [w, p, sigma, lam], [ca.densify(_assemble(pieces["lag_grad"], (n_w, 1)))], ["x", "p", "lam_f", "lam_g"], ["grad_gamma_x"])
    return ca.Function("nlp", [w, p], [f, g], ["x", "p"], ["f", "g"]), {**functions, **NLPSOL_OPTIONS}


def stagewise_derivatives(nlp: Any, compile: bool = False, threads: int = 1, hessian: str = "exact") -> Dict[str, ca.Function]:
    """``{"grad_f", "jac_g", "hess_lag", "lag_grad"}``: the derivative functions of :func:`stagewise_nlp`."""
    options = stagewise_nlp(nlp, compile, threads, hessian)[1]
    return {name: options[name] for name in ("grad_f", "jac_g", "hess_lag", LAG_GRAD)}
