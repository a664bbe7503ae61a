"""Gaits over terrain: a slope, stairs, stepping stones and a gap (:mod:`trajopt.terrain`).

Each problem is a :class:`trajopt.legged.LeggedProblem` with a ``terrain``:
footholds on the terrain's foot regions, friction about the local normal,
swinging feet ``clearance`` above the terrain at the knots and at 10 points
inside every interval, base height and tilt referred to the terrain
(:mod:`trajopt.legged.terrain_constraints`). The robot starts standing on the
terrain at the origin, facing ``+x``; ``payload`` (kg, default 0) loads its
trunk as in :mod:`problems.legged`. Defaults on the Go1:

- ``go1-slope``: two trot cycles (go1-trot's timing) up a 15 deg slope,
  0.15 m forward per cycle.
- ``go1-stairs``: up three steps of 8 cm rise and 25 cm run, the first edge
  where the feet land mid-tread, one step per trot cycle (0.25 m), as many
  cycles as it takes for every foot to stand on the top (four on the Go1).
- ``go1-stones``: two trot cycles over lanes of 10 cm x 10 cm stones 10 cm
  apart under each side's feet, one stone per step (0.2 m); the feet stand on
  stones only (a pit 0.3 m deep between them).
- ``go1-gap``: a jump across a 20 cm gap that starts 5 cm ahead of the front
  feet; the jump is as long as it takes to land every foot 5 cm past the far
  edge (0.68 m on the Go1), 0.3 s crouch and push-off, 0.2 s flight, 0.3 s landing
  that ends standing still, the shanks held 1 cm above the terrain at every
  knot (a hind knee hangs over the far edge when landing; ``link_clearance``).

``slope``, ``stairs``, ``stones`` and ``gap`` are the same problems for any
quadruped (``robot=NAME`` from example-robot-data or ``urdf=PATH``, see
:mod:`problems.quadrupeds`), every Go1 length (steps, rises, runs, stones,
gaps, apex, clearance) scaled by leg length and every time by its square root
(:class:`trajopt.legged.scaling.GaitScale`); on the Go1 they are the
``go1-*`` problems. Angles are in degrees. A terrain the robot cannot manage
raises ``ValueError`` before the solve when it can be told
(:mod:`trajopt.legged.terrain_plan`: a step above the hips, footholds out of
reach, a flight needing more energy than the legs give).
"""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

import numpy as np

from models import Go1
from trajopt import terrain as T
from trajopt.legged import LeggedProblem, LeggedWeights, gait, jump
from trajopt.legged.scaling import GaitScale

from .legged import JUMP_CONTROL_RATE
from .quadrupeds import KNOTS_PER_PERIOD, Feet, quadruped
from .registry import register

#: Go1 values (m, s, deg) of the terrain problems (module docstring).
GO1_TERRAIN = {
    "slope": {"angle": 15.0, "step": 0.15, "apex": 0.08, "cycles": 2},
    "stairs": {"rise": 0.08, "run": 0.25, "count": 3, "apex": 0.08},
    "stones": {"size": 0.1, "gap": 0.1, "apex": 0.08, "cycles": 2, "depth": 0.3},
    "gap": {"width": 0.2, "apex": 0.05, "edge": 0.05, "dt": 0.02},
}
#: Cost weights of the gap jumps that differ from the other gaits' (:class:`trajopt.legged.LeggedWeights`):
#: ``base_orientation`` 100 (10 elsewhere), so that the landing ends level with every foot loaded
#: (docs/design/legged.md).
GAP_WEIGHTS = {"base_orientation": 100.0}
#: Go1 values shared by the walking problems: gait period (s), clearance (m).
GO1_PERIOD, GO1_CLEARANCE = 0.6, 0.02


def _feet(robot: Any) -> np.ndarray:
    """The standing pose's feet (nf, 3), world frame."""
    return np.asarray(robot.kinematics(robot.init_state()), dtype=float).reshape(robot.nc, 3)


def _front_hind(robot: Any) -> tuple:
    """``(x of the front feet, x of the hind feet)`` when standing (means of each pair)."""
    feet, roles = _feet(robot), robot.leg_roles or ("FL", "FR", "HL", "HR")
    front = np.mean([feet[i, 0] for i, r in enumerate(roles) if r.startswith("F")])
    hind = np.mean([feet[i, 0] for i, r in enumerate(roles) if r.startswith("H")])
    return float(front), float(hind)


def _walk(robot: Any, terrain: T.Terrain, step: float, apex: float, cycles: int, period: float, clearance: float, formulation: str, friction: str, name: str) -> LeggedProblem:
    schedule = gait("trot", dt=period / KNOTS_PER_PERIOD, period=period, cycles=cycles)
    return LeggedProblem(robot, schedule, displacement=(step * cycles, 0.0, 0.0), swing_apex=apex, formulation=formulation, friction=friction, terrain=terrain, clearance=clearance, name=name)


def _cycles(cycles: Any) -> int:
    if isinstance(cycles, bool) or not isinstance(cycles, (int, np.integer)) or cycles < 1:
        raise ValueError(f"cycles: expected an int >= 1, got {cycles!r}")
    return int(cycles)


# ------------------------------------------------------------------ builders (any quadruped)
def slope_problem(robot: Any, angle: Optional[float], step: Optional[float], apex: Optional[float], cycles: Optional[int], period: Optional[float], clearance: Optional[float], formulation: str, friction: str, name: str) -> LeggedProblem:
    """A trot up (``angle > 0``, degrees) or down an inclined plane; unset values from :data:`GO1_TERRAIN` scaled to ``robot``."""
    scale, go1 = GaitScale.of(robot), GO1_TERRAIN["slope"]
    angle = go1["angle"] if angle is None else angle
    terrain = T.Slope(math.radians(angle))
    return _walk(
        robot, terrain, scale.distance(go1["step"]) if step is None else step, scale.distance(go1["apex"]) if apex is None else apex,
        _cycles(go1["cycles"] if cycles is None else cycles), scale.duration(GO1_PERIOD) if period is None else period,
        scale.distance(GO1_CLEARANCE) if clearance is None else clearance, formulation, friction, name,
    )  # fmt: skip


def stairs_problem(robot: Any, rise: Optional[float], run: Optional[float], count: int, down: bool, apex: Optional[float], cycles: Optional[int], period: Optional[float], clearance: Optional[float], formulation: str, friction: str, name: str) -> LeggedProblem:
    """A trot up (or ``down``) ``count`` steps, one tread per trot cycle (module docstring).

    The first edge is placed so that the front and hind feet land the same
    distance before and after the middle of their treads; ``cycles`` (default)
    is the fewest that bring every foot onto the last tread (top or bottom).
    That tread is 1 m long, or longer where the robot needs it: at least its
    front-to-hind foot distance plus a run, so that the front feet stand a
    half tread or more from its far end while the hind feet stand on its near
    half (ANYmal C's front feet were planned past the end of a 1 m tread).
    """
    scale, go1 = GaitScale.of(robot), GO1_TERRAIN["stairs"]
    rise = scale.distance(go1["rise"]) if rise is None else rise
    run = scale.distance(go1["run"]) if run is None else run
    if not (np.isfinite(run) and run > 0):
        raise ValueError(f"run: expected a positive tread length (m), got {run!r}")
    front, hind = _front_hind(robot)
    offset = ((front - hind) % run) / 2  # front feet this far past the middle of their treads, hind feet as far before
    start = front + run - run / 2 - offset
    if cycles is None:
        last_edge = start + (count - 1) * run
        cycles = max(1, math.ceil((last_edge + run / 2 - offset - hind) / run - 1e-9))
    terrain = T.stairs(rise=rise, run=run, count=count, start=start, width=max(1.2, 3 * (front - hind)), landing=max(1.0, 2 * run, (front - hind) + run), down=down)
    return _walk(
        robot, terrain, run, scale.distance(go1["apex"]) if apex is None else apex, _cycles(cycles),
        scale.duration(GO1_PERIOD) if period is None else period, scale.distance(GO1_CLEARANCE) if clearance is None else clearance, formulation, friction, name,
    )  # fmt: skip


def stones_problem(robot: Any, size: Optional[float], gap: Optional[float], apex: Optional[float], cycles: Optional[int], period: Optional[float], clearance: Optional[float], formulation: str, friction: str, name: str) -> LeggedProblem:
    """A trot over lanes of square stones, one stone per step (module docstring)."""
    scale, go1 = GaitScale.of(robot), GO1_TERRAIN["stones"]
    size = scale.distance(go1["size"]) if size is None else size
    gap = scale.distance(go1["gap"]) if gap is None else gap
    cycles = _cycles(go1["cycles"] if cycles is None else cycles)
    feet = _feet(robot)
    lanes = sorted({round(float(y), 3) for y in feet[:, 1]})
    pitch = size + gap
    first = pitch * (math.floor(feet[:, 0].min() / pitch) - 1)
    count = int(math.ceil((feet[:, 0].max() + pitch * cycles - first) / pitch)) + 2
    terrain = T.stone_lanes(lanes, size=size, gap=gap, first=first, count=count, depth=scale.distance(go1["depth"]))
    return _walk(
        robot, terrain, pitch, scale.distance(go1["apex"]) if apex is None else apex, cycles,
        scale.duration(GO1_PERIOD) if period is None else period, scale.distance(GO1_CLEARANCE) if clearance is None else clearance, formulation, friction, name,
    )  # fmt: skip


def gap_problem(robot: Any, width: Optional[float], length: Optional[float], apex: Optional[float], dt: Optional[float], knots: Sequence[int], clearance: Optional[float], control_rate: Optional[float], link_clearance: Optional[float], formulation: str, friction: str, name: str) -> LeggedProblem:
    """A jump across a gap (module docstring): crouch, flight and landing knots ``knots``.

    ``length`` (the feet's jump) defaults to the gap plus the front-to-hind
    foot distance plus twice the edge distance, so that every foot lands as
    far past the far edge as the front feet stood before the near one. The
    robot ends at rest (``end_at_rest``), its shanks ``link_clearance`` (m)
    above the terrain at every knot (:mod:`trajopt.legged.link_clearance`;
    ``None``: not imposed), with the weights :data:`GAP_WEIGHTS`. The
    registered gaps hold them 1 cm above it: at 0 the landing had two
    postures of nearly equal cost, which a solve reached depending on the
    round-off of its guess, and in one of them the hind thighs met the far
    edge in MuJoCo (docs/design/terrain.md).
    """
    scale, go1 = GaitScale.of(robot), GO1_TERRAIN["gap"]
    width = scale.distance(go1["width"]) if width is None else width
    edge = scale.distance(go1["edge"])
    front, hind = _front_hind(robot)
    length = (front - hind) + width + 2 * edge if length is None else length
    if len(knots) != 3:
        raise ValueError(f"knots: expected 3 knot counts (crouch, flight, landing), got {tuple(knots)}")
    schedule = jump(dt=scale.duration(go1["dt"]) if dt is None else dt, crouch_knots=knots[0], flight_knots=knots[1], landing_knots=knots[2])
    terrain = T.gap(width=width, start=front + edge, depth=scale.distance(0.5), before=max(1.0, 3 * (front - hind)), after=max(1.0, length + 3 * (front - hind)), lateral=max(1.2, 3 * (front - hind)))
    if control_rate is None:
        control_rate = JUMP_CONTROL_RATE
    problem = LeggedProblem(
        robot, schedule, displacement=(length, 0.0, 0.0), swing_apex=scale.distance(go1["apex"]) if apex is None else apex, formulation=formulation,
        friction=friction, weights=LeggedWeights(control_rate=control_rate, **GAP_WEIGHTS), terrain=terrain,
        clearance=scale.distance(GO1_CLEARANCE) if clearance is None else clearance, link_clearance=link_clearance, end_at_rest=True, name=name,
    )  # fmt: skip
    return problem


# ------------------------------------------------------------------ the Go1 problems
@register("go1-slope")
def go1_slope(angle: float = 15.0, step: float = 0.15, apex: float = 0.08, cycles: int = 2, mu: float = 0.7, period: float = 0.6, clearance: float = 0.02, formulation: str = "inverse", friction: str = "pyramid", payload: float = 0.0) -> LeggedProblem:
    """Go1 trot up a 15 deg slope, two cycles of 0.15 m; angle in degrees, step in m per cycle."""
    return slope_problem(Go1(mu=mu, payload=payload), angle, step, apex, cycles, period, clearance, formulation, friction, "go1-slope")


@register("go1-stairs")
def go1_stairs(rise: float = 0.08, run: float = 0.25, count: int = 3, down: bool = False, apex: float = 0.08, cycles: Optional[int] = None, mu: float = 0.7, period: float = 0.6, clearance: float = 0.02, formulation: str = "inverse", friction: str = "pyramid", payload: float = 0.0) -> LeggedProblem:
    """Go1 trot up three stairs of 8 cm rise and 25 cm run, one tread per cycle; down=true walks down them."""
    return stairs_problem(Go1(mu=mu, payload=payload), rise, run, count, down, apex, cycles, period, clearance, formulation, friction, "go1-stairs")


@register("go1-stones")
def go1_stones(size: float = 0.1, gap: float = 0.1, apex: float = 0.08, cycles: int = 2, mu: float = 0.7, period: float = 0.6, clearance: float = 0.02, formulation: str = "inverse", friction: str = "pyramid", payload: float = 0.0) -> LeggedProblem:
    """Go1 trot over lanes of 10 cm square stepping stones 10 cm apart, feet on the stones only."""
    return stones_problem(Go1(mu=mu, payload=payload), size, gap, apex, cycles, period, clearance, formulation, friction, "go1-stones")


@register("go1-gap")
def go1_gap(width: float = 0.2, length: Optional[float] = None, apex: float = 0.05, mu: float = 0.7, dt: float = 0.02, knots: Sequence[int] = (15, 10, 15), clearance: float = 0.02, control_rate: Optional[float] = None, link_clearance: Optional[float] = 0.01, formulation: str = "inverse", friction: str = "pyramid", payload: float = 0.0) -> LeggedProblem:
    """Go1 jump across a 20 cm gap, every foot landing 5 cm past the far edge unless a length is given; ends at rest."""
    return gap_problem(Go1(mu=mu, payload=payload), width, length, apex, dt, knots, clearance, control_rate, link_clearance, formulation, friction, "go1-gap")


# ------------------------------------------------------------------ any quadruped
@register("slope")
def slope(robot: Optional[str] = None, urdf: Optional[str] = None, feet: Feet = None, knees: Optional[str] = None, angle: Optional[float] = None, step: Optional[float] = None, apex: Optional[float] = None, cycles: Optional[int] = None, mu: float = 0.7, period: Optional[float] = None, clearance: Optional[float] = None, formulation: str = "inverse", friction: str = "pyramid", payload: float = 0.0) -> LeggedProblem:
    """Trot up a slope for any quadruped (robot=NAME or urdf=PATH, feet=A,B,C,D): go1-slope scaled to its legs."""
    model = quadruped(robot, urdf, feet, knees, mu, payload)
    return slope_problem(model, angle, step, apex, cycles, period, clearance, formulation, friction, f"{model.name}-slope")


@register("stairs")
def stairs(robot: Optional[str] = None, urdf: Optional[str] = None, feet: Feet = None, knees: Optional[str] = None, rise: Optional[float] = None, run: Optional[float] = None, count: int = 3, down: bool = False, apex: Optional[float] = None, cycles: Optional[int] = None, mu: float = 0.7, period: Optional[float] = None, clearance: Optional[float] = None, formulation: str = "inverse", friction: str = "pyramid", payload: float = 0.0) -> LeggedProblem:
    """Trot up stairs for any quadruped (robot=NAME or urdf=PATH, feet=A,B,C,D): go1-stairs scaled to its legs."""
    model = quadruped(robot, urdf, feet, knees, mu, payload)
    return stairs_problem(model, rise, run, count, down, apex, cycles, period, clearance, formulation, friction, f"{model.name}-stairs")


@register("stones")
def stones(robot: Optional[str] = None, urdf: Optional[str] = None, feet: Feet = None, knees: Optional[str] = None, size: Optional[float] = None, gap: Optional[float] = None, apex: Optional[float] = None, cycles: Optional[int] = None, mu: float = 0.7, period: Optional[float] = None, clearance: Optional[float] = None, formulation: str = "inverse", friction: str = "pyramid", payload: float = 0.0) -> LeggedProblem:
    """Trot over stepping stones for any quadruped (robot=NAME or urdf=PATH, feet=A,B,C,D): go1-stones scaled to its legs."""
    model = quadruped(robot, urdf, feet, knees, mu, payload)
    return stones_problem(model, size, gap, apex, cycles, period, clearance, formulation, friction, f"{model.name}-stones")


@register("gap")
def gap(robot: Optional[str] = None, urdf: Optional[str] = None, feet: Feet = None, knees: Optional[str] = None, width: Optional[float] = None, length: Optional[float] = None, apex: Optional[float] = None, mu: float = 0.7, dt: Optional[float] = None, knots: Sequence[int] = (15, 10, 15), clearance: Optional[float] = None, control_rate: Optional[float] = None, link_clearance: Optional[float] = 0.01, formulation: str = "inverse", friction: str = "pyramid", payload: float = 0.0) -> LeggedProblem:
    """Jump across a gap for any quadruped (robot=NAME or urdf=PATH, feet=A,B,C,D): go1-gap scaled to its legs."""
    model = quadruped(robot, urdf, feet, knees, mu, payload)
    return gap_problem(model, width, length, apex, dt, knots, clearance, control_rate, link_clearance, formulation, friction, f"{model.name}-gap")
