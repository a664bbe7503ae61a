"""Variable scaling: the decision vector in units where the constraint Jacobian is equilibrated.

A legged robot's NLP mixes metres, radians, newtons, newton-metres and
rad/s^2 in one decision vector ``w``. Its KKT matrix is then badly scaled,
and an interior-point solver's numerical decisions (the inertia MUMPS
reports, the pivots, the regularization that follows) change with round-off:
the same problem took different paths, and different numbers of iterations,
from starting points 1e-9 apart or on another CPU. Solving for scaled
variables ``w = D w~`` instead, with a diagonal ``D`` that equilibrates the
constraint Jacobian, removes that dependence (docs/design/solvers.md).

:func:`equilibrated_scale` computes ``D`` from the Jacobian ``J`` at the
starting point: Ruiz's equilibration (rows and columns of ``|J|`` divided by
the square roots of their largest entries, repeated) gives column factors
``c``; the variables of one coordinate (the same state, control or interval
entry at every knot) share the geometric mean of theirs, so the scale of a
coordinate does not depend on the knot; ``D = 1 / c`` rounded to a power of
two, so that scaling and unscaling are exact in floating point and a change
of the starting point by round-off leaves ``D`` unchanged. The rows are not
scaled: constraint violations keep their units.

:func:`scaled_functions` and :func:`scaled_graph` wrap a backend's NLP and
derivative functions for ``w~``; the backend converts starting points,
bounds and multipliers (:meth:`trajopt.solvers.base.NlpSolver._run`).

:func:`control_bound_scale` is the real-time iteration's scale
(:mod:`trajopt.solvers.rti`): each control in units of its largest bound,
capped by the cost's curvature, the rest as they are.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Sequence, Tuple

import casadi as ca
import numpy as np
import scipy.sparse as sp

#: Sweeps of Ruiz's equilibration (each halves the logarithm of every row's and column's largest entry).
RUIZ_SWEEPS = 30


def equilibrated_scale(jacobian: Any, fixed: np.ndarray, coordinates: Sequence[np.ndarray], sweeps: int = RUIZ_SWEEPS) -> np.ndarray:
    """The scale ``D`` (n,) of ``w = D w~`` (module docstring).

    ``jacobian``: the constraint Jacobian (m x n, a CasADi or scipy sparse
    matrix) at the starting point; ``fixed`` (n,): variables whose bounds are
    equal (left out of the equilibration, scaled like their coordinate);
    ``coordinates``: index arrays (K, d), column ``j`` of each holding the
    variables of one coordinate at every knot, which share one scale.
    Variables in no coordinate keep their own.
    """
    A = abs(_as_scipy(jacobian)).tocsc()
    n = A.shape[1]
    free = ~np.asarray(fixed, dtype=bool)
    A = A @ sp.diags(free.astype(float))
    log_c = np.zeros(n)
    log_r = np.zeros(A.shape[0])
    for _ in range(sweeps):
        B = sp.diags(2.0 ** -log_r) @ A @ sp.diags(2.0 ** -log_c)
        rows = B.max(axis=1).toarray().ravel()
        cols = B.max(axis=0).toarray().ravel()
        log_r += 0.5 * np.log2(np.where(rows > 0, rows, 1.0))
        log_c += 0.5 * np.log2(np.where(cols > 0, cols, 1.0))
    for idx in coordinates:
        idx = np.asarray(idx, dtype=int).reshape(len(idx), -1)
        for column in idx.T:
            moving = column[free[column]]
            log_c[column] = log_c[moving].mean() if moving.size else 0.0
    return 2.0 ** -np.round(log_c)


def control_bound_scale(lbw: np.ndarray, ubw: np.ndarray, controls: np.ndarray, curvature: Optional[np.ndarray] = None) -> np.ndarray:
    """The scale ``D`` (n,) of ``w = D w~`` that puts each control (the entries ``controls`` of ``w``) in
    units of its largest bound: ``D_i = 2^round(log2 max(|lb_i|, |ub_i|))`` where that bound is finite and
    positive, 1 for every other entry. A power of two, so that scaling and unscaling are exact.

    ``curvature`` (n,), the diagonal of the cost's Hessian at the starting point (or ``None``), caps that
    unit where it is positive: ``D_i <= 2^round(log2(1 / sqrt(H_ii)))``, the unit in which the cost's
    quadratic term in ``w~_i`` is of order one. A bound far larger than the controls the cost asks for
    (a URDF's placeholder limit) then does not set the unit."""
    scale = np.ones(np.size(lbw))
    idx = np.asarray(controls, dtype=int).ravel()
    largest = np.maximum(np.abs(np.asarray(lbw, dtype=float)[idx]), np.abs(np.asarray(ubw, dtype=float)[idx]))
    bounded = np.isfinite(largest) & (largest > 0)
    log_scale = np.where(bounded, np.round(np.log2(np.where(bounded, largest, 1.0))), 0.0)
    if curvature is not None:
        h = np.asarray(curvature, dtype=float).reshape(-1)[idx]
        curved = bounded & np.isfinite(h) & (h > 0)
        log_scale[curved] = np.minimum(log_scale[curved], np.round(-0.5 * np.log2(h[curved])))
    scale[idx] = 2.0 ** log_scale
    return scale


def _as_scipy(matrix: Any) -> sp.spmatrix:
    """A CasADi sparse matrix (or anything scipy takes) as a scipy sparse matrix."""
    if isinstance(matrix, (ca.DM, ca.Sparsity)) or hasattr(matrix, "sparsity"):
        dm = ca.DM(matrix)
        rows, cols = dm.sparsity().get_triplet()
        return sp.csc_matrix((np.asarray(dm.nonzeros(), dtype=float), (rows, cols)), shape=dm.shape)
    return sp.csc_matrix(matrix)


def scaled_functions(nlp_function: ca.Function, options: Dict[str, Any], scale: np.ndarray) -> Tuple[ca.Function, Dict[str, Any]]:
    """The stage-wise NLP ``(x, p) -> (f, g)`` and its ``casadi.nlpsol`` derivative options
    (``grad_f``, ``jac_g``, ``hess_lag``) for ``x = w~`` with ``w = scale * w~``: the gradient is
    ``D grad f``, the Jacobian ``J D``, the Hessian of the Lagrangian ``D H D``."""
    n = scale.size
    D = ca.DM(scale)
    xs, p = ca.MX.sym("x", n), ca.MX.sym("p", nlp_function.size1_in(1))
    w = D * xs
    f, g = nlp_function(w, p)
    scaled = dict(options)
    scaled_nlp = ca.Function("nlp_scaled", [xs, p], [f, g], ["x", "p"], ["f", "g"])
    if "grad_f" in options:
        f_g, grad = options["grad_f"](w, p)
        scaled["grad_f"] = ca.Function("nlp_grad_f_scaled", [xs, p], [f_g, D * grad], ["x", "p"], ["f", "grad_f_x"])
    if "jac_g" in options:
        g_j, jac = options["jac_g"](w, p)
        scaled["jac_g"] = ca.Function("nlp_jac_g_scaled", [xs, p], [g_j, ca.mtimes(jac, ca.diag(D))], ["x", "p"], ["g", "jac_g_x"])
    if "hess_lag" in options:
        lam_f, lam_g = ca.MX.sym("lam_f"), ca.MX.sym("lam_g", options["hess_lag"].size1_in(3))
        H = options["hess_lag"](w, p, lam_f, lam_g)
        scaled["hess_lag"] = ca.Function("nlp_hess_l_scaled", [xs, p, lam_f, lam_g], [ca.triu(ca.mtimes(ca.mtimes(ca.diag(D), H), ca.diag(D)))], ["x", "p", "lam_f", "lam_g"], ["hess_gamma_x_x"])
    return scaled_nlp, scaled


def scaled_graph(nlp: Dict[str, Any], scale: np.ndarray) -> Dict[str, Any]:
    """An NLP given as expressions ``{"x", "p", "f", "g"}`` rewritten for ``x = w~`` (``w = scale * w~``)."""
    F = ca.Function("nlp_unscaled", [nlp["x"], nlp["p"]], [nlp["f"], nlp["g"]])
    xs = ca.MX.sym("x", scale.size)
    f, g = F(ca.DM(scale) * xs, nlp["p"])
    return {"x": xs, "p": nlp["p"], "f": f, "g": g}
