"""The SQP backend: CasADi's ``sqpmethod`` with the HPIPM QP solver (a Riccati interior point per QP).

Each SQP iteration linearizes the constraints and takes the quadratic model of
the Lagrangian (:mod:`trajopt.solvers.derivatives`: the exact Hessian, or Gauss-Newton
``hessian="gauss-newton"``), and HPIPM solves that QP stage by stage (the
structure acados uses). The QP must have the stage form of
:mod:`trajopt.solvers.stage_layout` (explicit gaps; tangent-chart knots for states with
rotations). A Gauss-Newton Hessian is positive semi-definite when every cost
is least squares; an exact Hessian goes to HPIPM as it is, whose Riccati
recursion needs only the reduced Hessian of each stage to be positive. A line
search on the l1 merit function globalizes the steps.

What makes SQP converge on the classic problems (multiple shooting, RK4,
exact Hessian, their default guesses; design notes, with the measurements:
docs/design/solvers.md):

- no convexification. ``sqpmethod``'s ``convexify_strategy="regularize"``
  (the default here until 0.1) adds a multiple of the identity large enough
  for a Gershgorin bound of the whole Hessian: the steps shrink to gradient
  steps and the problems run into the iteration limit.
  ``"eigen-clip"`` and ``"eigen-reflect"`` converge linearly or stop in
  CasADi;
- a first QP that has a solution. From the swing-ups' default guess (a
  straight line, zero torque) the QP linearized at the guess is infeasible:
  the actuator bound cannot take the linearized dynamics to the goal (qpOASES
  and OSQP say so; HPIPM stops with huge multipliers).
  ``sqpmethod`` takes those multipliers into its Hessian and merit function
  and wanders, reaching the optimum only by chance. Its elastic mode does not fit HPIPM's stage structure and
  diverges even with qpOASES (``gamma_max``). So :class:`SqpSolver` solves
  that first QP before iterating and refuses to start (``ValueError``) when
  HPIPM cannot: start from a point near a solution (``warm_start``, e.g. an
  IPOPT or fatrop solution) or
  use IPOPT or fatrop, whose interior points cope with such guesses. The same
  check refuses a first QP that HPIPM cannot solve for want of convexity (an
  exact Hessian is not convexified; the quadrotor flip, the double cartpole
  warm-started from another final time);
- a longer line search: ``sqpmethod`` takes the last trial step when its
  ``max_iter_ls`` backtracks (3 by default) do not decrease the merit
  function, and a warm-started cartpole then wandered; 20 backtracks
  (:data:`DEFAULT_SQP_OPTIONS`) let it converge and leave the legged
  problems' iterations unchanged.

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

from typing import Any, Dict, Optional

import casadi as ca
import numpy as np

from ..nlp import NLP
from .base import NlpSolver, Start
from .derivatives import NLPSOL_OPTIONS
from .options import casadi_message
from .stage_layout import InStageOrder, StageLayout, stage_layout

#: ``sqpmethod`` options used unless overridden: HPIPM as the QP solver, 200 iterations, tolerances 1e-8.
DEFAULT_SQP_OPTIONS: Dict[str, Any] = {
    "max_iter": 200,
    "tol_pr": 1e-8,
    "tol_du": 1e-8,
    "min_step_size": 1e-14,
    "max_iter_ls": 20,
    "print_header": False,
    "print_iteration": False,
    "print_status": False,
}
#: Magnitude that stands for an infinite bound in HPIPM's QPs (CasADi's ``inf``
#: option of its ``hpipm`` plugin, default 1e8). The QP's variables are the
#: steps, so this caps each step of an unbounded variable at 1e4 units and never
#: binds at convergence, where the steps vanish. With 1e8 HPIPM ran into its iteration limit
#: on the legged contact problems' QPs (docs/design/solvers.md).
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


class FirstQpFailed(ValueError):
    """HPIPM cannot solve the QP of the first SQP step from the starting point (:meth:`SqpSolver.first_qp`).

    :func:`trajopt.solve` answers it by solving with IPOPT first and starting the SQP from IPOPT's solution.
    """


#: HPIPM's return codes (``conic.stats()["return_status"]``).
HPIPM_STATUS = {0: "solved", 1: "stopped at its iteration limit", 2: "stopped at its minimum step length", 3: "NaN in the solution", 4: "inconsistent equality constraints"}


class SqpSolver(NlpSolver):
    """A problem transcribed once and solved by SQP (CasADi's ``sqpmethod``, QPs by HPIPM) as often as needed.

    Each iteration solves one structured QP of the stage-ordered NLP with
    HPIPM's Riccati recursion; it needs an explicit (multiple-shooting)
    transcription. The arguments are those of :func:`trajopt.solve`
    (``derivatives="stagewise"`` only); ``print_level`` > 0 prints ``sqpmethod``'s iterations. Raises
    ``ValueError`` when the problem does not have the stage form, and at
    :meth:`solve` when HPIPM cannot solve the QP linearized at the initial
    guess (infeasible or not convex there: start near a solution with
    ``warm_start``, or use IPOPT or fatrop). ``layout`` is the
    :class:`~trajopt.solvers.stage_layout.StageLayout`.
    """

    name = "sqp"
    plugin = "sqpmethod"
    takes_multipliers = True
    default_options = {**DEFAULT_SQP_OPTIONS, "hpipm": DEFAULT_HPIPM_OPTIONS}

    @classmethod
    def iteration_options(cls, max_iter: Optional[int], tol: Optional[float]) -> Dict[str, Any]:
        """``max_iter``; the tolerance as ``sqpmethod``'s primal and dual ones (``tol_pr``, ``tol_du``)."""
        return {**({"max_iter": max_iter} if max_iter is not None else {}), **({"tol_pr": tol, "tol_du": tol} if tol is not None else {})}

    def run_options(self) -> Dict[str, Any]:
        verbose = self.print_level > 0
        return {"print_iteration": verbose, "print_header": verbose, "print_status": verbose}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self._nlp_function is None:
            raise ValueError("derivatives: the SQP backend takes the stage-wise derivatives (derivatives='stagewise')")
        self.layout: StageLayout = stage_layout(self.nlp, "the sqp solver")
        self._functions = sqp_functions(self.nlp, self._nlp_function, self._stagewise_options, self.layout.rows)
        self._first_qp: Any = None

    def _qpsol_options(self) -> Dict[str, Any]:
        """HPIPM's options, in ``sqpmethod`` and in the check of the first QP."""
        return {**self.layout.options(), "inf": HPIPM_INFINITY, "hpipm": self.backend_options("cold")["hpipm"], "error_on_fail": False}

    def first_qp(self, point: Dict[str, np.ndarray]) -> Dict[str, Any]:
        """The QP of ``sqpmethod``'s first step from ``point`` (``x0``, optional ``lam_g0``) solved by HPIPM:
        ``{"success", "status", "iterations", "max_multiplier"}``.

        Its data are those ``sqpmethod`` builds: the Hessian of the Lagrangian
        (cost weight 1, the point's multipliers or zero), the gradient, the
        constraints linearized at ``x0`` and the bounds shifted by it, in stage
        order, with the same HPIPM options.
        """
        nlp, rows, fn = self.nlp, self.layout.rows, self._functions
        x0, p = np.asarray(point["x0"], dtype=float), nlp.parameters()
        lam = np.asarray(point.get("lam_g0", np.zeros(nlp.n_g)), dtype=float)[rows]
        _, grad, g, jac = fn["jac_fg"](x0, p)
        hess = fn["hess_lag"](x0, p, 1.0, lam)
        if self._first_qp is None:
            shapes = {"h": fn["hess_lag"].sparsity_out(0), "a": fn["jac_fg"].sparsity_out(3)}
            self._first_qp = ca.conic("first_qp", "hpipm", shapes, self._qpsol_options())
        (lbx, ubx), (lbg, ubg) = nlp.bounds_w(), nlp.bounds_g()
        g = np.asarray(g).ravel()
        res = self._first_qp(h=hess, g=grad, a=jac, lbx=np.asarray(lbx) - x0, ubx=np.asarray(ubx) - x0, lba=np.asarray(lbg)[rows] - g, uba=np.asarray(ubg)[rows] - g)
        stats = self._first_qp.stats()
        multipliers = np.concatenate([np.asarray(res["lam_a"]).ravel(), np.asarray(res["lam_x"]).ravel()])
        code = int(stats["return_status"])
        return {"success": bool(stats["success"]), "status": HPIPM_STATUS.get(code, f"status {code}"), "iterations": int(stats["iter_count"]), "max_multiplier": float(np.abs(multipliers).max(initial=0.0))}

    def _run(self, point: Dict[str, np.ndarray], args: Optional[Dict[str, Any]] = None, homotopy: bool = False) -> Dict[str, Any]:
        """:meth:`NlpSolver._run` once HPIPM has solved the first QP from ``point`` (:class:`FirstQpFailed` otherwise)."""
        qp = self.first_qp(point)
        if not qp["success"]:
            raise FirstQpFailed(
                f"start: HPIPM cannot solve the QP of the first SQP step ({qp['status']} after {qp['iterations']} iterations, "
                f"multipliers up to {qp['max_multiplier']:.1e}): linearized at the starting point, the problem is infeasible "
                "(typically an actuator bound against the dynamics and a goal, far from a solution) or not convex, and "
                "sqpmethod has no fallback with HPIPM. Start near a solution (warm_start, e.g. an IPOPT solution) or use "
                "solver='ipopt' or 'fatrop' (given no warm start, trajopt.solve starts from IPOPT's solution itself)"
            )
        return super()._run(point, args, homotopy)

    def _create(self, start: Start) -> InStageOrder:
        """The ``sqpmethod`` ``nlpsol`` behind :class:`InStageOrder` (the same for warm starts)."""
        if self._solvers:
            return next(iter(self._solvers.values()))
        sqp = self.backend_options(start)
        sqp.pop("hpipm")  # in _qpsol_options
        opts = {
            **sqp,
            "qpsol": "hpipm",
            "qpsol_options": self._qpsol_options(),
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
            raise ValueError(f"options: CasADi could not build the SQP solver with {sqp!r}: {casadi_message(err)}") from None
        return InStageOrder(solver, self.layout.rows)
