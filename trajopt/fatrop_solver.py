"""Solving a transcribed problem with fatrop, CasADi's structure-exploiting interior-point plugin.

fatrop is an interior-point method like IPOPT (filter line search, barrier
updates, inertia correction) whose linear algebra is a Riccati recursion over
the stages of an optimal-control problem instead of a sparse LDL^T
factorization of the whole KKT matrix. It solves problems in stage form, with
stages ``k = 0..K`` (``K = N - 1`` intervals)::

    minimize    sum_k l_k(x_k, u_k)
    subject to  x_{k+1} - F_k(x_k, u_k) = 0,      k = 0..K-1   (gap rows: coefficient +I on x_{k+1})
                lo_k <= g_k(x_k, u_k) <= hi_k,    k = 0..K     (path rows)
                bounds on x_k and u_k

CasADi's interface (``structure_detection="manual"``) reads that form from an
NLP whose variables are ``[x_0, u_0, x_1, u_1, ..., x_K, u_K]`` and whose rows
are ``[gap_0, path_0, gap_1, path_1, ..., path_K]``, given the per-stage sizes
``nx``, ``nu``, ``ng`` (:class:`StageLayout`). Our NLP (:mod:`trajopt.nlp`)
orders its variables by stage already, stage ``k``'s "control" being
``[u_k, z_k]`` (control and interval variables; the final stage has the final
control only when the transcription has one). It groups rows by knot too, but
puts a knot's own rows before its interval's defect: one permutation brings
each defect in front, and :class:`_InNlpOrder` translates at the solver call.

Which problems qualify (:func:`stage_layout` raises ``ValueError`` naming the cause):

- explicit dynamics. Each interval's defect must be a gap ``x_{k+1} - F(x_k,
  u_k, z_k)``: one row per state coordinate, ``d defect / d x_{k+1} = I``.
  Multiple shooting of a Euclidean state is exactly that
  (``state_error(x_{k+1}, x_k + sigma) = x_{k+1} - x_k - sigma``, ``sigma`` the
  integrator's step); trapezoidal and Hermite-Simpson defects contain
  ``f(x_{k+1}, u_{k+1})``. The interval's cost must not read ``x_{k+1}``
  (fatrop's Hessian is block diagonal by stage).
- no unit quaternions. Their defects are taken on the manifold (DESIGN rule 4:
  ``error_dim`` rows, nonlinear in ``x_{k+1}``) and come with unit-norm rows,
  so no ``+I`` block exists. fatrop would take a raw gap ``x_{k+1} -
  F(x_k, u_k)`` (``n`` rows; ``F`` composes with an exponential and keeps
  ``|q|``, so the norm rows must go, else they are dependent), which our NLP
  does not build. Tried on prototypes: fatrop reaches IPOPT's optimum on the
  rigid-body slew, but fatrop 1.1.8 loops forever inside its step computation
  on the quadrotor point-to-point problem. Knots parameterized by tangent
  perturbations of a fixed reference (``x_k = xbar_k (+) d_k``, gaps
  ``d_{k+1} - state_error(F(x_k, u_k), xbar_{k+1})``: exact, ``+I`` on
  ``d_{k+1}``, no norm rows) do not cure it: fatrop converges there (8
  iterations, IPOPT's objective) with the goal as a terminal cost, and hangs
  again with the goal as a full-state equality on the final stage, as a
  path constraint or as bounds; its solve (RK4 shooting, evaluations
  dominating) took 89 ms against IPOPT's 105 ms on that NLP.
- a fixed final time: a free ``tf`` is one variable shared by every stage.
- rows and costs that depend on their own stage only (plus ``x_{k+1}`` in
  gaps). The final knot of multiple shooting holds the control of knot
  ``N - 2``, so a constraint or terminal cost there that reads the control
  couples two stages (CasADi's interface would drop the Hessian's coupling
  block silently).

Derivatives are the stage-wise ones of :class:`trajopt.solver.IpoptSolver`
(:mod:`trajopt.derivatives`, compiled with ``compile=True``), handed to the
plugin through its function cache, in fatrop's row order and with the
signatures it calls: ``nlp_grad_f`` gives the gradient alone, ``nlp_hess_l``
the gradient of the Lagrangian ``sigma grad f + J^T lam`` and the full
symmetric Hessian. ``derivatives="casadi"`` lets CasADi differentiate the
row-permuted NLP instead.

Everything else is :class:`~trajopt.solver.IpoptSolver`'s: building the NLP and
its data, warm starts (primal only: CasADi's fatrop interface reads no initial
multipliers) and the :class:`~trajopt.Solution`, whose ``status`` is fatrop's
return flag (:data:`RETURN_FLAGS`, ``"Success"`` when converged).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

import casadi as ca
import numpy as np

from .nlp import NLP
from .solver import IpoptSolver
from .solver_options import casadi_message, check_nlpsol_options

#: fatrop options used unless overridden by ``options`` (fatrop's own names: ``tol``, ``max_iter``, ``mu_init``, ...).
DEFAULT_FATROP_OPTIONS: Dict[str, Any] = {"tol": 1e-8, "max_iter": 1000}
#: fatrop's return flags, in the order of ``fatrop::IpSolverReturnFlag`` (CasADi reports -1 for an exception).
RETURN_FLAGS = (
    "Success",
    "MaxIterExceeded",
    "StopAtTinyStep",
    "StopAtAcceptablePoint",
    "LocalInfeasibility",
    "FeasiblePointFound",
    "DivergingIterates",
    "ErrorInStepComputation",
    "InvalidOption",
    "InternalError",
    "Unknown",
)


def return_status(flag: int) -> str:
    """The name of fatrop's return flag ``flag`` (:data:`RETURN_FLAGS`; -1 is ``"Exception"``)."""
    flag = int(flag)
    return RETURN_FLAGS[flag] if 0 <= flag < len(RETURN_FLAGS) else "Exception" if flag == -1 else f"fatrop flag {flag}"


@dataclass(frozen=True)
class StageLayout:
    """The stage form fatrop reads (module docstring).

    ``nx``, ``nu``, ``ng`` (N each): stage ``k``'s states, controls (with the
    interval variables) and path rows; ``rows`` (n_g,): the NLP's rows in
    fatrop's order (interval ``k``'s gap rows, then knot ``k``'s path rows).
    """

    nx: List[int]
    nu: List[int]
    ng: List[int]
    rows: np.ndarray

    @property
    def K(self) -> int:
        """Number of intervals (fatrop's horizon ``N``)."""
        return len(self.nx) - 1


def _check_dynamics_and_costs(nlp: NLP) -> None:
    """Raise ``ValueError`` unless each defect is ``x_{k+1} - F(x_k, u_k, z_k)`` and each cost reads one stage."""
    problem, model, name = nlp.problem, nlp.problem.model, nlp.transcription.name
    if problem.free_time:
        raise ValueError("problem: a free final time is one variable shared by every stage; fatrop needs a fixed tf")
    if model.error_dim != model.state_dim:
        raise ValueError(
            f"problem: the state of {type(model).__name__} holds unit quaternions ({model.state_dim} coordinates, "
            f"{model.error_dim} tangent directions); its defects are taken on the manifold, not as the gaps "
            "x_(k+1) - F(x_k, u_k) fatrop needs: use the IPOPT solver"
        )
    fn = nlp.interval_fn
    implicit = sorted({"f_next", "u_next"} & set(fn.name_in()))
    if implicit:
        raise ValueError(
            f"transcription: {name!r} is implicit (its intervals read {', '.join(implicit)}: the next knot's dynamics "
            "or control); fatrop needs explicit gaps x_(k+1) - F(x_k, u_k): use 'multiple_shooting'"
        )
    symbols = {n: ca.SX.sym(n, fn.sparsity_in(n)) for n in fn.name_in()}
    out = fn(**symbols)
    block = ca.jacobian(out["defect"], symbols["x_next"])
    if out["defect"].numel() != model.state_dim or not block.is_constant() or not np.array_equal(np.asarray(ca.evalf(block)), np.eye(model.state_dim)):
        raise ValueError(
            f"transcription: the defect of {name!r} for {type(model).__name__} is not x_(k+1) - F(x_k, u_k) "
            "(d defect / d x_(k+1) must be the identity; rotations in the state make it a difference on the manifold)"
        )
    if ca.depends_on(out["cost"], symbols["x_next"]):
        raise ValueError(f"transcription: the interval cost of {name!r} reads x_(k+1); fatrop needs each stage's cost to read its own knot")
    x, u, p = nlp.terminal_cost.sx_in()
    if not nlp.transcription.final_control and ca.depends_on(nlp.terminal_cost(x, u, p), u):
        raise ValueError(f"problem: a terminal cost reads the control, which {name!r} holds from knot N - 2; fatrop needs each stage's cost to read its own knot")


def _row_names(nlp: NLP) -> List[str]:
    """A readable name of each NLP row's origin ("defect", "unit norm", or the constraint's name)."""
    names = [""] * nlp.n_g
    for b, block in enumerate(nlp.blocks):
        label = nlp.constraints[block.constraint].name if block.kind in ("constraint", "midpoint") else {"norm": "unit norm"}.get(block.kind, block.kind)
        for r in nlp.block_rows(b).ravel():
            names[r] = label
    return names


def stage_layout(nlp: NLP) -> StageLayout:
    """fatrop's view of ``nlp``; raises ``ValueError`` when the NLP does not have the stage form (module docstring)."""
    _check_dynamics_and_costs(nlp)
    gaps = next(nlp.block_rows(b) for b, block in enumerate(nlp.blocks) if block.kind == "defect")
    is_gap = np.zeros(nlp.n_g, dtype=bool)
    is_gap[gaps.ravel()] = True
    rows, cols = (np.asarray(i, dtype=int) for i in ca.jacobian_sparsity(nlp.g, nlp.w).get_triplet())
    row_stage, col_stage = nlp.row_stage[rows], nlp.var_stage[cols]
    coupled = (col_stage != row_stage) & ~(is_gap[rows] & (col_stage == row_stage + 1))
    if coupled.any():
        i = int(np.argmax(coupled))
        raise ValueError(
            f"problem: {_row_names(nlp)[rows[i]]!r} at knot {row_stage[i]} depends on variables of knot {col_stage[i]}; "
            "fatrop needs each knot's rows to depend on that knot only (the final knot of multiple shooting holds "
            "the control of knot N - 2)"
        )
    N, n = nlp.problem.N, nlp.problem.nx
    order = np.lexsort((np.arange(nlp.n_g), ~is_gap, nlp.row_stage))  # by stage, gaps first, then as in the NLP
    per_stage = np.bincount(nlp.var_stage, minlength=N)
    path = np.bincount(nlp.row_stage[~is_gap], minlength=N)
    return StageLayout([n] * N, (per_stage - n).tolist(), path.tolist(), order)


def fatrop_functions(nlp: NLP, nlp_function: ca.Function, derivatives: Dict[str, ca.Function], rows: np.ndarray) -> Dict[str, ca.Function]:
    """The functions CasADi's fatrop interface calls, in fatrop's row order ``rows``, from the stage-wise ones.

    ``nlp_function`` is ``(x, p) -> (f, g)`` and ``derivatives`` holds IPOPT's
    ``grad_f``, ``jac_g`` and ``hess_lag`` (upper triangle). Returns
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
    grad_lag = sigma * grad_f + ca.mtimes(jac.T, lam_nlp)
    lagrangian = [w, p, sigma, lam], ["x", "p", "lam_f", "lam_g"]
    return {
        "nlp_f": ca.Function("nlp_f", [w, p], [f], ["x", "p"], ["f"]),
        "nlp_g": ca.Function("nlp_g", [w, p], [g[order]], ["x", "p"], ["g"]),
        "nlp_grad_f": ca.Function("nlp_grad_f", [w, p], [grad_f], ["x", "p"], ["grad_f_x"]),
        "nlp_jac_g": ca.Function("nlp_jac_g", [w, p], [g_jac[order], jac[order, :]], ["x", "p"], ["g", "jac_g_x"]),
        "nlp_hess_l": ca.Function("nlp_hess_l", lagrangian[0], [grad_lag, hess], lagrangian[1], ["grad_gamma_x", "hess_gamma_x_x"]),
        "nlp_grad": ca.Function("nlp_grad", lagrangian[0], [f, g[order], grad_lag, ca.DM.nan(p.shape)], lagrangian[1], ["f", "g", "grad_gamma_x", "grad_gamma_p"]),
    }


class _InNlpOrder:
    """A fatrop ``nlpsol`` called and answering in the NLP's row order, as :meth:`IpoptSolver.solve` calls it.

    Constraint bounds are permuted into fatrop's order and ``g``, ``lam_g``
    back; initial multipliers are dropped (the interface reads none);
    ``stats()["return_status"]`` is the name of fatrop's return flag.
    """

    def __init__(self, solver: ca.Function, rows: np.ndarray) -> None:
        self.solver, self.rows = solver, rows

    def __call__(self, **args: Any) -> Dict[str, Any]:
        args = {k: v for k, v in args.items() if k not in ("lam_x0", "lam_g0")}
        args["lbg"], args["ubg"] = np.asarray(args["lbg"])[self.rows], np.asarray(args["ubg"])[self.rows]
        res = dict(self.solver(**args))
        for key in ("g", "lam_g"):
            value = np.empty(self.rows.size)
            value[self.rows] = np.asarray(res[key]).reshape(-1)
            res[key] = value
        return res

    def stats(self) -> Dict[str, Any]:
        stats = dict(self.solver.stats())
        stats["return_status"] = return_status(stats["return_status"])
        return stats


class FatropSolver(IpoptSolver):
    """A problem transcribed once and solved with fatrop as often as needed (module docstring).

    Same arguments as :class:`~trajopt.solver.IpoptSolver`; ``options`` are
    fatrop's (overriding :data:`DEFAULT_FATROP_OPTIONS`) and ``print_level``
    its verbosity (0 silent, 5 one line per iteration). Raises ``ValueError``
    when the problem does not have fatrop's stage form. ``layout`` is the
    :class:`StageLayout`.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        start = time.perf_counter()
        self.layout = stage_layout(self.nlp)
        self._functions = {} if self._nlp_function is None else fatrop_functions(self.nlp, self._nlp_function, self._stagewise_options, self.layout.rows)
        self.build_time += time.perf_counter() - start

    @staticmethod
    def check_options(options: Optional[Dict[str, Any]], nlpsol_options: Optional[Dict[str, Any]]) -> None:
        """Raise ``ValueError`` naming the ``nlpsol_options`` CasADi's fatrop interface does not know (fatrop's own are checked when it is built)."""
        check_nlpsol_options(nlpsol_options, "fatrop")

    def _solver(self, warm: bool) -> Any:
        """The fatrop ``nlpsol`` behind :class:`_InNlpOrder` (built on first use; the same for warm starts).

        Stage-wise derivatives reach it through its function cache
        (:func:`fatrop_functions`); the NLP graph given as the problem only
        fixes the sizes. The interface computes no multipliers of ``p``.
        """
        if not self._solvers:
            start = time.perf_counter()
            nlp, layout = self.nlp, self.layout
            problem = {"x": nlp.w, "p": nlp.p, "f": nlp.f, "g": nlp.g[layout.rows.tolist()]}
            fatrop = {**DEFAULT_FATROP_OPTIONS, **self.user_options}
            opts = {
                "structure_detection": "manual",
                **{"N": layout.K, "nx": layout.nx, "nu": layout.nu, "ng": layout.ng},
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
            self._solvers[False] = self._solvers[True] = _InNlpOrder(solver, layout.rows)
            self.build_time += time.perf_counter() - start
        return self._solvers[warm]
