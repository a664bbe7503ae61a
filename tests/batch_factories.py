"""Problem factories the sweep tests import by name on Dask workers ("tests.batch_factories:NAME").

They build registered problems, with a side effect the tests need: a worker
process that kills itself once, or a build that takes a while (so that a
sweep can be interrupted midway).
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


def slow_pendulum(u_max: float = 5.0, tf: float = 3.0, delay: float = 0.4) -> object:
    """The registered pendulum (N = 21), built after a pause of ``delay`` seconds."""
    time.sleep(delay)
    return problems.get("pendulum", N=21, u_max=u_max, tf=tf)
