"""Symbolic multibody dynamics: pinocchio models re-expressed as CasADi expressions.

``RigidBodyTree(pin_model)`` gives forward kinematics, frame Jacobians, RNEA,
CRBA and ABA on SX/MX (or numpy) arguments; pinocchio is only the parser here.
"""
from .engine import RigidBodyTree

__all__ = ["RigidBodyTree"]
