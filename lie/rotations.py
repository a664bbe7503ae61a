"""Attitude parameterizations as classes: :class:`UnitQuaternion`, :class:`MRP`,
:class:`RodriguesParam`, :class:`Cayley`, :class:`EulerZYX` and :class:`RotationVec`.

Each class is a namespace of class methods: ``size`` parameters, converters
to and from the unit quaternion, the rotation matrix, the kinematics
``pdot = K(p) w`` for the BODY angular velocity ``w``, and the error-state
maps used by :class:`lie.LieState`::

    error(p, p0)        = quat_to_axis_angle(conj(q0) * q)        (3,)
    compose(p0, dphi)   = from_quat(q0 * axis_angle_to_quat(dphi))  (size,; MRP, EulerZYX, RotationVec: see there)
    error_jacobian(p)   = d compose(p, dphi)/d dphi at dphi = 0     (size x 3)
    error_jacobian_T(p) = d error(y, p)/d y at y = p                (3 x size)

with ``q = to_quat(p)``, ``q0 = to_quat(p0)``. ``dphi`` is a body-frame
(right) rotation vector: ``compose`` turns ``p0`` by ``dphi`` in its own frame,
so ``error_jacobian(p) = K(p)`` and ``error_jacobian_T(p) = K(p)^-1`` (for the
quaternion ``0.5 G(q)`` and ``2 G(q)^T``; ``error_jacobian_T @ error_jacobian
= I``). The error is the full angle, shortest path (``|error| <= pi``):
RobotDynamics.jl's Cayley error is about half of it, so its attitude weights
are 4 times ours (see :mod:`lie.cayley`).

A class is also the type of a rotation held in that parameterization, as in
Rotations.jl: ``MRP(p)`` is the rotation with parameters ``p``, ``MRP(other)``
converts another parameterization's rotation or a rotation matrix, and
``rot.params``, ``rot.as_quat()``, ``rot.as_matrix()``, ``rot @ v`` (turns
the vector ``v``), ``rot1 @ rot2`` (composition) and ``rot.inv()`` work on it;
``numpy.asarray(rot)`` is its parameter vector.

All methods accept numpy (return numpy) or CasADi SX/MX (return the same type).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import _backend as B
from .cayley import cayley_to_quat, quat_to_cayley
from .euler import euler_zyx_rate_matrix, euler_zyx_rate_matrix_inv, euler_zyx_to_quat, quat_to_euler_zyx
from .mrp import mrp_kinematics_matrix, mrp_kinematics_matrix_inv, mrp_to_quat, quat_to_mrp
from .quaternion import (
    attitude_jacobian,
    axis_angle_to_quat,
    check_unit_quaternion,
    quat_conj,
    quat_error,
    quat_mult,
    quat_to_axis_angle,
    quat_to_rot,
    rot_to_quat,
)
from .rodrigues import (
    quat_to_rodrigues,
    rodrigues_kinematics_matrix,
    rodrigues_kinematics_matrix_inv,
    rodrigues_to_quat,
)
from .so3 import right_jacobian, right_jacobian_inv

#: Tolerance on ``|R^T R - I|`` (max entry) for a numeric rotation matrix given as an attitude.
ORTHONORMAL_TOL = 1e-6


def attitude_to_quat(attitude: Any, name: str = "q", renormalize: bool = False) -> Any:
    """Unit quaternion (4,) of an attitude: a :class:`RotationParam` rotation, a quaternion (4,) or a rotation matrix (3x3).

    A numeric matrix must be a rotation (``|R^T R - I| <= ORTHONORMAL_TOL``,
    ``det R > 0``). A numeric quaternion is scaled to unit norm with
    ``renormalize`` (a zero one raises), else it must be unit to 1e-6
    (``ValueError`` naming ``name``). Symbolic input is never checked
    (``renormalize`` still divides by the norm).
    """
    if isinstance(attitude, RotationParam):
        return attitude.as_quat()
    if tuple(attitude.shape if hasattr(attitude, "shape") else np.shape(attitude)) == (3, 3):
        R = B.matrix(attitude, (3, 3), name)
        if not B.is_symbolic(R):
            err = np.abs(R.T @ R - np.eye(3)).max()
            if err > ORTHONORMAL_TOL or np.linalg.det(R) < 0:
                raise ValueError(f"{name}: a 3x3 attitude must be a rotation matrix (|R^T R - I| = {err:.3g}, det = {np.linalg.det(R):.6g})")
        attitude = rot_to_quat(R)
    q = B.vector(attitude, 4, name)
    if B.is_symbolic(q):
        return q / B.norm(q) if renormalize else q
    if not renormalize:
        check_unit_quaternion(q, name)
        return q
    nrm = B.norm(q)
    if nrm < 1e-12:
        raise ValueError(f"{name}: cannot normalize a zero quaternion {q}")
    return q / nrm


def _turned(q0: Any, dphi: Any) -> Any:
    """``q0 * exp(dphi)`` (4,): the quaternion ``q0`` turned by the body-frame rotation vector ``dphi`` (3,)."""
    return quat_mult(q0, axis_angle_to_quat(B.vector(dphi, 3, "dphi")))


class RotationParam:
    """Base of the attitude parameterizations (:class:`UnitQuaternion`, :class:`MRP`, ...): the maps, written once.

    Every parameterization converts to and from unit quaternions
    ``[qw, qx, qy, qz]`` (body to world) and rotation matrices, and gives its
    kinematics ``pdot = K(p) w`` for the body angular velocity ``w`` (rad/s).

    A subclass sets ``size``, ``name`` and four plain functions: ``_to_quat``,
    ``_from_quat``, ``_kinematics`` (``K(p)``) and ``_kinematics_inv`` (``K(p)^-1``).

    ``R(p)`` is a rotation held in this parameterization (``p``: the ``size``
    parameters, numeric or symbolic, copied), ``R(rot)`` converts a rotation
    of another parameterization and ``R(M)`` a rotation matrix (3x3, checked
    as in :func:`attitude_to_quat`). A numeric :class:`UnitQuaternion` must be
    unit to 1e-6 unless ``renorm=True``, which scales it to unit norm
    (RobotDynamics.jl's ``renorm``); ``renorm`` does nothing to the
    3-parameter sets.
    """

    def __init__(self, params: Any, renorm: bool = False) -> None:
        cls = type(self)
        if isinstance(params, RotationParam) or tuple(params.shape if hasattr(params, "shape") else np.shape(params)) == (3, 3):
            params = cls.from_quat(attitude_to_quat(params, "params"))
        p = cls._param(params, "params")
        if cls._unit_norm:
            p = attitude_to_quat(p, "params", renormalize=renorm)
        #: The parameter vector (``size``,): a numpy array, or a CasADi column for symbolic rotations.
        self.params = p.copy() if isinstance(p, np.ndarray) else p

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if B.is_symbolic(self.params):
            raise TypeError(f"{self!r} is symbolic; it has no numeric array")
        return np.array(self.params, dtype=dtype)

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: Any) -> Any:
        return self.params[index]

    def __iter__(self) -> Any:
        return iter(self.params[i] for i in range(self.size))

    def as_quat(self) -> Any:
        """Unit quaternion ``[qw, qx, qy, qz]`` (4,) of this rotation (sign as :meth:`to_quat` gives it)."""
        return type(self).to_quat(self.params)

    def as_matrix(self) -> Any:
        """Rotation matrix (3x3, body to world)."""
        return type(self).to_rot(self.params)

    def inv(self) -> "RotationParam":
        """The inverse rotation, in the same parameterization."""
        cls = type(self)
        return cls(cls.from_quat(quat_conj(self.as_quat())))

    def __matmul__(self, other: Any) -> Any:
        """``rot @ v``: the vector ``v`` (3,) turned by the rotation; ``rot @ rot2``: the composition, in ``rot``'s parameterization."""
        if isinstance(other, RotationParam):
            cls = type(self)
            return cls(cls.from_quat(quat_mult(self.as_quat(), other.as_quat())))
        return self.as_matrix() @ B.vector(other, 3, "v")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RotationParam):
            return NotImplemented
        if B.is_symbolic(self.params, other.params):
            raise TypeError("RotationParam: symbolic rotations cannot be compared")
        return type(self) is type(other) and bool(np.array_equal(self.params, other.params))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        text = np.array2string(np.asarray(self.params), precision=6) if not B.is_symbolic(self.params) else str(self.params)
        return f"{self.name}({text})"

    #: number of parameters
    size: int
    #: display name (the class name)
    name: str
    _to_quat: Callable[[Any], Any]
    _from_quat: Callable[[Any], Any]
    _kinematics: Callable[[Any], Any]
    _kinematics_inv: Callable[[Any], Any]
    #: Whether the parameters are a unit quaternion (checked, or scaled with ``renorm``).
    _unit_norm: bool = False

    @classmethod
    def _param(cls, p: Any, name: str = "p") -> Any:
        """Parameters (``size``,) of ``p``: a parameter vector, or a rotation object of any
        parameterization (its own parameters for this class, else converted through the quaternion)."""
        if isinstance(p, RotationParam):
            p = p.params if isinstance(p, cls) and cls._to_quat is type(p)._to_quat else cls.from_quat(p.as_quat())
        return B.vector(p, cls.size, name)

    @classmethod
    def identity(cls) -> np.ndarray:
        """Parameters of the identity rotation (``size``,)."""
        return cls.from_quat(np.array([1.0, 0.0, 0.0, 0.0]))

    @classmethod
    def to_quat(cls, p: Any) -> Any:
        """Unit quaternion ``[qw, qx, qy, qz]`` (4,) of the parameters ``p``."""
        return cls._to_quat(cls._param(p))

    @classmethod
    def from_quat(cls, q: Any) -> Any:
        """Parameters (``size``,) of the unit quaternion ``q`` (4,) (or of a rotation object of any parameterization)."""
        return cls._from_quat(B.vector(B.rotation_argument(q, "quat"), 4, "q"))

    @classmethod
    def to_rot(cls, p: Any) -> Any:
        """Rotation matrix (3x3, body to world)."""
        return quat_to_rot(cls.to_quat(p))

    @classmethod
    def kinematics_matrix(cls, p: Any) -> Any:
        """``K(p)`` (``size`` x 3): ``pdot = K(p) w`` for the body angular velocity ``w``."""
        return cls._kinematics(cls._param(p))

    @classmethod
    def error(cls, p: Any, p0: Any) -> Any:
        """Rotation vector (3,) from ``p0`` to ``p`` in the body frame of ``p0``, ``|.| <= pi``."""
        q0 = cls.to_quat(cls._param(p0, "p0"))
        return quat_error(cls.to_quat(p), q0)

    @classmethod
    def compose(cls, p0: Any, dphi: Any) -> Any:
        """``p0`` turned by the body-frame rotation vector ``dphi`` (3,): ``q0 * exp(dphi)``."""
        q0 = cls.to_quat(cls._param(p0, "p0"))
        return cls.from_quat(_turned(q0, dphi))

    @classmethod
    def error_jacobian(cls, p: Any) -> Any:
        """``d compose(p, dphi)/d dphi`` at ``dphi = 0`` (``size`` x 3); equals ``K(p)``."""
        return cls.kinematics_matrix(p)

    @classmethod
    def error_jacobian_T(cls, p: Any) -> Any:
        """``d error(y, p)/dy`` at ``y = p`` (3 x ``size``); equals ``K(p)^-1``, the left inverse of :meth:`error_jacobian`."""
        return cls._kinematics_inv(cls._param(p))


class UnitQuaternion(RotationParam):
    """Unit quaternion ``q = [qw, qx, qy, qz]`` (4 parameters), Hamilton product.

    ``kinematics_matrix = error_jacobian = 0.5 G(q)`` and ``error_jacobian_T =
    2 G(q)^T`` (exact for unit ``q``). ``to_quat`` and ``from_quat`` return the
    quaternion unchanged (no sign or norm normalization).
    """

    size = 4
    name = "UnitQuaternion"
    _unit_norm = True
    _to_quat = staticmethod(lambda q: q)
    _from_quat = staticmethod(lambda q: q)
    _kinematics = staticmethod(lambda q: 0.5 * attitude_jacobian(q))
    _kinematics_inv = staticmethod(lambda q: 2 * attitude_jacobian(q).T)


class MRP(RotationParam):
    """Modified Rodrigues parameters ``p = v/(1 + w)`` (3 parameters; :mod:`lie.mrp`).

    ``from_quat`` returns the canonical set ``|p| <= 1``. ``compose`` does not
    switch sets: it keeps the quaternion sign of ``to_quat(p0)``, so it is
    continuous in ``dphi``, ``compose(p0, 0) = p0`` for every ``p0`` and
    ``error_jacobian = K(p)`` everywhere; its result is the shadow
    ``-p/|p|^2`` of ``from_quat(q0 * exp(dphi))`` when that product has ``qw < 0``.
    Singular at a turn by 2 pi.
    """

    size = 3
    name = "MRP"
    _to_quat = staticmethod(mrp_to_quat)
    _from_quat = staticmethod(quat_to_mrp)
    _kinematics = staticmethod(mrp_kinematics_matrix)
    _kinematics_inv = staticmethod(mrp_kinematics_matrix_inv)

    @classmethod
    def compose(cls, p0: Any, dphi: Any) -> Any:
        q0 = cls.to_quat(cls._param(p0, "p0"))
        return quat_to_mrp(_turned(q0, dphi), canonical=False)


class RodriguesParam(RotationParam):
    """Rodrigues (Gibbs) parameters ``g = v/w`` (3 parameters; :mod:`lie.rodrigues`).

    Sign-free (``q`` and ``-q`` give the same ``g``); singular at a half turn.
    """

    size = 3
    name = "RodriguesParam"
    _to_quat = staticmethod(rodrigues_to_quat)
    _from_quat = staticmethod(quat_to_rodrigues)
    _kinematics = staticmethod(rodrigues_kinematics_matrix)
    _kinematics_inv = staticmethod(rodrigues_kinematics_matrix_inv)


class Cayley(RodriguesParam):
    """The Cayley parameters ``g = v/w`` (3 parameters; :mod:`lie.cayley`): RobotDynamics.jl's and
    Rotations.jl's name (``CayleyMap``) for the Rodrigues (Gibbs) vector.

    The very same numbers and maps as :class:`RodriguesParam` (a subclass of
    it), under the name a RobotDynamics.jl user looks for. Sign-free; singular
    at a half turn. As an attitude its error is still this package's
    axis-angle (the full rotation angle), not the Cayley error of Rotations.jl.
    """

    name = "Cayley"
    _to_quat = staticmethod(cayley_to_quat)
    _from_quat = staticmethod(quat_to_cayley)


class EulerZYX(RotationParam):
    """ZYX Euler angles ``e = (yaw, pitch, roll)`` (3 parameters; :mod:`lie.euler`), Rotations.jl's ``RotZYX``.

    ``R(e) = Rz(yaw) Ry(pitch) Rx(roll)``, ``K(e) = euler_zyx_rate_matrix(e)``
    (singular at ``pitch = +-pi/2``, gimbal lock; numeric calls there raise).
    ``from_quat`` returns yaw and roll in ``(-pi, pi]``, pitch in ``[-pi/2,
    pi/2]``. ``compose(p0, dphi) = p0 + step`` with ``step`` the change of
    the canonical angles from ``q0`` to ``q0 exp(dphi)``, its yaw and roll
    brought into ``[-pi, pi)``: continuous in ``dphi`` also for a yaw that
    has wound past ``pi``, and exactly ``p0`` at ``dphi = 0``, for every
    ``p0`` with ``|pitch| < pi/2`` (the domain of this chart).
    """

    size = 3
    name = "EulerZYX"
    _to_quat = staticmethod(euler_zyx_to_quat)
    _from_quat = staticmethod(quat_to_euler_zyx)
    _kinematics = staticmethod(euler_zyx_rate_matrix)
    _kinematics_inv = staticmethod(euler_zyx_rate_matrix_inv)

    @classmethod
    def compose(cls, p0: Any, dphi: Any) -> Any:
        p0 = cls._param(p0, "p0")
        q0 = euler_zyx_to_quat(p0)
        step = quat_to_euler_zyx(_turned(q0, dphi)) - quat_to_euler_zyx(q0)
        turns = B.floor(step / (2 * np.pi) + 0.5)  # yaw and roll steps brought into [-pi, pi)
        return p0 + step - (2 * np.pi) * B.vcat([turns[0], 0.0, turns[2]])


class RotationVec(RotationParam):
    """Rotation vector ``phi`` = axis times angle (3 parameters; :mod:`lie.so3`), Rotations.jl's ``RotationVec``.

    ``to_quat = exp``, ``from_quat`` the shortest-path logarithm (``|phi| <=
    pi``), ``K(phi) = Jr(phi)^-1`` (:func:`lie.so3_right_jacobian_inv`) and
    ``K^-1 = Jr(phi)``; singular at ``|phi| = 2 pi``. ``compose(p0, dphi) =
    p0 + log(q0 exp(dphi)) - log(q0)`` with the logarithm that keeps the
    quaternion's sign (no jump at ``|phi| = pi``): continuous in ``dphi``,
    and exactly ``p0`` at ``dphi = 0``, for every ``|p0| < 2 pi``.
    """

    size = 3
    name = "RotationVec"
    _to_quat = staticmethod(axis_angle_to_quat)
    _from_quat = staticmethod(quat_to_axis_angle)
    _kinematics = staticmethod(right_jacobian_inv)
    _kinematics_inv = staticmethod(right_jacobian)

    @classmethod
    def compose(cls, p0: Any, dphi: Any) -> Any:
        p0 = cls._param(p0, "p0")
        q0 = cls.to_quat(p0)
        turned = quat_to_axis_angle(_turned(q0, dphi), shortest=False)
        return p0 + (turned - quat_to_axis_angle(q0, shortest=False))


#: The parameterizations :class:`lie.LieState`, :class:`lie.RBState` and :class:`models.RigidBody` accept.
ROTATIONS = (UnitQuaternion, MRP, RodriguesParam, Cayley, EulerZYX, RotationVec)

_KINDS = {"quat": UnitQuaternion, "mrp": MRP, "rodrigues": RodriguesParam, "euler_zyx": EulerZYX, "rotvec": RotationVec}


def _rotation_parameters(rotation: RotationParam, kind: str) -> Any:
    """Parameters of ``rotation`` in ``kind`` (:func:`lie._backend.rotation_argument`); ``"matrix"`` gives its 3x3 matrix."""
    if kind == "matrix":
        return rotation.as_matrix()
    return _KINDS[kind]._param(rotation)


B._rotation_hook = (RotationParam, _rotation_parameters)
