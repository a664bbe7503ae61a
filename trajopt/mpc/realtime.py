"""A closed loop on the wall clock against a plant that runs on its own (:class:`~trajopt.mpc.process_plant.RealtimePlant`).

:func:`trajopt.mpc.loop.run_closed_loop` emulates real time: it steps the
plant itself and charges the controller's measured compute time. Here nothing
is emulated. The plant steps on the wall clock in its own process (or on a
robot); every ``1 / rate`` s of plant time the controller reads the state the
plant had at the tick (:meth:`~RealtimePlant.read_at`, waiting for it), runs
its feedback (:meth:`~trajopt.mpc.MPC.step`, after a preparation made while
waiting) and sends the plan, which the plant applies from its arrival. A
tick that overruns the period skips the ticks it overran. The loop ends at
``duration`` s of plant time, when the plant falls, or at Ctrl-C; its
:class:`~trajopt.mpc.loop.ClosedLoopResult` holds the ticks' measured states
(the plant's own samples stay in its process), so that the same statistics,
logs and plots apply.
"""
from __future__ import annotations

import time
from typing import Any, Callable, List, Optional

import numpy as np

from .controller import MPC
from .loop import ClosedLoopResult, TickTiming, sigint_stops
from .process_plant import RealtimePlant


def run_realtime_loop(
    mpc: MPC,
    plant: RealtimePlant,
    duration: float,
    rate: float,
    progress: Optional[Callable[[float, Any], None]] = None,
    on_tick: Optional[Callable[[Any, TickTiming, Any], None]] = None,
) -> ClosedLoopResult:
    """Run ``mpc`` against ``plant`` on the wall clock for ``duration`` s of plant time at ``rate`` Hz (module docstring).

    ``progress(t, log)`` is called once per second of plant time, ``on_tick(record, timing, plan)`` after each tick
    (as :func:`~trajopt.mpc.loop.run_closed_loop` calls them). A tick's ``arrival`` is its measurement time plus its
    feedback's wall time (the plan's transfer to the plant is in ``plant.latencies`` once it is closed).
    """
    if not (np.isfinite(duration) and duration > 0):
        raise ValueError(f"duration: expected s > 0, got {duration!r}")
    if not (np.isfinite(rate) and rate > 0):
        raise ValueError(f"rate: expected Hz > 0, got {rate!r}")
    period = 1.0 / rate
    t, x = plant.read_at(0.0)
    start = time.perf_counter()
    plan = mpc.reset(t, x)
    plant.send(plan)
    ticks: List[TickTiming] = [TickTiming(t, t, time.perf_counter() - start, False)]
    states, times, controls = [x], [t], [mpc.log[-1].control]
    if on_tick is not None:
        on_tick(mpc.log[-1], ticks[-1], plan)
    next_t, second, interrupted = t + period, 1.0, False
    unreported = None  # the last tick, reported once the next preparation has checked its plan
    with sigint_stops() as stop:
        while next_t <= duration + 1e-9 and not plant.fallen() and not stop.requested:
            preparation = 0.0
            if mpc.prepares:
                begin = time.perf_counter()
                mpc.prepare(next_t)
                preparation = time.perf_counter() - begin
            if unreported is not None and on_tick is not None:
                on_tick(*unreported)
            t, x = plant.read_at(next_t)
            begin = time.perf_counter()
            new = mpc.step(t, x)
            compute = time.perf_counter() - begin
            if new is not None:
                plant.send(new)
            ticks.append(TickTiming(t, t + compute if new is not None else float("nan"), compute, preparation + compute > period, preparation))
            states.append(x)
            times.append(t)
            controls.append(mpc.log[-1].control)
            unreported = (mpc.log[-1], ticks[-1], new)
            next_t += period
            while plant.time() > next_t + 1e-9:  # overran: the ticks the plant has passed are skipped
                next_t += period
            if progress is not None and t >= second - 1e-9:
                progress(t, mpc.log)
                second += 1.0
        interrupted = stop.requested
    fell = plant.fallen()
    mpc.check_pending()
    if unreported is not None and on_tick is not None:
        on_tick(*unreported)
    return ClosedLoopResult(
        np.array(times), np.array(states), np.array(controls), np.zeros((len(times), 3)), ticks, list(mpc.log), fell,
        plant.time() if fell else float("nan"), float(rate), "real time", "the plant process reports a fall" if fell else "", interrupted,
    )  # fmt: skip
