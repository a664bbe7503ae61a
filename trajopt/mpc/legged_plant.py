"""Our own plant for legged robots: rigid point contacts on flat ground, no MuJoCo needed.

:class:`KKTPlant` steps a floating-base robot at ``dt`` (1 ms) with
pinocchio's dynamics and the contact model the plans assume, with the
contact set decided by the state instead of a schedule:

1. a foot is a contact candidate when it is on or below the ground
   (``z <= 0``) and not moving away from it (``z' <= 0``), or when it was in
   contact at the previous step;
2. a candidate that arrives (it was not in contact) triggers an inelastic
   impact of all candidates: ``v+ = v - M^-1 J^T (J M^-1 J^T)^-1 J v`` (the
   contacts stop, with the least kinetic-energy change);
3. the KKT contact dynamics of the candidates
   ``[M J^T; J 0] [a; -f] = [tau - C + F_ext; -Jdot v - k_p z - k_d J v]``
   (the last two terms, Baumgarte, pull a sunk foot back to ``z = 0``) give
   the accelerations and the WORLD-frame contact forces; a candidate whose
   normal force comes out negative is released and the solve repeated
   (active-set iteration, at most one pass per foot);
4. semi-implicit Euler: ``v <- v + a dt``, ``q <- integrate(q, v dt)``.

The contacts stick: friction is not limited (a plan that keeps inside its
friction cones does not need it; MuJoCo, the default plant, slides). The
WORLD force on the base (pushes) acts at the base frame's origin. The robot
has fallen when its base is below half its standing height.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from lie import quat_to_rot

from ..sim.integrate import integrate
from ..sim.pin_numerics import PinNumerics

#: Baumgarte gains pulling a sunk contact back to the ground: stiffness (1/s^2) and damping (1/s).
BAUMGARTE = (400.0, 40.0)


class KKTPlant:
    """``robot`` (a floating-base :class:`models.MultibodyModel` with point feet) from ``x0``, stepped every ``dt`` (s).

    Rigid, sticking point contacts on the ground ``z = 0``: a foot touching down triggers an
    inelastic impact; the KKT contact dynamics with Baumgarte terms (:data:`BAUMGARTE`) give the
    accelerations and forces, a foot whose normal force comes out negative is released;
    semi-implicit Euler. Friction is unlimited. ``ValueError`` for a robot without a floating base
    or feet, or a ``dt`` that is not positive.
    """

    def __init__(self, robot: Any, x0: np.ndarray, dt: float = 1e-3) -> None:
        if not getattr(robot, "is_floating", False) or robot.nc == 0:
            raise ValueError("robot: the KKT plant needs a floating-base robot with point feet (kinematics bodies)")
        if not (np.isfinite(dt) and dt > 0):
            raise ValueError(f"dt: expected a plant step in s > 0, got {dt!r}")
        self.robot, self.dt, self.t = robot, float(dt), 0.0
        self.numerics = PinNumerics(robot)
        self.feet = [self.numerics.frame_id(f) for f in robot.kinematics_bodies]
        self.B = robot.B_func()
        self.q, self.v = self.numerics.split_state(np.asarray(x0, dtype=float))
        self.q, self.v = self.q.copy(), self.v.copy()
        self.contact = np.zeros(robot.nc, dtype=bool)
        self.forces = np.zeros((robot.nc, 3))
        self.standing_height = float(self.q[2])
        self.fall_reason = ""

    def state(self) -> np.ndarray:
        """The true state ``[q; v]`` (nq + nv,) in the robot's convention (base position, quaternion, joints; velocities)."""
        return np.concatenate([self.q, self.v])

    def _feet(self) -> tuple:
        """Positions (nc, 3), velocities (nc, 3), world-aligned Jacobians (nc, 3, nv) and drifts (nc, 3) of the feet."""
        num = self.numerics
        num.update_kinematics(self.q, self.v)
        p = np.array([num.frame_placement(f)[:3, 3] for f in self.feet])
        J = np.array([num.frame_jacobian(f)[:3] for f in self.feet])
        drift = np.array([num.frame_drift(f)[:3] for f in self.feet])
        return p, J @ self.v, J, drift

    def step(self, u: np.ndarray, force: np.ndarray) -> None:
        """Advance by ``dt`` with the joint torques ``u`` (nu,) held and the WORLD force ``force`` (3,) (N) on the base.

        The contact set, impacts and the KKT dynamics are those of the module's steps 1-4;
        ``contact`` and ``forces`` (nc, 3), WORLD, N, are updated.
        """
        num, nv = self.numerics, self.robot.nv
        p, pdot, J, drift = self._feet()
        candidate = self.contact | ((p[:, 2] <= 0.0) & (pdot[:, 2] <= 0.0))
        M = num.mass(self.q)
        if (candidate & ~self.contact).any():  # an arriving foot: inelastic impact of every candidate
            Jc = J[candidate].reshape(-1, nv)
            Minv_JT = np.linalg.solve(M, Jc.T)
            self.v = self.v - Minv_JT @ np.linalg.lstsq(Jc @ Minv_JT, Jc @ self.v, rcond=None)[0]
            p, pdot, J, drift = self._feet()
        tau = self.B @ np.asarray(u, dtype=float) - num.bias(self.q, self.v)
        tau[:3] += quat_to_rot(self.robot.base_orientation(self.q)).T @ np.asarray(force, dtype=float)  # a WORLD force at the base origin, in the base frame
        kp, kd = BAUMGARTE
        forces = np.zeros((self.robot.nc, 3))
        for _ in range(self.robot.nc + 1):
            idx = np.flatnonzero(candidate)
            if idx.size == 0:
                a = np.linalg.solve(M, tau)
                break
            Jc = J[idx].reshape(-1, nv)
            rhs = -(drift[idx] + kd * pdot[idx] + kp * np.where(np.arange(3) == 2, np.minimum(p[idx], 0.0), 0.0)).reshape(-1)
            K = np.block([[M, Jc.T], [Jc, np.zeros((Jc.shape[0], Jc.shape[0]))]])
            sol = np.linalg.lstsq(K, np.concatenate([tau, rhs]), rcond=None)[0]
            a, f = sol[:nv], -sol[nv:].reshape(-1, 3)
            pulling = f[:, 2] < 0.0
            if not pulling.any():
                forces[idx] = f
                break
            candidate[idx[pulling]] = False
        self.contact, self.forces = candidate, forces
        self.v = self.v + a * self.dt
        self.q = integrate(num.pin_model, self.q, self.v, self.dt)
        self.t += self.dt

    def fallen(self) -> bool:
        """Whether the state is not finite or the base is below half its standing height; ``fall_reason`` says which."""
        if not np.isfinite(self.q).all() or not np.isfinite(self.v).all():
            self.fall_reason = "non-finite state"
        elif self.q[2] < 0.5 * self.standing_height:
            self.fall_reason = f"base at {self.q[2]:.3f} m, below half its standing height"
        else:
            self.fall_reason = ""
        return bool(self.fall_reason)

    def foot_forces(self) -> np.ndarray:
        """WORLD-frame contact forces (nc, 3) of the last step."""
        return self.forces.copy()
