"""The per-tick log written as the run goes: CSV, Parquet or MCAP (Foxglove).

:func:`open_tick_log` opens a writer for a path by its extension; the closed
loop hands it every tick (``run_closed_loop(on_tick=writer.write)``) and
:meth:`TickLog.close` finishes the file with the run's end (a fall or an
interruption, marked on the last row: :func:`trajopt.mpc.log.log_row`).

- **CSV** rows go to ``<file>.partial`` as the ticks finish, one flushed
  line each; :meth:`~TickLog.close` renames it to the file. A run killed
  outright leaves the ``.partial`` file with every tick it logged.
- **Parquet** is columnar: its rows are kept and written whole at the end.
- **MCAP** (the ``logs`` extra: ``mcap``, ``mcap-protobuf-support``,
  ``foxglove-schemas-protobuf``) messages go to ``<file>.partial`` as the
  ticks finish, on channels Foxglove opens with no configuration:

  ============================ ================================= ==========================================
  topic                        schema                            what
  ============================ ================================= ==========================================
  ``/tf``                      ``foxglove.FrameTransforms``      every link of the robot in ``world``
                                                                 (pinocchio's kinematics of the measured
                                                                 state); a rigid body's ``base``
  ``/joint_states``            ``foxglove.JointStates``          measured joint positions and velocities,
                                                                 the plan's first torques as efforts
  ``/contact_forces``          ``foxglove.SceneUpdate``          the plan's first contact forces as arrows
                                                                 at the feet (1 mm per N), in ``world``
  ``/plan/base_path``          ``foxglove.PosesInFrame``         the plan's base poses over the horizon
  ``/controller``              ``trajopt.TickLog`` (JSON schema) the log's row: times, iterations, status,
                                                                 violations, base motion
  ============================ ================================= ==========================================

  Each message carries the tick's simulated time (``t``, as nanoseconds) as its log and publish time.

An existing file is replaced only with ``overwrite``; the check happens when
the writer opens, before the run.
"""
from __future__ import annotations

import csv
import json
import os
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np

from models.multibody_model import multibody_robot

from ..extras import require_extra
from .log import LOG_COLUMNS, csv_cell, log_row
from .loop import ClosedLoopResult

#: The extensions :func:`open_tick_log` writes.
LOG_EXTENSIONS = (".csv", ".parquet", ".mcap")
#: Import names of the ``logs`` extra (MCAP with Foxglove's schemas).
LOGS_MODULES = ("mcap", "mcap_protobuf", "foxglove_schemas_protobuf")
#: Length of a contact-force arrow per newton (m).
ARROW_PER_NEWTON = 1e-3


class TickLog(ABC):
    """A log that takes one tick at a time (:meth:`write`) and is finished by :meth:`close`; one row lags, so that
    the run's end is marked on the last."""

    def __init__(self, path: str | os.PathLike, model: Any, overwrite: bool = False) -> None:
        self.path, self.model = Path(path), model
        if self.path.exists() and not overwrite:
            raise FileExistsError(f"log: {os.fspath(self.path)} exists; pass overwrite=True (--overwrite) to replace it")
        self.partial = self.path.with_name(self.path.name + ".partial")
        self._last: Optional[tuple] = None
        self.ticks = 0

    def write(self, record: Any, timing: Any, plan: Any) -> None:
        """Log one tick (:class:`~trajopt.mpc.controller.TickRecord`, :class:`~trajopt.mpc.loop.TickTiming`, its plan or ``None``)."""
        if self._last is not None:
            self._emit(*self._last)
        self._last = (record, timing, plan, False, False)
        self.ticks += 1

    def close(self, fell: bool = False, interrupted: bool = False) -> Path:
        """Write the last tick with the run's end and finish the file; returns its path."""
        if self._last is not None:
            self._emit(*self._last[:3], fell, interrupted)
            self._last = None
        self._finish()
        return self.path

    def _row(self, record: Any, timing: Any, fallen: bool, interrupted: bool) -> Dict[str, Any]:
        return log_row(record, timing, self.model, fallen, interrupted)

    @abstractmethod
    def _emit(self, record: Any, timing: Any, plan: Any, fallen: bool, interrupted: bool) -> None:
        """Write one tick's row or messages (``fallen`` and ``interrupted``: the run's end, on its last tick)."""

    @abstractmethod
    def _finish(self) -> None:
        """Complete the file and give it its name."""


class CsvTickLog(TickLog):
    """CSV rows (:data:`~trajopt.mpc.log.LOG_COLUMNS`) appended to ``<file>.partial`` and flushed per tick."""

    def __init__(self, path: str | os.PathLike, model: Any, overwrite: bool = False) -> None:
        super().__init__(path, model, overwrite)
        self._handle = open(self.partial, "w", newline="")
        self._writer = csv.writer(self._handle)
        self._writer.writerow(LOG_COLUMNS)

    def _emit(self, record: Any, timing: Any, plan: Any, fallen: bool, interrupted: bool) -> None:
        row = self._row(record, timing, fallen, interrupted)
        self._writer.writerow([csv_cell(row[name]) for name in LOG_COLUMNS])
        self._handle.flush()

    def _finish(self) -> None:
        self._handle.close()
        os.replace(self.partial, self.path)


class ParquetTickLog(TickLog):
    """Rows kept in memory and written as one Parquet table at :meth:`close` (pyarrow, the ``batch`` extra)."""

    def __init__(self, path: str | os.PathLike, model: Any, overwrite: bool = False) -> None:
        try:
            import pyarrow  # noqa: F401 - checked before the run
        except ImportError:
            raise ValueError("log: a .parquet log needs pyarrow (pip install 'trajopt-toolkit[batch]'); or write .csv") from None
        super().__init__(path, model, overwrite)
        self._rows: List[Dict[str, Any]] = []

    def _emit(self, record: Any, timing: Any, plan: Any, fallen: bool, interrupted: bool) -> None:
        self._rows.append(self._row(record, timing, fallen, interrupted))

    def _finish(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.table({name: [row[name] for row in self._rows] for name in LOG_COLUMNS})
        pq.write_table(table, self.partial)
        os.replace(self.partial, self.path)


class McapTickLog(TickLog):
    """MCAP messages on Foxglove's schemas (module docstring) appended to ``<file>.partial``."""

    def __init__(self, path: str | os.PathLike, model: Any, overwrite: bool = False) -> None:
        require_extra("logs", LOGS_MODULES, "MCAP logs")
        super().__init__(path, model, overwrite)
        from mcap.writer import Writer
        from mcap_protobuf.schema import register_schema

        self._foxglove = _foxglove_messages()
        self._handle = open(self.partial, "wb")
        self._writer = Writer(self._handle)
        self._writer.start(profile="", library="trajopt")
        self._robot = multibody_robot(model)
        self._channels: Dict[str, int] = {}
        for topic, message in (("/tf", "FrameTransforms"), ("/joint_states", "JointStates"), ("/contact_forces", "SceneUpdate"), ("/plan/base_path", "PosesInFrame")):
            schema = register_schema(self._writer, self._foxglove[message])
            self._channels[topic] = self._writer.register_channel(topic=topic, message_encoding="protobuf", schema_id=schema)
        row_schema = {"type": "object", "title": "trajopt.TickLog", "properties": {name: {"type": _json_type(name)} for name in LOG_COLUMNS}}
        schema = self._writer.register_schema(name="trajopt.TickLog", encoding="jsonschema", data=json.dumps(row_schema).encode())
        self._channels["/controller"] = self._writer.register_channel(topic="/controller", message_encoding="json", schema_id=schema)
        self._kinematics = _link_kinematics(self._robot) if self._robot is not None else None

    def _emit(self, record: Any, timing: Any, plan: Any, fallen: bool, interrupted: bool) -> None:
        stamp = int(round(record.t * 1e9))
        messages = {"/controller": json.dumps({k: _json_value(v) for k, v in self._row(record, timing, fallen, interrupted).items()}).encode()}
        messages["/tf"] = self._transforms(record.state, record.t).SerializeToString()
        if self._robot is not None:
            messages["/joint_states"] = self._joint_states(record).SerializeToString()
            messages["/contact_forces"] = self._contact_forces(record).SerializeToString()
        if plan is not None:
            messages["/plan/base_path"] = self._base_path(plan).SerializeToString()
        for topic, data in messages.items():
            self._writer.add_message(channel_id=self._channels[topic], log_time=stamp, publish_time=stamp, data=data, sequence=self.ticks)
        self._handle.flush()

    def _finish(self) -> None:
        self._writer.finish()
        self._handle.close()
        os.replace(self.partial, self.path)

    # ------------------------------------------------------------ messages
    def _timestamp(self, t: float) -> Any:
        stamp = self._foxglove["Timestamp"]()
        stamp.FromNanoseconds(int(round(t * 1e9)))
        return stamp

    def _pose(self, position: Any, quaternion_xyzw: Any) -> Any:
        pose = self._foxglove["Pose"]()
        pose.position.x, pose.position.y, pose.position.z = (float(v) for v in position)
        pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w = (float(v) for v in quaternion_xyzw)
        return pose

    def _transforms(self, x: np.ndarray, t: float) -> Any:
        out = self._foxglove["FrameTransforms"]()
        frames = self._kinematics(x) if self._kinematics is not None else [("base", *_base_pose(self.model, x))]
        for name, position, quaternion in frames:
            tf = out.transforms.add()
            tf.timestamp.CopyFrom(self._timestamp(t))
            tf.parent_frame_id, tf.child_frame_id = "world", name
            tf.translation.x, tf.translation.y, tf.translation.z = (float(v) for v in position)
            tf.rotation.x, tf.rotation.y, tf.rotation.z, tf.rotation.w = (float(v) for v in quaternion)
        return out

    def _joint_states(self, record: Any) -> Any:
        robot = self._robot
        out = self._foxglove["JointStates"]()
        out.timestamp.CopyFrom(self._timestamp(record.t))
        base_q, base_v = (7, 6) if robot.is_floating else (0, 0)
        q, v = record.state[base_q : robot.nq], record.state[robot.nq + base_v : robot.nq + robot.nv]
        torques = np.asarray(record.control, dtype=float)[: robot.nu] if np.size(record.control) >= robot.nu else np.full(robot.nu, np.nan)
        for k, name in enumerate(robot.joint_names):
            joint = out.joints.add()
            joint.name, joint.position, joint.velocity = name, float(q[k]), float(v[k])
            joint.effort = float(torques[k]) if k < len(torques) and np.isfinite(torques[k]) else 0.0
        return out

    def _contact_forces(self, record: Any) -> Any:
        out = self._foxglove["SceneUpdate"]()
        entity = out.entities.add()
        entity.timestamp.CopyFrom(self._timestamp(record.t))
        entity.frame_id, entity.id = "world", "contact_forces"
        forces = _first_contact_forces(self.model, record)
        if forces is None:
            return out
        feet = np.asarray(self._robot.kinematics(record.state), dtype=float).reshape(-1, 3)
        for foot, force in zip(feet, forces.reshape(-1, 3)):
            magnitude = float(np.linalg.norm(force))
            if magnitude < 1e-9:
                continue
            arrow = entity.arrows.add()
            arrow.pose.CopyFrom(self._pose(foot, _quaternion_from_x_axis(force / magnitude)))
            arrow.shaft_length, arrow.shaft_diameter = ARROW_PER_NEWTON * magnitude, 0.01
            arrow.head_length, arrow.head_diameter = 0.02, 0.02
            arrow.color.r, arrow.color.g, arrow.color.b, arrow.color.a = 0.9, 0.3, 0.1, 1.0
        return out

    def _base_path(self, plan: Any) -> Any:
        out = self._foxglove["PosesInFrame"]()
        out.timestamp.CopyFrom(self._timestamp(plan.t0))
        out.frame_id = "world"
        for x in plan.states:
            out.poses.add().CopyFrom(self._pose(*_base_pose(self.model, x)))
        return out


def write_log(result: ClosedLoopResult, model: Any, path: str | os.PathLike, overwrite: bool = False) -> Path:
    """Write a finished run's log to ``path`` (``.csv``, ``.parquet`` or ``.mcap``, :func:`open_tick_log`) with the
    plans left out (a :class:`~trajopt.mpc.loop.ClosedLoopResult` keeps none): the MCAP file has no ``/plan/base_path``."""
    log = open_tick_log(path, model, overwrite)
    for record, timing in zip(result.log, result.ticks):
        log.write(record, timing, None)
    return log.close(result.fell, result.interrupted)


def open_tick_log(path: str | os.PathLike, model: Any, overwrite: bool = False) -> TickLog:
    """The :class:`TickLog` for ``path`` by its extension (:data:`LOG_EXTENSIONS`); ``ValueError`` for another one,
    or when the format's extra is missing; ``FileExistsError`` when the file exists and not ``overwrite``."""
    suffix = Path(path).suffix.lower()
    writers = {".csv": CsvTickLog, ".parquet": ParquetTickLog, ".mcap": McapTickLog}
    if suffix not in writers:
        raise ValueError(f"log: expected a file ending in {', '.join(LOG_EXTENSIONS)}, got {os.fspath(path)!r}")
    return writers[suffix](path, model, overwrite)


# ---------------------------------------------------------------- helpers
def _foxglove_messages() -> Dict[str, Any]:
    """The Foxglove message classes the MCAP log writes, and protobuf's ``Timestamp``."""
    from foxglove_schemas_protobuf.FrameTransforms_pb2 import FrameTransforms
    from foxglove_schemas_protobuf.JointStates_pb2 import JointStates
    from foxglove_schemas_protobuf.Pose_pb2 import Pose
    from foxglove_schemas_protobuf.PosesInFrame_pb2 import PosesInFrame
    from foxglove_schemas_protobuf.SceneUpdate_pb2 import SceneUpdate
    from google.protobuf.timestamp_pb2 import Timestamp

    return {"FrameTransforms": FrameTransforms, "JointStates": JointStates, "Pose": Pose, "PosesInFrame": PosesInFrame, "SceneUpdate": SceneUpdate, "Timestamp": Timestamp}


def _json_type(column: str) -> str:
    """The JSON-schema type of a log column."""
    if column == "status":
        return "string"
    if column in ("success", "late", "cold", "deadline_miss", "fallen", "interrupted"):
        return "boolean"
    return "number"


def _json_value(value: Any) -> Any:
    """A log cell as JSON: NaN as null (JSON has no NaN), numpy scalars as Python ones."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if not np.isfinite(value) else float(value)
    return value


def _base_pose(model: Any, x: np.ndarray) -> tuple:
    """Position (3,) and quaternion ``[x, y, z, w]`` of a state's base (a floating base's, a rigid body's;
    the origin for other models)."""
    from lie import rot_to_quat

    robot = getattr(model, "robot", model)
    if getattr(robot, "is_floating", False):
        w, xq, yq, zq = np.asarray(robot.base_orientation(x), dtype=float)
        return np.asarray(robot.base_position(x), dtype=float), (xq, yq, zq, w)
    if hasattr(model, "gen_inds") and hasattr(model, "rotation_matrix"):
        w, xq, yq, zq = np.asarray(rot_to_quat(np.asarray(model.rotation_matrix(x), dtype=float)), dtype=float).reshape(4)
        return np.asarray(x[model.gen_inds()["r"]], dtype=float), (xq, yq, zq, w)
    return np.zeros(3), (0.0, 0.0, 0.0, 1.0)


def _link_kinematics(robot: Any) -> Any:
    """``x -> [(link, position, quaternion xyzw)]`` of every link of a multibody robot in the world (pinocchio)."""
    import pinocchio as pin

    model = robot.pin_model
    data = model.createData()
    links = [(f.name, i) for i, f in enumerate(model.frames) if f.type == pin.FrameType.BODY]

    def frames(x: np.ndarray) -> list:
        q = robot.change_order(np.asarray(x[: robot.nq], dtype=float), "nominal", "pinocchio")
        pin.framesForwardKinematics(model, data, q)
        out = []
        for name, i in links:
            placement = data.oMf[i]
            out.append((name, placement.translation, pin.Quaternion(placement.rotation).coeffs()))  # coeffs: x, y, z, w
        return out

    return frames


def _first_contact_forces(model: Any, record: Any) -> Optional[np.ndarray]:
    """The plan's first contact forces (nc x 3 stacked, WORLD) at the measured state: the contact formulation's KKT
    forces for the tick's torques and stance, or the forces in the control; ``None`` for a model without contacts
    or a failed tick."""
    if not np.all(np.isfinite(record.control)):
        return None
    formulation = getattr(model, "formulation", None)
    if formulation is None or not hasattr(model, "contact_solution"):
        return None
    if formulation.stance_is_parameter:
        return np.asarray(model.contact_solution(record.state, record.control, record.params)[1], dtype=float)
    return np.asarray(record.control, dtype=float)[model.f_slice]


def _quaternion_from_x_axis(direction: np.ndarray) -> tuple:
    """The quaternion ``[x, y, z, w]`` turning the x axis onto the unit vector ``direction`` (Foxglove's arrows point along x)."""
    axis = np.cross([1.0, 0.0, 0.0], direction)
    s, c = np.linalg.norm(axis), float(direction[0])
    if s < 1e-12:
        return (0.0, 0.0, 0.0, 1.0) if c > 0 else (0.0, 0.0, 1.0, 0.0)
    angle = np.arctan2(s, c)
    xq, yq, zq = axis / s * np.sin(angle / 2)
    return (float(xq), float(yq), float(zq), float(np.cos(angle / 2)))
