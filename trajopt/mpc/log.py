"""The per-tick log of a closed loop as a table: CSV or Parquet.

One row per controller tick (:func:`log_columns`): ``t`` (s, the measurement
time), ``compute_time`` (s, wall, from the measurement to the plan), ``preparation_time`` (s, wall,
the tick's preparation before the measurement) and ``solve_time`` (s, wall), ``iterations``,
``qp_iterations``, ``status``, ``success``, ``late``, ``cold``, ``failures``, ``objective``,
``violation`` and ``first_violation`` (:class:`~trajopt.mpc.controller.TickRecord`),
the measured base position ``base_x``, ``base_y``, ``base_z`` (m, WORLD) and
velocity ``base_vx``, ``base_vy``, ``base_vz`` (m/s, WORLD; a floating base's
body-frame velocity rotated to the world), ``arrival`` (s, when the plan
reached the plant; empty when the tick failed), ``deadline_miss``,
``fallen`` and ``interrupted`` (true on the last row of a run that fell or
was stopped by Ctrl-C), and the wall time of each phase of the tick
(``time_<phase>``). :mod:`trajopt.mpc.log_writers` writes it as the run goes.
"""
from __future__ import annotations

from typing import Any, Dict, Tuple

import numpy as np

from lie import quat_to_rot

from .controller import TICK_PHASES
from .loop import ClosedLoopResult



def base_motion(model: Any, x: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Base position (3,) and WORLD velocity (3,) of a state: a floating base's ``q[:3]`` and
    ``Rot(q) v[:3]``, a rigid body's position and (world) linear velocity; NaN for other models."""
    robot = getattr(model, "robot", model)
    if getattr(robot, "is_floating", False):
        nq = robot.nq
        return np.asarray(robot.base_position(x), dtype=float), quat_to_rot(np.asarray(robot.base_orientation(x))) @ np.asarray(x[nq : nq + 3])
    if hasattr(model, "gen_inds") and hasattr(model, "rotation_matrix"):
        i = model.gen_inds()
        v = np.asarray(x[i["v"]], dtype=float)
        return np.asarray(x[i["r"]], dtype=float), (v if model.velocity_frame == "world" else np.asarray(model.rotation_matrix(x)) @ v)
    return np.full(3, np.nan), np.full(3, np.nan)


#: The log's columns in order: every tick's fields, then one ``time_<phase>`` column per phase of
#: :data:`~trajopt.mpc.controller.TICK_PHASES` (NaN in the ticks that do not report it).
LOG_COLUMNS = (
    "t", "compute_time", "preparation_time", "solve_time", "iterations", "qp_iterations", "status", "success", "late",
    "cold", "failures", "objective", "violation", "first_violation", "base_x", "base_y", "base_z", "base_vx", "base_vy",
    "base_vz", "arrival", "deadline_miss", "fallen", "interrupted", *(f"time_{phase}" for phase in TICK_PHASES),
)  # fmt: skip


def log_row(record: Any, timing: Any, model: Any, fallen: bool = False, interrupted: bool = False) -> Dict[str, Any]:
    """One tick's row of the log (:data:`LOG_COLUMNS`): its :class:`~trajopt.mpc.controller.TickRecord` ``record``, its
    :class:`~trajopt.mpc.loop.TickTiming` ``timing`` and the measured base motion (:func:`base_motion` on ``model``,
    the controller's); ``fallen`` and ``interrupted`` are the run's, marked on its last row."""
    position, velocity = base_motion(model, record.state)
    row: Dict[str, Any] = {
        "t": record.t, "compute_time": record.compute_time, "preparation_time": record.preparation_time,
        "solve_time": record.solve_time, "iterations": int(record.iterations), "qp_iterations": int(record.qp_iterations),
        "status": record.status, "success": bool(record.success), "late": bool(record.late), "cold": bool(record.cold),
        "failures": int(record.failures), "objective": record.objective, "violation": record.violation,
        "first_violation": record.first_violation,
        "base_x": position[0], "base_y": position[1], "base_z": position[2],
        "base_vx": velocity[0], "base_vy": velocity[1], "base_vz": velocity[2],
        "arrival": timing.arrival, "deadline_miss": bool(timing.deadline_miss), "fallen": bool(fallen), "interrupted": bool(interrupted),
    }  # fmt: skip
    for phase in TICK_PHASES:
        row[f"time_{phase}"] = record.phases.get(phase, float("nan"))
    return row


def log_columns(result: ClosedLoopResult, model: Any) -> Dict[str, np.ndarray]:
    """The per-tick log of a closed loop on ``model`` (the controller's), one array per column of
    :data:`LOG_COLUMNS`, one row per tick (:func:`log_row`): the run's fall and interruption are marked on its last row."""
    if len(result.ticks) != len(result.log):
        raise ValueError(f"result: {len(result.ticks)} tick timings for {len(result.log)} log records")
    last = len(result.log) - 1
    rows = [log_row(r, tk, model, fallen=result.fell and k == last, interrupted=result.interrupted and k == last) for k, (r, tk) in enumerate(zip(result.log, result.ticks))]
    return {name: np.array([row[name] for row in rows], dtype=object if name == "status" else None) for name in LOG_COLUMNS}


def csv_cell(value: Any) -> str:
    """A log cell as CSV text: ``true``/``false``, floats at full precision, NaN as an empty cell."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (float, np.floating)):
        return "" if np.isnan(value) else repr(float(value))
    return str(value)
