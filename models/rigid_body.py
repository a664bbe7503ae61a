"""Single rigid bodies in RobotDynamics.jl style: state ``[r; p; v; w]``.

``r`` is the position (world frame), ``p`` the attitude in the chosen
parameterization (:class:`lie.UnitQuaternion` (4), :class:`lie.MRP` or
:class:`lie.RodriguesParam` (3)), ``v`` the linear velocity (world frame by
default, body frame when ``velocity_frame="body"``) and ``w`` the angular
velocity in the body frame. A subclass defines :attr:`mass`, :attr:`inertia`
(body frame, 3x3) and either :meth:`forces` (world frame) and :meth:`moments`
(body frame) or :meth:`wrenches` returning both.

Equations of motion, with ``R = Rot(p)`` (body to world), ``F`` world force and
``tau`` body moment::

    rdot = v                       (world velocity)   or  R v
    pdot = K(p) w                  (K: the parameterization's kinematics matrix)
    vdot = F / m                   (world velocity)   or  R^T F / m - w x v
    wdot = J^-1 (tau - w x J w)
"""
from __future__ import annotations

from typing import Any, Dict, Tuple

import numpy as np

from lie import MRP, LieState, RodriguesParam, UnitQuaternion
from lie import _backend as B
from lie import check_unit_quaternion, rot_to_quat

from .lie_group_model import LieGroupModel

#: Attitude parameterizations a rigid body can use.
SUPPORTED_ROTATIONS = (UnitQuaternion, MRP, RodriguesParam)
_ROTATION_NAMES = {"quaternion": UnitQuaternion, "unitquaternion": UnitQuaternion, "mrp": MRP, "rodrigues": RodriguesParam, "rodriguesparam": RodriguesParam, "gibbs": RodriguesParam}


def resolve_rotation(rotation: Any) -> type:
    """Map a parameterization class or name ("quaternion", "mrp", "rodrigues") to its class."""
    if isinstance(rotation, str) and rotation.lower() in _ROTATION_NAMES:
        return _ROTATION_NAMES[rotation.lower()]
    if rotation in SUPPORTED_ROTATIONS:
        return rotation
    raise ValueError(
        f"rotation: unsupported attitude parameterization {rotation!r}; "
        f"expected one of UnitQuaternion, MRP, RodriguesParam (or {sorted(_ROTATION_NAMES)})"
    )


class RigidBody(LieGroupModel):
    """Base class of single-rigid-body models (see module docstring)."""

    name = "rigid_body"

    def __init__(self, rotation: Any = UnitQuaternion, velocity_frame: str = "world") -> None:
        super().__init__()
        self.rotation = resolve_rotation(rotation)
        if velocity_frame not in ("world", "body"):
            raise ValueError(f"velocity_frame: expected 'world' or 'body', got {velocity_frame!r}")
        self.velocity_frame = velocity_frame
        self._lie_state = LieState(self.rotation, (3, 6))

    # ------------------------------------------------------ physical parameters
    def set_mass_properties(self, mass: float, inertia: Any) -> None:
        """Set the mass (kg, > 0) and the body-frame inertia about the center of mass,
        given as its diagonal (3,) or the full matrix (3, 3), symmetric positive definite."""
        J = B.check_finite(B.numeric_array(inertia, "inertia"), "inertia")
        J = np.diag(J) if J.shape == (3,) else J
        if J.shape != (3, 3):
            raise ValueError(f"inertia: expected shape (3,) or (3, 3), got {np.shape(inertia)}")
        if not np.allclose(J, J.T, rtol=0, atol=1e-12 * np.abs(J).max()) or np.linalg.eigvalsh(J).min() <= 0:
            raise ValueError(f"inertia: expected a symmetric positive definite matrix, got {J.tolist()}")
        self._mass, self._inertia = B.real(mass, "mass", lower=0.0, strict=True), J

    @property
    def mass(self) -> float:
        """Total mass (kg)."""
        return self._mass

    @property
    def inertia(self) -> np.ndarray:
        """Inertia about the center of mass, body frame (3x3)."""
        return self._inertia

    def forces(self, x: Any, u: Any, t: Any) -> Any:
        """Total force on the body, WORLD frame (3,). Default: zero."""
        return B.zeros((3, 1), like=x)

    def moments(self, x: Any, u: Any, t: Any) -> Any:
        """Total moment about the center of mass, BODY frame (3,). Default: zero."""
        return B.zeros((3, 1), like=x)

    def wrenches(self, x: Any, u: Any, t: Any) -> Tuple[Any, Any]:
        """``(F_world, tau_body)``; override instead of forces/moments when both share work."""
        return self.forces(x, u, t), self.moments(x, u, t)

    # ------------------------------------------------------------ model API
    def lie_state(self) -> LieState:
        return self._lie_state

    def continuous_dynamics(self, x: Any, u: Any, t: Any) -> Any:
        r, p, v, w = self._split(x)
        R = self.rotation.to_rot(p)
        F, tau = self.wrenches(x, u, t)
        J = np.asarray(self.inertia, dtype=float)
        pdot = self.rotation.kinematics_matrix(p) @ w
        wdot = np.linalg.inv(J) @ (tau - B.cross(w, J @ w))
        if self.velocity_frame == "world":
            rdot, vdot = v, F / self.mass
        else:
            rdot, vdot = R @ v, R.T @ F / self.mass - B.cross(w, v)
        return B.vcat([rdot, pdot, vdot, wdot])

    def dynamics(self, x: Any, u: Any, t: Any = 0.0) -> Any:
        if not B.is_symbolic(x, u, t) and self.rotation is UnitQuaternion:
            check_unit_quaternion(B.vector(x, self.state_dim, "x")[self.gen_inds()["q"]], "x[3:7] (quaternion)")
        return super().dynamics(x, u, t)

    # --------------------------------------------------------------- helpers
    def gen_inds(self) -> Dict[str, slice]:
        """Index ranges of the state parts: ``{"r", "q", "v", "w"}`` (slices)."""
        nq = self.rotation.size
        return {"r": slice(0, 3), "q": slice(3, 3 + nq), "v": slice(3 + nq, 6 + nq), "w": slice(6 + nq, 9 + nq)}

    def _split(self, x: Any) -> Tuple[Any, Any, Any, Any]:
        i = self.gen_inds()
        return x[i["r"]], x[i["q"]], x[i["v"]], x[i["w"]]

    def position(self, x: Any) -> Any:
        """Position ``r`` of the center of mass, world frame (3,)."""
        return self._split(B.vector(x, self.state_dim, "x"))[0]

    def orientation(self, x: Any) -> Any:
        """Attitude in the model's own parameterization (4 or 3,)."""
        return self._split(B.vector(x, self.state_dim, "x"))[1]

    def linear_velocity(self, x: Any) -> Any:
        """Linear velocity (3,), in the model's ``velocity_frame``."""
        return self._split(B.vector(x, self.state_dim, "x"))[2]

    def angular_velocity(self, x: Any) -> Any:
        """Angular velocity, body frame (3,)."""
        return self._split(B.vector(x, self.state_dim, "x"))[3]

    def build_state(self, r: Any, attitude: Any, v: Any, w: Any) -> np.ndarray:
        """State vector from parts; ``attitude`` is a unit quaternion (4), a rotation
        matrix (3x3), or the model's own 3-parameter attitude (3,)."""
        att = np.asarray(attitude, dtype=float)
        if att.shape == (3, 3):
            p = self.rotation.from_quat(rot_to_quat(att))
        elif att.shape == (4,):
            check_unit_quaternion(att, "attitude")
            p = self.rotation.from_quat(att)
        elif att.shape == (3,) and self.rotation is not UnitQuaternion:
            p = att
        else:
            raise ValueError(
                f"attitude: expected a unit quaternion (4,), a rotation matrix (3, 3)"
                f"{' or ' + self.rotation.name + ' parameters (3,)' if self.rotation.size == 3 else ''}, got shape {att.shape}"
            )
        return B.vcat([B.vector(r, 3, "r"), np.asarray(p, dtype=float).reshape(-1), B.vector(v, 3, "v"), B.vector(w, 3, "w")])

    def parse_state(self, x: Any, renormalize: bool = False) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Split a numeric state into ``(r, q, v, w)`` with ``q`` a quaternion [qw..qz].

        With ``renormalize`` a quaternion attitude is scaled to unit norm first.
        """
        r, p, v, w = self._split(B.vector(x, self.state_dim, "x"))
        q = self.rotation.to_quat(p)
        if renormalize:
            q = q / np.linalg.norm(q)
        return r, q, v, w

    def rotation_matrix(self, x: Any) -> Any:
        """Body-to-world rotation matrix of the state's attitude (3x3)."""
        return self.rotation.to_rot(self.orientation(x))

    def flipquat(self, x: Any) -> Any:
        """The same state with the quaternion negated (same rotation); quaternion models only."""
        if self.rotation is not UnitQuaternion:
            raise ValueError(f"flipquat: the model uses {self.rotation.name}, not UnitQuaternion")
        x = B.vector(x, self.state_dim, "x")
        i = self.gen_inds()
        return B.vcat([x[i["r"]], -x[i["q"]], x[i["v"]], x[i["w"]]])
