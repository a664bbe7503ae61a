"""Compile a ``casadi.Function`` to C once and cache the shared library on disk.

CasADi's SX virtual machine interprets every instruction; the same function
generated as C (``casadi.CodeGenerator``) and compiled with gcc -O1 runs an
order of magnitude faster (docs/design/compiled.md). The
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
  several flags, e.g. ``"-O3 -march=native"``). The C of a large function is
  first cut into chunks and files (:mod:`models.chunked_c`: gcc's time grows
  faster than linearly with the size of a function); its files are compiled
  in parallel (``-c``) and linked with ``-shared``.

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
from typing import Dict, Iterator, List, Optional, Sequence, TextIO, Tuple, Union

import casadi as ca

from .chunked_c import CHUNK_STATEMENTS, PART_STATEMENTS, split_source
from .compile_progress import CompileProgress

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; publication stays atomic
    fcntl = None  # type: ignore[assignment]

#: Default optimization flag: on generated dynamics code as fast as -O3, and gcc takes a fraction
#: of -O3's time (docs/design/compiled.md).
DEFAULT_OPT = "-O1"
#: gcc passes left out on chunked C (:mod:`models.chunked_c`): the rewriting has already merged its
#: common subexpressions, which is what full redundancy elimination and the dominator optimizations
#: look for; without them gcc takes less CPU time and the library computes the same numbers as fast
#: (docs/design/compiled.md).
CHUNKED_FLAGS = "-fno-tree-fre -fno-tree-dominator-opts"
#: Layout version, part of every key: libraries of an older layout (without checksums, or
#: compiled from unchunked C) are never hit.
CACHE_FORMAT = "3"
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
    and ``compile_seconds`` are the wall time spent generating C and in the
    compiler, ``compiler_cpu_seconds`` the compiler's CPU time (user + system
    of its processes: what load on the machine changes least); all 0 for a
    cache hit.
    """

    path: Path
    name: str
    built: bool
    codegen_seconds: float
    compile_seconds: float
    compiler_cpu_seconds: float = 0.0

    def load(self) -> ca.Function:
        """The compiled function, loaded with ``casadi.external``."""
        return ca.external(self.name, str(self.path))


def default_cache_dir() -> Path:
    """``$TRAJOPT_CACHE``, else ``$XDG_CACHE_HOME/trajopt``, else ``~/.cache/trajopt``."""
    if os.environ.get("TRAJOPT_CACHE"):
        return Path(os.environ["TRAJOPT_CACHE"])
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "trajopt"


def function_key(f: ca.Function, compiler: str, opt: str, chunk: Optional[int] = CHUNK_STATEMENTS) -> str:
    """Hex sha256 of the serialized function, the compiler, the flags, the chunk and file sizes (:mod:`models.chunked_c`)
    with :data:`CHUNKED_FLAGS`, CasADi's version, the platform and :data:`CACHE_FORMAT`."""
    h = hashlib.sha256()
    chunking = "unchunked" if chunk is None else f"{chunk}/{PART_STATEMENTS} {CHUNKED_FLAGS}"
    for part in (f.serialize(), compiler, opt, chunking, ca.__version__, platform.machine(), sys.platform, CACHE_FORMAT):
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


def _run_compiler(cmd: List[str], log: Path) -> Tuple[int, float]:
    """Run ``cmd`` with its output in ``log``; its exit status and CPU seconds (user + system of it and its children)."""
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    if not hasattr(os, "wait4"):  # not POSIX: no per-process CPU time
        return proc.wait(), 0.0
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here; keeps Popen from waiting again
    return proc.returncode, usage.ru_utime + usage.ru_stime


def _run_compilers(name: str, commands: List[List[str]], folder: Path, slots: threading.Semaphore) -> float:
    """Run ``commands`` at once, each holding one of the compiler ``slots``; their CPU seconds.

    Raises ``RuntimeError`` with the output of the first command that fails (``name``: the function compiled).
    """

    def run(k: int) -> Tuple[int, float]:
        with slots:
            return _run_compiler(commands[k], folder / f"compiler{k}.log")

    with ThreadPoolExecutor(max_workers=len(commands)) as pool:
        results = list(pool.map(run, range(len(commands))))
    for k, (status, _) in enumerate(results):
        if status != 0:
            log = (folder / f"compiler{k}.log").read_text(errors="replace")
            raise RuntimeError(f"compiling {name} failed ({' '.join(commands[k])}):\n{log[-2000:]}")
    return sum(cpu for _, cpu in results)


def _compile(f: ca.Function, exe: str, opt: str, chunk: Optional[int], library: Path, entry: str, slots: threading.Semaphore) -> Tuple[float, float, float]:
    """Generate C and compile it in a temporary folder beside ``library``, then publish checksum and library.

    Unless ``chunk`` is ``None`` the C is cut into chunks of ``chunk`` statements and split into files
    (:func:`models.chunked_c.split_source`) compiled at once, each holding one of the compiler ``slots``,
    and linked; rewritten C is compiled with :data:`CHUNKED_FLAGS` as well. Returns codegen seconds, compiler seconds (wall) and compiler CPU seconds.
    """
    with tempfile.TemporaryDirectory(dir=library.parent, prefix=f".{entry}.build-") as tmp:
        t0 = time.perf_counter()
        source = ca.CodeGenerator(f"{f.name()}.c", {"with_header": False})
        source.add(f)
        c_file = Path(source.generate(tmp + os.sep))
        files, rewritten = [c_file], False
        if chunk is not None:
            original = c_file.read_text()
            texts = split_source(original, chunk)
            rewritten = len(texts) > 1 or texts[0] != original
            files = [c_file.with_name(f"{c_file.stem}_part{k}.c") if k else c_file for k in range(len(texts))]
            for path, text in zip(files, texts):
                path.write_text(text)
        t1 = time.perf_counter()
        tmp_lib = Path(tmp) / library.name
        flags = ["-fPIC", *shlex.split(opt), *(shlex.split(CHUNKED_FLAGS) if rewritten else [])]
        if len(files) == 1:
            cpu = _run_compilers(f.name(), [[exe, "-shared", *flags, str(c_file), "-o", str(tmp_lib), "-lm"]], Path(tmp), slots)
        else:
            objects = [str(path.with_suffix(".o")) for path in files]
            cpu = _run_compilers(f.name(), [[exe, "-c", *flags, str(path), "-o", o] for path, o in zip(files, objects)], Path(tmp), slots)
            cpu += _run_compilers(f.name(), [[exe, "-shared", *flags, *objects, "-o", str(tmp_lib), "-lm"]], Path(tmp), slots)
        t2 = time.perf_counter()
        if not tmp_lib.is_file():
            raise RuntimeError(f"compiling {f.name()} failed: the compiler wrote no library {os.fspath(tmp_lib)!r}")
        tmp_sum = Path(tmp) / _checksum_path(library).name
        tmp_sum.write_text(_fingerprint(tmp_lib) + "\n")
        os.replace(tmp_sum, _checksum_path(library))
        os.replace(tmp_lib, library)
    return t1 - t0, t2 - t1, cpu


@dataclass(frozen=True)
class _Entry:
    """Where the library of one function, compiled with one compiler and set of flags, lives in the cache."""

    root: Path
    library: Path
    function: str

    @property
    def name(self) -> str:
        """``<function name>_<key>``: the library's file name without suffix."""
        return self.library.name[: -len(_SUFFIX)]

    def cached(self) -> Optional[Library]:
        """The verified library when the cache holds it, else ``None``."""
        return Library(self.library, self.function, False, 0.0, 0.0) if _corruption(self.library) is None else None


def _entry(f: ca.Function, opt: str, cache_dir: Union[str, Path, None], compiler: Optional[str], chunk: Optional[int]) -> _Entry:
    """The cache entry of ``f`` (module docstring), after checking that the cache folder is private."""
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    if cache_dir is None and not os.environ.get("TRAJOPT_CACHE"):
        _make_default_private(root)
    _existing_folders_private(root)
    key = function_key(f, _compiler_name(compiler), opt, chunk)
    return _Entry(root, root / "compiled" / f"{f.name()}_{key[:24]}{_SUFFIX}", f.name())


def _check_chunk(chunk: Optional[int]) -> None:
    if chunk is not None and (isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1):
        raise ValueError(f"chunk: expected None or an int >= 1 (statements per chunk), got {chunk!r}")


def build_library(
    f: ca.Function,
    opt: str = DEFAULT_OPT,
    cache_dir: Union[str, Path, None] = None,
    compiler: Optional[str] = None,
    chunk: Optional[int] = CHUNK_STATEMENTS,
    jobs: Optional[int] = None,
) -> Library:
    """Generate C for ``f`` and compile it into the cache, unless the cache has it (module docstring).

    ``chunk``: statements per chunk of the generated C (:mod:`models.chunked_c`;
    ``None`` compiles CasADi's C as it is, in one file). ``jobs``: compiler
    processes at once for the files of a large function (default: the number
    of CPUs). Raises :class:`CompilerNotFound` when the compiler is missing (and the
    library is not cached), ``RuntimeError`` with the compiler's output when
    compilation fails, and :class:`UnsafeCacheError` for a cache folder other
    users may write. Issues a :class:`CacheWarning` when it rebuilds a corrupt
    entry or the cache is read-only.
    """
    _check_chunk(chunk)
    slots = _compiler_slots(jobs)
    entry = _entry(f, opt, cache_dir, compiler, chunk)
    return entry.cached() or _build(f, entry, opt, compiler, chunk, slots)


def _compiler_slots(jobs: Optional[int]) -> threading.Semaphore:
    """How many compiler processes may run at once: ``jobs``, else the number of CPUs."""
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise ValueError(f"jobs: expected None or an int >= 1, got {jobs!r}")
    return threading.BoundedSemaphore(jobs or os.cpu_count() or 1)


def _build(f: ca.Function, entry: _Entry, opt: str, compiler: Optional[str], chunk: Optional[int], slots: threading.Semaphore) -> Library:
    """Compile ``f`` into ``entry`` under the entry's lock (or into the fallback folder of a read-only cache);
    its compiler processes each hold one of ``slots``."""
    name = _compiler_name(compiler)
    exe = shutil.which(name)
    if exe is None:
        raise CompilerNotFound(f"compiler: C compiler {name!r} not found")
    library = entry.library
    folder = _writable_folder(entry.root)
    if folder is None:
        problem = _corruption(library)
        if problem != "missing":
            warnings.warn(f"compiled cache entry {os.fspath(library)!r} is corrupt ({problem}) and its cache read-only: ignored", CacheWarning, stacklevel=3)
        folder = _fallback_folder(entry.root)
        library = folder / library.name
    with _entry_lock(folder / f"{entry.name}.lock"):
        problem = _corruption(library)
        if problem is None:  # another builder published it while this one waited
            return Library(library, f.name(), False, 0.0, 0.0)
        if problem != "missing":
            warnings.warn(f"compiled cache entry {os.fspath(library)!r} is corrupt ({problem}): removed and rebuilt", CacheWarning, stacklevel=3)
        for stale in (library, _checksum_path(library)):
            stale.unlink(missing_ok=True)
        for stale in folder.glob(f".{entry.name}.build-*"):  # left by a builder that died (this entry's lock is ours)
            shutil.rmtree(stale, ignore_errors=True)
        codegen, compile_seconds, cpu = _compile(f, exe, opt, chunk, library, entry.name, slots)
    return Library(library, f.name(), True, codegen, compile_seconds, cpu)


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
    progress: Optional[TextIO] = None,
    what: str = "functions",
    chunk: Optional[int] = CHUNK_STATEMENTS,
) -> List[ca.Function]:
    """Each of ``functions`` as :func:`compile_function` returns it, with up to ``jobs`` compiler processes at once.

    ``jobs`` defaults to the number of CPUs; the files of one large function
    (:func:`models.chunked_c.split_source`) compile in parallel as well as
    different functions do. The functions missing from the
    cache are compiled largest first (by SX instructions), so the longest
    compilation never starts last and leaves the other cores idle. With a
    ``progress`` stream (``sys.stderr``), a status line names the compiler,
    the cache folder, how many of the ``what`` are done and the elapsed time
    (:mod:`models.compile_progress`; nothing when every library is cached).
    ``chunk``: as :func:`build_library`. Functions that could not be
    compiled (no compiler, a compiler error, a cache that cannot hold the
    library) come back unchanged, with one :class:`CompilerWarning` naming
    them; an unsafe cache folder raises :class:`UnsafeCacheError`.
    """
    _check_chunk(chunk)
    slots = _compiler_slots(jobs)
    functions = list(functions)
    entries = [_entry(f, opt, cache_dir, compiler, chunk) for f in functions]
    libraries: List[Union[Library, Exception, None]] = [entry.cached() for entry in entries]
    missing = sorted((i for i, lib in enumerate(libraries) if lib is None), key=lambda i: -functions[i].n_instructions())
    if missing:
        reporter = None
        if progress is not None:
            reporter = CompileProgress(len(missing), what, _compiler_name(compiler), os.fspath(entries[missing[0]].root / "compiled"), progress).start()

        def build(i: int) -> Union[Library, Exception]:
            try:
                return _build(functions[i], entries[i], opt, compiler, chunk, slots)
            except (UnsafeCacheError, NotADirectoryError):  # a cache setting to fix, not a compiler to miss
                raise
            except (CompilerNotFound, RuntimeError, OSError) as err:
                return err
            finally:
                if reporter is not None:
                    reporter.done()

        workers = max(1, min(jobs or os.cpu_count() or 1, len(missing)))
        try:
            with ThreadPoolExecutor(max_workers=workers) as pool:  # the compilers run as subprocesses, in parallel
                for i, lib in zip(missing, pool.map(build, missing)):
                    libraries[i] = lib
        finally:
            if reporter is not None:
                reporter.close(sum(lib.compiler_cpu_seconds for lib in libraries if isinstance(lib, Library)))
    failed = [f"{f.name()}: {lib}" for f, lib in zip(functions, libraries) if isinstance(lib, Exception)]
    if failed:
        warnings.warn(f"{len(failed)} function(s) run on CasADi's virtual machine: " + "; ".join(failed), CompilerWarning, stacklevel=2)
    return [lib.load() if isinstance(lib, Library) else f for f, lib in zip(functions, libraries)]
