"""CasADi's bundled OpenBLAS on one thread: the BLAS that MUMPS and the Riccati solvers call.

Every backend (:class:`~trajopt.solvers.base.NlpSolver`) sets CasADi's OpenBLAS
to one thread (:func:`single_threaded_casadi_blas`) once its solver is built
and the plugin's BLAS is loaded: the idle worker threads of a multi-threaded
OpenBLAS spin on the other cores between factorizations, which took the cores
the threaded stage maps (``threads``) need; MUMPS is no slower on one BLAS
thread. numpy's BLAS is a separate library and is left alone. Design notes:
docs/design/solvers.md.
"""
from __future__ import annotations

import ctypes
from pathlib import Path
from typing import List


def mapped_libraries(name: str) -> List[str]:
    """Paths of the files mapped into this process whose path contains ``name`` (``/proc/self/maps``;
    [] where it does not exist)."""
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return []
    fields = (line.split(None, 5) for line in maps.splitlines())  # address perms offset dev inode path
    return sorted({f[5] for f in fields if len(f) == 6 and name in f[5]})


def loaded_casadi_blas() -> List[str]:
    """Paths of the copies of CasADi's bundled OpenBLAS mapped into this process (Linux; [] elsewhere).

    The wheel ships the library as identical files (``.so``, ``.so.0``,
    ``.so.0.3``), not links: a plugin loads the one its soname names, and a
    ``ctypes`` load of another name maps a second copy whose settings MUMPS
    never sees (MUMPS then stays on multi-threaded BLAS whenever an IPOPT
    solver was built before the setting; docs/design/solvers.md).
    """
    return mapped_libraries("libcasadi-tp-openblas")


def single_threaded_casadi_blas() -> int:
    """Set every loaded copy of CasADi's OpenBLAS to one thread (MUMPS's factorizations run faster
    single-threaded than with threads competing with the stage maps); returns how many were set."""
    count = 0
    for path in loaded_casadi_blas():
        try:
            ctypes.CDLL(path).openblas_set_num_threads(1)  # the mapped copy itself: same path, same handle
            count += 1
        except (OSError, AttributeError):
            continue
    return count
