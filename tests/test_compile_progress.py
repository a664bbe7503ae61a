"""The status line of a cold compilation (:mod:`models.compile_progress`), through :func:`models.compiled.compile_functions` and the CLI.

Real gcc on tiny functions with a fresh cache folder per test; a wrapper
compiler that sleeps first keeps a build running long enough to see the
line move.
"""
from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List

import casadi as ca
import pytest

from models import compile_progress
from models.compile_progress import CompileProgress, dask_worker_name
from models.compiled import compile_functions

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("gcc") is None or os.name != "posix", reason="needs gcc")


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def functions(count: int, tag: str = "f") -> List[ca.Function]:
    x = ca.SX.sym("x", 3)
    return [ca.Function(f"{tag}{i}", [x], [ca.sin(x) * (i + 1) + ca.sumsqr(x) ** (i + 1)]) for i in range(count)]


def slow_compiler(folder: Path, delay: float) -> str:
    """A compiler that waits ``delay`` s and then runs gcc."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "cc-slow"
    script.write_text(f'#!/bin/sh\nsleep {delay}\nexec {shutil.which("gcc")} "$@"\n')
    script.chmod(0o755)
    return str(script)


def test_plain_lines_name_the_work_the_folder_and_the_time(tmp_path: Path) -> None:
    stream = io.StringIO()
    compile_functions(functions(3), cache_dir=tmp_path, progress=stream, what="stage functions")
    lines = stream.getvalue().splitlines()
    head = f"trajopt: compiling 3 stage functions with gcc (cached in {tmp_path / 'compiled'}): "
    assert lines[0] == head + "0/3 done, 0 s"
    assert re.fullmatch(re.escape(head) + r"3/3 done in \d+\.\d s \(compiler CPU \d+\.\d s\)", lines[-1])
    assert "\r" not in stream.getvalue() and "\033" not in stream.getvalue()
    again = io.StringIO()
    compile_functions(functions(3), cache_dir=tmp_path, progress=again)
    assert again.getvalue() == ""  # all cached: nothing to say


def test_plain_lines_come_at_most_every_interval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compile_progress, "LINE_INTERVAL", 0.0)
    monkeypatch.setattr(compile_progress, "TICK", 3600.0)  # lines from finished functions only
    stream = io.StringIO()
    compile_functions(functions(3), cache_dir=tmp_path, progress=stream, jobs=1)
    assert [line.split(": ")[-1].split(",")[0].split(" in ")[0] for line in stream.getvalue().splitlines()] == ["0/3 done", "1/3 done", "2/3 done", "3/3 done"]
    monkeypatch.setattr(compile_progress, "LINE_INTERVAL", 3600.0)
    quiet = io.StringIO()
    compile_functions(functions(3, "g"), cache_dir=tmp_path, progress=quiet, jobs=1)
    assert len(quiet.getvalue().splitlines()) == 2  # the start and the end


def test_plain_lines_keep_coming_while_one_function_compiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compile_progress, "TICK", 0.05)
    monkeypatch.setattr(compile_progress, "LINE_INTERVAL", 0.4)
    stream = io.StringIO()  # a log: `trajopt solve ... -q 2> log`
    compile_functions(functions(1), cache_dir=tmp_path, compiler=slow_compiler(tmp_path / "bin", 1.5), progress=stream)
    statuses = [line.split("): ")[-1] for line in stream.getvalue().splitlines()]
    waiting = [s for s in statuses if s.startswith("0/1 done, ")]
    assert len(waiting) >= 3 and waiting[0] == "0/1 done, 0 s" and waiting[-1] != "0/1 done, 0 s"  # the time moved
    assert statuses[-1].startswith("1/1 done in ") and "\r" not in stream.getvalue()


def test_on_a_terminal_the_line_is_rewritten_in_place_while_gcc_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compile_progress, "TICK", 0.05)
    stream = Terminal()
    compile_functions(functions(1), cache_dir=tmp_path, compiler=slow_compiler(tmp_path / "bin", 1.2), progress=stream)
    text = stream.getvalue()
    updates = text.split("\r\033[K")[1:]
    assert len(updates) >= 10 and text.endswith("\n") and text.count("\n") == 1
    assert "0/1 done, 1 s" in text  # the time moved while the only function compiled
    assert re.search(r"compiling 1 function with cc-slow \(cached in .*\): 1/1 done in 1\.\d s", updates[-1])


def test_in_place_lines_fit_the_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "get_terminal_size", lambda fallback=(80, 24): os.terminal_size((100, 24)))
    stream = Terminal()
    deep = tmp_path / ("a-long-folder-name" * 4)
    compile_functions(functions(2), cache_dir=deep, progress=stream)
    updates = stream.getvalue().split("\r\033[K")[1:]
    assert len(updates) >= 3 and all(len(u) <= 99 for u in updates[:-1])
    assert re.search(r"\(cached in \.\.\.[^ ]*a-long-folder-name/compiled\): 0/2 done, 0 s$", updates[0])
    assert f"(cached in {deep / 'compiled'}): 2/2 done in" in updates[-1]  # the last line stays: whole, wrapped if need be


def test_a_dask_worker_writes_plain_named_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compile_progress, "dask_worker_name", lambda: "tcp://127.0.0.1:4242")
    stream = Terminal()  # the workers of `trajopt sweep` inherit the sweep's terminal
    compile_functions(functions(2), cache_dir=tmp_path, progress=stream)
    text = stream.getvalue()
    lines = text.split("\r\033[K")[1:]
    assert len(lines) == 2 and all(line.endswith("\n") and line.count("\n") == 1 for line in lines)
    assert all(line.startswith("trajopt (Dask worker tcp://127.0.0.1:4242): compiling 2 functions with gcc") for line in lines)


def test_outside_a_dask_worker_there_is_no_worker_name() -> None:
    pytest.importorskip("distributed")
    assert dask_worker_name() is None


def test_progress_needs_something_to_count() -> None:
    with pytest.raises(ValueError, match="total: expected an int >= 1, got 0"):
        CompileProgress(0, "functions", "gcc", "/tmp", io.StringIO())


def test_the_cli_reports_a_cold_compile_also_when_quiet(tmp_path: Path) -> None:
    env = {**os.environ, "TRAJOPT_CACHE": str(tmp_path / "cache"), "PYTHONPATH": str(REPO), "MPLBACKEND": "Agg"}
    command = [sys.executable, "-m", "trajopt.cli", "solve", "cartpole", "--compile", "-q"]
    cold = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert cold.returncode == 0, cold.stderr
    assert re.search(r"trajopt: compiling \d+ stage functions with gcc \(cached in .*compiled\): (\d+)/\1 done in \d+\.\d s", cold.stderr)
    warm = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert warm.returncode == 0 and "compiling" not in warm.stderr
