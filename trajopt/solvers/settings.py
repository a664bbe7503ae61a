"""How a problem is solved, as one frozen object: :class:`SolverSettings`.

:func:`trajopt.solve`, every backend (:class:`trajopt.solvers.base.NlpSolver`), the
receding-horizon controller, the sweeps and the command line build one and pass it on;
its values are checked once, where it is built (``ValueError`` naming the field).

A field left at ``None`` is decided later, by :meth:`SolverSettings.resolved`:
``solver``, ``compile``, ``hessian`` and ``chart`` take the problem's
:attr:`~trajopt.Problem.solve_defaults`, else :data:`BASE_DEFAULTS`;
``max_iter`` and ``tol`` take the backend's defaults; ``transcription`` the problem's
:attr:`~trajopt.Problem.default_transcription`; ``max_wall_time``
:data:`DEFAULT_MAX_WALL_TIME`; ``threads`` the cores this process may use.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, Mapping, Optional

import numpy as np

from .derivatives import HESSIANS

if TYPE_CHECKING:
    from ..problem import Problem

#: What :meth:`SolverSettings.resolved` takes when neither the settings nor the problem say otherwise.
BASE_DEFAULTS: Dict[str, Any] = {"solver": "ipopt", "compile": False, "hessian": "exact", "chart": False}
#: Default wall-time limit of one solve (s).
DEFAULT_MAX_WALL_TIME = 600.0
#: How the derivatives reach the backend: assembled from per-stage derivatives, or CasADi's of the whole NLP graph.
DERIVATIVES = ("stagewise", "casadi")


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool) and bool(np.isfinite(value))


@dataclass(frozen=True)
class SolverSettings:
    """The settings of a solve; its fields (``None``: decided later, module docstring):

    solver:
        The backend's name, a key of :data:`trajopt.solvers.SOLVERS` (``"ipopt"``, ``"fatrop"``,
        ``"sqp"``, ``"rti"``); fatrop, ``sqp`` and ``rti`` need an explicit (multiple-shooting)
        transcription.
    transcription:
        A :class:`~trajopt.Transcription` or its name (``"trapezoidal"``, ``"hermite_simpson"``,
        ``"multiple_shooting"``, ...).
    max_iter:
        The backend's iteration cap (an int >= 0, 0 evaluating the starting point only; IPOPT's,
        fatrop's, ``sqpmethod``'s ``max_iter``).
    tol:
        The backend's convergence tolerance (> 0; IPOPT's and fatrop's ``tol``, ``sqpmethod``'s
        ``tol_pr`` and ``tol_du``).
    hessian:
        ``"exact"`` or ``"gauss-newton"`` (the least-squares costs' ``J_r^T J_r``).
    compile:
        Evaluate the stage functions as generated C, compiled once and cached on disk.
    chart:
        Tangent-chart knots ``x_k = apply_dx(xbar_k, d_k)`` (explicit transcriptions only).
    max_wall_time:
        Seconds a solve may take (> 0); past it the result is a failed solution.
    options:
        The backend's own options (IPOPT's ``{"mu_init": 1e-2}``, fatrop's, ``sqpmethod``'s,
        the real-time iteration's ``hpipm`` and ``regularization``); they win over every default.
    nlpsol_options:
        Extra ``casadi.nlpsol`` options (not the backend's).
    print_level:
        Verbosity 0 (silent) .. 12 (IPOPT's scale; 5 prints one line per iteration).
    derivatives:
        ``"stagewise"``: gradient, constraint Jacobian and Hessian assembled from per-stage
        derivatives; ``"casadi"``: CasADi differentiates the whole NLP graph.
    expand:
        With ``derivatives="casadi"``, expand the NLP to SX first.
    threads:
        Threads for the heavy stage maps (an int >= 1; the numbers do not depend on it).
    """

    solver: Optional[str] = None
    transcription: Any = None
    max_iter: Optional[int] = None
    tol: Optional[float] = None
    hessian: Optional[str] = None
    compile: Optional[bool] = None
    chart: Optional[bool] = None
    max_wall_time: Optional[float] = None
    options: Mapping[str, Any] = field(default_factory=dict)
    nlpsol_options: Mapping[str, Any] = field(default_factory=dict)
    print_level: int = 0
    derivatives: str = "stagewise"
    expand: bool = True
    threads: Optional[int] = None

    def __post_init__(self) -> None:
        from .registry import SOLVERS  # the registry imports the backends, which import this module

        for name in ("options", "nlpsol_options"):
            value = getattr(self, name)
            if value is None:
                value = {}
            if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
                raise ValueError(f"{name}: expected a dict of option names to values or None, got {value!r}")
            object.__setattr__(self, name, dict(value))
        if self.solver is not None and self.solver not in SOLVERS:
            raise ValueError(f"solver: expected one of {', '.join(SOLVERS)}, got {self.solver!r}")
        if self.transcription is not None:
            from ..transcription import get_transcription

            get_transcription(self.transcription)  # a clear error for an unknown name
        if self.max_iter is not None and not (_is_int(self.max_iter) and self.max_iter >= 0):
            raise ValueError(f"max_iter: expected an int >= 0 or None, got {self.max_iter!r}")
        if self.tol is not None and not (_is_number(self.tol) and self.tol > 0):
            raise ValueError(f"tol: expected a number > 0 or None, got {self.tol!r}")
        if self.hessian is not None and self.hessian not in HESSIANS:
            raise ValueError(f"hessian: expected one of {', '.join(HESSIANS)}, got {self.hessian!r}")
        for name in ("compile", "chart"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name}: expected a bool or None, got {getattr(self, name)!r}")
        if self.max_wall_time is not None and not (_is_number(self.max_wall_time) and self.max_wall_time > 0):
            raise ValueError(f"max_wall_time: expected a number of seconds > 0 or None, got {self.max_wall_time!r}")
        if not (_is_int(self.print_level) and 0 <= self.print_level <= 12):
            raise ValueError(f"print_level: expected an int in 0..12, got {self.print_level!r}")
        if self.derivatives not in DERIVATIVES:
            raise ValueError(f"derivatives: expected one of {', '.join(repr(d) for d in DERIVATIVES)}, got {self.derivatives!r}")
        if self.compile and self.derivatives != "stagewise":
            raise ValueError("compile: compiles the stage-wise functions; it needs derivatives='stagewise'")
        if self.hessian not in (None, "exact") and self.derivatives != "stagewise":
            raise ValueError(f"hessian: {self.hessian!r} is assembled stage-wise; it needs derivatives='stagewise'")
        if self.threads is not None and not (_is_int(self.threads) and self.threads >= 1):
            raise ValueError(f"threads: expected an int >= 1 or None, got {self.threads!r}")

    def replace(self, **overrides: Any) -> "SolverSettings":
        """A copy with ``overrides`` (field names; ``ValueError`` for another name), checked again."""
        unknown = sorted(set(overrides) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            raise ValueError(f"settings: unknown field(s) {', '.join(unknown)}; the fields are {', '.join(f.name for f in dataclasses.fields(self))}")
        return dataclasses.replace(self, **overrides)

    def resolved(self, problem: "Problem") -> "SolverSettings":
        """``solver``, ``compile``, ``hessian`` and ``chart`` decided: each field given (not ``None``),
        else the problem's :attr:`~trajopt.Problem.solve_defaults`, else :data:`BASE_DEFAULTS`."""
        given = {name: getattr(self, name) for name in BASE_DEFAULTS if getattr(self, name) is not None}
        return self.replace(**{**BASE_DEFAULTS, **problem.solve_defaults, **given})

    def given(self) -> Dict[str, Any]:
        """The fields that differ from their defaults (a transcription object by its name): what a sweep
        records in its manifest and hands to its workers."""
        out = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
            if value != default:
                out[f.name] = getattr(value, "name", value) if f.name == "transcription" else value
        return out


def settings_with(settings: Any, overrides: Mapping[str, Any]) -> SolverSettings:
    """``settings`` (default: ``SolverSettings()``; a transcription or its name stands for
    ``SolverSettings(transcription=...)``, as in ``solve(problem, "hermite_simpson")``) with the
    ``overrides`` that are not ``None``."""
    from ..transcription import Transcription

    if isinstance(settings, (str, Transcription)):
        settings, overrides = None, {"transcription": settings, **overrides}
    if settings is not None and not isinstance(settings, SolverSettings):
        raise ValueError(f"settings: expected a trajopt.SolverSettings, a transcription or None, got {type(settings).__name__}")
    base = settings if settings is not None else SolverSettings()
    given = {key: value for key, value in overrides.items() if value is not None}
    return base.replace(**given) if given else base
