"""A free rigid body turned by body-frame torques: the attitude-control test bed."""
from __future__ import annotations

from typing import Any, Tuple

import numpy as np

from lie import UnitQuaternion
from lie import _backend as B

from .rigid_body import RigidBody


class TorqueBody(RigidBody):
    """Rigid body with control ``u = tau`` (3,), a moment about the center of mass in the BODY frame.

    No force acts (no gravity): ``F_world = 0``, ``tau_body = u``, so with the
    :class:`RigidBody` equations ``wdot = J^-1 (u - w x J w)`` and the center of
    mass drifts with constant world velocity (``velocity_frame="world"``) or,
    with ``velocity_frame="body"``, ``rdot = R v``, ``vdot = -w x v``.

    Defaults: mass 1 kg, inertia diag(1, 2, 3) kg m^2 (a body whose three
    principal axes differ, so free rotations are not trivial), unlimited torque.
    """

    name = "torque_body"

    def __init__(
        self,
        rotation: Any = UnitQuaternion,
        velocity_frame: str = "world",
        mass: float = 1.0,
        inertia: Any = (1.0, 2.0, 3.0),
        u_max: float = np.inf,
    ) -> None:
        super().__init__(rotation, velocity_frame)
        self.set_mass_properties(mass, inertia)
        if not u_max > 0:
            raise ValueError(f"u_max: expected a positive torque limit, got {u_max}")
        self.u_max = float(u_max)

    @property
    def control_dim(self) -> int:
        return 3

    def control_bounds(self) -> Tuple[np.ndarray, np.ndarray]:
        return np.full(3, -self.u_max), np.full(3, self.u_max)

    def moments(self, x: Any, u: Any, t: Any) -> Any:
        return B.vector(u, 3, "u")
