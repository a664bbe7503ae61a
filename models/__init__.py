"""Model classes: base interfaces, rigid bodies, classic systems, multibody robots."""
from .lie_group_model import LieGroupModel
from .model import Model
from .planar_chain import Cartpole, DoubleCartpole, DoublePendulum, Pendulum, PointMassChain
from .quadrotor import Quadrotor
from .rigid_body import SUPPORTED_ROTATIONS, RigidBody

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
]
