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
  sweep's process stays small; a rerun with the same ``out``
  solves only the points not done; a failed solve is a row with its status;
  a task whose worker is killed is rerun on another worker;
- :mod:`.continuation`: with ``warm_start="nearest"`` (the default) each
  point starts from its nearest solved neighbour in a forest fixed by the
  grid, so results do not depend on the number of workers;
- :mod:`.progress`, :mod:`.plot`: the progress line, the summary, a metric
  over the grid.

One thread per solve: Dask runs one task per worker thread, and a solve
whose stage maps used every core (``trajopt.solve``'s default) would compete
with the other workers' solves; two single-threaded workers do more than
one worker with two threads, whose threads speed up the stage evaluations
but not the problem's build nor MUMPS.

Warm starts (:mod:`.task`: IPOPT's bound pushes 0.1, and a warm start past
:data:`trajopt.batch.task.WARM_BUDGET_FACTOR` times the iterations of its chain's cold
solve is abandoned for a cold one) take fewer iterations than cold starts
over a grid. The summary and the table (``warm_from``,
``discarded_iterations``) report it for every sweep.

Limits: the sweep's process dispatches every point as one Dask task, so on
a large cluster that loop, not the number of workers, bounds a sweep's
rate; it keeps only ``2 x threads`` tasks in the scheduler at a time, so its
memory does not grow with the grid; the continuation plan costs O(n^2) time
(:mod:`.continuation`).

Design notes, with what a 100k-problem sweep costs on N workers and what
would have to change for more: docs/design/sweeps.md.
"""
from ..extras import check_extra, require_extra

check_extra("batch", ("dask", "distributed"), "trajopt.batch")  # imported when a cluster starts (a finished sweep needs none)
require_extra("batch", ("pyarrow",), "trajopt.batch")

from .plot import plot_metric  # noqa: E402
from .points import ProblemRef, point_key, range_values  # noqa: E402
from .run import SweepResult, sweep  # noqa: E402
from .table import METRICS  # noqa: E402

__all__ = ["METRICS", "ProblemRef", "SweepResult", "plot_metric", "point_key", "range_values", "sweep"]
