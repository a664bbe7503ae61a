"""The results table of a sweep: one Parquet row per point, streamed to disk, compacted at the end.

Layout inside the sweep folder:

- ``results.parquet``: the compacted table (one row per point);
- ``parts/part-<time>-<pid>.parquet``: rows appended since the last
  compaction, each part written whole (:func:`trajopt.atomic_file.atomic_output`)
  when :data:`FLUSH_ROWS` rows are waiting or :data:`FLUSH_SECONDS` have
  passed, so the sweep's process holds at most that many rows and an
  interrupted sweep loses at most the last few seconds of rows (their
  points are solved again on resume).

:meth:`ResultsTable.compact` merges the two into a new ``results.parquet``
part by part (the process never holds more than one part besides the keys),
keeping one row per key: the latest, except that a row with an ``error``
(the task raised, or its worker died more often than the retries allow)
never replaces one without. Rows without ``error`` are the points that are
done (succeeded or failed with a solver status); the others are solved again
by the next run.

Columns: ``key`` (:func:`trajopt.batch.points.point_key`), ``params`` (every
parameter as canonical JSON), one column per swept parameter (bool, int64,
float64 or string; lists as JSON text), the task's fields
(:data:`trajopt.batch.task.ROW_FIELDS`), ``file`` (the solution file,
relative to the sweep folder; empty without one), ``error`` and
``finished`` (UTC time the row was recorded).
"""
from __future__ import annotations

import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import pyarrow as pa
import pyarrow.parquet as pq

from ..atomic_file import atomic_output

#: Rows kept in memory before a part file is written.
FLUSH_ROWS = 256
#: Seconds after which waiting rows are written anyway.
FLUSH_SECONDS = 2.0

#: The columns of a sweep's results table after the point's key and parameters (:func:`table_schema`).
RESULT_SCHEMA = pa.schema(
    [
        ("success", pa.bool_()),
        ("status", pa.string()),
        ("iterations", pa.int64()),
        ("objective", pa.float64()),
        ("max_violation", pa.float64()),
        ("setup_time", pa.float64()),
        ("build_time", pa.float64()),
        ("solve_time", pa.float64()),
        ("eval_time", pa.float64()),
        ("solver_time", pa.float64()),
        ("task_time", pa.float64()),
        ("warm_from", pa.string()),
        ("discarded_iterations", pa.int64()),
        ("discarded_time", pa.float64()),
        ("worker", pa.string()),
        ("file", pa.string()),
        ("error", pa.string()),
        ("finished", pa.timestamp("ms", tz="UTC")),
    ]
)
#: Numeric result columns (what a sweep can plot).
METRICS = tuple(f.name for f in RESULT_SCHEMA if pa.types.is_floating(f.type) or pa.types.is_integer(f.type) or pa.types.is_boolean(f.type))


def parameter_type(values: Sequence[Any]) -> pa.DataType:
    """The column type of a swept parameter's values: bool, int64, float64, or string (JSON text of anything else)."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return pa.bool_()
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pa.int64()
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return pa.float64()
    return pa.string()


def table_schema(parameters: Mapping[str, pa.DataType]) -> pa.Schema:
    """``key``, ``params``, the swept parameters, then :data:`RESULT_SCHEMA`."""
    clash = sorted(set(parameters) & ({"key", "params"} | set(RESULT_SCHEMA.names)))
    if clash:
        raise ValueError(f"grid: the parameter names {clash} are column names of the results table; rename them in the factory")
    return pa.schema([("key", pa.string()), ("params", pa.string()), *parameters.items(), *RESULT_SCHEMA])


class ResultsTable:
    """The table of a sweep folder (module docstring); ``parameters``: column types of the swept parameters."""

    def __init__(self, folder: str | os.PathLike, parameters: Mapping[str, pa.DataType]) -> None:
        self.folder = Path(folder)
        self.path = self.folder / "results.parquet"
        self.parts = self.folder / "parts"
        self.schema = table_schema(parameters)
        self._rows: List[Dict[str, Any]] = []
        self._last_flush = time.monotonic()

    # ------------------------------------------------------------ reading
    def files(self) -> List[Path]:
        """The table's files, oldest first: ``results.parquet``, then the parts in the order they were written."""
        found = [self.path] if self.path.exists() else []
        return found + (sorted(self.parts.glob("part-*.parquet")) if self.parts.is_dir() else [])

    def _winners(self) -> Tuple[Dict[str, Tuple[int, int]], Dict[str, Dict[str, Any]]]:
        """Per key, ``(file index, row)`` of the row kept (module docstring), and its ``success``, ``error``,
        ``file``, ``iterations`` and ``warm_from``."""
        winners: Dict[str, Tuple[int, int]] = {}
        kept: Dict[str, Dict[str, Any]] = {}
        for f, path in enumerate(self.files()):
            cols = pq.read_table(path, columns=["key", "success", "error", "file", "iterations", "warm_from"]).to_pydict()
            for j, key in enumerate(cols["key"]):
                row = {
                    "success": cols["success"][j], "error": cols["error"][j] or "", "file": cols["file"][j] or "",
                    "iterations": cols["iterations"][j] or 0, "warm_from": cols["warm_from"][j] or "",
                }  # fmt: skip
                if key not in kept or not row["error"] or kept[key]["error"]:
                    winners[key], kept[key] = (f, j), row
        return winners, kept

    def done(self) -> Dict[str, Dict[str, Any]]:
        """The points done so far: key -> ``{"success", "file", "iterations", "warm_from"}`` (rows without an error)."""
        return {key: row for key, row in self._winners()[1].items() if not row["error"]}

    def read(self, columns: Optional[Sequence[str]] = None) -> pa.Table:
        """The compacted table (:meth:`compact` first for rows still in parts)."""
        return pq.read_table(self.path, columns=list(columns) if columns is not None else None)

    # ------------------------------------------------------------ writing
    def append(self, row: Mapping[str, Any]) -> None:
        """Add a row (missing columns are null); written with the next part."""
        self._rows.append({**row, "finished": datetime.now(timezone.utc)})
        if len(self._rows) >= FLUSH_ROWS or time.monotonic() - self._last_flush >= FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        """Write the waiting rows as one part file."""
        self._last_flush = time.monotonic()
        if not self._rows:
            return
        self.parts.mkdir(exist_ok=True)
        table = pa.Table.from_pylist([self._column_values(r) for r in self._rows], schema=self.schema)
        with atomic_output(self.parts / f"part-{time.time_ns():020d}-{os.getpid()}.parquet") as tmp:
            pq.write_table(table, tmp)
        self._rows = []

    def _column_values(self, row: Mapping[str, Any]) -> Dict[str, Any]:
        """``row`` with swept parameters of string columns that are not strings written as JSON."""
        out = dict(row)
        for field in self.schema:
            value = out.get(field.name)
            if pa.types.is_string(field.type) and value is not None and not isinstance(value, str):
                out[field.name] = json.dumps(value)
        return out

    def compact(self) -> None:
        """Merge ``results.parquet`` and the parts into a new ``results.parquet`` (module docstring); remove the parts."""
        self.flush()
        files = self.files()
        if not files or files == [self.path]:
            return
        winners, _ = self._winners()
        keep: Dict[int, List[int]] = {}
        for f, j in winners.values():
            keep.setdefault(f, []).append(j)
        schemas = [pq.read_schema(p) for p in files] + [self.schema]
        try:
            schema = pa.unify_schemas(schemas, promote_options="permissive")
        except (pa.ArrowInvalid, pa.ArrowTypeError) as err:
            raise ValueError(f"out: the table's files in {os.fspath(self.folder)!r} have incompatible columns ({err})") from None
        with atomic_output(self.path, overwrite=True) as tmp:
            with pq.ParquetWriter(tmp, schema) as writer:
                for f, path in enumerate(files):
                    if f in keep:
                        part = pq.read_table(path).take(sorted(keep[f]))
                        writer.write_table(_conform(part, schema))
        for path in files[1:] if files[0] == self.path else files:
            path.unlink()


def _conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` with ``schema``'s columns in its order (absent ones null), cast to its types."""
    columns = [table.column(f.name).cast(f.type) if f.name in table.column_names else pa.nulls(table.num_rows, f.type) for f in schema]
    return pa.Table.from_arrays(columns, schema=schema)
