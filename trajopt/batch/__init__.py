"""Parameter sweeps and trajectory datasets on Dask distributed: :func:`sweep`.

::

    from trajopt.batch import sweep, range_values
    result = sweep("go1-trot", {"step": range_values(0.05, 0.30, 6), "apex": [0.05, 0.08, 0.11]}, out="sweeps/trot")
    print(result.summary())
    table = result.table()            # pyarrow.Table: parameters, status, iterations, objective, times, file

or ``trajopt sweep go1-trot --param step=0.05:0.30:6 --param apex=0.05,0.08,0.11
--out sweeps/trot --plot objective``. Needs the ``batch`` extra
(``pip install -e ".[batch]"``: dask distributed, pyarrow); importing this
package without it raises :class:`trajopt.extras.MissingExtraError`, one line
naming the extra.

How it works (details in the modules):

- :mod:`.points`: the grid (a product of value lists, or explicit points)
  becomes points in canonical form, each named by a hash of the problem and
  its parameters;
- :mod:`.task`: each worker builds its problem from the registry name or an
  importable factory ``"package.module:function"`` and the JSON parameters
  (no CasADi object is ever pickled), solves it with :func:`trajopt.solve`
  and returns the table row and the solution file's bytes;
- :mod:`.run`: the embedded ``LocalCluster`` (one worker process per core,
  one thread each) or any scheduler by address; at most two tasks per worker
  thread in flight; solutions written as ``out/solutions/<hash>.npz`` and
  rows streamed to Parquet parts (:mod:`.table`) as they arrive, so the
  sweep's process stays small (measured: 275 MB peak on a 1000-point
  quadrotor sweep, most of it imports); a rerun with the same ``out``
  solves only the points not done; a failed solve is a row with its status;
  a task whose worker is killed is rerun on another worker;
- :mod:`.continuation`: with ``warm_start="nearest"`` (the default) each
  point starts from its nearest solved neighbour in a forest fixed by the
  grid, so results do not depend on the number of workers;
- :mod:`.progress`, :mod:`.plot`: the progress line, the summary, a metric
  over the grid.

One thread per solve: Dask runs one task per worker thread, and a solve
whose stage maps used every core (``trajopt.solve``'s default) would compete
with the other workers' solves. Measured with ``bench/sweep.py`` on the
24-point go1-trot grid, 2 cores shared with other jobs (load average 1.9 to
3.7): 2 workers x 1 thread solved 1.97x the points per second of one such
worker in the run where they got the machine (2.97 points/s), 1.75x when
they got 1.82 cores, 1.45x with 1.14 cores; their CPU time per point is
the same as one worker's (ratio 1.00-1.04), so on two free cores the ratio
is ~1.9x (target 1.8x; a later run whose two workers got 1.03 cores
between them: 1.29x, 1.98x estimated from their utilization). One worker whose solves use 2 threads gets only
1.1 cores out of them (threads speed up the stage evaluations, not problem
building nor MUMPS): 2 single-threaded workers do 1.7-1.9x its throughput.

Warm starts (:mod:`.task`: IPOPT's bound pushes 0.1, and a warm start past
1.5x the iterations of its chain's cold solve is abandoned for a cold one):
the go1-trot grid took 275 iterations instead of 374 from cold (26 %
fewer), the README's 18-point go1-trot grid 200 instead of 265, a 12-point
quadrotor-flip grid 166 instead of 341 (51 % fewer), and on each of them no
point took more iterations than its cold solve (with the pushes of 1e-6
used before, the flip took 124 but go1-trot's outward steps up to 3.3x their
cold solves, and a 3 x 2 go1-trot grid 114 against 88). The summary and the
table (``warm_from``, ``discarded_iterations``) report it for every sweep.

What a 100k-problem sweep costs on N workers
--------------------------------------------
Measured (``bench/sweep.py``, 2-core machine under load): a go1-trot point
takes 0.60-0.67 s of one worker's CPU (0.32-0.35 s median solve, the rest
building the problem and its NLP and returning an 81 kB solution file); a
quadrotor point (N = 21, continuation) 0.07 s. Dask's documentation gives
about 1 ms of scheduler overhead per task; through this module's loop
(submit, receive, write the file and the row, release) an empty task costs
4.6-5.3 ms of wall time on the 2-worker cluster (2-3 % of the median
go1-trot solve; target 5 %), so one sweep process hands out at most ~200
tasks per second whatever the cluster's size.

- 100k go1-trot points: 100,000 x 0.67 s = 67,000 worker-seconds, i.e.
  ``67,000 / N`` s: 9.3 h on 2 workers, 35 min on 32, 9 min on 128. Past
  N ~ 0.67 s / 5.3 ms ~ 125 workers, dispatch (100k x 5.3 ms ~ 9 min) is the
  floor: more workers do not help. 8.1 GB of solution files pass through the
  sweep's process and disk.
- 100k quadrotor points: 7,000 worker-seconds, but the dispatch floor
  (~9 min) binds from ~13 workers on.
- The continuation plan costs O(n^2) time: ~3 min for 100k points
  (:mod:`.continuation`); the points themselves ~100 MB in the sweep's process.
- Dask's scheduler is one Python process; its documentation warns against
  graphs of millions of tasks and tasks shorter than ~100 ms. This module
  keeps only ``2 x threads`` tasks in the scheduler at a time, so its memory
  does not grow with the grid, but each point is one task.

What would have to change for 100k+ points on a large cluster: batch
several points per task (e.g. a row of the grid solved in sequence, warm
starting along it), which divides the dispatch cost and lets a worker reuse
its robot model between points; workers writing solutions straight to
shared storage (an object store), the sweep's process only receiving rows;
sharding ``solutions/`` into sub-folders (100k files in one folder); a
k-d-tree (Boruvka) spanning forest instead of Prim's O(n^2) plan.
"""
from ..extras import check_extra, require_extra

check_extra("batch", ("dask", "distributed"), "trajopt.batch")  # imported when a cluster starts (a finished sweep needs none)
require_extra("batch", ("pyarrow",), "trajopt.batch")

from .plot import plot_metric  # noqa: E402
from .points import ProblemRef, point_key, range_values  # noqa: E402
from .run import SweepResult, sweep  # noqa: E402
from .table import METRICS  # noqa: E402

__all__ = ["METRICS", "ProblemRef", "SweepResult", "plot_metric", "point_key", "range_values", "sweep"]
