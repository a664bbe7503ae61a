"""Warm-start continuation across a grid: which solved neighbour each point starts from.

Points are placed in a normalized parameter space (:func:`coordinates`):
each numeric parameter is mapped affinely to [0, 1] over its range in the
grid; any other parameter (strings, booleans, lists) is a category, two
different values being at distance 1. :func:`plan` then builds a forest over
the points, fixed by the grid alone (not by the number of workers or by which
solve finishes first), so a sweep's results are reproducible:

1. ``seeds`` roots, spread over the grid: farthest-point sampling from the
   point nearest the centroid, refined by a few k-means (Lloyd) steps that
   move each root to the member of its cluster nearest the cluster's mean.
   Roots are solved from the problem's own initial guess.
2. Prim's algorithm from all roots at once: repeatedly the point nearest to
   the points already placed joins, with that nearest point as its parent
   (ties go to the shallower parent, then the lower index, so the trees grow
   breadth-first and stay balanced). Each edge of the forest is a shortest
   hop to a point solved earlier: the forest is a minimum spanning forest.

A point is solved once its parent is done, starting from the parent's
solution (from the nearest successful ancestor if the parent failed); the
sweep submits every point whose parent is done, so the parallelism grows
from ``seeds`` to the width of the forest. Each step of Prim's algorithm
costs O(n d), so the plan costs O(n^2 d) for n points in d normalized
dimensions, in O(n d) memory (the roots' k-means steps assign points with a
k-d tree). Design notes, with the plan's times: docs/design/sweeps.md.
"""
from __future__ import annotations

import json
from typing import Any, List, Mapping, Sequence, Tuple

import numpy as np

#: Default number of points per root tree (``seeds = ceil(n / POINTS_PER_SEED)``).
POINTS_PER_SEED = 16
#: Lloyd iterations refining the roots.
LLOYD_STEPS = 20


def _numeric(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def coordinates(points: Sequence[Mapping[str, Any]], keys: Sequence[str]) -> np.ndarray:
    """(n, d) normalized coordinates of ``points`` over the parameters ``keys`` (module docstring)."""
    n = len(points)
    columns = [np.zeros((n, 0))]
    for key in keys:
        values = [p.get(key) for p in points]
        if all(_numeric(v) for v in values):
            x = np.asarray(values, dtype=float)
            span = x.max() - x.min()
            columns.append((((x - x.min()) / span) if span > 0 else np.zeros(n))[:, None])
        else:
            labels = [json.dumps(v, sort_keys=True) for v in values]
            categories = sorted(set(labels))
            if len(categories) > 1:
                onehot = np.zeros((n, len(categories)))
                onehot[np.arange(n), [categories.index(label) for label in labels]] = np.sqrt(0.5)
                columns.append(onehot)
    return np.hstack(columns)


def _distances(coords: np.ndarray, i: int) -> np.ndarray:
    return np.sqrt(np.sum((coords - coords[i]) ** 2, axis=1))


def roots(coords: np.ndarray, seeds: int) -> List[int]:
    """``seeds`` root indices spread over the points (module docstring, step 1)."""
    n = coords.shape[0]
    seeds = max(1, min(int(seeds), n))
    first = int(np.argmin(np.sum((coords - coords.mean(axis=0)) ** 2, axis=1)))
    chosen = [first]
    nearest = _distances(coords, first)
    while len(chosen) < seeds:
        nxt = int(np.argmax(nearest))
        chosen.append(nxt)
        nearest = np.minimum(nearest, _distances(coords, nxt))
    from scipy.spatial import cKDTree  # here: rerunning a finished sweep does not pay for scipy.spatial

    for _ in range(LLOYD_STEPS):
        owner = cKDTree(coords[chosen]).query(coords)[1]  # O(n log k) time, O(n) memory
        moved = []
        for c in range(len(chosen)):
            members = np.flatnonzero(owner == c)
            centre = coords[members].mean(axis=0)
            moved.append(int(members[np.argmin(np.sum((coords[members] - centre) ** 2, axis=1))]))
        if moved == chosen or len(set(moved)) < len(moved):
            break
        chosen = moved
    return chosen


def check_seeds(seeds: Any) -> None:
    """``ValueError`` unless ``seeds`` is ``None`` (the default) or an int >= 1."""
    if seeds is not None and (isinstance(seeds, bool) or not isinstance(seeds, (int, np.integer)) or seeds < 1):
        raise ValueError(f"seeds: expected an int >= 1, got {seeds!r}")


def plan(coords: np.ndarray, seeds: int | None = None) -> Tuple[np.ndarray, np.ndarray]:
    """``(order, parent)``: the points in the order Prim's algorithm places them, and each point's
    parent index (-1 for a root) (module docstring). ``seeds`` defaults to ``ceil(n / POINTS_PER_SEED)``."""
    n = coords.shape[0]
    if n == 0:
        return np.zeros(0, dtype=int), np.zeros(0, dtype=int)
    check_seeds(seeds)
    seeds = -(-n // POINTS_PER_SEED) if seeds is None else seeds
    eps = 1e-12 * max(1.0, float(np.abs(coords).max(initial=0.0)))
    placed = np.zeros(n, dtype=bool)
    parent = np.full(n, -1)
    depth = np.zeros(n, dtype=int)
    best = np.full(n, np.inf)
    via = np.full(n, -1)
    order: List[int] = []

    def place(i: int) -> None:
        placed[i] = True
        order.append(i)
        d = _distances(coords, i)
        shallower = via < 0
        shallower[~shallower] = depth[i] < depth[via[~shallower]]
        better = ~placed & ((d < best - eps) | ((np.abs(d - best) <= eps) & shallower))
        best[better], via[better] = d[better], i

    for r in roots(coords, seeds):
        place(r)
    while len(order) < n:
        open_ = np.flatnonzero(~placed)
        m = best[open_].min()
        ties = open_[best[open_] <= m + eps]
        pick = int(ties[np.lexsort((ties, depth[via[ties]]))[0]])
        parent[pick], depth[pick] = via[pick], depth[via[pick]] + 1
        place(pick)
    return np.asarray(order), parent
