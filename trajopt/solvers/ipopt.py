"""The IPOPT backend (MUMPS sparse LDL^T of the whole KKT matrix) through ``casadi.nlpsol``.

Defaults (:data:`DEFAULT_IPOPT_OPTIONS`): exact Hessian, MUMPS, ``tol`` 1e-8,
at most 1000 iterations, IPOPT silent unless ``print_level`` > 0. MUMPS orders
the KKT matrix by QAMD (``mumps_pivot_order`` 6) with a 100 % memory margin
(``mumps_mem_percent``; MUMPS asks for more when it needs it, and a smaller
workspace is reused by malloc instead of being mapped afresh for every
factorization); IPOPT's defaults (automatic ordering, 1000 %) spend more
of its own time on the legged problems. Derivatives are assembled stage by stage
(:mod:`trajopt.solvers.derivatives`), optionally from compiled C (``compile=True``:
gcc runs once per stage function, in parallel, then the cache serves). The
stage-wise assembly builds much faster than letting CasADi differentiate the
NLP expanded to SX (``derivatives="casadi", expand=True``), solves about as
fast, and scales to multibody models. Design notes, with the measurements:
docs/design/solvers.md.

Warm start (``warm_start=solution``): with the same transcription and layout
the primal point and both multiplier vectors are reused with
:data:`WARM_START_OPTIONS` (``warm_start_init_point``, bound pushes 1e-9, a
small ``mu_init``), so an optimal solution re-converges in a couple of
iterations. Otherwise the previous trajectory, re-sampled at the new knots
(with :meth:`Solution.evaluate`), is used as a primal guess only.

A homotopy's stage (:mod:`trajopt.homotopy`) starts from the previous stage's
solution with :data:`HOMOTOPY_WARM_START_OPTIONS` instead: ``mu_init`` 1e-6
and pushes of 1e-5. Its tightened rows are violated at that point; started
there at ``mu`` 1e-9, IPOPT regularized the KKT matrix ever harder until its
step computation failed. The measurement that chose these values is in
docs/design/legged.md.

IPOPT stops at ``max_iter`` iterations (:data:`DEFAULT_IPOPT_OPTIONS`) or after
the solver's ``max_wall_time`` seconds, checked between iterations.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import casadi as ca
import numpy as np

from .base import NlpSolver, Start
from .options import casadi_message, check_ipopt_options
from .scaling import equilibrated_scale, scaled_functions, scaled_graph

#: IPOPT options used unless overridden by ``options``.
DEFAULT_IPOPT_OPTIONS: Dict[str, Any] = {
    "tol": 1e-8,
    "max_iter": 1000,
    "linear_solver": "mumps",
    "mumps_pivot_order": 6,
    "mumps_mem_percent": 100,
    "hessian_approximation": "exact",
    "sb": "yes",
}
#: IPOPT options added for a primal-dual warm start.
WARM_START_OPTIONS: Dict[str, Any] = {
    "warm_start_init_point": "yes",
    "warm_start_bound_push": 1e-9,
    "warm_start_bound_frac": 1e-9,
    "warm_start_slack_bound_push": 1e-9,
    "warm_start_slack_bound_frac": 1e-9,
    "warm_start_mult_bound_push": 1e-9,
    "mu_init": 1e-9,
}
#: IPOPT options added for the start of a homotopy's stage from the previous stage's solution (module docstring).
HOMOTOPY_WARM_START_OPTIONS: Dict[str, Any] = {
    "warm_start_init_point": "yes",
    "warm_start_bound_push": 1e-5,
    "warm_start_bound_frac": 1e-5,
    "warm_start_slack_bound_push": 1e-5,
    "warm_start_slack_bound_frac": 1e-5,
    "warm_start_mult_bound_push": 1e-5,
    "mu_init": 1e-6,
}


class IpoptSolver(NlpSolver):
    """A problem transcribed once and solved with IPOPT (arguments: :class:`trajopt.solvers.base.NlpSolver`;
    ``options`` are IPOPT's, over :data:`DEFAULT_IPOPT_OPTIONS` and the problem's ``solver_options["ipopt"]``)."""

    name = plugin = "ipopt"
    takes_multipliers = True
    default_options = DEFAULT_IPOPT_OPTIONS
    warm_start_options = WARM_START_OPTIONS
    homotopy_options = HOMOTOPY_WARM_START_OPTIONS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: the NLP and its derivative options for the scaled variables (``None`` when they are not scaled)
        self._scaled: Optional[Tuple[Any, Dict[str, Any]]] = None
        if self.problem.scale_variables:
            D = self.variable_scale = self._equilibrated_scale()
            unscaled = super()._nlp_problem()
            self._scaled = (scaled_graph(unscaled, D), {}) if isinstance(unscaled, dict) else scaled_functions(unscaled, self._stagewise_options, D)

    def _equilibrated_scale(self) -> np.ndarray:
        """:func:`~trajopt.solvers.scaling.equilibrated_scale` at the problem's initial guess (the scale
        stays with the solver: warm starts and later solves keep it)."""
        nlp, p = self.nlp, self.nlp.parameters()
        w0 = nlp.initial_guess()
        if self._nlp_function is not None:
            jacobian = self._stagewise_options["jac_g"](w0, p)[1]
        else:
            jacobian = ca.Function("jac_g", [nlp.w, nlp.p], [ca.jacobian(nlp.g, nlp.w)])(w0, p)
        lbx, ubx = nlp.bounds_w()
        return equilibrated_scale(jacobian, lbx == ubx, [a for a in (nlp.idx_x, nlp.idx_u, nlp.idx_z) if np.size(a)])

    def _nlp_problem(self) -> Any:
        return super()._nlp_problem() if self._scaled is None else self._scaled[0]

    def run_options(self) -> Dict[str, Any]:
        return {"max_wall_time": self.max_wall_time, "print_level": self.print_level}

    def _derivative_options(self) -> Dict[str, Any]:
        """The stage-wise derivative options of ``casadi.nlpsol`` (for the scaled variables when they are)."""
        return self._stagewise_options if self._scaled is None else self._scaled[1]

    @classmethod
    def check_options(cls, options: Optional[Dict[str, Any]], nlpsol_options: Optional[Dict[str, Any]]) -> None:
        """Raise ``ValueError`` naming each option IPOPT or ``casadi.nlpsol`` would refuse (:mod:`trajopt.solvers.options`), before any building."""
        check_ipopt_options(options)
        super().check_options(options, nlpsol_options)

    def _create(self, start: Start) -> ca.Function:
        ipopt = self.backend_options(start)
        opts = {"print_time": False, "error_on_fail": False, "ipopt": ipopt, **self._derivative_options(), **self.nlpsol_options}
        expand = self.expand and self.derivatives == "casadi"
        try:
            try:
                return ca.nlpsol("trajopt", "ipopt", self._nlp_problem(), {**opts, "expand": expand})
            except RuntimeError:
                if not expand:
                    raise
                return ca.nlpsol("trajopt", "ipopt", self._nlp_problem(), {**opts, "expand": False})  # not SX-expandable
        except RuntimeError as err:
            raise ValueError(f"options: CasADi could not build the IPOPT solver with ipopt={ipopt!r}: {casadi_message(err)}") from None
