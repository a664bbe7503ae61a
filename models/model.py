"""Base interface of every dynamical model: continuous dynamics ``xdot = f(x, u, t)``.

A subclass writes its math once, symbolically, in :meth:`Model.continuous_dynamics`
(CasADi SX/MX column vectors in, an expression out). The public methods accept
numpy arrays (and return numpy, through ``casadi.Function`` objects built once and
cached on the model) or CasADi SX/MX (and return expressions of the same type).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Callable, Dict, Tuple

import casadi as ca
import numpy as np

from lie import _backend as B

from .numeric_call import NumericCall


class Model(ABC):
    """Continuous-time model ``xdot = f(x, u, t)`` with a Euclidean error state.

    Subclasses set :attr:`state_dim` and :attr:`control_dim` (or override the
    properties) and implement :meth:`continuous_dynamics`. Models whose state has
    rotations derive from :class:`models.LieGroupModel`, which overrides the
    error-state methods (:meth:`state_error`, :meth:`apply_dx`, ...).
    """

    name: str = "model"

    def __init__(self) -> None:
        self._functions: Dict[str, ca.Function] = {}
        self._numeric: Dict[str, NumericCall] = {}

    # ------------------------------------------------------------------ sizes
    @property
    @abstractmethod
    def state_dim(self) -> int:
        """Length ``n`` of the state vector ``x``."""

    @property
    @abstractmethod
    def control_dim(self) -> int:
        """Length ``m`` of the control vector ``u``."""

    @property
    def error_dim(self) -> int:
        """Length of the error (tangent) state ``dx``; ``state_dim`` for vector states."""
        return self.state_dim

    def control_bounds(self) -> Tuple[np.ndarray, np.ndarray]:
        """Lower and upper control limits (``-inf``/``inf`` where unlimited)."""
        m = self.control_dim
        return np.full(m, -np.inf), np.full(m, np.inf)

    # --------------------------------------------------------------- dynamics
    @abstractmethod
    def continuous_dynamics(self, x: Any, u: Any, t: Any) -> Any:
        """Symbolic ``xdot`` (n x 1) for CasADi column vectors ``x``, ``u`` and scalar ``t``."""

    def dynamics(self, x: Any, u: Any, t: Any = 0.0) -> Any:
        """Time derivative of the state, ``xdot = f(x, u, t)`` (n,)."""
        x, u = self._check_xu(x, u)
        if B.is_symbolic(x, u, t):
            return self.continuous_dynamics(x, u, t)
        return self._call("dynamics", x, u, t)

    def dynamics_jacobian(self, x: Any, u: Any, t: Any = 0.0) -> Tuple[Any, Any]:
        """Jacobians ``(A, B) = (df/dx, df/du)`` of the raw state derivative (n x n, n x m).

        For states with rotations ``A`` is the derivative with respect to the raw
        parameters; use :meth:`error_jacobian` to move it to the tangent space.
        """
        x, u = self._check_xu(x, u)
        if B.is_symbolic(x, u, t):
            f = self.continuous_dynamics(x, u, t)
            return ca.jacobian(f, x), ca.jacobian(f, u)
        return self._call("dynamics_jacobian", x, u, t, matrix=True)

    # -------------------------------------------------------------- error state
    def state_error(self, x: Any, x0: Any) -> Any:
        """Error ``dx`` with ``apply_dx(x0, dx) == x``; plain difference for vector states."""
        return B.vector(x, self.state_dim, "x") - B.vector(x0, self.state_dim, "x0")

    def apply_dx(self, x0: Any, dx: Any) -> Any:
        """Retraction ``x0 (+) dx``; plain sum for vector states."""
        return B.vector(x0, self.state_dim, "x0") + B.vector(dx, self.error_dim, "dx")

    def error_jacobian(self, x: Any) -> Any:
        """``d apply_dx(x, dx) / d dx`` at ``dx = 0`` (n x error_dim)."""
        return B.eye(self.state_dim, like=B.vector(x, self.state_dim, "x"))

    def error_jacobian_T(self, x: Any) -> Any:
        """``d state_error(y, x) / d y`` at ``y = x`` (error_dim x n)."""
        return B.eye(self.state_dim, like=B.vector(x, self.state_dim, "x"))

    # ----------------------------------------------------------------- helpers
    def symbols(self, kind: type = ca.SX) -> Tuple[Any, Any, Any]:
        """Fresh symbols ``(x, u, t)`` of this model's sizes (SX by default)."""
        return kind.sym("x", self.state_dim), kind.sym("u", self.control_dim), kind.sym("t")

    def _builders(self) -> Dict[str, Callable[[], ca.Function]]:
        """Builders of the cached ``casadi.Function`` objects, by key. Subclasses extend it."""
        return {"dynamics": self._build_dynamics, "dynamics_jacobian": self._build_dynamics_jacobian}

    def casadi_function(self, key: str) -> ca.Function:
        """The cached ``casadi.Function`` behind a public method (built on first use)."""
        fn = self._functions.get(key)
        if fn is None:
            builders = self._builders()
            if key not in builders:
                raise ValueError(f"key: unknown function {key!r}; known: {sorted(builders)}")
            fn = builders[key]()
            self._functions[key] = fn
        return fn

    def _call(self, key: str, *args: Any, matrix: bool = False) -> Any:
        """Call the cached function ``key``; numeric arguments give numpy outputs.

        Outputs come back as 1-D arrays, or as 2-D arrays when ``matrix`` (so a
        Jacobian with one column stays a matrix); a function with several
        outputs returns a tuple. Symbolic arguments give symbolic outputs (a
        call node for MX, the inlined expression for SX).
        """
        if B.is_symbolic(*args):
            out = self.casadi_function(key)(*args)
            outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        else:
            call = self._numeric.get(key)
            if call is None:
                call = self._numeric[key] = NumericCall(self.casadi_function(key))
            outs = call(*args)
            outs = outs if matrix else tuple(o.reshape(-1, order="F") for o in outs)
        return outs if len(outs) > 1 else outs[0]

    def _build_dynamics(self) -> ca.Function:
        x, u, t = self.symbols()
        return ca.Function(f"{self.name}_dynamics", [x, u, t], [self.continuous_dynamics(x, u, t)], ["x", "u", "t"], ["xdot"])

    def _build_dynamics_jacobian(self) -> ca.Function:
        x, u, t = self.symbols()
        f = self.continuous_dynamics(x, u, t)
        return ca.Function(f"{self.name}_dynamics_jacobian", [x, u, t], [ca.jacobian(f, x), ca.jacobian(f, u)], ["x", "u", "t"], ["A", "B"])

    def _check_xu(self, x: Any, u: Any) -> Tuple[Any, Any]:
        return B.vector(x, self.state_dim, "x"), B.vector(u, self.control_dim, "u")

