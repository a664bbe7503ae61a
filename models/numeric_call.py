"""Fast numeric evaluation of a ``casadi.Function`` from Python.

Calling a ``casadi.Function`` with numpy arguments converts each one to a
``casadi.DM`` and each result back (tens of microseconds per call, more than a
Go1 forward-dynamics evaluation itself). :class:`NumericCall` instead binds
preallocated numpy buffers to the function once (``Function.buffer()``), so a
call copies the arguments in, runs the function and scatters the nonzeros of
each (possibly sparse) output into a dense array. Not thread-safe: one
instance owns its buffers.
"""
from __future__ import annotations

from typing import Any, List, Tuple

import casadi as ca
import numpy as np


class NumericCall:
    """``fn(*args)`` on numeric arguments through preallocated input and output buffers: the fast path of numeric model calls."""

    def __init__(self, fn: ca.Function) -> None:
        self.fn = fn
        self._buffer, self._trigger = fn.buffer()
        self._inputs: List[np.ndarray] = []
        for i in range(fn.n_in()):
            if not fn.sparsity_in(i).is_dense():
                raise ValueError(f"fn: input {i} of {fn.name()} is sparse; NumericCall needs dense inputs")
            self._inputs.append(np.zeros(fn.nnz_in(i)))
            self._buffer.set_arg(i, memoryview(self._inputs[-1]))
        self._outputs: List[Tuple[np.ndarray, Tuple[int, int], np.ndarray, np.ndarray]] = []
        for i in range(fn.n_out()):
            sp = fn.sparsity_out(i)
            nonzeros = np.zeros(sp.nnz())
            self._buffer.set_res(i, memoryview(nonzeros))
            rows, cols = sp.get_triplet()
            self._outputs.append((nonzeros, sp.shape, np.asarray(rows, dtype=int), np.asarray(cols, dtype=int)))

    def __call__(self, *args: Any) -> Tuple[np.ndarray, ...]:
        """Dense 2-D results (one per output) for dense numeric arguments (column-major order)."""
        for buf, arg in zip(self._inputs, args):
            buf[:] = np.ravel(np.asarray(arg.full() if isinstance(arg, ca.DM) else arg, dtype=float), order="F")
        self._trigger()
        results = []
        for nonzeros, shape, rows, cols in self._outputs:
            dense = np.zeros(shape)
            dense[rows, cols] = nonzeros
            results.append(dense)
        return tuple(results)
