"""A metric of a sweep over its grid: :func:`plot_metric`.

One swept parameter: the metric against it (a line over numeric values,
markers over categories). Two: a heat map over the grid (rows the second
parameter, columns the first), each cell labelled with its value when there
are at most 100 cells. More: one heat map per combination of the others
(at most :data:`MAX_PANELS`). Failed points (no success, or an error) are
marked with a red cross and left out of the colour scale; points absent
from the table stay blank.
"""
from __future__ import annotations

import itertools
import json
import os
from typing import Any, Dict, List, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..plotting.output import save_figure
from .table import METRICS, RESULT_SCHEMA

#: Most panels drawn for sweeps over three or more parameters.
MAX_PANELS = 12


def parameter_columns(table: pa.Table) -> List[str]:
    """The swept parameters' columns of a results table (with more than one distinct value)."""
    names = [n for n in table.column_names if n not in ("key", "params") and n not in RESULT_SCHEMA.names]
    return [n for n in names if len({json.dumps(v, sort_keys=True) for v in table.column(n).to_pylist()}) > 1]


def _axis_values(values: Sequence[Any]) -> List[Any]:
    distinct = list({json.dumps(v, sort_keys=True): v for v in values}.values())
    try:
        return sorted(distinct)
    except TypeError:
        return distinct


def _label(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _heatmap(ax: Any, rows: List[Dict[str, Any]], kx: str, ky: str, metric: str, vmin: float, vmax: float) -> Any:
    xs, ys = _axis_values([r[kx] for r in rows]), _axis_values([r[ky] for r in rows])
    grid = np.full((len(ys), len(xs)), np.nan)
    bad = []
    for r in rows:
        i, j = ys.index(r[ky]), xs.index(r[kx])
        if r["_ok"]:
            grid[i, j] = r[metric]
        else:
            bad.append((j, i))
    image = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis", vmin=vmin, vmax=vmax)
    if grid.size <= 100:
        for i, j in itertools.product(range(len(ys)), range(len(xs))):
            if np.isfinite(grid[i, j]):
                ax.text(j, i, f"{grid[i, j]:.3g}", ha="center", va="center", fontsize=7, color="white" if grid[i, j] < (vmin + vmax) / 2 else "black")
    if bad:
        ax.plot(*zip(*bad), "x", color="red", markersize=10, markeredgewidth=2, label="failed")
        ax.legend(loc="upper right", fontsize=7)
    ax.set_xticks(range(len(xs)), [_label(v) for v in xs], rotation=45 if len(xs) > 8 else 0)
    ax.set_yticks(range(len(ys)), [_label(v) for v in ys])
    ax.set_xlabel(kx)
    ax.set_ylabel(ky)
    return image


def plot_metric(table: pa.Table | str | os.PathLike, metric: str, path: str | os.PathLike | None = None, overwrite: bool = False) -> Any:
    """Draw ``metric`` (a numeric column, :data:`trajopt.batch.METRICS`) over the swept parameters of
    ``table`` (a results table or its Parquet file); write it to ``path`` (PNG, PDF or SVG) when given.
    Returns the matplotlib figure."""
    import matplotlib.pyplot as plt  # here: a sweep that draws nothing does not pay for pyplot

    if not isinstance(table, pa.Table):
        table = pq.read_table(table)
    if metric not in METRICS:
        raise ValueError(f"metric: expected one of {', '.join(METRICS)}, got {metric!r}")
    keys = parameter_columns(table)
    if not keys:
        raise ValueError("table: no parameter takes more than one value; nothing to plot over")
    cols = table.select([*keys, metric, "success", "error"]).to_pylist()
    rows = [{**r, metric: float(r[metric]) if r[metric] is not None else np.nan, "_ok": bool(r["success"]) and not r["error"]} for r in cols]
    good = np.array([r[metric] for r in rows if r["_ok"] and np.isfinite(r[metric])])
    vmin, vmax = (float(good.min()), float(good.max())) if good.size else (0.0, 1.0)
    if len(keys) == 1:
        fig, ax = plt.subplots(figsize=(6.4, 4.0), layout="constrained")
        xs = _axis_values([r[keys[0]] for r in rows])
        numeric = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in xs)
        position = {json.dumps(x): (x if numeric else k) for k, x in enumerate(xs)}
        ok = sorted((position[json.dumps(r[keys[0]])], r[metric]) for r in rows if r["_ok"])
        if ok:
            ax.plot(*zip(*ok), "o-" if numeric else "o", label=metric)
        failed = [position[json.dumps(r[keys[0]])] for r in rows if not r["_ok"]]
        if failed:
            ax.plot(failed, [vmin] * len(failed), "x", color="red", markersize=10, markeredgewidth=2, label="failed")
        if not numeric:
            ax.set_xticks(range(len(xs)), [_label(x) for x in xs])
        ax.set_xlabel(keys[0])
        ax.set_ylabel(metric)
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    else:
        others = keys[2:]
        combos = _axis_values([[r[k] for k in others] for r in rows]) if others else [[]]
        if len(combos) > MAX_PANELS:
            raise ValueError(f"table: {len(combos)} combinations of {others} (more than {MAX_PANELS} panels); plot a slice of the table")
        ncols = min(3, len(combos))
        nrows = -(-len(combos) // ncols)
        fig, axes = plt.subplots(nrows, ncols, figsize=(5.0 * ncols, 4.0 * nrows), layout="constrained", squeeze=False)
        for ax, combo in zip(axes.flat, combos):
            subset = [r for r in rows if [r[k] for k in others] == combo]
            image = _heatmap(ax, subset, keys[0], keys[1], metric, vmin, vmax)
            if others:
                ax.set_title(", ".join(f"{k} = {_label(v)}" for k, v in zip(others, combo)), fontsize=9)
        for ax in list(axes.flat)[len(combos):]:
            ax.set_visible(False)
        fig.colorbar(image, ax=axes, label=metric)
    fig.suptitle(f"{metric} over the sweep ({sum(r['_ok'] for r in rows)}/{len(rows)} succeeded)")
    if path is not None:
        save_figure(fig, path, overwrite)
        plt.close(fig)
    return fig
