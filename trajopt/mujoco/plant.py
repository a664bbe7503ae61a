"""MuJoCo as the plant of a closed loop: a robot the controller's model does not match exactly.

:class:`MujocoPlant` steps a :func:`~trajopt.mujoco.model.build_model` robot at
``timestep`` (1 ms) under joint torques held over the step and a WORLD force
on the root body (pushes), as :class:`trajopt.mpc.plant.Plant` asks. Its
contact model is, by default, what a user gets who loads the URDF into MuJoCo
(``contact="realistic"``): MuJoCo's own soft contacts (``solref (0.02, 1)``,
``solimp (0.9, 0.95, 0.001)``, pyramidal cone), the URDF's foot spheres (2 cm
on the Go1), the URDF's joint damping and dry friction, and the URDF's
collision shapes on the trunk and legs; ``contact="matched"`` is the model
:func:`trajopt.mujoco.verify` replays plans in (stiff contacts, 5 mm spheres,
no joint friction), near our rigid-contact plans. Mismatch the controller
does not know: a ``payload`` (kg) added to the root body at its centre of
mass, and the ground's friction coefficient ``mu`` (every geom's sliding
friction; MuJoCo combines a pair's by the maximum). A ``terrain``
(:class:`trajopt.terrain.Terrain`) replaces the ground by its solids, as
:func:`trajopt.mujoco.verify` builds them.

The robot has fallen (:meth:`MujocoPlant.fallen`) when its root body is below
half its standing height above the ground (the terrain under it) or a body
other than a foot touches the ground.
"""
from __future__ import annotations

from typing import Any, Optional

import mujoco
import numpy as np

from .model import ContactParameters, build_model, realistic_contact

CONTACT_MODELS = ("realistic", "matched")


class MujocoPlant:
    """``robot`` in MuJoCo from state ``x0`` (our convention), stepped every ``timestep`` (s).

    ``contact="realistic"``: MuJoCo's default soft contacts with the URDF's foot spheres, joint
    damping and friction; ``"matched"``: the stiff contacts of :func:`trajopt.mujoco.verify`.
    ``payload`` (kg) is added to the root body at its centre of mass, ``mu`` sets the ground's
    friction coefficient; neither is known to the controller. ``terrain`` replaces the flat ground. ``ValueError`` for an unknown
    ``contact``, a negative payload or a ``mu`` that is not positive.
    """

    def __init__(self, robot: Any, x0: np.ndarray, contact: str = "realistic", timestep: float = 1e-3, payload: float = 0.0, mu: Optional[float] = None, terrain: Any = None) -> None:
        if contact not in CONTACT_MODELS:
            raise ValueError(f"contact: expected one of {CONTACT_MODELS}, got {contact!r}")
        if not (np.isfinite(payload) and payload >= 0):
            raise ValueError(f"payload: expected kg >= 0, got {payload!r}")
        if mu is not None and not (np.isfinite(mu) and mu > 0):
            raise ValueError(f"mu: expected a friction coefficient > 0, got {mu!r}")
        realistic = contact == "realistic"
        parameters = realistic_contact(robot) if realistic else ContactParameters()
        self.robot = build_model(robot, timestep=timestep, contact=parameters, joint_friction=realistic, body_collisions=realistic, terrain=terrain)
        self.terrain = terrain
        model = self.robot.model
        self.root = int(model.jnt_bodyid[0]) if self.robot.floating else 0
        if payload:
            model.body_mass[self.root] += payload
        if mu is not None:
            model.geom_friction[:, 0] = mu
        self.data = mujoco.MjData(model)
        self.robot.set_state(self.data, np.asarray(x0, dtype=float))
        mujoco.mj_forward(model, self.data)
        self.dt, self.t = float(timestep), 0.0
        self.contact, self.payload = contact, float(payload)
        self.standing_height = self._height_above_ground(np.asarray(x0, dtype=float)[:3])
        #: why :meth:`fallen` last said so ("" while standing)
        self.fall_reason = ""

    def state(self) -> np.ndarray:
        """The robot's state now, in our nominal convention (n,)."""
        return self.robot.state(self.data)

    def step(self, u: np.ndarray, force: np.ndarray) -> None:
        """Advance one ``dt`` with torques ``u`` (nominal order, N m) and a WORLD force on the root body (N)."""
        self.data.ctrl[:] = self.robot.to_ctrl(u)
        self.data.xfrc_applied[self.root, :3] = force
        mujoco.mj_step(self.robot.model, self.data)
        self.t += self.dt

    def fallen(self) -> bool:
        """Whether the robot fell: a non-finite state, the root body below half its standing height, or a body other than a foot on the ground.

        :attr:`fall_reason` says which (with the height or the bodies), ``""`` while standing.
        """
        if not np.isfinite(self.data.qpos).all():
            self.fall_reason = "non-finite state"
        elif self.robot.floating and self._height_above_ground(self.data.qpos[:3]) < 0.5 * self.standing_height:
            self.fall_reason = f"base {self._height_above_ground(self.data.qpos[:3]):.3f} m above the ground, below half its standing height"
        else:
            bodies = self.robot.body_contacts(self.data)
            self.fall_reason = f"{', '.join(bodies)} on the ground" if bodies else ""
        return bool(self.fall_reason)

    def _height_above_ground(self, position: np.ndarray) -> float:
        """The height (m) of a point above the ground (the terrain under it, else ``z = 0``)."""
        ground = 0.0 if self.terrain is None else float(np.ravel(self.terrain.height(np.asarray(position[:2])[None]))[0])
        return float(position[2]) - ground

    def foot_forces(self) -> np.ndarray:
        """WORLD-frame ground forces (nc, 3) on the feet now (MuJoCo's solved contacts)."""
        return self.robot.contact_forces(self.data)
