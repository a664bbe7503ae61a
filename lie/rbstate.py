"""Rigid-body state ``[r; q; v; w]`` (13,) with a unit quaternion, as RobotDynamics.jl's ``RBState``.

``r`` position (world frame), ``q = [qw, qx, qy, qz]`` unit quaternion (body to
world), ``v`` linear velocity, ``w`` angular velocity (body frame). The frame
of ``v`` is the model's business (world for RobotDynamics-style rigid bodies);
:class:`RBState` only stores it. It converts to and from model state vectors
``[r; p; v; w]`` in any attitude parameterization of :mod:`lie.rotations`.

Numeric or symbolic (CasADi SX/MX) components; comparisons are numeric only.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import _backend as B
from .lie_state import LieState
from .rotations import UnitQuaternion, attitude_to_quat

class RBState:
    """Rigid-body state ``[r; q; v; w]`` (13,) holding a unit quaternion.

    Constructors, as RobotDynamics.jl's:

    - ``RBState(r, q, v, w)``: ``q`` a quaternion (4,), a rotation matrix
      (3x3) or a rotation of any :mod:`lie.rotations` parameterization
      (e.g. ``MRP(p)``);
    - ``RBState(x)``: ``x = [r; q; v; w]`` (13,) (or another ``RBState``);
    - ``RBState(model, x, renorm=False)``: the state vector ``x`` of a
      rigid-body model (any object with a ``rotation`` parameterization,
      e.g. :class:`models.RigidBody`), ``[r; p; v; w]`` (``9 + size``,).

    A quaternion is scaled to unit norm when ``renormalize`` (the keyword, or
    ``renorm`` given third after ``model, x`` or fifth after ``r, q, v, w``)
    is true: by default for the first two forms, not for ``(model, x)``
    (RobotDynamics' defaults). Otherwise it is stored as given, and a numeric
    one must be unit to 1e-6 (``ValueError`` otherwise). Symbolic input is
    never checked.

    As a sequence it is the vector ``[r; q; v; w]`` (13 numbers, in that
    order: ``rb[0:3]`` position, ``rb[3:7]`` quaternion ``[qw, qx, qy, qz]``,
    ``rb[7:10]`` linear, ``rb[10:13]`` angular velocity): ``rb[i]``, ``len(rb)``,
    iteration and ``numpy.asarray(rb)`` (numeric states) read it, as
    RobotDynamics.jl's ``RBState <: StaticVector{13}``. :attr:`orientation` is
    the rotation (a :class:`lie.UnitQuaternion`), its raw parameters
    ``rb.orientation.params`` or ``rb[3:7]``.

    ``==`` compares exactly and treats ``q`` and ``-q`` as the same rotation
    (as RobotDynamics.jl); :meth:`isapprox` compares with a tolerance.
    ``x1 - x2`` is the 12-vector error ``[r1 - r2; phi; v1 - v2; w1 - w2]``
    with ``phi = quat_to_axis_angle(conj(q2) * q1)`` (:attr:`lie_state`'s
    ``state_error(x1, x2)``).
    """

    #: The error-state geometry of ``[r; q; v; w]``.
    lie_state = LieState(UnitQuaternion, (3, 6))
    _R, _Q, _V, _W = slice(0, 3), slice(3, 7), slice(7, 10), slice(10, 13)

    def __init__(self, *args: Any, renormalize: bool | None = None) -> None:
        if len(args) in (2, 3) and hasattr(args[0], "rotation"):
            rotation, default = args[0].rotation, False
            n = rotation.size
            x = B.vector(args[1], 9 + n, "x")
            r, q, v, w = x[0:3], rotation.to_quat(x[3 : 3 + n]), x[3 + n : 6 + n], x[6 + n : 9 + n]
            flag = args[2:]
        elif len(args) == 1:
            x = B.vector(args[0].vector() if isinstance(args[0], RBState) else args[0], 13, "x")
            r, q, v, w = x[self._R], x[self._Q], x[self._V], x[self._W]
            default, flag = True, ()
        elif len(args) in (4, 5):
            (r, q, v, w), default, flag = args[:4], True, args[4:]
        else:
            raise TypeError(f"RBState: expected (r, q, v, w), (x) or (model, x[, renorm]), got {len(args)} positional arguments")
        if flag and renormalize is not None:
            raise TypeError("RBState: renorm given twice (positionally and as renormalize=)")
        renorm = bool(flag[0]) if flag else default if renormalize is None else renormalize
        self._x = B.vcat([B.vector(r, 3, "r"), attitude_to_quat(q, "q", renorm), B.vector(v, 3, "v"), B.vector(w, 3, "w")])

    # ------------------------------------------------------------ constructors
    @classmethod
    def from_attitude(cls, r: Any, p: Any, v: Any, w: Any, rotation: type = UnitQuaternion, renormalize: bool = True) -> "RBState":
        """State from an attitude ``p`` in the parameterization ``rotation`` (e.g. :class:`lie.MRP`)."""
        return cls(r, rotation.to_quat(B.vector(p, rotation.size, "p")), v, w, renormalize)

    @classmethod
    def from_state(cls, x: Any, rotation: type = UnitQuaternion, renormalize: bool = True) -> "RBState":
        """State from a model state vector ``[r; p; v; w]`` (``9 + rotation.size``,)."""
        x = B.vector(x, 9 + rotation.size, "x")
        n = rotation.size
        return cls.from_attitude(x[0:3], x[3 : 3 + n], x[3 + n : 6 + n], x[6 + n : 9 + n], rotation, renormalize)

    def to_state(self, rotation: type = UnitQuaternion) -> Any:
        """Model state vector ``[r; p; v; w]`` with the attitude in ``rotation`` (``9 + size``,)."""
        return B.vcat([self.position, rotation.from_quat(self._x[self._Q]), self.linear_velocity, self.angular_velocity])

    # ------------------------------------------------------------ parts
    @property
    def position(self) -> Any:
        """``r`` (3,), world frame."""
        return self._x[self._R]

    @property
    def orientation(self) -> UnitQuaternion:
        """The attitude as a rotation object, :class:`lie.UnitQuaternion` (body to world), as
        RobotDynamics.jl's ``orientation(x::RBState)``; its ``params`` are ``q`` (4,) (a copy)."""
        return UnitQuaternion(self._x[self._Q])

    @property
    def linear_velocity(self) -> Any:
        """``v`` (3,)."""
        return self._x[self._V]

    @property
    def angular_velocity(self) -> Any:
        """``w`` (3,), body frame."""
        return self._x[self._W]

    def vector(self) -> Any:
        """``[r; q; v; w]`` (13,) (a copy for numpy)."""
        return self._x if B.is_symbolic(self._x) else self._x.copy()

    def __len__(self) -> int:
        return 13

    def __getitem__(self, index: Any) -> Any:
        """Entries of ``[r; q; v; w]`` (an int, a slice or an index array)."""
        return self._x[index]

    def __iter__(self) -> Any:
        return iter(self._x[i] for i in range(13))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """``numpy.asarray(rb)``: ``[r; q; v; w]`` (13,) of a numeric state (``TypeError`` for a symbolic one)."""
        if B.is_symbolic(self._x):
            raise TypeError("RBState: a symbolic state has no numeric array; use .vector()")
        return np.array(self._x, dtype=dtype)

    def flipquat(self) -> "RBState":
        """The same state with the quaternion negated (the same rotation)."""
        return RBState(self.position, -self._x[self._Q], self.linear_velocity, self.angular_velocity, renormalize=False)

    # ------------------------------------------------------------ arithmetic
    def __sub__(self, other: "RBState") -> Any:
        if not isinstance(other, RBState):
            return NotImplemented
        return self.lie_state.state_error(self._x, other._x)

    def _numeric_pair(self, other: "RBState") -> tuple[np.ndarray, np.ndarray]:
        if B.is_symbolic(self._x, other._x):
            raise TypeError("RBState: symbolic states cannot be compared")
        return self._x, other._x

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RBState):
            return NotImplemented
        a, b = self._numeric_pair(other)
        same_rest = np.array_equal(np.delete(a, range(3, 7)), np.delete(b, range(3, 7)))
        qa, qb = a[self._Q], b[self._Q]
        return bool(same_rest and (np.array_equal(qa, qb) or np.array_equal(qa, -qb)))

    def isapprox(self, other: "RBState", tol: float = 1e-12) -> bool:
        """Equal to ``tol`` (relative with floor 1, per part), ``q`` and ``-q`` alike."""
        a, b = self._numeric_pair(other)
        qa, qb = a[self._Q], b[self._Q]

        def close(x: np.ndarray, y: np.ndarray) -> bool:
            return bool(np.abs(x - y).max() <= tol * max(1.0, np.abs(y).max()))

        rest = [close(a[s], b[s]) for s in (self._R, self._V, self._W)]
        return all(rest) and (close(qa, qb) or close(qa, -qb))

    def __repr__(self) -> str:
        fmt = (lambda x: np.array2string(x, precision=6)) if not B.is_symbolic(self._x) else str
        return (
            f"RBState(r={fmt(self.position)}, q={fmt(self._x[self._Q])}, "
            f"v={fmt(self.linear_velocity)}, w={fmt(self.angular_velocity)})"
        )
