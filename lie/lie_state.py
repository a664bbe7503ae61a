"""State vectors mixing vectors and rotations: :class:`LieState` and :func:`QuatState`.

A :class:`LieState` describes ``x = [x_0; p_1; x_1; p_2; ...; p_N; x_N]`` with
vector parts ``x_k`` of sizes ``partition = (n_0, ..., n_N)`` (any may be 0)
and ``N = len(partition) - 1`` rotations ``p_i`` in one parameterization
(any of :data:`lie.ROTATIONS`: :class:`lie.UnitQuaternion`, :class:`lie.MRP`,
:class:`lie.RodriguesParam`, :class:`lie.Cayley`, :class:`lie.EulerZYX`,
:class:`lie.RotationVec`), as RobotDynamics.jl's ``LieState``. Its error (tangent) state
``dx = [dx_0; dphi_1; dx_1; ...]`` has 3 entries per rotation::

    state_error(x, x0):  dx_k = x_k - x0_k,  dphi_i = rotation.error(p_i, p0_i)
    apply_dx(x0, dx):    x_k = x0_k + dx_k,  p_i = rotation.compose(p0_i, dphi_i)

Vector parts are subtracted as they are (world frame for positions);
rotations use the body-frame axis-angle error (full angle, 4x RobotDynamics'
Cayley weights, see :mod:`lie.cayley`). ``apply_dx(x0, state_error(x, x0)) ==
x`` up to quaternion sign (MRP shadow set), and ``state_error(apply_dx(x0,
dx), x0) == dx`` for rotation steps ``|dphi| < pi`` (tests/test_properties.py);
for MRPs both hold away from the singularity of :meth:`lie.MRP.compose`, a
product ``q0 exp(dphi)`` at ``-1`` (``x0`` on the shadow boundary ``|p| = 1``
turned back by pi). Jacobians::

    error_jacobian(x)   = d apply_dx(x, dx)/d dx at dx = 0   (n x m), blkdiag(I, K(p_1), I, ...)
    error_jacobian_T(x) = d state_error(y, x)/d y at y = x   (m x n), blkdiag(I, K(p_1)^-1, I, ...)

so ``error_jacobian_T(x) @ error_jacobian(x) = I``. Every method accepts numpy
(returns numpy) or CasADi SX/MX (returns the same type).
"""
from __future__ import annotations

import operator
from typing import Any, Iterator, Sequence

from . import _backend as B
from .rotations import ROTATIONS, UnitQuaternion


class LieState:
    """A state ``[x_0; p_1; x_1; ...; p_N; x_N]``: vectors of sizes ``partition`` between rotations ``p_i``.

    Each ``p_i`` is held in the parameterization ``rotation`` (4 numbers for a
    :class:`~lie.UnitQuaternion`, 3 for the others). Its error state
    subtracts the vector parts as they are and takes each rotation's error as
    the axis-angle of ``conj(p0_i) * p_i`` (3 numbers): :meth:`state_error`,
    with its inverse :meth:`apply_dx`.

    ``LieState(UnitQuaternion, (3, 2, 3))`` and ``LieState(UnitQuaternion, 3, 2, 3)``
    are the same 16-element state ``[v3, q, v2, q, v3]``.
    """

    def __init__(self, rotation: type, *partition: int | Sequence[int]) -> None:
        if rotation not in ROTATIONS:
            names = ", ".join(r.name for r in ROTATIONS)
            raise ValueError(f"rotation: expected one of {names}, got {rotation!r}")
        if len(partition) == 1 and hasattr(partition[0], "__len__"):
            partition = tuple(partition[0])
        try:
            sizes = tuple(operator.index(n) for n in partition)
        except TypeError:
            sizes = ()
        if not sizes or min(sizes) < 0 or sizes == (0,) or any(isinstance(n, bool) for n in partition):
            raise ValueError(f"partition: expected non-negative ints describing a non-empty state, got {partition!r}")
        self.rotation = rotation
        self.partition: tuple[int, ...] = sizes
        # offsets of each vector part in x and in dx
        self._x_vec: list[int] = []
        self._dx_vec: list[int] = []
        ix = idx = 0
        for k, n in enumerate(self.partition):
            self._x_vec.append(ix)
            self._dx_vec.append(idx)
            ix += n + (rotation.size if k < self.num_rotations else 0)
            idx += n + (3 if k < self.num_rotations else 0)
        self._n, self._m = ix, idx

    # ------------------------------------------------------------ sizes
    @property
    def num_rotations(self) -> int:
        """Number of rotations ``N = len(partition) - 1``."""
        return len(self.partition) - 1

    @property
    def size(self) -> int:
        """Length ``n`` of the state vector."""
        return self._n

    def __len__(self) -> int:
        return self._n

    @property
    def error_size(self) -> int:
        """Length ``m = n - N (size - 3)`` of the error (tangent) state."""
        return self._m

    # ------------------------------------------------------------ indices
    def _check_index(self, i: int, count: int, what: str) -> None:
        if not 0 <= i < count:
            raise IndexError(f"{what} index {i} out of range for {self!r} ({count} {what}s)")

    def vector_slice(self, i: int, tangent: bool = False) -> slice:
        """Slice of vector part ``i`` (0..N) in ``x``, or in ``dx`` if ``tangent``."""
        self._check_index(i, len(self.partition), "vector part")
        start = (self._dx_vec if tangent else self._x_vec)[i]
        return slice(start, start + self.partition[i])

    def rotation_slice(self, i: int, tangent: bool = False) -> slice:
        """Slice of rotation ``i`` (0..N-1) in ``x`` (``rotation.size``) or ``dx`` (3) if ``tangent``."""
        self._check_index(i, self.num_rotations, "rotation")
        start = self.vector_slice(i, tangent).stop
        return slice(start, start + (3 if tangent else self.rotation.size))

    def vector_indices(self, i: int, tangent: bool = False) -> range:
        """Indices of vector part ``i`` in ``x`` (or ``dx``), as a ``range``."""
        s = self.vector_slice(i, tangent)
        return range(s.start, s.stop)

    def rotation_indices(self, i: int, tangent: bool = False) -> range:
        """Indices of rotation ``i`` in ``x`` (or ``dx``), as a ``range``."""
        s = self.rotation_slice(i, tangent)
        return range(s.start, s.stop)

    def _parts(self) -> Iterator[tuple[str, slice, slice]]:
        """``(kind, x slice, dx slice)`` for each non-empty part, in order."""
        for k, n in enumerate(self.partition):
            if n:
                yield "vector", self.vector_slice(k), self.vector_slice(k, True)
            if k < self.num_rotations:
                yield "rotation", self.rotation_slice(k), self.rotation_slice(k, True)

    # ------------------------------------------------------------ error state
    def state_error(self, x: Any, x0: Any) -> Any:
        """Error ``dx`` (m,) of ``x`` relative to ``x0`` (both n,)."""
        x, x0 = B.vector(x, self._n, "x"), B.vector(x0, self._n, "x0")
        return B.vcat(
            [x[s] - x0[s] if kind == "vector" else self.rotation.error(x[s], x0[s]) for kind, s, _ in self._parts()]
        )

    def apply_dx(self, x0: Any, dx: Any) -> Any:
        """``x0`` (n,) moved by the error ``dx`` (m,): vectors added, rotations composed."""
        x0, dx = B.vector(x0, self._n, "x0"), B.vector(dx, self._m, "dx")
        return B.vcat(
            [x0[s] + dx[t] if kind == "vector" else self.rotation.compose(x0[s], dx[t]) for kind, s, t in self._parts()]
        )

    apply_Δx = apply_dx

    def error_jacobian(self, x: Any) -> Any:
        """``d apply_dx(x, dx)/d dx`` at ``dx = 0`` (n x m)."""
        x = B.vector(x, self._n, "x")
        return B.blkdiag(
            [B.eye(s.stop - s.start, like=x) if kind == "vector" else self.rotation.error_jacobian(x[s]) for kind, s, _ in self._parts()]
        )

    def error_jacobian_T(self, x: Any) -> Any:
        """``d state_error(y, x)/d y`` at ``y = x`` (m x n)."""
        x = B.vector(x, self._n, "x")
        return B.blkdiag(
            [B.eye(s.stop - s.start, like=x) if kind == "vector" else self.rotation.error_jacobian_T(x[s]) for kind, s, _ in self._parts()]
        )

    # ------------------------------------------------------------ identity
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LieState):
            return NotImplemented
        return self.rotation is other.rotation and self.partition == other.partition

    def __hash__(self) -> int:
        return hash((self.rotation, self.partition))

    def __repr__(self) -> str:
        return f"LieState({self.rotation.name}, {self.partition})"


def QuatState(n: int, quat_starts: Sequence[int]) -> LieState:
    """Unit-quaternion :class:`LieState` of length ``n`` with quaternions at the 0-based ``quat_starts``.

    ``QuatState(16, (3, 9)) == LieState(UnitQuaternion, (3, 2, 3))``.
    """
    starts = [int(s) for s in quat_starts]
    partition, prev_end = [], 0
    for s in starts:
        if s < prev_end:
            raise ValueError(f"quat_starts: {tuple(starts)} must increase by at least 4 and start at >= 0")
        partition.append(s - prev_end)
        prev_end = s + UnitQuaternion.size
    if prev_end > n:
        raise ValueError(f"quat_starts: {tuple(starts)} do not fit in a state of length n = {n}")
    return LieState(UnitQuaternion, *partition, n - prev_end)
