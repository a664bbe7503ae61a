"""Feedback laws ``u = controller(t, x)`` for :func:`trajopt.sim.simulate` and the contact simulator.

Multibody controllers (:class:`ConstantTorque`, :class:`JointFriction`,
:class:`PD`, :class:`ComputedTorque`) return generalized forces ``tau`` (nv,)
of a :class:`models.multibody_model.MultibodyModel`, evaluated with pinocchio.
For a floating base the first six entries act on the base (an external
wrench, body frame); an actuated robot applies ``B_func().T @ tau`` or uses
:class:`TrackingController` with actuator gains.

Errors are taken on the state manifold: with ``x_des = [q_des; v_des]``,
``e = model.state_error(x, x_des) = [e_q; e_v]`` (2 nv,), where ``e_q`` is the
configuration error (the base position error in the body frame of
``x_des`` and the axis-angle attitude error for a floating base, joint angle
differences otherwise) and ``e_v = v - v_des``.

Gains ``Kp``, ``Kv``, ``Kf`` are a scalar, a vector (nv,) (a diagonal gain) or
an (nv x nv) matrix. The default ``Kv = 2 sqrt(Kp)`` (matrix square root) is
the critically damped choice for unit inertia, i.e. for the error dynamics
``e_ddot + Kv e_dot + Kp e = 0`` of :class:`ComputedTorque`; a plain PD on a
real robot sees ``M(q) e_ddot + Kv e_dot + Kp e = 0`` and should scale its
gains by the inertia (e.g. ``Kp = w^2 diag(M)``, ``Kv = 2 w diag(M)``).
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, Tuple, Union

import numpy as np
import scipy.linalg

from lie import _backend as B
from models.model import Model
from models.multibody_model import MultibodyModel

from ..integrators import DiscreteDynamics
from ..manifold import interpolate_states
from .pin_numerics import PinNumerics

#: A constant vector or a function of time returning one.
Reference = Union[Callable[[float], Any], Sequence[float], np.ndarray, None]


def gain_matrix(gain: Any, n: int, name: str) -> np.ndarray:
    """An (n x n) gain from a scalar, a vector (n,) (diagonal) or a matrix (n x n)."""
    G = np.asarray(gain, dtype=float)
    if G.ndim == 0:
        G = G * np.eye(n)
    elif G.shape == (n,):
        G = np.diag(G)
    elif G.shape != (n, n):
        raise ValueError(f"{name}: expected a scalar, shape ({n},) or ({n}, {n}), got {G.shape}")
    if not np.isfinite(G).all():
        raise ValueError(f"{name}: contains non-finite values")
    return G


def default_damping(Kp: np.ndarray) -> np.ndarray:
    """``Kv = 2 sqrt(Kp)`` (matrix square root of a symmetric positive semidefinite ``Kp``)."""
    if not np.allclose(Kp, Kp.T) or np.linalg.eigvalsh(0.5 * (Kp + Kp.T)).min() < -1e-12 * max(1.0, np.abs(Kp).max()):
        raise ValueError("Kp: the default Kv = 2 sqrt(Kp) needs a symmetric positive semidefinite Kp; pass Kv")
    w, V = np.linalg.eigh(0.5 * (Kp + Kp.T))
    return 2.0 * (V * np.sqrt(np.maximum(w, 0.0))) @ V.T


def reference_function(value: Reference, n: int, name: str, default: Optional[np.ndarray] = None) -> Callable[[float], np.ndarray]:
    """``t -> vector (n,)`` from a constant, a callable or ``None`` (``default``, zeros if not given)."""
    if value is None:
        const = np.zeros(n) if default is None else default
        return lambda t: const
    if callable(value):

        def evaluate(t: float) -> np.ndarray:
            return B.vector(value(t), n, f"{name}(t={t:.6g})")

        return evaluate
    const = B.vector(value, n, name).copy()
    return lambda t: const


def _multibody(model: Any) -> MultibodyModel:
    if not isinstance(model, MultibodyModel):
        raise ValueError(f"model: expected a MultibodyModel, got {type(model).__name__}")
    return model


class ConstantTorque:
    """``tau(t, x) = tau0``: a constant generalized force (nv,) (zero: free motion)."""

    def __init__(self, tau: Any) -> None:
        self.tau = B.vector(tau, None, "tau").copy()

    def __call__(self, t: float, x: np.ndarray) -> np.ndarray:
        return self.tau


class JointFriction:
    """Viscous friction ``tau = -Kf v`` (Kf in N m s/rad): dissipates energy, ``dE/dt = -v^T Kf v``."""

    def __init__(self, model: MultibodyModel, Kf: Any) -> None:
        self.nq = _multibody(model).nq
        self.Kf = gain_matrix(Kf, model.nv, "Kf")

    def __call__(self, t: float, x: np.ndarray) -> np.ndarray:
        return -self.Kf @ x[self.nq :]


class PD:
    """``tau = -Kp e_q - Kv (v - v_des(t)) [+ g(q)]``, ``e_q`` the configuration error to ``q_des(t)``.

    ``q_des`` (nq,) and ``v_des`` (nv,, default zero) are constants or
    functions of time; with ``gravity_compensation`` the generalized gravity
    ``g(q)`` (the torque holding the robot still) is added, so the robot
    converges to a fixed ``q_des`` without steady-state error.
    """

    def __init__(self, model: MultibodyModel, q_des: Reference, Kp: Any, Kv: Any = None, v_des: Reference = None, gravity_compensation: bool = False) -> None:
        self.model = _multibody(model)
        self.numerics = PinNumerics(model)
        self.q_des = reference_function(q_des, model.nq, "q_des")
        self.v_des = reference_function(v_des, model.nv, "v_des")
        self.Kp = gain_matrix(Kp, model.nv, "Kp")
        self.Kv = default_damping(self.Kp) if Kv is None else gain_matrix(Kv, model.nv, "Kv")
        self.gravity_compensation = gravity_compensation

    def error(self, t: float, x: np.ndarray) -> np.ndarray:
        """``[e_q; e_v] = state_error(x, [q_des(t); v_des(t)])`` (2 nv,)."""
        return self.model.state_error(x, np.concatenate([self.q_des(t), self.v_des(t)]))

    def __call__(self, t: float, x: np.ndarray) -> np.ndarray:
        nv = self.model.nv
        e = self.error(t, x)
        tau = -self.Kp @ e[:nv] - self.Kv @ e[nv:]
        if self.gravity_compensation:
            tau = tau + self.numerics.gravity(x[: self.model.nq])
        return tau


class ComputedTorque(PD):
    """Inverse-dynamics control: ``tau = M_hat(q) a_ref + C(q, v)``, ``a_ref = a_des - Kp e_q - Kv e_v``.

    With the exact mass matrix (``mass_matrix=None``) this is
    ``tau = RNEA(q, v, a_ref)`` and the error obeys ``e_ddot + Kv e_dot + Kp e
    = 0`` exactly (fixed base). ``mass_matrix="diagonal"`` uses only the
    diagonal of ``M(q)`` (the tutorial's approximate model), a callable
    ``q -> (nv x nv)`` any other approximation. ``a_des`` (nv,) defaults to zero.
    """

    def __init__(
        self,
        model: MultibodyModel,
        q_des: Reference,
        Kp: Any,
        Kv: Any = None,
        v_des: Reference = None,
        a_des: Reference = None,
        mass_matrix: Union[None, str, Callable[[np.ndarray], np.ndarray]] = None,
    ) -> None:
        super().__init__(model, q_des, Kp, Kv, v_des)
        self.a_des = reference_function(a_des, model.nv, "a_des")
        if not (mass_matrix is None or mass_matrix == "diagonal" or callable(mass_matrix)):
            raise ValueError(f"mass_matrix: expected None, 'diagonal' or a callable, got {mass_matrix!r}")
        self.mass_matrix = mass_matrix

    def __call__(self, t: float, x: np.ndarray) -> np.ndarray:
        nq, nv = self.model.nq, self.model.nv
        q, v = x[:nq], x[nq:]
        e = self.error(t, x)
        a_ref = self.a_des(t) - self.Kp @ e[:nv] - self.Kv @ e[nv:]
        if self.mass_matrix is None:
            return self.numerics.rnea(q, v, a_ref)
        if self.mass_matrix == "diagonal":
            M_hat = np.diag(np.diag(self.numerics.mass(q)))
        else:
            M_hat = gain_matrix(self.mass_matrix(q), nv, "mass_matrix(q)")
        return M_hat @ a_ref + self.numerics.bias(q, v)


class TrackingController:
    """Feedforward plus feedback around a planned trajectory: ``u = u_ref(t) - K(t) e``.

    ``e = model.state_error(x, x_ref(t))`` (error_dim,) on the manifold.
    ``reference`` is a :class:`trajopt.Solution` (interpolated by its
    ``evaluate`` when a problem is attached) or a tuple ``(times, states,
    controls)`` of knots (states interpolated along the manifold, controls
    linearly). ``K`` is one gain (nu x error_dim) or one per knot interval
    ((N-1) x nu x error_dim, e.g. from :func:`lqr_gains`), used on the
    interval containing ``t``; :func:`pd_gains` builds the PD gain of a
    multibody model. Before the first and after the last knot the reference
    is held at its end values. With ``saturate`` the output is clipped to
    ``model.control_bounds()``.
    """

    def __init__(self, model: Model, reference: Any, K: Any, saturate: bool = False) -> None:
        self.model = model
        self.bounds = model.control_bounds() if saturate else None
        self.times, self.states, self.controls, self._evaluate = _reference_arrays(model, reference)
        nu, m, N = model.control_dim, model.error_dim, self.times.shape[0]
        K = np.asarray(K, dtype=float)
        if K.shape == (nu, m):
            K = np.broadcast_to(K, (N - 1, nu, m))
        if K.shape != (N - 1, nu, m) or not np.isfinite(K).all():
            raise ValueError(f"K: expected a finite gain of shape ({nu}, {m}) or ({N - 1}, {nu}, {m}), got {K.shape}")
        self.K = K

    def reference(self, t: float) -> Tuple[np.ndarray, np.ndarray]:
        """Reference state (n,) and control (nu,) at time ``t`` (held outside the knot times)."""
        t = float(np.clip(t, self.times[0], self.times[-1]))
        if self._evaluate is not None:
            return self._evaluate(t - self.times[0])
        k = self._interval(t)
        s = (t - self.times[k]) / (self.times[k + 1] - self.times[k])
        x = interpolate_states(self.model, self.states[k], self.states[k + 1], [s])[0]
        return x, (1 - s) * self.controls[k] + s * self.controls[k + 1]

    def _interval(self, t: float) -> int:
        return int(np.clip(np.searchsorted(self.times, t, side="right") - 1, 0, self.times.shape[0] - 2))

    def __call__(self, t: float, x: np.ndarray) -> np.ndarray:
        x_ref, u_ref = self.reference(t)
        e = np.asarray(self.model.state_error(x, x_ref), dtype=float).reshape(-1)
        u = u_ref - self.K[self._interval(float(t))] @ e
        return u if self.bounds is None else np.clip(u, *self.bounds)


def _reference_arrays(model: Model, reference: Any) -> Tuple[np.ndarray, np.ndarray, np.ndarray, Optional[Callable]]:
    """Knot arrays of a reference (Solution or tuple), and the Solution's evaluator if it has one."""
    if hasattr(reference, "times") and hasattr(reference, "states") and hasattr(reference, "controls"):
        times, states, controls = reference.times, reference.states, reference.controls
        evaluate = reference.evaluate if getattr(reference, "problem", None) is not None else None
    else:
        try:
            times, states, controls = reference
        except (TypeError, ValueError):
            raise ValueError("reference: expected a Solution or a tuple (times, states, controls)") from None
        evaluate = None
    times, states, controls = (np.asarray(a, dtype=float) for a in (times, states, controls))
    N, n, nu = times.shape[0], model.state_dim, model.control_dim
    if times.ndim != 1 or N < 2 or states.shape != (N, n) or controls.shape != (N, nu):
        raise ValueError(f"reference: expected times (N,), states (N, {n}), controls (N, {nu}) with N >= 2, got {times.shape}, {states.shape}, {controls.shape}")
    if not (np.diff(times) > 0).all():
        raise ValueError("reference: times must be strictly increasing")
    return times, states, controls, evaluate


def pd_gains(model: MultibodyModel, Kp: Any, Kv: Any = None) -> np.ndarray:
    """Actuator PD gain ``K = B^+ [Kp, Kv]`` (nu x 2 nv) for :class:`TrackingController`.

    ``u = u_ref - K e`` then applies ``tau = B u = -(Kp e_q + Kv e_v)`` on the
    actuated coordinates (``B^+`` the pseudo-inverse of ``B_func()``).
    """
    model = _multibody(model)
    Kp = gain_matrix(Kp, model.nv, "Kp")
    Kv = default_damping(Kp) if Kv is None else gain_matrix(Kv, model.nv, "Kv")
    return np.linalg.pinv(model.B_func()) @ np.hstack([Kp, Kv])


def lqr_gains(model: Model, times: Any, states: Any, controls: Any, Q: Any, R: Any, Qf: Any = None) -> np.ndarray:
    """Time-varying LQR gains ((N-1) x nu x error_dim) around a knot trajectory.

    Linearizes the RK4 step of each interval in the tangent space,
    ``de_{k+1} = A_k de_k + B_k du_k`` (:meth:`trajopt.DiscreteDynamics.jacobian`,
    step ``h_k = t_{k+1} - t_k``, control held over the interval), and runs the
    Riccati recursion ``P_{N-1} = Qf`` (default ``Q``),
    ``K_k = (R + B^T P B)^-1 B^T P A``, ``P_k = Q + A^T P (A - B K_k)``.
    ``Q`` (error_dim) and ``R`` (nu) are weights as for :func:`gain_matrix`.
    The gains are the "PD" of :class:`TrackingController` on the
    configuration and velocity errors.
    """
    times, states, controls, _ = _reference_arrays(model, (times, states, controls))
    m, nu = model.error_dim, model.control_dim
    Q, R = gain_matrix(Q, m, "Q"), gain_matrix(R, nu, "R")
    P = Q if Qf is None else gain_matrix(Qf, m, "Qf")
    step = DiscreteDynamics(model, "rk4")
    gains = np.empty((times.shape[0] - 1, nu, m))
    for k in range(times.shape[0] - 2, -1, -1):
        A, Bk = step.jacobian(states[k], controls[k], times[k], times[k + 1] - times[k])
        gains[k] = scipy.linalg.solve(R + Bk.T @ P @ Bk, Bk.T @ P @ A, assume_a="pos")
        P = Q + A.T @ P @ (A - Bk @ gains[k])
        P = 0.5 * (P + P.T)
    return gains
