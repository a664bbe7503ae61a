"""Joint PD gains per legged robot: the joint-level loop that holds a leg on its planned joint trajectory.

``tau = u_plan + Kp (q_plan - q) + Kd (qdot_plan - qdot)`` per joint, with
``(Kp, Kd)`` from :func:`default_gains`: MuJoCo's replay of a plan
(:class:`trajopt.mujoco.track.PDFeedforward`) and, in a closed loop, a leg
that the plan has standing but whose foot has not touched
(:mod:`trajopt.mpc.stance_gate`).
"""
from __future__ import annotations

from typing import Any, Dict, Tuple

import numpy as np

#: Joint PD gains ``(Kp N m/rad, Kd N m s/rad)`` per robot name, chosen for
#: :class:`trajopt.mujoco.track.PDFeedforward` on the registry's plans by their base drift in MuJoCo:
#: stiffer joints hold the trot better and the jump's landing worse (docs/design/mujoco.md). Other quadrupeds get Go1's scaled by
#: :func:`torque_scale`; other robots ``"default"``.
DEFAULT_GAINS: Dict[str, Tuple[float, float]] = {"go1": (50.0, 2.0), "go2": (50.0, 2.0), "g1": (30.0, 1.0), "default": (30.0, 1.0)}
#: Go1's mass (kg) and leg length (thigh + calf, m): the reference of :func:`torque_scale`.
GO1_MASS, GO1_LEG_LENGTH = 13.100529, 0.426


def torque_scale(robot: Any) -> float:
    """``s = m L / (m L)_Go1`` of a legged robot with a ``leg_length`` (1 otherwise): how its torques compare with Go1's.

    Joint torques holding a body of mass ``m`` on legs of length ``L`` grow
    like ``m g L``; motions slow down like ``sqrt(L)`` (:mod:`trajopt.legged.scaling`).
    So a quadruped without an entry in :data:`DEFAULT_GAINS` gets
    ``Kp = 50 s``, ``Kd = 2 s sqrt(L / L_Go1)``, and :class:`trajopt.mujoco.track.TimeVaryingLQR`
    ``R = 0.1 / s^2``; unscaled gains let small and large robots drift more.
    Design notes, with the drifts per robot: docs/design/mujoco.md.
    """
    leg_length = getattr(robot, "leg_length", None)
    if leg_length is None or not hasattr(robot, "mass"):
        return 1.0
    return float(robot.mass * leg_length / (GO1_MASS * GO1_LEG_LENGTH))


def default_gains(robot: Any) -> Tuple[float, float]:
    """The joint PD gains for ``robot``: its entry of :data:`DEFAULT_GAINS` (by ``name``), else
    Go1's scaled by :func:`torque_scale` for a legged robot, else ``"default"``."""
    name = getattr(robot, "name", "")
    if name in DEFAULT_GAINS:
        return DEFAULT_GAINS[name]
    if getattr(robot, "leg_length", None) is None:
        return DEFAULT_GAINS["default"]
    s, (kp, kd) = torque_scale(robot), DEFAULT_GAINS["go1"]
    return kp * s, kd * s * float(np.sqrt(robot.leg_length / GO1_LEG_LENGTH))
