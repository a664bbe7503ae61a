"""Local feedback gains of a solved horizon: a Riccati recursion on the solve's own linearization.

For an explicit transcription (multiple shooting) the NLP's gap rows of
interval ``k`` are ``g_k = d_(k+1) - F(d_k, u_k)`` in the knots' tangent
coordinates ``d`` (:mod:`trajopt.nlp`; ``d`` is the state itself for a
Euclidean state, the perturbation of the chart centre with tangent-chart
knots). With the charts centred on the trajectory (``d = 0``), the
constraint Jacobian holds

    A_k = -dg_k/dd_k,   B_k = -dg_k/du_k          (dg_k/dd_(k+1) = I),

the linearized dynamics ``delta d_(k+1) = A_k delta d_k + B_k delta u_k`` in
the tangent space, and the objective's Hessian (Gauss-Newton when the solve
used it) holds the stage weights ``Q_k = d^2 f / dd_k^2``, ``R_k = d^2 f /
du_k^2`` and ``S_k = d^2 f / du_k dd_k``. The discrete Riccati recursion

    P_(N-1) = Q_(N-1)
    K_k = (R_k + B_k^T P B_k + eps I)^-1 (S_k + B_k^T P A_k)
    P_k = Q_k + A_k^T P A_k - (S_k + B_k^T P A_k)^T K_k

gives the gains of ``u = u_k - K_k delta d``: the unconstrained optimal
feedback of the solve's local quadratic model (path constraints are not in
it, so an active torque limit is kept by clipping, :class:`~trajopt.mpc.plan.Plan`).
``eps = 1e-12`` keeps a singular ``R + B^T P B`` (a control without cost or
effect) solvable; the gains of a regular one move by ~1e-10 relative.

:class:`RiccatiGains` builds the block extraction and the recursion once, as
one CasADi function of the sparse Jacobian and Hessian (a receding horizon
linearizes the same NLP at every tick): no nonzero crosses into Python.
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from models.numeric_call import NonzeroCall

from ..solvers.stage_layout import StageLayout

#: ``eps``: the multiple of the identity added to ``R + B^T P B`` so that a singular one stays invertible.
REGULARIZATION = 1e-12


class RiccatiGains:
    """``(J, H_upper) -> K``: the discrete Riccati gains (N - 1, nu, m) of ``u = u_k - K_k delta d`` on the
    solve's linearized dynamics and Hessian, for an NLP in stage form
    whose constraint Jacobian has ``jac_sparsity`` and whose objective Hessian's upper triangle has
    ``hess_sparsity`` (:meth:`trajopt.NlpSolver.linearization`'s form)."""

    def __init__(self, nlp, layout: StageLayout, jac_sparsity: ca.Sparsity, hess_sparsity: ca.Sparsity) -> None:
        N, m, nu = nlp.problem.N, nlp.n_state, nlp.problem.nu
        self.shape = (N - 1, nu, m)
        J, Hu = ca.MX.sym("J", jac_sparsity), ca.MX.sym("H", hess_sparsity)
        H = ca.triu2symm(Hu)
        starts = np.cumsum([0] + [nx * (k < layout.K) + ng for k, (nx, ng) in enumerate(zip(layout.nx, layout.ng))])
        x_of = [nlp.idx_x[k].tolist() for k in range(N)]
        u_of = [nlp.idx_u[k].tolist() for k in range(N - 1)]
        P = H[x_of[-1], x_of[-1]]
        gains = [None] * (N - 1)
        for k in range(N - 2, -1, -1):
            gap = layout.rows[starts[k] : starts[k] + layout.nx[k]].tolist()
            A, B = -J[gap, x_of[k]], -J[gap, u_of[k]]
            PB = ca.mtimes(P, B)
            G = H[u_of[k], x_of[k]] + ca.mtimes(PB.T, A)
            K = ca.solve(H[u_of[k], u_of[k]] + ca.mtimes(B.T, PB) + REGULARIZATION * ca.MX.eye(nu), G)
            gains[k] = K
            P = H[x_of[k], x_of[k]] + ca.mtimes([A.T, P, A]) - ca.mtimes(G.T, K)
            P = 0.5 * (P + P.T)
        self.function = ca.Function("riccati_gains", [J, Hu], [ca.densify(ca.horzcat(*gains))], ["jac_g", "hess_upper"], ["K"])
        self._nonzero_call = NonzeroCall(self.function)

    def __call__(self, jac: ca.DM | np.ndarray, hess_upper: ca.DM | np.ndarray) -> np.ndarray:
        """The gains (N - 1, nu, m) from the numeric sparse Jacobian and upper Hessian: ``casadi.DM`` of their
        sparsities, or the vectors of their nonzeros (a real-time iteration's linearization, which then
        never crosses into CasADi's matrix types)."""
        N1, nu, m = self.shape
        if isinstance(jac, ca.DM):
            K = np.asarray(self.function(jac, hess_upper))  # (nu, (N - 1) m): interval k in columns k m .. (k + 1) m - 1
        else:
            K = self._nonzero_call(jac, hess_upper)[0].reshape(N1 * m, nu).T  # the dense output's nonzeros, column by column
        return K.reshape(nu, N1, m).transpose(1, 0, 2)
