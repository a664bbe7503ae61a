"""Quadrotor as a :class:`RigidBody` with four rotor-thrust inputs."""
from __future__ import annotations

from typing import Any, Tuple

import numpy as np

from lie import UnitQuaternion
from lie import _backend as B

from .rigid_body import RigidBody


class Quadrotor(RigidBody):
    """A "+"-configuration quadrotor (RobotDynamics.jl's layout).

    Inputs ``u`` (4,) are rotor commands; rotor ``i`` produces thrust
    ``kf u_i`` along body +z and drag moment ``km u_i`` about body z. Rotors 1..4
    sit at body (L, 0), (0, L), (-L, 0), (0, -L); rotors 1 and 3 spin so their
    drag moment is ``+km u`` about z, rotors 2 and 4 ``-km u``::

        F_world  = R [0, 0, kf sum(u)] - [0, 0, m g]
        tau_body = [L kf (u2 - u4), L kf (u3 - u1), km (u1 - u2 + u3 - u4)]

    Defaults: mass 0.5 kg, inertia diag(0.0023, 0.0023, 0.004) kg m^2, arm
    L = 0.175 m, kf = 1.0, km = 0.0245, g = 9.81 m/s^2; hover is ``u_i = m g / (4 kf)``.
    State ``[r, p, v, w]`` with ``v`` in the world frame by default.
    """

    name = "quadrotor"

    def __init__(
        self,
        rotation: Any = UnitQuaternion,
        velocity_frame: str = "world",
        mass: float = 0.5,
        inertia: Any = (0.0023, 0.0023, 0.004),
        arm_length: float = 0.175,
        kf: float = 1.0,
        km: float = 0.0245,
        gravity: float = 9.81,
        u_min: float = 0.0,
        u_max: float = np.inf,
    ) -> None:
        super().__init__(rotation, velocity_frame)
        self.set_mass_properties(mass, inertia)
        self.arm_length = B.real(arm_length, "arm_length", lower=0.0, strict=True)
        self.kf, self.km = B.real(kf, "kf", lower=0.0, strict=True), B.real(km, "km")
        self.gravity = B.real(gravity, "gravity")
        self.u_min, self.u_max = B.real(u_min, "u_min", allow_inf=True), B.real(u_max, "u_max", allow_inf=True)
        if not self.u_min < self.u_max:
            raise ValueError(f"u_max: expected a value above u_min = {self.u_min:g}, got {self.u_max:g}")

    @property
    def control_dim(self) -> int:
        return 4

    def control_bounds(self) -> Tuple[np.ndarray, np.ndarray]:
        return np.full(4, self.u_min), np.full(4, self.u_max)

    def hover_control(self) -> np.ndarray:
        """Rotor commands that balance gravity at any position: ``m g / (4 kf)`` each."""
        return np.full(4, self.mass() * self.gravity / (4 * self.kf))

    def wrenches(self, x: Any, u: Any, t: Any = 0.0) -> Tuple[Any, Any]:
        R = self.rotation_matrix(x)
        thrust = self.kf * (u[0] + u[1] + u[2] + u[3])
        F = R @ B.vcat([0, 0, thrust]) - B.vcat([0.0, 0.0, self.mass(x, u) * self.gravity])
        L, kf, km = self.arm_length, self.kf, self.km
        tau = B.vcat([L * kf * (u[1] - u[3]), L * kf * (u[2] - u[0]), km * (u[0] - u[1] + u[2] - u[3])])
        return F, tau
