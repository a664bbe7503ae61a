"""Child processes that Ctrl-C reaches, however the test run was started.

A shell without job control starts background commands with SIGINT ignored,
and a child inherits that: Python then installs no ``KeyboardInterrupt``
handler, and a test's ``send_signal(SIGINT)`` does nothing (the child
finishes normally). The tests of interruption start their children with
:func:`default_sigint` as ``preexec_fn``, as a terminal would.
"""
from __future__ import annotations

import signal


def default_sigint() -> None:
    """Restore SIGINT's default action in a child before it executes (``Popen(preexec_fn=...)``)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
