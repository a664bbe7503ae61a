"""Attitude parameterizations as classes: :class:`UnitQuaternion`, :class:`MRP`, :class:`RodriguesParam`.

Each class is a namespace of class methods (no instances): ``size``
parameters, converters to and from the unit quaternion, the rotation matrix,
the kinematics ``pdot = K(p) w`` for the BODY angular velocity ``w``, and the
error-state maps used by :class:`lie.LieState`::

    error(p, p0)        = quat_to_axis_angle(conj(q0) * q)        (3,)
    compose(p0, dphi)   = from_quat(q0 * axis_angle_to_quat(dphi))  (size,; MRP: see MRP)
    error_jacobian(p)   = d compose(p, dphi)/d dphi at dphi = 0     (size x 3)
    error_jacobian_T(p) = d error(y, p)/d y at y = p                (3 x size)

with ``q = to_quat(p)``, ``q0 = to_quat(p0)``. ``dphi`` is a body-frame
(right) rotation vector: ``compose`` turns ``p0`` by ``dphi`` in its own frame,
so ``error_jacobian(p) = K(p)`` and ``error_jacobian_T(p) = K(p)^-1`` (for the
quaternion ``0.5 G(q)`` and ``2 G(q)^T``; ``error_jacobian_T @ error_jacobian
= I``). The error is the full angle, shortest path (``|error| <= pi``):
RobotDynamics.jl's Cayley error is about half of it, so its attitude weights
are 4 times ours (see :mod:`lie.cayley`).

All methods accept numpy (return numpy) or CasADi SX/MX (return the same type).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import _backend as B
from .mrp import mrp_kinematics_matrix, mrp_kinematics_matrix_inv, mrp_to_quat, quat_to_mrp
from .quaternion import attitude_jacobian, axis_angle_to_quat, quat_conj, quat_mult, quat_to_axis_angle, quat_to_rot
from .rodrigues import (
    quat_to_rodrigues,
    rodrigues_kinematics_matrix,
    rodrigues_kinematics_matrix_inv,
    rodrigues_to_quat,
)


class RotationParam:
    """Base of the parameterizations: the public maps, written once (see module docstring).

    A subclass sets ``size``, ``name`` and four plain functions: ``_to_quat``,
    ``_from_quat``, ``_kinematics`` (``K(p)``) and ``_kinematics_inv`` (``K(p)^-1``).
    """

    #: number of parameters
    size: int
    #: display name (the class name)
    name: str
    _to_quat: Callable[[Any], Any]
    _from_quat: Callable[[Any], Any]
    _kinematics: Callable[[Any], Any]
    _kinematics_inv: Callable[[Any], Any]

    @classmethod
    def _param(cls, p: Any, name: str = "p") -> Any:
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
        """Parameters (``size``,) of the unit quaternion ``q`` (4,)."""
        return cls._from_quat(B.vector(q, 4, "q"))

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
        return quat_to_axis_angle(quat_mult(quat_conj(q0), cls.to_quat(p)))

    @classmethod
    def compose(cls, p0: Any, dphi: Any) -> Any:
        """``p0`` turned by the body-frame rotation vector ``dphi`` (3,): ``q0 * exp(dphi)``."""
        q0 = cls.to_quat(cls._param(p0, "p0"))
        return cls.from_quat(quat_mult(q0, axis_angle_to_quat(B.vector(dphi, 3, "dphi"))))

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
        return quat_to_mrp(quat_mult(q0, axis_angle_to_quat(B.vector(dphi, 3, "dphi"))), canonical=False)


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


#: The parameterizations :class:`lie.LieState` and :class:`lie.RBState` accept.
ROTATIONS = (UnitQuaternion, MRP, RodriguesParam)
