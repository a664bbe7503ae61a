"""Floating-base legged robots with point feet: Go1, Go2 and any URDF alike.

:class:`LeggedRobot` is a :class:`MultibodyModel` whose kinematics bodies are
the feet (point contacts, forces in the WORLD frame), with a friction
coefficient ``mu``, the URDF's joint position/velocity/torque limits, and the
analytic leg inverse kinematics of :mod:`models.leg_ik` (one implementation for
every 3-joint leg, its geometry read from the model). ``Go1()`` and ``Go2()``
load the example-robot-data URDFs (nothing is downloaded).

Joint vectors (``q_joints``, torques ``u``) are in the nominal (pinocchio) joint
order; for Go1/Go2 the legs FL, FR, RL, RR, each (hip, thigh, calf). The
wheeled biped (:mod:`models.wheeled_biped`) is a :class:`LeggedRobot` too,
its legs ending at the wheel centres.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from lie import _backend as B

from .joint_limits import fix_joint_limits
from .leg_ik import legs_from_feet, nearest_ik, quadruped_ik
from .multibody_model import BASE_NQ, BASE_NV, BASE_POS, BASE_QUAT, MultibodyModel
from .robot_data import load_pinocchio_model, urdf_path

#: Foot frames of the Unitree quadrupeds, in the nominal leg order.
UNITREE_FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")


class LeggedRobot(MultibodyModel):
    """A floating-base robot with 3-joint legs ending in point feet or wheels.

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
    ) -> None:
        if not (np.isfinite(mu) and mu > 0):
            raise ValueError(f"mu: expected a positive friction coefficient, got {mu!r}")
        super().__init__(pin_model, kinematics_bodies=leg_ends if kinematics_bodies is None else kinematics_bodies, name=name, urdf_path=urdf_path)
        self.mu = float(mu)
        self.standing_height = float(standing_height)
        self.leg_end_height = float(leg_end_height)
        self.leg_ends = tuple(leg_ends)
        self.legs = legs_from_feet(pin_model, leg_ends)
        # rows of each leg's (hip, thigh, calf) in the joint vector (nominal order)
        self._leg_rows = [np.asarray(leg.v_indices) - BASE_NV for leg in self.legs]
        rows = np.concatenate(self._leg_rows)
        if len(set(rows.tolist())) != len(rows):
            raise ValueError(f"leg_ends: the legs of {list(leg_ends)} share joints")

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
        per_leg = quadruped_ik(self.legs, q[BASE_POS], q[BASE_QUAT], leg_end_locs)
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
        sols = self.inverse_kinematics(q, leg_end_locs)
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
        :attr:`leg_end_height` above the ground (``z = 0``)."""
        x = np.zeros(self.nx)
        x[2], x[3] = self.standing_height, 1.0
        ends = self.leg_ends_under_hips(self.standing_height - self.leg_end_height) + x[BASE_POS]
        x[BASE_NQ : self.nq] = self.nearest_ik(x, ends)
        return x


class Go1(LeggedRobot):
    """Unitree Go1 (example-robot-data URDF): nq 19, nv 18, nu 12, 4 feet."""

    def __init__(self, mu: float = 0.3, standing_height: float = 0.27) -> None:
        path = urdf_path("go1")
        super().__init__(load_pinocchio_model(path), UNITREE_FEET, mu=mu, standing_height=standing_height, name="go1", urdf_path=str(path))


class Go2(LeggedRobot):
    """Unitree Go2 (example-robot-data URDF): nq 19, nv 18, nu 12, 4 feet."""

    def __init__(self, mu: float = 0.3, standing_height: float = 0.27) -> None:
        path = urdf_path("go2")
        super().__init__(load_pinocchio_model(path), UNITREE_FEET, mu=mu, standing_height=standing_height, name="go2", urdf_path=str(path))
