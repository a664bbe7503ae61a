"""What a closed loop did, in numbers: tick times, misses, failures, violations, tracking, the fall.

:func:`loop_statistics` reduces a :class:`~trajopt.mpc.loop.ClosedLoopResult`
to the figures the CLI prints and the benchmarks tabulate (the first plan,
converged before the clock starts, is not a tick of the loop and is left
out of the timing figures); :func:`summary` formats them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Optional

import numpy as np

from .controller import TICK_PHASES
from .log import base_motion
from .loop import ClosedLoopResult


@dataclass(frozen=True)
class LoopStatistics:
    """``ticks`` (after the first plan); tick time p50/p99/max (s: the preparation before the measurement and
    the compute time after it); ``feedback_p50``/``feedback_p99`` (s: the compute time alone, from the
    measurement to the plan; the whole tick when it was not prepared); ``deadline_misses``;
    ``failed`` ticks; ``qp_iterations`` (mean of HPIPM's per tick, NaN when the ticks solved no QP);
    ``worst_violation`` of the applied plans (their first knot's constraints and control bounds, :class:`~trajopt.mpc.controller.TickRecord`'s ``first_violation``);
    ``drift`` (m, largest horizontal distance of the base from where it started); ``tracking_rms``
    (m, RMS position error against the reference, NaN without one); ``fell``, ``fall_time``, ``fall_reason``;
    ``phases``: the median wall time (s) of each tick phase (:data:`~trajopt.mpc.controller.TICK_PHASES`) the
    ticks report."""

    ticks: int
    p50: float
    p99: float
    worst: float
    deadline_misses: int
    failed: int
    qp_iterations: float
    worst_violation: float
    drift: float
    tracking_rms: float
    fell: bool
    fall_time: float
    fall_reason: str
    phases: Dict[str, float] = field(default_factory=dict)
    feedback_p50: float = float("nan")
    feedback_p99: float = float("nan")


def loop_statistics(result: ClosedLoopResult, model: Any, reference: Optional[Callable[[np.ndarray], np.ndarray]] = None) -> LoopStatistics:
    """The :class:`LoopStatistics` of ``result``, its ticks after the first plan; ``model`` is the controller's, ``reference``
    the task's reference states at given times (for ``tracking_rms``)."""
    ticks = result.log[1:]
    feedback = np.array([r.compute_time for r in ticks]) if ticks else np.zeros(1)
    compute = feedback + np.array([r.preparation_time for r in ticks]) if ticks else np.zeros(1)
    violations = [r.first_violation for r in result.log if r.success]
    qp = [r.qp_iterations for r in ticks if r.qp_iterations > 0]
    positions = np.array([base_motion(model, x)[0] for x in result.states]) if len(result.states) else np.zeros((0, 3))
    drift = float(np.linalg.norm(positions[:, :2] - positions[0, :2], axis=1).max()) if len(positions) else float("nan")
    rms = float("nan")
    if reference is not None and len(positions):
        error = positions - np.array([base_motion(model, x)[0] for x in reference(result.times)])
        rms = float(np.sqrt(np.mean(np.sum(error**2, axis=1))))
    return LoopStatistics(
        len(ticks), float(np.percentile(compute, 50)), float(np.percentile(compute, 99)), float(compute.max()),
        result.deadline_misses(), sum(not r.success for r in ticks), float(np.mean(qp)) if qp else float("nan"), float(max(violations, default=0.0)), drift, rms,
        result.fell, result.fall_time, result.fall_reason,
        {phase: float(np.median([r.phases[phase] for r in ticks if phase in r.phases])) for phase in TICK_PHASES if any(phase in r.phases for r in ticks)},
        float(np.percentile(feedback, 50)), float(np.percentile(feedback, 99)),
    )  # fmt: skip


def summary(stats: LoopStatistics, rate: float) -> str:
    """Three lines: tick times and misses, failures and violations, the outcome."""
    lines = [
        f"{stats.ticks} ticks at {rate:g} Hz: tick time p50 {1e3 * stats.p50:.1f} ms, p99 {1e3 * stats.p99:.1f} ms, max {1e3 * stats.worst:.1f} ms "
        f"(feedback p50 {1e3 * stats.feedback_p50:.1f} ms, p99 {1e3 * stats.feedback_p99:.1f} ms); {stats.deadline_misses} deadline misses (> {1e3 / rate:.1f} ms)",
        f"failed solves {stats.failed}; worst constraint violation of the applied plans {stats.worst_violation:.2e}"
        + (f"; HPIPM iterations {stats.qp_iterations:.1f} per tick (mean)" if np.isfinite(stats.qp_iterations) else ""),
    ]
    outcome = f"fell at t = {stats.fall_time:.3f} s ({stats.fall_reason})" if stats.fell else "no fall"
    tracking = f", position RMS {100 * stats.tracking_rms:.2f} cm against the reference" if np.isfinite(stats.tracking_rms) else ""
    lines.append(f"{outcome}; base drift {100 * stats.drift:.1f} cm{tracking}")
    return "\n".join(lines)
