"""The ground a swinging foot must clear: a smooth upper envelope of the terrain along its path.

A swing from ``start`` (the lift-off foothold) toward ``end`` (the landing
one) is described in the horizontal frame of its path: ``s = u . (p_xy - start)``
along it (``u`` the unit direction) and ``l = v . (p_xy - start)`` across it
(``v = (-u_y, u_x)``). Inside the corridor ``|l| <= half_width``,
``window[0] <= s <= window[1]`` (the path and an overhang at both ends) the
terrain is bounded from above by

    E(p) = z0 + g_x p_x + g_y p_y + sum_k d_k Q((s - s_k) / w)  (+ H(p_x, p_y))

a plane plus smooth steps (plus, for a height map, its own interpolated height ``H``): ``Q`` is the quintic smoothstep clamped to
``[0, 1]`` (``Q(t) = 10 t^3 - 15 t^4 + 6 t^5`` on ``[0, 1]``, C2: its first
two derivatives vanish at both ends), ``w`` the ramp width. A terrain builds
the steps (:meth:`trajopt.terrain.Terrain.swing_profile`) from the largest
height across the corridor, a piecewise-constant function of ``s``: a rise
``d > 0`` at ``s_e`` ramps over ``[s_e - w, s_e]`` (finished at the edge)
and a drop ``d < 0`` over ``[s_e, s_e + w]`` (started at the edge), so every
term lies above its step and ``E`` is at or above the terrain everywhere in
the corridor: a foot with ``p_z - E(p) >= m`` (:func:`clearance`) clears the
terrain by at least ``m``. Smooth terrains (planes) need no steps and no corridor
(``half_width = inf``).

:func:`clearance` and :func:`corridor_coordinates` read a parameter vector
(:meth:`SwingProfile.params`: ``[start (2), u (2), z0, g_x, g_y, (s_k, d_k) * K]``,
padded with ``d = 0`` steps) and run on numpy and CasADi alike.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import casadi as ca
import numpy as np

from lie import _backend as B

#: Entries of a profile's parameter vector before its steps.
PROFILE_HEAD = 7
#: Entries per step ``(s_k, d_k)``.
STEP_SIZE = 2


def smoothstep(t: Any) -> Any:
    """The quintic smoothstep clamped to ``[0, 1]``: 0 for ``t <= 0``, 1 for ``t >= 1``, ``10 t^3 - 15 t^4 + 6 t^5`` between."""
    if B.is_symbolic(t):
        c = ca.fmin(ca.fmax(t, 0.0), 1.0)
    else:
        c = np.clip(t, 0.0, 1.0)
    return c * c * c * (10.0 + c * (-15.0 + 6.0 * c))


@dataclass(frozen=True, eq=False)
class SwingProfile:
    """The envelope of one swing (module docstring).

    ``start`` (2,) and unit ``direction`` (2,) of the path; ``plane`` (3,)
    ``(z0, g_x, g_y)``; ``steps`` (K, 2) rows ``(s_k, d_k)``; ``ramp`` the
    width ``w`` [m]; ``half_width`` of the corridor [m] (``inf``: none);
    ``window`` ``(s_min, s_max)`` [m] of the corridor along the path;
    ``base`` an extra height ``H(x, y)`` (numpy and CasADi) added to the envelope, or ``None``.
    """

    start: np.ndarray
    direction: np.ndarray
    plane: np.ndarray
    steps: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    ramp: float = 0.04
    half_width: float = np.inf
    window: tuple = (-np.inf, np.inf)
    base: Optional[Callable[[Any, Any], Any]] = None

    def __post_init__(self) -> None:
        u = B.vector(self.direction, 2, "direction")
        if abs(np.linalg.norm(u) - 1.0) > 1e-9:
            raise ValueError(f"direction: expected a unit vector, got {u} (norm {np.linalg.norm(u)})")
        object.__setattr__(self, "start", B.vector(self.start, 2, "start"))
        object.__setattr__(self, "direction", u)
        object.__setattr__(self, "plane", B.vector(self.plane, 3, "plane"))
        object.__setattr__(self, "steps", B.check_finite(B.numeric_array(self.steps, "steps").reshape(-1, STEP_SIZE), "steps"))
        if not self.ramp > 0:
            raise ValueError(f"ramp: expected a positive ramp width (m), got {self.ramp}")
        if not self.half_width > 0:
            raise ValueError(f"half_width: expected a positive corridor half width (m) or inf, got {self.half_width}")
        if len(self.window) != 2 or not self.window[0] < self.window[1]:
            raise ValueError(f"window: expected (s_min, s_max) with s_min < s_max, got {self.window}")
        object.__setattr__(self, "window", (float(self.window[0]), float(self.window[1])))

    @property
    def has_corridor(self) -> bool:
        """Whether the swing foot is held within a lateral corridor about its path (a finite ``half_width``, m)."""
        return bool(np.isfinite(self.half_width))

    def params(self, steps: Optional[int] = None) -> np.ndarray:
        """Parameter vector (7 + 2 steps,) of this profile (module docstring), padded with zero steps."""
        steps = len(self.steps) if steps is None else int(steps)
        if steps < len(self.steps):
            raise ValueError(f"steps: this profile has {len(self.steps)} steps, cannot pack it into {steps}")
        table = np.zeros((steps, STEP_SIZE))
        table[: len(self.steps)] = self.steps
        return np.concatenate([self.start, self.direction, self.plane, table.ravel()])

    def envelope(self, xy: Any) -> np.ndarray:
        """``E`` (K,) [m] at horizontal points ``xy`` (2,) or (K, 2)."""
        P = np.atleast_2d(np.asarray(xy, dtype=float))
        return np.ravel(envelope(self.params(), P[:, 0], P[:, 1], len(self.steps), self.ramp, self.base))

    def clearance(self, points: Any) -> np.ndarray:
        """``p_z - E(p)`` (K,) [m] of points (3,) or (K, 3)."""
        P = np.atleast_2d(np.asarray(points, dtype=float))
        return P[:, 2] - self.envelope(P[:, :2])

    def corridor(self, xy: Any) -> np.ndarray:
        """``(l, s)`` (K, 2) [m] of horizontal points: across and along the path (:func:`corridor_coordinates`)."""
        P = np.atleast_2d(np.asarray(xy, dtype=float))
        return np.column_stack(corridor_coordinates(self.params(), P[:, 0], P[:, 1]))

    def corridor_bounds(self) -> tuple:
        """``(lower (2,), upper (2,))`` of :meth:`corridor`: ``|l| <= half_width``, ``s`` within ``window``."""
        return np.array([-self.half_width, self.window[0]]), np.array([self.half_width, self.window[1]])


def envelope(params: Any, x: Any, y: Any, steps: int, ramp: float, base: Optional[Callable[[Any, Any], Any]] = None) -> Any:
    """``E(x, y)`` of a profile parameter vector with ``steps`` steps, plus ``base(x, y)`` when given (numpy or CasADi)."""
    ux, uy = params[2], params[3]
    s = ux * (x - params[0]) + uy * (y - params[1])
    out = params[4] + params[5] * x + params[6] * y
    for k in range(steps):
        s_k, d_k = params[PROFILE_HEAD + STEP_SIZE * k], params[PROFILE_HEAD + STEP_SIZE * k + 1]
        out = out + d_k * smoothstep((s - s_k) / ramp)
    return out if base is None else out + base(x, y)


def clearance(params: Any, p: Any, steps: int, ramp: float, base: Optional[Callable[[Any, Any], Any]] = None) -> Any:
    """Height ``p_z - E(p_x, p_y)`` of a point ``p`` (3,) above a profile's envelope (numpy or CasADi)."""
    return p[2] - envelope(params, p[0], p[1], steps, ramp, base)


def corridor_coordinates(params: Any, x: Any, y: Any) -> tuple:
    """``(l, s)``: the offsets ``v . (p_xy - start)`` across (``v = (-u_y, u_x)``) and ``u . (p_xy - start)``
    along a profile's path (numpy or CasADi)."""
    dx, dy = x - params[0], y - params[1]
    return -params[3] * dx + params[2] * dy, params[2] * dx + params[3] * dy


def fill_valleys(levels: Sequence[float]) -> np.ndarray:
    """The levels of a piecewise-constant profile with every valley filled up to the lower of the
    highest levels on either side: ``min(max(levels[:i+1]), max(levels[i:]))``, at or above each level.

    A swinging foot that clears the filled profile clears the terrain, and
    never dives into a gap between two footings (whose steep walls would
    make the envelope's ramps needlessly stiff constraints)."""
    z = np.asarray(levels, dtype=float)
    return np.minimum(np.maximum.accumulate(z), np.maximum.accumulate(z[::-1])[::-1])


def steps_of_levels(breaks: Sequence[float], levels: Sequence[float], ramp: float) -> tuple:
    """``(z0, steps (K, 2))`` of a piecewise-constant profile: ``levels[0]`` before ``breaks[0]``,
    ``levels[i]`` on ``[breaks[i-1], breaks[i]]``, ``levels[-1]`` after the last break (module docstring:
    rises ramp before their break, drops after it). Equal neighbouring levels give no step."""
    if len(levels) != len(breaks) + 1:
        raise ValueError(f"levels: expected {len(breaks) + 1} levels for {len(breaks)} breaks, got {len(levels)}")
    steps = []
    for s_e, before, after in zip(breaks, levels[:-1], levels[1:]):
        d = float(after) - float(before)
        if d > 0:
            steps.append((float(s_e) - ramp, d))
        elif d < 0:
            steps.append((float(s_e), d))
    return float(levels[0]), np.array(steps, dtype=float).reshape(-1, STEP_SIZE)
