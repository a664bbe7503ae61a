"""The contact schedule's phase durations as decision variables (``timing="free"`` of a legged problem).

A phase is a maximal run of knots with the same stance pattern: a trot's
double support, one diagonal pair's swing, the next double support, the other
pair's swing; a jump's crouch, flight and landing. The schedule fixes which
phases follow each other and how many knots each holds; with free timing the
duration ``tau_j`` of each phase is a decision variable
(:class:`trajopt.phase_durations.PhaseDurations`: the ``n_j`` intervals of
phase ``j`` are ``tau_j / n_j`` long). Knot ``k`` keeps its stance pattern, so
every constraint and cost at a knot stays what it was; only the time between
knots changes. What a problem states in time rather than by knot keeps the
scheduled times: on a terrain, how a swing's clearance grows after lift-off
(:func:`.terrain_constraints.clearance_required`) is set per knot from them.

Bounds and rows:

- each phase within :data:`PHASE_RANGE` times its scheduled duration, so the
  knots stay dense enough for the transcription (a phase 10x shorter than
  scheduled would leave its intervals 10x shorter than the others';
  longer ones would coarsen the collocation);
- every complete stance of a foot (one that starts and ends inside the
  horizon) at least ``min_stance``, every complete swing at least
  ``min_swing``: a foot needs time to unload, lift and land, which phases
  that shrink together could otherwise take from it;
- ``timing="free"``: the total duration stays the schedule's (one row of ones);
  ``"free-total"``: the total is free too, within the phases' bounds.
"""
from __future__ import annotations

from typing import Any, List, Tuple

import numpy as np

from ..phase_durations import PhaseDurations
from .schedule import ContactSchedule

#: Values of a legged problem's ``timing``.
TIMINGS = ("fixed", "free", "free-total")
#: Each free phase lasts between these multiples of its scheduled duration.
PHASE_RANGE = (0.5, 2.0)
#: Default minimum duration (s) of a foot's complete stance and of its complete swing.
MIN_STANCE, MIN_SWING = 0.1, 0.1
#: IPOPT options with free phase durations: MUMPS ordered by METIS. Each duration is read by every
#: interval of its phase, a dense column of the KKT matrix, which MUMPS's default ordering fills
#: in (the linear solves took several times longer; docs/design/legged.md).
FREE_TIMING_IPOPT = {"mumps_pivot_order": 5}


def schedule_phases(schedule: ContactSchedule) -> List[int]:
    """The knots ``0 = k_0 < k_1 < ... < k_P = N - 1`` where the stance pattern changes (module docstring).

    Phase ``j`` holds knots ``k_j .. k_(j+1) - 1``, all with the pattern of knot ``k_j``; a pattern
    that holds at the last knot alone (no interval follows it) joins the phase before it.
    """
    stance, N = schedule.stance, schedule.N
    changes = [k for k in range(1, N - 1) if not np.array_equal(stance[k], stance[k - 1])]
    return [0, *changes, N - 1]


def phase_pattern(schedule: ContactSchedule, knot: int) -> str:
    """The stance pattern of a knot as text, one character per foot: ``#`` stance, ``.`` swing."""
    return "".join("#" if s else "." for s in schedule.stance[knot])


def _foot_runs(schedule: ContactSchedule, knots: List[int], foot: int) -> List[Tuple[bool, List[int]]]:
    """The foot's stance and swing runs as ``(in stance, phases)``, phase by phase."""
    runs: List[Tuple[bool, List[int]]] = []
    for j, k in enumerate(knots[:-1]):
        down = bool(schedule.stance[k, foot])
        if runs and runs[-1][0] == down:
            runs[-1][1].append(j)
        else:
            runs.append((down, [j]))
    return runs


def apply_timing(problem: Any, timing: str, min_stance: float = MIN_STANCE, min_swing: float = MIN_SWING) -> None:
    """Give a legged problem (one with a ``schedule``) its schedule's fixed times (``"fixed"``) or free phase
    durations (:func:`free_phase_durations`), with the IPOPT options free durations solve with
    (:data:`FREE_TIMING_IPOPT`, removed again for ``"fixed"``)."""
    if timing not in TIMINGS:
        raise ValueError(f"timing: expected one of {TIMINGS}, got {timing!r}")
    schedule = problem.schedule
    problem.set_time(schedule.duration if timing == "fixed" else free_phase_durations(schedule, timing, min_stance, min_swing))
    ipopt = {key: value for key, value in problem.solver_options.get("ipopt", {}).items() if key not in FREE_TIMING_IPOPT}
    problem.solver_options = {**problem.solver_options, "ipopt": ipopt if timing == "fixed" else {**ipopt, **FREE_TIMING_IPOPT}}


def free_phase_durations(schedule: ContactSchedule, timing: str, min_stance: float = MIN_STANCE, min_swing: float = MIN_SWING) -> PhaseDurations:
    """The schedule's phase durations as decisions (module docstring), guessed at their scheduled values.

    ``ValueError`` for an unknown ``timing`` or ``"fixed"``, and for minimum times no
    schedule within :data:`PHASE_RANGE` can meet, before any solve: a swing whose phases,
    stretched to their longest, stay shorter than ``min_swing`` (named), or minima that
    cannot all hold within the fixed total.
    """
    if timing not in TIMINGS[1:]:
        raise ValueError(f"timing: expected one of {TIMINGS[1:]} for free phase durations, got {timing!r}")
    for name, value in (("min_stance", min_stance), ("min_swing", min_swing)):
        if not (np.isfinite(value) and value >= 0):
            raise ValueError(f"{name}: expected a duration >= 0 s, got {value!r}")
    knots = schedule_phases(schedule)
    nominal = np.diff(knots) * schedule.dt
    lower, upper = PHASE_RANGE[0] * nominal, PHASE_RANGE[1] * nominal
    P = len(nominal)
    rows, row_lower, row_upper = [], [], []
    minima: List[Tuple[List[int], float]] = []
    if timing == "free":
        rows.append(np.ones(P))
        row_lower.append(schedule.duration)
        row_upper.append(schedule.duration)
    for foot, name in enumerate(schedule.foot_names):
        runs = _foot_runs(schedule, knots, foot)
        for r, (down, phases) in enumerate(runs):
            if r == 0 or r == len(runs) - 1:  # cut by the horizon: it began before it or ends after it
                continue
            minimum = min_stance if down else min_swing
            if upper[phases].sum() < minimum:
                what = "stance" if down else "swing"
                raise ValueError(
                    f"min_{what}: {name}'s {what} from knot {knots[phases[0]]} to knot {knots[phases[-1] + 1]} lasts at most "
                    f"{upper[phases].sum():.3g} s ({PHASE_RANGE[1]:g} times its scheduled {nominal[phases].sum():.3g} s), shorter than {minimum:g} s"
                )
            if lower[phases].sum() < minimum and (phases, minimum) not in minima:  # the phases' own bounds do not imply it
                minima.append((phases, minimum))  # once, even when several feet share the run (a jump's flight)
                row = np.zeros(P)
                row[phases] = 1.0
                rows.append(row)
                row_lower.append(minimum)
                row_upper.append(np.inf)
    names = [f"{j}:{phase_pattern(schedule, k)}" for j, k in enumerate(knots[:-1])]
    try:
        return PhaseDurations(knots, nominal, lower, upper, np.array(rows).reshape(-1, P), row_lower, row_upper, names)
    except ValueError:  # the rows admit no durations: the minima cannot all hold together
        total = f"the schedule's total of {schedule.duration:g} s" if timing == "free" else "the phases' bounds"
        raise ValueError(f"min_stance, min_swing: the minimum stance ({min_stance:g} s) and swing ({min_swing:g} s) times cannot all hold within {total}") from None
