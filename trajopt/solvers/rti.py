"""The real-time iteration: one Gauss-Newton SQP step per call, its QP solved by HPIPM.

A receding-horizon controller (:mod:`trajopt.mpc`) re-solves almost the same
problem many times a second; one full SQP step from the shifted previous
solution tracks the optimum (Diehl's real-time iteration, what acados and
OCS2 run). At the point ``w`` (the starting point of the call) the step

    min_d  1/2 d^T H d + grad f(w)^T d
    s.t.   lbg - g(w) <= J(w) d <= ubg - g(w),   lbw - w <= d <= ubw - w

takes the Gauss-Newton Hessian ``H = J_r^T J_r`` of the least-squares costs
(:mod:`trajopt.solvers.derivatives`; the exact Hessian of the Lagrangian
with ``hessian="exact"``, at the given multipliers) plus an optional
Levenberg-Marquardt term ``lambda I`` (``options["regularization"]``,
``lambda >= 0``, default 0): the step then also pays ``lambda / 2 |d|^2``,
which shortens it along directions the cost barely curves (a light swing
leg's torques, say), where one linearization of stiff dynamics predicts
badly. HPIPM solves it
stage by stage (:mod:`trajopt.solvers.stage_layout`; infinite bounds reach it
as :data:`~trajopt.solvers.sqp.HPIPM_INFINITY`). The result is ``w + d`` with
the QP's multipliers, without a line search.

Compared with ``sqpmethod`` limited to one iteration, the call evaluates the
stage-wise derivatives once and keeps them: :attr:`RtiSolver.last_linearization`
holds ``J`` and ``H`` at the step's start, from which a controller computes its
Riccati feedback gains (:mod:`trajopt.mpc.feedback`) without differentiating
again. Work that reads only that linearization may run beside the QP:
:attr:`RtiSolver.alongside`, a function ``(J, H_upper) -> result`` of their nonzeros, is called
on a second thread while HPIPM solves (CasADi releases Python's lock while it
evaluates), its result kept in :attr:`RtiSolver.last_alongside`: a
controller's Riccati gains, shorter than HPIPM's solve, then cost no wall
time (docs/design/mpc.md).

A receding horizon splits the call in two (:meth:`~trajopt.solvers.base.NlpSolver.prepare` and
:meth:`~trajopt.solvers.base.NlpSolver.feedback`, acados' preparation and feedback phases). The
preparation linearizes at the shifted guess, whose first state is a prediction; the feedback fixes the
measured first state ``x_0`` through its bounds and solves the QP. Between the two, the first knot's
path rows (friction cones, torque limits) are linearized again at the measured state
(:func:`first_knot_refit`): for ``c(x_0, u_0)`` affine in ``u_0``, as a KKT model's contact forces
are, the first control then meets them exactly at the state the plant is in, where the prepared
linearization would leave an error of second order in the prediction's. The rest of the horizon keeps
the prepared linearization.

HPIPM runs in its ``"balance"`` mode from a barrier parameter ``mu0 = 1``
to residuals of 1e-4 (stationarity, complementarity, inequality
feasibility) and 1e-5 (the linearized dynamics),
:data:`DEFAULT_RTI_HPIPM_OPTIONS`: one Gauss-Newton step of a moving problem
is itself only that accurate, and the interior point keeps every inequality
strictly satisfied at any tolerance; tighter residuals cost iterations.
HPIPM solves for the step in scaled variables ``d = D d~``, each control
in units of its largest bound, or of ``1 / sqrt`` of the cost's curvature
at the problem's initial guess where that is smaller
(:func:`~trajopt.solvers.scaling.control_bound_scale`; the states as they
are): ``D H D``, ``D grad f``, ``J D`` and the bounds
divided by ``D``. The interior point is not invariant under that change of
units: it starts every bound's slack and multiplier alike and stops on
absolute residuals, and with torques in newton-metres that a least-squares
cost barely curves, a humanoid's QPs took several times the iterations of a
quadruped's for a less accurate first control (docs/design/mpc.md).
HPIPM's absolute formulation (``abs_form = 1``, which stops on the
complementarity alone) is not used: its inexact QPs leave a standing
robot's internal forces loose, and the Go1 standing in MuJoCo fell. Design
notes, with the measurements: docs/design/solvers.md. The
:class:`~trajopt.Solution`'s status is HPIPM's (``"Solve_Succeeded"`` when
the QP was solved), its ``iterations`` 1.
"""
from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, Optional, Tuple

import casadi as ca
import numpy as np

from models.numeric_call import NonzeroCall

from ..problem import Problem
from ..transcription import Transcription
from .base import NlpSolver, Start
from .derivatives import FIRST_KNOT
from .options import casadi_message
from .scaling import control_bound_scale
from .settings import SolverSettings
from .sqp import HPIPM_INFINITY
from .stage_layout import StageLayout, stage_layout

#: The Levenberg-Marquardt weight ``lambda`` of the step unless ``options["regularization"]`` (or the problem's
#: ``solver_options["rti"]["regularization"]``) sets it: none.
DEFAULT_RTI_REGULARIZATION = 0.0
#: HPIPM options of one real-time iteration, unless overridden by ``options["hpipm"]``.
DEFAULT_RTI_HPIPM_OPTIONS: Dict[str, Any] = {"mode": "balance", "iter_max": 50, "mu0": 1.0, "res_g_max": 1e-4, "res_b_max": 1e-5, "res_d_max": 1e-4, "res_m_max": 1e-4}

#: ``(J, H_upper) -> result``: work on a step's linearization, given as the nonzeros of the constraint Jacobian
#: and of the Hessian's upper triangle (in :attr:`RealTimeIterationStep.linearization_sparsity`), run beside
#: its QP (:attr:`RtiSolver.alongside`).
Alongside = Callable[[np.ndarray, np.ndarray], Any]


def first_knot_refit(first_knot: ca.Function, R: np.ndarray, rows: np.ndarray, a: ca.Sparsity, n_w: int) -> ca.Function:
    """``(a, lba, uba, w, w_new, p, lbg, ubg) -> (a_new, lba_new, uba_new)``: a QP's data (stage order ``rows``, constraint
    matrix of sparsity ``a``) linearized at ``w``, with the first knot's path rows ``R``
    (:func:`~trajopt.solvers.derivatives.first_knot_rows`, in the NLP's order; ``first_knot`` gives them and
    their Jacobian, :data:`~trajopt.solvers.derivatives.FIRST_KNOT`) linearized at ``w_new`` instead, which differs from ``w`` in the first knot's state only. For those rows

        lbg - g_0(w_new) + J_0(w_new) (w_new - w)  <=  J_0(w_new) d  <=  ubg - g_0(w_new) + J_0(w_new) (w_new - w)

    in the step ``d`` from ``w``: once the QP fixes the first state at ``w_new``, the rows hold exactly in
    whatever is linear in the step (the first control: a contact force of a KKT model, a torque).
    Their Jacobian's sparsity must lie in ``a``'s (the same stage functions give both)."""
    n_g = rows.size
    A = ca.MX.sym("a", a)
    lba, uba, w, w_new, p, lbg, ubg = (ca.MX.sym(name, size) for name, size in (("lba", n_g), ("uba", n_g), ("w", n_w), ("w_new", n_w), ("p", first_knot.size1_in(1)), ("lbg", n_g), ("ubg", n_g)))
    g0, J0 = first_knot(w_new, p)
    in_stage_order = np.empty(n_g, dtype=int)
    in_stage_order[rows] = np.arange(n_g)
    target = in_stage_order[R]  # the QP rows of the first knot's path rows
    shift = ca.mtimes(J0, w_new - w)
    new_lba, new_uba = ca.MX(lba), ca.MX(uba)
    new_lba[target.tolist()] = lbg[R.tolist()] - g0 + shift
    new_uba[target.tolist()] = ubg[R.tolist()] - g0 + shift
    row_of = np.full(n_g, -1)
    row_of[target] = np.arange(R.size)
    a_rows, a_cols = a.get_triplet()
    j_sparsity = J0.sparsity()
    nonzero = {(r, c): i for i, (r, c) in enumerate(zip(*j_sparsity.get_triplet()))}
    replaced = [(i, nonzero.get((row_of[r], c))) for i, (r, c) in enumerate(zip(a_rows, a_cols)) if row_of[r] >= 0]
    if any(j is None for _, j in replaced) or len(replaced) != j_sparsity.nnz():
        raise AssertionError("the first knot's Jacobian and the QP's constraint matrix differ in sparsity")
    new_a = ca.MX(A)
    new_a.nz[[i for i, _ in replaced]] = ca.sparsity_cast(J0, ca.Sparsity.dense(j_sparsity.nnz(), 1))[[j for _, j in replaced]]
    return ca.Function("rti_first_knot_rows", [A, lba, uba, w, w_new, p, lbg, ubg], [new_a, new_lba, new_uba], ["a", "lba", "uba", "w", "w_new", "p", "lbg", "ubg"], ["a_new", "lba_new", "uba_new"])


class RealTimeIterationStep:
    """One QP step from ``x0`` (the Gauss-Newton or exact Hessian, the linearized constraints, solved by
    HPIPM, no line search), called like a CasADi ``nlpsol`` (``x0, p, lbx, ubx,
    lbg, ubg`` and optional ``lam_g0``) and answering ``x, f, lam_x, lam_g`` in the NLP's row order.
    A call with ``prepared=True`` solves the QP of the last :meth:`linearize` with the call's variable
    bounds, the first knot's rows linearized again at the first state those bounds fix
    (``first_knot``: that state's entries of ``w`` and the rows, :func:`first_knot_refit`).
    ``scale`` (n_w,) is the diagonal ``D`` of the variables HPIPM solves for, ``d = D d~`` (module
    docstring; ``None``: unscaled); the answer is in the NLP's variables either way.

    The QP's data come from one CasADi function of the point (the derivatives, the Hessian made
    symmetric, the rows put in stage order). It, the first knot's refit and HPIPM are called on
    preallocated numpy buffers of their nonzeros (:class:`models.numeric_call.NonzeroCall`): CasADi's
    own calls convert numpy arguments element by element, and the data of one step would spend a
    large share of a tick in conversions (docs/design/mpc.md). ``regularization`` is the Levenberg-Marquardt weight added to the
    Hessian's diagonal (module docstring). ``alongside`` (or ``None``) runs on a second thread while HPIPM
    solves, its result in ``alongside_result`` (``None`` when there is none).
    """

    def __init__(
        self, derivatives: Dict[str, ca.Function], layout: StageLayout, n_w: int, n_g: int, exact: bool, hpipm: Dict[str, Any],
        regularization: float = 0.0, first_knot: Optional[Tuple[np.ndarray, np.ndarray]] = None, scale: Optional[np.ndarray] = None,
    ) -> None:  # fmt: skip
        self.rows, self.exact, self.n_w, self.n_g = layout.rows, exact, n_w, n_g
        self.first_state = None if first_knot is None else first_knot[0]
        w, p, lam = ca.MX.sym("w", n_w), ca.MX.sym("p", derivatives["jac_g"].size1_in(1)), ca.MX.sym("lam", n_g)
        lbw, ubw, lbg, ubg = (ca.MX.sym(name, size) for name, size in (("lbw", n_w), ("ubw", n_w), ("lbg", n_g), ("ubg", n_g)))
        g, jac = derivatives["jac_g"](w, p)
        f, grad = derivatives["grad_f"](w, p)
        hess = derivatives["hess_lag"](w, p, 1.0, lam)
        order = self.rows.tolist()
        damping = regularization * ca.MX.eye(n_w) if regularization > 0 else ca.MX(n_w, n_w)
        outputs = {"h": ca.triu2symm(hess) + damping, "g": grad, "a": jac[order, :], "lba": (lbg - g)[order], "uba": (ubg - g)[order], "lbx": lbw - w, "ubx": ubw - w, "f": f, "jac_g": jac, "hess_upper": hess}
        self.qp_data = ca.Function("rti_qp_data", [w, p, lam, lbw, ubw, lbg, ubg], list(outputs.values()), ["w", "p", "lam", "lbw", "ubw", "lbg", "ubg"], list(outputs))
        qp_data = {"h": self.qp_data.sparsity_out("h"), "a": self.qp_data.sparsity_out("a")}
        options = {**layout.options(), "inf": HPIPM_INFINITY, "hpipm": hpipm, "error_on_fail": False}
        self.qp = ca.conic("rti_qp", "hpipm", qp_data, options)
        self.scale = np.ones(n_w) if scale is None else np.asarray(scale, dtype=float).reshape(n_w)
        h_rows, h_cols = qp_data["h"].get_triplet()
        #: the factors of the nonzeros of ``H`` (``D_i D_j``) and ``A`` (``D_j``) in the scaled QP
        self._nonzero_scale = {"h": self.scale[h_rows] * self.scale[h_cols], "a": self.scale[qp_data["a"].get_triplet()[1]]}
        self.refit_first_knot = None if first_knot is None else first_knot_refit(derivatives[FIRST_KNOT], first_knot[1], self.rows, qp_data["a"], n_w)
        #: the calls of the three functions on nonzero vectors (numpy arrays cross into CasADi element by element)
        self._calls = {"qp_data": NonzeroCall(self.qp_data), "qp": NonzeroCall(self.qp, fresh=True), "refit": None if self.refit_first_knot is None else NonzeroCall(self.refit_first_knot)}
        #: the sparsities of ``J`` and ``H_upper``, whose nonzeros :attr:`last_linearization` holds
        self.linearization_sparsity = (self.qp_data.sparsity_out("jac_g"), self.qp_data.sparsity_out("hess_upper"))
        self.alongside: Optional[Alongside] = None
        self.alongside_result: Any = None
        self.qp_iterations = 0  # HPIPM's interior-point iterations at the last call
        #: wall time (s) of the last call's phases: ``linearize`` (derivatives and QP data, one CasADi call),
        #: ``qp`` (HPIPM's solve) and ``alongside`` (the wait, after the QP, for the work run beside it)
        self.phase_times: Dict[str, float] = {}
        self._point, self._data, self.linearize_time = np.zeros(n_w), {}, 0.0  # the last linearization: point and QP data (nonzeros)
        self._worker: Optional[ThreadPoolExecutor] = None
        self._worker_pid = 0  # the process that started the worker thread
        self._stats: Dict[str, Any] = {}

    @property
    def last_linearization(self) -> Optional[Tuple[np.ndarray, np.ndarray]]:
        """The nonzeros of ``J`` and ``H_upper`` (:attr:`linearization_sparsity`) at the last linearization, or ``None``."""
        return (self._data["jac_g"], self._data["hess_upper"]) if self._data else None

    def linearize(self, **args: Any) -> None:
        """The QP data at the call's point (``x0``, ``p``, bounds, ``lam_g0`` with an exact Hessian), kept for a
        call with ``prepared=True``, which then solves that QP with its own variable bounds (a receding
        horizon's preparation, :meth:`trajopt.solvers.base.NlpSolver.prepare`)."""
        start = time.perf_counter()
        self._point = np.asarray(args["x0"], dtype=float).reshape(-1)
        lam = np.asarray(args.get("lam_g0", np.zeros(self.n_g)), dtype=float).reshape(-1) if self.exact else None
        values = self._calls["qp_data"](self._point, args["p"], lam, args["lbx"], args["ubx"], args["lbg"], args["ubg"])
        self._data = dict(zip(self.qp_data.name_out(), values))
        self.linearize_time = time.perf_counter() - start  # wall time (s) of the last linearization

    def __call__(self, **args: Any) -> Dict[str, Any]:
        prepared = args.pop("prepared", False)
        if prepared:  # linearized by linearize() (its time is the preparation's): only the variable bounds are the call's
            lbx, ubx = np.asarray(args["lbx"], dtype=float), np.asarray(args["ubx"], dtype=float)
            data = {**self._data, "lbx": lbx - self._point, "ubx": ubx - self._point}
            if self.refit_first_knot is not None:  # the first knot's rows linearized again, at its new state
                moved = self._point.copy()
                moved[self.first_state] = lbx[self.first_state]
                a, lba, uba = self._calls["refit"](data["a"], data["lba"], data["uba"], self._point, moved, args["p"], args["lbg"], args["ubg"])
                data.update(a=a, lba=lba, uba=uba)
        else:
            self.linearize(**args)
            data = self._data
        w0, linearized = self._point, time.perf_counter()
        self.alongside_result = None
        beside = None
        if self.alongside is not None:
            if self._worker is None or self._worker_pid != os.getpid():  # a forked child inherits the executor, not its thread
                self._worker, self._worker_pid = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rti-alongside"), os.getpid()
            beside = self._worker.submit(self.alongside, *self.last_linearization)
        solved = linearized
        try:
            qp = dict(zip(self.qp.name_out(), self._calls["qp"](*self._scaled(data))))
            solved = time.perf_counter()
        finally:
            if beside is not None:
                self.alongside_result = beside.result()  # its exception, if any, is the call's
        self.phase_times = {**({} if prepared else {"linearize": self.linearize_time}), "qp": solved - linearized, "alongside": time.perf_counter() - solved}
        stats = self._calls["qp"].stats()
        self.qp_iterations = int(stats.get("iter_count", 0))
        step = self.scale * qp["x"]
        lam_g = np.empty(self.n_g)
        lam_g[self.rows] = qp["lam_a"]
        success = bool(stats.get("success", False)) and np.isfinite(step).all()
        self._stats = {"return_status": "Solve_Succeeded" if success else f"QP failed: {stats.get('return_status', 'unknown')}", "success": success, "iter_count": 1}
        return {"x": w0 + step, "f": float(data["f"][0]) + float(qp["cost"][0]), "lam_x": qp["lam_x"] / self.scale, "lam_g": lam_g}

    def _scaled(self, data: Dict[str, np.ndarray]) -> Tuple[np.ndarray, ...]:
        """HPIPM's inputs ``h, g, a, lba, uba, lbx, ubx`` (nonzeros) for the scaled step ``d~``: ``D H D``,
        ``D g``, ``A D``, the rows' bounds as they are, the variables' divided by ``D``."""
        factors, D = self._nonzero_scale, self.scale
        return (data["h"] * factors["h"], data["g"] * D, data["a"] * factors["a"], data["lba"], data["uba"], data["lbx"] / D, data["ubx"] / D)

    def stats(self) -> Dict[str, Any]:
        """The last call's ``return_status`` (``"Solve_Succeeded"`` or HPIPM's failure), ``success`` and ``iter_count`` (1)."""
        return dict(self._stats)


class RtiSolver(NlpSolver):
    """One real-time iteration per :meth:`solve`: one Gauss-Newton SQP step from the starting point, its QP
    solved by HPIPM; the result's status is HPIPM's, its iterations 1. Needs the stage form and the
    stage-wise derivatives. ``options`` may hold HPIPM's own under ``"hpipm"`` and the Levenberg-Marquardt
    weight under ``"regularization"`` (a float >= 0; module docstring); the problem's
    ``solver_options["rti"]`` may set both, ``options`` win.
    ``last_linearization`` is ``(J, H_upper)`` at the last step's start (:meth:`NlpSolver.linearization`'s form);
    :attr:`alongside` runs on it beside the QP (module docstring); :attr:`last_qp_iterations` counts HPIPM's iterations."""

    name = "rti"
    plugin = "sqpmethod"  # its nlpsol options are the ones this backend accepts (none of them are used)
    takes_multipliers = True
    reports_qp_iterations = True
    linearizes_alongside = True
    default_options = {"hpipm": DEFAULT_RTI_HPIPM_OPTIONS, "regularization": DEFAULT_RTI_REGULARIZATION}

    def __init__(self, problem: Problem, settings: SolverSettings | Transcription | str | None = None, **overrides: Any) -> None:
        self._alongside: Optional[Alongside] = None
        super().__init__(problem, settings, **overrides)
        if self._nlp_function is None:
            raise ValueError("derivatives: the real-time iteration takes the stage-wise derivatives (derivatives='stagewise')")
        self.layout: StageLayout = stage_layout(self.nlp, "the real-time iteration")
        unknown = set(self.user_options) - {"hpipm", "regularization"}
        if unknown:
            raise ValueError(f"options: the real-time iteration takes one step and only 'hpipm' (HPIPM's options) and 'regularization', got {sorted(unknown)}")
        self.regularization = self.backend_options("cold")["regularization"]
        if isinstance(self.regularization, bool) or not isinstance(self.regularization, (int, float)) or not self.regularization >= 0 or not np.isfinite(self.regularization):
            raise ValueError(f"options: 'regularization' is the Levenberg-Marquardt weight, a finite float >= 0, got {self.regularization!r}")

    @property
    def alongside(self) -> Optional[Alongside]:
        """``(J, H_upper) -> result`` called on a second thread while each step's QP is solved (or ``None``)."""
        return self._alongside

    @alongside.setter
    def alongside(self, function: Optional[Alongside]) -> None:
        if function is not None and not callable(function):
            raise ValueError(f"alongside: expected a function (J, H_upper) -> result or None, got {type(function).__name__}")
        self._alongside = function
        if self._step is not None:
            self._step.alongside = function

    @property
    def _step(self) -> Optional[RealTimeIterationStep]:
        """The one step function (built at the first :meth:`solve`, shared by cold and warm starts), or ``None``."""
        return next(iter(self._solvers.values()), None)

    @property
    def last_alongside(self) -> Any:
        """What :attr:`alongside` returned at the last step (``None`` when it was not set)."""
        return None if self._step is None else self._step.alongside_result

    @property
    def last_qp_iterations(self) -> int:
        """HPIPM's interior-point iterations in the last step's QP (0 before the first :meth:`solve`)."""
        return 0 if self._step is None else self._step.qp_iterations

    @property
    def last_phase_times(self) -> Dict[str, float]:
        """Wall time (s) of the last step's ``linearize``, ``qp`` and ``alongside`` phases (empty before the first :meth:`solve`)."""
        return {} if self._step is None else dict(self._step.phase_times)

    @property
    def last_linearization(self) -> Optional[Tuple[ca.DM, ca.DM]]:
        """``(J, H_upper)`` at the last step's start: the constraint Jacobian and the upper triangle of the
        Hessian (Gauss-Newton or exact), in the NLP's row order; ``None`` before the first :meth:`solve`."""
        if self._step is None or self._step.last_linearization is None:
            return None
        return tuple(ca.DM(sparsity, nonzeros) for sparsity, nonzeros in zip(self._step.linearization_sparsity, self._step.last_linearization))

    def _prepare_backend(self, point: Dict[str, np.ndarray], args: Dict[str, Any]) -> Dict[str, float]:
        """Linearize at the prepared point (:meth:`RealTimeIterationStep.linearize`): the feedback only solves the QP."""
        step = self._solver(self._start_of(point))
        step.linearize(**args)
        return {"linearize": step.linearize_time}

    def _run_prepared(self, point: Dict[str, np.ndarray], args: Dict[str, Any]) -> Dict[str, Any]:
        return self._run(point, {**args, "prepared": True})

    def _create(self, start: Start) -> RealTimeIterationStep:
        if self._step is not None:
            return self._step
        hpipm = self.backend_options(start)["hpipm"]
        derivatives = {"jac_g": self._stagewise_options["jac_g"], "grad_f": self._stagewise_options["grad_f"], "hess_lag": self._stagewise_options["hess_lag"], FIRST_KNOT: self._first_knot}
        first_knot = (self.nlp.idx_x[0], self.first_knot_rows)
        cost_hessian = self.linearization(self.nlp.initial_guess())[1]
        scale = control_bound_scale(*self.nlp.bounds_w(), self.nlp.idx_u, np.array(ca.diag(cost_hessian)).ravel())
        try:
            step = RealTimeIterationStep(derivatives, self.layout, self.nlp.n_w, self.nlp.n_g, self.hessian == "exact", hpipm, float(self.regularization), first_knot, scale)
        except RuntimeError as err:
            raise ValueError(f"options: CasADi could not build HPIPM with hpipm={hpipm!r}: {casadi_message(err)}") from None
        step.alongside = self._alongside
        return step
