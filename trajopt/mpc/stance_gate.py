"""Stance feedback only on legs that stand (a leg whose foot has not touched is held by its joints), and on an ankle no more than its sole carries.

A plan's Riccati gains (:mod:`.feedback`) come from the horizon's
linearization with its scheduled stance mask ``s`` (the contact
formulation's dynamics parameters, :class:`models.contact_dynamics.ContactDynamics`). On a
leg in stance a joint moves the whole robot, and gains of a few N m s/rad
couple it to the base's and the other legs' errors. A foot scheduled to
stand that is in the air (it landed a millimetre short of a stair's tread,
or a push rolled the robot off it) leaves its leg with the inertia of the
leg alone: the same gains applied at the plant's rate (1 kHz) drive its
joints to their torque limits within milliseconds, and the foot flies up
(docs/design/mpc.md).

:class:`StanceGate` replaces those rows. With the contact points touching
the ground now, ``c`` (nc,) bool (a foot-contact sensor: the plant's
measured ground force above :data:`TOUCH_FORCE`), and
``A = robot.contact_actuators()`` (nc, nu) (actuator ``k`` on the leg of
point ``i``), the row of actuator ``k`` is replaced when

    any_i (A_ik s_i not c_i)   and not   any_i (A_ik s_i c_i),

a leg with a point scheduled to stand, none of whose such points touches (a
sole standing on one corner keeps its gains). The replacement is the joint
PD of the robot's :func:`~trajopt.legged.joint_gains.default_gains` about
the plan's reference: for actuator ``k`` driving coordinate ``j`` (``B[j, k]
= b``), the row with ``Kp / b`` on ``dq_j`` and ``Kd / b`` on ``dv_j`` of
``state_error(x, x_ref)``, so that ``u_k = u_ref,k - (Kp dq_j + Kd dv_j) / b``:
the plan's torque, and the leg held on its planned joint trajectory until
the foot touches.

The ankles keep their rows of ``K`` with the correction bounded
(:meth:`StanceGate.correction`): the plan keeps each sole's centre of
pressure inside it, but the unconstrained Riccati correction ``K
state_error`` knows no sole, and on a pushed humanoid it asked the ankles
for many times the moment a sole carries before it rolls onto its edge; the
sole rolled, the horizon (which holds it flat) failed its QPs and the robot
fell. The correction of an ankle actuator (``robot.sole_actuators()``) is
clipped to ``+- rho w m g`` about the plan's torque: the moment of the
robot's weight moved by the fraction ``rho`` (:data:`ANKLE_CORRECTION`) of
the sole's half-width ``w`` (``robot.sole_half_width()``), in every row:
in swing (a swinging foot's light link needs little torque) and in the
joint PD rows of a leg in the air too (pushed standing, a sole lifts and
touches again, and with those rows unbounded the standing G1 fell). The
trials are in the design notes (``docs/design/mpc.md``).
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from models.contact_dynamics import ContactDynamics
from models.model import GRAVITY

from ..legged.joint_gains import default_gains

#: A contact point touches when the plant's measured ground force on it exceeds this (N): a foot sensor's threshold.
TOUCH_FORCE = 1.0
#: ``rho``: the fraction of a sole's half-width by which an ankle's feedback correction may move the robot's weight
#: (module docstring; the G1's pushes in docs/design/mpc.md).
ANKLE_CORRECTION = 0.15


class StanceGate:
    """The feedback rows (nu,) to replace for a stance mask and the measured contacts, and their joint PD rows
    (module docstring), for a robot whose actuators on each contact point's leg are ``contact_actuators`` (nc, nu)
    bool and whose joint PD gains are ``joint_gains`` (nu, m): the rows ``K`` of ``u = u_ref - K state_error``;
    ``correction_limit`` (nu,): the largest correction of each actuator (N m; ``inf``: unbounded)."""

    def __init__(self, contact_actuators: np.ndarray, joint_gains: np.ndarray, correction_limit: Optional[np.ndarray] = None) -> None:
        self.contact_actuators = np.asarray(contact_actuators, dtype=bool)
        self.joint_gains = np.asarray(joint_gains, dtype=float)
        nu = self.joint_gains.shape[0]
        self.correction_limit = np.full(nu, np.inf) if correction_limit is None else np.asarray(correction_limit, dtype=float)
        if self.correction_limit.shape != (nu,) or np.any(~(self.correction_limit > 0)):
            raise ValueError(f"correction_limit: expected ({nu},) positive bounds (inf: none), got {correction_limit!r}")

    @classmethod
    def of(cls, model: Any) -> Optional["StanceGate"]:
        """The gate of a horizon model whose dynamics parameters are its stance mask (a :class:`models.contact_dynamics.ContactDynamics` in
        the contact formulation, each actuator driving one coordinate), else ``None`` (no schedule to read)."""
        if not (isinstance(model, ContactDynamics) and model.formulation.stance_is_parameter):
            return None
        robot = model.robot
        B = robot.B_func()
        if not all(np.count_nonzero(column) == 1 for column in B.T):
            return None
        kp, kd = default_gains(robot)
        gains = np.zeros((robot.nu, model.error_dim))
        for k, column in enumerate(B.T):
            j = int(np.flatnonzero(column)[0])
            gains[k, j], gains[k, robot.nv + j] = kp / column[j], kd / column[j]
        ankle_limit = ANKLE_CORRECTION * robot.sole_half_width() * robot.mass * GRAVITY  # nan for point feet: no ankle
        return cls(robot.contact_actuators(), gains, np.where(robot.sole_actuators(), ankle_limit, np.inf))

    def rows(self, stance: np.ndarray, touching: np.ndarray) -> np.ndarray:
        """(nu,) bool: the actuators whose feedback rows are replaced for the stance mask ``stance`` (nc,) (a knot's
        dynamics parameters: 1 in stance) and the points ``touching`` (nc,) bool now."""
        scheduled = np.asarray(stance, dtype=float) > 0.5
        touching = np.asarray(touching, dtype=bool)
        A = self.contact_actuators
        in_air = A[scheduled & ~touching].any(axis=0)
        standing = A[scheduled & touching].any(axis=0)
        return in_air & ~standing

    def correction(self, K: np.ndarray, error: np.ndarray, stance: np.ndarray, touching: Optional[np.ndarray]) -> np.ndarray:
        """The feedback correction (nu,) ``K error`` of a plan's interval (gains ``K`` (nu, m), ``state_error`` (m,)),
        the rows of :meth:`rows` the joint PD's, every row clipped to ``correction_limit`` (module docstring);
        ``touching`` ``None`` (no foot sensor): every row the plan's."""
        if touching is not None:
            replaced = self.rows(stance, touching)
            K = np.where(replaced[:, None], self.joint_gains, K) if replaced.any() else K
        return np.clip(K @ error, -self.correction_limit, self.correction_limit)


def touching(plant: Any) -> Optional[np.ndarray]:
    """(nc,) bool: the contact points of ``plant`` whose measured ground force exceeds :data:`TOUCH_FORCE` now, or ``None``
    for a plant without foot forces (``foot_forces()``, (nc, 3) N)."""
    forces = getattr(plant, "foot_forces", None)
    if forces is None:
        return None
    return np.linalg.norm(np.asarray(forces(), dtype=float), axis=1) > TOUCH_FORCE


def plan_contacts(plan: Any, plant: Any) -> Optional[np.ndarray]:
    """What ``plan.control`` reads of ``plant``'s contacts: :func:`touching` for a plan whose law uses them (one with a
    :attr:`~trajopt.mpc.plan.Plan.gate`), ``None`` for any other, so that the foot forces are not read at every step
    for nothing."""
    return touching(plant) if plan.gate is not None else None
