"""The Cayley map between 3-vectors and unit quaternions (RobotDynamics.jl's error map).

``cayley_to_quat(g) = [1; g]/sqrt(1 + g.g)`` and its inverse
``quat_to_cayley(q) = [qx, qy, qz]/qw``: the same map as the Rodrigues (Gibbs)
parameters of :mod:`lie.rodrigues`, kept under this name because
RobotDynamics.jl / Rotations.jl use it as the rotation *error*:
``g = quat_to_cayley(conj(q0) * q)`` has ``|g| = tan(th/2) ~ th/2``.

This package's error (``lie.rotations``, ``LieState``) is the axis-angle
``phi = quat_to_axis_angle(conj(q0) * q)`` instead, with ``|phi| = th``: to
first order ``phi = 2 g``, so a quadratic attitude cost weighted ``Q`` here
equals RobotDynamics' cost weighted ``4 Q``. The Cayley map is singular at a
half turn; the axis-angle error is finite up to it.
"""
from __future__ import annotations

from typing import Any

from .rodrigues import quat_to_rodrigues, rodrigues_to_quat


def cayley_to_quat(g: Any) -> Any:
    """Unit quaternion ``[1; g]/sqrt(1 + g.g)`` (4,) of a Cayley vector ``g`` (3,)."""
    return rodrigues_to_quat(g)


def quat_to_cayley(q: Any) -> Any:
    """Cayley vector ``[qx, qy, qz]/qw`` (3,) of a quaternion ``q`` (4,); singular at a half turn."""
    return quat_to_rodrigues(q)
