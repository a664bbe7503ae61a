"""
Sweeps on Dask
==============

:func:`trajopt.batch.sweep` solves a registered problem (or your own
factory, ``"package.module:function"``) at every point of a parameter grid
on Dask distributed workers, and writes one table row per point and the
solutions. The workers are an embedded cluster (one single-threaded worker
process per core), or any running Dask scheduler. It needs the ``batch``
extra (dask distributed, pyarrow).
"""

import os
import shutil

from trajopt.batch import plot_metric, range_values, sweep

# the documentation's CI build sets TRAJOPT_DOCS_QUICK=1 and sweeps a 2 x 2 grid instead of 6 x 3
QUICK = os.environ.get("TRAJOPT_DOCS_QUICK") == "1"

# %%
# Dask starts each worker as a new Python process that imports this script
# again (``spawn``): the code that starts a sweep runs only in the script
# itself, under ``if __name__ == "__main__"``, as with any use of
# ``multiprocessing``.
#
# On an embedded cluster
# ----------------------
#
# The grid is the product of the swept values: here the trot's step length
# (m) and swing apex (m). ``range_values(a, b, n)`` is ``n`` values from
# ``a`` to ``b``. With no ``client`` the sweep starts a ``LocalCluster`` of
# ``n_workers`` processes and closes it at the end. A progress line is
# printed while it runs, then a summary: the success rate, solve-time and
# iteration percentiles, and what the warm starts saved (each point starts
# from its nearest solved neighbour).

grid = {"step": range_values(0.05, 0.30, 2 if QUICK else 6), "apex": [0.05, 0.11] if QUICK else [0.05, 0.08, 0.11]}
if __name__ == "__main__":
    shutil.rmtree("sweeps", ignore_errors=True)  # start from an empty folder (a rerun skips the points done)
    result = sweep("go1-trot", grid, out="sweeps/trot", n_workers=2)
    print(result.summary())

# %%
# The results table
# -----------------
#
# ``sweeps/trot/results.parquet`` has one row per point: its key (a hash of
# the problem and parameters), the parameters, success, status, iterations,
# objective, largest violation, build, solve and evaluation times, the
# worker, and the solution file (``sweeps/trot/solutions/<key>.npz``,
# reloaded with :func:`problems.load_solution`, which rebuilds its problem).

if __name__ == "__main__":
    table = result.table(columns=["step", "apex", "success", "iterations", "objective", "solve_time"])
    for row in table.to_pylist():
        print(f"step {row['step']:.3f} m, apex {row['apex']:.2f} m: success {row['success']}, {row['iterations']} iterations, objective {row['objective']:.4f}, {row['solve_time']:.2f} s")
    plot_metric(result.table(), "objective", path="sweep_objective.png")

# %%
# Run the same command again with the same ``out`` and only the missing
# points are solved (here none): an interrupted sweep resumes where it
# stopped.

if __name__ == "__main__":
    again = sweep("go1-trot", grid, out="sweeps/trot", n_workers=2)
    print(f"second run: {again.skipped} of {again.points} points already done, {again.solved} solved")

# %%
# On a scheduler that is already running
# --------------------------------------
#
# On a cluster, a Dask scheduler runs somewhere (``dask scheduler``, port
# 8786) and workers join it from every machine (``dask worker
# tcp://HOST:8786 --nthreads 1``: one thread per worker, since each solve
# is single-threaded). ``client=`` takes its address, or a
# ``distributed.Client``. Here a scheduler with one worker is started in this
# process to stand for it:

from distributed import LocalCluster

if __name__ == "__main__":
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        address = cluster.scheduler_address
        print("scheduler at", address)
        flights = sweep("quadrotor", {"tf": [4.0, 5.0, 6.0]}, client=address, out="sweeps/quadrotor")
    print(flights.summary())

# %%
# From the command line
# ---------------------
#
# ``trajopt sweep go1-trot --param step=0.05:0.30:6 --param apex=0.05,0.08,0.11
# --out sweeps/trot --plot objective`` runs the full grid (``A:B:N`` is N
# values from A to B, ``V1,V2`` a list); ``--scheduler tcp://HOST:8786``
# sends it to a running scheduler. See :doc:`/cli`.
