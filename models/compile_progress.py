"""The status line printed while gcc compiles a batch of functions into the cache.

A cold cache can keep gcc busy for a minute before the first solver
iteration (the legged contact formulation); the user sees what runs, how
far it is and for how long::

    trajopt: compiling 7 stage functions with gcc (cached in /home/u/.cache/trajopt/compiled): 3/7 done, 42 s

- On a terminal the line is rewritten in place once a second, so the time
  moves while the largest function compiles, and the last update is kept
  with a newline: ``...: 7/7 done in 63.4 s (compiler CPU 118.2 s)``.
- On any other stream (a log, a pipe, CI, ``trajopt ... -q`` piped) it is
  written as plain lines: at the start, whenever :data:`LINE_INTERVAL`
  seconds have passed since the last line (also while one large function
  keeps gcc busy and none finishes), and at the end.
- Inside a Dask worker (the workers of ``trajopt sweep`` inherit the
  terminal of the sweep's process, which draws its own progress line in
  place) the lines are plain, name the worker, and start by clearing the
  terminal line, so they replace the sweep's line (redrawn at its next
  update) instead of being written into it.

Nothing is printed when every library is already cached.
"""
from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from typing import Optional, TextIO

#: Seconds between two plain lines (non-terminal streams); in place, the line is updated every second.
LINE_INTERVAL = 10.0
#: Seconds between two in-place updates of the line on a terminal.
TICK = 1.0
#: Clears the terminal line and returns to its start (ANSI erase-line).
_CLEAR = "\r\033[K"


def dask_worker_name() -> Optional[str]:
    """The name of the Dask worker running this code, or ``None`` outside a worker.

    Looks only at an already imported ``distributed`` (never imports it):
    a process that runs Dask tasks has it.
    """
    distributed = sys.modules.get("distributed")
    if distributed is None:
        return None
    try:
        return str(distributed.get_worker().name)
    except (ValueError, AttributeError):
        return None


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or file-like stream without isatty
        return False


class CompileProgress:
    """Progress of ``total`` compilations with ``compiler`` (named by its file name) into ``folder``, reported on ``stream`` (module docstring).

    Call :meth:`start`, :meth:`done` once per finished function (from any
    thread) and :meth:`close` (which also takes the compiler's CPU time for
    the final line); a ``with`` block calls :meth:`start` and :meth:`close`.
    """

    def __init__(self, total: int, what: str, compiler: str, folder: str, stream: TextIO) -> None:
        if total < 1:
            raise ValueError(f"total: expected an int >= 1, got {total!r}")
        self.total, self.stream = total, stream
        self.worker = dask_worker_name()
        self.in_place = self.worker is None and _is_terminal(stream)
        prefix = "trajopt" if self.worker is None else f"trajopt (Dask worker {self.worker})"
        self.head = f"{prefix}: compiling {total} {what[:-1] if total == 1 and what.endswith('s') else what} with {os.path.basename(compiler)}"
        self.folder = folder
        self.finished = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: Optional[threading.Thread] = None
        self._start = self._last_line = 0.0

    def elapsed(self) -> float:
        """Seconds since :meth:`start`."""
        return time.perf_counter() - self._start

    def start(self) -> "CompileProgress":
        """Print the first line and keep its time moving (a daemon thread): in place on a terminal, else as plain lines."""
        self._start = time.perf_counter()
        self._write(f"0/{self.total} done, 0 s")
        self._ticker = threading.Thread(target=self._tick, name="trajopt-compile-progress", daemon=True)
        self._ticker.start()
        return self

    def done(self) -> None:
        """One more function is compiled (or was found built by another process)."""
        with self._lock:
            self.finished += 1
            if self.in_place or (self.finished < self.total and time.perf_counter() - self._last_line >= LINE_INTERVAL):
                self._write_locked(f"{self.finished}/{self.total} done, {self.elapsed():.0f} s")

    def close(self, compiler_cpu_seconds: Optional[float] = None) -> None:
        """The final line: how many were compiled, in how long (and the compiler's CPU time, when known)."""
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        cpu = f" (compiler CPU {compiler_cpu_seconds:.1f} s)" if compiler_cpu_seconds else ""
        with self._lock:
            self._write_locked(f"{self.finished}/{self.total} done in {self.elapsed():.1f} s{cpu}", final=True)

    def __enter__(self) -> "CompileProgress":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _tick(self) -> None:
        """Every :data:`TICK`: rewrite the line in place, or write a plain line when the last is :data:`LINE_INTERVAL` old."""
        while not self._stop.wait(TICK):
            with self._lock:
                due = self.in_place or time.perf_counter() - self._last_line >= LINE_INTERVAL
                if due and not self._stop.is_set():
                    self._write_locked(f"{self.finished}/{self.total} done, {self.elapsed():.0f} s")

    def _write(self, status: str) -> None:
        with self._lock:
            self._write_locked(status)

    def _line(self, status: str, final: bool) -> str:
        """``head (cached in folder): status``. A line rewritten in place later has its folder
        shortened from the left (or dropped) to fit the terminal's width: a wrapped line could
        not be rewritten; the final line is kept whole."""
        line = f"{self.head} (cached in {self.folder}): {status}"
        if not self.in_place or final:
            return line
        width = shutil.get_terminal_size((80, 24)).columns - 1
        room = width - len(line) + len(self.folder)
        if len(line) <= width:
            return line
        if room >= 12:
            return f"{self.head} (cached in ...{self.folder[len(self.folder) - room + 3:]}): {status}"
        return f"{self.head}: {status}"[:width]

    def _write_locked(self, status: str, final: bool = False) -> None:
        line = self._line(status, final)
        if self.in_place:
            text = _CLEAR + line + ("\n" if final else "")
        elif self.worker is not None and _is_terminal(self.stream):
            text = _CLEAR + line + "\n"
        else:
            text = line + "\n"
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken stream must not fail the compilation
            pass
        self._last_line = time.perf_counter()
