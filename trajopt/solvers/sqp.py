"""The SQP backend: CasADi's ``sqpmethod`` with the HPIPM QP solver (a Riccati interior point per QP).

Each SQP iteration linearizes the constraints and takes the quadratic model of
the Lagrangian (:mod:`trajopt.solvers.derivatives`: the exact Hessian, or Gauss-Newton
``hessian="gauss-newton"``), and HPIPM solves that QP stage by stage (the
structure acados uses). The QP must have the stage form of
:mod:`trajopt.solvers.stage_layout` (explicit gaps; tangent-chart knots for states with
rotations) and a convex cost: a Gauss-Newton Hessian is positive
semi-definite when every cost is least squares; an exact Hessian is made so
by ``sqpmethod``'s ``convexify_strategy`` ("regularize" by default here).
A line search on the l1 merit function globalizes the steps.

Stopping: primal infeasibility below ``tol_pr`` and dual below ``tol_du``
(:data:`DEFAULT_SQP_OPTIONS`), at most ``max_iter`` SQP iterations and
``iter_max`` HPIPM iterations per QP (:data:`DEFAULT_HPIPM_OPTIONS`; infinite
bounds reach HPIPM as :data:`HPIPM_INFINITY`); a QP that
HPIPM does not solve ends the solve with a failed status. Warm starts are
primal-dual (``sqpmethod`` reads initial multipliers).

``options`` given to :class:`SqpSolver` are ``sqpmethod``'s, with HPIPM's own
under the key ``"hpipm"``.
"""
from __future__ import annotations

from typing import Any, Dict

import casadi as ca
import numpy as np

from ..nlp import NLP
from .base import NlpSolver
from .derivatives import NLPSOL_OPTIONS
from .options import casadi_message
from .stage_layout import InStageOrder, StageLayout, stage_layout

#: ``sqpmethod`` options used unless overridden: HPIPM as the QP solver, 200 iterations, tolerances 1e-8.
DEFAULT_SQP_OPTIONS: Dict[str, Any] = {
    "max_iter": 200,
    "tol_pr": 1e-8,
    "tol_du": 1e-8,
    "min_step_size": 1e-14,
    "print_header": False,
    "print_iteration": False,
    "print_status": False,
}
#: Magnitude that stands for an infinite bound in HPIPM's QPs (CasADi's ``inf``
#: option of its ``hpipm`` plugin, default 1e8). The QP's variables are the
#: steps, so this caps each step of an unbounded variable at 1e4 units and never
#: binds at convergence, where the steps vanish. With 1e8 HPIPM spent ~100
#: interior-point iterations per QP (its iteration limit) on the Go1 contact trot:
#: 3.5 s against 0.54 s for the SQP solve (24 SQP iterations either way); jump
#: 2.8 s -> 0.49 s, bound 5.7 s -> 1.5 s (41 -> 61 SQP iterations), measured.
HPIPM_INFINITY: float = 1e4
#: HPIPM options (CasADi's ``hpipm`` conic plugin) used unless overridden by ``options["hpipm"]``.
DEFAULT_HPIPM_OPTIONS: Dict[str, Any] = {"mode": "robust", "iter_max": 100, "res_g_max": 1e-10, "res_b_max": 1e-10, "res_d_max": 1e-10, "res_m_max": 1e-10}


def sqp_functions(nlp: NLP, nlp_function: ca.Function, derivatives: Dict[str, ca.Function], rows: np.ndarray) -> Dict[str, ca.Function]:
    """``sqpmethod``'s problem and derivative functions in stage row order ``rows``, from the stage-wise ones.

    ``nlp_function`` is ``(x, p) -> (f, g)``, ``derivatives`` holds ``grad_f``,
    ``jac_g`` and ``hess_lag`` (upper triangle, multipliers in the NLP's order).
    Returns ``problem`` ``(x, p) -> (f, g)``, ``jac_fg`` ``(x, p) -> (f, grad_f, g,
    jac_g)`` and ``hess_lag`` ``(x, p, lam_f, lam_g) -> H`` (``lam_g`` in stage order).
    """
    w, p = nlp.w, nlp.p
    order = rows.tolist()
    position = np.empty_like(rows)
    position[rows] = np.arange(rows.size)
    sigma, lam = ca.MX.sym("lam_f"), ca.MX.sym("lam_g", nlp.n_g)
    f, g = nlp_function(w, p)
    f_grad, grad = derivatives["grad_f"](w, p)
    g_jac, jac = derivatives["jac_g"](w, p)
    hess = ca.triu2symm(derivatives["hess_lag"](w, p, sigma, lam[position.tolist()]))
    return {
        "problem": ca.Function("nlp", [w, p], [f, g[order]], ["x", "p"], ["f", "g"]),
        "jac_fg": ca.Function("nlp_jac_fg", [w, p], [f_grad, grad, g_jac[order], jac[order, :]], ["x", "p"], ["f", "grad_f_x", "g", "jac_g_x"]),
        "hess_lag": ca.Function("nlp_hess_l", [w, p, sigma, lam], [hess], ["x", "p", "lam_f", "lam_g"], ["hess_gamma_x_x"]),
    }


class SqpSolver(NlpSolver):
    """A problem transcribed once and solved by SQP (CasADi's ``sqpmethod``, QPs by HPIPM) as often as needed.

    Each iteration solves one structured QP of the stage-ordered NLP with
    HPIPM's Riccati recursion; it needs an explicit (multiple-shooting)
    transcription. The arguments are those of :func:`trajopt.solve`
    (``derivatives="stagewise"`` only); ``print_level`` > 0 prints ``sqpmethod``'s iterations. Raises
    ``ValueError`` when the problem does not have the stage form. ``layout``
    is the :class:`~trajopt.solvers.stage_layout.StageLayout`.
    """

    name = "sqp"
    plugin = "sqpmethod"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self._nlp_function is None:
            raise ValueError("derivatives: the SQP backend takes the stage-wise derivatives (derivatives='stagewise')")
        self.layout: StageLayout = stage_layout(self.nlp, "the sqp solver")
        self._functions = sqp_functions(self.nlp, self._nlp_function, self._stagewise_options, self.layout.rows)

    def _create(self, warm: bool) -> InStageOrder:
        """The ``sqpmethod`` ``nlpsol`` behind :class:`InStageOrder` (the same for warm starts)."""
        if self._solvers:
            return next(iter(self._solvers.values()))
        user = {**self.problem.solver_options.get(self.name, {}), **self.user_options}
        hpipm = {**DEFAULT_HPIPM_OPTIONS, **user.pop("hpipm", {})}
        verbose = self.print_level > 0
        sqp = {**DEFAULT_SQP_OPTIONS, "print_iteration": verbose, "print_header": verbose, "print_status": verbose}
        if self.hessian == "exact":
            sqp["convexify_strategy"] = "regularize"
        qpsol = {**self.layout.options(), "inf": HPIPM_INFINITY, "hpipm": hpipm, "error_on_fail": False}
        opts = {
            **sqp,
            **user,
            "qpsol": "hpipm",
            "qpsol_options": qpsol,
            "jac_fg": self._functions["jac_fg"],
            "hess_lag": self._functions["hess_lag"],
            "print_time": False,
            "error_on_fail": False,
            **NLPSOL_OPTIONS,  # compiled stage functions have no derivatives for CasADi to take after the solve
            **self.nlpsol_options,
        }
        try:
            solver = ca.nlpsol("trajopt_sqp", "sqpmethod", self._functions["problem"], opts)
        except RuntimeError as err:
            raise ValueError(f"options: CasADi could not build the SQP solver with {user!r}: {casadi_message(err)}") from None
        return InStageOrder(solver, self.layout.rows)
