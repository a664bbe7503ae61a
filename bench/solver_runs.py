"""Timing of NLP solvers against hand-written peers: each solver built once, solves sampled round-robin.

A :class:`Variant` is one way of solving the same problem (ours through
:mod:`trajopt`, or a hand-written CasADi NLP) with its build time and a
``run()`` that solves it once from the same initial guess. :func:`measure`
calls every variant's ``run()`` ``repeat`` times in turn (A B C A B C ...), so
that load changes on the shared machine hit all of them alike, and
:func:`print_table` reports medians:

- ``build ms``: building the NLP, its derivatives and the CasADi solver (once),
- ``solve ms``: the solver call alone; ``eval ms`` its part in NLP function
  evaluations (``solver.stats()["t_wall_nlp_*"]``); ``solver ms`` the rest
  (the solver's own linear algebra and bookkeeping),
- ``call ms``: the whole call a user makes (for ours ``IpoptSolver.solve``:
  bounds and parameters from the problem, the solver call, the constraint
  check and the :class:`~trajopt.Solution`),
- ``iter``, the objective, and its difference ``dJ`` and the largest knot-state
  difference ``dx`` from the reference variant (the first one).
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Callable, Dict, List, Sequence

import casadi as ca
import numpy as np


@dataclass
class Run:
    """One solve: wall times (s), iterations, objective, status, knot states (N, n)."""

    solve: float
    call: float
    evals: float
    iterations: int
    objective: float
    status: str
    states: np.ndarray


@dataclass
class Variant:
    """A named, built solver: ``build`` seconds, ``run()`` solves once."""

    name: str
    build: float
    run: Callable[[], Run]


def eval_time(stats: Dict) -> float:
    """Seconds spent in NLP function evaluations according to ``nlpsol.stats()``."""
    return float(sum(v for k, v in stats.items() if k.startswith("t_wall_nlp_")))


def ours(name: str, solver, status: Callable[[str], str] = str) -> Variant:
    """A :class:`trajopt.IpoptSolver` (or subclass): solved once first, which builds its CasADi solver."""
    solver.solve()

    def run() -> Run:
        start = time.perf_counter()
        sol = solver.solve()
        call = time.perf_counter() - start
        return Run(sol.solve_time, call, sol.eval_time, sol.iterations, sol.objective, status(sol.status), sol.states)

    return Variant(name, solver.build_time, run)


def handwritten(name: str, build: Callable[[], ca.Function], args: Dict, state_index: np.ndarray, status: Callable[[Dict], str] = lambda stats: str(stats["return_status"])) -> Variant:
    """A hand-written ``nlpsol`` (built by ``build()``, timed) called with ``args``; ``state_index`` (N, n) locates the knot states in ``x``."""
    start = time.perf_counter()
    solver = build()
    build_time = time.perf_counter() - start

    def run() -> Run:
        start = time.perf_counter()
        res = solver(**args)
        solve = time.perf_counter() - start
        stats = solver.stats()
        x = np.asarray(res["x"]).reshape(-1)
        call = time.perf_counter() - start
        return Run(solve, call, eval_time(stats), int(stats["iter_count"]), float(res["f"]), status(stats), x[state_index])

    return Variant(name, build_time, run)


def measure(variants: Sequence[Variant], repeat: int) -> Dict[str, List[Run]]:
    """``repeat`` runs of each variant, taken round-robin."""
    runs: Dict[str, List[Run]] = {v.name: [] for v in variants}
    for _ in range(repeat):
        for v in variants:
            runs[v.name].append(v.run())
    return runs


def medians(runs: List[Run]) -> Dict[str, float]:
    """Median solve, call, evaluation and solver-own times (ms) of a variant's runs."""
    ms = lambda values: 1e3 * statistics.median(values)  # noqa: E731
    return {
        "solve": ms([r.solve for r in runs]),
        "call": ms([r.call for r in runs]),
        "evals": ms([r.evals for r in runs]),
        "own": ms([r.solve - r.evals for r in runs]),
    }


def print_table(variants: Sequence[Variant], runs: Dict[str, List[Run]]) -> Dict[str, Dict[str, float]]:
    """Print one row per variant (module docstring) and return each variant's :func:`medians`."""
    ref = runs[variants[0].name][-1]
    width = max(len(v.name) for v in variants)
    print(f"{'variant':{width}s} {'build ms':>9s} {'solve ms':>9s} {'eval ms':>8s} {'solver ms':>9s} {'call ms':>8s} {'iter':>5s} {'objective':>13s} {'dJ':>8s} {'dx':>8s}  status")
    table = {}
    for v in variants:
        last, med = runs[v.name][-1], medians(runs[v.name])
        table[v.name] = med
        dJ, dx = abs(last.objective - ref.objective), float(np.abs(last.states - ref.states).max())
        print(
            f"{v.name:{width}s} {1e3 * v.build:9.1f} {med['solve']:9.2f} {med['evals']:8.2f} {med['own']:9.2f} {med['call']:8.2f} "
            f"{last.iterations:5d} {last.objective:13.9f} {dJ:8.1e} {dx:8.1e}  {last.status}"
        )
    return table
