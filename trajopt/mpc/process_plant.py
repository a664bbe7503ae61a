"""A plant on its own clock in another process: the loop as it runs on a robot.

On a robot, the controller does not step the plant: the robot's SDK streams
its state and takes commands at its own rate (1 kHz for the Go1's), whether
or not a plan is ready, and the controller's process meets real
inter-process latency and jitter. :class:`RealtimePlant` is what a real-time
loop (:func:`trajopt.mpc.realtime.run_realtime_loop`) needs of such a plant:

- :meth:`~RealtimePlant.read_at`: the state the plant had at a plant time
  (waiting until it gets there), as the measurement of a tick;
- :meth:`~RealtimePlant.send`: a plan, whose feedback law
  (:meth:`trajopt.mpc.plan.Plan.control`) the plant applies from its arrival
  at every plant step, as a robot's joint-level controller would;
- :meth:`~RealtimePlant.time`, :meth:`~RealtimePlant.fallen`,
  :meth:`~RealtimePlant.close`.

:class:`ProcessPlant` implements it with any plant of a task (MuJoCo's) in a
child process: every ``dt`` of the wall clock it applies the newest plan's
law, steps, and publishes the state with its plant time in shared memory
(a ring of the last :data:`RING` steps); plans arrive over a pipe. It
records, per plan, the latency from the wall time the plant published the
tick's state to the wall time the plan reached it (``CLOCK_MONOTONIC``,
shared by the processes), the loop's round trip through a real process
boundary. The child starts with the ``spawn`` method: it builds its own
task from the problem's registry name and parameters, never shares CasADi
or MuJoCo objects with the parent.

A robot adapter implements the same methods over its SDK (the MPC guide has
a skeleton): its state read and its command write in the 1 kHz loop that
applies the plan's law.
"""
from __future__ import annotations

import multiprocessing as mp
import time
from typing import Any, Dict, List, Optional, Protocol, Tuple

import numpy as np

#: Plant steps kept in the shared ring of states (about 0.25 s at 1 kHz).
RING = 256
#: The fields of a plan that cross the process boundary (the child rebuilds the plan with its own model).
PLAN_FIELDS = ("times", "states", "controls", "intervals", "gains", "params", "lower", "upper")


class RealtimePlant(Protocol):
    """What a real-time loop needs of a plant that runs on its own clock (module docstring)."""

    #: the plant's step (s)
    dt: float

    def time(self) -> float:
        """The plant's time now (s)."""

    def read_at(self, t: float, timeout: float = 1.0) -> Tuple[float, np.ndarray]:
        """``(t_k, x)``: the state at the first plant step at or after ``t`` (waiting until the plant is there)."""

    def send(self, plan: Any) -> None:
        """Hand the plant a plan: it applies ``plan.control(t, x, touching=c)`` from its arrival, at every step (``c``
        the feet touching the ground, ``None`` without contact sensors)."""

    def fallen(self) -> bool:
        """Whether the plant counts as failed (a legged robot on the ground)."""

    def close(self) -> None:
        """Stop the plant."""


def _serve(spec: Dict[str, Any], ring: Any, counter: Any, status: Any, conn: Any) -> None:
    """The child's loop: build the task's plant and model, then step in real time until told to stop (module docstring)."""
    import problems
    from trajopt.mpc.joint_compensation import PassiveCompensation
    from trajopt.mpc.plan import Plan, reference_error_function
    from trajopt.mpc.stance_gate import StanceGate, plan_contacts
    from trajopt.mpc.tasks import mpc_task

    task = mpc_task(problems.get(spec["name"], **spec["params"]), spec["horizon"])
    plant = task.plant(**spec["plant"])
    model, dt = task.problem.model, plant.dt
    compensation = PassiveCompensation.of_plant(plant, model.robot) if spec["compensate"] else None
    interpolants: Dict[str, Any] = {}
    gate = StanceGate.of(model)  # for the plans whose legs in the air are held by a joint PD, as in the emulated loop
    plan = None
    latencies: List[Tuple[float, float]] = []
    published: np.ndarray = np.zeros(RING)  # the wall time each ring slot's state was published
    n = model.state_dim

    def publish(step: int) -> None:
        slot = step % RING
        x = plant.state()
        with ring.get_lock():
            ring[slot * (n + 1)] = plant.t
            ring[slot * (n + 1) + 1 : (slot + 1) * (n + 1)] = x
        published[slot] = time.perf_counter()
        counter.value = step

    step = 0
    publish(step)
    conn.send("ready")
    conn.poll(None)  # the robot waits for its first plan, then its clock runs
    start = None
    while True:
        while conn.poll():
            message = conn.recv()
            if message is None:
                conn.send({"latencies": latencies})
                return
            arrived = time.perf_counter()
            fields = {name: message[name] for name in PLAN_FIELDS}
            transcription = message["transcription"]
            if transcription not in interpolants:
                interpolant = Plan(model, transcription, **fields).interpolant()
                interpolants[transcription] = (interpolant, reference_error_function(interpolant, model))
            interpolant, reference_error = interpolants[transcription]
            plan = Plan(model, transcription, **fields, interpolant_function=interpolant, gate=gate if message["gated"] else None, reference_error=reference_error)
            measured = int(round(plan.t0 / dt))
            if 0 <= step - measured < RING:
                    latencies.append((plan.t0, arrived - published[measured % RING]))
        if start is None:
            start = time.perf_counter() - plant.t
        x = plant.state()
        u = plan.control(plant.t, x, touching=plan_contacts(plan, plant))
        plant.step(u if compensation is None else u + compensation(x), np.zeros(3))
        step += 1
        publish(step)
        if plant.fallen():
            status.value = 1
        wait = start + plant.t - time.perf_counter()
        if wait > 0:  # real time: a step that ran late is caught up by the next ones
            time.sleep(wait)


class ProcessPlant:
    """A task's plant (e.g. the Go1 in MuJoCo) stepping in real time in another process (module docstring).

    ``name`` and ``params``: the registered problem (:func:`problems.get`); ``n``: the state's size;
    ``dt``: the plant's step (s); ``horizon``: the task's horizon (s, or ``None``); ``plant``: the
    options of :meth:`~trajopt.mpc.tasks.MPCTask.plant`; ``compensate``: the joint-level loop adds the
    joints' damping and friction (:class:`~trajopt.mpc.joint_compensation.PassiveCompensation`: the
    plant file's, else the URDF's). The plant waits at its initial state for the first plan (the
    robot holds still until its controller is up), then runs on the wall clock.
    """

    def __init__(self, name: str, params: Dict[str, Any], n: int, dt: float, horizon: Optional[float] = None, plant: Optional[Dict[str, Any]] = None, compensate: bool = False) -> None:
        context = mp.get_context("spawn")
        self.dt, self.n = float(dt), int(n)
        self._ring = context.Array("d", RING * (self.n + 1))
        self._counter = context.Value("l", -1, lock=False)
        self._status = context.Value("i", 0, lock=False)
        self._conn, child = context.Pipe()
        spec = {"name": name, "params": dict(params), "horizon": horizon, "plant": dict(plant or {}), "compensate": bool(compensate)}
        self._process = context.Process(target=_serve, args=(spec, self._ring, self._counter, self._status, child), daemon=True)
        self._process.start()
        if not self._conn.poll(120) or self._conn.recv() != "ready":
            self.close()
            raise RuntimeError("plant: the plant process did not start")
        #: per plan: (its first knot's time, the latency from the state's publication to the plan's arrival, s)
        self.latencies: List[Tuple[float, float]] = []

    def time(self) -> float:
        """The plant's time now (s): its last published step."""
        step = int(self._counter.value)
        return step * self.dt

    def read_at(self, t: float, timeout: float = 1.0) -> Tuple[float, np.ndarray]:
        """``(t_k, x)`` at the first step at or after ``t``, waiting for the plant to get there (``RuntimeError`` after
        ``timeout`` s, or when the process died); the newest state when the ring no longer holds that step."""
        target = max(int(np.ceil(t / self.dt - 1e-9)), 0)
        deadline = time.perf_counter() + timeout
        while int(self._counter.value) < target:
            if time.perf_counter() > deadline or not self._process.is_alive():
                raise RuntimeError(f"plant: no state at t = {t:.3f} s within {timeout} s (the plant process is {'alive' if self._process.is_alive() else 'dead'})")
            time.sleep(1e-4)
        latest = int(self._counter.value)
        step = target if latest - target < RING else latest
        slot = step % RING
        with self._ring.get_lock():
            row = np.array(self._ring[slot * (self.n + 1) : (slot + 1) * (self.n + 1)])
        return float(row[0]), row[1:]

    def send(self, plan: Any) -> None:
        """Hand the plan's arrays to the plant process, which applies its law from their arrival."""
        self._conn.send({"transcription": plan.transcription, "gated": plan.gate is not None, **{name: np.asarray(getattr(plan, name)) for name in PLAN_FIELDS}})

    def fallen(self) -> bool:
        """Whether the plant process saw its plant fall."""
        return bool(self._status.value)

    def close(self) -> None:
        """Stop the child and collect its latencies."""
        if self._process.is_alive():
            try:
                self._conn.send(None)
                if self._conn.poll(10):
                    self.latencies = self._conn.recv()["latencies"]
            except (BrokenPipeError, EOFError):
                pass
            self._process.join(timeout=10)
        if self._process.is_alive():
            self._process.kill()
