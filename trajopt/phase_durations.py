"""Phase durations as decision variables: a horizon cut into phases, each with its own knot spacing.

Knots ``k_0 = 0 < k_1 < ... < k_P = N - 1`` cut the horizon into ``P``
phases. Phase ``j`` holds the ``n_j = k_(j+1) - k_j`` intervals from knot
``k_j`` to ``k_(j+1)``, which share the spacing ``h_j = tau_j / n_j``; its
duration ``tau_j`` is a decision variable in ``[lower_j, upper_j]``. The knot
times are

    t_k = tau_0 + ... + tau_(j-1) + (k - k_j) h_j        (k_j <= k <= k_(j+1))

Linear rows ``row_lower <= A tau <= row_upper`` tie the durations together:
a fixed total (``A`` a row of ones, both bounds the total) or a minimum time
spent in a sequence of phases (a foot's swing, say). The transcriptions are
unchanged: each interval reads its own ``h``, so the time scaling of a phase
is the one of a free final time, phase by phase. :class:`trajopt.FreeTime`
is the case ``P = 1`` without rows (:meth:`PhaseDurations.of_free_time`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
from scipy.optimize import linprog


@dataclass(frozen=True)
class PhaseDurations:
    """Durations ``tau`` (P,) of the phases between ``knots`` (P + 1,), in ``[lower, upper]``, from ``guess``,
    with linear rows ``row_lower <= rows @ tau <= row_upper`` (module docstring).

    ``phase_names`` (P,) label the phases in messages and printouts.
    """

    knots: Sequence[int]
    guess: Any
    lower: Any
    upper: Any
    rows: Any = None
    row_lower: Any = None
    row_upper: Any = None
    phase_names: Sequence[str] = field(default=())

    def __post_init__(self) -> None:
        knots = np.asarray(self.knots)
        if knots.ndim != 1 or knots.size < 2 or not np.issubdtype(knots.dtype, np.integer) or knots[0] != 0 or (np.diff(knots) <= 0).any():
            raise ValueError(f"knots: expected increasing integer knots 0 = k_0 < k_1 < ... < k_P, got {self.knots!r}")
        P = knots.size - 1
        vectors = {}
        for name in ("guess", "lower", "upper"):
            value = np.asarray(getattr(self, name), dtype=float)
            if value.shape != (P,):
                raise ValueError(f"{name}: expected one duration per phase, shape ({P},), got {value.shape}")
            vectors[name] = value
        lower, guess, upper = vectors["lower"], vectors["guess"], vectors["upper"]
        if not (np.isfinite(lower).all() and np.isfinite(upper).all() and (lower > 0).all() and (lower <= guess).all() and (guess <= upper).all()):
            bad = int(np.flatnonzero(~(np.isfinite(lower) & np.isfinite(upper) & (lower > 0) & (lower <= guess) & (guess <= upper)))[0])
            raise ValueError(f"phase {bad}: needs finite 0 < lower <= guess <= upper, got lower={lower[bad]}, guess={guess[bad]}, upper={upper[bad]}")
        rows = np.zeros((0, P)) if self.rows is None else np.atleast_2d(np.asarray(self.rows, dtype=float))
        if rows.shape[1:] != (P,) or not np.isfinite(rows).all():
            raise ValueError(f"rows: expected a finite matrix (R, {P}), got shape {rows.shape}")
        R = rows.shape[0]
        bounds = {}
        for name, default in (("row_lower", -np.inf), ("row_upper", np.inf)):
            value = getattr(self, name)
            value = np.full(R, default) if value is None else np.asarray(value, dtype=float).reshape(-1)
            if value.shape != (R,) or np.isnan(value).any():
                raise ValueError(f"{name}: expected {R} bounds (one per row), got {np.shape(getattr(self, name))}")
            bounds[name] = value
        if (bounds["row_lower"] > bounds["row_upper"]).any():
            raise ValueError("row_lower: a row's lower bound exceeds its upper bound")
        names = tuple(self.phase_names) or tuple(f"phase {j}" for j in range(P))
        if len(names) != P:
            raise ValueError(f"phase_names: expected {P} names, got {len(names)}")
        for name, value in {**vectors, **bounds, "rows": rows}.items():
            value.setflags(write=False)
            object.__setattr__(self, name, value)
        object.__setattr__(self, "knots", tuple(int(k) for k in knots))
        object.__setattr__(self, "phase_names", names)
        if R and not self._feasible():
            raise ValueError("rows: no phase durations within their bounds satisfy row_lower <= rows @ tau <= row_upper")

    def _feasible(self) -> bool:
        """Whether some durations within their bounds satisfy the rows (a linear program, HiGHS)."""
        finite_upper, finite_lower = np.isfinite(self.row_upper), np.isfinite(self.row_lower)
        A = np.vstack([self.rows[finite_upper], -self.rows[finite_lower]])
        b = np.concatenate([self.row_upper[finite_upper], -self.row_lower[finite_lower]])
        result = linprog(np.zeros(self.count), A_ub=A if A.size else None, b_ub=b if A.size else None, bounds=list(zip(self.lower, self.upper)), method="highs")
        return result.status == 0

    @classmethod
    def of_free_time(cls, lower: float, upper: float, guess: float, N: int) -> "PhaseDurations":
        """One phase over all ``N`` knots: a free final time in ``[lower, upper]``."""
        return cls((0, N - 1), [guess], [lower], [upper], phase_names=("tf",))

    @property
    def count(self) -> int:
        """Number of phases ``P``."""
        return len(self.knots) - 1

    @property
    def N(self) -> int:
        """Number of knots of the horizon."""
        return self.knots[-1] + 1

    @property
    def intervals(self) -> np.ndarray:
        """Intervals per phase ``n_j`` (P,)."""
        return np.diff(self.knots)

    @property
    def phase_of_interval(self) -> np.ndarray:
        """The phase ``j`` of each interval ``k = 0..N-2`` (N - 1,)."""
        return np.repeat(np.arange(self.count), self.intervals)

    def spacing(self, durations: Any) -> np.ndarray:
        """Knot spacings ``h_k = tau_j / n_j`` of the intervals (N - 1,) for phase durations ``durations`` (P,)."""
        tau = np.asarray(durations, dtype=float).reshape(-1)
        if tau.shape != (self.count,):
            raise ValueError(f"durations: expected {self.count} phase durations, got shape {np.shape(durations)}")
        return (tau / self.intervals)[self.phase_of_interval]

    def times(self, durations: Any = None) -> np.ndarray:
        """Knot times ``t_k`` (N,) for phase durations ``durations`` (P,; default :attr:`guess`)."""
        h = self.spacing(self.guess if durations is None else durations)
        return np.concatenate([[0.0], np.cumsum(h)])

    def of_times(self, times: Any) -> np.ndarray:
        """The phase durations (P,) of knot times ``times`` (N,): ``t_(k_(j+1)) - t_(k_j)``."""
        t = np.asarray(times, dtype=float).reshape(-1)
        if t.shape != (self.N,):
            raise ValueError(f"times: expected {self.N} knot times, got shape {np.shape(times)}")
        return np.diff(t[list(self.knots)])

    def describe(self, durations: Any) -> str:
        """One line: each phase's name and duration (s), e.g. ``"crouch 0.284 s, flight 0.218 s"``."""
        tau = np.asarray(durations, dtype=float).reshape(-1)
        return ", ".join(f"{name} {value:.3g} s" for name, value in zip(self.phase_names, tau))
