"""Parameter sweeps and trajectory datasets on Dask distributed: :func:`sweep`.

(docstring completed after the measurements)
"""
from ..extras import require_extra

require_extra("batch", ("distributed", "pyarrow"), "trajopt.batch")

from .points import ProblemRef, point_key, range_values  # noqa: E402
from .run import SweepResult, sweep  # noqa: E402
from .plot import plot_metric  # noqa: E402
from .table import METRICS  # noqa: E402

__all__ = ["METRICS", "ProblemRef", "SweepResult", "plot_metric", "point_key", "range_values", "sweep"]
