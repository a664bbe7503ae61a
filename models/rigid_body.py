"""Single rigid bodies in RobotDynamics.jl style: state ``[r; p; v; w]``.

``r`` is the position (world frame), ``p`` the attitude in the chosen
parameterization (any of :data:`lie.ROTATIONS`: :class:`lie.UnitQuaternion`
(4), :class:`lie.MRP`, :class:`lie.RodriguesParam`, :class:`lie.Cayley`,
:class:`lie.EulerZYX`, :class:`lie.RotationVec` (3)), ``v`` the linear
velocity (world frame by default, body frame when ``velocity_frame="body"``)
and ``w`` the angular velocity in the body frame. A subclass defines its mass
and inertia (constants given to the constructor or :meth:`RigidBody.set_mass_properties`,
or overrides of :meth:`RigidBody.mass` and :meth:`RigidBody.inertia`, which
may depend on the state and the input) and either :meth:`RigidBody.forces`
(world frame) and :meth:`RigidBody.moments` (body frame) or
:meth:`RigidBody.wrenches` returning both.

Equations of motion, with ``R = Rot(p)`` (body to world), ``F`` world force,
``tau`` body moment, ``m = mass(x, u)`` and ``J = inertia(x, u)`` (body frame,
about the center of mass)::

    rdot = v                       (world velocity)   or  R v
    pdot = K(p) w                  (K: the parameterization's kinematics matrix)
    vdot = F / m                   (world velocity)   or  R^T F / m - w x v
    wdot = J^-1 (tau - w x J w)

A mass or inertia that varies with the state enters only through these
equations (no ``mdot v`` or ``Jdot w`` terms), as in RobotDynamics.jl.
"""
from __future__ import annotations

import inspect
from abc import abstractmethod
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np

from lie import ROTATIONS, EulerZYX, LieState, RBState, RodriguesParam, RotationParam, RotationVec, UnitQuaternion
from lie import _backend as B
from lie import check_unit_quaternion, rot_to_quat

from .lie_group_model import LieGroupModel

#: Attitude parameterizations a rigid body can use: every 3D rotation parameterization of :mod:`lie`.
SUPPORTED_ROTATIONS = ROTATIONS
_ROTATION_NAMES = {
    **{R.name.lower(): R for R in ROTATIONS},
    "quaternion": UnitQuaternion,
    "rodrigues": RodriguesParam,
    "gibbs": RodriguesParam,
    "euler_zyx": EulerZYX,
    "zyx": EulerZYX,
    "rotzyx": EulerZYX,
    "rotation_vector": RotationVec,
    "axis_angle": RotationVec,
}


def resolve_rotation(rotation: Any) -> type:
    """Map a parameterization class or name (``"quaternion"``, ``"mrp"``, ``"rodrigues"``,
    ``"cayley"``, ``"euler_zyx"``, ``"rotationvec"``, ...) to its class."""
    if isinstance(rotation, str) and rotation.lower() in _ROTATION_NAMES:
        return _ROTATION_NAMES[rotation.lower()]
    if rotation in SUPPORTED_ROTATIONS:
        return rotation
    raise ValueError(
        f"rotation: unsupported attitude parameterization {rotation!r}; "
        f"expected one of {', '.join(R.name for R in SUPPORTED_ROTATIONS)} (or {sorted(_ROTATION_NAMES)})"
    )


def _call_with_time(method: Callable[..., Any], x: Any, u: Any, t: Any) -> Any:
    """``method(x, u, t)``, or ``method(x, u)`` for an override written without the time
    (RobotDynamics.jl's ``forces(model, x, u, [t])``)."""
    try:
        inspect.signature(method).bind(x, u, t)
    except TypeError:
        return method(x, u)
    return method(x, u, t)


class RigidBody(LieGroupModel):
    """Base class of single-rigid-body models with state ``[r; p; v; w]``.

    ``r`` position (m, world frame), ``p`` attitude (body to world) in the
    parameterization ``rotation``, ``v`` linear velocity (m/s, world frame, or
    body frame with ``velocity_frame="body"``), ``w`` angular velocity
    (rad/s, body frame). A subclass sets its control size (``control_dim``)
    and the force (N, world frame) and moment (N m, body frame, about the
    centre of mass) of the controls: :meth:`forces` and :meth:`moments`, or
    :meth:`wrenches`; the equations of motion are in :mod:`models.rigid_body`.

    ``rotation`` is a parameterization class of :mod:`lie` or its name
    (``"quaternion"``, ``"mrp"``, ``"rodrigues"``, ``"cayley"``,
    ``"euler_zyx"``, ``"rotationvec"``); ``mass`` (kg) and ``inertia`` (body
    frame, about the centre of mass, kg m^2, (3,) diagonal or (3, 3)) may be
    given here or later with :meth:`set_mass_properties`.
    """

    name = "rigid_body"

    def __init__(self, rotation: Any = UnitQuaternion, velocity_frame: str = "world", mass: Optional[float] = None, inertia: Any = None) -> None:
        super().__init__()
        self.rotation = resolve_rotation(rotation)
        if velocity_frame not in ("world", "body"):
            raise ValueError(f"velocity_frame: expected 'world' or 'body', got {velocity_frame!r}")
        self.velocity_frame = velocity_frame
        self._lie_state = LieState(self.rotation, (3, 6))
        if (mass is None) != (inertia is None):
            raise ValueError(f"mass, inertia: give both or neither, got mass={mass!r}, inertia={inertia!r}")
        if mass is not None:
            self.set_mass_properties(mass, inertia)

    # ------------------------------------------------------ physical parameters
    def set_mass_properties(self, mass: float, inertia: Any) -> None:
        """Set the mass (kg, > 0) and the body-frame inertia about the center of mass,
        given as its diagonal (3,) or the full matrix (3, 3), symmetric positive definite:
        the constants :meth:`mass` and :meth:`inertia` return."""
        J = B.check_finite(B.numeric_array(inertia, "inertia"), "inertia")
        J = np.diag(J) if J.shape == (3,) else J
        if J.shape != (3, 3):
            raise ValueError(f"inertia: expected shape (3,) or (3, 3), got {np.shape(inertia)}")
        if not np.allclose(J, J.T, rtol=0, atol=1e-12 * np.abs(J).max()) or np.linalg.eigvalsh(J).min() <= 0:
            raise ValueError(f"inertia: expected a symmetric positive definite matrix, got {J.tolist()}")
        self._mass, self._inertia = B.real(mass, "mass", lower=0.0, strict=True), J

    def _constant(self, attribute: str, what: str) -> Any:
        if not hasattr(self, attribute):
            raise ValueError(f"{what}: {type(self).__name__} has no {what} set; pass mass= and inertia= to the constructor, call set_mass_properties, or override {what}(x, u)")
        return getattr(self, attribute)

    def mass(self, x: Any = None, u: Any = None) -> Any:
        """Total mass (kg) at state ``x`` and input ``u`` (RobotDynamics.jl's ``mass(model, x, u)``).

        The base method returns the constant given at construction (or to
        :meth:`set_mass_properties`) whatever ``x`` and ``u`` are, which may
        then be omitted; a subclass may override it with an expression of
        ``x`` and ``u`` (numpy or CasADi), which the dynamics then use.
        """
        return self._constant("_mass", "mass")

    def inertia(self, x: Any = None, u: Any = None) -> Any:
        """Inertia about the center of mass, body frame (3x3), at ``x`` and ``u`` (``inertia(model, x, u)``).

        As :meth:`mass`: the constant given at construction (a copy) unless a
        subclass overrides it (a symbolic 3x3 matrix is solved, not inverted).
        """
        return self._constant("_inertia", "inertia").copy()

    def forces(self, x: Any, u: Any, t: Any = 0.0) -> Any:
        """Total force on the body, WORLD frame (3,). Default: zero.

        An override may omit ``t`` (``def forces(self, x, u)``), as RobotDynamics.jl allows.
        """
        return B.zeros((3, 1), like=x)

    def moments(self, x: Any, u: Any, t: Any = 0.0) -> Any:
        """Total moment about the center of mass, BODY frame (3,). Default: zero (``t`` optional as in :meth:`forces`)."""
        return B.zeros((3, 1), like=x)

    def wrenches(self, x: Any, u: Any, t: Any = 0.0) -> Tuple[Any, Any]:
        """``(F_world, tau_body)``; override instead of forces/moments when both share work."""
        return _call_with_time(self.forces, x, u, t), _call_with_time(self.moments, x, u, t)

    # ------------------------------------------------------------ model API
    @property
    @abstractmethod
    def control_dim(self) -> int:
        """Length of the control ``u``: a subclass sets it (class attribute or property), so
        ``RigidBody`` itself stays abstract."""

    def lie_state(self) -> LieState:
        return self._lie_state

    def continuous_dynamics(self, x: Any, u: Any, t: Any) -> Any:
        r, p, v, w = self._split(x)
        R = self.rotation.to_rot(p)
        F, tau = _call_with_time(self.wrenches, x, u, t)
        m, J = self.mass(x, u), self.inertia(x, u)
        pdot = self.rotation.kinematics_matrix(p) @ w
        rhs = tau - B.cross(w, J @ w)
        wdot = B.solve(J, rhs) if B.is_symbolic(J) else np.linalg.inv(np.asarray(J, dtype=float)) @ rhs
        if self.velocity_frame == "world":
            rdot, vdot = v, F / m
        else:
            rdot, vdot = R @ v, R.T @ F / m - B.cross(w, v)
        return B.vcat([rdot, pdot, vdot, wdot])

    def dynamics(self, x: Any, u: Any, t: Any = 0.0, out: Optional[np.ndarray] = None) -> Any:
        """``xdot`` (``state_dim``,) of the equations in :mod:`models.rigid_body`; ``out`` as in :meth:`models.Model.dynamics`."""
        if not B.is_symbolic(x, u, t) and self.rotation is UnitQuaternion:
            check_unit_quaternion(B.vector(x, self.state_dim, "x")[self.gen_inds()["q"]], "x[3:7] (quaternion)")
        return super().dynamics(x, u, t, out=out)

    # --------------------------------------------------------------- helpers
    def gen_inds(self) -> Dict[str, slice]:
        """Index ranges of the state parts: ``{"r", "q", "v", "w"}`` (slices; ``"ω"`` is ``"w"`` under RobotDynamics.jl's name)."""
        nq = self.rotation.size
        w = slice(6 + nq, 9 + nq)
        return {"r": slice(0, 3), "q": slice(3, 3 + nq), "v": slice(3 + nq, 6 + nq), "w": w, "ω": w}

    def _split(self, x: Any) -> Tuple[Any, Any, Any, Any]:
        i = self.gen_inds()
        return x[i["r"]], x[i["q"]], x[i["v"]], x[i["w"]]

    def position(self, x: Any) -> Any:
        """Position ``r`` of the center of mass, world frame (3,)."""
        return self._split(B.vector(x, self.state_dim, "x"))[0]

    def orientation(self, x: Any, renorm: bool = False) -> RotationParam:
        """Attitude as a rotation of the model's own type (``self.rotation``; ``renorm`` as in :meth:`parse_state`).

        Its parameters (``rotation.size``,) are ``x[gen_inds()["q"]]``.
        """
        return self.rotation(self._split(B.vector(x, self.state_dim, "x"))[1], renorm=renorm)

    def linear_velocity(self, x: Any) -> Any:
        """Linear velocity (3,), in the model's ``velocity_frame``."""
        return self._split(B.vector(x, self.state_dim, "x"))[2]

    def angular_velocity(self, x: Any) -> Any:
        """Angular velocity, body frame (3,)."""
        return self._split(B.vector(x, self.state_dim, "x"))[3]

    def build_state(self, *args: Any) -> np.ndarray:
        """The state vector (``state_dim``,) as RobotDynamics.jl's ``build_state``, in three forms:

        - ``build_state(r, attitude, v, w)``: ``attitude`` a rotation of any
          parameterization (``MRP(p)``, ...), a unit quaternion (4), a
          rotation matrix (3x3), or the model's own 3 parameters (3,);
        - ``build_state(rbstate)``: an :class:`lie.RBState`;
        - ``build_state(x)``: ``x = [r; q; v; w]`` (13,) with a quaternion,
          read as ``RBState(x)`` (which scales the quaternion to unit norm),
          or the model's own state vector (``state_dim``,) for a 3-parameter
          attitude, returned as a checked copy.
        """
        if len(args) == 4:
            r, attitude, v, w = args
            parts = [B.vector(r, 3, "r"), self._attitude_parameters(attitude), B.vector(v, 3, "v"), B.vector(w, 3, "w")]
            return np.concatenate(parts)
        if len(args) != 1:
            raise TypeError(f"build_state: expected (r, attitude, v, w), (rbstate) or (x), got {len(args)} arguments")
        state = args[0]
        if isinstance(state, RBState):
            return np.asarray(state.to_state(self.rotation), dtype=float)
        x = B.vector(state, None, "x")
        if x.shape[0] == 13:
            return np.asarray(RBState(x).to_state(self.rotation), dtype=float)
        if x.shape[0] == self.state_dim:
            return x.copy()
        raise ValueError(f"x: expected [r; q; v; w] of shape (13,) or a state of shape ({self.state_dim},), got {x.shape}")

    def _attitude_parameters(self, attitude: Any) -> np.ndarray:
        """The model's attitude parameters (``rotation.size``,) of a rotation, quaternion, matrix or own parameters."""
        if isinstance(attitude, RotationParam):
            return np.asarray(self.rotation(attitude).params, dtype=float)
        att = B.numeric_array(attitude, "attitude")
        if att.shape == (3, 3):
            return np.asarray(self.rotation.from_quat(rot_to_quat(att)), dtype=float)
        if att.shape == (4,):
            check_unit_quaternion(att, "attitude")
            return np.asarray(self.rotation.from_quat(att), dtype=float)
        if att.shape == (3,) and self.rotation.size == 3:
            return B.check_finite(att, "attitude").copy()
        raise ValueError(
            f"attitude: expected a rotation (lie.{self.rotation.name}(...) or any lie.ROTATIONS type), a unit quaternion (4,), "
            f"a rotation matrix (3, 3){' or ' + self.rotation.name + ' parameters (3,)' if self.rotation.size == 3 else ''}, got shape {att.shape}"
        )

    def parse_state(self, x: Any, renorm: bool = False, renormalize: Optional[bool] = None) -> Tuple[Any, RotationParam, Any, Any]:
        """``(r, attitude, v, w)`` of a state; the attitude a rotation of the model's own type.

        As RobotDynamics.jl's ``parse_state(model, x, renorm=false)``: the
        attitude is ``self.rotation(p)`` (e.g. an :class:`lie.MRP` for an MRP
        model; ``.as_quat()``, ``.as_matrix()`` convert it). With ``renorm`` a
        quaternion attitude is scaled to unit norm; without it a numeric one
        must be unit to 1e-6. ``renormalize`` is the older name of ``renorm``.
        """
        r, _, v, w = self._split(B.vector(x, self.state_dim, "x"))
        return r, self.orientation(x, renorm if renormalize is None else renormalize), v, w

    def rotation_matrix(self, x: Any) -> Any:
        """Body-to-world rotation matrix of the state's attitude (3x3)."""
        return self.rotation.to_rot(self._split(B.vector(x, self.state_dim, "x"))[1])

    def flipquat(self, x: Any) -> Any:
        """The same state with the quaternion negated (same rotation); quaternion models only."""
        if self.rotation is not UnitQuaternion:
            raise ValueError(f"flipquat: the model uses {self.rotation.name}, not UnitQuaternion")
        x = B.vector(x, self.state_dim, "x")
        i = self.gen_inds()
        return B.vcat([x[i["r"]], -x[i["q"]], x[i["v"]], x[i["w"]]])
