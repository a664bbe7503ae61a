"""The plant a closed loop runs: what the controller does not own (:func:`trajopt.mpc.loop.run_closed_loop`).

A plant advances its true state by one step ``dt`` under a control held over
the step and a WORLD force on its base (pushes, gusts), and reports its state
and whether it fell. :class:`ModelPlant` is our own simulator of any
:class:`models.Model`: the classic 4th-order Runge-Kutta step in the chart of
the step's start point (:mod:`trajopt.integrators`) of

    xdot = f(x, u, t) + G(x) F,

``G(x) F`` the state rate an external force ``F`` adds (``force_rate``; for a
:class:`models.RigidBody`, :func:`rigid_body_force_rate`: ``F / m`` on the
linear velocity). Legged robots run in MuJoCo (:class:`trajopt.mujoco.plant.MujocoPlant`)
or in our KKT contact simulator (:class:`trajopt.mpc.legged_plant.KKTPlant`).
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Protocol

import casadi as ca
import numpy as np

from lie import _backend as B
from models.casadi_names import casadi_name
from models.rigid_body import RigidBody

from ..integrators import RK4
from ..manifold import chart_velocity

#: ``G(x) F``: the state rate (n,) an external WORLD force ``F`` (3,) adds at state ``x`` (SX in, SX out).
ForceRate = Callable[[Any, Any], Any]


class Plant(Protocol):
    """What a closed loop needs of a plant."""

    #: the plant's step (s)
    dt: float
    #: the plant's time (s)
    t: float

    def state(self) -> np.ndarray:
        """The true state ``x`` (n,), in the controller model's convention."""

    def step(self, u: np.ndarray, force: np.ndarray) -> None:
        """Advance by ``dt`` with the control ``u`` held and the WORLD force ``force`` (3,) on the base."""

    def fallen(self) -> bool:
        """Whether the plant is in a state the task counts as failed (a legged robot on the ground)."""


def rigid_body_force_rate(model: RigidBody) -> ForceRate:
    """``G(x) F`` of a :class:`models.RigidBody`: ``F / m`` on the linear velocity (``R^T F / m`` when
    the model's velocity is in the body frame), nothing on the position, attitude and angular velocity."""
    i = model.gen_inds()

    def rate(x: Any, F: Any) -> Any:
        acc = F / model.mass(x) if model.velocity_frame == "world" else model.rotation_matrix(x).T @ F / model.mass(x)
        out = ca.SX.zeros(model.state_dim)
        out[i["v"]] = acc
        return out

    return rate


class ModelPlant:
    """Our simulator of ``model`` from ``x0``: one classic RK4 step of ``xdot = f(x, u, t) + G(x) F`` per ``dt`` (s),
    in the chart of the step's start point, the control ``u`` held and ``F`` the WORLD force (3,) on the base.

    ``force_rate``: how a base force enters the state rate (default for a
    :class:`models.RigidBody`: :func:`rigid_body_force_rate`; other models take
    no force, and a nonzero one raises ``ValueError``).
    """

    def __init__(self, model: Any, x0: Any, dt: float = 1e-3, force_rate: Optional[ForceRate] = None) -> None:
        if not (np.isfinite(dt) and dt > 0):
            raise ValueError(f"dt: expected a plant step in s > 0, got {dt!r}")
        self.model, self.dt, self.t = model, float(dt), 0.0
        self._x = B.check_finite(np.asarray(B.vector(x0, model.state_dim, "x0"), dtype=float).copy(), "x0")
        if force_rate is None and isinstance(model, RigidBody):
            force_rate = rigid_body_force_rate(model)
        self.takes_force = force_rate is not None
        self._step = _forced_rk4(model, force_rate)

    def state(self) -> np.ndarray:
        """A copy of the true state ``x`` (n,), in the model's convention."""
        return self._x.copy()

    def step(self, u: np.ndarray, force: np.ndarray) -> None:
        """One RK4 step of ``dt`` with the control ``u`` (nu,) held and the WORLD force ``force`` (3,) (N)
        on the base; ``ValueError`` for a nonzero force on a model that takes none."""
        if not self.takes_force and np.any(force):
            raise ValueError(f"force: {type(self.model).__name__} takes no external force in this plant")
        self._x = np.asarray(self._step(self._x, u, force, self.t, self.dt)).reshape(-1)
        self.t += self.dt

    def fallen(self) -> bool:
        """Whether the state is no longer finite (our simulator has no ground to fall on)."""
        return not np.isfinite(self._x).all()


def _forced_rk4(model: Any, force_rate: Optional[ForceRate]) -> ca.Function:
    """``(x, u, F, t, h) -> x_next``: one RK4 step in the chart of ``x`` of ``f(x, u, t) + G(x) F``."""
    x, u, t = model.symbols(ca.SX)
    F, h = ca.SX.sym("F", 3), ca.SX.sym("h")

    def xdot(xi: Any, c: float) -> Any:
        f = model.dynamics(xi, u, t + c * h)
        return f if force_rate is None else f + force_rate(xi, F)

    def rate(sigma: Any, c: float) -> Any:
        if isinstance(sigma, (int, float)) and sigma == 0:
            return model.error_jacobian_T(x) @ xdot(x, c)
        xi = model.apply_dx(x, sigma)
        return chart_velocity(model, x, xi, xdot(xi, c))

    x_next = model.apply_dx(x, RK4.chart_step(rate, h))
    return ca.Function(casadi_name(f"{model.name}_forced_rk4"), [x, u, F, t, h], [x_next], ["x", "u", "F", "t", "h"], ["x_next"])
