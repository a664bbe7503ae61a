"""A wheeled biped (stand-in for PinnZoo's Pineapple), built in Python: 8 DOF on a floating base.

Geometry (meters, kilograms; :class:`BipedDimensions` holds every number).
Base frame: x forward, y left, z up; the free-flyer joint ``root_joint`` and
the frame ``base`` sit at the base's center of mass.

- Base: a 0.20 x 0.30 x 0.12 box of 6 kg.
- Two legs, ``left`` (y > 0) and ``right``, each: ``<side>_hip`` (abduction,
  revolute about +x) at ``(0, +-0.12, -0.04)``; ``<side>_thigh`` (revolute
  about +y) 0.06 further out; ``<side>_knee`` (about +y) 0.25 below the thigh
  joint; ``<side>_wheel`` (about +y) 0.25 below the knee and 0.04 further
  out. A positive thigh or knee angle swings the link below it backward
  (toward -x). Thigh 1.0 kg and shin 0.5 kg (solid cylinders of radius
  0.02 along their segment; the hip link between the hip and thigh joints is
  massless), wheel 0.5 kg, radius 0.08, width 0.03 (solid disc).
- Limits: hip ``[-0.5, 0.5]``, thigh ``[-1.2, 2.0]``, knee ``[-2.6, -0.05]``
  (the knee bends one way only, so one IK solution per leg is admissible),
  wheel unbounded; efforts 30 N m (legs) and 10 N m (wheels).
- Joint order (pinocchio's and nominal): left hip, thigh, knee, wheel, then
  the right leg; ``nq = 15``, ``nv = 14``, ``nu = 8`` (``B = [0; I8]``).

Frames: ``<side>_wheel_center`` on the shin at the axle (it does not spin;
its axes are the shin's) is the "foot" of the leg inverse kinematics.

Kinematics bodies (``kinematics="contact"``, the default): the wheels' ground
contact points on flat ground ``z = const``. With ``c`` the wheel center and
``a`` the wheel axis (world), the contact point is ``p = c - r u`` with
``u = (e_z - (e_z.a) a) / |e_z - (e_z.a) a|`` (the in-plane direction from
the contact point to the center, ``e_z`` the world vertical). Its "rotation"
(:meth:`kinematics_rotation`) is the contact frame ``[a x u, a, u]``: x the
rolling direction, y the axle, z the wheel-plane up direction. Its Jacobian
(:meth:`kinematics_velocity_matrix`) is that of the WHEEL's material point at
``p``, ``J = J_c + r [u]_x J_w`` (world-aligned linear and angular Jacobians
of the wheel), zero along a rolling-without-slipping motion, and contact
forces (world frame) act there: ``M vdot + C = B u + J^T f``. Note that
:meth:`kinematics_velocity` (``J v``, the wheel material point) differs from
the time derivative of :meth:`kinematics` (the geometric contact point moves
as the wheel rolls). ``kinematics="center"`` uses the wheel-center frames
as plain kinematics bodies instead.

Inverse kinematics takes what :meth:`WheeledBiped.kinematics` returns: by
default its targets are the contact points with ``kinematics="contact"`` and
the wheel centres with ``"center"`` (``targets=`` says otherwise). A contact
point ``p`` gives the centre ``c = p + r u``, where ``u`` depends on the axle
``a = Rot(q_base) Rx(hip) e_y`` only (the thigh, knee and wheel turn about
that axle), so the centre and the leg's hip angle are found together: the
fixed point of ``c = p + r u(a(hip(c)))`` with the analytic leg IK.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

import casadi as ca
import numpy as np
import pinocchio as pin

from lie import _backend as B
from lie import quat_to_rot, skew

from .leg_ik import leg_end_positions
from .legged import LeggedRobot
from .multibody_model import BASE_NQ, BASE_QUAT

SIDES = ("left", "right")
KINEMATICS = ("contact", "center")
#: Fixed-point iterations of the contact-point inverse kinematics, and their tolerance on the wheel centres (m).
CONTACT_IK_ITERATIONS, CONTACT_IK_TOL = 100, 1e-13
#: Pinocchio's "no limit".
UNLIMITED = np.finfo(float).max


@dataclass(frozen=True)
class BipedDimensions:
    """Dimensions (m), masses (kg) and limits (N m, rad) of :func:`wheeled_biped_model`'s base, legs and wheels."""

    base_size: Tuple[float, float, float] = (0.20, 0.30, 0.12)
    base_mass: float = 6.0
    hip_offset: Tuple[float, float, float] = (0.0, 0.12, -0.04)
    hip_to_thigh: float = 0.06
    thigh_length: float = 0.25
    shin_length: float = 0.25
    wheel_offset: float = 0.04
    thigh_mass: float = 1.0
    shin_mass: float = 0.5
    wheel_mass: float = 0.5
    link_radius: float = 0.02
    wheel_radius: float = 0.08
    wheel_width: float = 0.03
    hip_limits: Tuple[float, float] = (-0.5, 0.5)
    thigh_limits: Tuple[float, float] = (-1.2, 2.0)
    knee_limits: Tuple[float, float] = (-2.6, -0.05)
    leg_effort: float = 30.0
    wheel_effort: float = 10.0
    leg_velocity: float = 30.0
    wheel_velocity: float = 60.0

    def __post_init__(self) -> None:
        positive = ("base_mass", "hip_to_thigh", "thigh_length", "shin_length", "thigh_mass", "shin_mass", "wheel_mass", "link_radius", "wheel_radius", "wheel_width", "leg_effort", "wheel_effort", "leg_velocity", "wheel_velocity")
        for name in positive:
            B.real(getattr(self, name), name, lower=0.0, strict=True)
        B.real(self.wheel_offset, "wheel_offset")
        B.vector(self.hip_offset, 3, "hip_offset")
        if (B.vector(self.base_size, 3, "base_size") <= 0).any():
            raise ValueError(f"base_size: expected three positive lengths, got {self.base_size}")
        for name in ("hip_limits", "thigh_limits", "knee_limits"):
            lo, hi = B.vector(getattr(self, name), 2, name)
            if not lo < hi:
                raise ValueError(f"{name}: expected lower < upper, got {getattr(self, name)}")


def _link(mass: float, length: float, radius: float) -> pin.Inertia:
    """Solid cylinder along -z from the joint (center of mass at ``-length / 2``)."""
    transverse = mass * (3 * radius**2 + length**2) / 12
    return pin.Inertia(mass, np.array([0.0, 0.0, -length / 2]), np.diag([transverse, transverse, mass * radius**2 / 2]))


def wheeled_biped_model(dims: BipedDimensions = BipedDimensions()) -> pin.Model:
    """The biped's ``pinocchio.Model``: a free-flyer base box, two legs (hip, knee) and a wheel on each shin."""
    model = pin.Model()
    model.name = "wheeled_biped"
    root = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "root_joint")
    bx, by, bz = dims.base_size
    box = np.diag([by**2 + bz**2, bx**2 + bz**2, bx**2 + by**2]) * dims.base_mass / 12
    model.appendBodyToJoint(root, pin.Inertia(dims.base_mass, np.zeros(3), box), pin.SE3.Identity())
    model.addFrame(pin.Frame("base", root, model.addJointFrame(root), pin.SE3.Identity(), pin.FrameType.BODY))
    r, w, m = dims.wheel_radius, dims.wheel_width, dims.wheel_mass
    wheel = pin.Inertia(m, np.zeros(3), np.diag([m * r**2 / 4 + m * w**2 / 12, m * r**2 / 2, m * r**2 / 4 + m * w**2 / 12]))
    for side, sign in zip(SIDES, (1.0, -1.0)):
        hx, hy, hz = dims.hip_offset
        leg = [
            ("hip", pin.JointModelRX(), (hx, sign * hy, hz), dims.hip_limits, pin.Inertia.Zero()),
            ("thigh", pin.JointModelRY(), (0.0, sign * dims.hip_to_thigh, 0.0), dims.thigh_limits, _link(dims.thigh_mass, dims.thigh_length, dims.link_radius)),
            ("knee", pin.JointModelRY(), (0.0, 0.0, -dims.thigh_length), dims.knee_limits, _link(dims.shin_mass, dims.shin_length, dims.link_radius)),
            ("wheel", pin.JointModelRY(), (0.0, sign * dims.wheel_offset, -dims.shin_length), (-UNLIMITED, UNLIMITED), wheel),
        ]
        parent = root
        for name, joint, offset, (lo, hi), inertia in leg:
            effort, velocity = (dims.wheel_effort, dims.wheel_velocity) if name == "wheel" else (dims.leg_effort, dims.leg_velocity)
            limits = [np.array([val]) for val in (effort, velocity, lo, hi)]
            jid = model.addJoint(parent, joint, pin.SE3(np.eye(3), np.array(offset)), f"{side}_{name}", *limits)
            model.appendBodyToJoint(jid, inertia, pin.SE3.Identity())
            model.addJointFrame(jid)
            if name == "knee":
                axle = pin.SE3(np.eye(3), np.array([0.0, sign * dims.wheel_offset, -dims.shin_length]))
                model.addFrame(pin.Frame(f"{side}_wheel_center", jid, model.getFrameId(f"{side}_knee"), axle, pin.FrameType.OP_FRAME))
            parent = jid
    return model


class WheeledBiped(LeggedRobot):
    """The wheeled biped as a :class:`~models.MultibodyModel`: ``nq = 15``, ``nv = 14``, 8 actuated joints.

    ``mu``: friction coefficient of the wheels; ``kinematics``: ``"contact"``
    (ground contact points) or ``"center"`` (wheel centers);
    ``standing_height``: base height in :meth:`init_state`.
    """

    def __init__(self, mu: float = 0.3, kinematics: str = "contact", standing_height: float = 0.5, dims: BipedDimensions = BipedDimensions()) -> None:
        if kinematics not in KINEMATICS:
            raise ValueError(f"kinematics: expected one of {KINEMATICS}, got {kinematics!r}")
        if not isinstance(dims, BipedDimensions):
            raise TypeError(f"dims: expected a BipedDimensions, got {type(dims).__name__}")
        pin_model = wheeled_biped_model(dims)
        self.wheel_centers = tuple(f"{side}_wheel_center" for side in SIDES)
        self.wheels = tuple(f"{side}_wheel" for side in SIDES)
        bodies = self.wheels if kinematics == "contact" else self.wheel_centers
        super().__init__(pin_model, self.wheel_centers, mu=mu, standing_height=standing_height, kinematics_bodies=bodies, leg_end_height=dims.wheel_radius, name="wheeled_biped")
        self.dims = dims
        self.contact_kinematics = kinematics == "contact"

    # -------------------------------------------------- contact kinematics
    def _contact(self, q: Any, wheel: str) -> Tuple[Any, Any, Any]:
        """Contact point (3,), contact frame (3x3) and material-point Jacobian (3 x nv) of ``wheel``."""
        R, c = self.tree.frame_placement(q, wheel)
        a = R[:, 1]  # wheel axis (+y of the wheel joint frame), unchanged by the wheel's spin
        up = ca.DM([0.0, 0.0, 1.0])
        u_raw = up - a[2] * a
        u = u_raw / ca.norm_2(u_raw)
        J = self.tree.frame_jacobian(q, wheel, "LOCAL_WORLD_ALIGNED")
        point = c - self.dims.wheel_radius * u
        return point, ca.horzcat(ca.cross(a, u), a, u), J[:3, :] + self.dims.wheel_radius * skew(u) @ J[3:, :]

    # -------------------------------------------------- inverse kinematics
    def inverse_kinematics(self, x: Any, leg_end_locs: Any, targets: Optional[str] = None) -> np.ndarray:
        """Both analytic IK solutions of every leg (8 x 2) for WORLD targets, one per wheel (left, right).

        ``targets``: ``"contact"`` (the wheels' ground contact points, what
        :meth:`kinematics` returns with ``kinematics="contact"``) or
        ``"center"`` (the wheel centres, the frames :attr:`leg_ends`);
        default: what this model's :meth:`kinematics` returns, so
        ``inverse_kinematics(x, kinematics(x))`` holds ``x``'s leg joints
        among its columns. ``x``, ``leg_end_locs``, the rows and columns as in
        :meth:`models.LeggedRobot.inverse_kinematics` (wheel rows: the current
        wheel angles; ``NaN`` where unreachable). A contact target needs an
        axle that is not vertical (``ValueError`` otherwise).
        """
        q = self._config_or_state(x)[: self.nq]
        ends = leg_end_positions(leg_end_locs, len(self.legs), "leg_end_locs")
        if self._targets(targets) == "center":
            return self._leg_end_ik(q, ends)
        return self._contact_ik(q, ends)

    def nearest_ik(self, x: Any, leg_end_locs: Any, obey_limits: bool = True, targets: Optional[str] = None) -> np.ndarray:
        """Joint angles (8,) reaching ``leg_end_locs`` (``targets`` as in :meth:`inverse_kinematics`) closest to ``x``'s joints.

        As :meth:`models.LeggedRobot.nearest_ik`; the wheels keep their angles.
        """
        q = self._config_or_state(x)[: self.nq]
        return self._nearest(q, self.inverse_kinematics(q, leg_end_locs, targets), obey_limits)

    def _targets(self, targets: Optional[str]) -> str:
        if targets is None:
            return "contact" if self.contact_kinematics else "center"
        if targets not in KINEMATICS:
            raise ValueError(f"targets: expected one of {KINEMATICS} (wheel contact points or wheel centres), got {targets!r}")
        return targets

    def _contact_ik(self, q: np.ndarray, points: np.ndarray) -> np.ndarray:
        """IK solutions (8 x 2) putting the wheels' ground contact points at ``points`` (2, 3), world frame."""
        R, r = quat_to_rot(q[BASE_QUAT]), self.dims.wheel_radius
        hip_rows = [rows[0] for rows in self._leg_rows]  # each leg's abduction joint (about x)
        out = np.full((self.nu, 2), np.nan)
        for col in (0, 1):
            hips = q[BASE_NQ + np.array(hip_rows)]
            centers = None
            for _ in range(CONTACT_IK_ITERATIONS):
                new = points + r * np.array([self._center_direction(R, h, i) for i, h in enumerate(hips)])
                sols = self._leg_end_ik(q, new)
                converged = centers is not None and np.abs(new - centers).max() <= CONTACT_IK_TOL
                centers, hips = new, sols[hip_rows, col]
                if converged or np.isnan(hips).any():
                    break
            if converged:  # else unreachable (NaN hips) or no fixed point: the column stays NaN
                out[:, col] = sols[:, col]
        return out

    def _center_direction(self, R: np.ndarray, hip: float, leg: int) -> np.ndarray:
        """``u`` (3,): unit vector from a wheel's contact point to its centre, for base rotation ``R`` and hip angle ``hip``."""
        axle = R @ np.array([0.0, np.cos(hip), np.sin(hip)])
        u = np.array([0.0, 0.0, 1.0]) - axle[2] * axle
        norm = np.linalg.norm(u)
        if norm < 1e-9:
            raise ValueError(f"leg_end_locs: the axle of wheel {self.wheels[leg]!r} is vertical, so its contact point does not fix its centre; pass wheel centres with targets='center'")
        return u / norm

    def _kin(self, x: ca.SX) -> ca.SX:
        if not self.contact_kinematics:
            return super()._kin(x)
        return ca.vertcat(*[self._contact(x[: self.nq], w)[0] for w in self.wheels])

    def _kin_rot(self, x: ca.SX) -> ca.SX:
        if not self.contact_kinematics:
            return super()._kin_rot(x)
        return ca.vertcat(*[self._contact(x[: self.nq], w)[1] for w in self.wheels])

    def _Jv(self, x: ca.SX) -> ca.SX:
        if not self.contact_kinematics:
            return super()._Jv(x)
        return ca.vertcat(*[self._contact(x[: self.nq], w)[2] for w in self.wheels])

    def _aba(self, s: Dict[str, ca.SX]) -> ca.SX:
        if not self.contact_kinematics:
            return super()._aba(s)
        q, v = self._qv(s["x"])
        return self.tree.aba(q, v, s["tau"] + self._JTf(s))

    def _rnea(self, s: Dict[str, ca.SX]) -> ca.SX:
        if not self.contact_kinematics:
            return super()._rnea(s)
        q, v = self._qv(s["x"])
        return self.tree.rnea(q, v, s["vdot"]) - self._JTf(s)
