"""Small multibody models: the floating body, a multibody quadrotor, and the
pendulum/cartpole family as pinocchio-built :class:`MultibodyModel` objects.

Their dynamics come from the CasADi multibody engine, so they must agree with
the closed-form models of :mod:`models.planar_chain` and :mod:`models.quadrotor`
(tests check it).
"""
from __future__ import annotations

import numpy as np

from lie import _backend as B

from . import pinocchio_builders as build
from .model import GRAVITY
from .multibody_model import MultibodyModel


class FloatingBody(MultibodyModel):
    """One free-flying rigid body (m = 1, I = I3 by default) driven by a body-frame wrench.

    Control ``u = [f_body (3), tau_body (3)]`` (the free-flyer's generalized force).
    """

    def __init__(self, mass: float = 1.0, inertia=(1.0, 1.0, 1.0)) -> None:
        super().__init__(build.floating_body_model(mass, inertia), input_matrix=np.eye(6), name="floating_body")


def rotor_mixing_matrix(arm_length: float, kf: float, km: float) -> np.ndarray:
    """Body wrench ``[f; tau]`` (6 x 4) of four "+"-configuration rotor commands.

    Rotors 1..4 at body (L, 0), (0, L), (-L, 0), (0, -L); thrust ``kf u_i`` along
    body +z, drag moment ``+-km u_i`` about z (rotors 1 and 3 positive), as
    :class:`models.Quadrotor`.
    """
    L = B.real(arm_length, "arm_length", lower=0.0, strict=True)
    kf, km = B.real(kf, "kf", lower=0.0, strict=True), B.real(km, "km")
    return np.array(
        [
            [0, 0, 0, 0],
            [0, 0, 0, 0],
            [kf, kf, kf, kf],
            [0, L * kf, 0, -L * kf],
            [-L * kf, 0, L * kf, 0],
            [km, -km, km, -km],
        ],
        dtype=float,
    )


class MultibodyQuadrotor(MultibodyModel):
    """Quadrotor body as a free-flyer (m = 1, I = diag(0.0046, 0.0046, 0.008)) with rotor inputs.

    The four rotor commands enter through :func:`rotor_mixing_matrix` as the
    body-frame generalized force (gravity comes from the multibody model).
    """

    def __init__(self, mass: float = 1.0, inertia=(0.0046, 0.0046, 0.008), arm_length: float = 0.175, kf: float = 1.0, km: float = 0.0245) -> None:
        super().__init__(build.quadrotor_body_model(mass, inertia), input_matrix=rotor_mixing_matrix(arm_length, kf, km), name="quadrotor_multibody")
        self.kf = float(kf)  # the mass is the model's (MultibodyModel.mass)

    def hover_control(self) -> np.ndarray:
        """Rotor commands balancing gravity: ``m g / (4 kf)`` each."""
        return np.full(4, self.mass * GRAVITY / (4 * self.kf))


def pendulum_multibody(mass: float = 1.0, length: float = 1.0) -> MultibodyModel:
    """Pendulum (``theta = 0`` up, about +x) from a pinocchio model; torque input."""
    return MultibodyModel(build.pendulum_model(mass, length), kinematics_bodies=["tip"], name="pendulum_multibody")


def double_pendulum_multibody(masses=(1.0, 1.0), lengths=(1.0, 1.0)) -> MultibodyModel:
    """Double pendulum from a pinocchio model; both joints actuated."""
    return MultibodyModel(build.double_pendulum_model(masses, lengths), kinematics_bodies=["tip"], name="double_pendulum_multibody")


def cartpole_multibody(cart_mass: float = 1.0, pole_mass: float = 1.0, length: float = 1.0) -> MultibodyModel:
    """Cartpole from a pinocchio model; the cart force is the only input."""
    return MultibodyModel(build.cartpole_model(cart_mass, pole_mass, length), kinematics_bodies=["tip"], input_matrix=np.array([[1.0], [0.0]]), name="cartpole_multibody")


def double_cartpole_multibody(masses=(1.0, 1.0, 1.0), lengths=(1.0, 1.0)) -> MultibodyModel:
    """Double cartpole from a pinocchio model; the cart force is the only input."""
    return MultibodyModel(build.double_cartpole_model(masses, lengths), kinematics_bodies=["tip"], input_matrix=np.array([[1.0], [0.0], [0.0]]), name="double_cartpole_multibody")
