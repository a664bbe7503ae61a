"""The sweep's progress line and its final summary.

:class:`Progress` prints a bar, ``done/total``, the failed points (solver failures
and task errors), the points running, the elapsed time and the ETA (the
remaining points times the mean wall time per point finished so far in this
run). On a terminal it rewrites one line (at most every 0.2 s); elsewhere
(a log file, CI) it prints a line at every 10 % and at least every 30 s.

:func:`summary` reads the compacted table: success rate, the failed points'
statuses, percentiles of the solve time and iterations, the warm-started
points against the cold ones, and the throughput of this run.
"""
from __future__ import annotations

import time
from collections import Counter
from typing import Any, Dict, Optional, TextIO

import numpy as np
import pyarrow as pa


#: Characters of the bar.
BAR_WIDTH = 20


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class Progress:
    """Progress of a sweep of ``total`` points, ``already`` of them done before this run (module docstring)."""

    def __init__(self, total: int, already: int, stream: Optional[TextIO]) -> None:
        self.total, self.already, self.stream = total, already, stream
        self.done = self.failed = self.running = 0
        self.start = time.perf_counter()
        self._tty = bool(stream is not None and getattr(stream, "isatty", lambda: False)())
        self._last, self._last_decile, self._printed = 0.0, -1, ""

    def line(self) -> str:
        """The progress text."""
        elapsed = time.perf_counter() - self.start
        remaining = self.total - self.already - self.done
        eta = _clock(elapsed / self.done * remaining) if self.done else "?"
        already = f" ({self.already} done before)" if self.already else ""
        filled = int(BAR_WIDTH * (self.already + self.done) / max(1, self.total))
        bar = "#" * filled + "." * (BAR_WIDTH - filled)
        return f"sweep [{bar}] {self.already + self.done}/{self.total} done{already}, {self.failed} failed, {self.running} running | {_clock(elapsed)} elapsed, ETA {eta}"

    def update(self, finished: int = 0, failed: int = 0, running: Optional[int] = None) -> None:
        """Count ``finished`` points (``failed`` of them failed) and set the number running; print if due."""
        self.done += finished
        self.failed += failed
        if running is not None:
            self.running = running
        if self.stream is None:
            return
        now = time.perf_counter()
        todo = max(1, self.total - self.already)
        decile = 10 * self.done // todo
        if self._tty and now - self._last >= 0.2:
            self.stream.write("\r" + self.line() + "\x1b[K")
        elif not self._tty and (decile > self._last_decile or now - self._last >= 30.0):
            self.stream.write(self.line() + "\n")
            self._last_decile = decile
        else:
            return
        self.stream.flush()
        self._last, self._printed = now, self.line()

    def close(self) -> None:
        """Print the final state unless it is the line printed last (and end the rewritten line)."""
        if self.stream is None:
            return
        if self._tty:
            self.stream.write("\r" + self.line() + "\x1b[K\n")
        elif self.line() != self._printed:
            self.stream.write(self.line() + "\n")
        self.stream.flush()


def _points(n: int) -> str:
    return f"{n} point" if n == 1 else f"{n} points"


def _percentiles(values: np.ndarray, fmt: str) -> str:
    if values.size == 0:
        return "none"
    p10, p50, p90 = np.percentile(values, [10, 50, 90])
    return f"p10 {p10:{fmt}}, median {p50:{fmt}}, p90 {p90:{fmt}}, max {values.max():{fmt}}"


def summary(table: pa.Table, stats: Dict[str, Any]) -> str:
    """Text summary of a sweep's ``table`` and of this run's ``stats`` (keys ``problem``, ``solved``,
    ``skipped``, ``errors``, ``wall``, ``workers``, ``out``)."""
    cols = table.select(["success", "status", "solve_time", "iterations", "warm_from", "discarded_iterations", "error"]).to_pydict()
    n = table.num_rows
    error = np.array([bool(e) for e in cols["error"]], dtype=bool)
    success = np.array([bool(s) for s in cols["success"]], dtype=bool) & ~error
    failed = Counter(s for s, ok, e in zip(cols["status"], success, error) if not ok and not e)
    solve_time = np.array([t for t, e in zip(cols["solve_time"], error) if not e], dtype=float)
    iterations = np.array([i for i, e in zip(cols["iterations"], error) if not e], dtype=float)
    warm = np.array([bool(w) for w, e in zip(cols["warm_from"], error) if not e], dtype=bool)
    discarded = np.array([d or 0 for d, e in zip(cols["discarded_iterations"], error) if not e], dtype=float)
    lines = [
        f"sweep {stats['problem']}: {n} points ({stats['solved']} solved in this run, {stats['skipped']} done before); "
        f"{int(success.sum())} succeeded ({100.0 * success.sum() / max(n, 1):.1f} %), {sum(failed.values())} failed, {int(error.sum())} errors"
    ]
    if failed:
        lines.append("  failed: " + ", ".join(f"{count} {status}" for status, count in failed.most_common()))
    if error.any():
        first = next(e for e in cols["error"] if e)
        lines.append(f"  errors (solved again by the next run): {first}")
    lines.append(f"  solve time (s): {_percentiles(solve_time, '.3g')}")
    lines.append(f"  iterations: {_percentiles(iterations, '.0f')}")
    if warm.any():
        lines.append(
            f"  warm starts: {_points(int(warm.sum()))} from a solved neighbour, mean {iterations[warm].mean():.1f} iterations; "
            f"{int((~warm).sum())} cold, mean {iterations[~warm].mean() if (~warm).any() else float('nan'):.1f}; "
            f"{int(discarded.sum())} iterations of failed warm starts discarded"
        )
    if stats["solved"]:
        lines.append(f"  this run: {stats['solved']} points in {stats['wall']:.1f} s on {stats['workers']} workers ({stats['solved'] / stats['wall']:.2f} points/s)")
    lines.append(f"  table: {stats['out'] / 'results.parquet'}; solutions: {stats['out'] / 'solutions'}")
    return "\n".join(lines)
