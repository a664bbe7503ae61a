"""A closed loop in real-time emulation: the plant does not wait for the controller.

The plant steps at its own rate (``plant.dt``, 1 kHz for the legged robots).
The controller (:class:`~trajopt.mpc.MPC`) ticks at ``rate``: at a tick at
plant time ``t`` it reads the state (with ``noise``, a standard deviation per
tangent direction: ``x_meas = apply_dx(x, sigma * r)``), solves, and its plan
reaches the plant only when the solve is done, ``t + delay`` later:

- ``delay="measured"`` (default): the solve's own wall time (the plant keeps
  stepping meanwhile, as a robot would);
- ``delay="tick"``: one controller period, whatever the solve took (a
  reproducible loop, independent of the machine's load);
- a number: that many seconds.

The ticks keep to the grid of the period (``t_0 + j / rate``): while a
solve runs the controller is busy, and a solve longer than the period (a
deadline miss) skips the ticks it overran; the next tick is the first one
of the grid after its plan arrived. On the grid, a horizon whose knot step
divides the period moves by whole knots from tick to tick and its warm
start is the previous plan itself (:mod:`trajopt.mpc.shift`). Ticking as
soon as the solve was done would put the ticks between knots and make the
interpolated warm starts slower than the period (docs/design/mpc.md).
With a controller that prepares its ticks (:meth:`MPC.prepare`: the
real-time iteration), the loop prepares the next tick as soon as a plan is
out: the plan's delay is the feedback alone, and the controller is busy for
preparation and feedback. A preparation is for the first tick of the grid
it can expect to finish before (the median of the last ten preparations);
one that runs past its tick leaves that tick to run whole. Between plan arrivals the plant
applies the newest plan's law :meth:`Plan.control` to the state it has at
every step (a joint-level controller reading encoders at the plant rate,
and the feet's contact sensors: a leg the plan has standing whose foot has
not touched is held by a joint PD instead of the stance feedback,
:mod:`.stance_gate`), and with ``latency`` (s) the torque reaches the actuators that much later.
A failed tick (:class:`~trajopt.mpc.MPC` returns no plan) leaves the
previous plan in force.

The loop stops at ``duration``, when ``plant.fallen()``, or at Ctrl-C, after
the tick it arrives in; its result then holds every tick that ran
(``interrupted``), and a log written as the run goes
(:mod:`trajopt.mpc.log_writers`) every row.
"""
from __future__ import annotations

import signal
import threading
import time
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, List, Optional, Sequence, Union

import numpy as np

from .controller import MPC
from .disturbances import total_force
from .stance_gate import plan_contacts

#: The delays :func:`run_closed_loop` takes by name (besides seconds >= 0).
DELAYS = ("measured", "tick")


def parse_delay(text: str) -> Union[str, float]:
    """A :func:`run_closed_loop` delay from text (a command line's): ``"measured"``, ``"tick"`` or seconds >= 0;
    ``ValueError`` otherwise."""
    if text in DELAYS:
        return text
    try:
        delay = float(text)
    except ValueError:
        delay = float("nan")
    if not (np.isfinite(delay) and delay >= 0):
        raise ValueError(f"delay: expected measured, tick or seconds >= 0, got {text!r}")
    return delay


@dataclass
class TickTiming:
    """When a tick read the state (``t``), when its plan arrived (``arrival``; ``nan`` when it failed),
    its compute time (s, from the measurement to the plan), the preparation before it (s, :meth:`MPC.prepare`;
    0 when none ran) and whether it missed its deadline (preparation and compute time over the period)."""

    t: float
    arrival: float
    compute_time: float
    deadline_miss: bool
    preparation_time: float = 0.0


@dataclass
class ClosedLoopResult:
    """Plant samples every ``record_every`` steps: ``times`` (K,), ``states`` (K, n), ``controls``
    (K, nu) applied, ``forces`` (K, 3) disturbances; the ticks' timings and the controller's
    :attr:`MPC.log`, one each per tick (the first plan's included); ``fell`` and ``fall_time``
    (s, ``nan`` when it did not fall), ``fall_reason`` and ``interrupted``."""

    times: np.ndarray
    states: np.ndarray
    controls: np.ndarray
    forces: np.ndarray
    ticks: List[TickTiming]
    log: list
    fell: bool
    fall_time: float
    rate: float
    delay: Union[str, float]
    fall_reason: str = ""
    #: True when Ctrl-C stopped the run: it holds every tick that finished before
    interrupted: bool = False

    def deadline_misses(self) -> int:
        """Ticks whose compute time exceeded the controller's period."""
        return sum(t.deadline_miss for t in self.ticks)


def run_closed_loop(
    mpc: MPC,
    plant: Any,
    duration: float,
    rate: float,
    delay: Union[str, float] = "measured",
    disturbances: Sequence = (),
    latency: float = 0.0,
    noise: Optional[np.ndarray] = None,
    seed: int = 0,
    record_every: int = 1,
    progress: Optional[Callable[[float, Any], None]] = None,
    compensate: bool = False,
    on_tick: Optional[Callable[[Any, TickTiming, Any], None]] = None,
    compensation: Optional[Callable[[np.ndarray], np.ndarray]] = None,
    sense_contacts: bool = True,
) -> ClosedLoopResult:
    """Run ``mpc`` on ``plant`` for ``duration`` s of simulated time and return what happened.

    The plant steps at its own ``dt``; every ``1 / rate`` s (``rate`` in Hz) the controller measures
    the state (plus Gaussian ``noise``, its standard deviation per tangent direction, drawn with
    ``seed``) and solves. Its plan reaches the plant ``delay`` later: ``"measured"`` after the
    solve's wall time (the next tick waits for it), ``"tick"`` one period later, or a fixed number
    of seconds; torque commands reach the actuators ``latency`` s after they are computed.
    ``disturbances`` (:class:`~trajopt.mpc.disturbances.Push`, :class:`~trajopt.mpc.disturbances.Gust`)
    add their WORLD force on the base. The plant's state, control and force are recorded every
    ``record_every`` plant steps; the loop stops early when ``plant.fallen()``. Returns a
    :class:`ClosedLoopResult` (the recorded samples, one :class:`TickTiming` per tick, the
    controller's :class:`~trajopt.mpc.TickRecord` log, whether and when the plant fell).
    ``compensation(x)``: torques the joint-level loop adds to the plan's at every plant step
    (:class:`~trajopt.mpc.joint_compensation.PassiveCompensation`: the joints' damping and friction).
    With ``sense_contacts`` the plant's foot contacts are read at every step (a plant with ``foot_forces``,
    :func:`~trajopt.mpc.stance_gate.touching`) and the plan's law holds the legs in the air that stand in the plan by a
    joint PD instead of its stance feedback (:mod:`~trajopt.mpc.stance_gate`); ``False`` keeps every row of the gains.
    ``progress(t, log)`` is called once per simulated second, and ``on_tick(record, timing, plan)`` once
    per tick when its record is complete (after the next tick's preparation, which checks the
    tick's plan; ``plan`` is ``None`` for a failed tick): a log written as the run goes
    (:mod:`trajopt.mpc.log_writers`). Ctrl-C (``KeyboardInterrupt``) stops the loop: the result
    holds every tick that finished, with ``interrupted`` set (in the main thread, the SIGINT is
    read between plant steps, so that the tick it arrives in finishes). The first plan comes from :meth:`MPC.reset` at the plant's
    initial state, before the clock starts (the robot waits for it). A late plan is still applied
    at the right time: its law is indexed by absolute time. With ``compensate`` each tick also
    solves for the moment its plan is expected to arrive (:meth:`MPC.step`'s ``delay``: the
    controller's :meth:`~MPC.compute_estimate` with ``delay="measured"``, the period with
    ``"tick"``, the given delay otherwise; plus the actuators' ``latency``). It is off by default:
    on the Go1's command sequence it made the loop fall at a change of gait (docs/design/mpc.md)."""
    if not (np.isfinite(duration) and duration > 0):
        raise ValueError(f"duration: expected s > 0, got {duration!r}")
    if not (np.isfinite(rate) and rate > 0):
        raise ValueError(f"rate: expected Hz > 0, got {rate!r}")
    if not (delay in DELAYS or (isinstance(delay, (int, float)) and delay >= 0)):
        raise ValueError(f"delay: expected 'measured', 'tick' or seconds >= 0, got {delay!r}")
    if not (np.isfinite(latency) and latency >= 0):
        raise ValueError(f"latency: expected s >= 0, got {latency!r}")
    model, dt, period = mpc.problem.model, plant.dt, 1.0 / rate
    rng = np.random.default_rng(seed)
    if noise is not None:
        noise = np.broadcast_to(np.asarray(noise, dtype=float), (model.error_dim,))

    def measure(x: np.ndarray) -> np.ndarray:
        return x if noise is None else np.asarray(model.apply_dx(x, noise * rng.standard_normal(model.error_dim))).reshape(-1)

    x = plant.state()
    plan = mpc.reset(plant.t, measure(x))
    pending: deque = deque()  # (arrival time, plan or None)
    commands: deque = deque()  # (time it reaches the actuators, u)
    ticks: List[TickTiming] = [TickTiming(plant.t, plant.t, mpc.log[-1].compute_time, False)]  # the first plan, before the clock starts
    times, states, controls, forces = [], [], [], []
    steps = int(round(duration / dt))
    next_tick, fell, fall_time = plant.t + period, False, float("nan")
    second = 1.0

    def sensed(plan: Any) -> Optional[np.ndarray]:
        """The feet touching now, for the plan's law (``None`` with ``sense_contacts`` off)."""
        return plan_contacts(plan, plant) if sense_contacts else None

    u_applied = plan.control(plant.t, x, touching=sensed(plan))
    prepares = mpc.prepares and not compensate
    recent: deque = deque(maxlen=10)  # the last preparations' wall times (s)
    unreported: deque = deque([plan])  # the plans of the ticks not yet handed to on_tick (None for a failed one)
    interrupted = False
    try:
        with sigint_stops() as stop:
            preparation = _timed(mpc.prepare, next_tick) if prepares else 0.0
            for k in range(steps):
                if stop.requested:
                    raise KeyboardInterrupt
                t = plant.t
                if t >= next_tick - 1e-9:
                    ahead = mpc.compute_estimate() if delay == "measured" else period if delay == "tick" else float(delay)
                    start = time.perf_counter()
                    new = mpc.step(t, measure(x), delay=ahead + latency if compensate else 0.0)
                    compute = time.perf_counter() - start
                    wait = compute if delay == "measured" else period if delay == "tick" else float(delay)
                    arrival = t + max(wait, dt)
                    pending.append((arrival, new))
                    ticks.append(TickTiming(t, arrival if new is not None else float("nan"), compute, preparation + compute > period, preparation))
                    unreported.append(new)
                    next_tick += period
                    while delay == "measured" and next_tick < arrival - 1e-9:  # busy: the ticks it overran are skipped
                        next_tick += period
                    if prepares:  # between ticks: the next one's preparation, after which the controller is free
                        expected = t + compute + (float(np.median(recent)) if recent else 0.0)
                        while delay == "measured" and next_tick < expected - 1e-9:  # a preparation it cannot finish in time is for a later tick
                            next_tick += period
                        preparation = _timed(mpc.prepare, next_tick)
                        recent.append(preparation)
                        busy = t + compute + preparation
                        if delay == "measured" and next_tick < busy - 1e-9:  # it overran the next tick, which then runs whole
                            preparation = 0.0
                            while next_tick < busy - 1e-9:
                                next_tick += period
                    _report(on_tick, mpc.log, ticks, unreported)  # after the preparation that checked this tick's plan
                while pending and t >= pending[0][0] - 1e-9:
                    arrived = pending.popleft()[1]
                    plan = arrived if arrived is not None else plan
                u = plan.control(t, x, touching=sensed(plan))
                if compensation is not None:
                    u = u + compensation(x)
                if latency > 0:
                    commands.append((t + latency, u))
                    while commands and commands[0][0] <= t + 1e-9:
                        u_applied = commands.popleft()[1]
                else:
                    u_applied = u
                force = total_force(disturbances, t)
                if k % record_every == 0:
                    times.append(t)
                    states.append(x)
                    controls.append(u_applied)
                    forces.append(force)
                plant.step(u_applied, force)
                x = plant.state()
                if plant.fallen():
                    fell, fall_time = True, plant.t
                    break
                if progress is not None and plant.t >= second - 1e-9:
                    progress(plant.t, mpc.log)
                    second += 1.0
    except KeyboardInterrupt:  # Ctrl-C (or a callback's KeyboardInterrupt): keep what ran; a tick cut short leaves its record or timing out
        interrupted = True
    finished = min(len(ticks), len(mpc.log))
    del ticks[finished:]
    if not interrupted:
        mpc.check_pending()
    _report(on_tick, mpc.log[:finished], ticks, unreported)
    return ClosedLoopResult(
        np.array(times), np.array(states), np.array(controls), np.array(forces), ticks, list(mpc.log)[:finished], fell, fall_time, float(rate), delay,
        getattr(plant, "fall_reason", "") if fell else "", interrupted,
    )  # fmt: skip


class StopRequest:
    """Whether a SIGINT asked the loop to stop."""

    requested = False


@contextmanager
def sigint_stops() -> Iterator[StopRequest]:
    """Within the block, SIGINT (Ctrl-C) only sets ``requested``, which the loop reads between plant steps.

    A ``KeyboardInterrupt`` raised wherever Python happens to be (inside CasADi's conversion of its
    results, for one) can surface as another error and leave the controller half way through a
    tick. The handler is installed in the main thread over Python's default one only (an
    application's own handler is left alone); the previous one is restored after the block.
    """
    stop = StopRequest()
    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGINT) if main else None
    if previous is not signal.default_int_handler:
        yield stop
        return

    def request(signum: int, frame: Any) -> None:
        stop.requested = True

    signal.signal(signal.SIGINT, request)
    try:
        yield stop
    finally:
        signal.signal(signal.SIGINT, previous)


def _report(on_tick: Optional[Callable[[Any, TickTiming, Any], None]], log: Sequence, ticks: List[TickTiming], unreported: deque) -> None:
    """Hand ``on_tick`` each tick not yet reported (``unreported`` holds their plans, oldest first) whose record is in ``log``."""
    while unreported:
        index = len(ticks) - len(unreported)
        plan = unreported.popleft()
        if on_tick is not None and index < len(log):
            on_tick(log[index], ticks[index], plan)


def _timed(function: Callable[[float], None], t: float) -> float:
    """The wall time (s) of ``function(t)``."""
    start = time.perf_counter()
    function(t)
    return time.perf_counter() - start
