"""Simulation of models: manifold integration, closed-loop rollouts, controllers, capsule contacts.

- :mod:`.integrate`: ``integrate(model, q, v, dt)``, pinocchio's ``q (+) v dt``
  in our quaternion convention.
- :mod:`.simulate`: ``simulate(model, x0, controller, dt, T)`` with an explicit
  Runge-Kutta method on the state manifold, the controller evaluated at
  every stage or held per step; ``mechanical_energy``.
- :mod:`.controllers`: constant torque, joint friction, PD (optional gravity
  compensation), computed torque (exact or approximate mass matrix), and
  feedforward + feedback tracking of a planned trajectory (PD or LQR gains).
- :mod:`.capsules`: capsule geometry on frames, signed distance with witness
  points, the distance Jacobian and its drift.
- :mod:`.contact_sim`: contact simulation by Gauss's principle (quadprog)
  with inelastic impacts.
- :mod:`.pin_numerics`: pinocchio's numeric algorithms in our convention.
"""
from .capsules import Capsule, CapsuleCollisions, CapsuleDistance, PairContact, capsule_distance, capsules_from_geometry, closest_segment_points
from .contact_sim import ContactQPError, ContactSimResult, ContactSimulator, Impact, solve_projection_qp
from .controllers import PD, ComputedTorque, ConstantTorque, JointFriction, TrackingController, lqr_gains, pd_gains
from .integrate import integrate
from .pin_numerics import PinNumerics
from .simulate import SimResult, mechanical_energy, simulate

__all__ = [
    "Capsule",
    "CapsuleCollisions",
    "CapsuleDistance",
    "ComputedTorque",
    "ConstantTorque",
    "ContactQPError",
    "ContactSimResult",
    "ContactSimulator",
    "Impact",
    "JointFriction",
    "PD",
    "PairContact",
    "PinNumerics",
    "SimResult",
    "TrackingController",
    "capsule_distance",
    "capsules_from_geometry",
    "closest_segment_points",
    "integrate",
    "lqr_gains",
    "mechanical_energy",
    "pd_gains",
    "simulate",
]
