"""NLP derivatives assembled from per-stage derivatives (gradient, Jacobian, Hessian of the Lagrangian).

The NLP is a sum of stage terms, each a function of a few variables only: one
interval (its knots, interval variables and ``tf`` if free), one knot (a user
constraint, a unit norm) or the final knot (terminal cost). A term's column
(one knot or interval) is

    (c, l) = term(v, q):   c its constraint rows, l its cost,   v its variables, q its parameters

For each term, SX functions give the nonzeros of ``dc/dv``, ``dl/dv`` and
``triu(d^2 (sigma l + lam^T c)/dv^2)`` of one column; they are mapped over the
columns and scattered into the global sparse matrices by one constant sparse
product each. Building them differentiates one small term at a time (never the
whole expanded NLP), so large models stay cheap to build, and each stage
function is the natural unit for code generation. Interval terms inline the
knot dynamics (the NLP's ``g`` shares ``f(x_k, u_k, t_k)`` between neighbouring
intervals): the same function of ``w``, so the derivatives are exact; the price
is that a knot's dynamics derivatives are evaluated by both of its intervals.

:func:`stagewise_derivatives` returns the ``grad_f``, ``jac_g`` and
``hess_lag`` options of ``casadi.nlpsol``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List

import casadi as ca
import numpy as np

from .layout import columns


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


def _term_function(name: str, v: Dict[str, ca.SX], q: Dict[str, ca.SX], c: ca.SX, l: Any) -> ca.Function:
    vv = ca.vertcat(*v.values()) if v else ca.SX(0, 1)
    qq = ca.vertcat(*q.values()) if q else ca.SX(0, 1)
    return ca.Function(name, [vv, qq], [c, ca.SX(l)], ["v", "q"], ["c", "l"])


def stage_terms(nlp: Any) -> List[StageTerm]:
    """The stage terms of a :class:`trajopt.nlp.NLP` (intervals, constraints, norms, terminal cost)."""
    prob, model = nlp.problem, nlp.problem.model
    N, nx, nu = prob.N, prob.nx, prob.nu
    sx = ca.SX.sym
    terms: List[StageTerm] = []

    # ---- intervals (knot dynamics inlined); t_k = k h, h = tf / (N - 1)
    fn, names = nlp.interval_fn, nlp.interval_fn.name_in()
    sizes = {"x": nx, "u": nu, "z": nlp.nz, "x_next": nx, "u_next": nu}
    v = {n: sx(n, sizes[n]) for n in sizes if n in names}
    tf, k = sx("tf"), sx("k")
    q: Dict[str, ca.SX] = {"k": k}
    if prob.free_time:
        v["tf"] = tf
    else:
        q["tf"] = tf
    for n in ("p", "p_mid", "p_next"):
        if n in names:
            q[n] = sx(n, nlp.idx_p_run.shape[1])
    h = tf / (N - 1)
    args = {**{n: s for n, s in v.items() if n != "tf"}, **{n: s for n, s in q.items() if n.startswith("p")}, "t": k * h, "h": h}
    if "f" in names:
        args["f"] = model.dynamics(v["x"], v["u"], k * h)
    if "f_next" in names:
        args["f_next"] = model.dynamics(v["x_next"], v["u_next"], (k + 1) * h)
    out = fn(**{n: args[n] for n in names})
    rows = {b.kind: nlp.block_rows(i) for i, b in enumerate(nlp.blocks) if b.kind in ("defect", "residual")}
    idx = {"x": nlp.idx_x[:-1], "u": nlp.idx_u[:-1], "z": nlp.idx_z, "x_next": nlp.idx_x[1:], "u_next": nlp.idx_u[1:], "tf": np.full((N - 1, 1), nlp.idx_tf)}
    P = columns(nlp.p, nlp.idx_p_run)
    qvals = {"k": ca.DM(np.arange(N - 1)).T, "tf": ca.repmat(nlp.p[int(nlp.idx_p_tf[0])], 1, N - 1) if not prob.free_time else None, "p": P[:, :-1], "p_mid": columns(nlp.p, nlp.idx_p_mid), "p_next": P[:, 1:]}
    terms.append(
        StageTerm(
            "interval",
            _term_function("interval_term", v, q, ca.vertcat(out["defect"], out["residual"]), out["cost"]),
            np.hstack([idx[n] for n in v]),
            ca.vertcat(*[qvals[n] for n in q]),
            np.hstack([rows["defect"], rows["residual"]]),
        )
    )

    # ---- knots: unit norms and user constraints
    xs, us = sx("x", nx), sx("u", nu)
    points = nlp.transcription.interval_points(model)
    for b, block in enumerate(nlp.blocks):
        if block.kind == "norm":
            fn_b = _term_function("norm_term", {"x": xs}, {}, nlp.norm_fn(xs), 0)
            terms.append(StageTerm("norm", fn_b, nlp.idx_x[nlp.norm_knots], ca.MX(0, block.K), nlp.block_rows(b)))
        elif block.kind in ("constraint", "midpoint"):
            c = nlp.constraints[block.constraint]
            pc = sx("p", c.params.shape[1])
            fn_b = _term_function(f"{c.function.name()}_term", {"x": xs, "u": us}, {"p": pc}, c.function(xs, us, pc), 0)
            if block.kind == "constraint":
                var_idx, params = np.hstack([nlp.idx_x[c.knots], nlp.idx_u[c.knots]]), columns(nlp.p, nlp.idx_p_con[block.constraint])
            else:
                z = nlp.idx_z[block.stages]
                x_sl, u_sl = points[block.point]
                var_idx, params = np.hstack([z[:, x_sl], z[:, u_sl]]), columns(nlp.p, nlp.idx_p_con_mid[block.constraint])
            terms.append(StageTerm(c.name, fn_b, var_idx, params, nlp.block_rows(b)))

    # ---- terminal cost
    pt = sx("p", nlp.idx_p_term.size)
    fn_t = _term_function("terminal_term", {"x": xs, "u": us}, {"p": pt}, ca.SX(0, 1), nlp.terminal_cost(xs, us, pt))
    terms.append(StageTerm("terminal", fn_t, np.hstack([nlp.idx_x[N - 1], nlp.idx_u[N - 1]]).reshape(1, -1), nlp.p[nlp.idx_p_term.tolist()], np.zeros((1, 0), dtype=int)))
    for term in terms:
        if any(len(set(row.tolist())) != len(row) for row in term.var_idx):
            raise AssertionError(f"stage term {term.name}: a variable appears twice in one column")
    return terms


def _scatter(values: List[ca.MX], rows: List[np.ndarray], cols: List[np.ndarray], shape: tuple) -> ca.MX:
    """Sparse ``shape`` matrix with ``values[i][j]`` added at ``(rows[i][j], cols[i][j])`` (duplicates sum)."""
    if not values:
        return ca.MX(*shape)
    rr, cc = np.concatenate(rows), np.concatenate(cols)
    S = ca.Sparsity.triplet(shape[0], shape[1], rr.tolist(), cc.tolist())
    target = S.get_nz((rr + cc * shape[0]).tolist())
    scatter = ca.DM(ca.Sparsity.triplet(S.nnz(), rr.size, target, list(range(rr.size))), 1.0)
    return ca.sparsity_cast(ca.mtimes(scatter, ca.vertcat(*values)), S)


def stagewise_derivatives(nlp: Any) -> Dict[str, ca.Function]:
    """``{"grad_f", "jac_g", "hess_lag"}``: ``casadi.nlpsol`` options computing the derivatives stage-wise."""
    terms = stage_terms(nlp)
    w, p, n_w, n_g = nlp.w, nlp.p, nlp.n_w, nlp.n_g
    sigma, lam = ca.MX.sym("lam_f"), ca.MX.sym("lam_g", n_g)
    grad = ([], [], [])
    jac = ([], [], [])
    hess = ([], [], [])
    for term in terms:
        v, q = term.fn.sx_in()
        c, l = term.fn(v, q)
        K = term.var_idx.shape[0]
        V = columns(w, term.var_idx)
        cols_w = term.var_idx
        # gradient of the cost
        if ca.depends_on(l, v):
            gl = ca.gradient(l, v)
            r = np.array(gl.sparsity().get_triplet()[0], dtype=int)
            g_fn = ca.Function(f"{term.fn.name()}_grad", [v, q], [ca.vertcat(*gl.nonzeros())])
            grad[0].append(ca.vec(g_fn.map(K)(V, term.params)))
            grad[1].append(cols_w[:, r].ravel())
            grad[2].append(np.zeros(K * r.size, dtype=int))
        # Jacobian of the rows
        if c.numel():
            J = ca.jacobian(c, v)
            jr, jc = J.sparsity().get_triplet()
            j_fn = ca.Function(f"{term.fn.name()}_jac", [v, q], [ca.vertcat(*J.nonzeros())])
            jac[0].append(ca.vec(j_fn.map(K)(V, term.params)))
            jac[1].append(term.rows[:, jr].ravel())
            jac[2].append(cols_w[:, jc].ravel())
        # Hessian of the term's Lagrangian
        lam_t, sig_t = ca.SX.sym("lam", c.numel()), ca.SX.sym("sigma")
        H = ca.triu(ca.hessian(sig_t * l + (ca.dot(lam_t, c) if c.numel() else 0), v)[0])
        hr, hc = H.sparsity().get_triplet()
        if hr:
            h_fn = ca.Function(f"{term.fn.name()}_hess", [v, q, lam_t, sig_t], [ca.vertcat(*H.nonzeros())])
            L = columns(lam, term.rows) if c.numel() else ca.MX(0, K)
            hess[0].append(ca.vec(h_fn.map(K)(V, term.params, L, sigma)))
            a, b = cols_w[:, hr], cols_w[:, hc]
            hess[1].append(np.minimum(a, b).ravel())
            hess[2].append(np.maximum(a, b).ravel())
    grad_f = ca.densify(_scatter(*grad, (n_w, 1)))
    jac_g = _scatter(*jac, (n_g, n_w))
    hess_l = _scatter(*hess, (n_w, n_w))
    return {
        "grad_f": ca.Function("nlp_grad_f", [w, p], [nlp.f, grad_f], ["x", "p"], ["f", "grad_f_x"]),
        "jac_g": ca.Function("nlp_jac_g", [w, p], [nlp.g, jac_g], ["x", "p"], ["g", "jac_g_x"]),
        "hess_lag": ca.Function("nlp_hess_l", [w, p, sigma, lam], [hess_l], ["x", "p", "lam_f", "lam_g"], ["hess_gamma_x_x"]),
    }
