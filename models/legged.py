"""Floating-base legged robots with point feet: Go1, Go2 and any URDF alike.

:class:`LeggedRobot` is a :class:`MultibodyModel` whose kinematics bodies are
the feet (point contacts, forces in the WORLD frame), with a friction
coefficient ``mu``, the URDF's joint position/velocity/torque limits, and the
analytic leg inverse kinematics of :mod:`models.leg_ik` (one implementation for
every 3-joint leg, its geometry read from the model). ``Go1()`` and ``Go2()``
load the example-robot-data URDFs (nothing is downloaded).

Any quadruped with 3-joint legs comes from one line:
``LeggedRobot.from_urdf(path)`` or ``LeggedRobot.from_robot_data("solo12")``
find its feet (:mod:`models.quadruped`), order them front-left, front-right,
hind-left, hind-right (:attr:`LeggedRobot.leg_roles`), and stand it from its
kinematics: standing height from the leg length
(:func:`models.quadruped.standing_height`), feet under the hips, knees bent
the way the URDF suggests (``knees``, see :meth:`LeggedRobot.init_state`).

Joint vectors (``q_joints``, torques ``u``) are in the nominal (pinocchio) joint
order; for Go1/Go2 the legs FL, FR, RL, RR, each (hip, thigh, calf). The
wheeled biped (:mod:`models.wheeled_biped`) is a :class:`LeggedRobot` too,
its legs ending at the wheel centres.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Optional, Sequence, Union

import numpy as np

from lie import _backend as B

from .joint_limits import fix_joint_limits, wrap_into_limits
from .leg_ik import knee_direction, leg_end_positions, legs_from_feet, nearest_ik, quadruped_ik
from .multibody_model import BASE_NQ, BASE_NV, BASE_POS, BASE_QUAT, MultibodyModel, check_model, frame_names
from .payload import add_payload, base_link
from . import quadruped
from .quadruped import LEG_ROLES, NotAQuadrupedError, find_feet, leg_roles, order_feet
from .robot_data import load_pinocchio_model, urdf_path

#: Foot frames of the Unitree quadrupeds, in the nominal leg order.
UNITREE_FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")
#: Knee directions by leg (in :data:`models.quadruped.LEG_ROLES` order) of the named knee postures:
#: ``backward`` as Unitree robots (and mammals), ``inward`` the "X" of ANYmal and HyQ.
KNEE_POSTURES = {
    "backward": ("backward", "backward", "backward", "backward"),
    "forward": ("forward", "forward", "forward", "forward"),
    "inward": ("backward", "backward", "forward", "forward"),
    "outward": ("forward", "forward", "backward", "backward"),
}
_KNEE_SIGN = {"forward": 1, "backward": -1}
_KNEE_NAME = {1: "forward", -1: "backward", 0: "straight"}


class LeggedRobot(MultibodyModel):
    """A floating-base robot with 3-joint legs ending in point feet or wheels.

    A robot with four legs whose feet form a front and a hind pair gets
    :attr:`leg_roles` (``"FL"``, ``"FR"``, ``"HL"``, ``"HR"`` per leg end,
    :func:`models.quadruped.leg_roles`), through which contact schedules keyed
    by leg roles find its feet; other robots have ``leg_roles = None``.

    Parameters
    ----------
    pin_model:
        The ``pinocchio.Model`` (free-flyer root), e.g. from
        :func:`models.robot_data.load_pinocchio_model`.
    leg_ends:
        Frame names at the end of each 3-joint leg (feet, or wheel centres):
        the targets of the analytic inverse kinematics. Joints outside the
        legs (wheels) are allowed; IK leaves them unchanged.
    mu:
        Friction coefficient of the contacts.
    standing_height:
        Base height above the ground in :meth:`init_state`.
    kinematics_bodies:
        The contact points (default: ``leg_ends``).
    leg_end_height:
        Height of a leg end above the ground when standing (0 for point feet,
        the wheel radius for wheel centres).
    knees:
        Which way the knees bend in :meth:`init_state`: ``None`` (from the
        URDF, see there), a posture of :data:`KNEE_POSTURES` (four legs), or
        ``"forward"``/``"backward"`` per leg end.
    """

    def __init__(
        self,
        pin_model: Any,
        leg_ends: Sequence[str],
        mu: float = 0.3,
        standing_height: float = 0.27,
        kinematics_bodies: Optional[Sequence[str]] = None,
        leg_end_height: float = 0.0,
        name: str = "legged",
        urdf_path: Optional[str] = None,
        knees: Union[None, str, Sequence[str]] = None,
    ) -> None:
        #: Friction coefficient of the contacts (Coulomb, unitless).
        self.mu = B.real(mu, "mu", lower=0.0, strict=True)
        #: Base height above the ground in :meth:`init_state` (m).
        self.standing_height = B.real(standing_height, "standing_height", lower=0.0, strict=True)
        #: Height of a leg end above the ground when standing (m): 0 for point feet, the wheel radius for wheels.
        self.leg_end_height = B.real(leg_end_height, "leg_end_height", lower=0.0)
        check_model(pin_model)
        frame_names(pin_model, leg_ends, "leg_ends")
        super().__init__(pin_model, kinematics_bodies=leg_ends if kinematics_bodies is None else kinematics_bodies, name=name, urdf_path=urdf_path)
        #: Frame names at the end of each 3-joint leg (feet or wheel centres), the inverse kinematics' targets.
        self.leg_ends = tuple(leg_ends)
        #: The legs found from :attr:`leg_ends`: each one's joints and frames in the pinocchio model.
        self.legs = legs_from_feet(pin_model, leg_ends)
        # rows of each leg's (hip, thigh, calf) in the joint vector (nominal order)
        self._leg_rows = [np.asarray(leg.v_indices) - BASE_NV for leg in self.legs]
        rows = np.concatenate(self._leg_rows)
        if len(set(rows.tolist())) != len(rows):
            raise ValueError(f"leg_ends: the legs of {list(leg_ends)} share joints")
        try:
            #: ``"FL"``, ``"FR"``, ``"HL"``, ``"HR"`` per leg end for a quadruped (by the feet's positions), else ``None``.
            self.leg_roles: Optional[tuple[str, ...]] = leg_roles(self.legs)
        except NotAQuadrupedError:
            self.leg_roles = None
        #: Which way each knee bends in :meth:`init_state` (``"forward"``/``"backward"`` per leg end), or ``None`` for the URDF's choice.
        self.knees = self._knee_request(knees)

    def _knee_request(self, knees: Union[None, str, Sequence[str]]) -> Optional[tuple[str, ...]]:
        """``knees`` as one ``"forward"``/``"backward"`` per leg end, or ``None`` (from the URDF)."""
        if knees is None:
            return None
        if isinstance(knees, str):
            if knees not in KNEE_POSTURES:
                raise ValueError(f"knees: expected one of {sorted(KNEE_POSTURES)} or a direction per leg, got {knees!r}")
            if self.leg_roles is None:
                raise ValueError(f"knees: the posture {knees!r} needs a quadruped with front and hind legs; give 'forward' or 'backward' per leg end")
            return tuple(KNEE_POSTURES[knees][LEG_ROLES.index(role)] for role in self.leg_roles)
        knees = tuple(knees)
        if len(knees) != len(self.legs) or any(k not in _KNEE_SIGN for k in knees):
            raise ValueError(f"knees: expected 'forward' or 'backward' for each of the {len(self.legs)} leg ends, got {list(knees)}")
        return knees

    # ------------------------------------------------------------ construction
    @classmethod
    def from_urdf(  # type: ignore[override]
        cls,
        urdf_path: Union[str, Path],
        feet: Optional[Sequence[str]] = None,
        mu: float = 0.3,
        standing_height: Optional[float] = None,
        knees: Union[None, str, Sequence[str]] = None,
        name: Optional[str] = None,
        payload: float = 0.0,
    ) -> "LeggedRobot":
        """A quadruped from a URDF file (free-flyer root), standing from its kinematics.

        ``feet``: its four foot frames in any order, or ``None`` to find them
        (:func:`models.quadruped.find_feet`); either way they become the leg
        ends and contact points in the order front-left, front-right,
        hind-left, hind-right. ``standing_height``: base height (m), default
        :func:`models.quadruped.standing_height`. ``knees``: see the class.
        ``name``: default the file's stem. ``payload``: kg carried at the
        base's centre of mass (:func:`models.payload.add_payload`). Raises
        :class:`models.quadruped.NotAQuadrupedError` (a ``ValueError``) when
        the model is not a quadruped with 3-joint legs, ``FileNotFoundError``
        for a missing file.
        """
        model = with_base_payload(load_pinocchio_model(urdf_path), payload)
        feet = find_feet(model) if feet is None else order_feet(model, feet)
        if standing_height is None:
            standing_height = quadruped.standing_height(legs_from_feet(model, feet))
        name = _model_name(name if name is not None else Path(urdf_path).stem)
        return cls(model, feet, mu=mu, standing_height=standing_height, name=name, urdf_path=str(urdf_path), knees=knees)

    @classmethod
    def from_robot_data(cls, robot: str, feet: Optional[Sequence[str]] = None, **kwargs: Any) -> "LeggedRobot":
        """:meth:`from_urdf` on an example-robot-data robot by name (:func:`models.robot_data.urdf_path`),
        e.g. ``"solo12"``, ``"anymal"`` (ANYmal B), ``"hyq"``, ``"a1"``; named after it."""
        kwargs.setdefault("name", robot)
        return cls.from_urdf(urdf_path(robot), feet, **kwargs)

    def with_armature(self, armature: Any) -> "LeggedRobot":
        """This robot with rotor inertias ``armature`` (kg m^2, a scalar or one per actuated joint in the nominal order) on
        its joints: a copy of its pinocchio model with ``model.armature`` set, whose dynamics include them
        (:mod:`models.multibody.engine`); e.g. a MuJoCo model's ``armature``, which a plan should know."""
        values = np.broadcast_to(np.asarray(armature, dtype=float), (self.nv - BASE_NV,))
        if not (np.isfinite(values).all() and (values >= 0).all()):
            raise ValueError(f"armature: expected finite values >= 0 (kg m^2), got {np.asarray(armature).tolist()}")
        model = self.pin_model.copy()
        model.armature[BASE_NV:] = values
        return LeggedRobot(
            model, self.leg_ends, mu=self.mu, standing_height=self.standing_height, kinematics_bodies=self.kinematics_bodies,
            leg_end_height=self.leg_end_height, name=self.name, urdf_path=self.urdf_path, knees=self.knees,
        )  # fmt: skip

    # ------------------------------------------------------------ description
    @property
    def leg_length(self) -> float:
        """Mean thigh + calf length (m, in the legs' planes): the length gaits are scaled by."""
        return float(np.mean([leg.thigh_length + leg.calf_length for leg in self.legs]))

    def knee_directions(self, x: Any) -> tuple[str, ...]:
        """Per leg end, ``"forward"``, ``"backward"`` or ``"straight"`` at configuration (or state) ``x``
        (:func:`models.leg_ik.knee_direction`)."""
        joints = self._config_or_state(x)[BASE_NQ : self.nq]
        return tuple(_KNEE_NAME[knee_direction(leg, joints[rows])] for leg, rows in zip(self.legs, self._leg_rows))

    def knee_posture(self) -> str:
        """The knees in :meth:`init_state`: a name of :data:`KNEE_POSTURES` when one matches, else the directions per leg end."""
        knees = self.knee_directions(self.init_state())
        for name, directions in KNEE_POSTURES.items():
            if self.leg_roles is not None and knees == tuple(directions[LEG_ROLES.index(role)] for role in self.leg_roles):
                return name
        return ", ".join(knees)

    def describe(self) -> str:
        """A few lines for a terminal: mass, leg length, feet (with roles), standing height and knees, limits."""
        roles = self.leg_roles or tuple(str(i) for i in range(len(self.leg_ends)))
        torque = self.torque_limits()
        return "\n".join(
            [
                f"{self.name}: {self.mass:.2f} kg, {len(self.legs)} legs of {self.leg_length:.3f} m (thigh + calf), {self.nu} joints",
                "  feet      " + ", ".join(f"{role} {foot}" for role, foot in zip(roles, self.leg_ends)),
                f"  standing  base {self.standing_height:.3f} m high, knees {self.knee_posture()}",
                f"  limits    torque {torque.min():g}..{torque.max():g} Nm, mu {self.mu:g}",
            ]
        )

    # ------------------------------------------------------------------ limits
    def fix_joint_limits(self, x: Any, suppress_error: bool = False) -> np.ndarray:
        """``x`` (state or configuration) with joint angles wrapped by 2 pi into the limits.

        Where no representative fits, raise ``ValueError`` naming the joint, or
        clamp to the nearest limit when ``suppress_error``. Unbounded joints
        (wheels) are left as they are.
        """
        x = np.array(self._config_or_state(x), dtype=float)
        joints = slice(BASE_NQ, BASE_NQ + self.nu)
        x[joints] = fix_joint_limits(x[joints], self.joint_lower, self.joint_upper, suppress_error=suppress_error, names=self.joint_names)
        return x

    # ------------------------------------------------------ inverse kinematics
    def _config_or_state(self, x: Any) -> np.ndarray:
        x = B.vector(x, None, "x")
        if x.shape[0] not in (self.nq, self.nx):
            raise ValueError(f"x: expected a configuration ({self.nq},) or a state ({self.nx},), got {x.shape}")
        return x

    def inverse_kinematics(self, x: Any, leg_end_locs: Any) -> np.ndarray:
        """Both analytic IK solutions of every leg (nu x 2) for WORLD leg-end positions.

        ``x`` gives the base pose (configuration or state); ``leg_end_locs`` is
        (3 L,) or (L, 3) in the order of :attr:`leg_ends`. Rows are the nominal
        joint order; column ``j`` is solution ``j`` (for Unitree legs, column 0
        has the negative, usual knee angle); ``NaN`` where unreachable. Rows of
        joints outside the legs (wheels) hold their current angles.
        """
        q = self._config_or_state(x)[: self.nq]
        return self._leg_end_ik(q, leg_end_positions(leg_end_locs, len(self.legs), "leg_end_locs"))

    def _leg_end_ik(self, q: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """Both IK solutions (nu x 2) placing the :attr:`leg_ends` frames at the WORLD points ``ends`` (L, 3), base pose of ``q`` (nq,)."""
        per_leg = quadruped_ik(self.legs, q[BASE_POS], q[BASE_QUAT], ends)
        out = np.repeat(q[BASE_NQ:, None], 2, axis=1)
        for i, rows in enumerate(self._leg_rows):
            out[rows] = per_leg[3 * i : 3 * i + 3]
        return out

    def nearest_ik(self, x: Any, leg_end_locs: Any, obey_limits: bool = True) -> np.ndarray:
        """Joint angles (nu,) reaching ``leg_end_locs`` closest, per leg, to the joints in ``x``.

        Joints outside the legs keep their angles. Raises ``ValueError`` naming
        the leg when no solution is reachable (or within the joint limits when
        ``obey_limits``).
        """
        q = self._config_or_state(x)[: self.nq]
        return self._nearest(q, self.inverse_kinematics(q, leg_end_locs), obey_limits)

    def _nearest(self, q: np.ndarray, sols: np.ndarray, obey_limits: bool = True) -> np.ndarray:
        """:func:`models.leg_ik.nearest_ik` of the leg rows of ``sols`` (nu x 2) from the joints of ``q``."""
        rows = np.concatenate(self._leg_rows)
        joints = q[BASE_NQ:].copy()
        joints[rows] = nearest_ik(joints[rows], sols[rows], obey_limits=obey_limits, limits=(self.joint_lower[rows], self.joint_upper[rows]))
        return joints

    def leg_ends_under_hips(self, height: float) -> np.ndarray:
        """Leg ends (L, 3) in the BASE frame straight below the hips (zero-angle lateral offsets), at ``-height``."""
        ends = np.array([leg.hip_pos + leg.hip_to_thigh + leg.thigh + leg.calf for leg in self.legs])
        ends[:, 2] = -height
        return ends

    def init_state(self) -> np.ndarray:
        """Standing at rest: base level at :attr:`standing_height`, leg ends under the hips,
        :attr:`leg_end_height` above the ground (``z = 0``).

        Each leg takes the IK solution (:meth:`inverse_kinematics`) whose knee
        points the way :attr:`knees` asks (:func:`models.leg_ik.knee_direction`).
        Without ``knees``, the URDF decides, per leg: the only solution within
        the joint limits when one is outside them (Unitree, HyQ); else the
        direction in which the knee is bent at zero angles (ANYmal's shanks);
        else, for a straight zero pose and wide limits (Solo12), backward.
        """
        x = np.zeros(self.nx)
        x[2], x[3] = self.standing_height, 1.0
        ends = self.leg_ends_under_hips(self.standing_height - self.leg_end_height) + x[BASE_POS]
        sols = self._leg_end_ik(x[: self.nq], ends)
        for i, (leg, rows) in enumerate(zip(self.legs, self._leg_rows)):
            within = [j for j in (0, 1) if not np.isnan(wrap_into_limits(sols[rows, j], self.joint_lower[rows], self.joint_upper[rows])).any()]
            if self.knees is not None:
                wanted = _KNEE_SIGN[self.knees[i]]
            elif len(within) == 2:
                wanted = knee_direction(leg, np.zeros(3)) or _KNEE_SIGN["backward"]
            else:
                continue  # the joint limits (or reach) decide
            keep = [j for j in (0, 1) if not np.isnan(sols[rows, j]).any() and knee_direction(leg, sols[rows, j]) != -wanted]
            if self.knees is not None and not set(keep) & set(within):
                raise ValueError(f"knees: leg {self.leg_ends[i]!r} cannot stand with its knee {self.knees[i]} within its joint limits")
            for j in set((0, 1)) - set(keep):
                sols[rows, j] = np.nan
        x[BASE_NQ : self.nq] = self._nearest(x[: self.nq], sols)
        return x


def _model_name(text: str) -> str:
    """``text`` as a model name (letters, digits and single underscores, starting with a letter)."""
    name = re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_")
    return name if name[:1].isalpha() else f"robot_{name}"


def with_base_payload(pin_model: Any, mass: float) -> Any:
    """``pin_model`` carrying ``mass`` kg at its base body's centre of mass (a copy; itself when ``mass`` is 0)."""
    mass = B.real(mass, "payload", lower=0.0)
    return add_payload(pin_model, base_link(pin_model), mass) if mass else pin_model


def scaled_effort_limits(pin_model: Any, scale: float) -> Any:
    """``pin_model`` with its joint effort (torque) limits times ``scale`` (> 0), in place:
    a weaker robot for studies in which the limits bind (e.g. a constrained trot)."""
    scale = B.real(scale, "torque_scale", lower=0.0, strict=True)
    pin_model.effortLimit = pin_model.effortLimit * scale
    return pin_model


class Go1(LeggedRobot):
    """Unitree Go1 (example-robot-data URDF): nq 19, nv 18, nu 12, 4 feet; ``payload`` kg on its trunk (:func:`with_base_payload`)."""

    def __init__(self, mu: float = 0.3, standing_height: float = 0.27, torque_scale: float = 1.0, payload: float = 0.0) -> None:
        path = urdf_path("go1")
        model = scaled_effort_limits(with_base_payload(load_pinocchio_model(path), payload), torque_scale)
        super().__init__(model, UNITREE_FEET, mu=mu, standing_height=standing_height, name="go1", urdf_path=str(path))


class Go2(LeggedRobot):
    """Unitree Go2 (example-robot-data URDF): nq 19, nv 18, nu 12, 4 feet; ``payload`` kg on its trunk (:func:`with_base_payload`)."""

    def __init__(self, mu: float = 0.3, standing_height: float = 0.27, torque_scale: float = 1.0, payload: float = 0.0) -> None:
        path = urdf_path("go2")
        model = scaled_effort_limits(with_base_payload(load_pinocchio_model(path), payload), torque_scale)
        super().__init__(model, UNITREE_FEET, mu=mu, standing_height=standing_height, name="go2", urdf_path=str(path))
