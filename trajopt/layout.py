"""Index bookkeeping: flat CasADi vectors (decision variables, parameters) and blocks of constraint rows."""
from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np


class Layout:
    """Hands out consecutive index ranges of a flat vector; ``size`` is the length so far."""

    def __init__(self) -> None:
        self.size = 0

    def take(self, count: int) -> np.ndarray:
        """The next ``count`` indices (count,)."""
        idx = np.arange(self.size, self.size + count)
        self.size += count
        return idx


def columns(vec: ca.MX, idx: np.ndarray) -> ca.MX:
    """Entries of ``vec`` as a matrix with one column per row of ``idx``: (K, n) indices -> (n x K)."""
    K, n = idx.shape
    return ca.reshape(vec[idx.ravel().tolist()], n, K) if idx.size else ca.MX(n, K)


@dataclass(frozen=True)
class RowBlock:
    """Rows of ``g`` computed by one mapped stage function.

    ``kind``: "norm", "constraint", "midpoint" (a constraint at interior
    collocation points), "interval" (an interval constraint), "control_hull"
    (the control's interior Bezier points, bounded by the control bounds),
    "defect" or "residual"; ``rows`` per column; ``stages`` (K,) the knot (or interval
    start) of each column; ``constraint`` indexes ``NLP.constraints`` (for
    "constraint", "midpoint" and "interval") and ``point`` the
    transcription's interior point (for "constraint" and "midpoint").
    """

    kind: str
    rows: int
    stages: np.ndarray
    constraint: int = -1
    point: int = -1

    @property
    def K(self) -> int:
        """Number of columns."""
        return len(self.stages)
