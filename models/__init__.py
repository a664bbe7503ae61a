"""Model classes: base interfaces, rigid bodies, classic systems, multibody robots."""
from .hand import Hand
from .humanoid import Humanoid
from .legged import Go1, Go2, LeggedRobot
from .floating_base import FloatingBaseModel
from .formulation import Formulation
from .lie_group_model import LieGroupModel
from .manipulator import Manipulator
from .model import Model
from .multibody_model import MultibodyModel
from .planar_chain import Cartpole, DoubleCartpole, DoublePendulum, Pendulum, PointMassChain
from .quadrotor import Quadrotor
from .wheeled_biped import WheeledBiped
from .rigid_body import SUPPORTED_ROTATIONS, RigidBody
from .simple_multibody import (
    FloatingBody,
    MultibodyQuadrotor,
    cartpole_multibody,
    double_cartpole_multibody,
    double_pendulum_multibody,
    pendulum_multibody,
)

__all__ = [
    "Model",
    "LieGroupModel",
    "RigidBody",
    "SUPPORTED_ROTATIONS",
    "Quadrotor",
    "PointMassChain",
    "Pendulum",
    "DoublePendulum",
    "Cartpole",
    "DoubleCartpole",
    "MultibodyModel",
    "FloatingBaseModel",
    "Formulation",
    "LeggedRobot",
    "Go1",
    "Go2",
    "Humanoid",
    "Hand",
    "Manipulator",
    "WheeledBiped",
    "FloatingBody",
    "MultibodyQuadrotor",
    "pendulum_multibody",
    "double_pendulum_multibody",
    "cartpole_multibody",
    "double_cartpole_multibody",
]
