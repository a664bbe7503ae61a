"""The warm start of a receding horizon: the previous plan moved to the new tick's time.

At a tick at time ``t`` the horizon's knots lie at ``t + k h``. The previous
plan (knots at ``t_prev + k h``) already holds a trajectory for most of them:
with ``s = (t - t_prev) / h`` knots elapsed,

- states and controls: for a whole ``s = n`` the knots ``n .. N - 1`` of the
  previous plan, else the previous plan evaluated at the new knot times as its
  transcription interpolates (:meth:`Plan.reference`); the knots past its end
  continue it, one step of the transcription per knot (explicit
  transcriptions, with the new knots' dynamics parameters) with the control
  that holds the model at the step's first state under its dynamics
  parameters (``hold``: :meth:`models.Model.equilibrium_control`), or a copy
  of its last knot (collocation). Not with the plan's last control: that one
  took the last interval to its terminal cost (a swing leg braked hard, say);
  kept on, it whirled the Go1's swing legs in MuJoCo, and the real-time
  iteration diverged (docs/design/mpc.md);
- multipliers (:class:`StageShift`): the rows and variables of stage
  ``k + n`` of the previous solve for stage ``k`` (``n = round(s)``), where the
  two stages have the same number of them, zero elsewhere and for the appended
  stages' rows that have no counterpart (:mod:`trajopt.solvers`: the contract
  of a shifted guess).

The first knot of the guess need not equal the measured state: the solve
fixes ``x_0`` through its bounds.
"""
from __future__ import annotations

from typing import Callable, Optional, Tuple

import numpy as np

from .plan import Plan


def shifted_trajectory(
    plan: Plan, t: float, params: np.ndarray, explicit: bool, hold: Optional[Callable[[np.ndarray, np.ndarray], np.ndarray]] = None
) -> Tuple[np.ndarray, np.ndarray]:
    """The warm start at time ``t``: states (N, n) and controls (N, nu) of ``plan`` at the knots ``t + k h`` of
    the new horizon (its knots moved by a whole number of steps, else interpolated; the knots past its end
    continued by one transcription step, or a copy of its last knot for collocation);
    ``params`` (N, nd) are the new horizon's dynamics parameters, ``explicit`` whether the transcription is.
    ``hold(x, d)``: the control (nu,) holding the model at ``x`` under the parameters ``d``, applied over
    each appended interval (module docstring); without it the plan's last control is kept."""
    N, h = len(plan.times), plan.step
    s = (t - plan.t0) / h
    n = int(round(s))
    if abs(s - n) < 1e-6 and 0 <= n < N:
        X, U = plan.states[n:].copy(), plan.controls[n:].copy()
    else:
        inside = t + h * np.arange(N) <= plan.times[-1] + 1e-9 * h
        X, U = plan.reference(t + h * np.arange(N)[inside])
        X, U = np.atleast_2d(X), np.atleast_2d(U)
    X, U = list(X), list(U)
    while len(X) < N:
        k = len(X) - 1
        if hold is not None and explicit:
            U[k] = np.asarray(hold(X[k], params[k]), dtype=float).reshape(-1)
        X.append(plan.advance(X[k], U[k], params[k]) if explicit else X[k].copy())
        U.append(U[k].copy())
    return np.array(X), np.array(U)


class StageShift:
    """Moves per-stage entries (multipliers) by whole stages: for entries belonging to the stages
    ``stage`` (``nlp.var_stage`` for ``lam_x``, ``nlp.row_stage`` for ``lam_g``; -1 for no stage) of a
    horizon of ``N`` stages, stage ``k`` takes the entries of stage ``k + n`` where both have as many,
    zeros elsewhere; entries of no stage keep their value. The index lists are built once."""

    def __init__(self, stage: np.ndarray, N: int) -> None:
        stage = np.asarray(stage)
        self.members = [np.flatnonzero(stage == k) for k in range(N)]
        self.free = np.flatnonzero(stage < 0)

    def __call__(self, values: np.ndarray, n: int) -> np.ndarray:
        out = np.zeros_like(values)
        N = len(self.members)
        for k in range(N):
            new = self.members[k]
            old = self.members[k + n] if 0 <= k + n < N else None
            if old is not None and old.size == new.size and new.size:
                out[new] = values[old]
        out[self.free] = values[self.free]
        return out
