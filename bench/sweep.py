"""Sweeps on Dask (:mod:`trajopt.batch`): throughput, scheduler overhead, memory, warm starts.

Measured in one run, so that the ratios hold on a shared, noisy machine (the
load average is printed at the start and the end):

1. Throughput on a 24-point go1-trot grid (``step`` 0.05..0.30 in 6 values x
   ``apex`` 0.05, 0.08, 0.11, 0.14; cold starts), each configuration on its
   own embedded ``LocalCluster`` whose workers first import the toolkit and
   build one go1-trot problem (so no configuration pays imports inside its
   timing): 1 worker with 1 thread per solve, 2 workers with 1 thread each
   (the default), and 1 worker whose solves use 2 threads (the alternative:
   parallelism inside each solve). Configurations alternate ``--repeat``
   times; points per second are medians. Target: 2 workers >= 1.8x 1 worker.
2. Scheduler overhead per task: ``--noop`` empty tasks submitted through the
   same loop as a sweep (a window of 2 tasks per worker thread,
   ``as_completed``, each result released) on the 2-worker cluster:
   ``wall x threads / tasks`` is the worker time each task costs beyond its
   own work, against the median go1-trot solve time. Target: <= 5 %. Also the
   sweep's own utilization: the sum of the tasks' times on the workers over
   ``wall x threads``.
3. Memory: a ``--points``-point quadrotor sweep (N = 21, ``u_max`` x ``tf``,
   continuation) run by ``trajopt sweep`` in a child process, whose resident
   memory is sampled every 0.2 s: peak (``ru_maxrss``) and the samples at 10 %
   and at the end of the points (flat = streamed); the workers' peak RSS.
   Target: the sweep's process < 300 MB for 1000 points.
4. Warm starts: the go1-trot grid, and a 12-point quadrotor-flip grid
   (``u_max`` x ``tf``), with ``warm_start="nearest"`` against cold starts:
   iterations (failed warm starts included) and solve time summed over the grid.

    python bench/sweep.py [--repeat 2] [--points 1000] [--noop 400] [--skip-memory]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import dask  # noqa: E402
import numpy as np  # noqa: E402
import psutil  # noqa: E402  (installed with distributed)
from distributed import Client, LocalCluster, as_completed  # noqa: E402

from trajopt.batch import range_values, sweep  # noqa: E402

TROT_GRID = {"step": range_values(0.05, 0.30, 6), "apex": [0.05, 0.08, 0.11, 0.14]}
FLIP_GRID = {"u_max": [5.0, 5.5, 6.0, 6.5], "tf": [1.8, 2.0, 2.2]}


def load() -> str:
    return "load average " + ", ".join(f"{v:.2f}" for v in os.getloadavg())


def warm_up() -> int:
    """On a worker: import the toolkit and build one go1-trot problem (URDF parse, model functions)."""
    import problems

    problems.get("go1-trot")
    return os.getpid()


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cluster(workers: int) -> tuple:
    with dask.config.set({"distributed.scheduler.allowed-failures": 2}):
        c = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0")
    client = Client(c)
    client.run(warm_up)
    return c, client


def cpu_seconds() -> float:
    """On a worker: user + system CPU time of its process so far."""
    times = psutil.Process().cpu_times()
    return times.user + times.system


def trot_sweep(client: Client, threads: int, warm: Any = None) -> Dict[str, Any]:
    before = client.run(cpu_seconds)
    with tempfile.TemporaryDirectory() as out:
        result = sweep("go1-trot", TROT_GRID, client=client, out=out, warm_start=warm, threads=threads)
        table = result.table(["success", "iterations", "discarded_iterations", "solve_time", "task_time"]).to_pydict()
    after = client.run(cpu_seconds)
    assert result.errors == 0, result
    return {
        "cpu": sum(after[w] - before[w] for w in after if w in before),
        "rate": result.points / result.wall_time,
        "wall": result.wall_time,
        "succeeded": sum(table["success"]),
        "iterations": sum(table["iterations"]) + sum(table["discarded_iterations"]),
        "solve": sum(table["solve_time"]),
        "median_solve": statistics.median(table["solve_time"]),
        "median_task": statistics.median(table["task_time"]),
        "busy": sum(table["task_time"]),
    }


def flip_sweep(client: Client, warm: Any) -> Dict[str, Any]:
    """The quadrotor-flip over ``u_max`` 5..6.5 (4) x ``tf`` 1.8..2.2 (3): iterations and solve time summed."""
    with tempfile.TemporaryDirectory() as out:
        result = sweep("quadrotor-flip", FLIP_GRID, client=client, out=out, warm_start=warm)
        table = result.table(["success", "iterations", "discarded_iterations", "solve_time"]).to_pydict()
    return {"iterations": sum(table["iterations"]) + sum(table["discarded_iterations"]), "solve": sum(table["solve_time"]), "succeeded": sum(table["success"]), "wall": result.wall_time}


def noop(i: int) -> int:
    return i


def overhead(client: Client, tasks: int) -> float:
    """Seconds of worker time per empty task, submitted as a sweep submits (module docstring)."""
    slots = sum(client.nthreads().values())
    start = time.perf_counter()
    pending, done = list(range(tasks)), 0
    results = as_completed()
    in_flight = 0
    while pending and in_flight < 2 * slots:
        results.add(client.submit(noop, pending.pop(), pure=False))
        in_flight += 1
    for future in results:
        future.result()
        future.release()
        done += 1
        if pending:
            results.add(client.submit(noop, pending.pop(), pure=False))
    return (time.perf_counter() - start) * slots / tasks


def throughput(repeat: int, noop_tasks: int) -> Dict[str, Any]:
    configs = {"1 worker x 1 thread": (1, 1), "2 workers x 1 thread": (2, 1), "1 worker x 2 threads": (1, 2)}
    clusters = {name: cluster(w) for name, (w, _) in configs.items()}
    runs: Dict[str, List[Dict[str, Any]]] = {name: [] for name in configs}
    try:
        for _ in range(repeat):
            for name, (_, threads) in configs.items():
                runs[name].append(trot_sweep(clusters[name][1], threads))
        two = clusters["2 workers x 1 thread"][1]
        per_task = overhead(two, noop_tasks)
        warm = trot_sweep(two, 1, "nearest")
        flip = {mode: flip_sweep(two, mode) for mode in (None, "nearest")}
        worker_rss = two.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    finally:
        for c, client in clusters.values():
            client.close()
            c.close()
    return {"runs": runs, "per_task": per_task, "warm": warm, "flip": flip, "worker_rss": worker_rss}


MEMORY_CHILD = """
import json, os, resource, sys, threading, time
import psutil
from trajopt.cli import main
samples, stop = [], threading.Event()
def sample():
    me = psutil.Process()
    while not stop.is_set():
        rows = len(os.listdir(sys.argv[1] + "/solutions")) if os.path.isdir(sys.argv[1] + "/solutions") else 0
        samples.append((rows, me.memory_info().rss / 2**20))
        time.sleep(0.2)
threading.Thread(target=sample, daemon=True).start()
code = main(sys.argv[2:])
stop.set()
print(json.dumps({"code": code, "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "samples": samples}))
"""


def memory(points: int) -> Dict[str, Any]:
    """The parent of a ``points``-point quadrotor sweep (``trajopt sweep`` in a child process)."""
    n_u = max(2, int(round(np.sqrt(points * 1.6))))
    n_tf = max(2, points // n_u)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "quad")
        argv = ["sweep", "quadrotor", "--param", f"u_max=3:6:{n_u}", "--param", f"tf=4:6:{n_tf}", "--param", "N=21", "--out", out]
        start = time.perf_counter()
        run = subprocess.run([sys.executable, "-c", MEMORY_CHILD, out, *argv], capture_output=True, text=True, cwd=ROOT)
        wall = time.perf_counter() - start
        if run.returncode != 0:
            raise RuntimeError(run.stderr[-2000:])
        report = json.loads(run.stdout.strip().splitlines()[-1])
        summary = [line for line in run.stdout.splitlines() if line.startswith(("sweep", "  "))]
    samples = report["samples"]
    total = n_u * n_tf
    at_10 = next((rss for rows, rss in samples if rows >= total // 10), float("nan"))
    return {"points": total, "peak": report["peak"], "rss_10": at_10, "rss_end": samples[-1][1] if samples else float("nan"), "wall": wall, "summary": summary}


def report_throughput(args: argparse.Namespace) -> None:
    t = throughput(args.repeat, args.noop)
    print(f"\n1. go1-trot, {len(TROT_GRID['step']) * len(TROT_GRID['apex'])} points, cold starts ({args.repeat} rounds, medians)")
    print(f"{'configuration':<24} {'points/s':>9} {'wall s':>7} {'median solve s':>15} {'median task s':>14} {'utilization':>12} {'cores used':>11} {'CPU s/point':>12} {'succeeded':>10}")
    rate: Dict[str, float] = {}
    for name, runs in t["runs"].items():
        rate[name] = statistics.median(r["rate"] for r in runs)
        workers = 2 if name.startswith("2") else 1
        util = statistics.median(r["busy"] / (r["wall"] * workers) for r in runs)
        print(f"{name:<24} {rate[name]:>9.2f} {statistics.median(r['wall'] for r in runs):>7.1f} {statistics.median(r['median_solve'] for r in runs):>15.3f} "
              f"{statistics.median(r['median_task'] for r in runs):>14.3f} {100 * util:>11.1f}% {statistics.median(r['cpu'] / r['wall'] for r in runs):>11.2f} "
              f"{statistics.median(r['cpu'] for r in runs) / len(TROT_GRID['step']) / len(TROT_GRID['apex']):>12.3f} {runs[-1]['succeeded']:>10}")
    ratio = rate["2 workers x 1 thread"] / rate["1 worker x 1 thread"]
    print(f"2 workers / 1 worker: {ratio:.2f}x (target >= 1.8); 2 workers / 1 worker with 2 threads per solve: {rate['2 workers x 1 thread'] / rate['1 worker x 2 threads']:.2f}x")
    print("   (cores used: the workers' CPU time over the wall time; below 2 for 2 workers, other jobs took the rest of the machine)")
    one, two = t["runs"]["1 worker x 1 thread"], t["runs"]["2 workers x 1 thread"]
    cpu_ratio = statistics.median(r["cpu"] for r in two) / statistics.median(r["cpu"] for r in one)
    util_ratio = statistics.median(r["busy"] / (2 * r["wall"]) for r in two) / statistics.median(r["busy"] / r["wall"] for r in one)
    print(f"   CPU time per point, 2 workers / 1 worker: {cpu_ratio:.3f}; with 2 whole cores the ratio would be about 2 x {util_ratio:.3f} / {cpu_ratio:.3f} = {2 * util_ratio / cpu_ratio:.2f}x")

    median_solve = statistics.median(r["median_solve"] for r in t["runs"]["2 workers x 1 thread"])
    print(f"\n2. scheduler overhead: {1e3 * t['per_task']:.2f} ms of worker time per task ({args.noop} empty tasks, 2 workers); "
          f"{100 * t['per_task'] / median_solve:.2f} % of the median go1-trot solve {median_solve:.3f} s (target <= 5 %)")

    cold = t["runs"]["2 workers x 1 thread"][-1]
    warm = t["warm"]
    print(f"\n4. warm starts (go1-trot grid, 2 workers): cold {cold['iterations']} iterations, {cold['solve']:.2f} s of solves, {cold['wall']:.1f} s wall; "
          f"nearest {warm['iterations']} iterations ({100 * (1 - warm['iterations'] / cold['iterations']):.0f} % fewer), {warm['solve']:.2f} s of solves, "
          f"{warm['wall']:.1f} s wall; succeeded {cold['succeeded']} / {warm['succeeded']}")
    cold_flip, warm_flip = t["flip"][None], t["flip"]["nearest"]
    print(f"   quadrotor-flip, 12 points: cold {cold_flip['iterations']} iterations, {cold_flip['solve']:.2f} s of solves; nearest {warm_flip['iterations']} "
          f"({100 * (1 - warm_flip['iterations'] / cold_flip['iterations']):.0f} % fewer), {warm_flip['solve']:.2f} s; succeeded {cold_flip['succeeded']} / {warm_flip['succeeded']}")
    print("   worker peak RSS after the go1-trot sweeps: " + ", ".join(f"{v:.0f} MB" for v in t["worker_rss"].values()))


def report_memory(points: int) -> None:
    m = memory(points)
    print(f"\n3. memory, quadrotor sweep of {m['points']} points (N = 21, continuation, trajopt sweep, {m['wall']:.0f} s): the sweep's process "
          f"peak {m['peak']:.0f} MB (target < 300), {m['rss_10']:.0f} MB at 10 % of the points, {m['rss_end']:.0f} MB at the end")
    for line in m["summary"]:
        print("   " + line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=2, help="rounds of the throughput configurations (default 2)")
    parser.add_argument("--points", type=int, default=1000, help="points of the memory sweep (default 1000)")
    parser.add_argument("--noop", type=int, default=400, help="empty tasks of the overhead measurement (default 400)")
    parser.add_argument("--skip-memory", action="store_true", help="skip the memory sweep")
    parser.add_argument("--skip-throughput", action="store_true", help="skip the go1-trot measurements (1, 2 and 4)")
    args = parser.parse_args()
    print(f"start: {load()}, {os.cpu_count()} cores", flush=True)

    if not args.skip_throughput:
        report_throughput(args)
    if not args.skip_memory:
        report_memory(args.points)
    print(f"\nend: {load()}")


if __name__ == "__main__":
    main()
