"""The stage form that Riccati-based solvers read (fatrop, and sqpmethod's QPs with HPIPM).

Such a solver handles an optimal-control problem with stages ``k = 0..K``
(``K = N - 1`` intervals)::

    minimize    sum_k l_k(x_k, u_k)
    subject to  x_{k+1} - F_k(x_k, u_k) = 0,      k = 0..K-1   (gap rows: coefficient +I on x_{k+1})
                lo_k <= g_k(x_k, u_k) <= hi_k,    k = 0..K     (path rows)
                bounds on x_k and u_k

and factorizes its KKT system stage by stage (a Riccati recursion) instead of
as one sparse matrix. CasADi's interfaces (``structure_detection="manual"`` for
fatrop, the ``N``/``nx``/``nu``/``ng`` options of the ``hpipm`` QP solver) read
that form from an NLP whose variables are ``[x_0, u_0, x_1, u_1, ..., x_K,
u_K]`` and whose rows are ``[gap_0, path_0, gap_1, path_1, ..., path_K]``,
given the per-stage sizes (:class:`StageLayout`). Our NLP (:mod:`trajopt.nlp`)
orders its variables by stage already, stage ``k``'s "control" being ``[u_k,
z_k]`` (control and interval variables; the final stage has the final control
only when the transcription has one). It groups rows by knot too, but puts a
knot's own rows before its interval's defect: one permutation brings each
defect in front, and :class:`InStageOrder` translates at the solver call.

Which problems qualify (:func:`stage_layout` raises ``ValueError`` naming the cause):

- explicit dynamics. Each interval's defect must be a gap ``x_{k+1} - F(x_k,
  u_k, z_k)``: one row per state variable, ``d defect / d x_{k+1} = I``.
  Multiple shooting of a Euclidean state is exactly that
  (``state_error(x_{k+1}, x_k + sigma) = x_{k+1} - x_k - sigma``, ``sigma`` the
  integrator's step); so is multiple shooting with tangent-chart knots for
  states with rotations (``chart=True``: ``d_{k+1} - state_error(x_end,
  xbar_{k+1})``, :mod:`trajopt.nlp`). Trapezoidal and Hermite-Simpson defects
  contain ``f(x_{k+1}, u_{k+1})``; defects on the manifold between raw
  quaternions are nonlinear in ``x_{k+1}`` and come with unit-norm rows. The
  interval's cost must not read ``x_{k+1}`` (the Hessian is block diagonal by stage).
- a fixed final time: a free ``tf`` is one variable shared by every stage.
- rows and costs that depend on their own stage only (plus ``x_{k+1}`` in
  gaps). The final knot of multiple shooting holds the control of knot
  ``N - 2``, so a constraint or terminal cost there that reads the control
  couples two stages (CasADi's interface would drop the Hessian's coupling
  block silently).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List

import casadi as ca
import numpy as np

from ..nlp import NLP


@dataclass(frozen=True)
class StageLayout:
    """The stage form of an NLP, as Riccati-based solvers (fatrop, HPIPM) read it: per stage ``k``, its
    state variables, controls and path rows, the rows in the order ``[gap_0, path_0, gap_1, ...]``.

    ``nx``, ``nu``, ``ng`` (N each): stage ``k``'s state variables, controls
    (with the interval variables) and path rows; ``rows`` (n_g,): the NLP's
    rows in stage order (interval ``k``'s gap rows, then knot ``k``'s path rows).
    """

    nx: List[int]
    nu: List[int]
    ng: List[int]
    rows: np.ndarray

    @property
    def K(self) -> int:
        """Number of intervals (the solvers' horizon ``N``)."""
        return len(self.nx) - 1

    def options(self) -> Dict[str, Any]:
        """The sizes as CasADi's interfaces take them: ``N``, ``nx``, ``nu``, ``ng``."""
        return {"N": self.K, "nx": self.nx, "nu": self.nu, "ng": self.ng}


def _check_dynamics_and_costs(nlp: NLP, who: str) -> None:
    """Raise ``ValueError`` unless each defect is a gap ``x_{k+1} - F(x_k, u_k, z_k)`` and each cost reads one stage."""
    problem, model, name = nlp.problem, nlp.problem.model, nlp.transcription.name
    if problem.free_time:
        raise ValueError(f"problem: a free final time or free phase durations are variables shared by many stages; {who} needs a fixed tf")
    if not nlp.transcription.explicit:
        raise ValueError(
            f"transcription: {name!r} is implicit (its intervals read the next knot's dynamics or control); "
            f"{who} needs explicit gaps x_(k+1) - F(x_k, u_k): use multiple shooting"
        )
    if not nlp.chart:
        if model.error_dim != model.state_dim:
            raise ValueError(
                f"problem: the state of {type(model).__name__} holds unit quaternions ({model.state_dim} coordinates, "
                f"{model.error_dim} tangent directions); their defects are taken on the manifold, not as gaps: "
                "solve with tangent-chart knots (chart=True) or with IPOPT"
            )
        fn = nlp.interval_fn
        symbols = {n: fn.sx_in(n) for n in fn.name_in()} if fn.is_a("SXFunction") else {n: fn.mx_in(n) for n in fn.name_in()}
        out = fn(**symbols)
        block = ca.jacobian(out["defect"], symbols["x_next"])
        if not block.is_constant() or not np.array_equal(np.asarray(ca.evalf(block)), np.eye(model.state_dim)):
            raise ValueError(f"transcription: the defect of {name!r} for {type(model).__name__} is not x_(k+1) - F(x_k, u_k) (d defect / d x_(k+1) must be the identity)")
        if ca.depends_on(out["cost"], symbols["x_next"]):
            raise ValueError(f"transcription: the interval cost of {name!r} reads x_(k+1); {who} needs each stage's cost to read its own knot")
    x, u, p = nlp.terminal_cost.sx_in()
    if not nlp.transcription.final_control and ca.depends_on(nlp.terminal_cost(x, u, p), u):
        raise ValueError(f"problem: a terminal cost reads the control, which {name!r} holds from knot N - 2; {who} needs each stage's cost to read its own knot")


def _row_names(nlp: NLP) -> List[str]:
    """A readable name of each NLP row's origin ("defect", "unit norm", or the constraint's name)."""
    names = [""] * nlp.n_g
    for b, block in enumerate(nlp.blocks):
        label = nlp.constraints[block.constraint].name if block.kind in ("constraint", "midpoint", "interval") else {"norm": "unit norm"}.get(block.kind, block.kind)
        for r in nlp.block_rows(b).ravel():
            names[r] = label
    return names


def stage_layout(nlp: NLP, who: str = "a stage-wise solver") -> StageLayout:
    """The stage form of ``nlp``; raises ``ValueError`` naming ``who`` (the backend that needs it) and the
    cause when the NLP does not have it: implicit defects (collocation), a free final time, or rows or
    costs that couple two stages."""
    _check_dynamics_and_costs(nlp, who)
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
            f"{who} needs each knot's rows to depend on that knot only (the final knot of multiple "
            "shooting holds the control of knot N - 2)"
        )
    N, n = nlp.problem.N, nlp.n_state
    order = np.lexsort((np.arange(nlp.n_g), ~is_gap, nlp.row_stage))  # by stage, gaps first, then as in the NLP
    per_stage = np.bincount(nlp.var_stage, minlength=N)
    path = np.bincount(nlp.row_stage[~is_gap], minlength=N)
    return StageLayout([n] * N, (per_stage - n).tolist(), path.tolist(), order)


class InStageOrder:
    """A CasADi solver whose rows are in stage order, called and answering in the NLP's row order.

    Constraint bounds (and initial multipliers, unless ``drop_multipliers``) are
    permuted into stage order and ``g``, ``lam_g`` back; ``status`` names the
    outcome from the solver's ``stats()`` (its ``return_status`` by default).
    """

    def __init__(self, solver: ca.Function, rows: np.ndarray, drop_multipliers: bool = False, status: Any = lambda stats: str(stats["return_status"])) -> None:
        self.solver, self.rows, self.drop_multipliers, self.status = solver, rows, drop_multipliers, status

    def __call__(self, **args: Any) -> Dict[str, Any]:
        if self.drop_multipliers:
            args = {k: v for k, v in args.items() if k not in ("lam_x0", "lam_g0")}
        for key in ("lbg", "ubg", "lam_g0"):
            if key in args:
                args[key] = np.asarray(args[key]).reshape(-1)[self.rows]
        res = dict(self.solver(**args))
        for key in ("g", "lam_g"):
            value = np.empty(self.rows.size)
            value[self.rows] = np.asarray(res[key]).reshape(-1)
            res[key] = value
        return res

    def stats(self) -> Dict[str, Any]:
        """The wrapped solver's statistics, with ``return_status`` from this wrapper's own status."""
        stats = dict(self.solver.stats())
        stats["return_status"] = self.status(stats)
        return stats
