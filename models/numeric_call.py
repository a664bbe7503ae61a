"""Fast numeric evaluation of a ``casadi.Function`` from Python.

Calling a ``casadi.Function`` with numpy arguments converts each one to a
``casadi.DM`` and each result back (tens of microseconds per call, more than a
Go1 forward-dynamics evaluation itself). :class:`NumericCall` instead binds
preallocated numpy buffers to the function once (``Function.buffer()``), so a
call copies the arguments in, runs the function and scatters the nonzeros of
each (possibly sparse) output into a dense array. :class:`NonzeroCall` does
the same with sparse inputs and outputs kept as their nonzeros, for pipelines
whose large sparse matrices pass from one function to the next (a QP's data)
without ever being densified. Neither is thread-safe: one instance owns its
buffers.
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


class NonzeroCall:
    """``fn(*args)`` on the nonzeros of its inputs, through preallocated buffers: each argument is the vector of
    an input's nonzeros in CasADi's order (a ``casadi.DM`` of that sparsity gives them as ``DM.nonzeros()``;
    a dense input's are its entries in column-major order), and so is each result, a fresh array. Inputs
    left out (``None``, or past the arguments given) are zero. ``stats()`` are the last call's.

    ``fresh``: bind the buffers to a newly checked-out memory of ``fn`` at every call (a few tens of
    microseconds). CasADi's HPIPM interface needs it: its second call through one buffer answers a
    different QP than a plain call does (the memory keeps state between buffered calls), while a fresh
    buffer's answer is the plain call's to the bit.
    """

    def __init__(self, fn: ca.Function, fresh: bool = False) -> None:
        self.fn, self.fresh = fn, fresh
        self._inputs = [np.zeros(fn.nnz_in(i)) for i in range(fn.n_in())]
        self._outputs = [np.zeros(fn.nnz_out(i)) for i in range(fn.n_out())]
        self._bind()

    def _bind(self) -> None:
        """A buffer of ``fn`` (a checked-out memory) reading the input arrays and writing the output arrays."""
        self._buffer, self._trigger = self.fn.buffer()
        for i, buf in enumerate(self._inputs):
            self._buffer.set_arg(i, memoryview(buf))
        for i, buf in enumerate(self._outputs):
            self._buffer.set_res(i, memoryview(buf))

    def __call__(self, *args: Any) -> List[np.ndarray]:
        """The outputs' nonzeros (one array each) for the inputs' nonzeros ``args``."""
        if self.fresh:
            self._bind()
        for i, buf in enumerate(self._inputs):
            arg = args[i] if i < len(args) else None
            if arg is None:
                buf[:] = 0.0
            else:
                buf[:] = np.ravel(arg, order="F")
        self._trigger()
        return [buf.copy() for buf in self._outputs]

    def stats(self) -> dict:
        """The statistics of the last call (a solver's status, iterations, ...)."""
        return self._buffer.stats()
