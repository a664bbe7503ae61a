"""A wall-time limit for solver calls that cannot be stopped from inside: the call runs in a forked child.

fatrop 1.1.8 (CasADi's bundled plugin) can loop forever inside one step
computation: its inertia correction multiplies the primal regularization by a
constant factor for as long as the factorization reports a wrong inertia, with
no upper bound (``IpSearchDirImpl::compute_search_dir``). Measured on the
quadrotor point-to-point problem with tangent-chart knots: with 11 or 12 of the
12 tangent directions of the final state fixed (as equality rows, or as
variable bounds) the solve never returns; with 9 or fewer it converges in 6-10
iterations. No iteration limit or option reaches that loop, and a thread
cannot be stopped, so :func:`call_with_deadline` runs the call in a child
process (``os.fork``: the built solver is inherited, nothing is rebuilt) and
kills it at the deadline. The child sends its result back through a pipe; the
parent waits with ``select`` and never blocks longer than the deadline.

Cost: one fork and one pickled result per call (measured on the Go1 trot,
~1476 variables: about 3-6 ms). ``os.fork`` works in daemonic processes
(Dask workers), where ``multiprocessing`` refuses to start children.
"""
from __future__ import annotations

import os
import pickle
import select
import signal
import time
from typing import Any, Callable, Optional

#: Exit code of a child whose call raised (its exception is pickled to the parent).
_FAILED = 3


class DeadlineExceeded(RuntimeError):
    """The call did not return within its deadline and was killed."""


def call_with_deadline(fn: Callable[[], Any], seconds: Optional[float]) -> Any:
    """``fn()`` evaluated in a forked child, killed after ``seconds`` (``None``: called here, no limit).

    Returns what ``fn`` returns (it must be picklable); re-raises what it
    raises; raises :class:`DeadlineExceeded` at the deadline and
    ``RuntimeError`` when the child dies without an answer. A SIGINT in the
    parent while waiting stops the child too and propagates ``KeyboardInterrupt``.
    """
    if seconds is None:
        return fn()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: compute, send, and leave without running the parent's cleanup
        os.close(read_end)
        code = 0
        try:
            payload = pickle.dumps((True, fn()))
        except BaseException as err:  # noqa: BLE001 - handed to the parent
            payload, code = pickle.dumps((False, err)), _FAILED
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(payload)
        os._exit(code)
    os.close(write_end)
    deadline = time.monotonic() + seconds
    chunks = []
    try:
        with os.fdopen(read_end, "rb") as pipe:
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([pipe], [], [], left)[0]:
                    raise DeadlineExceeded(f"no answer within {seconds:g} s; the call was killed")
                chunk = os.read(pipe.fileno(), 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
    except BaseException:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    status = os.waitpid(pid, 0)[1]
    if not chunks:  # the child died before answering (e.g. a C++ assertion aborted it)
        cause = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"exit code {os.WEXITSTATUS(status)}"
        raise RuntimeError(f"the call's process died without an answer ({cause})")
    ok, value = pickle.loads(b"".join(chunks))
    if not ok:
        raise value
    return value
