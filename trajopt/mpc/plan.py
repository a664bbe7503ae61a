"""The control law one MPC tick hands to the plant: the planned trajectory and its local feedback.

A :class:`Plan` holds the knots of one solve, placed in absolute time
(``times[k] = t0 + k h``, ``t0`` the measurement time of the tick), with the
transcription's interpolation between them and a time-varying gain ``K_k``
(nu x m) per interval. Between ticks the plant calls :meth:`Plan.control` at
its own rate:

    u(t, x) = clip( u_ref(t) - K_k state_error(x, x_ref(t)),  lower, upper ),   t in [t_k, t_(k+1))

``x_ref(t)``, ``u_ref(t)`` follow the transcription (:meth:`trajopt.Solution.evaluate`:
for multiple shooting the control is held over an interval and the state is
one integrator step from the interval's first knot), evaluated with the
dynamics parameters the plan was solved with (a receding-horizon problem
changes its own between ticks); ``state_error`` is the model's (tangent
space, :mod:`trajopt.manifold`). Past the last knot the plan holds its last
interval's law. A plan whose gains are zero is plain feed-forward.

Given the contact points ``touching`` now (a legged plant's foot sensor), a
plan with a :class:`~trajopt.mpc.stance_gate.StanceGate` replaces the rows
of ``K_k`` of the legs scheduled in stance at ``k`` whose feet are in the
air by a joint PD about the plan: stance gains on a leg in the air make it
flail; the gate also bounds the correction of a humanoid's ankles, which a
sole on the ground cannot carry beyond its centre of pressure
(:mod:`.stance_gate`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Tuple

import casadi as ca
import numpy as np

from models.numeric_call import NumericCall

from ..transcription import get_transcription
from .stance_gate import StanceGate


def reference_error_function(interpolant: ca.Function, model: Any) -> ca.Function:
    """``(interpolant's inputs, x_measured) -> (x_ref, u_ref, error)``: the transcription's interpolant (its inputs and
    outputs ``x_tau``, ``u_tau``, :meth:`trajopt.transcription.Transcription.interpolant`) and the model's
    ``state_error(x_measured, x_ref)`` in one function, so that :meth:`Plan.control`, which the plant calls at every one
    of its steps, makes one call of compiled or virtual-machine code instead of many numpy ones."""
    inputs = interpolant.mx_in()
    x = ca.MX.sym("x_measured", model.state_dim)
    x_ref, u_ref = interpolant.call(inputs)
    error = model.state_error(x, x_ref)
    return ca.Function("plan_reference_error", [*inputs, x], [x_ref, u_ref, error], [*interpolant.name_in(), "x_measured"], ["x_ref", "u_ref", "error"])


@dataclass
class Plan:
    """One tick's trajectory and feedback law: ``u(t, x) = clip(u_ref(t) - K_k state_error(x, x_ref(t)), lower, upper)``
    on ``[t_k, t_(k+1))``, ``x_ref``, ``u_ref`` interpolated as the transcription does.

    ``times`` (N,) absolute knot times (s); ``states`` (N, n), ``controls`` (N, nu),
    ``intervals`` (N - 1, nz) as a :class:`trajopt.Solution` holds them; ``gains``
    (N - 1, nu, m); ``params`` (N, nd) the dynamics parameters of the solve;
    ``lower``/``upper`` (nu,) the control bounds the output is clipped to; ``gate`` the
    :class:`~trajopt.mpc.stance_gate.StanceGate` of a legged horizon (``None``: every row of the gains kept, unbounded).
    """

    model: Any
    transcription: str
    times: np.ndarray
    states: np.ndarray
    controls: np.ndarray
    intervals: np.ndarray
    gains: np.ndarray
    params: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    #: the transcription's interpolant, built on first use when not given (plans of one horizon share it)
    interpolant_function: Optional[ca.Function] = field(default=None, repr=False)
    #: the joint PD rows of the legs in the air that stand in the plan (``None``: every row kept)
    gate: Optional[StanceGate] = field(default=None, repr=False)
    #: :func:`reference_error_function` of the interpolant, built on first use when not given (plans of one horizon share it)
    reference_error: Optional[ca.Function] = field(default=None, repr=False)
    _reference_error_call: Optional[NumericCall] = field(default=None, init=False, repr=False, compare=False)

    @property
    def t0(self) -> float:
        """The time of the first knot (the tick's measurement time)."""
        return float(self.times[0])

    @property
    def step(self) -> float:
        """The knot spacing ``h`` (s)."""
        return float(self.times[1] - self.times[0])

    def interval(self, t: float) -> int:
        """The interval ``k`` with ``t_k <= t < t_(k+1)``, clipped to ``0 .. N - 2``."""
        return int(np.clip(np.floor((t - self.times[0]) / self.step + 1e-9), 0, len(self.times) - 2))

    def interpolant(self) -> ca.Function:
        """The transcription's interpolant (:meth:`trajopt.transcription.Transcription.interpolant`), built once."""
        if self.interpolant_function is None:
            self.interpolant_function = get_transcription(self.transcription).interpolant(self.model)
        return self.interpolant_function

    def advance(self, x: np.ndarray, u: np.ndarray, d: np.ndarray, duration: Optional[float] = None) -> np.ndarray:
        """The state (n,) an explicit transcription's step reaches from state ``x`` (n,) after ``duration``
        (default one interval ``h``; at most ``h``) with the held control ``u`` (nu,) and dynamics
        parameters ``d`` (nd,)."""
        nz = self.intervals.shape[1]
        tau = self.step if duration is None else duration
        out = self.interpolant()(x, u, np.zeros(nz), x, u, 0.0, self.step, tau, d, d)
        return np.asarray(out[0]).reshape(-1)

    def predict(self, t: float, x: np.ndarray, duration: float) -> np.ndarray:
        """Where the plant will be at ``t + duration`` (n,), from its state ``x`` at ``t``: the plan's own
        motion over that time with the plant's deviation from it carried along,
        ``apply_dx(x_ref(t + duration), state_error(x, x_ref(t)))`` (delay compensation,
        :class:`~trajopt.mpc.MPC`). Integrating the model instead, from a measured state whose feet
        disagree with the plan's contacts (a foot late to lift, or sunk into a soft ground), sent the
        prediction, then the QP, astray within a few ticks in MuJoCo."""
        deviation = self._reference_and_error(t, self.interval(t), x)[2]
        x_then = self.reference(t + duration)[0]
        return np.asarray(self.model.apply_dx(x_then, deviation), dtype=float).reshape(-1)

    def reference(self, t: Any) -> Tuple[np.ndarray, np.ndarray]:
        """``x_ref(t)``, ``u_ref(t)`` at absolute time(s) ``t`` (s), interpolated between the knots as the
        plan's transcription does, with the plan's dynamics parameters: (n,), (nu,) for a
        scalar ``t``, (K, n), (K, nu) for K times; held at the ends outside ``[t_0, t_(N-1)]``."""
        ts = np.atleast_1d(np.asarray(t, dtype=float))
        h, N = self.step, len(self.times)
        k = np.clip(np.floor((ts - self.times[0]) / h + 1e-9).astype(int), 0, N - 2)
        tau = np.clip(ts - self.times[k], 0.0, h)
        D = self.params
        args = (self.states[k].T, self.controls[k].T, self.intervals[k].T, self.states[k + 1].T, self.controls[k + 1].T, self.times[k] - self.times[0], h, tau, D[k].T, D[k + 1].T)
        interpolant = self.interpolant() if len(ts) == 1 else self.interpolant().map(len(ts))  # map() builds a new Function: not for one time
        x, u = (np.asarray(out).T for out in interpolant(*args))
        return (x[0], u[0]) if np.ndim(t) == 0 else (x, u)

    def control(self, t: float, x: np.ndarray, touching: Optional[np.ndarray] = None) -> np.ndarray:
        """The control (nu,) at absolute time ``t`` (s) and measured state ``x`` (n,):
        ``u_ref(t) - K_k state_error(x, x_ref(t))`` clipped to ``[lower, upper]``, ``k`` the interval of ``t``.
        With a :attr:`gate`, the correction is the gate's (:meth:`~trajopt.mpc.stance_gate.StanceGate.correction`:
        given the contact points ``touching`` now ((nc,) bool), the legs in the air that stand in the plan get its
        joint PD rows; the ankles' correction is bounded; module docstring)."""
        k = self.interval(t)
        x_ref, u_ref, error = self._reference_and_error(t, k, x)
        K = self.gains[k]
        if self.gate is None and not K.any():
            return np.clip(u_ref, self.lower, self.upper)
        correction = K @ error if self.gate is None else self.gate.correction(K, error, self.params[k], touching)
        return np.clip(u_ref - correction, self.lower, self.upper)

    def _reference_and_error(self, t: float, k: int, x: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``x_ref(t)`` (n,), ``u_ref(t)`` (nu,) and ``state_error(x, x_ref(t))`` (m,) in interval ``k``, one call
        of :func:`reference_error_function` through this plan's buffers."""
        if self._reference_error_call is None:
            if self.reference_error is None:
                self.reference_error = reference_error_function(self.interpolant(), self.model)
            self._reference_error_call = NumericCall(self.reference_error)
        h = self.step
        tau = min(max(t - self.times[k], 0.0), h)
        args = (self.states[k], self.controls[k], self.intervals[k], self.states[k + 1], self.controls[k + 1], self.times[k] - self.times[0], h, tau, self.params[k], self.params[k + 1], x)
        return tuple(out.reshape(-1) for out in self._reference_error_call(*args))
