"""Gait templates for any quadruped: ``trot``, ``pace``, ``bound``, ``pronk``, ``jump``, and ``discover`` (no schedule).

Each factory takes the robot by its example-robot-data name (``robot="solo12"``,
``"anymal"``, ``"hyq"``, ``"a1"``...; default ``"go1"``; ``trajopt list
--robots`` lists them) or a URDF file (``urdf=PATH``, absolute so that a saved
solution can rebuild its problem), optionally with its four foot frames
(``feet="A,B,C,D"`` or a list, any order) and its knee posture (``knees``:
``backward``, ``forward``, ``inward``, ``outward``; default from the URDF).
The robot is :meth:`models.LeggedRobot.from_urdf`: feet found and ordered by
role, standing height and stance from its kinematics, limits from its URDF.

The gait's step (base displacement per cycle), swing apex, period and knot
spacing default to the Go1 problems' values (:mod:`problems.legged`) carried
to the robot's leg length by :class:`trajopt.legged.scaling.GaitScale`
(lengths times ``s = L / 0.426 m``, times times ``sqrt(s)``); a period is
always :data:`KNOTS_PER_PERIOD` intervals unless ``N`` says otherwise. The
periodic templates take ``periodic=True`` as the Go1 gaits do (:mod:`problems.legged`),
and every template ``payload`` (kg at the base's centre of mass). On the
Go1, ``trot`` is ``go1-trot``, ``jump`` is ``go1-jump`` and ``discover`` is
``go1-discover`` (its speed scaled too, by ``sqrt(s)``).
"""
from __future__ import annotations

from typing import Optional, Sequence, Union

from models import LeggedRobot
from models.quadruped import installed_quadrupeds
from models.robot_data import KNOWN_ROBOTS, installed_urdfs
from trajopt.legged import LeggedProblem
from trajopt.legged.contact_implicit import ContactImplicitProblem, discovery_period
from trajopt.legged.scaling import GaitScale

from .legged import _jump, _periodic_gait
from .registry import register

#: Intervals per gait period (the Go1 problems' 0.6 s at 0.02 s).
KNOTS_PER_PERIOD = 30
#: Go1 values (m, s) of each periodic template: step per cycle, swing apex, period.
#: trot, pace and bound are those of go1-trot, go1-pace and go1-bound.
GO1_GAITS = {
    "trot": {"step": 0.15, "apex": 0.08, "period": 0.6},
    "pace": {"step": 0.1, "apex": 0.06, "period": 0.6},
    "bound": {"step": 0.1, "apex": 0.06, "period": 0.6},
    "pronk": {"step": 0.1, "apex": 0.05, "period": 0.4},
}
#: Go1 values of the jump (go1-jump's): forward length (m), feet height at mid-flight (m), knot spacing (s).
GO1_JUMP = {"length": 0.2, "apex": 0.05, "dt": 0.02}
#: Go1 values of gait discovery (go1-discover's): speed (m/s), knot spacing (s), swing apex (m); its cycle
#: is :func:`~trajopt.legged.contact_implicit.discovery_period` of the speed.
GO1_DISCOVER = {"speed": 0.5, "dt": 0.02, "apex": 0.05}
DEFAULT_ROBOT = "go1"

Feet = Union[None, str, Sequence[str]]


def quadruped(robot: Optional[str] = None, urdf: Optional[str] = None, feet: Feet = None, knees: Optional[str] = None, mu: float = 0.7, payload: float = 0.0) -> LeggedRobot:
    """The :class:`models.LeggedRobot` named ``robot`` in example-robot-data (default go1), or loaded from ``urdf``.

    ``feet``: four foot frames as a list or one comma-separated string.
    ``payload``: kg carried at the base's centre of mass (:func:`models.legged.with_base_payload`).
    Raises ``ValueError`` when both ``robot`` and ``urdf`` are given, for an
    unknown name or a model that is not a quadruped with 3-joint legs, and
    ``FileNotFoundError`` for a missing file.
    """
    if robot is not None and urdf is not None:
        raise ValueError(f"robot/urdf: give a robot name or a URDF file, not both (got robot={robot!r}, urdf={urdf!r})")
    if isinstance(feet, str):
        feet = [name.strip() for name in feet.split(",")]
    if urdf is not None:
        return LeggedRobot.from_urdf(urdf, feet, mu=mu, knees=knees, payload=payload)
    robot = DEFAULT_ROBOT if robot is None else robot
    if robot not in KNOWN_ROBOTS and robot not in installed_urdfs():
        names = ", ".join(name for quad in installed_quadrupeds() for name in quad.names)
        raise ValueError(f"robot: unknown robot {robot!r}; the quadrupeds of example-robot-data are {names} (`trajopt list --robots`)")
    return LeggedRobot.from_robot_data(robot, feet, mu=mu, knees=knees, payload=payload)


def _template(gait: str, robot: Optional[str], urdf: Optional[str], feet: Feet, knees: Optional[str], step: Optional[float], apex: Optional[float], mu: float, cycles: int, period: Optional[float], N: Optional[int], formulation: str, friction: str, periodic: bool, payload: float) -> LeggedProblem:
    """A periodic gait on the robot, its unset dimensions scaled from :data:`GO1_GAITS`."""
    model = quadruped(robot, urdf, feet, knees, mu, payload)
    scale, go1 = GaitScale.of(model), GO1_GAITS[gait]
    step = scale.distance(go1["step"]) if step is None else step
    apex = scale.distance(go1["apex"]) if apex is None else apex
    period = scale.duration(go1["period"]) if period is None else period
    return _periodic_gait(model, gait, step, apex, cycles, period / KNOTS_PER_PERIOD, period, formulation, friction, f"{model.name}-{gait}", N, periodic)


@register("trot")
def trot(robot: Optional[str] = None, urdf: Optional[str] = None, feet: Feet = None, knees: Optional[str] = None, step: Optional[float] = None, apex: Optional[float] = None, mu: float = 0.7, cycles: int = 1, period: Optional[float] = None, N: Optional[int] = None, formulation: str = "inverse", friction: str = "pyramid", periodic: bool = False, payload: float = 0.0) -> LeggedProblem:
    """Trot of any quadruped (robot=NAME or urdf=PATH, feet=A,B,C,D): diagonal pairs alternate; go1-trot scaled to its legs."""
    return _template("trot", robot, urdf, feet, knees, step, apex, mu, cycles, period, N, formulation, friction, periodic, payload)


@register("pace")
def pace(robot: Optional[str] = None, urdf: Optional[str] = None, feet: Feet = None, knees: Optional[str] = None, step: Optional[float] = None, apex: Optional[float] = None, mu: float = 0.7, cycles: int = 1, period: Optional[float] = None, N: Optional[int] = None, formulation: str = "inverse", friction: str = "pyramid", periodic: bool = False, payload: float = 0.0) -> LeggedProblem:
    """Pace of any quadruped (robot=NAME or urdf=PATH, feet=A,B,C,D): lateral pairs alternate; go1-pace scaled to its legs."""
    return _template("pace", robot, urdf, feet, knees, step, apex, mu, cycles, period, N, formulation, friction, periodic, payload)


@register("bound")
def bound(robot: Optional[str] = None, urdf: Optional[str] = None, feet: Feet = None, knees: Optional[str] = None, step: Optional[float] = None, apex: Optional[float] = None, mu: float = 0.7, cycles: int = 1, period: Optional[float] = None, N: Optional[int] = None, formulation: str = "inverse", friction: str = "pyramid", periodic: bool = False, payload: float = 0.0) -> LeggedProblem:
    """Bound of any quadruped (robot=NAME or urdf=PATH, feet=A,B,C,D): front pair, then hind pair; go1-bound scaled to its legs."""
    return _template("bound", robot, urdf, feet, knees, step, apex, mu, cycles, period, N, formulation, friction, periodic, payload)


@register("pronk")
def pronk(robot: Optional[str] = None, urdf: Optional[str] = None, feet: Feet = None, knees: Optional[str] = None, step: Optional[float] = None, apex: Optional[float] = None, mu: float = 0.7, cycles: int = 1, period: Optional[float] = None, N: Optional[int] = None, formulation: str = "inverse", friction: str = "pyramid", periodic: bool = False, payload: float = 0.0) -> LeggedProblem:
    """Pronk of any quadruped (robot=NAME or urdf=PATH, feet=A,B,C,D): all four feet together, half the period in flight."""
    return _template("pronk", robot, urdf, feet, knees, step, apex, mu, cycles, period, N, formulation, friction, periodic, payload)


@register("discover")
def discover(robot: Optional[str] = None, urdf: Optional[str] = None, feet: Feet = None, knees: Optional[str] = None, speed: Optional[float] = None, period: Optional[float] = None, apex: Optional[float] = None, mu: float = 0.7, friction: str = "pyramid", payload: float = 0.0) -> ContactImplicitProblem:
    """A gait of any quadruped found without a schedule (go1-discover's, scaled to its legs): footfalls by complementarity."""
    model = quadruped(robot, urdf, feet, knees, mu, payload)
    scale = GaitScale.of(model)
    speed = scale.speed(GO1_DISCOVER["speed"]) if speed is None else speed
    period = scale.duration(discovery_period(speed / scale.speed(1.0), GO1_DISCOVER["dt"])) if period is None else period
    apex = scale.distance(GO1_DISCOVER["apex"]) if apex is None else apex
    intervals = max(round(period / scale.duration(GO1_DISCOVER["dt"])), 1)  # the knot spacing nearest the Go1's, scaled
    return ContactImplicitProblem(model, speed=speed, period=period, dt=period / intervals, swing_apex=apex, friction=friction, name=f"{model.name}-discover")


@register("jump")
def jump(robot: Optional[str] = None, urdf: Optional[str] = None, feet: Feet = None, knees: Optional[str] = None, length: Optional[float] = None, apex: Optional[float] = None, mu: float = 0.7, dt: Optional[float] = None, knots: Sequence[int] = (15, 10, 15), formulation: str = "inverse", friction: str = "pyramid", control_rate: Optional[float] = None, link_clearance: Optional[float] = None, payload: float = 0.0) -> LeggedProblem:
    """Forward jump of any quadruped (robot=NAME or urdf=PATH, feet=A,B,C,D): go1-jump scaled to its legs."""
    model = quadruped(robot, urdf, feet, knees, mu, payload)
    scale = GaitScale.of(model)
    length = scale.distance(GO1_JUMP["length"]) if length is None else length
    apex = scale.distance(GO1_JUMP["apex"]) if apex is None else apex
    dt = scale.duration(GO1_JUMP["dt"]) if dt is None else dt
    return _jump(model, length, apex, dt, knots, formulation, friction, control_rate, link_clearance, f"{model.name}-jump")
