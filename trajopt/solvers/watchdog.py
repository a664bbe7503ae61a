"""A wall-time limit for solver calls that cannot be stopped from inside: the calls run in a forked child.

fatrop 1.1.8 (CasADi's bundled plugin) can loop forever inside one step
computation: its inertia correction multiplies the primal regularization by a
constant factor for as long as the factorization reports a wrong inertia, with
no upper bound (``IpSearchDirImpl::compute_search_dir``): a final state with
(nearly) all of its tangent directions fixed, as equality rows or as
variable bounds, is one such case. No iteration
limit or option reaches that loop, and a thread cannot be stopped, so a
:class:`Watchdog` runs the calls in a child process (``os.fork``: the built
solver is inherited, nothing is rebuilt) and kills it at the deadline.

The child stays alive between calls and serves them one by one through a
pair of pipes (length-prefixed pickles of the arguments and the result), so
its caches and the solver's workspace stay warm: a call costs one round trip
instead of a fork and the child's first-touch page copies. A child killed at a deadline, or dead, is replaced by a new
fork at the next call; the child ends with its watchdog (or its parent).
``os.fork`` works in daemonic processes (Dask workers), where
``multiprocessing`` refuses to start children.

Design notes, with the measurements: docs/design/solvers.md.
"""
from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import threading
import time
import weakref
from typing import Any, Callable, Optional

_HEADER = struct.Struct("<Q")  # message length


class DeadlineExceeded(RuntimeError):
    """The call did not return within its deadline and was killed."""


class ChildDied(RuntimeError):
    """The child process died without answering (e.g. a C++ assertion aborted it)."""


def _write(fd: int, payload: bytes) -> None:
    data = memoryview(_HEADER.pack(len(payload)) + payload)
    while data:
        data = data[os.write(fd, data) :]


def _read(fd: int, size: int, deadline: Optional[float]) -> bytes:
    """``size`` bytes from ``fd``; ``DeadlineExceeded`` at ``deadline`` (``time.monotonic``), ``EOFError`` at end of file."""
    chunks, left = [], size
    while left:
        if deadline is not None:
            wait = deadline - time.monotonic()
            if wait <= 0 or not select.select([fd], [], [], wait)[0]:
                raise DeadlineExceeded("deadline")
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError("the other end closed its pipe")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _receive_message(fd: int, deadline: Optional[float]) -> Any:
    (size,) = _HEADER.unpack(_read(fd, _HEADER.size, deadline))
    return pickle.loads(_read(fd, size, deadline))


def _serve(fn: Callable[[Any], Any], requests: int, replies: int) -> None:
    """The child's loop: answer each request with ``(True, fn(request))`` or ``(False, exception)``."""
    while True:
        try:
            request = _receive_message(requests, None)
        except EOFError:  # the watchdog (or the parent) is gone
            os._exit(0)
        try:
            reply = (True, fn(request))
        except BaseException as err:  # noqa: BLE001 - handed to the parent
            reply = (False, err)
        _write(replies, pickle.dumps(reply))


def _stop(pid: int, fds: tuple) -> None:
    """Kill a child and close its pipes (also run by the finalizer of its watchdog)."""
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


class Watchdog:
    """``fn(request)`` evaluated in a persistent forked child process, killed when a call passes its deadline
    (a backend that can hang inside one iteration cannot stop itself; the caller then gets a timeout).

    ``fn`` and its results must be picklable by value (numpy arrays, dicts);
    ``fn`` itself is inherited through the fork, not pickled. Calls are
    serialized (one at a time).
    """

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn
        self._child: Optional[tuple] = None  # (pid, request fd, reply fd)
        self._finalizer: Optional[weakref.finalize] = None
        self._lock = threading.Lock()

    def _start(self) -> tuple:
        requests_read, requests_write = os.pipe()
        replies_read, replies_write = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: serve until the watchdog closes its end
            os.close(requests_write)
            os.close(replies_read)
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides about interrupts
            _serve(self.fn, requests_read, replies_write)
        os.close(requests_read)
        os.close(replies_write)
        self._child = (pid, requests_write, replies_read)
        self._finalizer = weakref.finalize(self, _stop, pid, (requests_write, replies_read))
        return self._child

    def close(self) -> None:
        """Stop the child (a new one is forked by the next call)."""
        if self._finalizer is not None:
            self._finalizer()
        self._child = self._finalizer = None

    def __call__(self, request: Any, seconds: float) -> Any:
        """``fn(request)`` from the child within ``seconds``; re-raises what ``fn`` raises.

        Raises :class:`DeadlineExceeded` (the child is killed) at the deadline
        and :class:`ChildDied` when the child dies without an answer. A SIGINT
        while waiting kills the child and propagates ``KeyboardInterrupt``.
        """
        with self._lock:
            pid, requests, replies = self._child or self._start()
            deadline = time.monotonic() + seconds
            try:
                _write(requests, pickle.dumps(request))
                ok, value = _receive_message(replies, deadline)
            except DeadlineExceeded:
                self.close()
                raise DeadlineExceeded(f"no answer within {seconds:g} s; the call was killed") from None
            except (EOFError, BrokenPipeError):  # the child died (e.g. a C++ assertion aborted it)
                status = os.waitpid(pid, 0)[1]
                self._finalizer.detach()
                for fd in (requests, replies):
                    os.close(fd)
                self._child = self._finalizer = None
                cause = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"exit code {os.WEXITSTATUS(status)}"
                raise ChildDied(f"the solver's process died without an answer ({cause})") from None
            except BaseException:
                self.close()
                raise
        if not ok:
            raise value
        return value
