"""Child processes that Ctrl-C reaches, however the test run was started.

A shell without job control starts background commands with SIGINT ignored,
and a child inherits that: Python then installs no ``KeyboardInterrupt``
handler, and a test's ``send_signal(SIGINT)`` does nothing (the child
finishes normally). The tests of interruption start their children with
:func:`default_sigint` as ``preexec_fn``, as a terminal would.
"""
from __future__ import annotations

import signal
import subprocess


def default_sigint() -> None:
    """Restore SIGINT's default action in a child before it executes (``Popen(preexec_fn=...)``)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupt(proc: subprocess.Popen, timeout: float = 30.0) -> tuple:
    """Send ``proc`` a SIGINT (Ctrl-C) and wait for it: its ``(stdout, stderr)``; killed, and the timeout raised,
    when it does not stop within ``timeout`` s."""
    proc.send_signal(signal.SIGINT)
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
