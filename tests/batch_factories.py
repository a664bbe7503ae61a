"""Problem factories the sweep tests import by name on Dask workers ("tests.batch_factories:NAME").

They build registered problems, with a side effect the tests need: a worker
process that kills itself once, or builds held at a gate until the test
opens it (so that a sweep can be interrupted midway).
"""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import problems


def quadrotor_killing_its_worker(marker: str, u_max: float = 4.0, N: int = 21) -> object:
    """The registered quadrotor; the first build with ``u_max == 4`` writes its pid to the file ``marker``
    and kills its own process (SIGKILL: no cleanup, as the kernel's OOM killer would)."""
    path = Path(marker)
    if u_max == 4.0 and not path.exists():
        path.write_text(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)
    return problems.get("quadrotor", N=N, u_max=u_max)


#: Builds of :func:`gated_pendulum` that pass its gate before it opens.
GATE_SLOTS = 4


def gated_pendulum(u_max: float = 5.0, tf: float = 3.0, gate: str = "") -> object:
    """The registered pendulum (N = 21). The first :data:`GATE_SLOTS` builds (over all processes: each
    takes a slot file in the folder ``gate`` with O_EXCL) go through at once; later builds wait until
    the file ``gate/open`` exists (at most 10 minutes), so a sweep of more points cannot finish before
    the test interrupts it, however fast the machine."""
    folder = Path(gate)
    for slot in range(GATE_SLOTS):
        try:
            os.close(os.open(folder / f"slot-{slot}", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            return problems.get("pendulum", N=21, u_max=u_max, tf=tf)
        except FileExistsError:
            continue
    deadline = time.monotonic() + 600.0
    while not (folder / "open").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return problems.get("pendulum", N=21, u_max=u_max, tf=tf)
