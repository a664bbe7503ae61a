"""Contact schedules: which feet are in stance at each knot, and gait templates.

A :class:`ContactSchedule` is an explicit boolean table ``stance[k, i]`` (knot
``k = 0..N-1``, foot ``i``) with the knot spacing ``dt``. Knot ``k`` is at time
``k dt``; a foot in stance at knot ``k`` is on the ground there (zero velocity,
force allowed), a swing knot has zero contact force.

Periodic gaits are described by a period ``T``, a duty factor ``beta`` (the
fraction of the period each foot is in stance) and a phase offset ``o_i`` per
foot: foot ``i`` is in stance at time ``t`` iff ``frac(t / T - o_i) < beta``.
With ``T = 0.6`` s, ``dt = 0.02`` s and ``beta = 17/30`` the trot has 2 support
knots, 13 knots with one diagonal pair swinging, 2 support knots, 13 knots with
the other pair swinging (crocoddyl's Go1 trot), plus the closing knot.

The gait templates (:func:`gait`, :func:`jump`) key their columns by leg role,
``FL``, ``FR``, ``HL``, ``HR`` (front-left, front-right, hind-left,
hind-right: :data:`models.quadruped.LEG_ROLES`), so they fit every quadruped;
:meth:`ContactSchedule.for_robot` renames and reorders the columns to a
robot's feet through its :attr:`models.LeggedRobot.leg_roles` (the legged
problems call it). A schedule may also be keyed by the robot's foot frames.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Sequence, Tuple

import numpy as np

from lie import _backend as B
from models.quadruped import LEG_ROLES


@dataclass(frozen=True)
class ContactSchedule:
    """Stance table ``stance`` (N, n_feet) of booleans, ``dt`` (s) between knots."""

    foot_names: Tuple[str, ...]
    stance: np.ndarray
    dt: float
    name: str = "custom"

    def __post_init__(self) -> None:
        stance = np.asarray(self.stance, dtype=bool)
        if stance.ndim != 2 or stance.shape[1] != len(self.foot_names):
            raise ValueError(f"stance: expected shape (N, {len(self.foot_names)}), got {stance.shape}")
        if stance.shape[0] < 2:
            raise ValueError(f"stance: expected at least 2 knots, got {stance.shape[0]}")
        if not self.dt > 0:
            raise ValueError(f"dt: expected a positive time step, got {self.dt}")
        object.__setattr__(self, "foot_names", tuple(self.foot_names))
        object.__setattr__(self, "stance", stance)

    @property
    def N(self) -> int:
        """Number of knots."""
        return self.stance.shape[0]

    @property
    def duration(self) -> float:
        """Time from the first to the last knot, ``(N - 1) dt``."""
        return (self.N - 1) * self.dt

    @property
    def times(self) -> np.ndarray:
        """Knot times ``k dt`` (N,)."""
        return np.arange(self.N) * self.dt

    def check_length(self, N: int) -> None:
        """Raise ``ValueError`` unless the schedule has ``N`` knots."""
        if self.N != N:
            raise ValueError(f"schedule: has {self.N} knots but the problem has N = {N}")

    def swings(self, foot: int) -> List[Tuple[int, int]]:
        """Swing phases of foot ``foot`` as ``(first, last)`` swing knot pairs (inclusive)."""
        col = self.stance[:, foot]
        phases, k = [], 0
        while k < self.N:
            if not col[k]:
                start = k
                while k < self.N and not col[k]:
                    k += 1
                phases.append((start, k - 1))
            else:
                k += 1
        return phases

    def touchdown_knot(self, foot: int, k: int) -> int:
        """First knot of the stance phase containing knot ``k`` (which must be a stance knot)."""
        if not self.stance[k, foot]:
            raise ValueError(f"k: knot {k} is a swing knot of {self.foot_names[foot]}")
        while k > 0 and self.stance[k - 1, foot]:
            k -= 1
        return k

    def for_robot(self, robot: Any) -> "ContactSchedule":
        """This schedule with its columns named and ordered as ``robot.kinematics_bodies``.

        Each column key is a contact frame of the robot or a leg role of its
        :attr:`~models.LeggedRobot.leg_roles` (contact ``i`` is leg end ``i``'s
        when the robot has one contact per leg). The schedule comes back
        unchanged when its keys are not a permutation of the robot's contacts
        (the caller reports the mismatch); ``ValueError`` when it is keyed by
        leg roles and the robot has none.
        """
        bodies = tuple(robot.kinematics_bodies)
        if self.foot_names == bodies:
            return self
        roles = getattr(robot, "leg_roles", None)
        by_key = {body: i for i, body in enumerate(bodies)}
        if roles is not None and len(roles) == len(bodies):
            by_key.update({role: i for i, role in enumerate(roles)})
        elif set(self.foot_names) <= set(LEG_ROLES) and not set(self.foot_names) & set(bodies):
            raise ValueError(f"schedule: keyed by leg roles {list(self.foot_names)} but the robot has no leg roles (not a quadruped); key it by its contacts {list(bodies)}")
        columns = [by_key.get(key) for key in self.foot_names]
        if None in columns or sorted(columns) != list(range(len(bodies))):
            return self
        stance = np.empty_like(self.stance)
        stance[:, columns] = self.stance
        return ContactSchedule(bodies, stance, self.dt, self.name)

    def diagram(self) -> str:
        """A text gait diagram: one row per foot, ``#`` stance, ``.`` swing."""
        width = max(len(n) for n in self.foot_names)
        rows = [f"{self.name}: {self.N} knots, dt = {self.dt:g} s, duration {self.duration:g} s"]
        rows += [f"{n:>{width}} |{''.join('#' if s else '.' for s in self.stance[:, i])}|" for i, n in enumerate(self.foot_names)]
        return "\n".join(rows)

    def __str__(self) -> str:
        return self.diagram()


def periodic_schedule(
    foot_names: Sequence[str],
    offsets: Sequence[float],
    duty_factor: float,
    period: float,
    dt: float,
    cycles: int = 1,
    name: str = "periodic",
) -> ContactSchedule:
    """Periodic gait: foot ``i`` in stance at ``t = k dt`` iff ``frac(t/period - offsets[i]) < duty_factor``.

    ``N = cycles * round(period / dt) + 1`` knots. A duty factor of 1 is standing;
    below 0.5 with equal offsets there are flight phases (pronking).
    """
    if len(offsets) != len(foot_names):
        raise ValueError(f"offsets: expected {len(foot_names)} values (one per foot), got {len(offsets)}")
    if not 0 < duty_factor <= 1:
        raise ValueError(f"duty_factor: expected a value in (0, 1], got {duty_factor}")
    if cycles < 1:
        raise ValueError(f"cycles: expected at least 1, got {cycles}")
    dt, period = B.real(dt, "dt", lower=0.0, strict=True), B.real(period, "period", lower=0.0, strict=True)
    knots_per_period = int(round(period / dt))
    if knots_per_period < 2 or abs(knots_per_period * dt - period) > 1e-9 * period:
        raise ValueError(f"period: {period} s is not a multiple (>= 2) of dt = {dt} s")
    k = np.arange(cycles * knots_per_period + 1)
    phase = np.mod(k[:, None] / knots_per_period - np.asarray(offsets, dtype=float)[None, :], 1.0)
    stance = phase < duty_factor - 1e-12
    return ContactSchedule(tuple(foot_names), stance, dt, name)


#: Phase offsets of the quadruped gaits, legs in LEG_ROLES order (FL, FR, HL, HR).
GAIT_OFFSETS = {
    "trot": (0.0, 0.5, 0.5, 0.0),  # diagonal pairs FL+RR and FR+RL alternate
    "pace": (0.0, 0.5, 0.0, 0.5),  # lateral pairs FL+RL and FR+RR alternate
    "bound": (0.0, 0.0, 0.5, 0.5),  # front pair, then hind pair
    "pronk": (0.0, 0.0, 0.0, 0.0),  # all four together, flight between
}


#: The leg pairs that step together in each two-beat gait (LEG_ROLES indices): :func:`gait_name` tests them.
GAIT_PAIRS = {"trot": ((0, 3), (1, 2)), "pace": ((0, 2), (1, 3)), "bound": ((0, 1), (2, 3))}
#: The fraction of knots at which a pair's feet must agree (both down or both up) to count as stepping together.
IN_STEP = 0.9


def gait_name(stance: Any, roles: Sequence[str]) -> Tuple[str, float]:
    """Which quadruped gait a stance table (N, 4) shows, and how clearly: ``(name, agreement)``.

    ``roles`` are the columns' leg roles (:data:`LEG_ROLES` in any order). Each
    two-beat gait of :data:`GAIT_PAIRS` is scored by the fraction of knots at
    which the feet of each of its pairs agree (the smaller of its two pairs).
    ``"pronk"`` when every gait scores at least :data:`IN_STEP` (all four feet
    together), else the best of ``"trot"``, ``"pace"``, ``"bound"`` when it
    does, else ``"four-beat"`` (no pair in step: a walk or a gallop) with the
    best score. ``"stand"`` when no foot ever lifts. Flight phases (no foot
    down) are not part of the name: a trot or a bound may have them.
    """
    table = np.asarray(stance, dtype=bool)
    if table.ndim != 2 or table.shape[1] != 4 or sorted(roles) != sorted(LEG_ROLES):
        raise ValueError(f"stance: expected (N, 4) columns with the leg roles {LEG_ROLES}, got shape {table.shape} and roles {list(roles)}")
    if table.all():
        return "stand", 1.0
    columns = table[:, [list(roles).index(role) for role in LEG_ROLES]]
    scores = {name: min(float(np.mean(columns[:, a] == columns[:, b])) for a, b in pairs) for name, pairs in GAIT_PAIRS.items()}
    best = max(scores, key=scores.get)
    if min(scores.values()) >= IN_STEP:
        return "pronk", min(scores.values())
    return (best if scores[best] >= IN_STEP else "four-beat"), scores[best]


#: Phase offsets of a biped's gaits by the side of the sole ("L", "R"): in a ``walk`` the soles alternate.
BIPED_OFFSETS = {"walk": {"L": 0.0, "R": 0.5}}


def walk(sides: Sequence[str], foot_names: Sequence[str], dt: float = 0.04, period: float = 0.72, duty_factor: float = 0.6, cycles: int = 1) -> ContactSchedule:
    """A biped's walk: each contact point (``foot_names``, e.g. a sole's corners) stands with its sole's side
    (``sides``, "L" or "R") at the phase offsets of :data:`BIPED_OFFSETS`; the soles alternate, both down for
    ``duty_factor - 1/2`` of the period twice a cycle."""
    if len(sides) != len(foot_names) or any(side not in ("L", "R") for side in sides):
        raise ValueError(f"sides: expected 'L' or 'R' for each of the {len(foot_names)} contact points, got {list(sides)}")
    offsets = [BIPED_OFFSETS["walk"][side] for side in sides]
    return periodic_schedule(foot_names, offsets, duty_factor, period, dt, cycles, "walk")


def gait(
    name: str,
    dt: float = 0.02,
    period: float = 0.6,
    duty_factor: float | None = None,
    cycles: int = 1,
    foot_names: Sequence[str] = LEG_ROLES,
) -> ContactSchedule:
    """A quadruped gait template: ``trot``, ``pace``, ``bound``, ``pronk`` or ``stand``.

    Columns are ``foot_names``: the leg roles by default (FL, FR, HL, HR; the
    phase offsets are in that order), or any four names in that order.
    Default duty factors: 17/30 for trot/pace/bound (two support knots between
    the swings of the default 30-interval period), 0.5 for pronk (half the
    period in flight), 1 for stand. See :func:`jump` for the jump.
    """
    defaults = {"trot": 17 / 30, "pace": 17 / 30, "bound": 17 / 30, "pronk": 0.5, "stand": 1.0}
    if name not in defaults:
        raise ValueError(f"name: unknown gait {name!r}; known gaits: {sorted(defaults) + ['jump']}")
    beta = defaults[name] if duty_factor is None else duty_factor
    offsets = GAIT_OFFSETS.get(name, (0.0,) * len(foot_names))
    return periodic_schedule(foot_names, offsets, beta, period, dt, cycles, name)


def jump(dt: float = 0.02, crouch_knots: int = 15, flight_knots: int = 10, landing_knots: int = 15, foot_names: Sequence[str] = LEG_ROLES) -> ContactSchedule:
    """Jump: all feet in stance while crouching and pushing off, all in the air, all landing (columns ``foot_names``)."""
    for arg, n in (("crouch_knots", crouch_knots), ("flight_knots", flight_knots), ("landing_knots", landing_knots)):
        if n < 1:
            raise ValueError(f"{arg}: expected at least 1, got {n}")
    col = np.r_[np.ones(crouch_knots, bool), np.zeros(flight_knots, bool), np.ones(landing_knots, bool)]
    return ContactSchedule(tuple(foot_names), np.repeat(col[:, None], len(foot_names), axis=1), dt, "jump")
