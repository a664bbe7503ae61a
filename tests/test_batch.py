"""Parameter sweeps on a real Dask ``LocalCluster`` with 2 worker processes (:mod:`trajopt.batch`).

The oracle of a sweep's solutions is the single solve (:func:`trajopt.solve`
of :func:`problems.get` in this process): equal bit for bit (every array and
the solver's report; only the wall times differ). Faults are real: a worker
process killed by SIGKILL in the middle of a task, a ``trajopt sweep``
process interrupted by SIGINT, two workers compiling the same stage
functions with a compiler that logs its runs (real gcc).
"""
from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

distributed = pytest.importorskip("distributed", reason="needs the batch extra: pip install -e \".[batch]\"")
pa = pytest.importorskip("pyarrow", reason="needs the batch extra: pip install -e \".[batch]\"")

import dask  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from distributed import Client, LocalCluster  # noqa: E402

import problems  # noqa: E402
from trajopt import Solution, SolverSettings, solve  # noqa: E402
from trajopt.batch import METRICS, ProblemRef, plot_metric, point_key, sweep  # noqa: E402
from trajopt.batch import continuation, range_values, task  # noqa: E402
from trajopt.batch.points import canonical_params, expand_grid  # noqa: E402
from trajopt.batch.table import ResultsTable, parameter_type  # noqa: E402
from trajopt.cli import main  # noqa: E402

from .batch_factories import GATE_SLOTS  # noqa: E402
from .interruptible import default_sigint  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TIMINGS = {"solve_time", "eval_time", "solver_time", "build_time"}
EXACT = 1e-12


@pytest.fixture(scope="module")
def client():
    """A LocalCluster of 2 single-threaded worker processes (a killed task is rerun twice at most)."""
    with dask.config.set({"distributed.scheduler.allowed-failures": 2}):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    with cluster, Client(cluster) as c:
        yield c


def assert_same_solution(a: Solution, b: Solution) -> None:
    """Every field equal bit for bit except the wall times."""
    for f in fields(Solution):
        if f.compare and f.name not in TIMINGS:
            x, y = getattr(a, f.name), getattr(b, f.name)
            if isinstance(x, np.ndarray):
                assert x.shape == y.shape and np.array_equal(x, y), f.name
            else:
                assert x == y, f.name


def rows_by_key(out: Path) -> dict:
    return {r["key"]: r for r in pq.read_table(out / "results.parquet").to_pylist()}


# ------------------------------------------------------------------ results


def test_sweep_solutions_equal_single_solves(client, tmp_path):
    """A 6-point quadrotor sweep (cold starts): every saved solution equals the single solve bit for bit, and its row reports it."""
    out = tmp_path / "quad"
    result = sweep("quadrotor", {"u_max": [3.0, 4.0, 5.0], "tf": [4.0, 5.0]}, client=client, out=out, params={"N": 21}, warm_start=None)
    assert (result.points, result.solved, result.skipped, result.errors) == (6, 6, 0, 0)
    rows = rows_by_key(out)
    assert len(rows) == 6 and len({r["worker"] for r in rows.values()}) == 2, "both workers solved points"
    for u_max in (3.0, 4.0, 5.0):
        for tf in (4.0, 5.0):
            params = {"N": 21, "u_max": u_max, "tf": tf}
            key = point_key(ProblemRef("quadrotor", "registry"), params)
            row = rows[key]
            assert (row["u_max"], row["tf"], json.loads(row["params"])) == (u_max, tf, params)
            single = solve(problems.get("quadrotor", **params))
            saved = problems.load_solution(out / row["file"])  # rebuilt from the recipe in the file
            assert_same_solution(saved, single)
            assert saved.success and saved.problem.tf == tf
            assert (row["success"], row["status"], row["iterations"], row["objective"], row["max_violation"]) == (
                single.success, single.status, single.iterations, single.objective, single.max_violation)
            assert row["warm_from"] == "" and row["error"] == "" and row["task_time"] >= row["solve_time"] > 0


def test_failed_points_are_rows_with_their_status(client, tmp_path):
    """Infeasible grid points are rows with IPOPT's status and their last iterate; a point whose problem
    cannot be built is a row with its error, solved again by the next run."""
    out = tmp_path / "pendulum"
    grid = [{"u_max": 1.0}, {"u_max": 5.0}, {"u_max": 0.5}, {"u_max": 5.0, "N": 1}]
    result = sweep("pendulum", grid, client=client, out=out, params={"tf": 3.0}, warm_start=None, retries=0)
    assert (result.solved, result.failed, result.errors) == (3, 2, 1)
    rows = {(r["u_max"], r["N"]): r for r in pq.read_table(out / "results.parquet").to_pylist()}
    for u_max in (1.0, 0.5):
        row = rows[(u_max, None)]
        single = solve(problems.get("pendulum", u_max=u_max, tf=3.0))
        assert not row["success"] and row["status"] == single.status == "Infeasible_Problem_Detected" and row["error"] == ""
        assert_same_solution(Solution.load(out / row["file"]), single)
    assert rows[(5.0, None)]["success"]
    broken = rows[(5.0, 1)]
    assert not broken["success"] and broken["status"] == "Error" and broken["file"] == "" and "N" in broken["error"]
    assert "2 failed" in result.summary() and "2 Infeasible_Problem_Detected" in result.summary()
    again = sweep("pendulum", grid, client=client, out=out, params={"tf": 3.0}, warm_start=None, retries=0)
    assert (again.skipped, again.solved, again.errors) == (3, 0, 1), "only the point with an error is tried again"


def test_killed_worker_task_is_retried(client, tmp_path):
    """A task kills its own worker process (SIGKILL) once: Dask reruns it on a live worker and the sweep completes."""
    marker = tmp_path / "killed.pid"
    out = tmp_path / "killed"
    pids = set(client.run(os.getpid).values())
    result = sweep("tests.batch_factories:quadrotor_killing_its_worker", {"u_max": [3.0, 4.0, 5.0]}, client=client, out=out,
                   params={"marker": str(marker)}, warm_start=None, retries=2)
    killed = int(marker.read_text())
    assert killed in pids, "a worker of the cluster was killed"
    assert (result.solved, result.errors, result.failed) == (3, 0, 0)
    rows = pq.read_table(out / "results.parquet").to_pylist()
    assert all(r["success"] for r in rows) and all(f"pid {killed})" not in r["worker"] for r in rows)
    deadline = time.time() + 60
    while len(client.nthreads()) < 2 and time.time() < deadline:  # the nanny restarts the killed worker
        time.sleep(0.2)
    assert len(client.nthreads()) == 2
    for row in rows:
        assert_same_solution(Solution.load(out / row["file"]), solve(problems.get("quadrotor", N=21, u_max=row["u_max"])))


def test_interrupted_sweep_resumes_without_recomputing(client, tmp_path):
    """`trajopt sweep` interrupted by SIGINT (exit 130) keeps the rows it received; the rerun solves only the rest.
    Four builds pass the factory's gate and the other eight wait at it, so the interrupt always comes
    while the sweep runs (it once finished first on a fast machine, when it only slept per build)."""
    out, gate = tmp_path / "resume", tmp_path / "gate"
    gate.mkdir()
    grid = {"u_max": [4.0, 4.5, 5.0, 5.5, 6.0, 6.5], "tf": [2.5, 3.0]}
    args = ["sweep", "tests.batch_factories:gated_pendulum", "--out", str(out), "--warm-start", "none", "--workers", "2",
            "--param", "u_max=4:6.5:6", "--param", "tf=2.5,3", "--param", f"gate={gate}"]
    code = f"import sys; from trajopt.cli import main; sys.exit(main({args!r}))"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    run = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    try:
        deadline = time.time() + 120
        while len(list((out / "solutions").glob("*.npz"))) < GATE_SLOTS and time.time() < deadline and run.poll() is None:
            time.sleep(0.05)
        time.sleep(0.5)  # the sweep records a point's row right after its file; the other points wait at the gate
        assert run.poll() is None, "the sweep ended before the interrupt"
        run.send_signal(signal.SIGINT)
        (gate / "open").touch()  # the waiting builds end, so the workers stop at once (Dask kills busy ones after 4 s)
        stdout, stderr = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 130, stderr
    assert "interrupted" in stderr
    table = ResultsTable(out, {})
    done = table.done()
    assert GATE_SLOTS <= len(done) < 12, f"{len(done)} points recorded before the interrupt"
    files = {p.name: p.stat() for p in (out / "solutions").glob("*.npz")}
    assert {f"{k}.npz" for k in done} <= set(files)
    before = {r["key"]: r for table_file in table.files() for r in pq.read_table(table_file).to_pylist()}
    result = sweep("tests.batch_factories:gated_pendulum", grid, client=client, out=out, params={"gate": str(gate)}, warm_start=None)
    assert (result.skipped, result.solved) == (len(done), 12 - len(done))
    rows = rows_by_key(out)
    assert len(rows) == 12
    for key in done:
        assert rows[key]["finished"] == before[key]["finished"] and rows[key]["worker"] == before[key]["worker"]
        now = (out / "solutions" / f"{key}.npz").stat()
        assert (now.st_ino, now.st_mtime_ns) == (files[f"{key}.npz"].st_ino, files[f"{key}.npz"].st_mtime_ns), "a finished point was solved again"
    assert not list((out / "parts").glob("*.parquet")), "the parts were compacted"


def test_finished_sweep_reprints_its_summary_without_a_cluster(client, tmp_path, capsys):
    """Every point in the table: the rerun reads it and starts no cluster. The address given has no
    scheduler behind it, so any attempt to connect would fail."""
    out, nowhere = tmp_path / "done", "tcp://127.0.0.1:9"
    first = sweep("pendulum", {"u_max": [4.0, 5.0]}, client=client, out=out, params={"N": 21}, warm_start=None)
    stream = io.StringIO()
    start = time.perf_counter()
    again = sweep("pendulum", {"u_max": [4.0, 5.0]}, client=nowhere, out=out, params={"N": 21}, progress=stream)
    assert time.perf_counter() - start < 2.0  # measured 0.05 s: reading the table
    assert (again.points, again.solved, again.skipped, again.workers) == (2, 0, 2, 0)
    assert stream.getvalue() == f"every point is in {out / 'results.parquet'}: nothing to solve\n"
    assert again.summary().splitlines()[1:] == [line for line in first.summary().splitlines()[1:] if not line.startswith("  this run:")]
    with pytest.raises(TypeError, match="client: expected a distributed.Client"):  # still checked, though unused
        sweep("pendulum", {"u_max": [4.0, 5.0]}, client=42, out=out, params={"N": 21})
    argv = ["sweep", "pendulum", "--param", "u_max=4,5", "--param", "N=21", "--out", str(out), "--scheduler", nowhere]
    assert main(argv) == 0
    printed = capsys.readouterr()
    assert "2 points (0 solved in this run, 2 done before)" in printed.out and "nothing to solve" in printed.err


# ------------------------------------------------------------------ warm starts


def test_warm_starts_are_reproducible_and_save_iterations(client, tmp_path):
    """Continuation over a quadrotor-flip grid: the same solutions on 1 and 2 workers (the plan depends on the
    grid only), and fewer iterations than cold starts (measured in the same test)."""
    grid = {"u_max": [5.5, 6.0, 6.5], "tf": [1.9, 2.1]}
    cold = sweep("quadrotor-flip", grid, client=client, out=tmp_path / "cold", warm_start=None)
    two = sweep("quadrotor-flip", grid, client=client, out=tmp_path / "two", seeds=1)
    one = sweep("quadrotor-flip", grid, out=tmp_path / "one", seeds=1, n_workers=1)
    assert cold.failed == two.failed == one.failed == 0
    rows_two, rows_one, rows_cold = rows_by_key(tmp_path / "two"), rows_by_key(tmp_path / "one"), rows_by_key(tmp_path / "cold")
    assert sum(not r["warm_from"] for r in rows_two.values()) == 1, "one root, every other point warm-started"
    for key, row in rows_two.items():
        assert row["warm_from"] == rows_one[key]["warm_from"]
        assert_same_solution(Solution.load(tmp_path / "two" / row["file"]), Solution.load(tmp_path / "one" / rows_one[key]["file"]))
    spent = sum(r["iterations"] + r["discarded_iterations"] for r in rows_two.values())
    assert spent < sum(r["iterations"] for r in rows_cold.values())
    assert "warm starts: 5 points from a solved neighbour" in two.summary()


def test_a_warm_start_past_its_budget_falls_back_to_a_cold_start(client, tmp_path, monkeypatch):
    """With a budget of one iteration every warm start is a worse start than the cold guess: it stops,
    its iteration is recorded as discarded, and the point is solved cold, equal to the single solve."""
    monkeypatch.setattr(task, "WARM_BUDGET_FACTOR", 1e-3)  # the sweep's process computes the budgets: max(1, ceil(1e-3 n)) = 1
    grid = {"u_max": [5.5, 6.0, 6.5]}
    result = sweep("quadrotor-flip", grid, client=client, out=tmp_path / "budget", seeds=1)
    rows = rows_by_key(tmp_path / "budget")
    assert result.failed == 0 and sum(r["discarded_iterations"] for r in rows.values()) == 2, "two warm starts, one iteration each"
    for row in rows.values():
        assert row["warm_from"] == ""
        assert_same_solution(Solution.load(tmp_path / "budget" / row["file"]), solve(problems.get("quadrotor-flip", u_max=row["u_max"])))


def test_warm_budget_and_continuation_options():
    assert [task.warm_budget(n) for n in (0, 1, 10, 27)] == [1, 2, 15, 41]  # 1.5 x the chain's cold iterations, rounded up
    problem = problems.get("pendulum", N=21)
    settings = task._continuation_settings(problem, SolverSettings(options={"max_iter": 30, "tol": 1e-9}), budget=41)
    assert settings.options == {**task.CONTINUATION_IPOPT_OPTIONS, "max_iter": 30, "tol": 1e-9}  # the user's smaller limit wins
    assert task._continuation_settings(problem, SolverSettings(max_iter=20), budget=41).options["max_iter"] == 20  # the settings' cap counts too
    assert task._continuation_settings(problem, SolverSettings(solver="sqp"), budget=12).options == {"max_iter": 12}  # no IPOPT options for sqp
    assert task._continuation_settings(problem, SolverSettings(solver="sqp"), budget=None).options == {}


@pytest.mark.slow
def test_warm_started_sweep_costs_no_more_iterations_than_cold():
    """The 3 x 2 go1-trot grid on which warm starts once cost 107 iterations against 82 cold (bound pushes
    1e-6). Measured with pushes 0.1: 71 against 88, and no point costs more than its cold solve (on the
    README's 6 x 3 grid 200 against 265; quadrotor-flip 4 x 3 166 against 341)."""
    import tempfile

    grid = {"step": range_values(0.05, 0.30, 3), "apex": [0.05, 0.11]}
    with tempfile.TemporaryDirectory() as folder, LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, Client(cluster) as c:
        sweep("go1-trot", grid, client=c, out=Path(folder) / "cold", warm_start=None)
        sweep("go1-trot", grid, client=c, out=Path(folder) / "warm")
        cold, warm = rows_by_key(Path(folder) / "cold"), rows_by_key(Path(folder) / "warm")
    assert all(r["success"] for r in [*cold.values(), *warm.values()])
    for key, row in warm.items():
        assert row["iterations"] + row["discarded_iterations"] <= cold[key]["iterations"], row["params"]
        assert abs(row["objective"] - cold[key]["objective"]) <= 1e-6 * abs(cold[key]["objective"])
    assert sum(r["iterations"] + r["discarded_iterations"] for r in warm.values()) < sum(r["iterations"] for r in cold.values())


def test_continuation_plan_is_a_nearest_neighbour_forest():
    """Each point's parent is placed before it and is the nearest placed point; roots are spread; categories count 1."""
    points, keys = expand_grid({"a": [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "b": [10, 20, 30], "mode": ["x", "y"]})
    coords = continuation.coordinates(points, keys)
    assert coords.shape == (42, 4)
    assert np.isclose(np.linalg.norm(coords[0] - coords[1]), 1.0), "two categories are at distance 1"
    order, parent = continuation.plan(coords, seeds=3)
    assert sorted(order) == list(range(42)) and (parent < 0).sum() == 3
    rank = np.empty(42, dtype=int)
    rank[order] = np.arange(42)
    for i in order:
        if parent[i] >= 0:
            placed = order[: rank[i]]
            d = np.linalg.norm(coords[placed] - coords[i], axis=1)
            assert rank[parent[i]] < rank[i] and np.isclose(np.linalg.norm(coords[parent[i]] - coords[i]), d.min())
    again = continuation.plan(coords, seeds=3)
    assert np.array_equal(order, again[0]) and np.array_equal(parent, again[1])
    roots_1d = continuation.roots(continuation.coordinates(*expand_grid({"a": list(range(24))})), 2)
    assert sorted(roots_1d) in ([5, 17], [5, 18], [6, 17], [6, 18]), "two roots at the quarter points of a line"
    with pytest.raises(ValueError, match="seeds"):
        continuation.plan(coords, seeds=0)


# ------------------------------------------------------------------ compile cache under Dask


def test_two_dask_workers_compile_the_same_stage_functions_once(tmp_path):
    """Two Dask workers build the compiled cartpole NLP at the same time: gcc runs once per function, both load it."""
    from tests.test_compiled_cache import entries, runs, wrapper_compiler

    cache = tmp_path / "cache"
    compiler, log = wrapper_compiler(tmp_path / "bin", delay=0.5)
    env = {"TRAJOPT_CACHE": str(cache), "CC": str(compiler)}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", env=env) as cluster, Client(cluster) as c:
        result = sweep("cartpole", {"u_max": [18.0, 20.0]}, client=c, out=tmp_path / "compiled", params={"N": 21}, compile=True, warm_start=None)
    rows = pq.read_table(tmp_path / "compiled" / "results.parquet").to_pylist()
    assert result.solved == 2 and all(r["success"] for r in rows)
    assert len({r["worker"] for r in rows}) == 2, "the two points ran on the two workers"
    found = entries(cache)
    assert found["libraries"] and runs(log) == len(found["libraries"]) == len(found["checksums"]) and not found["builds"]
    for row in rows:
        reference = solve(problems.get("cartpole", N=21, u_max=row["u_max"]))  # CasADi's virtual machine, this process
        primal = Solution.load(tmp_path / "compiled" / row["file"]).primal
        assert row["status"] == reference.status == "Solve_Succeeded"
        assert np.all(np.abs(primal - reference.primal) <= EXACT * np.maximum(1.0, np.abs(reference.primal)))


# ------------------------------------------------------------------ folder, table, points


def test_sweep_folder_rules(client, tmp_path):
    """A folder of another sweep, a non-empty folder, and a folder in use are refused; the grid may grow."""
    out = tmp_path / "grow"
    sweep("pendulum", {"u_max": [4.0, 5.0]}, client=client, out=out, params={"N": 21}, warm_start=None)
    grown = sweep("pendulum", {"u_max": [4.0, 5.0, 6.0]}, client=client, out=out, params={"N": 21}, warm_start=None)
    assert (grown.skipped, grown.solved, grown.table().num_rows) == (2, 1, 3)
    with pytest.raises(ValueError, match="n_workers: sizes the embedded cluster"):
        sweep("pendulum", {"u_max": [4.0, 5.0]}, client=client, out=out, params={"N": 21}, warm_start=None, n_workers=2)
    with pytest.raises(ValueError, match="holds a sweep of 'pendulum'"):
        sweep("cartpole", {"u_max": [4.0, 5.0]}, client=client, out=out)
    with pytest.raises(ValueError, match="holds a sweep"):
        sweep("pendulum", {"u_max": [4.0, 5.0]}, client=client, out=out, params={"N": 21}, transcription="trapezoidal")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="not empty"):
        sweep("pendulum", {"u_max": [4.0, 5.0]}, client=client, out=tmp_path / "other")
    import fcntl

    with open(out / ".lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(RuntimeError, match="another sweep is running"):
            sweep("pendulum", {"u_max": [4.0, 5.0]}, client=client, out=out, params={"N": 21}, warm_start=None)


def test_table_keeps_one_row_per_point(tmp_path):
    """Compaction keeps the latest row of a point, except that an error never replaces a finished row."""
    table = ResultsTable(tmp_path, {"u": pa.float64()})
    for key, u, success, error, iterations in [("a", 1.0, False, "KilledWorker: x", None), ("b", 2.0, True, "", 7), ("a", 1.0, True, "", 5), ("b", 2.0, False, "OSError: y", None), ("c", 3.0, False, "", 9)]:
        table.append({"key": key, "u": u, "success": success, "error": error, "status": "s", "iterations": iterations, "warm_from": "b" if key == "c" else ""})
        table.flush()
    assert len(table.files()) == 5
    assert table.done() == {
        "a": {"success": True, "error": "", "file": "", "iterations": 5, "warm_from": ""},
        "b": {"success": True, "error": "", "file": "", "iterations": 7, "warm_from": ""},
        "c": {"success": False, "error": "", "file": "", "iterations": 9, "warm_from": "b"},
    }
    table.compact()
    assert table.files() == [table.path]
    rows = {r["key"]: r for r in table.read().to_pylist()}
    assert set(rows) == {"a", "b", "c"} and rows["a"]["success"] and rows["b"]["error"] == "" and rows["c"]["u"] == 3.0
    table.append({"key": "d", "u": 4.0, "success": True, "error": ""})
    table.compact()
    assert table.read().num_rows == 4
    assert parameter_type([1, 2]) == pa.int64() and parameter_type([1, 2.5]) == pa.float64() and parameter_type([[1, 2], [3]]) == pa.string()


def test_points_are_canonical(tmp_path):
    """Keys hash canonical parameters: linspace's 0.1 is 0.1, 21.0 is the int 21, an int of a float parameter a float."""
    ref = ProblemRef.resolve("quadrotor")
    a = canonical_params(ref, {"u_max": np.linspace(0.05, 0.3, 6)[1] * 40, "N": 21.0, "tf": 5})
    assert a == {"u_max": 4.0, "N": 21, "tf": 5.0} and isinstance(a["N"], int) and isinstance(a["tf"], float)
    assert point_key(ref, a) == point_key(ref, {"N": 21, "tf": 5.0, "u_max": 4.0})
    assert point_key(ref, a) != point_key(ProblemRef.resolve("tests.batch_factories:gated_pendulum"), a)
    assert ProblemRef.resolve(problems.factory("quadrotor")) == ProblemRef("problems.quadrotor:quadrotor", "factory")
    with pytest.raises(ValueError, match="not importable"):
        ProblemRef.resolve(lambda: None)
    with pytest.raises(ValueError, match="unknown problem 'quadrotr'"):
        ProblemRef.resolve("quadrotr")
    with pytest.raises(ValueError, match="cannot import"):
        ProblemRef.resolve("tests.batch_factories:nothing_here")
    with pytest.raises(TypeError, match="u_max"):
        canonical_params(ref, {"u_max": "fast"})
    with pytest.raises(TypeError, match="no parameter 'speed'"):
        canonical_params(ref, {"speed": 1.0})
    with pytest.raises(ValueError, match="finite"):
        canonical_params(ref, {"u_max": float("nan")})
    with pytest.raises(ValueError, match="'u_max' needs a non-empty list"):
        expand_grid({"u_max": 4.0})
    with pytest.raises(ValueError, match="both swept and fixed"):
        expand_grid({"u_max": [4.0]}, {"u_max": 3.0})
    with pytest.raises(ValueError, match="appears twice"):
        sweep("quadrotor", {"u_max": [4.0, 4.0]}, out=tmp_path / "dup")
    with pytest.raises(ValueError, match="warm_start"):
        sweep("quadrotor", {"u_max": [4.0]}, out=tmp_path / "w", warm_start="previous")
    with pytest.raises(ValueError, match="transcription"):
        sweep("quadrotor", {"u_max": [4.0]}, out=tmp_path / "t", transcription="simpson")


def test_solution_bytes_round_trip(client, tmp_path):
    """``Solution.to_bytes`` is the file ``save`` writes; ``from_bytes`` checks it like ``load``."""
    solution = solve(problems.get("pendulum", N=11))
    solution.save(tmp_path / "p.npz")
    assert_same_solution(Solution.from_bytes(solution.to_bytes()), Solution.load(tmp_path / "p.npz"))
    assert Solution.from_bytes((tmp_path / "p.npz").read_bytes()) == Solution.load(tmp_path / "p.npz")
    with pytest.raises(ValueError, match="warm_start is not a trajopt solution file"):
        Solution.from_bytes(b"garbage", name="warm_start")
    with pytest.raises(TypeError, match="data: expected the bytes"):
        Solution.from_bytes("text")


# ------------------------------------------------------------------ CLI


def test_cli_sweep_grid_summary_and_plot(tmp_path, capsys):
    """`trajopt sweep` with a range, a list and a fixed value: the product grid, a summary, a plot; the rerun does nothing."""
    out = tmp_path / "cli"
    argv = ["sweep", "pendulum", "--param", "u_max=4:6:3", "--param", "tf=2.5,3", "--param", "N=21", "--out", str(out), "--workers", "2", "--plot", "objective"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "over 6 points (u_max: 3 x tf: 2)" in captured.out and "6 points (6 solved in this run, 0 done before)" in captured.out
    failed = sum(not r["success"] for r in pq.read_table(out / "results.parquet").to_pylist())
    assert f"sweep [####################] 6/6 done, {failed} failed, 0 running" in captured.err
    assert f"{6 - failed} succeeded" in captured.out
    rows = pq.read_table(out / "results.parquet").to_pylist()
    assert all(r["error"] == "" for r in rows)
    assert sorted((r["u_max"], r["tf"]) for r in rows) == [(u, t) for u in (4.0, 5.0, 6.0) for t in (2.5, 3.0)]
    assert all(json.loads(r["params"])["N"] == 21 for r in rows)
    assert (out / "objective.png").stat().st_size > 10_000
    assert main(argv) == 0
    assert "(0 solved in this run, 6 done before)" in capsys.readouterr().out


def test_cli_sweep_parameters(capsys):
    """Range, list and list-valued parameter syntax, typed like the factory's defaults; mistakes are one-line usage errors."""
    from trajopt.cli import build_parser, parse_grid

    def grid(name, *params):
        return parse_grid(name, build_parser().parse_args(["sweep", name, "--out", "x", *[a for p in params for a in ("--param", p)]]))

    assert grid("quadrotor", "u_max=3:6:4", "N=21:41:3", "tf=5") == ({"u_max": [3.0, 4.0, 5.0, 6.0], "N": [21, 31, 41]}, {"tf": 5.0})
    assert grid("go1-jump", "knots=15,10,15;12,8,12", "mu=0.5,0.7") == ({"knots": [(15, 10, 15), (12, 8, 12)], "mu": [0.5, 0.7]}, {})
    assert grid("go1-trot", "N=31:41:2", "formulation=inverse,forward") == ({"N": [31, 41], "formulation": ["inverse", "forward"]}, {})
    assert grid("go1-gap", "link_clearance=none,0,0.01") == ({"link_clearance": [None, 0.0, 0.01]}, {})  # Optional: none is None
    for params, message in [
        (("u_max=3:6",), "expected A:B:N"),
        (("N=21:30:3",), "not integers"),
        (("speed=1,2",), "takes no parameter 'speed'"),
        (("u_max=fast,slow",), "expected a value like the default"),
        (("tf=5",), "at least one parameter with several values"),
        (("u_max=1,2", "u_max=3,4"), "given twice"),
    ]:
        assert main(["sweep", "quadrotor", "--out", "x", *[a for p in params for a in ("--param", p)]]) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err
    assert main(["sweep", "quadrotor", "--out", "x", "--param", "u_max=1,2", "--plot", "speed"]) == 2
    assert "--plot: expected a metric" in capsys.readouterr().err
    assert "objective" in METRICS and "iterations" in METRICS


def test_cli_sweep_without_the_extra_is_one_line():
    """Without dask distributed, `trajopt sweep` prints one line naming the batch extra (exit 2)."""
    code = "import sys; sys.modules['distributed'] = None; from trajopt.cli import main; sys.exit(main(['sweep', 'quadrotor', '--out', 'x', '--param', 'u_max=1,2']))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "'batch' extra" in lines[0] and 'pip install -e ".[batch]"' in lines[0], run.stderr


def test_plot_metric_over_one_and_three_parameters(tmp_path):
    """One swept parameter: a line with the failed points marked; three: one heat map per value of the third."""
    table = ResultsTable(tmp_path, {"a": pa.float64(), "b": pa.int64(), "c": pa.string()})
    for a in (1.0, 2.0):
        for b in (1, 2, 3):
            for c in ("x", "y"):
                table.append({"key": f"{a}{b}{c}", "a": a, "b": b, "c": c, "success": (a, b) != (2.0, 3), "error": "", "objective": a * b})
    table.compact()
    fig = plot_metric(table.path, "objective", tmp_path / "three.png")
    assert len([ax for ax in fig.axes if ax.get_visible() and ax.images]) == 2 and (tmp_path / "three.png").exists()
    one = pa.table({"u": [1.0, 2.0, 3.0], "success": [True, False, True], "error": ["", "", ""], "objective": [1.0, 2.0, 3.0]})
    fig = plot_metric(one, "objective")
    assert [line.get_label() for line in fig.axes[0].lines] == ["objective", "failed"]
    with pytest.raises(ValueError, match="metric"):
        plot_metric(one, "speed")
    with pytest.raises(FileExistsError):
        plot_metric(table.path, "objective", tmp_path / "three.png")
