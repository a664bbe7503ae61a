"""The sweep driver: :func:`sweep` submits the grid's points to Dask and streams the results to disk.

The sweep folder ``out``:

- ``sweep.json``: what the folder holds (the problem and the solve settings
  that define the solved problem: transcription, solver, options, and chart
  and hessian when given). A rerun
  must name the same; the grid may grow or shrink (only the points not done
  yet are solved);
- ``solutions/<key>.npz``: each point's :class:`~trajopt.Solution` (written
  by this process from the bytes a worker returns, atomically);
- ``results.parquet`` and ``parts/`` (:mod:`trajopt.batch.table`);
- ``.lock``: held (``flock``) while a sweep runs, so two sweeps never write
  one folder.

A rerun of a finished sweep (every point of the grid in the table, without
an error) starts no cluster: it compacts the table and returns, so its
summary is reprinted in about the time it takes to import the toolkit.

Scheduling: at most ``2 x`` the cluster's worker threads tasks are in flight
(re-read every few seconds, so workers may join or leave); each finished
task is recorded and released before the next is submitted, so the memory
of this process and of the scheduler does not grow with the grid. Without
warm starts the points go in grid order; with ``warm_start="nearest"``
each point waits for its parent in the continuation forest
(:mod:`trajopt.batch.continuation`).

Faults: a failed solve is a row with the backend's status. A task that
raises is retried ``retries`` times by Dask (``client.submit(retries=)``);
a task whose worker dies (killed, out of memory) is rerun on another worker
by the scheduler, up to its ``distributed.scheduler.allowed-failures``
times, which the embedded cluster sets to ``retries`` (an external
scheduler keeps its own setting). A point that still fails is a row with
its ``error``, solved again by the next run. Ctrl-C cancels the running
tasks, writes the rows received, and raises ``KeyboardInterrupt``.
"""
from __future__ import annotations

import heapq
import json
import os
import time
import uuid
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Mapping, Optional, TextIO, Union

import numpy as np
import pyarrow as pa

from ..atomic_file import atomic_output
from ..extras import require_extra
from ..solvers import SolverSettings, solver_class
from ..solvers.derivatives import available_cores
from ..solvers.settings import settings_with

try:
    import fcntl
except ImportError:  # not POSIX: no folder lock
    fcntl = None  # type: ignore[assignment]
from ..transcription import get_transcription
from . import continuation
from .points import Grid, ProblemRef, canonical_params, expand_grid, point_key
from .progress import Progress, summary
from .table import ResultsTable, parameter_type
from .task import check_worker, solve_point, warm_budget

if TYPE_CHECKING:  # dask and distributed are imported when a cluster is used (a finished sweep needs neither)
    from distributed import Client

#: Format tag of ``sweep.json``.
MANIFEST_FORMAT = "trajopt-sweep-1"
#: Warm-start modes.
WARM_STARTS = ("nearest", None)
#: Seconds between re-reads of the cluster's thread count.
SLOTS_REFRESH = 5.0


@dataclass
class SweepResult:
    """What :func:`sweep` did: counts for this run and where the results are."""

    out: Path
    problem: str
    points: int
    solved: int
    skipped: int
    failed: int
    errors: int
    wall_time: float
    workers: int
    stats: Dict[str, Any] = field(repr=False, default_factory=dict)

    @property
    def table_path(self) -> Path:
        """The sweep's results table, ``out/results.parquet``."""
        return self.out / "results.parquet"

    def table(self, columns: Optional[List[str]] = None) -> pa.Table:
        """The results table (``pyarrow.Table``; ``.to_pandas()`` with pandas installed)."""
        import pyarrow.parquet as pq

        return pq.read_table(self.table_path, columns=columns)

    def solution_path(self, key: str) -> Path:
        """The solution file of the point ``key``."""
        return self.out / "solutions" / f"{key}.npz"

    def summary(self) -> str:
        """The text :func:`trajopt.batch.progress.summary` prints for this sweep."""
        return summary(self.table(), self.stats)


#: The settings a sweep's folder records (a rerun with others is refused: :func:`_check_manifest`).
MANIFEST_SETTINGS = ("transcription", "solver", "max_iter", "tol", "options", "chart", "hessian")


def _settings(settings: Optional[SolverSettings], overrides: Mapping[str, Any]) -> SolverSettings:
    """The sweep's solve settings (one thread per solve unless given), the backend's options checked before any worker starts."""
    chosen = settings_with(settings, overrides)
    if chosen.transcription is not None:
        chosen = chosen.replace(transcription=get_transcription(chosen.transcription).name)
    if chosen.solver is not None:
        solver_class(chosen.solver).check_options(chosen.options, None)
    return chosen if chosen.threads is not None else chosen.replace(threads=1)


def _check_manifest(out: Path, manifest: Dict[str, Any]) -> None:
    """Write ``sweep.json``, or check that the folder's names the same problem and settings."""
    path = out / "sweep.json"
    if path.exists():
        try:
            found = json.loads(path.read_text())
        except (OSError, ValueError) as err:
            raise ValueError(f"out: {os.fspath(path)!r} is not a sweep description ({err})") from None
        if found != manifest:
            raise ValueError(f"out: {os.fspath(out)!r} holds a sweep of {found.get('problem')!r} with {found.get('solve')}, not of {manifest['problem']!r} with {manifest['solve']}; use another folder")
        return
    if any(p.name != ".lock" for p in out.iterdir()):
        raise ValueError(f"out: {os.fspath(out)!r} is not empty and holds no sweep.json; use a new folder")
    with atomic_output(path) as tmp:
        tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True))


@contextmanager
def _locked(out: Path) -> Iterator[None]:
    """Hold ``out/.lock`` exclusively; ``RuntimeError`` when another sweep holds it."""
    with open(out / ".lock", "a") as fh:
        try:
            if fcntl is not None:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RuntimeError(f"out: another sweep is running in {os.fspath(out)!r}") from None
        except OSError:  # a filesystem without flock: unlocked, as the compile cache does
            pass
        yield


def _check_cluster(client: Union[None, str, Client], n_workers: Optional[int]) -> None:
    """``ValueError`` or ``TypeError`` for cluster arguments that cannot work, raised before any work
    (also by a finished sweep, which starts no cluster)."""
    if client is not None and n_workers is not None:
        raise ValueError("n_workers: sizes the embedded cluster; a given client's cluster has its own workers")
    if n_workers is not None and (isinstance(n_workers, bool) or not isinstance(n_workers, int) or n_workers < 1):
        raise ValueError(f"n_workers: expected an int >= 1, got {n_workers!r}")
    if client is not None and not isinstance(client, str):
        from distributed import Client  # imported already by whoever made a client

        if not isinstance(client, Client):
            raise TypeError(f"client: expected a distributed.Client, a scheduler address or None, got {type(client).__name__}")


@contextmanager
def _connected(client: Union[None, str, Client], n_workers: Optional[int], retries: int) -> Iterator[Client]:
    """The client to use (arguments checked by :func:`_check_cluster`): ``client`` itself, a new one
    connected to the scheduler address ``client``, or an embedded ``LocalCluster`` (``n_workers``,
    default one per core, single-threaded worker processes); closes what it opened."""
    modules = require_extra("batch", ("dask", "distributed"), "trajopt.batch")
    dask, Client, LocalCluster = modules["dask"], modules["distributed"].Client, modules["distributed"].LocalCluster
    if isinstance(client, Client):
        yield client
        return
    with ExitStack() as stack:
        if client is None:
            workers = available_cores() if n_workers is None else n_workers
            # the scheduler's HTTP server (the dashboard, when bokeh is installed) on a free port: no clash with another cluster's 8787
            with dask.config.set({"distributed.scheduler.allowed-failures": retries}):
                cluster = stack.enter_context(LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0"))
            yield stack.enter_context(Client(cluster))
        else:
            yield stack.enter_context(Client(client))


def sweep(
    problem: Union[str, Callable[..., Any]],
    grid: Grid,
    client: Union[None, str, Client] = None,
    out: Union[str, os.PathLike] = "sweep",
    warm_start: Optional[str] = "nearest",
    retries: int = 2,
    params: Optional[Mapping[str, Any]] = None,
    settings: Optional[SolverSettings] = None,
    seeds: Optional[int] = None,
    n_workers: Optional[int] = None,
    progress: Optional[TextIO] = None,
    **overrides: Any,
) -> SweepResult:
    """Solve ``problem`` at every point of ``grid`` on Dask workers; results in ``out`` (:mod:`trajopt.batch`).

    Parameters
    ----------
    problem:
        A registry name (``"go1-trot"``), ``"package.module:function"``, or an importable factory function.
    grid:
        ``{key: [values]}`` (the product) or a list of ``{key: value}`` points.
    client:
        A ``distributed.Client``, a scheduler address (``"tcp://host:8786"``), or ``None``
        for an embedded ``LocalCluster`` of ``n_workers`` (default: one per core)
        single-threaded worker processes, closed at the end.
    out:
        The sweep folder (created); a rerun with the same folder skips the points done.
    warm_start:
        ``"nearest"``: each point starts from its parent's solution in the continuation
        forest (:mod:`trajopt.batch.continuation`, ``seeds`` roots); ``None``: every
        point from its problem's own initial guess (the same result as a single solve).
    retries:
        Retries of a task that raises or whose worker dies (module docstring).
    params:
        Parameters fixed for every point.
    settings, overrides:
        How each point is solved: a :class:`~trajopt.SolverSettings` with ``overrides`` (its
        field names: ``transcription``, ``solver``, ``options``, ``max_iter``, ``compile``,
        ``chart``, ``hessian``, ...), as :func:`trajopt.solve` takes them (``None``: the
        problem's defaults). ``threads`` of each solve's stage maps is 1 unless given, Dask
        running one task per worker thread (a solve with more threads would compete with the
        other workers' solves).
    progress:
        A stream for the progress line (``sys.stderr``), or ``None``.
    """
    if warm_start not in WARM_STARTS:
        raise ValueError(f"warm_start: expected 'nearest' or None, got {warm_start!r}")
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ValueError(f"retries: expected an int >= 0, got {retries!r}")
    ref = ProblemRef.resolve(problem)
    settings = _settings(settings, overrides)
    raw_points, keys = expand_grid(grid, params)
    points = [canonical_params(ref, p) for p in raw_points]
    hashes = [point_key(ref, p) for p in points]
    if len(set(hashes)) < len(hashes):
        seen: Dict[str, int] = {}
        for i, h in enumerate(hashes):
            if h in seen:
                raise ValueError(f"grid: the point {points[i]} appears twice (points {seen[h]} and {i})")
            seen[h] = i
    continuation.check_seeds(seeds)
    _check_cluster(client, n_workers)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    manifest = {"format": MANIFEST_FORMAT, "problem": ref.name, "solve": {k: v for k, v in settings.given().items() if k in MANIFEST_SETTINGS}}
    start = time.perf_counter()
    with _locked(out):
        _check_manifest(out, manifest)
        (out / "solutions").mkdir(exist_ok=True)
        table = ResultsTable(out, {k: parameter_type([p.get(k) for p in points]) for k in keys})
        done = table.done()
        todo = sum(h not in done for h in hashes)
        if not todo:  # a finished sweep: its summary from the table, no cluster
            table.compact()
            if progress is not None:
                progress.write(f"every point is in {os.fspath(table.path)}: nothing to solve\n")
            stats = {"problem": ref.name, "solved": 0, "skipped": len(points), "failed": 0, "errors": 0, "wall": time.perf_counter() - start, "workers": 0, "out": out}
            return SweepResult(out, ref.name, len(points), 0, len(points), 0, 0, stats["wall"], 0, stats)
        if warm_start == "nearest":
            order, parent = continuation.plan(continuation.coordinates(points, keys), seeds)
        else:
            order, parent = np.arange(len(points)), np.full(len(points), -1)
        if progress is not None:
            progress.write(f"solving {todo} of {len(points)} points on {_cluster_text(client, n_workers)}\n")
        with _connected(client, n_workers, retries) as dask_client:
            runner = _Runner(dask_client, ref, settings, points, keys, hashes, order, parent, out, table, retries, warm_start is not None)
            stats = runner.run(progress)
    return SweepResult(out, ref.name, len(points), stats["solved"], stats["skipped"], stats["failed"], stats["errors"], stats["wall"], stats["workers"], stats)


def _cluster_text(client: Union[None, str, Client], n_workers: Optional[int]) -> str:
    """Where the points are solved, as the progress stream says it."""
    if client is None:
        return f"an embedded cluster of {available_cores() if n_workers is None else n_workers} worker processes"
    return f"the scheduler at {client}" if isinstance(client, str) else "the given client's cluster"


class _Runner:
    """One run of a sweep over a connected client (the scheduling loop of the module docstring)."""

    def __init__(self, client: Client, ref: ProblemRef, settings: SolverSettings, points: List[Dict[str, Any]], keys: List[str], hashes: List[str],
                 order: np.ndarray, parent: np.ndarray, out: Path, table: ResultsTable, retries: int, warm: bool) -> None:
        self.client, self.ref, self.settings = client, ref, settings
        self.points, self.keys, self.hashes = points, keys, hashes
        self.parent, self.out, self.table, self.retries, self.warm = parent, out, table, retries, warm
        self.rank = np.empty(len(points), dtype=int)
        self.rank[order] = np.arange(len(points))
        self.children: Dict[int, List[int]] = {}
        for i, p in enumerate(parent):
            if p >= 0:
                self.children.setdefault(int(p), []).append(i)
        done = table.done()
        self.finished = {i: done[h] for i, h in enumerate(hashes) if h in done}  # index -> {"success", "file", "iterations", "warm_from"}
        self.index = {h: i for i, h in enumerate(hashes)}

    def _slots(self) -> int:
        return max(1, sum(self.client.nthreads().values()))

    def _ready_initially(self) -> List[int]:
        return [i for i in range(len(self.points)) if i not in self.finished and (self.parent[i] < 0 or int(self.parent[i]) in self.finished)]

    def _warm_source(self, i: int) -> Optional[int]:
        """The nearest ancestor of ``i`` with a successful solution file."""
        a = int(self.parent[i])
        while a >= 0:
            info = self.finished.get(a)
            if info and info["success"] and info["file"] and (self.out / info["file"]).is_file():
                return a
            a = int(self.parent[a])
        return None

    def _cold_iterations(self, a: int) -> int:
        """Iterations of the cold solve that began point ``a``'s warm-start chain (``a``'s own when it
        was solved cold, or when the chain leaves the grid)."""
        while self.finished[a]["warm_from"] in self.index and self.index[self.finished[a]["warm_from"]] in self.finished:
            a = self.index[self.finished[a]["warm_from"]]
        return int(self.finished[a]["iterations"])

    def _submit(self, i: int) -> tuple:
        """``(task future, warm-start data future or None)`` of point ``i``. The neighbour's solution file
        is scattered to the workers rather than embedded in the task: Dask keeps the last messages of
        each stream for debugging (``distributed.admin.low-level-log-length``, 1000), which with
        solution files inside grew this process by ~50 kB per task."""
        source = self._warm_source(i) if self.warm else None
        warm = self.client.scatter((self.out / self.finished[source]["file"]).read_bytes(), hash=False) if source is not None else None
        budget = warm_budget(self._cold_iterations(source)) if source is not None else None
        args = (self.ref, self.points[i], self.settings, warm, self.hashes[source] if source is not None else "", self.points[source] if source is not None else None, budget)
        return self.client.submit(solve_point, *args, key=f"trajopt-sweep-{self.hashes[i]}-{uuid.uuid4().hex[:8]}", retries=self.retries, pure=False), warm

    def _record(self, i: int, future: Any) -> Dict[str, Any]:
        """Write the solution and the row of point ``i`` from its finished ``future``; return the row."""
        base = {"key": self.hashes[i], "params": json.dumps(self.points[i], sort_keys=True), **{k: self.points[i].get(k) for k in self.keys}}
        try:
            result = future.result()
        except Exception as err:  # the task raised after its retries, or its worker died too often (KilledWorker)
            row = {**base, "success": False, "status": "Error", "error": f"{type(err).__name__}: {err}".splitlines()[0][:500], "file": ""}
        else:
            file = f"solutions/{self.hashes[i]}.npz"
            with atomic_output(self.out / file, overwrite=True) as tmp:
                tmp.write_bytes(result["solution"])
            row = {**base, **result["row"], "file": file, "error": ""}
        self.table.append(row)
        return row

    def run(self, stream: Optional[TextIO]) -> Dict[str, Any]:
        from distributed import as_completed

        start = time.perf_counter()
        versions = self.client.run(check_worker, self.ref)
        skipped = len(self.finished)
        bar = Progress(len(self.points), skipped, stream)
        ready = [(int(self.rank[j]), j) for j in self._ready_initially()]  # a heap: the next point in plan order first
        heapq.heapify(ready)
        in_flight: Dict[Any, tuple] = {}  # task future -> (point, warm-start data future)
        results = as_completed()
        slots, slots_read = self._slots(), time.monotonic()
        solved = failed = errors = 0

        def fill() -> None:
            while ready and len(in_flight) < 2 * slots:
                _, j = heapq.heappop(ready)
                future, warm = self._submit(j)
                in_flight[future] = (j, warm)
                results.add(future)

        try:
            fill()
            bar.update(running=len(in_flight))
            for future in results:
                i, warm = in_flight.pop(future)
                row = self._record(i, future)
                future.release()
                if warm is not None:
                    warm.release()
                bad = not row["success"]
                errors += bool(row["error"])
                failed += bad and not row["error"]
                solved += not row["error"]
                if not row["error"]:
                    self.finished[i] = {key: row[key] for key in ("success", "file", "iterations", "warm_from")}
                for child in self.children.get(i, []):  # after an error too: the child starts from an older ancestor
                    if child not in self.finished:
                        heapq.heappush(ready, (int(self.rank[child]), child))
                if time.monotonic() - slots_read > SLOTS_REFRESH:
                    slots, slots_read = self._slots(), time.monotonic()
                fill()
                bar.update(finished=1, failed=int(bad), running=len(in_flight))
        except BaseException:
            for future in in_flight:
                future.cancel()
            self.table.flush()
            raise
        bar.close()
        self.table.compact()
        return {
            "problem": self.ref.name,
            "solved": solved,
            "skipped": skipped,
            "failed": failed,
            "errors": errors,
            "wall": time.perf_counter() - start,
            "workers": max(len(versions), len(self.client.nthreads())),
            "out": self.out,
        }
