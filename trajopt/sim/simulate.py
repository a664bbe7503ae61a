"""Closed-loop simulation ``xdot = f(x, controller(t, x), t)`` with an explicit Runge-Kutta method.

Each step integrates the model's dynamics in the local chart of the step's
start point ``x_k`` (as :mod:`trajopt.integrators` does): with
``(+) = model.apply_dx`` and the chart velocity of :mod:`trajopt.manifold`,

    sigma' = C(x_k, x_k (+) sigma) f(x_k (+) sigma, u, t),   sigma(0) = 0,
    x_{k+1} = x_k (+) sigma(dt),

so quaternions stay unit and the method keeps its classical order (RK4: 4).
For a vector-space state the chart is ``x_k + sigma`` and this is the plain method.

Where the controller is evaluated (``control``):

- ``"stage"``: at every Runge-Kutta stage, ``u = controller(t_k + c_i dt, x_i)``;
  the closed loop is then a smooth ODE integrated at the method's order.
- ``"hold"``: once per step at ``(t_k, x_k)``, held over the step (zero-order
  hold, as a digital controller): the closed loop is only first-order accurate
  in ``dt`` with respect to the continuous-time loop.

Dynamics engines (``engine``): ``"casadi"`` calls ``model.dynamics(x, u, t)``
(any :class:`models.Model`; ``u`` of size ``control_dim``); ``"pinocchio"``
(the default for a :class:`models.multibody_model.MultibodyModel`) evaluates
``vdot`` with pinocchio's ABA and ``qdot = E(q) v``, much faster per call. The
controller of a multibody model may return generalized forces ``tau`` (nv,)
or actuator torques ``u`` (nu,), mapped by ``tau = B u``; sizes tell them apart
(as :meth:`MultibodyModel.dynamics` does).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from lie import _backend as B
from lie import check_unit_quaternion
from models.model import Model
from models.multibody_model import MultibodyModel

from ..integrators import ExplicitRK, get_integrator
from ..manifold import chart_velocity, quaternion_slices
from .pin_numerics import PinNumerics

#: A feedback law ``u = controller(t, x)``.
ControllerFn = Callable[[float, np.ndarray], Any]
CONTROL_MODES = ("stage", "hold")
ENGINES = ("auto", "pinocchio", "casadi")
#: Relative tolerance on ``T`` being a whole number of steps ``dt``.
STEP_TOL = 1e-9


@dataclass
class SimResult:
    """A simulated trajectory.

    ``times`` (K+1,), ``states`` (K+1, nx); ``inputs`` (K, n_in) the
    controller's output at the start of each step ``(t_k, x_k)``. ``status`` is
    ``"ok"``, or ``"diverged"`` when the state became non-finite (the arrays
    then stop at the last finite state); ``message`` says where.
    """

    times: np.ndarray
    states: np.ndarray
    inputs: np.ndarray
    status: str = "ok"
    message: str = ""

    @property
    def success(self) -> bool:
        """True when the simulation reached its end (status ``"ok"``)."""
        return self.status == "ok"


def num_steps(dt: float, T: float) -> int:
    """Number of steps ``K = T / dt`` (``ValueError`` unless ``dt, T > 0`` and ``T`` is a whole number of steps)."""
    if not (np.isfinite(dt) and dt > 0):
        raise ValueError(f"dt: expected a positive time step, got {dt!r}")
    if not (np.isfinite(T) and T > 0):
        raise ValueError(f"T: expected a positive duration, got {T!r}")
    K = int(round(T / dt))
    if K < 1 or abs(K * dt - T) > STEP_TOL * max(1.0, T):
        raise ValueError(f"T: expected a whole number of steps dt = {dt}, got T = {T} ({T / dt:.6g} steps)")
    return K


def controller_output(u: Any, sizes: tuple[int, ...], t: float) -> np.ndarray:
    """Validate a controller's output: a finite 1-D vector of one of ``sizes``."""
    out = np.asarray(u, dtype=float).reshape(-1) if np.ndim(u) <= 1 else np.asarray(u, dtype=float)
    if out.ndim != 1 or out.shape[0] not in sizes:
        want = " or ".join(f"({n},)" for n in sizes)
        raise ValueError(f"controller: expected an output of shape {want}, got {np.shape(u)} at t = {t:.6g}")
    if not np.isfinite(out).all():
        raise ValueError(f"controller: returned a non-finite value at t = {t:.6g}: {out}")
    return out


class ClosedLoop:
    """Dynamics ``f(x, u, t)`` of a model by one engine, and the chart it is integrated in."""

    def __init__(self, model: Model, engine: str = "auto") -> None:
        if not isinstance(model, Model):
            raise ValueError(f"model: expected a models.Model, got {type(model).__name__}")
        if engine not in ENGINES:
            raise ValueError(f"engine: expected one of {ENGINES}, got {engine!r}")
        multibody = isinstance(model, MultibodyModel)
        if engine == "pinocchio" and not multibody:
            raise ValueError(f"engine: 'pinocchio' needs a MultibodyModel, got {type(model).__name__}")
        self.model = model
        self.engine = "pinocchio" if engine == "auto" and multibody else ("casadi" if engine == "auto" else engine)
        self.numerics = PinNumerics(model) if self.engine == "pinocchio" else None
        if multibody:
            self.input_sizes: tuple[int, ...] = tuple(sorted({model.nv, model.nu}))
            self._B = model.B_func()
        else:
            self.input_sizes = (model.control_dim,)
        base = type(model)
        self.vector_space = (multibody and not model.is_floating) or (
            base.state_error is Model.state_error and base.apply_dx is Model.apply_dx
        )

    def xdot(self, x: np.ndarray, u: np.ndarray, t: float) -> np.ndarray:
        """``f(x, u, t)`` (nx,)."""
        if self.numerics is None:
            return np.asarray(self.model.dynamics(x, u, t), dtype=float).reshape(-1)
        m, nq = self.model, self.numerics.nq
        q, v = x[:nq], x[nq:]
        tau = u if u.shape[0] == m.nv else self._B @ u
        qdot = m.velocity_kinematics(x) @ v if m.is_floating else v
        return np.concatenate([qdot, self.numerics.aba(q, v, tau)])

    def retract(self, x: np.ndarray, sigma: np.ndarray) -> np.ndarray:
        """Chart point ``x (+) sigma`` (nx,)."""
        return x + sigma if self.vector_space else np.asarray(self.model.apply_dx(x, sigma), dtype=float).reshape(-1)

    def chart_rate(self, x: np.ndarray, xi: np.ndarray, f: np.ndarray, at_base: bool) -> np.ndarray:
        """Chart velocity of ``xi`` moving with ``f``, in the chart of ``x``."""
        if self.vector_space:
            return f
        if at_base:
            return np.asarray(self.model.error_jacobian_T(x), dtype=float) @ f
        return chart_velocity(self.model, x, xi, f)

    def step(self, method: ExplicitRK, controller: ControllerFn, x: np.ndarray, u0: np.ndarray, t: float, h: float, stage: bool) -> np.ndarray:
        """One step of ``method`` from ``(t, x)``; ``u0 = controller(t, x)`` already evaluated."""

        def rate(sigma: Any, c: float) -> np.ndarray:
            at_base = isinstance(sigma, (int, float)) and sigma == 0
            if not (at_base or np.isfinite(sigma).all()):  # diverging: the step returns a non-finite state
                return np.full(np.shape(sigma), np.nan)
            xi = x if at_base else self.retract(x, sigma)
            ti = t + c * h
            ui = u0 if (at_base and c == 0) or not stage else controller_output(controller(ti, xi), self.input_sizes, ti)
            return self.chart_rate(x, xi, self.xdot(xi, ui, ti), at_base)

        sigma = method.chart_step(rate, h)
        return self.retract(x, sigma) if np.isfinite(sigma).all() else np.full(x.shape, np.nan)


def simulate(
    model: Model,
    x0: Any,
    controller: ControllerFn,
    dt: float,
    T: float,
    integrator: str | ExplicitRK = "rk4",
    control: str = "stage",
    engine: str = "auto",
    t0: float = 0.0,
) -> SimResult:
    """Simulate ``model`` from ``x0`` under ``u = controller(t, x)`` for ``T`` seconds.

    ``dt`` is the step (``T`` a whole number of steps), ``integrator`` an
    explicit method of :mod:`trajopt.integrators` ("euler", "rk3", "rk4"),
    ``control`` ``"stage"`` or ``"hold"`` and ``engine`` ``"auto"``,
    ``"pinocchio"`` or ``"casadi"``: ``"stage"`` evaluates the controller
    at every stage of the integrator, ``"hold"`` once per step (zero-order
    hold); ``"pinocchio"`` evaluates ``vdot`` with pinocchio's ABA (a
    multibody model only), ``"casadi"`` calls the model's ``dynamics``,
    ``"auto"`` picks pinocchio for a multibody model and CasADi otherwise. Returns a :class:`SimResult` (times,
    states, controls, status). Raises ``ValueError``
    for bad arguments (shapes, NaN, non-unit quaternions in ``x0``, a
    controller output of the wrong size).
    """
    loop = ClosedLoop(model, engine)
    method = get_integrator(integrator)
    if not isinstance(method, ExplicitRK):
        raise ValueError(f"integrator: simulate needs an explicit method (euler, rk3, rk4), got {method.name!r}")
    if control not in CONTROL_MODES:
        raise ValueError(f"control: expected one of {CONTROL_MODES}, got {control!r}")
    K = num_steps(dt, T)
    x = _initial_state(model, x0)
    times = t0 + dt * np.arange(K + 1)
    states = np.empty((K + 1, x.shape[0]))
    states[0] = x
    inputs: list[np.ndarray] = []
    for k in range(K):
        u = controller_output(controller(times[k], x), loop.input_sizes, times[k])
        inputs.append(u)
        x = loop.step(method, controller, x, u, times[k], dt, control == "stage")
        if not np.isfinite(x).all():
            n = k + 1
            return SimResult(times[:n], states[:n], np.array(inputs[:k]).reshape(k, -1), "diverged", f"non-finite state at t = {times[n]:.6g} (step {n})")
        states[k + 1] = x
    return SimResult(times, states, np.array(inputs))


def _initial_state(model: Model, x0: Any) -> np.ndarray:
    """``x0`` validated: shape, NaN, unit quaternions (1e-6)."""
    x = B.vector(x0, model.state_dim, "x0")
    for s in quaternion_slices(model):
        check_unit_quaternion(x[s], f"x0[{s.start}:{s.stop}] (quaternion)")
    return x.copy()


def mechanical_energy(model: Any, states: Any) -> np.ndarray:
    """Kinetic plus gravitational potential energy (J) of each state of a multibody model.

    ``states`` is ``(nx,)`` (returns a float array of shape ``()``) or ``(K, nx)`` (returns ``(K,)``).
    """
    numerics = PinNumerics(model)
    X = np.asarray(states, dtype=float)
    nx = numerics.nq + numerics.nv
    if X.ndim not in (1, 2) or X.shape[-1] != nx:
        raise ValueError(f"states: expected shape ({nx},) or (K, {nx}), got {X.shape}")
    energies = np.array([numerics.energy(*numerics.split_state(x, "states")) for x in X.reshape(-1, nx)])
    return energies.reshape(X.shape[:-1])
