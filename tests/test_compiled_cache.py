"""The compile cache (:mod:`models.compiled`) under concurrency, corruption and hostile folders.

Real processes, real gcc: the compiler is a wrapper script that logs each
run to a file and then execs gcc (optionally after a pause, which keeps a
build in progress while another process arrives), so the tests count the
compilations that actually happened. Compiled results are compared with
CasADi's virtual machine to ``EXACT = 1e-12`` (relative with a floor).

When the tests run as root (CI), the read-only cache is exercised by a
subprocess running as the unprivileged user ``nobody``: root may write to any
folder, whatever its mode.
"""
from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path
from typing import Any, Dict, List

import numpy as np
import pytest

from models import compiled
from models import pinocchio_builders as builders
from models.compiled import CacheWarning, CompilerWarning, UnsafeCacheError, build_library, compile_functions
from models.multibody_model import COMPILED, MultibodyModel

EXACT = 1e-12
KEYS = ["forward_dynamics", "kinematics"]
REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None or os.name != "posix", reason="needs gcc and POSIX permissions")


def floating_body() -> MultibodyModel:
    return MultibodyModel(builders.floating_body_model(2.0, (0.1, 0.2, 0.3)), kinematics_bodies=["root_body"], input_matrix=np.eye(6), name="floating_body")


def sample_point() -> tuple:
    """A fixed state and torque at which compiled and virtual-machine results are compared."""
    return floating_body().randn_state(np.random.default_rng(5)), np.arange(6.0) - 2.5


def evaluate(model: MultibodyModel, keys: List[str]) -> List[np.ndarray]:
    """The numeric results of ``keys`` at :func:`sample_point` (through compiled code where ``model.compile`` made it)."""
    x, tau = sample_point()
    calls = {"forward_dynamics": lambda: model.forward_dynamics(x, tau), "kinematics": lambda: model.kinematics(x)}
    return [np.asarray(calls[k]()) for k in keys]


def assert_matches_vm(values: List[Any], keys: List[str]) -> None:
    for ours, ref in zip(values, evaluate(floating_body(), keys)):
        ours = np.asarray(ours, dtype=float)
        assert ours.shape == ref.shape and np.all(np.abs(ours - ref) <= EXACT * np.maximum(1.0, np.abs(ref)))


def wrapper_compiler(folder: Path, delay: float = 0.0) -> tuple:
    """``(script, log)``: a compiler that appends one line per run to ``log``, waits ``delay`` s and execs gcc."""
    folder.mkdir(parents=True, exist_ok=True)
    log, script = folder / "gcc-runs.log", folder / "cc-logged"
    script.write_text(f'#!/bin/sh\necho "$$ $*" >> "{log}"\nsleep {delay}\nexec {shutil.which("gcc")} "$@"\n')
    script.chmod(0o755)
    return script, log


def runs(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def entries(cache: Path) -> Dict[str, List[Path]]:
    """The cache's libraries, checksum files and leftover build folders."""
    folder = cache / "compiled"
    return {
        "libraries": sorted(folder.glob("*.so")),
        "checksums": sorted(folder.glob("*.so.sha256")),
        "builds": sorted(folder.glob(".*.build-*")),
    }


# ------------------------------------------------------------ concurrent processes


def run_two_at_once(target: Any, args: tuple, timeout: float) -> List[Dict[str, Any]]:
    """Run ``target(*args, barrier, queue)`` in two spawned processes that start their race at the
    barrier; their reports (one ``queue.put`` each), after both exited cleanly."""
    ctx = multiprocessing.get_context("spawn")
    barrier, queue = ctx.Barrier(2), ctx.Queue()
    workers = [ctx.Process(target=target, args=(*args, barrier, queue)) for _ in range(2)]
    for w in workers:
        w.start()
    results = [queue.get(timeout=timeout) for _ in workers]
    for w in workers:
        w.join(timeout=30)
        assert w.exitcode == 0
    return results


def _compile_in_process(cache: str, compiler: str, keys: List[str], barrier: Any, queue: Any) -> None:
    """Worker (spawned process): wait for the other worker, compile ``keys`` of the floating body, report."""
    model = floating_body()
    for key in keys:
        model.casadi_function(key)  # build the CasADi functions before the race starts
    barrier.wait()
    start = time.time()
    done = model.compile(keys, cache_dir=cache, compiler=compiler)
    end = time.time()
    queue.put({"pid": os.getpid(), "start": start, "end": end, "done": done, "values": [v.tolist() for v in evaluate(model, keys)]})


def test_two_processes_compile_one_entry_once(tmp_path: Path) -> None:
    """Two processes compile the same model into one empty cache at the same time: gcc runs once per function."""
    cache = tmp_path / "cache"
    compiler, log = wrapper_compiler(tmp_path / "bin", delay=1.0)  # the first build is still running when the second arrives
    results = run_two_at_once(_compile_in_process, (str(cache), str(compiler), KEYS), timeout=120)
    assert runs(log) == len(KEYS), log.read_text()
    first, second = sorted(results, key=lambda r: r["end"])
    assert second["start"] < first["end"], "the two compilations did not overlap"
    for result in results:
        assert result["done"] == KEYS
        assert_matches_vm(result["values"], KEYS)
    found = entries(cache)
    assert len(found["libraries"]) == len(found["checksums"]) == len(KEYS) and not found["builds"]
    assert compile_functions([floating_body().casadi_function(k) for k in KEYS], cache_dir=cache, compiler=str(compiler))  # cache hits
    assert runs(log) == len(KEYS)


def _solve_compiled_in_process(cache: str, compiler: str, barrier: Any, queue: Any) -> None:
    """Worker (spawned process): build the cartpole NLP with compiled stage functions at the same time as the other worker."""
    os.environ["TRAJOPT_CACHE"], os.environ["CC"] = cache, compiler
    import problems
    from trajopt import IpoptSolver

    problem = problems.get("cartpole", N=21)
    barrier.wait()
    start = time.time()
    solver = IpoptSolver(problem, compile=True)
    end = time.time()
    solution = solver.solve()
    queue.put({"start": start, "end": end, "status": solution.status, "primal": solution.primal.tolist()})


def test_two_processes_build_the_same_compiled_nlp_once(tmp_path: Path) -> None:
    """Two processes (as Dask workers would) compile the same NLP stage functions at once: one gcc run per function."""
    import problems
    from trajopt import IpoptSolver

    cache = tmp_path / "cache"
    compiler, log = wrapper_compiler(tmp_path / "bin", delay=0.5)
    results = run_two_at_once(_solve_compiled_in_process, (str(cache), str(compiler)), timeout=300)
    found = entries(cache)
    assert found["libraries"] and runs(log) == len(found["libraries"]) == len(found["checksums"]) and not found["builds"]
    first, second = sorted(results, key=lambda r: r["end"])
    assert second["start"] < first["end"], "the two builds did not overlap"
    reference = IpoptSolver(problems.get("cartpole", N=21)).solve()  # the virtual machine, in this process
    for result in results:
        assert result["status"] == reference.status == "Solve_Succeeded"
        primal = np.asarray(result["primal"])
        assert np.all(np.abs(primal - reference.primal) <= EXACT * np.maximum(1.0, np.abs(reference.primal)))


def test_threads_compile_one_entry_once(tmp_path: Path) -> None:
    """Within one process, concurrent builders of one entry (threads) also wait for each other."""
    compiler, log = wrapper_compiler(tmp_path / "bin", delay=0.5)
    fn = floating_body().casadi_function("kinematics")
    out = compile_functions([fn] * 4, cache_dir=tmp_path / "cache", compiler=str(compiler), jobs=4)
    assert runs(log) == 1 and all(f.class_name() == "External" for f in out)


def test_a_killed_builder_leaves_nothing_loadable(tmp_path: Path) -> None:
    """A builder killed mid-compile (its half-written library in its build folder) does not block or poison the entry."""
    cache = tmp_path / "cache"
    stall = tmp_path / "bin" / "cc-stall"
    stall.parent.mkdir(parents=True)
    # writes half a library to the -o target, then hangs until killed
    stall.write_text('#!/bin/sh\nwhile [ "$1" != "-o" ]; do shift; done\nhead -c 1000 /bin/sh > "$2"\nexec sleep 60\n')
    stall.chmod(0o755)
    script = f"from tests.test_compiled_cache import floating_body\nfloating_body().compile(['kinematics'], cache_dir={str(cache)!r}, compiler={str(stall)!r})\n"
    builder = subprocess.Popen([sys.executable, "-c", script], cwd=REPO, start_new_session=True)
    try:
        deadline = time.time() + 60
        while not list((cache / "compiled").glob(".*.build-*/*.so")) and time.time() < deadline:
            time.sleep(0.05)
        assert list((cache / "compiled").glob(".*.build-*/*.so")), "the stalled build never started"
    finally:
        os.killpg(builder.pid, signal.SIGKILL)  # the builder and its compiler
        builder.wait()
    assert entries(cache)["builds"] and not entries(cache)["libraries"]
    # the same compiler name (the key includes it), now a working one: the lock is free, the stale build is removed
    stall.write_text(f'#!/bin/sh\nexec {shutil.which("gcc")} "$@"\n')
    model = floating_body()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert model.compile(["kinematics"], cache_dir=cache, compiler=str(stall)) == ["kinematics"]
    assert_matches_vm(evaluate(model, ["kinematics"]), ["kinematics"])
    found = entries(cache)
    assert len(found["libraries"]) == 1 and not found["builds"]


# ------------------------------------------------------------ corruption


def test_corrupt_libraries_are_rebuilt_with_a_warning(tmp_path: Path) -> None:
    """A truncated library and one replaced by garbage are detected before dlopen, removed and rebuilt."""
    cache = tmp_path / "cache"
    compiler, log = wrapper_compiler(tmp_path / "bin")
    # build in another process, so this one never maps the original libraries
    script = f"from tests.test_compiled_cache import floating_body\nfloating_body().compile({KEYS!r}, cache_dir={str(cache)!r}, compiler={str(compiler)!r})\n"
    subprocess.run([sys.executable, "-c", script], cwd=REPO, check=True)
    assert runs(log) == 2
    truncated, garbage = entries(cache)["libraries"]
    size = garbage.stat().st_size
    with open(truncated, "r+b") as fh:
        fh.truncate(truncated.stat().st_size // 2)
    garbage.write_bytes(np.random.default_rng(0).bytes(size))  # same size: only the checksum can tell

    model = floating_body()
    with pytest.warns(CacheWarning) as record:
        assert model.compile(KEYS, cache_dir=cache, compiler=str(compiler)) == KEYS
    messages = [str(w.message) for w in record if issubclass(w.category, CacheWarning)]
    assert len(messages) == 2 and all("corrupt" in m and "rebuilt" in m for m in messages)
    assert {truncated.name, garbage.name} == {Path(m.split("'")[1]).name for m in messages}
    assert runs(log) == 4
    assert_matches_vm(evaluate(model, KEYS), KEYS)
    for key in KEYS:
        assert model.casadi_function(key + COMPILED).class_name() == "External"
    assert garbage.stat().st_size != size or compiled._corruption(garbage) is None


def test_library_without_checksum_is_rebuilt_and_orphan_checksum_ignored(tmp_path: Path) -> None:
    compiler, log = wrapper_compiler(tmp_path / "bin")
    f = floating_body().casadi_function("kinematics")
    lib = build_library(f, cache_dir=tmp_path, compiler=str(compiler)).path
    checksum = lib.with_name(lib.name + ".sha256")
    checksum.unlink()
    with pytest.warns(CacheWarning, match="no checksum"):
        assert build_library(f, cache_dir=tmp_path, compiler=str(compiler)).built
    lib.unlink()  # a checksum without its library: an interrupted publication, rebuilt quietly
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert build_library(f, cache_dir=tmp_path, compiler=str(compiler)).built
        assert not build_library(f, cache_dir=tmp_path, compiler=str(compiler)).built
    assert runs(log) == 3


# ------------------------------------------------------------ folders


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o722], ids=["world-writable", "group-writable", "others-writable"])
@pytest.mark.parametrize("where", ["cache", "compiled"])
def test_a_folder_other_users_may_write_is_refused(tmp_path: Path, mode: int, where: str) -> None:
    cache = tmp_path / "cache"
    f = floating_body().casadi_function("kinematics")
    build_library(f, cache_dir=cache)
    os.chmod(cache if where == "cache" else cache / "compiled", mode)
    with pytest.raises(UnsafeCacheError, match=f"cache_dir: .*mode {mode:04o}.* other users"):
        build_library(f, cache_dir=cache)  # a cache hit is refused too: the library could be theirs
    with pytest.raises(UnsafeCacheError):
        compile_functions([f], cache_dir=cache)  # not turned into a virtual-machine fallback


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a folder to another user")
def test_a_folder_of_another_user_is_refused(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    os.chown(cache, 65534, 65534)
    with pytest.raises(UnsafeCacheError, match="owner uid 65534"):
        build_library(floating_body().casadi_function("kinematics"), cache_dir=cache)


def test_a_file_as_cache_folder_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(NotADirectoryError, match="cache_dir"):
        compile_functions([floating_body().casadi_function("kinematics")], cache_dir=tmp_path / "file")


def test_the_default_cache_is_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRAJOPT_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    f = floating_body().casadi_function("kinematics")
    lib = build_library(f).path
    root = tmp_path / "xdg" / "trajopt"
    assert lib.parent == root / "compiled"
    assert stat.S_IMODE(root.stat().st_mode) == 0o700 and stat.S_IMODE(lib.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(next(lib.parent.glob("*.lock")).stat().st_mode) == 0o600
    os.chmod(root, 0o755)  # made by an older version: private again at the next use
    build_library(f)
    assert stat.S_IMODE(root.stat().st_mode) == 0o700


READ_ONLY_SCENARIO = textwrap.dedent(
    """
    import json, os, sys, warnings
    from models.compiled import CacheWarning
    from tests.test_compiled_cache import evaluate, floating_body
    cache, compiler = sys.argv[1], sys.argv[2]
    out = {}
    for label, keys, kwargs in (("read_only", ["forward_dynamics", "kinematics"], {"cache_dir": cache}), ("no_home", ["kinematics"], {})):
        model = floating_body()
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            done = model.compile(keys, compiler=compiler, **kwargs)
        from models import compiled
        folders = [str(p) for p in compiled._fallback_folders.values()]
        out[label] = {
            "done": done,
            "warnings": [[w.category.__name__, str(w.message)] for w in record],
            "values": [v.tolist() for v in evaluate(model, keys)],
            "fallbacks": folders,
            "modes": [oct(os.stat(os.path.dirname(p)).st_mode & 0o777) for p in folders],
        }
    print(json.dumps(out))
    """
)


def _without_root_override() -> List[str]:
    """Command prefix that runs a child without root's permission override (``CAP_DAC_OVERRIDE``), or ``[]`` for another user."""
    if os.geteuid() != 0:
        return []
    prefix = ["setpriv", "--bounding-set=-dac_override"]
    if shutil.which("setpriv") is None or subprocess.run([*prefix, "true"]).returncode != 0:
        pytest.skip("running as root without a working util-linux setpriv: root writes into read-only folders")
    return prefix


def test_a_read_only_cache_serves_its_entries_and_falls_back_to_a_private_folder(tmp_path: Path) -> None:
    """A cache this user cannot write serves its verified libraries; the others are built in a private temporary folder.

    The same for a default cache that cannot be created (home folder not writable).
    """
    cache = tmp_path / "cache"
    compiler, log = wrapper_compiler(tmp_path / "bin")
    assert floating_body().compile(["forward_dynamics"], cache_dir=cache, compiler=str(compiler)) == ["forward_dynamics"]
    assert runs(log) == 1
    locked = tmp_path / "locked"
    locked.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("TRAJOPT_CACHE", "XDG_CACHE_HOME")}
    env.update(PYTHONDONTWRITEBYTECODE="1", HOME=str(locked / "home"))
    prefix = _without_root_override()
    os.chmod(cache / "compiled", 0o555)
    os.chmod(locked, 0o555)
    try:
        run = subprocess.run([*prefix, sys.executable, "-c", READ_ONLY_SCENARIO, str(cache), str(compiler)], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    finally:
        os.chmod(cache / "compiled", 0o700)
        os.chmod(locked, 0o700)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout.strip().splitlines()[-1])

    ro = out["read_only"]
    assert ro["done"] == ["forward_dynamics", "kinematics"]
    assert_matches_vm(ro["values"], ro["done"])
    assert [w[0] for w in ro["warnings"]] == ["CacheWarning"] and "cannot be written" in ro["warnings"][0][1]
    assert len(ro["fallbacks"]) == 1 and ro["modes"] == ["0o700"]
    home = out["no_home"]
    assert home["done"] == ["kinematics"] and [w[0] for w in home["warnings"]] == ["CacheWarning"]
    assert_matches_vm(home["values"], home["done"])
    # forward_dynamics came from the read-only cache; kinematics was compiled once per fallback folder
    assert runs(log) == 3
    assert len(entries(cache)["libraries"]) == 1
    assert not any(os.path.exists(os.path.dirname(p)) for p in home["fallbacks"])  # removed at exit


# ------------------------------------------------------------ no compiler


def test_no_compiler_gives_one_warning_and_the_virtual_machine(tmp_path: Path) -> None:
    model = floating_body()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert model.compile(KEYS, cache_dir=tmp_path, compiler=str(tmp_path / "no-such-cc")) == []
    assert [w.category for w in record] == [CompilerWarning]
    assert all(f"floating_body_{k}" in str(record[0].message) for k in KEYS) and "not found" in str(record[0].message)
    assert_matches_vm(evaluate(model, KEYS), KEYS)
