"""Compile a ``casadi.Function`` to C once and cache the shared library on disk.

CasADi's SX virtual machine costs a few ns per instruction; the same function
generated as C (``casadi.CodeGenerator``) and compiled with gcc -O1 runs Go1's
dynamics and their Jacobians 10-16x faster (``bench/dynamics.py``). Design
rule 5: the library is built once, cached outside the repository, keyed by a
hash of the function, and never rebuilt while the function is unchanged; the
pure-CasADi path keeps working without a compiler.

- Cache key: ``sha256`` of ``f.serialize()`` (the whole expression graph, with
  the names of the function and its inputs and outputs), the compiler, the
  flags, the CasADi version and the platform.
- Cache folder: ``cache_dir``, else ``$TRAJOPT_CACHE``, else
  ``$XDG_CACHE_HOME/trajopt`` (default ``~/.cache/trajopt``); the libraries go
  to its ``compiled/`` sub-folder as ``<function name>_<key>.so``.
- Compiler: ``compiler``, else ``$CC``, else ``gcc``, called as
  ``<compiler> -shared -fPIC <opt> file.c -o file.so -lm`` (``opt`` may hold
  several flags, e.g. ``"-O3 -march=native"``). The library is
  written under a temporary name and renamed into place, so concurrent
  processes never load a half-written file.

:func:`build_library` does the work and reports timings (benchmarks use it);
:func:`compile_function` is what models call: it returns the compiled function
(``casadi.external``) or, with a :class:`CompilerWarning`, the original one when
no compiler is found or compilation fails. :func:`compile_functions` does the
same for many functions, running the compilers in parallel (the NLP's stage
derivatives, :mod:`trajopt.derivatives`).
"""
from __future__ import annotations

import hashlib
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence, Union

import casadi as ca

#: Default optimization flag: on generated dynamics code as fast as -O3 (or faster), and gcc
#: takes 2 s instead of 15-30 s on a 40-50k-instruction Jacobian (bench/dynamics.py --structures).
DEFAULT_OPT = "-O1"
_SUFFIX = ".dll" if sys.platform == "win32" else ".so"


class CompilerWarning(UserWarning):
    """A function runs on CasADi's virtual machine because it could not be compiled."""


class CompilerNotFound(RuntimeError):
    """The C compiler executable does not exist."""


@dataclass(frozen=True)
class Library:
    """A compiled function's shared library.

    ``built`` is False when the library came from the cache; ``codegen_seconds``
    and ``compile_seconds`` are the time spent generating C and in the compiler
    (both 0 for a cache hit).
    """

    path: Path
    name: str
    built: bool
    codegen_seconds: float
    compile_seconds: float

    def load(self) -> ca.Function:
        """The compiled function, loaded with ``casadi.external``."""
        return ca.external(self.name, str(self.path))


def default_cache_dir() -> Path:
    """``$TRAJOPT_CACHE``, else ``$XDG_CACHE_HOME/trajopt``, else ``~/.cache/trajopt``."""
    if os.environ.get("TRAJOPT_CACHE"):
        return Path(os.environ["TRAJOPT_CACHE"])
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "trajopt"


def function_key(f: ca.Function, compiler: str, opt: str) -> str:
    """Hex sha256 of the serialized function, the compiler, the flags, CasADi's version and the platform."""
    h = hashlib.sha256()
    for part in (f.serialize(), compiler, opt, ca.__version__, platform.machine(), sys.platform):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _compiler_name(compiler: Optional[str]) -> str:
    """``compiler``, else ``$CC``, else ``gcc``."""
    return compiler or os.environ.get("CC") or "gcc"


def build_library(
    f: ca.Function,
    opt: str = DEFAULT_OPT,
    cache_dir: Union[str, Path, None] = None,
    compiler: Optional[str] = None,
) -> Library:
    """Generate C for ``f`` and compile it into the cache, unless the cache has it.

    Raises :class:`CompilerNotFound` when the compiler is missing (and the
    library is not cached) and ``RuntimeError`` with the compiler's output when
    compilation fails.
    """
    folder = (Path(cache_dir) if cache_dir is not None else default_cache_dir()) / "compiled"
    name = _compiler_name(compiler)
    path = folder / f"{f.name()}_{function_key(f, name, opt)[:24]}{_SUFFIX}"
    if path.is_file():
        return Library(path, f.name(), False, 0.0, 0.0)
    exe = shutil.which(name)
    if exe is None:
        raise CompilerNotFound(f"compiler: C compiler {name!r} not found")
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        t0 = time.perf_counter()
        source = ca.CodeGenerator(f"{f.name()}.c", {"with_header": False})
        source.add(f)
        c_file = source.generate(tmp + os.sep)
        t1 = time.perf_counter()
        tmp_lib = Path(tmp) / path.name
        cmd = [exe, "-shared", "-fPIC", *shlex.split(opt), c_file, "-o", str(tmp_lib), "-lm"]
        run = subprocess.run(cmd, capture_output=True, text=True)
        t2 = time.perf_counter()
        if run.returncode != 0:
            raise RuntimeError(f"compiling {f.name()} failed ({' '.join(cmd)}):\n{run.stderr[-2000:]}")
        os.replace(tmp_lib, path)
    return Library(path, f.name(), True, t1 - t0, t2 - t1)


def compile_function(
    f: ca.Function,
    opt: str = DEFAULT_OPT,
    cache_dir: Union[str, Path, None] = None,
    compiler: Optional[str] = None,
) -> ca.Function:
    """``f`` compiled to C and loaded from the on-disk cache (built there on first use).

    The result has the same name, inputs and outputs as ``f`` and evaluates
    numerically (and as an MX call node, without derivatives). When there is
    no compiler or compilation fails, a :class:`CompilerWarning` is issued and
    ``f`` itself is returned.
    """
    return compile_functions([f], opt, cache_dir, compiler)[0]


def compile_functions(
    functions: Sequence[ca.Function],
    opt: str = DEFAULT_OPT,
    cache_dir: Union[str, Path, None] = None,
    compiler: Optional[str] = None,
    jobs: Optional[int] = None,
) -> List[ca.Function]:
    """Each of ``functions`` as :func:`compile_function` returns it, compiling up to ``jobs`` at once.

    ``jobs`` defaults to the number of CPUs. Functions that could not be
    compiled come back unchanged, with one :class:`CompilerWarning` naming them.
    """
    functions = list(functions)
    if not functions:
        return []

    def build(f: ca.Function) -> Union[Library, Exception]:
        try:
            return build_library(f, opt, cache_dir, compiler)
        except (CompilerNotFound, RuntimeError) as err:
            return err

    workers = max(1, min(jobs or os.cpu_count() or 1, len(functions)))
    with ThreadPoolExecutor(max_workers=workers) as pool:  # the compilers run as subprocesses, in parallel
        libraries = list(pool.map(build, functions))
    failed = [f"{f.name()}: {lib}" for f, lib in zip(functions, libraries) if isinstance(lib, Exception)]
    if failed:
        warnings.warn(f"{len(failed)} function(s) run on CasADi's virtual machine: " + "; ".join(failed), CompilerWarning, stacklevel=2)
    return [f if isinstance(lib, Exception) else lib.load() for f, lib in zip(functions, libraries)]
