"""Ctrl-C during a solve: IPOPT stops at once and the caller gets a ``KeyboardInterrupt`` with the last iterate.

CasADi polls Python's signal handlers while IPOPT runs (at every function
evaluation); when the SIGINT handler raises, CasADi stops IPOPT, swallows the
``KeyboardInterrupt``, prints a warning naming its C++ source on stderr and
returns as from a failed solve (status ``NonIpopt_Exception_Thrown``). So a
loop of solves would run on after Ctrl-C. :func:`watch_interrupts` records the
interrupt (its handler raises as Python's default one does, so CasADi still
stops) and drops CasADi's warning line; the solver then raises
:class:`SolveInterrupted` carrying the solution at the last iterate.

The handler is installed only in the main thread and only over Python's
default SIGINT handler (a handler of the application's own is left alone).
"""
from __future__ import annotations

import signal
import sys
import threading
from contextlib import contextmanager
from typing import Any, Iterator, TextIO

#: Text of CasADi's warning when a solve is interrupted.
CASADI_INTERRUPT = "KeyboardInterruptException"


class SolveInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a solve; ``solution`` holds the last iterate (``status`` ``"Interrupted"``, ``success`` False)."""

    def __init__(self, solution: Any) -> None:
        super().__init__("the solve was interrupted (SIGINT); the exception's `solution` holds the last iterate")
        self.solution = solution


class _Interrupts:
    """Whether a SIGINT arrived inside :func:`watch_interrupts`."""

    interrupted = False


class _WithoutInterruptWarning:
    """``stderr`` minus CasADi's interrupt warning: whole lines are forwarded, except the ones naming it."""

    def __init__(self, stream: TextIO) -> None:
        self.stream, self._pending = stream, ""

    def write(self, text: str) -> int:
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            if CASADI_INTERRUPT not in line:
                self.stream.write(line + "\n")
        return len(text)

    def flush(self) -> None:
        if self._pending and CASADI_INTERRUPT not in self._pending:
            self.stream.write(self._pending)
        self._pending = ""
        self.stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


@contextmanager
def watch_interrupts() -> Iterator[_Interrupts]:
    """Record a SIGINT (Ctrl-C) during the block instead of raising at once, so that the solver stops
    at its next callback; yields an object whose ``interrupted`` says whether one arrived."""
    state = _Interrupts()
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield state
        return

    def handler(signum: int, frame: Any) -> None:
        state.interrupted = True
        raise KeyboardInterrupt

    saved = sys.stderr
    filtered = _WithoutInterruptWarning(saved)
    signal.signal(signal.SIGINT, handler)
    sys.stderr = filtered  # type: ignore[assignment]
    try:
        yield state
    finally:
        filtered.flush()
        if sys.stderr is filtered:
            sys.stderr = saved
        signal.signal(signal.SIGINT, signal.default_int_handler)
