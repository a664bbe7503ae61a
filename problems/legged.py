"""Legged gait problems: Go1/Go2 trot, pace, bound, jump (full rigid-body dynamics, point feet).

Each factory returns a :class:`trajopt.legged.LeggedProblem` (see its docstring
for the constraints and cost) solved with trapezoidal collocation by default.
The periodic gaits take ``N`` (knots) as an alternative to ``dt``, and
``periodic=True`` (off by default) to end with the joint angles and all
velocities they start with, so that the plan can be repeated cycle after
cycle (:func:`trajopt.mujoco.track` with ``cycles``). Every factory takes
``payload`` (kg, default 0): a load carried at the trunk's centre of mass
(:func:`models.legged.with_base_payload`; ``-p payload=10`` on the command
line). Defaults:

- ``go1-trot``: the gait crocoddyl is compared on: one cycle of 30 intervals of
  0.02 s (2 support knots, 13 knots with the FR+RL pair swinging, 2 support
  knots, 13 knots with FL+RR swinging), step 0.15 m, swing apex 0.08 m, mu 0.7.
- ``go1-pace``: the same timing with the lateral pairs, step 0.1 m, apex 0.06 m.
- ``go1-bound``: the same timing, front pair then hind pair, step 0.1 m, apex 0.06 m.
- ``go1-jump``: 0.3 s crouch and push-off, 0.2 s flight, 0.3 s landing
  (dt 0.02 s, 40 knots), 0.2 m forward, feet 0.05 m high at mid-flight,
  torques' and forces' rate penalized (1e-5) so the push-off stays realizable.
- ``go2-trot``: ``go1-trot``'s gait on the Go2.
- ``go1-discover``: no schedule: one cycle (dt 0.02 s; 0.6 s, shorter above 0.5 m/s) at ``speed``
  (default 0.5 m/s) whose footfalls the optimizer chooses by complementarity
  from an all-stance guess (:class:`trajopt.legged.contact_implicit.ContactImplicitProblem`,
  solved by its homotopy), swinging feet 0.05 m high once the footfalls are fixed.
"""
from __future__ import annotations

from typing import Optional, Sequence

from models import Go1, Go2
from models.formulation import Formulation
from trajopt.legged import LeggedProblem, LeggedWeights, gait, jump
from trajopt.legged.contact_implicit import ContactImplicitProblem

from .registry import register


def _periodic_gait(robot, name: str, step: float, apex: float, cycles: int, dt: float, period: float, formulation: str, friction: str, problem_name: str, N: Optional[int], periodic: bool = False) -> LeggedProblem:
    """A periodic gait; a given ``N`` (knots) sets ``dt = cycles * period / (N - 1)``."""
    if N is not None:
        if not (isinstance(N, int) and N >= 3 and (N - 1) % cycles == 0):
            raise ValueError(f"N: expected an int >= 3 with N - 1 a multiple of cycles = {cycles}, got {N!r}")
        dt = cycles * period / (N - 1)
    schedule = gait(name, dt=dt, period=period, cycles=cycles)
    return LeggedProblem(robot, schedule, displacement=(step * cycles, 0.0, 0.0), swing_apex=apex, formulation=formulation, friction=friction, periodic=periodic, name=problem_name, N=N)


@register("go1-trot")
def go1_trot(
    step: float = 0.15, apex: float = 0.08, mu: float = 0.7, cycles: int = 1, dt: float = 0.02, period: float = 0.6,
    formulation: str = "inverse", friction: str = "pyramid", N: Optional[int] = None, periodic: bool = False, torque_scale: float = 1.0,
    payload: float = 0.0,
) -> LeggedProblem:  # fmt: skip
    """Go1 trot: diagonal leg pairs alternate, the base moving 0.15 m forward in a 0.6 s cycle.

    Each cycle has 30 intervals of 0.02 s: 2 support knots, 13 with the FR+RL
    pair swinging, 2 support knots, 13 with FL+RR swinging. ``step`` is the
    base displacement per cycle (m), ``apex`` the swing feet's height (m),
    ``mu`` the friction coefficient, ``dt`` the knot spacing (s), ``period``
    the cycle's duration (s), ``N`` the number of knots instead of ``dt``;
    ``torque_scale`` scales the URDF torque limits (the constrained trot of
    ``bench/go1_trot.py``: mu 0.3, 0.6). Returns a
    :class:`trajopt.legged.LeggedProblem`."""
    return _periodic_gait(Go1(mu=mu, torque_scale=torque_scale, payload=payload), "trot", step, apex, cycles, dt, period, formulation, friction, "go1-trot", N, periodic)


@register("go1-pace")
def go1_pace(step: float = 0.1, apex: float = 0.06, mu: float = 0.7, cycles: int = 1, dt: float = 0.02, period: float = 0.6, formulation: str = "inverse", friction: str = "pyramid", N: Optional[int] = None, periodic: bool = False, payload: float = 0.0) -> LeggedProblem:
    """Go1 pace: lateral leg pairs alternate."""
    return _periodic_gait(Go1(mu=mu, payload=payload), "pace", step, apex, cycles, dt, period, formulation, friction, "go1-pace", N, periodic)


@register("go1-bound")
def go1_bound(step: float = 0.1, apex: float = 0.06, mu: float = 0.7, cycles: int = 1, dt: float = 0.02, period: float = 0.6, formulation: str = "inverse", friction: str = "pyramid", N: Optional[int] = None, periodic: bool = False, payload: float = 0.0) -> LeggedProblem:
    """Go1 bound: the front pair, then the hind pair."""
    return _periodic_gait(Go1(mu=mu, payload=payload), "bound", step, apex, cycles, dt, period, formulation, friction, "go1-bound", N, periodic)


@register("go1-stand")
def go1_stand(mu: float = 0.7, duration: float = 0.6, dt: float = 0.02, formulation: str = "inverse", friction: str = "pyramid", payload: float = 0.0) -> LeggedProblem:
    """Go1 standing still on four feet over the horizon (the balance task of ``trajopt mpc go1-stand``)."""
    schedule = gait("stand", dt=dt, period=duration)
    return LeggedProblem(Go1(mu=mu, payload=payload), schedule, displacement=(0.0, 0.0, 0.0), swing_apex=0.0, formulation=formulation, friction=friction, name="go1-stand")


#: Control-rate weight of the jumps with collocated controls (``formulation`` "inverse" or "forward").
JUMP_CONTROL_RATE = 1e-5


@register("go1-discover")
def go1_discover(speed: float = 0.5, period: Optional[float] = None, dt: float = 0.02, apex: float = 0.05, mu: float = 0.7, friction: str = "pyramid", payload: float = 0.0) -> ContactImplicitProblem:
    """Go1 gait found without a schedule: one periodic cycle at 0.5 m/s, footfalls chosen by complementarity.

    ``speed`` (m/s) of the cycle, ``period`` (s) its duration (default: 0.6 s
    up to 0.5 m/s, shorter above, 0.4 s from 0.75 m/s:
    :func:`trajopt.legged.contact_implicit.discovery_period`), ``apex`` the
    swinging feet's height (m) once the footfalls are fixed; ``trajopt solve``
    prints the footfall diagram and the gait's name."""
    return ContactImplicitProblem(Go1(mu=mu, payload=payload), speed=speed, period=period, dt=dt, swing_apex=apex, friction=friction, name="go1-discover")


@register("go1-jump")
def go1_jump(length: float = 0.2, apex: float = 0.05, mu: float = 0.7, dt: float = 0.02, knots: Sequence[int] = (15, 10, 15), formulation: str = "inverse", friction: str = "pyramid", control_rate: Optional[float] = None, link_clearance: Optional[float] = None, payload: float = 0.0) -> LeggedProblem:
    """Go1 forward jump of 0.2 m: crouch and push-off, flight, landing.

    ``length`` is the jump's length (m), ``knots`` the knot counts of the
    three phases (crouch and push-off, flight, landing), ``apex`` the feet's
    height at mid-flight (m), ``dt`` the knot spacing (s).

    With collocated controls the torques' and forces' rate is penalized
    (``control_rate``, default :data:`JUMP_CONTROL_RATE`; see
    :class:`trajopt.legged.LeggedWeights`) so that the push-off stays
    realizable between knots; the contact formulation holds each torque over
    its interval and takes none. ``link_clearance`` (m) holds the shanks'
    ends that high above the ground at every knot (``None``: not imposed; the
    Go1's stay above it without the rows, and ``trajopt solve`` warns when a
    plan lays a knee below it). The guess follows a ballistic base path
    (:mod:`trajopt.legged.base_path`); IPOPT runs with the legged problems' options."""
    return _jump(Go1(mu=mu, payload=payload), length, apex, dt, knots, formulation, friction, control_rate, link_clearance, "go1-jump")


def _jump(robot, length: float, apex: float, dt: float, knots: Sequence[int], formulation: str, friction: str, control_rate: Optional[float], link_clearance: Optional[float], problem_name: str) -> LeggedProblem:
    """A forward jump (:func:`go1_jump`) of ``robot``."""
    if len(knots) != 3:
        raise ValueError(f"knots: expected 3 knot counts (crouch, flight, landing), got {tuple(knots)}")
    crouch, flight, landing = knots
    schedule = jump(dt=dt, crouch_knots=crouch, flight_knots=flight, landing_knots=landing)
    if control_rate is None:
        control_rate = 0.0 if Formulation.parse(formulation).stance_is_parameter else JUMP_CONTROL_RATE
    weights = LeggedWeights(control_rate=control_rate)
    return LeggedProblem(robot, schedule, displacement=(length, 0.0, 0.0), swing_apex=apex, formulation=formulation, friction=friction, weights=weights, link_clearance=link_clearance, name=problem_name)


@register("go2-trot")
def go2_trot(step: float = 0.15, apex: float = 0.08, mu: float = 0.7, cycles: int = 1, dt: float = 0.02, period: float = 0.6, formulation: str = "inverse", friction: str = "pyramid", N: Optional[int] = None, periodic: bool = False, payload: float = 0.0) -> LeggedProblem:
    """Go2 trot with go1-trot's gait."""
    return _periodic_gait(Go2(mu=mu, payload=payload), "trot", step, apex, cycles, dt, period, formulation, friction, "go2-trot", N, periodic)
