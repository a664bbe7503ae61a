"""The fatrop backend: CasADi's structure-exploiting interior-point plugin.

fatrop is an interior-point method like IPOPT (filter line search, barrier
updates, inertia correction) whose linear algebra is a Riccati recursion over
the stages of an optimal-control problem instead of a sparse LDL^T
factorization of the whole KKT matrix. It solves problems in stage form
(:mod:`trajopt.solvers.stage_layout`: explicit gaps, stage-local rows and costs, a
fixed final time); states with rotations need tangent-chart knots
(``chart=True``, :mod:`trajopt.nlp`).

Derivatives are the stage-wise ones (:mod:`trajopt.solvers.derivatives`, compiled with
``compile=True``, exact or Gauss-Newton Hessian), handed to the plugin through
its function cache, in stage row order and with the signatures it calls:
``nlp_grad_f`` gives the gradient alone, ``nlp_hess_l`` the gradient of the
Lagrangian ``sigma grad f + J^T lam`` and the full symmetric Hessian.
``derivatives="casadi"`` lets CasADi differentiate the row-permuted NLP instead.

Warm starts are primal only (CasADi's fatrop interface reads no initial
multipliers). The :class:`~trajopt.Solution`'s ``status`` is fatrop's return
flag (:data:`RETURN_FLAGS`, ``"Success"`` when converged). fatrop stops after
``max_iter`` iterations (:data:`DEFAULT_FATROP_OPTIONS`).
"""
from __future__ import annotations

from typing import Any, Dict, Optional

import casadi as ca
import numpy as np

from ..nlp import NLP
from .base import NlpSolver, Start
from .options import casadi_message
from .stage_layout import InStageOrder, StageLayout, stage_layout

#: fatrop options used unless overridden by ``options`` (fatrop's own names: ``tol``, ``max_iter``, ``mu_init``, ...).
DEFAULT_FATROP_OPTIONS: Dict[str, Any] = {"tol": 1e-8, "max_iter": 1000}
#: fatrop's return flags (``stats()["fatrop"]["return_flag"]``), in the order of fatrop 1.1's
#: ``IpSolverReturnFlag``; the interface's own ``return_status`` is only 0 (success) or 1.
RETURN_FLAGS = ("Success", "MaxIterExceeded", "StopAtAcceptablePoint", "LocalInfeasibility", "LineSearchFailed", "ErrorInStepComputation", "Unknown")


def return_status(stats: Dict[str, Any]) -> str:
    """The name of fatrop's return flag in the interface's ``stats`` (:data:`RETURN_FLAGS`)."""
    flag = int(stats.get("fatrop", {}).get("return_flag", -1))
    return RETURN_FLAGS[flag] if 0 <= flag < len(RETURN_FLAGS) else "Exception" if flag == -1 else f"fatrop flag {flag}"


def fatrop_functions(nlp: NLP, nlp_function: ca.Function, derivatives: Dict[str, ca.Function], lag_grad: ca.Function, rows: np.ndarray) -> Dict[str, ca.Function]:
    """The functions CasADi's fatrop interface calls, in fatrop's row order ``rows``, from the stage-wise ones.

    ``nlp_function`` is ``(x, p) -> (f, g)``, ``derivatives`` holds IPOPT's
    ``grad_f``, ``jac_g`` and ``hess_lag`` (upper triangle) and ``lag_grad`` is
    ``(x, p, sigma, lam) -> sigma grad f + J^T lam`` by reverse sweeps
    (:data:`trajopt.solvers.derivatives.LAG_GRAD`: fatrop asks for the Lagrangian's
    gradient with every Hessian, and forming it from the Jacobian would
    evaluate every constraint Jacobian twice per iteration). Returns
    ``nlp_f``, ``nlp_g``, ``nlp_grad_f`` (gradient only), ``nlp_jac_g``,
    ``nlp_hess_l``: ``(x, p, sigma, lam) -> (sigma grad f + J^T lam, H)`` with
    ``H`` the full symmetric Hessian of the Lagrangian (``lam`` in fatrop's
    order), and ``nlp_grad``: ``(x, p, sigma, lam) -> (f, g, sigma grad f + J^T
    lam, NaN)``, which the interface calls once after the solve for ``f`` and
    ``g``; the gradient with respect to ``p`` is not computed (NaN), so the
    solver must run with ``calc_lam_p = False``.
    """
    w, p = nlp.w, nlp.p
    order = rows.tolist()
    position = np.empty_like(rows)
    position[rows] = np.arange(rows.size)
    sigma, lam = ca.MX.sym("lam_f"), ca.MX.sym("lam_g", nlp.n_g)
    lam_nlp = lam[position.tolist()]
    f, g = nlp_function(w, p)
    grad_f = derivatives["grad_f"](w, p)[1]
    g_jac, jac = derivatives["jac_g"](w, p)
    hess = ca.triu2symm(derivatives["hess_lag"](w, p, sigma, lam_nlp))
    grad_lag = lag_grad(w, p, sigma, lam_nlp)
    lagrangian = [w, p, sigma, lam], ["x", "p", "lam_f", "lam_g"]
    return {
        "nlp_f": ca.Function("nlp_f", [w, p], [f], ["x", "p"], ["f"]),
        "nlp_g": ca.Function("nlp_g", [w, p], [g[order]], ["x", "p"], ["g"]),
        "nlp_grad_f": ca.Function("nlp_grad_f", [w, p], [grad_f], ["x", "p"], ["grad_f_x"]),
        "nlp_jac_g": ca.Function("nlp_jac_g", [w, p], [g_jac[order], jac[order, :]], ["x", "p"], ["g", "jac_g_x"]),
        "nlp_hess_l": ca.Function("nlp_hess_l", lagrangian[0], [grad_lag, hess], lagrangian[1], ["grad_gamma_x", "hess_gamma_x_x"]),
        "nlp_grad": ca.Function("nlp_grad", lagrangian[0], [f, g[order], grad_lag, ca.DM.nan(p.shape)], lagrangian[1], ["f", "g", "grad_gamma_x", "grad_gamma_p"]),
    }


class FatropSolver(NlpSolver):
    """A problem transcribed once and solved with fatrop (a Riccati-based interior point) as often as needed.

    fatrop exploits the stage structure of optimal control; it needs an
    explicit transcription (multiple shooting) whose variables and
    constraints are ordered stage by stage. The arguments are those of
    :class:`~trajopt.solvers.base.NlpSolver` (the problem and its
    :class:`~trajopt.SolverSettings`); the settings' ``options`` are fatrop's
    (over :data:`DEFAULT_FATROP_OPTIONS`) and ``print_level`` its
    verbosity (0 silent, 5 one line per iteration). Raises ``ValueError`` when
    the problem does not have the stage form. ``layout`` is the :class:`StageLayout`.
    """

    name = plugin = "fatrop"
    watchdog = True
    uses_lag_grad = True
    default_options = DEFAULT_FATROP_OPTIONS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.layout: StageLayout = stage_layout(self.nlp, "the fatrop solver")
        self._functions = {} if self._nlp_function is None else fatrop_functions(self.nlp, self._nlp_function, self._stagewise_options, self._lag_grad, self.layout.rows)

    def run_options(self) -> Dict[str, Any]:
        return {"print_level": self.print_level}

    def _create(self, start: Start) -> InStageOrder:
        """The fatrop ``nlpsol`` behind :class:`InStageOrder` (the same for warm starts).

        Stage-wise derivatives reach it through its function cache
        (:func:`fatrop_functions`); the NLP graph given as the problem only
        fixes the sizes. The interface computes no multipliers of ``p``.
        """
        if self._solvers:
            return next(iter(self._solvers.values()))
        nlp, layout = self.nlp, self.layout
        problem = {"x": nlp.w, "p": nlp.p, "f": nlp.f, "g": nlp.g[layout.rows.tolist()]}
        fatrop = self.backend_options(start)
        opts = {
            "structure_detection": "manual",
            **layout.options(),
            "fatrop": fatrop,
            "print_time": False,
            "error_on_fail": False,
            **({"expand": self.expand} if self._nlp_function is None else {"cache": self._functions}),
            **self.nlpsol_options,
            "calc_lam_p": False,
        }
        try:
            solver = ca.nlpsol("trajopt_fatrop", "fatrop", problem, opts)
        except RuntimeError as err:
            raise ValueError(f"options: CasADi could not build the fatrop solver with fatrop={fatrop!r}: {casadi_message(err)}") from None
        return InStageOrder(solver, layout.rows, drop_multipliers=True, status=return_status)

    def _run(self, point: Dict[str, np.ndarray], args: Optional[Dict[str, Any]] = None, homotopy: bool = False) -> Dict[str, Any]:
        """:meth:`NlpSolver._run`, after checking that no stage has more equality rows than
        its tangent states and controls (fatrop 1.1.8 aborts the process on such a stage)."""
        lbg, ubg = self.nlp.bounds_g() if args is None else (args["lbg"], args["ubg"])
        rows = self.layout.rows
        eq = (lbg[rows] == ubg[rows])
        start = np.cumsum([0] + [nx * (k < self.layout.K) + ng for k, (nx, ng) in enumerate(zip(self.layout.nx, self.layout.ng))])
        for k, (nx, nu, ng) in enumerate(zip(self.layout.nx, self.layout.nu, self.layout.ng)):
            path = slice(start[k] + (nx if k < self.layout.K else 0), start[k + 1])
            if eq[path].sum() > nx + nu:
                raise ValueError(f"problem: knot {k} has {int(eq[path].sum())} equality rows but {nx + nu} state and control directions; fatrop cannot take it")
        return super()._run(point, args, homotopy)
