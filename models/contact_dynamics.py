"""Floating-base dynamics with point-contact forces as inputs.

For trajectory optimization of legged robots the contact forces are decision
variables, so they join the control. :class:`ContactDynamics` wraps a
:class:`MultibodyModel` ``robot`` with ``nc`` point contacts (its kinematics
bodies) in one of two formulations of

    M(q) vdot + C(q, v) = B u + sum_i J_i(q)^T f_i        (f_i in the WORLD frame)

- ``"forward"``: control ``w = [u (nu); f (3 nc)]``; the state derivative is
  ``[E(q) v; ABA(q, v, B u, f)]``.
- ``"inverse"``: control ``w = [u; f; a (nv)]`` with the acceleration ``a`` a
  decision variable; the state derivative is ``[E(q) v; a]`` and the
  manipulator equation becomes the path equality
  :meth:`dynamics_residual` ``= RNEA(q, v, a, f) - B u = 0`` that the OCP
  imposes at every knot. RNEA and its derivatives are much cheaper than ABA's.
- ``"contact"``: control ``w = u`` only; the stance feet are held by the KKT
  contact dynamics (:mod:`models.multibody.contact`): ``a`` and ``f`` are
  functions of ``(x, u)`` and of the stance mask ``s`` (nc,), the model's
  dynamics parameters (:attr:`dynamics_param_dim` = nc, one column per knot).
  The state derivative is ``[E(q) v; a(x, u, s)]``; the legged problem's
  :meth:`~trajopt.legged.ocp.LeggedProblem.contact_forces` gives ``f(x, u, s)``. Symbolic calls on MX keep one call node whose Jacobian
  is the RNEA identity's (:attr:`symbol_type` is MX, so the NLP differentiates
  stage functions with it). Contact points that share a rigid body (the
  corners of a sole) get the forces of least norm that hold it
  (:mod:`models.multibody.contact`).

The state, its error maps and the robot's limits are the robot's.
"""
from __future__ import annotations

from functools import cached_property
from typing import Any, Tuple

import casadi as ca
import numpy as np

from lie import LieState
from lie import _backend as B

from .casadi_names import casadi_name
from .formulation import Formulation
from .lie_group_model import LieGroupModel
from .multibody.contact import contact_dynamics_function, plastic_impact_function
from .multibody_model import MultibodyModel

FORMULATIONS = ("forward", "inverse", "contact")


class ContactDynamics(LieGroupModel):
    """``robot`` with contact forces (and, for ``"inverse"``, accelerations) in the control."""

    def __init__(self, robot: MultibodyModel, formulation: "str | Formulation" = "forward") -> None:
        super().__init__()
        formulation = Formulation.parse(formulation, FORMULATIONS)
        if robot.nc == 0:
            raise ValueError("robot: has no kinematics bodies to carry contact forces")
        self.robot, self.formulation = robot, formulation
        self.name = f"{robot.name}_{formulation}_contact"
        self.nu, self.nf, self.nv = robot.nu, 3 * robot.nc, robot.nv
        _, forces, accelerations = formulation.control_widths(self.nu, self.nf, self.nv)
        self.u_slice = slice(0, self.nu)
        self.f_slice = slice(self.nu, self.nu + forces)
        self.a_slice = slice(self.nu + forces, self.nu + forces + accelerations)
        if formulation.stance_is_parameter:
            self.dynamics_param_dim = robot.nc
            self.symbol_type = ca.MX
            self.kkt = contact_dynamics_function(robot.tree, robot._dof_parents, robot.kinematics_bodies, robot.B_func(), casadi_name(f"{robot.name}_contact_kkt"), robot.contact_parents())

    @cached_property
    def plastic_impact(self) -> ca.Function:
        """``(x, s) -> x+``: the state ``x`` with the velocities of the contacts in stance ``s`` (nc,, 0/1) stopped by a
        plastic impact (:func:`.multibody.contact.plastic_impact_function`; a sole's corners stop as one body); built
        on first use."""
        robot = self.robot
        return plastic_impact_function(robot.tree, robot._dof_parents, robot.kinematics_bodies, casadi_name(f"{robot.name}_plastic_impact"), robot.contact_parents())

    # ------------------------------------------------------------------ sizes
    @property
    def state_dim(self) -> int:
        return self.robot.nx

    @property
    def control_dim(self) -> int:
        return self.a_slice.stop

    @property
    def error_dim(self) -> int:
        return self.robot.error_dim

    def lie_state(self) -> LieState:
        return self.robot.lie_state()

    def control_bounds(self) -> Tuple[np.ndarray, np.ndarray]:
        """Torque limits on ``u``; forces and accelerations unbounded."""
        lo, hi = np.full(self.control_dim, -np.inf), np.full(self.control_dim, np.inf)
        lo[self.u_slice], hi[self.u_slice] = self.robot.control_bounds()
        return lo, hi

    def split_control(self, w: Any) -> Tuple[Any, Any, Any]:
        """``(u, f, a)`` parts of a control (``a`` is empty for ``"forward"``, ``f`` and ``a`` for ``"contact"``)."""
        return w[self.u_slice], w[self.f_slice], w[self.a_slice]

    # --------------------------------------------------------------- dynamics
    def continuous_dynamics(self, x: Any, w: Any, t: Any, stance: Any = None) -> Any:
        u, f, a = self.split_control(w)
        if self.formulation.stance_is_parameter:
            a = self.kkt(x, u, stance)[0]
        elif not self.formulation.acceleration_is_control:
            return self.robot.dynamics(x, self.robot.B_func() @ u, forces=f)
        v = x[self.robot.nq :]
        return ca.vertcat(self.robot.velocity_kinematics(x) @ v, a)

    def contact_solution(self, x: Any, u: Any, stance: Any) -> Tuple[Any, Any]:
        """``(a, f)``: accelerations (nv,) and WORLD-frame contact forces (3 nc,) of the
        ``"contact"`` formulation for torques ``u`` and stance mask ``stance`` (nc,) of 0/1.

        Numeric arguments give numpy arrays (``x`` must hold a unit quaternion),
        symbols give expressions.
        """
        if not self.formulation.stance_is_parameter:
            raise ValueError(f"contact_solution: the '{self.formulation}' formulation has forces in its control, not as functions of (x, u)")
        x, u = self.robot._x(x), B.vector(u, self.nu, "u")
        stance = B.vector(stance, self.robot.nc, "stance")
        if not B.is_symbolic(stance) and not np.isin(stance, (0.0, 1.0)).all():
            raise ValueError(f"stance: expected a mask of 0 and 1, got {stance}")
        a, f = self.kkt(x, u, stance)
        if B.is_symbolic(a):
            return a, f
        return np.asarray(a).ravel(), np.asarray(f).ravel()

    def dynamics_residual(self, x: Any, w: Any) -> Any:
        """``RNEA(q, v, a, f) - B u`` (nv,) for the ``"inverse"`` formulation."""
        if not self.formulation.acceleration_is_control:
            raise ValueError("dynamics_residual: only the 'inverse' formulation has an acceleration in the control")
        x, w = B.vector(x, self.state_dim, "x"), B.vector(w, self.control_dim, "w")
        u, f, a = self.split_control(w)
        return self.robot.inverse_dynamics(x, a, forces=f) - self.robot.B_func() @ u

    # ------------------------------------------------------------- error maps
    def state_error(self, x: Any, x0: Any) -> Any:
        return self.robot.state_error(x, x0)

    def apply_dx(self, x0: Any, dx: Any) -> Any:
        return self.robot.apply_dx(x0, dx)

    def error_jacobian(self, x: Any) -> Any:
        return self.robot.error_jacobian(x)

    def error_jacobian_T(self, x: Any) -> Any:
        return self.robot.error_jacobian_T(x)
