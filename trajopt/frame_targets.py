"""Targets for a robot's frame (an end effector, a hand, a tool): a constraint or a cost in one line.

For a multibody model (:class:`models.multibody_model.MultibodyModel`, or a
model whose ``robot`` is one and whose state starts with the robot's, such
as :class:`models.contact_dynamics.ContactDynamics`), a pinocchio frame's
world position ``p_f(x)`` and rotation ``R_f(x)`` (frame to world) are
CasADi expressions of the state (:meth:`~models.multibody.engine.RigidBodyTree.frame_placement`).

- :func:`frame_target`: the constraint ``p_f(x_k) = p*`` at a knot (the final
  one by default), optionally also ``log(R*^T R_f(x_k)) = 0`` (3 rows, the
  rotation vector of the frame's orientation error, in the frame), or within
  a tolerance ``|p_f - p*|_inf <= tol`` per axis;
- :func:`frame_target_cost`: ``w/2 |p_f(x) - p*|^2`` at the final knot
  (terminal) or integrated over the horizon (running, a least-squares cost
  whose Gauss-Newton Hessian is exact in the residual).
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import casadi as ca
import numpy as np

from lie.so3 import log as so3_log
from models.multibody_model import frame_names, multibody_robot

from .constraints import Constraint
from .costs import Cost, FunctionTerminalCost, LeastSquaresCost


def frame_placement_function(model: Any, frame: str) -> Callable[[Any], tuple]:
    """``x -> (R_f (3x3), p_f (3,))`` of ``frame`` in the world, for symbolic or numeric states of ``model``.

    Raises ``ValueError`` naming the frame (with close names) when the robot has no such frame.
    """
    robot = multibody_robot(model)
    if robot is None:
        raise ValueError(f"model: expected a MultibodyModel or a model of one (its .robot), got {type(model).__name__}")
    frame_names(robot.pin_model, [frame], "frame")

    def placement(x: Any) -> tuple:
        return robot.tree.frame_placement(x[: robot.nq], frame)

    return placement


def _target(position: Any) -> np.ndarray:
    target = np.asarray(position, dtype=float).reshape(-1)
    if target.shape != (3,) or not np.isfinite(target).all():
        raise ValueError(f"position: expected a finite world position (3,), got {np.asarray(position)!r}")
    return target


def frame_target(
    model: Any,
    frame: str,
    position: Any,
    rotation: Optional[Any] = None,
    knot: Any = -1,
    tolerance: float = 0.0,
    name: Optional[str] = None,
) -> Constraint:
    """The constraint that ``frame`` is at the world ``position`` (3,) at ``knot`` (module docstring).

    ``rotation``: a target rotation matrix (frame to world), adding ``log(R*^T R_f) = 0``.
    ``tolerance``: each position axis within ``+-tolerance`` instead of equal (m). ``knot``: an index
    or sequence of knots, as :class:`~trajopt.constraints.Constraint` takes them.
    """
    placement, target = frame_placement_function(model, frame), _target(position)
    if tolerance < 0 or not np.isfinite(tolerance):
        raise ValueError(f"tolerance: expected a finite value >= 0, got {tolerance!r}")
    R_target = None
    if rotation is not None:
        R_target = np.asarray(rotation, dtype=float)
        if R_target.shape != (3, 3) or not np.allclose(R_target.T @ R_target, np.eye(3), atol=1e-9) or np.linalg.det(R_target) < 0:
            raise ValueError("rotation: expected a 3x3 rotation matrix (orthonormal, determinant +1)")

    def residual(x: Any) -> Any:
        R, p = placement(x)
        rows = [p - target]
        if R_target is not None:
            rows.append(so3_log(ca.DM(R_target.T) @ R))
        return ca.vertcat(*rows)

    rows = 3 if R_target is None else 6
    lower = np.r_[np.full(3, -tolerance), np.zeros(rows - 3)]
    return Constraint(residual, knots=knot, lower=lower, upper=-lower, name=name or f"{frame} target")


def frame_target_cost(model: Any, frame: str, position: Any, weight: float = 1.0, running: bool = False, name: Optional[str] = None) -> Cost:
    """``weight/2 |p_f(x) - position|^2``: at the final knot, or with ``running`` integrated over the horizon."""
    placement, target = frame_placement_function(model, frame), _target(position)
    if not np.isfinite(weight) or weight <= 0:
        raise ValueError(f"weight: expected a finite value > 0, got {weight!r}")
    label = name or f"{frame} target cost"
    if running:
        return LeastSquaresCost(lambda x, u, p: np.sqrt(weight) * (placement(x)[1] - target), name=label)
    return FunctionTerminalCost(lambda x: 0.5 * weight * ca.sumsqr(placement(x)[1] - target), name=label)
