"""Floating-base (kinodynamic) model of a legged robot: OCS2's flow map on ZYX Euler angles.

:class:`FloatingBaseModel` re-expresses a floating-base :class:`MultibodyModel`
(Go1, Go2, the G1 humanoid, ...) with contact forces and joint velocities as
inputs, as in OCS2's floating-base model (``xdot = f(t, x, u)``).

State ``x`` (12 + nj), named slices of this module::

    v_B  BASE_LINEAR_VELOCITY   linear velocity of the base origin, BASE axes
    w_B  BASE_ANGULAR_VELOCITY  angular velocity of the base, BASE axes
    r    BASE_POSITION          position of the base origin, WORLD frame
    e    BASE_EULER             ZYX Euler angles (yaw, pitch, roll): R(e) = Rz Ry Rx, base to world
    q_j  JOINT_POSITIONS        actuated joint positions (the robot's nominal order)

Input ``u`` (3 n + 6 m + nj): the forces ``f_i`` (3) of the ``n`` point
contacts, then the wrenches ``F_i = [f_i; tau_i]`` (6) of the ``m`` surface
contacts, then the joint velocities ``qdot_j`` (nj). Forces and moments are in
WORLD axes, the moment about the contact frame's origin (pinocchio's
LOCAL_WORLD_ALIGNED), like every contact force of the project; a point force acts at the
frame origin.

Flow map (a true time derivative of ``x``)::

    d/dt v_B = a_B[:3]          d/dt r   = R(e) v_B
    d/dt w_B = a_B[3:]          d/dt e   = E(e) w_B        (lie.euler_zyx_rate_matrix)
                                d/dt q_j = qdot_j

    a_B = M_bb(q)^-1 (sum_i J_b,i(q)^T F_i - h_b(q, v))                  (6,)

with ``q = [r; quat(e); q_j]`` and ``v = [v_B; w_B; qdot_j]`` the multibody
configuration and velocity (:meth:`FloatingBaseModel.to_multibody`),
``M_bb = M[:6, :6]`` the locked (composite) spatial inertia of the whole robot
about the base origin in base axes, ``h_b = nle[:6]`` the base rows of the bias
(Coriolis, centrifugal, gravity; the joint velocities included) and ``J_b,i``
the base columns of contact ``i``'s LOCAL_WORLD_ALIGNED frame Jacobian (3 rows
for a point, 6 for a surface). ``a_B`` is pinocchio's ``vdot[:6]`` for zero
joint accelerations: the joint torques that hold them at zero are
:meth:`FloatingBaseModel.implied_joint_torques`. The joint accelerations are not
modelled (the joint velocities are inputs), so the dynamic coupling
``M_bj qddot_j`` of a moving leg on the base is neglected.

Two formulations of the same dynamics (as :class:`models.contact_dynamics.ContactDynamics`):

- ``"forward"`` (the flow map above): ``u = [F; qdot_j]``.
- ``"inverse"``: ``u = [F; qdot_j; a_B]``, the base acceleration a decision
  variable, ``d/dt [v_B; w_B] = a_B``, and the base equation of motion the
  path equality :meth:`FloatingBaseModel.dynamics_residual`
  ``= M_bb a_B + h_b - sum_i J_b,i^T F_i = 0`` that an OCP imposes at every
  knot. No ``M_bb^-1``: its second derivatives are much shorter SX graphs
  than the forward flow map's, so with IPOPT's exact Hessian the gaits solve
  faster than with ``"forward"`` (docs/design/legged.md).

Spatial and classical quantities. The free-flyer velocity ``[v_B; w_B]`` is
the base twist in base axes; its linear part is at once the classical velocity
of the base origin (``R^T rdot``) and the linear part of the spatial velocity,
so velocities carry over between the two models unchanged. Accelerations do
not: ``a_B = d/dt [v_B; w_B]`` is the SPATIAL acceleration (Featherstone's, and
pinocchio's ``ddq[:6]``), whereas the CLASSICAL acceleration of the base origin
is ``R^T r'' = a_B[:3] + w_B x v_B`` (:meth:`FloatingBaseModel.classical_base_acceleration`).
OCS2's floating-base README writes ``d/dt v_B = aba_Bv + w x v``: with ``aba_B``
the spatial acceleration that right-hand side is the classical acceleration,
not the derivative of ``v_B``, and integrating it next to ``d/dt r = R v_B``
drifts (tests/test_floating_base.py shows it). Here ``d/dt v_B = a_B[:3]``
(``convention="spatial"``, the default). ``convention="ocs2"`` adds the term
exactly as that README writes it, ``d/dt v_B = a_B[:3] + w_B x v_B`` (in both
formulations, every other row unchanged), to compare numbers with OCS2: the
two flow maps differ by ``[w_B x v_B; 0]`` and, in a free flight of the Go1
(``v_B = (1, 0, 0.5)`` m/s, ``w_B = (0.3, -0.2, 2)`` rad/s, 0.5 s), the
``"ocs2"`` centre of mass ends 0.28 m (and 1.19 m/s) off its ballistic path,
the default's within 1e-12 m (tests/test_seed_ocs2.py).

Gimbal lock. ``E(e)`` contains ``1 / cos(pitch)``: the chart is singular at
``pitch = +-pi/2``. Numeric calls (:meth:`dynamics`, :meth:`dynamics_jacobian`,
:meth:`base_acceleration`, ..., and :meth:`from_multibody`) raise
``ValueError`` when ``|cos(pitch)| < SINGULAR_COS`` and issue a
:class:`GimbalLockWarning` when the pitch is within :data:`GIMBAL_LOCK_MARGIN`
of ``+-pi/2``; symbolic calls are not checked. Optimal-control
problems bound the pitch by :data:`MAX_PITCH`. Use the quaternion state of the
multibody model for motions that pitch further.

Numeric arguments give numpy results through ``casadi.Function`` objects built
once and cached on the model; SX/MX arguments give expressions.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

import casadi as ca
import numpy as np

from lie import _backend as B
from lie import euler_zyx_rate_matrix, euler_zyx_to_quat, euler_zyx_to_rot, quat_to_euler_zyx

from .casadi_names import casadi_name
from .formulation import Formulation
from .model import Model
from .multibody.ltl import dof_parents, ltl_factor, ltl_solve
from .multibody_model import BASE_NQ, BASE_NV, BASE_POS, BASE_QUAT, MultibodyModel

#: Slices of the floating-base state ``x``.
BASE_LINEAR_VELOCITY, BASE_ANGULAR_VELOCITY = slice(0, 3), slice(3, 6)
BASE_POSITION, BASE_EULER = slice(6, 9), slice(9, 12)
BASE_DIM = 12
JOINT_POSITIONS = slice(BASE_DIM, None)
#: Index of the pitch angle in ``x``.
PITCH = BASE_EULER.start + 1
#: Numeric states pitched closer than this to +-pi/2 give a :class:`GimbalLockWarning`.
GIMBAL_LOCK_MARGIN = np.radians(10.0)
#: Largest pitch (rad) an optimal-control problem allows (a state bound).
MAX_PITCH = np.pi / 2 - GIMBAL_LOCK_MARGIN
#: ``|cos(pitch)|`` below which numeric calls raise (``E(e)`` has entries above 1e9).
SINGULAR_COS = 1e-9
#: Widths of a point contact's force and a surface contact's wrench in ``u``.
POINT_WIDTH, SURFACE_WIDTH = 3, 6
FORMULATIONS = ("forward", "inverse")
#: ``d/dt v_B`` as the derivative of the base velocity (``"spatial"``) or with OCS2's added ``w_B x v_B`` (``"ocs2"``).
CONVENTIONS = ("spatial", "ocs2")


class GimbalLockWarning(UserWarning):
    """A ZYX Euler state close to ``pitch = +-pi/2``, where ``E(e)`` blows up."""


def check_pitch(pitch: float, name: str = "x") -> None:
    """Raise ``ValueError`` when ``|cos(pitch)| < SINGULAR_COS`` (gimbal lock of the ZYX Euler angles),
    warn with :class:`GimbalLockWarning` when ``pitch`` (rad) is within :data:`GIMBAL_LOCK_MARGIN` of ``+-pi/2``."""
    c = abs(np.cos(pitch))
    if c < SINGULAR_COS:
        raise ValueError(
            f"{name}: pitch = {pitch:.9g} rad is at +-pi/2 (gimbal lock), where the ZYX Euler rate matrix E(e) is "
            "singular; use the multibody model's quaternion state for such attitudes"
        )
    if c < np.sin(GIMBAL_LOCK_MARGIN):
        warnings.warn(
            f"{name}: pitch = {np.degrees(pitch):.3f} deg is within {np.degrees(GIMBAL_LOCK_MARGIN):g} deg of +-90 deg, "
            f"where the ZYX Euler rates (1/cos(pitch) = {1 / c:.3g}) blow up",
            GimbalLockWarning,
            stacklevel=3,
        )


class FloatingBaseModel(Model):
    """OCS2-style floating-base flow map of a multibody robot.

    The state is ``x = [v_B; w_B; r; e; q_j]`` (12 + nj): the base's linear and angular velocity
    (m/s, rad/s, base axes), its position (m, world frame), its ZYX Euler angles ``e = (yaw, pitch,
    roll)`` (rad) and the actuated joint positions. The input ``u`` stacks the 3D forces of the point
    contacts and the 6D wrenches of the surface contacts (N, N m; world axes), the joint velocities
    and, for the ``"inverse"`` formulation, the base acceleration ``a_B`` (6). The flow map and its
    assumptions are stated in :mod:`models.floating_base`.

    Attributes: ``robot``, ``formulation``, ``nj`` (actuated joints),
    ``contacts`` (points, then surfaces), ``contact_slices`` (the input entries
    of each contact), ``force_slice`` (all contact entries),
    ``joint_velocity_slice``, ``base_acceleration_slice`` (empty for ``"forward"``).

    Parameters
    ----------
    robot:
        A floating-base :class:`MultibodyModel` (e.g. :class:`models.Go1`,
        :class:`models.Humanoid`); its kinematics bodies play no role here.
    point_contacts:
        Frame names of the point contacts (3D forces at the frame origins).
    surface_contacts:
        Frame names of the surface contacts (6D wrenches about the frame origins).
    formulation:
        ``"forward"`` (the flow map, ``a_B`` solved from the base's equation of
        motion) or ``"inverse"`` (``a_B`` in the input, and the base's equation of
        motion a path equality, :meth:`dynamics_residual`).
    convention:
        ``"spatial"`` (default): ``d/dt v_B = a_B[:3]``, the physically
        consistent derivative of the base velocity. ``"ocs2"``: ``d/dt v_B =
        a_B[:3] + w_B x v_B`` exactly as OCS2's floating-base model writes it,
        to compare with OCS2's numbers; that right-hand side is the classical
        acceleration, so integrated beside ``d/dt r = R v_B`` it drifts (0.28 m
        in a 0.5 s free flight of the Go1).
    name:
        Prefix of the generated functions' names (default
        ``<robot.name>_floating_base_<formulation>``, ``_ocs2`` appended for that convention).
    """

    def __init__(
        self,
        robot: MultibodyModel,
        point_contacts: Sequence[str] = (),
        surface_contacts: Sequence[str] = (),
        formulation: "str | Formulation" = "forward",
        name: Optional[str] = None,
        convention: str = "spatial",
    ) -> None:
        super().__init__()
        if not isinstance(robot, MultibodyModel) or not robot.is_floating:
            raise ValueError(f"robot: expected a floating-base MultibodyModel, got {type(robot).__name__}")
        formulation = Formulation.parse(formulation, FORMULATIONS)
        if convention not in CONVENTIONS:
            raise ValueError(f"convention: expected one of {CONVENTIONS}, got {convention!r}")
        self.robot, self.formulation, self.convention = robot, formulation, convention
        self.name = name or f"{robot.name}_floating_base_{formulation}" + ("_ocs2" if convention == "ocs2" else "")
        self.nj = robot.nv - BASE_NV
        self.point_contacts = _contact_frames(robot, point_contacts, "point_contacts")
        self.surface_contacts = _contact_frames(robot, surface_contacts, "surface_contacts")
        self.contacts = self.point_contacts + self.surface_contacts
        if len(set(self.contacts)) != len(self.contacts):
            raise ValueError(f"point_contacts, surface_contacts: a frame is listed twice in {list(self.contacts)}")
        widths = [POINT_WIDTH] * len(self.point_contacts) + [SURFACE_WIDTH] * len(self.surface_contacts)
        ends = np.cumsum([0] + widths).tolist()
        self.contact_slices = tuple(slice(a, b) for a, b in zip(ends[:-1], ends[1:]))
        self.force_slice = slice(0, ends[-1])
        self.joint_velocity_slice = slice(self.force_slice.stop, self.force_slice.stop + self.nj)
        end = self.joint_velocity_slice.stop
        self.base_acceleration_slice = slice(end, end + (BASE_NV if formulation.acceleration_is_control else 0))
        self._base_parents = dof_parents(robot.pin_model)[:BASE_NV]  # a chain: LTL is a dense LDL^T

    # ------------------------------------------------------------------ sizes
    @property
    def state_dim(self) -> int:
        return BASE_DIM + self.nj

    @property
    def control_dim(self) -> int:
        return self.base_acceleration_slice.stop

    def control_bounds(self) -> Tuple[np.ndarray, np.ndarray]:
        """Joint velocities within the robot's ``velocity_limits``; forces and ``a_B`` unbounded."""
        hi = np.full(self.control_dim, np.inf)
        hi[self.joint_velocity_slice] = self.robot.velocity_limits
        return -hi, hi

    # ------------------------------------------------------------ conversions
    def to_multibody(self, x: Any, u: Any = None) -> Any:
        """Multibody state ``[r; quat(e); q_j; v_B; w_B; qdot_j]`` (robot.nx,) of ``x``.

        The joint velocities come from the input ``u`` (zero when ``u`` is
        None). ``quat(e) = qz(yaw) qy(pitch) qx(roll)`` (sign not normalized).
        The base velocities are the same numbers in both models: the free-flyer
        velocity is the base twist in base axes in both.
        """
        x = B.vector(x, self.state_dim, "x")
        qdot_j = B.zeros((self.nj, 1), like=x) if u is None else B.vector(u, self.control_dim, "u")[self.joint_velocity_slice]
        return B.vcat([x[BASE_POSITION], euler_zyx_to_quat(x[BASE_EULER]), x[JOINT_POSITIONS], x[BASE_LINEAR_VELOCITY], x[BASE_ANGULAR_VELOCITY], qdot_j])

    def from_multibody(self, x_mb: Any) -> Tuple[Any, Any]:
        """``(x, qdot_j)``: the floating-base state (12 + nj,) and joint velocities (nj,) of a multibody state.

        Euler angles from :func:`lie.quat_to_euler_zyx` (yaw, roll in
        ``(-pi, pi]``, pitch in ``[-pi/2, pi/2]``); a numeric state must hold a
        unit quaternion and is checked for gimbal lock (``ValueError`` at
        ``pitch = +-pi/2``, a :class:`GimbalLockWarning` near it).
        """
        robot = self.robot
        x_mb = B.vector(x_mb, robot.nx, "x_mb")
        q, v = x_mb[: robot.nq], x_mb[robot.nq :]
        e = quat_to_euler_zyx(q[BASE_QUAT])
        if not B.is_symbolic(e):
            check_pitch(float(e[1]), "x_mb")
        x = B.vcat([v[:3], v[3:BASE_NV], q[BASE_POS], e, q[BASE_NQ:]])
        return x, v[BASE_NV:]

    # --------------------------------------------------------------- dynamics
    def continuous_dynamics(self, x: Any, u: Any, t: Any) -> Any:
        """The flow map ``xdot`` (12 + nj): ``[d/dt v_B; d/dt w_B; R(e) v_B; E(e) w_B; qdot_j]`` (``t`` unused).

        ``d/dt [v_B; w_B]`` is :meth:`base_acceleration` (``"forward"``) or the
        input's ``a_B`` (``"inverse"``), plus ``[w_B x v_B; 0]`` with
        ``convention="ocs2"``.
        """
        return self.casadi_function("dynamics")(x, u, t)

    def dynamics_residual(self, x: Any, u: Any) -> Any:
        """``M_bb a_B + h_b - sum_i J_b,i^T F_i`` (6,), BASE axes, for the input's ``a_B`` (``"inverse"`` only).

        Zero exactly when ``a_B`` is :meth:`base_acceleration`; computed as the
        base rows of ``rnea(q, v, [a_B; 0]) - sum_i J_i^T F_i`` (no inverse).
        """
        if not self.formulation.acceleration_is_control:
            raise ValueError("dynamics_residual: only the 'inverse' formulation has the base acceleration in the input")
        return self._call("dynamics_residual", *self._check_xu(x, u))

    def base_acceleration(self, x: Any, u: Any) -> Any:
        """Spatial base acceleration ``a_B = d/dt [v_B; w_B]`` (6,), BASE axes, of the input's forces.

        ``a_B = M_bb(q)^-1 (sum_i J_b,i^T F_i - h_b(q, v))``: the locked (composite)
        inertia of the whole robot at the base, the base rows of the bias and of the
        contact Jacobians, for zero joint accelerations; in both formulations
        (an ``"inverse"`` input's own ``a_B`` entries are not read).
        """
        return self._call("base_acceleration", *self._check_xu(x, u))

    def classical_base_acceleration(self, x: Any, u: Any) -> Any:
        """``[R^T r''; d/dt w_B]`` (6,): the classical acceleration of the base origin, ``a_B + [w_B x v_B; 0]``."""
        return self._call("classical_base_acceleration", *self._check_xu(x, u))

    def implied_joint_torques(self, x: Any, u: Any) -> Any:
        """Joint torques (nj,) ``rnea(q, v, [a_B; 0], F)[6:]`` that keep the joint accelerations at zero."""
        return self._call("implied_joint_torques", *self._check_xu(x, u))

    # ------------------------------------------------------- function cache
    def _builders(self) -> Dict[str, Callable[[], ca.Function]]:
        return {
            **super()._builders(),
            "dynamics": lambda: self._make("dynamics", self._flow_map, time=True),
            "dynamics_residual": lambda: self._make("dynamics_residual", self._dynamics_residual),
            "base_acceleration": lambda: self._make("base_acceleration", self._base_acceleration),
            "classical_base_acceleration": lambda: self._make("classical_base_acceleration", self._classical_base_acceleration),
            "implied_joint_torques": lambda: self._make("implied_joint_torques", self._implied_joint_torques),
        }

    def _make(self, key: str, output: Callable[[ca.SX, ca.SX], ca.SX], time: bool = False) -> ca.Function:
        """SX Function ``<name>_<key>(x, u[, t])`` of one output, common subexpressions merged."""
        x, u, t = self.symbols()
        inputs, names = ([x, u, t], ["x", "u", "t"]) if time else ([x, u], ["x", "u"])
        return ca.Function(casadi_name(f"{self.name}_{key}"), inputs, [output(x, u)], names, ["o0"], {"cse": True})

    # ------------------------------------------------- symbolic building blocks
    def _multibody_qv(self, x: ca.SX, u: ca.SX) -> Tuple[ca.SX, ca.SX]:
        mb = self.to_multibody(x, u)
        return mb[: self.robot.nq], mb[self.robot.nq :]

    def _generalized_contact_force(self, q: ca.SX, u: ca.SX) -> ca.SX:
        """``sum_i J_i(q)^T F_i`` (nv x 1) with ``J_i`` contact ``i``'s LOCAL_WORLD_ALIGNED Jacobian rows."""
        total = ca.SX.zeros(self.robot.nv, 1)
        for frame, s in zip(self.contacts, self.contact_slices):
            J = self.robot.tree.frame_jacobian(q, frame, "LOCAL_WORLD_ALIGNED")[: s.stop - s.start, :]
            total += ca.mtimes(J.T, u[s])
        return total

    def _base_acceleration(self, x: ca.SX, u: ca.SX) -> ca.SX:
        """``M_bb^-1 (J_b^T F - h_b)`` through the dense LDL^T of the 6x6 locked inertia."""
        q, v = self._multibody_qv(x, u)
        tree = self.robot.tree
        rhs = self._generalized_contact_force(q, u)[:BASE_NV] - tree.nle(q, v)[:BASE_NV]
        return ltl_solve(ltl_factor(tree.crba(q)[:BASE_NV, :BASE_NV], self._base_parents), rhs)

    def _flow_map(self, x: ca.SX, u: ca.SX) -> ca.SX:
        e = x[BASE_EULER]
        rdot = ca.mtimes(euler_zyx_to_rot(e), x[BASE_LINEAR_VELOCITY])
        edot = ca.mtimes(euler_zyx_rate_matrix(e), x[BASE_ANGULAR_VELOCITY])
        a_b = u[self.base_acceleration_slice] if self.formulation.acceleration_is_control else self._base_acceleration(x, u)
        if self.convention == "ocs2":  # OCS2's "aba_Bv + w x v" (module docstring)
            a_b = a_b + ca.vertcat(ca.cross(x[BASE_ANGULAR_VELOCITY], x[BASE_LINEAR_VELOCITY]), ca.SX.zeros(3, 1))
        return ca.vertcat(a_b, rdot, edot, u[self.joint_velocity_slice])

    def _unbalanced_force(self, x: ca.SX, u: ca.SX, a_b: ca.SX) -> ca.SX:
        """``rnea(q, v, [a_b; 0]) - sum_i J_i^T F_i`` (nv x 1): the generalized force still needed."""
        q, v = self._multibody_qv(x, u)
        a = ca.vertcat(a_b, ca.SX.zeros(self.nj, 1))
        return self.robot.tree.rnea(q, v, a) - self._generalized_contact_force(q, u)

    def _dynamics_residual(self, x: ca.SX, u: ca.SX) -> ca.SX:
        return self._unbalanced_force(x, u, u[self.base_acceleration_slice])[:BASE_NV]

    def _classical_base_acceleration(self, x: ca.SX, u: ca.SX) -> ca.SX:
        coriolis = ca.cross(x[BASE_ANGULAR_VELOCITY], x[BASE_LINEAR_VELOCITY])
        return self._base_acceleration(x, u) + ca.vertcat(coriolis, ca.SX.zeros(3, 1))

    def _implied_joint_torques(self, x: ca.SX, u: ca.SX) -> ca.SX:
        return self._unbalanced_force(x, u, self._base_acceleration(x, u))[BASE_NV:]

    # ------------------------------------------------------------ validation
    def _check_xu(self, x: Any, u: Any) -> Tuple[Any, Any]:
        """Validated ``(x, u)``; a numeric ``x`` is checked for gimbal lock."""
        x, u = super()._check_xu(x, u)
        if not B.is_symbolic(x):
            check_pitch(float(x[PITCH]))
        return x, u


def _contact_frames(robot: MultibodyModel, frames: Sequence[str], arg: str) -> Tuple[str, ...]:
    """Validated contact frame names of ``robot``."""
    if isinstance(frames, str) or not all(isinstance(f, str) for f in frames):
        raise ValueError(f"{arg}: expected a sequence of frame names, got {frames!r}")
    missing = [f for f in frames if not robot.pin_model.existFrame(f)]
    if missing:
        raise ValueError(f"{arg}: {missing} are not frames of the model {robot.pin_model.name!r}")
    return tuple(frames)
