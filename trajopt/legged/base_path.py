"""A nominal base path that obeys gravity in flight: the initial guess of jumps and pronks.

For a gait whose feet never all leave the ground the base moves uniformly by
the commanded displacement (``LeggedProblem._reference_states``). A
schedule with flight phases (knots where no foot is in stance) needs more: a
base moving uniformly through a flight violates the dynamics by ``m g`` at
every flight knot, and IPOPT started there takes many iterations, their
number depending on round-off (docs/design/legged.md).

:func:`ballistic_base_path` splits the horizon into phases: flights (runs of
knots without stance, extended by half a knot spacing on each side: the
take-off and touch-down instants lie between the last stance knot and the
first flight knot) and stances between them. Over a flight of duration ``T``
the base follows the ballistic arc

    p(t) = p_lo + v t - 1/2 g t^2 e_z,   v_z = g T / 2  (it lands at its take-off height),

with one horizontal velocity ``v_h`` for every flight and for the stances
between two flights; the first and last stances start and end at rest, so the
displacement ``d`` is met when ``v_h (sum T_flight + sum T_inner + 1/2 (T_first +
T_last)) = d_h`` (each end stance covers half its duration at ``v_h`` on average).
Each stance joins its boundary states (position, velocity, acceleration:
rest at the horizon's ends, ``v`` and ``-g e_z`` at a take-off or touch-down)
by a quintic polynomial per axis, which dips into a crouch before a take-off
and after a touch-down. Vertically every stance starts and ends at the base
height of the start, plus the vertical displacement spread linearly over the
horizon.
"""
from __future__ import annotations

from typing import List, Tuple

import numpy as np

from .schedule import ContactSchedule


def quintic(p0: np.ndarray, v0: np.ndarray, a0: np.ndarray, p1: np.ndarray, v1: np.ndarray, a1: np.ndarray, T: float, t: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Position, velocity and acceleration (K, 3) at times ``t`` (K,) in ``[0, T]`` of the quintic
    polynomial that starts at ``(p0, v0, a0)`` and ends at ``(p1, v1, a1)`` (each (3,)) after ``T`` s."""
    # p(t) = c0 + c1 t + c2 t^2 + c3 t^3 + c4 t^4 + c5 t^5, end conditions solved per axis
    M = np.array([[T**3, T**4, T**5], [3 * T**2, 4 * T**3, 5 * T**4], [6 * T, 12 * T**2, 20 * T**3]])
    rhs = np.stack([p1 - p0 - v0 * T - 0.5 * a0 * T**2, v1 - v0 - a0 * T, a1 - a0])
    c3, c4, c5 = np.linalg.solve(M, rhs)
    t = np.asarray(t, dtype=float)[:, None]
    p = p0 + v0 * t + 0.5 * a0 * t**2 + c3 * t**3 + c4 * t**4 + c5 * t**5
    v = v0 + a0 * t + 3 * c3 * t**2 + 4 * c4 * t**3 + 5 * c5 * t**4
    a = a0 + 6 * c3 * t + 12 * c4 * t**2 + 20 * c5 * t**3
    return p, v, a


def flight_phases(schedule: ContactSchedule) -> List[Tuple[int, int]]:
    """Runs ``(first, last)`` of knots where no foot is in stance, strictly inside the horizon."""
    airborne = ~schedule.stance.any(axis=1)
    runs, k = [], 0
    while k < schedule.N:
        if airborne[k]:
            start = k
            while k + 1 < schedule.N and airborne[k + 1]:
                k += 1
            runs.append((start, k))
        k += 1
    return [(a, b) for a, b in runs if a > 0 and b < schedule.N - 1]


def ballistic_base_path(schedule: ContactSchedule, start: np.ndarray, displacement: np.ndarray, gravity: float) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Base positions, velocities and accelerations (N, 3 each, WORLD frame) along ``schedule``: ballistic arcs
    over the flights (landing at the take-off height), quintics joining them over the stances, from the base
    position ``start`` (3,) moved by ``displacement`` (3,) under ``gravity`` (m/s^2);
    ``None`` when the schedule has no flight phase strictly inside the horizon."""
    flights = flight_phases(schedule)
    if not flights:
        return None
    h, N = schedule.dt, schedule.N
    times = np.arange(N) * h
    d = np.asarray(displacement, dtype=float)
    g = np.array([0.0, 0.0, gravity])
    # phase boundaries (s): take-off half a knot before the first flight knot, touch-down half a knot after the last
    edges = [(times[a] - 0.5 * h, times[b] + 0.5 * h) for a, b in flights]
    stances = [(0.0, edges[0][0])] + [(edges[i][1], edges[i + 1][0]) for i in range(len(edges) - 1)] + [(edges[-1][1], times[-1])]
    flight_time = sum(t1 - t0 for t0, t1 in edges)
    inner = sum(t1 - t0 for t0, t1 in stances[1:-1])
    ends = 0.5 * (stances[0][1] - stances[0][0] + stances[-1][1] - stances[-1][0])
    v_h = np.r_[d[:2] / (flight_time + inner + ends), 0.0]
    height = lambda t: start[2] + d[2] * t / times[-1]  # noqa: E731 - the stance height, drifting with the vertical displacement
    P, V, A = np.zeros((N, 3)), np.zeros((N, 3)), np.zeros((N, 3))
    position = np.array(start, dtype=float)
    for i, (t0, t1) in enumerate(stances):
        first, last = i == 0, i == len(stances) - 1
        v0 = np.zeros(3) if first else v_h - 0.5 * g * (edges[i - 1][1] - edges[i - 1][0])
        a0 = np.zeros(3) if first else -g
        v1 = np.zeros(3) if last else v_h + 0.5 * g * (edges[i][1] - edges[i][0])
        a1 = np.zeros(3) if last else -g
        run = (0.5 if first or last else 1.0) * (t1 - t0) * v_h  # horizontal distance covered in this stance
        p0 = position
        p1 = np.r_[p0[:2] + run[:2], height(t1)]
        knots = np.flatnonzero((times >= t0 - 1e-12) & (times <= t1 + 1e-12))
        P[knots], V[knots], A[knots] = quintic(p0, v0, a0, p1, v1, a1, t1 - t0, times[knots] - t0)
        if not last:  # the flight that follows: ballistic from p1 with velocity v1
            f0, f1 = edges[i]
            knots = np.flatnonzero((times > f0) & (times < f1))
            s = (times[knots] - f0)[:, None]
            P[knots], V[knots], A[knots] = p1 + v1 * s - 0.5 * g * s**2, v1 - g * s, -g
            position = p1 + v1 * (f1 - f0) - 0.5 * g * (f1 - f0) ** 2
    return P, V, A
