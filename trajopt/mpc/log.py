"""The per-tick log of a closed loop as a table: CSV or Parquet.

One row per controller tick (:func:`log_columns`): ``t`` (s, the measurement
time), ``compute_time`` (s, wall, from the measurement to the plan), ``preparation_time`` (s, wall,
the tick's preparation before the measurement) and ``solve_time`` (s, wall), ``iterations``,
``qp_iterations``, ``status``, ``success``, ``late``, ``cold``, ``failures``, ``objective``,
``violation`` and ``first_violation`` (:class:`~trajopt.mpc.controller.TickRecord`),
the measured base position ``base_x``, ``base_y``, ``base_z`` (m, WORLD) and
velocity ``base_vx``, ``base_vy``, ``base_vz`` (m/s, WORLD; a floating base's
body-frame velocity rotated to the world), ``arrival`` (s, when the plan
reached the plant; empty when the tick failed), ``deadline_miss`` and
``fallen`` (true from the tick at which the plant had fallen; on the last
row when it fell after the last tick).
"""
from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any, Dict, Tuple

import numpy as np

from lie import quat_to_rot

from ..atomic_file import atomic_output
from .controller import TICK_PHASES
from .loop import ClosedLoopResult

LOG_EXTENSIONS = (".csv", ".parquet")


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


def log_columns(result: ClosedLoopResult, model: Any) -> Dict[str, np.ndarray]:
    """The per-tick log of a closed loop on ``model`` (the controller's), one array per column, one row per tick:
    ``t``, ``compute_time``, ``preparation_time``, ``solve_time``, ``iterations``, ``qp_iterations``, ``status``, ``success``, ``late``, ``cold``,
    ``failures``, ``objective``, ``violation``, ``first_violation``, the measured base position
    ``base_x/y/z`` (m) and WORLD velocity ``base_vx/vy/vz`` (m/s), ``arrival`` (s), ``deadline_miss``,
    ``fallen``, and one ``time_<phase>`` column (s) per phase of :data:`~trajopt.mpc.controller.TICK_PHASES`
    that some tick reports (NaN in the ticks that do not)."""
    ticks = result.log
    motion = [base_motion(model, r.state) for r in ticks]
    position = np.array([m[0] for m in motion]).reshape(-1, 3)
    velocity = np.array([m[1] for m in motion]).reshape(-1, 3)
    t = np.array([r.t for r in ticks])
    fallen = np.zeros(len(ticks), dtype=bool)
    if result.fell and len(ticks):
        fallen[t >= result.fall_time] = True
        fallen[-1] = True
    if len(result.ticks) != len(ticks):
        raise ValueError(f"result: {len(result.ticks)} tick timings for {len(ticks)} log records")
    columns: Dict[str, np.ndarray] = {
        "t": t,
        "compute_time": np.array([r.compute_time for r in ticks]),
        "preparation_time": np.array([r.preparation_time for r in ticks]),
        "solve_time": np.array([r.solve_time for r in ticks]),
        "iterations": np.array([r.iterations for r in ticks], dtype=int),
        "qp_iterations": np.array([r.qp_iterations for r in ticks], dtype=int),
        "status": np.array([r.status for r in ticks], dtype=object),
        "success": np.array([r.success for r in ticks], dtype=bool),
        "late": np.array([r.late for r in ticks], dtype=bool),
        "cold": np.array([r.cold for r in ticks], dtype=bool),
        "failures": np.array([r.failures for r in ticks], dtype=int),
        "objective": np.array([r.objective for r in ticks]),
        "violation": np.array([r.violation for r in ticks]),
        "first_violation": np.array([r.first_violation for r in ticks]),
        "base_x": position[:, 0], "base_y": position[:, 1], "base_z": position[:, 2],
        "base_vx": velocity[:, 0], "base_vy": velocity[:, 1], "base_vz": velocity[:, 2],
        "arrival": np.array([tk.arrival for tk in result.ticks]),
        "deadline_miss": np.array([tk.deadline_miss for tk in result.ticks], dtype=bool),
        "fallen": fallen,
    }  # fmt: skip
    for phase in TICK_PHASES:
        if any(phase in r.phases for r in ticks):
            columns[f"time_{phase}"] = np.array([r.phases.get(phase, np.nan) for r in ticks])
    return columns


def write_log(result: ClosedLoopResult, model: Any, path: str | os.PathLike, overwrite: bool = False) -> Path:
    """Write the log to ``path`` (``.csv``, or ``.parquet`` with pyarrow, the ``batch`` extra) whole or
    not at all; an existing file is replaced only with ``overwrite``. Returns the path."""
    path = Path(path)
    if path.suffix.lower() not in LOG_EXTENSIONS:
        raise ValueError(f"log: expected a file ending in {' or '.join(LOG_EXTENSIONS)}, got {os.fspath(path)!r}")
    columns = log_columns(result, model)
    if path.suffix.lower() == ".parquet":
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise ValueError("log: a .parquet log needs pyarrow (pip install 'trajopt-toolkit[batch]'); or write .csv") from None
        table = pa.table({k: (v.astype(str) if v.dtype == object else v) for k, v in columns.items()})
        with atomic_output(path, overwrite) as tmp:
            pq.write_table(table, tmp)
        return path
    with atomic_output(path, overwrite) as tmp:
        with open(tmp, "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(list(columns))
            for row in zip(*columns.values()):
                writer.writerow([_cell(v) for v in row])
    return path


def _cell(value: Any) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (float, np.floating)):
        return "" if np.isnan(value) else repr(float(value))
    return str(value)
