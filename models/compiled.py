"""Compile a ``casadi.Function`` to C once and cache the shared library on disk.

CasADi's SX virtual machine costs a few ns per instruction; the same function
generated as C (``casadi.CodeGenerator``) and compiled with gcc -O1 runs Go1's
dynamics and their Jacobians 10-16x faster (``bench/dynamics.py``). The
library is built once, cached outside the repository, keyed by a
hash of the function, and never rebuilt while the function is unchanged; the
pure-CasADi path keeps working without a compiler.

- Cache key: ``sha256`` of ``f.serialize()`` (the whole expression graph, with
  the names of the function and its inputs and outputs), the compiler, the
  flags, the CasADi version, the platform and :data:`CACHE_FORMAT`.
- Cache folder: ``cache_dir``, else ``$TRAJOPT_CACHE``, else
  ``$XDG_CACHE_HOME/trajopt`` (default ``~/.cache/trajopt``); the libraries go
  to its ``compiled/`` sub-folder as ``<function name>_<key>.so``, each with
  ``<function name>_<key>.so.sha256`` holding the library's sha256 and size.
- Compiler: ``compiler``, else ``$CC``, else ``gcc``, called as
  ``<compiler> -shared -fPIC <opt> file.c -o file.so -lm`` (``opt`` may hold
  several flags, e.g. ``"-O3 -march=native"``).

Concurrency and integrity (threads and processes alike, e.g. Dask workers
building the same stage functions):

- A builder holds an exclusive ``fcntl.flock`` on ``<entry>.lock`` while it
  compiles; the others block on it, then find the entry built and load it, so
  gcc runs once per entry. Different entries compile in parallel.
- Publication is atomic: C source and library are written into a private
  temporary folder inside ``compiled/``, then the checksum file and the
  library are moved into place with ``os.replace`` (checksum first), so a
  reader sees no library, or a complete one with its checksum. A builder that
  died mid-compile leaves only its temporary folder (removed by the next
  builder of that entry) and its lock is released by the kernel.
- Every library is checked against its checksum file before ``dlopen``. A
  truncated or garbage library (or one without a checksum) is never loaded:
  it is removed and rebuilt with a :class:`CacheWarning`.

Safety (POSIX):

- Folders the cache creates get mode 0700, and the default folder is kept
  at 0700. A cache folder or ``compiled/`` sub-folder that another user owns,
  or that its group or others may write, is refused with
  :class:`UnsafeCacheError`: a library loaded from it could run their code.
- A cache that cannot be written (read-only mount, no permission, no home
  directory) still serves the verified libraries it holds; new ones go to a
  private temporary folder (mode 0700, removed at exit), with one
  :class:`CacheWarning` per cache folder and process.

:func:`build_library` does the work and reports timings (benchmarks use it);
:func:`compile_function` is what models call: it returns the compiled function
(``casadi.external``) or, with a :class:`CompilerWarning`, the original one when
no compiler is found or compilation fails. :func:`compile_functions` does the
same for many functions, running the compilers in parallel (the NLP's stage
derivatives, :mod:`trajopt.solvers.derivatives`), with one warning for all failures.
"""
from __future__ import annotations

import atexit
import errno
import hashlib
import os
import platform
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import casadi as ca

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; publication stays atomic
    fcntl = None  # type: ignore[assignment]

#: Default optimization flag: on generated dynamics code as fast as -O3 (or faster), and gcc
#: takes 2 s instead of 15-30 s on a 40-50k-instruction Jacobian (bench/dynamics.py --structures).
DEFAULT_OPT = "-O1"
#: Layout version, part of every key: libraries of an older layout (without checksums) are never hit.
CACHE_FORMAT = "2"
_SUFFIX = ".dll" if sys.platform == "win32" else ".so"
_CHECKSUM = ".sha256"
#: errno values of a folder that cannot be written (its files stay readable).
_READ_ONLY = (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOENT, errno.ENOTDIR)


class CompilerWarning(UserWarning):
    """A function runs on CasADi's virtual machine because it could not be compiled."""


class CacheWarning(UserWarning):
    """A cache entry was corrupt and is rebuilt, or a read-only cache is served by a temporary folder."""


class CompilerNotFound(RuntimeError):
    """The C compiler executable does not exist."""


class UnsafeCacheError(PermissionError):
    """The cache folder may be written by other users, so a library loaded from it could run their code."""


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
    """Hex sha256 of the serialized function, the compiler, the flags, CasADi's version, the platform and :data:`CACHE_FORMAT`."""
    h = hashlib.sha256()
    for part in (f.serialize(), compiler, opt, ca.__version__, platform.machine(), sys.platform, CACHE_FORMAT):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _compiler_name(compiler: Optional[str]) -> str:
    """``compiler``, else ``$CC``, else ``gcc``."""
    return compiler or os.environ.get("CC") or "gcc"


# ------------------------------------------------------------------ folders


def check_private(folder: Union[str, Path]) -> None:
    """Raise :class:`UnsafeCacheError` unless ``folder`` is owned by this user (or root) and writable by its owner only.

    ``NotADirectoryError`` when it is not a folder. No check on platforms without POSIX permissions.
    """
    st = os.stat(folder)
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(f"cache_dir: {os.fspath(folder)!r} is not a directory")
    if os.name != "posix":
        return
    mode = stat.S_IMODE(st.st_mode)
    if st.st_uid not in (os.geteuid(), 0) or mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UnsafeCacheError(
            f"cache_dir: {os.fspath(folder)!r} (owner uid {st.st_uid}, mode {mode:04o}) may be written by other users, "
            f"so a library loaded from it could run their code; expected a folder owned by uid {os.geteuid()} with mode 0700 "
            f"(`chmod 700 {os.fspath(folder)}`), or set $TRAJOPT_CACHE to a private folder"
        )


def _existing_folders_private(root: Path) -> None:
    """:func:`check_private` on the cache folder and its ``compiled/`` sub-folder, where they exist."""
    for folder in (root, root / "compiled"):
        if folder.exists():
            check_private(folder)


def _make_default_private(root: Path) -> None:
    """Set the default cache folder to mode 0700 (an older version made it 0755) when this user owns it."""
    try:
        st = root.stat()
        if os.name == "posix" and st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) != 0o700:
            os.chmod(root, 0o700)
    except OSError:  # missing (created 0700 later) or read-only
        pass


def _writable_folder(root: Path) -> Optional[Path]:
    """``root/compiled``, created (mode 0700) and checked, or ``None`` when it cannot be written."""
    folder = root / "compiled"
    try:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder.mkdir(mode=0o700, exist_ok=True)
    except OSError as err:
        if err.errno in _READ_ONLY:
            return None
        raise
    _existing_folders_private(root)  # again: a folder may have appeared in between
    return folder if os.access(folder, os.W_OK | os.X_OK) else None


_fallback_guard = threading.Lock()
_fallback_folders: Dict[Path, Path] = {}


def _fallback_folder(root: Path) -> Path:
    """A private temporary ``compiled/`` folder standing in for the read-only cache ``root`` (one per process, removed at exit)."""
    with _fallback_guard:
        if root not in _fallback_folders:
            tmp = Path(tempfile.mkdtemp(prefix="trajopt-cache-"))  # mode 0700
            atexit.register(shutil.rmtree, tmp, True)
            (tmp / "compiled").mkdir(mode=0o700)
            _fallback_folders[root] = tmp / "compiled"
            warnings.warn(
                f"cache_dir: {os.fspath(root)!r} cannot be written; libraries it lacks are compiled into the private "
                f"temporary folder {os.fspath(tmp)!r} (removed at exit, so they are rebuilt by the next process)",
                CacheWarning,
                stacklevel=3,
            )
        return _fallback_folders[root]


# ------------------------------------------------------------------ entries


def _checksum_path(library: Path) -> Path:
    return library.with_name(library.name + _CHECKSUM)


def _fingerprint(path: Path) -> str:
    """``"<sha256 hex> <size>"`` of a file's bytes."""
    h, size = hashlib.sha256(), 0
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
            size += len(chunk)
    return f"{h.hexdigest()} {size}"


def _corruption(library: Path) -> Optional[str]:
    """Why ``library`` may not be loaded (missing, no checksum, mismatch), or ``None`` when it matches its checksum."""
    try:
        recorded = _checksum_path(library).read_text().strip()
    except FileNotFoundError:
        return "missing" if not library.exists() else "it has no checksum file"
    try:
        actual = _fingerprint(library)
    except FileNotFoundError:
        return "missing"
    if actual == recorded:
        return None
    return f"its sha256 and size {actual.split()[0][:12]}... {actual.split()[1]} B differ from the recorded {recorded.split()[0][:12]}... {recorded.split()[-1]} B"


@contextmanager
def _entry_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on ``path`` (created with mode 0600); blocks while another builder holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError as err:  # a filesystem without locks (some network mounts): builds may repeat, never corrupt
                if err.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL):
                    raise
        yield
    finally:
        os.close(fd)  # releases the lock


def _compile(f: ca.Function, exe: str, opt: str, library: Path, entry: str) -> Tuple[float, float]:
    """Generate C and compile it in a temporary folder beside ``library``, then publish checksum and library. Returns the two timings."""
    with tempfile.TemporaryDirectory(dir=library.parent, prefix=f".{entry}.build-") as tmp:
        t0 = time.perf_counter()
        source = ca.CodeGenerator(f"{f.name()}.c", {"with_header": False})
        source.add(f)
        c_file = source.generate(tmp + os.sep)
        t1 = time.perf_counter()
        tmp_lib = Path(tmp) / library.name
        cmd = [exe, "-shared", "-fPIC", *shlex.split(opt), c_file, "-o", str(tmp_lib), "-lm"]
        run = subprocess.run(cmd, capture_output=True, text=True)
        t2 = time.perf_counter()
        if run.returncode != 0 or not tmp_lib.is_file():
            raise RuntimeError(f"compiling {f.name()} failed ({' '.join(cmd)}):\n{run.stderr[-2000:]}")
        tmp_sum = Path(tmp) / _checksum_path(library).name
        tmp_sum.write_text(_fingerprint(tmp_lib) + "\n")
        os.replace(tmp_sum, _checksum_path(library))
        os.replace(tmp_lib, library)
    return t1 - t0, t2 - t1


def build_library(
    f: ca.Function,
    opt: str = DEFAULT_OPT,
    cache_dir: Union[str, Path, None] = None,
    compiler: Optional[str] = None,
    on_build: Optional[Callable[[Path], None]] = None,
) -> Library:
    """Generate C for ``f`` and compile it into the cache, unless the cache has it (module docstring).

    ``on_build(folder)`` is called just before the compiler runs (never on a cache hit). Raises :class:`CompilerNotFound` when the compiler is missing (and the
    library is not cached), ``RuntimeError`` with the compiler's output when
    compilation fails, and :class:`UnsafeCacheError` for a cache folder other
    users may write. Issues a :class:`CacheWarning` when it rebuilds a corrupt
    entry or the cache is read-only.
    """
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    default = cache_dir is None and not os.environ.get("TRAJOPT_CACHE")
    name = _compiler_name(compiler)
    entry = f"{f.name()}_{function_key(f, name, opt)[:24]}"
    if default:
        _make_default_private(root)
    _existing_folders_private(root)
    library = root / "compiled" / (entry + _SUFFIX)
    if _corruption(library) is None:
        return Library(library, f.name(), False, 0.0, 0.0)
    exe = shutil.which(name)
    if exe is None:
        raise CompilerNotFound(f"compiler: C compiler {name!r} not found")
    folder = _writable_folder(root)
    if folder is None:
        problem = _corruption(library)
        if problem != "missing":
            warnings.warn(f"compiled cache entry {os.fspath(library)!r} is corrupt ({problem}) and its cache read-only: ignored", CacheWarning, stacklevel=2)
        folder = _fallback_folder(root)
        library = folder / library.name
    with _entry_lock(folder / f"{entry}.lock"):
        problem = _corruption(library)
        if problem is None:  # another builder published it while this one waited
            return Library(library, f.name(), False, 0.0, 0.0)
        if problem != "missing":
            warnings.warn(f"compiled cache entry {os.fspath(library)!r} is corrupt ({problem}): removed and rebuilt", CacheWarning, stacklevel=2)
        for stale in (library, _checksum_path(library)):
            stale.unlink(missing_ok=True)
        for stale in folder.glob(f".{entry}.build-*"):  # left by a builder that died (this entry's lock is ours)
            shutil.rmtree(stale, ignore_errors=True)
        if on_build is not None:
            on_build(folder)
        codegen, compile_seconds = _compile(f, exe, opt, library, entry)
    return Library(library, f.name(), True, codegen, compile_seconds)


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
    announce: bool = False,
) -> List[ca.Function]:
    """Each of ``functions`` as :func:`compile_function` returns it, compiling up to ``jobs`` at once.

    ``jobs`` defaults to the number of CPUs. With ``announce``, one line on
    stderr says that gcc runs (only when some library is not cached yet: it
    can take a minute). Functions that could not be
    compiled (no compiler, a compiler error, a cache that cannot hold the
    library) come back unchanged, with one :class:`CompilerWarning` naming
    them; an unsafe cache folder raises :class:`UnsafeCacheError`.
    """
    functions = list(functions)
    if not functions:
        return []

    said = threading.Event()

    def say(folder: Path) -> None:
        if announce and not said.is_set():
            said.set()
            print(f"trajopt: compiling stage functions with {_compiler_name(compiler)}, once (cached in {folder})", file=sys.stderr, flush=True)

    def build(f: ca.Function) -> Union[Library, Exception]:
        try:
            return build_library(f, opt, cache_dir, compiler, on_build=say)
        except (UnsafeCacheError, NotADirectoryError):  # a cache setting to fix, not a compiler to miss
            raise
        except (CompilerNotFound, RuntimeError, OSError) as err:
            return err

    workers = max(1, min(jobs or os.cpu_count() or 1, len(functions)))
    with ThreadPoolExecutor(max_workers=workers) as pool:  # the compilers run as subprocesses, in parallel
        libraries = list(pool.map(build, functions))
    failed = [f"{f.name()}: {lib}" for f, lib in zip(functions, libraries) if isinstance(lib, Exception)]
    if failed:
        warnings.warn(f"{len(failed)} function(s) run on CasADi's virtual machine: " + "; ".join(failed), CompilerWarning, stacklevel=2)
    return [f if isinstance(lib, Exception) else lib.load() for f, lib in zip(functions, libraries)]
