"""Base interface of every dynamical model: continuous dynamics ``xdot = f(x, u, t)``.

A subclass writes its math once, symbolically, in :meth:`Model.continuous_dynamics`
(CasADi SX/MX column vectors in, an expression out), or, as RobotDynamics.jl
allows, overrides :meth:`Model.dynamics` instead (the rule is on :class:`Model`). The public methods accept
numpy arrays (and return numpy, through ``casadi.Function`` objects built once and
cached on the model) or CasADi SX/MX (and return expressions of the same type).
"""
from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import casadi as ca
import numpy as np

from lie import _backend as B

from .casadi_names import casadi_name
from .compiled import DEFAULT_OPT, compile_functions
from .equilibrium import equilibrium_controls, equilibrium_residual_function
from .numeric_call import NumericCall

#: Standard gravity (m/s^2), along -z: that of pinocchio's models and of every plan, simulation and MuJoCo model.
GRAVITY = 9.81
#: Suffix of the cache keys of compiled functions: ``casadi_function("forward_dynamics" + COMPILED)`` (:meth:`Model.compile`).
COMPILED = ":compiled"


class Model(ABC):
    """Continuous-time model ``xdot = f(x, u, t)`` with a Euclidean error state.

    Subclasses set :attr:`state_dim` and :attr:`control_dim` (or override the
    properties) and implement :meth:`continuous_dynamics`, or override
    :meth:`dynamics` instead (RobotDynamics.jl's "either ``dynamics!`` or
    ``dynamics``"): a class that overrides ``dynamics`` and leaves
    ``continuous_dynamics`` abstract gets ``continuous_dynamics(x, u, t) =
    self.dynamics(x, u, t)`` (or ``self.dynamics(x, u)`` when its
    ``dynamics`` takes no time), so its ``dynamics`` must then accept CasADi
    SX/MX columns as well as numpy arrays. A class that defines neither stays
    abstract. Models whose state has
    rotations derive from :class:`models.LieGroupModel`, which overrides the
    error-state methods (:meth:`state_error`, :meth:`apply_dx`, ...). Every
    model has the four error-state maps under the same names (PinnZoo.jl's:
    :meth:`state_error`, :meth:`apply_dx` alias :meth:`apply_Δx`,
    :meth:`error_jacobian`, :meth:`error_jacobian_T`).
    """

    name: str = "model"
    #: Size of the per-knot dynamics parameters ``d`` (data such as a contact mode, fixed in an
    #: NLP, one column per knot) that :meth:`continuous_dynamics` takes as a fourth argument; 0
    #: for most models, whose ``continuous_dynamics`` takes ``(x, u, t)``.
    dynamics_param_dim: int = 0
    #: CasADi symbol type an NLP builds this model's stage functions with. ``ca.SX`` inlines
    #: everything (fast to evaluate); a model whose dynamics call a function with a custom
    #: Jacobian (:mod:`models.multibody.contact`) sets ``ca.MX`` so that the call survives until
    #: the stage derivatives are formed (they are expanded to SX afterwards).
    symbol_type: type = ca.SX

    def __init__(self) -> None:
        self._functions: Dict[str, ca.Function] = {}
        self._numeric: Dict[str, NumericCall] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "dynamics" in cls.__dict__ and getattr(cls.continuous_dynamics, "__isabstractmethod__", False):
            cls.continuous_dynamics = _continuous_from_dynamics  # type: ignore[method-assign]

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

    def dynamics(self, x: Any, u: Any, t: Any = 0.0, params: Any = None, out: Optional[np.ndarray] = None) -> Any:
        """Time derivative of the state, ``xdot = f(x, u, t)`` (n,), or ``f(x, u, t, d)`` with the
        dynamics parameters ``params`` (:attr:`dynamics_param_dim`,) of a model that has them.

        ``out``: a float array of shape ``(n,)`` that receives ``xdot`` and is
        returned (RobotDynamics.jl's ``dynamics!``; numeric calls only,
        :func:`fill_out`).
        """
        x, u = self._check_xu(x, u)
        t = B.time_argument(t)
        extra = self._dynamics_params(params)
        if B.is_symbolic(x, u, t, *extra):
            return fill_out(self.continuous_dynamics(x, u, t, *extra), out)
        return fill_out(self._call("dynamics", x, u, t, *extra), out)

    def parametric_dynamics(self, x: Any, u: Any, t: Any, params: Any) -> Any:
        """:meth:`dynamics` with the dynamics parameters ``params``, which a model without
        them ignores (they may be empty or ``None``): what transcriptions call."""
        return self.dynamics(x, u, t, params=params) if self.dynamics_param_dim else self.dynamics(x, u, t)

    def _dynamics_params(self, params: Any) -> tuple:
        """``(params,)`` checked against :attr:`dynamics_param_dim`, or ``()`` for a model without them."""
        if not self.dynamics_param_dim:
            size = 0 if params is None else params.numel() if B.is_symbolic(params) else np.size(params)
            if size:
                raise ValueError(f"params: {type(self).__name__} takes no dynamics parameters, got {params!r}")
            return ()
        if params is None:
            raise ValueError(f"params: {type(self).__name__} needs dynamics parameters of shape ({self.dynamics_param_dim},)")
        return (B.vector(params, self.dynamics_param_dim, "params"),)

    def dynamics_jacobian(self, x: Any, u: Any, t: Any = 0.0, params: Any = None) -> Tuple[Any, Any]:
        """Jacobians ``(A, B) = (df/dx, df/du)`` of the raw state derivative (n x n, n x m).

        For states with rotations ``A`` is the derivative with respect to the raw
        parameters; use :meth:`error_jacobian` to move it to the tangent space.
        ``params`` as in :meth:`dynamics`.
        """
        x, u = self._check_xu(x, u)
        t = B.time_argument(t)
        extra = self._dynamics_params(params)
        if B.is_symbolic(x, u, t, *extra):
            f = self.continuous_dynamics(x, u, t, *extra)
            return ca.jacobian(f, x), ca.jacobian(f, u)
        return self._call("dynamics_jacobian", x, u, t, *extra, matrix=True)

    def equilibrium_control(self, x: Any, t: float = 0.0, params: Any = None, bounds: Any = None) -> np.ndarray:
        """The control (m,) within ``bounds`` (``(lower, upper)``, default :meth:`control_bounds`)
        that holds the model where ``x`` puts it.

        The bounded least-squares control ``argmin |f_a(x, u, t)|^2`` of the rows
        ``f_a`` of ``xdot`` that the control can change (the velocity
        derivatives of a mechanical system; :mod:`models.equilibrium`): hover
        thrust for a level quadrotor, gravity-compensating torques for a fixed-base
        arm, the smallest accelerations an underactuated model can reach.
        Problems start from it by default (:meth:`trajopt.Problem.initial_guess`).
        ``params``: the dynamics parameters of a model that has them. A model
        states its own equilibrium by overriding this method.
        """
        x = B.check_finite(B.numeric_array(x, "x"), "x")
        if x.shape != (self.state_dim,):
            raise ValueError(f"x: expected shape ({self.state_dim},), got {x.shape}")
        d = np.asarray(self._dynamics_params(params)[0], dtype=float).reshape(1, -1) if self.dynamics_param_dim else np.zeros((1, 0))
        lower, upper = (np.broadcast_to(np.asarray(b, dtype=float), (1, self.control_dim)) for b in (self.control_bounds() if bounds is None else bounds))
        return equilibrium_controls(self, x[None, :], np.array([B.real(t, "t")]), d, lower, upper)[0]

    # -------------------------------------------------------------- error state
    def state_error(self, x: Any, x0: Any) -> Any:
        """Error ``dx`` with ``apply_dx(x0, dx) == x``; plain difference for vector states."""
        return B.vector(x, self.state_dim, "x") - B.vector(x0, self.state_dim, "x0")

    def apply_dx(self, x0: Any, dx: Any) -> Any:
        """Retraction ``x0 (+) dx``; plain sum for vector states."""
        return B.vector(x0, self.state_dim, "x0") + B.vector(dx, self.error_dim, "dx")

    def apply_Δx(self, x0: Any, dx: Any) -> Any:
        """:meth:`apply_dx` under PinnZoo.jl's name ``apply_Δx`` (every model, whatever its ``apply_dx``)."""
        return self.apply_dx(x0, dx)

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

    def param_symbols(self, kind: type = ca.SX) -> tuple:
        """``(d,)``: a fresh symbol of the dynamics parameters, or ``()`` for a model without them."""
        return (kind.sym("d", self.dynamics_param_dim),) if self.dynamics_param_dim else ()

    def _builders(self) -> Dict[str, Callable[[], ca.Function]]:
        """Builders of the cached ``casadi.Function`` objects, by key. Subclasses extend it."""
        return {"dynamics": self._build_dynamics, "dynamics_jacobian": self._build_dynamics_jacobian, "equilibrium_residual": lambda: equilibrium_residual_function(self)}

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

    #: The keys :meth:`compile` compiles by default (none here; subclasses name the ones their users call most).
    hot_functions: Tuple[str, ...] = ()

    def compile(
        self,
        keys: Optional[Sequence[str]] = None,
        opt: str = DEFAULT_OPT,
        cache_dir: Union[str, Path, None] = None,
        compiler: Optional[str] = None,
    ) -> List[str]:
        """Evaluate numeric calls of ``keys`` (default :attr:`hot_functions`) through compiled C.

        Each function is generated as C, compiled once (all of them in
        parallel) and cached on disk by :func:`models.compiled.compile_functions`
        (``opt``, ``cache_dir`` and ``compiler`` go there). Symbolic calls keep
        using the CasADi functions (they carry derivatives); the compiled ones are
        ``casadi_function(key + COMPILED)`` (:meth:`numeric_function`). Without a working compiler a
        :class:`models.compiled.CompilerWarning` is issued and the virtual
        machine keeps serving (one warning for all keys). Returns the keys now
        running compiled code.
        """
        keys = list(self.hot_functions if keys is None else keys)
        functions = [self.casadi_function(key) for key in keys]
        done = []
        for key, f, compiled in zip(keys, functions, compile_functions(functions, opt=opt, cache_dir=cache_dir, compiler=compiler)):
            if compiled is not f:
                self._functions[key + COMPILED] = compiled
                done.append(key)
        return done

    def numeric_function(self, key: str) -> ca.Function:
        """The function behind ``key`` for numeric calls: its compiled version when :meth:`compile` made one, else :meth:`casadi_function`."""
        return self._functions.get(key + COMPILED) or self.casadi_function(key)

    def _call(self, key: str, *args: Any, matrix: bool = False) -> Any:
        """Call the cached function ``key``; numeric arguments give numpy outputs, through its compiled
        version when there is one (:meth:`compile`).

        Outputs come back as 1-D arrays, or as 2-D arrays when ``matrix`` (so a
        Jacobian with one column stays a matrix); a function with several
        outputs returns a tuple. Symbolic arguments give symbolic outputs (a
        call node for MX, the inlined expression for SX).
        """
        if B.is_symbolic(*args):
            out = self.casadi_function(key)(*args)
            outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        else:
            if key + COMPILED in self._functions:
                key = key + COMPILED
            call = self._numeric.get(key)
            if call is None:
                call = self._numeric[key] = NumericCall(self.casadi_function(key))
            outs = call(*args)
            outs = outs if matrix else tuple(o.reshape(-1, order="F") for o in outs)
        return outs if len(outs) > 1 else outs[0]

    def _build_dynamics(self) -> ca.Function:
        x, u, t = self.symbols()
        d = self.param_symbols()
        return ca.Function(casadi_name(f"{self.name}_dynamics"), [x, u, t, *d], [self.continuous_dynamics(x, u, t, *d)], ["x", "u", "t", *["d"] * len(d)], ["xdot"])

    def _build_dynamics_jacobian(self) -> ca.Function:
        x, u, t = self.symbols()
        d = self.param_symbols()
        f = self.continuous_dynamics(x, u, t, *d)
        return ca.Function(casadi_name(f"{self.name}_dynamics_jacobian"), [x, u, t, *d], [ca.jacobian(f, x), ca.jacobian(f, u)], ["x", "u", "t", *["d"] * len(d)], ["A", "B"])

    def _check_xu(self, x: Any, u: Any) -> Tuple[Any, Any]:
        return B.vector(x, self.state_dim, "x"), B.vector(u, self.control_dim, "u")


def fill_out(result: Any, out: Optional[np.ndarray], name: str = "out") -> Any:
    """``result`` itself, or written into ``out`` (in place) and ``out`` returned.

    ``out`` must be a writeable floating-point ``numpy.ndarray`` of exactly
    ``result``'s shape (``ValueError`` naming both shapes otherwise,
    ``TypeError`` for another type or a symbolic ``result``).
    """
    if out is None:
        return result
    if not isinstance(out, np.ndarray) or not np.issubdtype(out.dtype, np.floating):
        raise TypeError(f"{name}: expected a floating-point numpy array, got {B.describe(out)}")
    if B.is_symbolic(result):
        raise TypeError(f"{name}: only numeric calls fill an output array; this call is symbolic ({type(result).__name__})")
    result = np.asarray(result, dtype=float)
    if out.shape != result.shape:
        raise ValueError(f"{name}: expected shape {result.shape}, got {out.shape}")
    out[...] = result
    return out


def _continuous_from_dynamics(self: Model, x: Any, u: Any, t: Any, *params: Any) -> Any:
    """``continuous_dynamics`` of a model that overrides :meth:`Model.dynamics` only: its own ``dynamics``."""
    if getattr(self, "_deriving_dynamics", False):
        raise TypeError(
            f"{type(self).__name__}: its dynamics() calls Model.dynamics, which needs continuous_dynamics(x, u, t); "
            "define continuous_dynamics, or compute xdot in dynamics() itself"
        )
    method = self.dynamics
    self._deriving_dynamics = True
    try:
        if params:
            return method(x, u, t, params=params[0])
        try:
            inspect.signature(method).bind(x, u, t)
        except TypeError:
            return method(x, u)
        return method(x, u, t)
    finally:
        self._deriving_dynamics = False
