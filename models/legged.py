"""Floating-base legged robots with point feet: Go1, Go2 and any URDF alike.

:class:`LeggedRobot` is a :class:`MultibodyModel` whose kinematics bodies are
the feet (point contacts, forces in the WORLD frame), with a friction
coefficient ``mu``, the URDF's joint position/velocity/torque limits, and the
analytic leg inverse kinematics of :mod:`models.leg_ik` (one implementation for
every 3-joint leg, its geometry read from the model). ``Go1()`` and ``Go2()``
load the example-robot-data URDFs (nothing is downloaded).

Joint vectors (``q_joints``, torques ``u``) are in the nominal (pinocchio) joint
order; for Go1/Go2 the legs FL, FR, RL, RR, each (hip, thigh, calf).
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from lie import _backend as B

from .joint_limits import fix_joint_limits
from .leg_ik import leg_ik, legs_from_feet, nearest_ik, quadruped_ik
from .multibody_model import BASE_POS, BASE_QUAT, MultibodyModel
from .robot_data import load_pinocchio_model, read_urdf_limits, urdf_path

#: Foot frames of the Unitree quadrupeds, in the nominal leg order.
UNITREE_FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")


class LeggedRobot(MultibodyModel):
    """A floating-base robot whose feet are point contacts.

    Parameters
    ----------
    urdf:
        Path of the URDF (a free-flyer root is added).
    foot_frames:
        Frame names of the feet (the kinematics bodies), one per 3-joint leg.
    mu:
        Friction coefficient of the feet.
    standing_height:
        Base height above the ground (the feet's frame origins at ``z = 0``) in
        :meth:`init_state`.
    """

    def __init__(self, urdf: Any, foot_frames: Sequence[str], mu: float = 0.3, standing_height: float = 0.27, name: str = "legged") -> None:
        pin_model = load_pinocchio_model(urdf, floating=True)
        super().__init__(pin_model, kinematics_bodies=foot_frames, name=name, urdf_path=str(urdf))
        if mu <= 0:
            raise ValueError(f"mu: expected a positive friction coefficient, got {mu}")
        self.mu = float(mu)
        self.standing_height = float(standing_height)
        self.foot_frames = tuple(foot_frames)
        self.legs = legs_from_feet(pin_model, foot_frames)
        limits = read_urdf_limits(pin_model)
        self.joint_names = limits.names
        self.joint_lower, self.joint_upper = limits.lower, limits.upper
        self.velocity_limits, self.effort_limits = limits.velocity, limits.effort
        # rows of each leg's (hip, thigh, calf) in the joint vector (nominal order)
        self._leg_rows = [np.asarray(leg.v_indices) - 6 for leg in self.legs]
        covered = np.sort(np.concatenate(self._leg_rows))
        if not np.array_equal(covered, np.arange(self.nu)):
            raise ValueError(f"foot_frames: the legs of {list(foot_frames)} do not cover all {self.nu} joints exactly once")

    # ------------------------------------------------------------------ limits
    def torque_limits(self) -> np.ndarray:
        """Joint torque limits (nu,) from the URDF's ``effort`` attributes."""
        return np.where(self.effort_limits > 0, self.effort_limits, np.inf)

    def fix_joint_limits(self, x: Any, suppress_error: bool = False) -> np.ndarray:
        """``x`` (state or configuration) with joint angles wrapped by 2 pi into the limits.

        Where no representative fits, raise ``ValueError`` naming the joint, or
        clamp to the nearest limit when ``suppress_error``.
        """
        x = np.array(self._config_or_state(x), dtype=float)
        x[7 : 7 + self.nu] = fix_joint_limits(x[7 : 7 + self.nu], self.joint_lower, self.joint_upper, suppress_error=suppress_error, names=self.joint_names)
        return x

    # ------------------------------------------------------ inverse kinematics
    def _config_or_state(self, x: Any) -> np.ndarray:
        x = B.vector(x, None, "x")
        if x.shape[0] not in (self.nq, self.nx):
            raise ValueError(f"x: expected a configuration ({self.nq},) or a state ({self.nx},), got {x.shape}")
        return x

    def inverse_kinematics(self, x: Any, foot_locs: Any) -> np.ndarray:
        """Both analytic IK solutions of every leg (nu x 2) for WORLD foot positions.

        ``x`` gives the base pose (configuration or state); ``foot_locs`` is
        (3 nc,) or (nc, 3) in the order of :attr:`foot_frames`. Rows are the
        nominal joint order; column ``j`` is solution ``j`` (for Unitree legs,
        column 0 has the negative, usual knee angle); ``NaN`` where unreachable.
        """
        q = self._config_or_state(x)
        per_leg = quadruped_ik(self.legs, q[BASE_POS], q[BASE_QUAT], foot_locs)
        out = np.empty((self.nu, 2))
        for i, rows in enumerate(self._leg_rows):
            out[rows] = per_leg[3 * i : 3 * i + 3]
        return out

    def nearest_ik(self, x: Any, foot_locs: Any, obey_limits: bool = True) -> np.ndarray:
        """Joint angles (nu,) reaching ``foot_locs`` closest, per leg, to the joints in ``x``.

        Raises ``ValueError`` naming the leg when no solution is reachable (or
        within the joint limits when ``obey_limits``).
        """
        q = self._config_or_state(x)
        sols = self.inverse_kinematics(q, foot_locs)
        order = np.concatenate(self._leg_rows)
        limits = (self.joint_lower[order], self.joint_upper[order])
        q_legs = nearest_ik(q[7:][order], sols[order], obey_limits=obey_limits, limits=limits)
        out = np.empty(self.nu)
        out[order] = q_legs
        return out

    def foot_under_hip(self, height: float) -> np.ndarray:
        """Feet directly under the hips (base frame, zero joint angles' lateral offset) at ``-height``: (nc, 3)."""
        feet = np.array([leg.hip_pos + leg.hip_to_thigh + leg.thigh + leg.calf for leg in self.legs])
        feet[:, 2] = -height
        return feet

    def init_state(self) -> np.ndarray:
        """Standing state: base at :attr:`standing_height`, level, feet under the hips on the ground, at rest."""
        x = np.zeros(self.nx)
        x[2], x[3] = self.standing_height, 1.0
        feet_world = self.foot_under_hip(self.standing_height) + x[BASE_POS]
        x[7 : 7 + self.nu] = self.nearest_ik(np.r_[x[: self.nq]], feet_world, obey_limits=True)
        return x


class Go1(LeggedRobot):
    """Unitree Go1 (example-robot-data URDF): nq 19, nv 18, nu 12, 4 feet."""

    def __init__(self, mu: float = 0.3, standing_height: float = 0.27) -> None:
        super().__init__(urdf_path("go1"), UNITREE_FEET, mu=mu, standing_height=standing_height, name="go1")


class Go2(LeggedRobot):
    """Unitree Go2 (example-robot-data URDF): nq 19, nv 18, nu 12, 4 feet."""

    def __init__(self, mu: float = 0.3, standing_height: float = 0.27) -> None:
        super().__init__(urdf_path("go2"), UNITREE_FEET, mu=mu, standing_height=standing_height, name="go2")
