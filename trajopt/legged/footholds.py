"""Nominal foothold sequences and swing-foot paths for a contact schedule.

Every foot starts at its initial position ``p_i0`` and, over the horizon, moves
by the commanded base ``displacement``: each swing phase of foot ``i`` moves it
by ``displacement / n_i`` (``n_i`` its number of swings), landing on the ground
(``z`` of the initial foothold). A stance foot stays on its current foothold.
During a swing the nominal path interpolates the horizontal position linearly
and lifts the foot on a parabola of height ``apex`` above the footholds.
"""
from __future__ import annotations

from typing import Tuple

import numpy as np

from .schedule import ContactSchedule


def foothold_table(schedule: ContactSchedule, initial_feet: np.ndarray, displacement: np.ndarray) -> np.ndarray:
    """Foothold of every foot at every knot (N, n_feet, 3): where it stands, or lands after this swing.

    ``p_i(k) = p_i0 + (displacement / n_i) * #{swings of foot i starting at or before k}``.
    """
    feet = np.asarray(initial_feet, dtype=float).reshape(len(schedule.foot_names), 3)
    d = np.asarray(displacement, dtype=float).reshape(3)
    table = np.repeat(feet[None], schedule.N, axis=0)
    knots = np.arange(schedule.N)
    for i in range(len(schedule.foot_names)):
        swings = schedule.swings(i)
        if swings:
            started = np.sum([knots >= first for first, _ in swings], axis=0)
            table[:, i] += np.outer(started, d / len(swings))
    return table


def swing_apex_knots(schedule: ContactSchedule, foot: int) -> list:
    """The middle knot of each swing phase of ``foot`` (where the apex height is required)."""
    return [(first + last + 1) // 2 for first, last in schedule.swings(foot)]


def nominal_foot_paths(schedule: ContactSchedule, initial_feet: np.ndarray, displacement: np.ndarray, apex: float) -> Tuple[np.ndarray, np.ndarray]:
    """Nominal foot positions (N, n_feet, 3) and the footholds table (see :func:`foothold_table`).

    A swing from knot ``a`` (first swing knot) to ``b`` (last) goes from the
    foothold at ``a - 1`` to the one at ``b + 1``; with ``s = (k - a + 1) / (b - a + 2)``
    the path is ``(1 - s) p_lift + s p_land + [0, 0, 4 apex s (1 - s)]``.
    """
    holds = foothold_table(schedule, initial_feet, displacement)
    paths = holds.copy()
    for i in range(len(schedule.foot_names)):
        for a, b in schedule.swings(i):
            lift = holds[a - 1, i] if a > 0 else holds[a, i]
            land = holds[b + 1, i] if b + 1 < schedule.N else holds[b, i]
            for k in range(a, b + 1):
                s = (k - a + 1) / (b - a + 2)
                paths[k, i] = (1 - s) * lift + s * land
                paths[k, i, 2] += 4 * apex * s * (1 - s)
    return paths, holds
