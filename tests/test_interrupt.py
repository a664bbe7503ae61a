"""Ctrl-C and failed writes (issue 15): no partial output files, a clean stop of IPOPT.

A real SIGINT is sent to a real ``trajopt solve`` subprocess while IPOPT
iterates (after its first iteration line): the command exits with status 130,
writes none of its output files and prints no traceback or CasADi C++
warning. From Python, ``solve`` raises :class:`trajopt.solvers.interrupt.SolveInterrupted`
(a ``KeyboardInterrupt``) with the last iterate, at once, and the process is
left as it was (signal handler, ``sys.stderr``). Writers interrupted midway
(``Solution.save``, :func:`trajopt.atomic_file.atomic_output`) leave the
target absent or as it was, and no temporary file.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from .interruptible import default_sigint

import problems
from trajopt import Solution, solve
from trajopt.atomic_file import atomic_output

REPO = Path(__file__).resolve().parents[1]
#: A solve that runs for seconds (several hundred ms of IPOPT iterations even on a fast machine).
LONG_SOLVE = ["go1-trot", "--param", "cycles=4"]

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX signals")


def env() -> dict:
    return {**os.environ, "MPLBACKEND": "Agg", "PYTHONUNBUFFERED": "1"}


@posix_only
def test_ctrl_c_during_a_cli_solve_exits_130_and_writes_nothing(tmp_path: Path) -> None:
    outputs = [tmp_path / "trot.npz", tmp_path / "trot.png"]
    cmd = [sys.executable, "-m", "trajopt.cli", "solve", *LONG_SOLVE, "--save", str(outputs[0]), "--plot", str(outputs[1])]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    seen = []
    try:
        for line in proc.stdout:  # IPOPT's log: wait for its first iteration
            seen.append(line)
            if line.split()[:1] == ["0"] or line.lstrip().startswith("1 "):
                break
        assert proc.poll() is None, "".join(seen)
        sent = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=60)
        stopped = time.perf_counter() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "trajopt solve: interrupted"
    assert "Traceback" not in err and "KeyboardInterruptException" not in err and ".cpp" not in err, err
    assert "EXIT" not in rest  # IPOPT did not run to its end
    assert stopped < 5.0
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no output, no temporary file


SOLVE_AND_INTERRUPT = textwrap.dedent(
    """
    import io, json, os, signal, sys, threading, time
    import numpy as np
    import problems
    from trajopt import IpoptSolver, solve
    from trajopt.solvers.interrupt import SolveInterrupted

    solver = IpoptSolver(problems.get("go1-trot", cycles=4))
    stderr_before = sys.stderr
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    start = time.perf_counter()
    timer.start()
    try:
        solver.solve()
        out = {"raised": None}
    except SolveInterrupted as err:
        out = {
            "raised": type(err).__name__,
            "is_keyboard_interrupt": isinstance(err, KeyboardInterrupt),
            "status": err.solution.status,
            "success": err.solution.success,
            "shape": list(err.solution.states.shape),
            "finite": bool(np.isfinite(err.solution.primal).all()),
        }
    out["seconds"] = time.perf_counter() - start
    out["handler_restored"] = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    out["stderr_restored"] = sys.stderr is stderr_before
    small = solve(problems.get("pendulum", N=11))  # the process goes on as before
    out["next_solve"] = small.status
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1)
        out["plain_interrupt"] = "missed"
    except KeyboardInterrupt:
        out["plain_interrupt"] = "raised"
    print(json.dumps(out))
    """
)


@posix_only
def test_an_interrupted_solve_raises_with_the_last_iterate() -> None:
    run = subprocess.run([sys.executable, "-c", SOLVE_AND_INTERRUPT], cwd=REPO, env=env(), capture_output=True, text=True, timeout=300, preexec_fn=default_sigint)
    assert run.returncode == 0, run.stderr
    out = __import__("json").loads(run.stdout.strip().splitlines()[-1])
    assert out["raised"] == "SolveInterrupted" and out["is_keyboard_interrupt"]
    assert out["status"] == "Interrupted" and out["success"] is False
    assert out["shape"][1] == 37 and out["finite"]
    assert out["handler_restored"] and out["stderr_restored"]
    assert out["next_solve"] == "Solve_Succeeded"
    assert out["plain_interrupt"] == "raised"
    assert "KeyboardInterruptException" not in run.stderr and ".cpp" not in run.stderr


@pytest.fixture(scope="module")
def pendulum_solution() -> Solution:
    return solve(problems.get("pendulum", N=11))


@pytest.mark.parametrize("existing", [False, True], ids=["new", "overwrite"])
def test_an_interrupted_save_leaves_no_partial_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pendulum_solution: Solution, existing: bool) -> None:
    path = tmp_path / "sol.npz"
    if existing:
        pendulum_solution.save(path)
    before = path.read_bytes() if existing else None

    def interrupted_savez(fh: Any, **arrays: Any) -> None:
        fh.write(b"PK\x03\x04 half an archive")
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "savez", interrupted_savez)
    with pytest.raises(KeyboardInterrupt):
        pendulum_solution.save(path, overwrite=True)
    assert (path.read_bytes() if path.exists() else None) == before
    assert [p.name for p in tmp_path.iterdir()] == (["sol.npz"] if existing else [])


def test_atomic_output_publishes_whole_files_only(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    with atomic_output(target) as tmp:
        assert tmp.parent == tmp_path and tmp.suffix == ".txt" and not target.exists()
        tmp.write_text("complete")
    assert target.read_text() == "complete" and [p.name for p in tmp_path.iterdir()] == ["out.txt"]
    mode = target.stat().st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask  # the usual permissions, not a private temporary file's
    with pytest.raises(FileExistsError, match="overwrite=True"):
        with atomic_output(target):
            pass
    with pytest.raises(OSError):
        with atomic_output(target, overwrite=True) as tmp:
            tmp.write_text("half")
            raise OSError("disk full")
    assert target.read_text() == "complete" and [p.name for p in tmp_path.iterdir()] == ["out.txt"]
    late = tmp_path / "late.txt"
    with pytest.raises(FileExistsError, match="appeared while it was written"):
        with atomic_output(late) as tmp:
            tmp.write_text("ours")
            late.write_text("theirs")  # another writer won the race: never clobbered
    assert late.read_text() == "theirs"
    with pytest.raises(FileNotFoundError, match="path: the folder"):
        with atomic_output(tmp_path / "missing" / "x.txt"):
            pass
