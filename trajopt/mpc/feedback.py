"""Local feedback gains of a solved horizon: a Riccati recursion on the solve's own linearization.

For an explicit transcription (multiple shooting) the NLP's gap rows of
interval ``k`` are ``g_k = d_(k+1) - F(d_k, u_k)`` in the knots' tangent
coordinates ``d`` (:mod:`trajopt.nlp`; ``d`` is the state itself for a
Euclidean state, the perturbation of the chart centre with tangent-chart
knots). At the solution, with the charts centred on its states (``d = 0``),
the constraint Jacobian holds

    A_k = -dg_k/dd_k,   B_k = -dg_k/du_k          (dg_k/dd_(k+1) = I),

the linearized dynamics ``delta d_(k+1) = A_k delta d_k + B_k delta u_k`` in
the tangent space, and the objective's Hessian (Gauss-Newton when the solve
used it) holds the stage weights ``Q_k = d^2 f / dd_k^2``, ``R_k = d^2 f /
du_k^2`` and ``S_k = d^2 f / du_k dd_k``. The discrete Riccati recursion

    P_(N-1) = Q_(N-1)
    K_k = (R_k + B_k^T P B_k)^-1 (S_k + B_k^T P A_k)
    P_k = Q_k + A_k^T P A_k - (S_k + B_k^T P A_k)^T K_k

gives the gains of ``u = u_k - K_k delta d``: the unconstrained optimal
feedback of the solve's local quadratic model (path constraints are not in
it, so an active torque limit is kept by clipping, :class:`~trajopt.mpc.plan.Plan`).
``R_k + B^T P B`` is regularized by ``1e-9 max(1, |.|)`` where it is singular.

:class:`StageBlocks` reads the blocks out of the sparse Jacobian and Hessian
by index maps built once from their sparsity patterns (a receding horizon
solves the same NLP at every tick).
"""
from __future__ import annotations

from typing import Tuple

import casadi as ca
import numpy as np

from ..solvers.stage_layout import StageLayout

#: Relative regularization of a singular ``R + B^T P B``.
REGULARIZATION = 1e-9


def riccati_gains(A: np.ndarray, B: np.ndarray, Q: np.ndarray, R: np.ndarray, S: np.ndarray) -> np.ndarray:
    """Gains (N - 1, nu, m) of the recursion of the module docstring, from stacked ``A`` (N - 1, m, m),
    ``B`` (N - 1, m, nu), ``R`` (N - 1, nu, nu), ``S`` (N - 1, nu, m) and ``Q`` (N, m, m)."""
    P = Q[-1]
    gains = np.empty((A.shape[0], B.shape[2], A.shape[1]))
    for k in range(A.shape[0] - 1, -1, -1):
        PB = P @ B[k]
        H = R[k] + B[k].T @ PB
        H = 0.5 * (H + H.T)
        G = S[k] + PB.T @ A[k]
        try:
            gains[k] = np.linalg.solve(H, G)
        except np.linalg.LinAlgError:
            eps = REGULARIZATION * max(1.0, float(np.abs(H).max()))
            gains[k] = np.linalg.solve(H + eps * np.eye(H.shape[0]), G)
        P = Q[k] + A[k].T @ P @ A[k] - G.T @ gains[k]
        P = 0.5 * (P + P.T)
    return gains


class StageBlocks:
    """``A, B, Q, R, S`` of an NLP in stage form from its constraint Jacobian and the upper triangle of its
    objective Hessian (module docstring), for the sparsity patterns ``jac_sparsity`` and ``hess_sparsity``."""

    def __init__(self, nlp, layout: StageLayout, jac_sparsity: ca.Sparsity, hess_sparsity: ca.Sparsity) -> None:
        N, m, nu = nlp.problem.N, nlp.n_state, nlp.problem.nu
        self.shapes = {"A": (N - 1, m, m), "B": (N - 1, m, nu), "Q": (N, m, m), "R": (N - 1, nu, nu), "S": (N - 1, nu, m)}
        where = -np.ones((nlp.n_w, 2), dtype=int)  # variable -> (stage, index in its state or control block)
        kind = np.zeros(nlp.n_w, dtype="<U1")
        for k in range(N):
            where[nlp.idx_x[k]] = np.stack([np.full(m, k), np.arange(m)], axis=1)
            kind[nlp.idx_x[k]] = "x"
            if k < N - 1:
                where[nlp.idx_u[k]] = np.stack([np.full(nu, k), np.arange(nu)], axis=1)
                kind[nlp.idx_u[k]] = "u"
        starts = np.cumsum([0] + [nx * (k < layout.K) + ng for k, (nx, ng) in enumerate(zip(layout.nx, layout.ng))])
        gap_stage, gap_index = -np.ones(nlp.n_g, dtype=int), -np.ones(nlp.n_g, dtype=int)
        for k in range(N - 1):
            rows = layout.rows[starts[k] : starts[k] + layout.nx[k]]
            gap_stage[rows], gap_index[rows] = k, np.arange(layout.nx[k])
        # Jacobian: gap rows of stage k against the state and control of the same stage
        r, c = np.asarray(jac_sparsity.row()), np.asarray(jac_sparsity.get_col())
        same = (gap_stage[r] >= 0) & (where[c, 0] == gap_stage[r])
        self.jac = {}
        for name, letter in (("A", "x"), ("B", "u")):
            pick = np.flatnonzero(same & (kind[c] == letter))
            shape = self.shapes[name]
            self.jac[name] = (pick, np.ravel_multi_index((gap_stage[r[pick]], gap_index[r[pick]], where[c[pick], 1]), shape))
        # Hessian (upper triangle): each entry and its mirror, within one stage
        r, c = np.asarray(hess_sparsity.row()), np.asarray(hess_sparsity.get_col())
        both = np.concatenate([np.stack([r, c, np.arange(r.size)], 1), np.stack([c, r, np.arange(r.size)], 1)[r != c]])
        rr, cc, entry = both.T
        same = (where[rr, 0] >= 0) & (where[rr, 0] == where[cc, 0])
        self.hess = {}
        for name, (lr, lc) in (("Q", ("x", "x")), ("R", ("u", "u")), ("S", ("u", "x"))):
            pick = np.flatnonzero(same & (kind[rr] == lr) & (kind[cc] == lc))
            shape = self.shapes[name]
            self.hess[name] = (entry[pick], np.ravel_multi_index((where[rr[pick], 0], where[rr[pick], 1], where[cc[pick], 1]), shape))

    def __call__(self, jac: ca.DM, hess_upper: ca.DM) -> Tuple[np.ndarray, ...]:
        """``(A, B, Q, R, S)`` stacked (as :func:`riccati_gains` takes them) from the numeric matrices."""
        out = {}
        for values, maps, sign in ((np.asarray(jac.nonzeros()), self.jac, -1.0), (np.asarray(hess_upper.nonzeros()), self.hess, 1.0)):
            for name, (pick, target) in maps.items():
                block = np.zeros(int(np.prod(self.shapes[name])))
                np.add.at(block, target, sign * values[pick])
                out[name] = block.reshape(self.shapes[name])
        return out["A"], out["B"], out["Q"], out["R"], out["S"]
