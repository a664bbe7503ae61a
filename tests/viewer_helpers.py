"""Shared pieces of the viewer tests: one solve per session, headless Chromium screenshots."""
from __future__ import annotations

import functools
import os
import re
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import problems
from trajopt import solve

#: Debian's chromium, headless with the software GL the issue measured.
CHROMIUM_FLAGS = ("--headless=new", "--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--hide-scrollbars", "--disable-gpu-sandbox")
WINDOW = (900, 600)


@functools.lru_cache(maxsize=None)
def go1_trot():
    """The default go1-trot solution (solved once per session)."""
    solution = solve(problems.get("go1-trot"), print_level=0)
    assert solution.success, solution.status
    return solution


@functools.lru_cache(maxsize=None)
def quadrotor():
    """A short-horizon quadrotor maneuver (11 knots)."""
    solution = solve(problems.get("quadrotor", N=11), print_level=0)
    assert solution.success, solution.status
    return solution


@functools.lru_cache(maxsize=None)
def session_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="trajopt-viewer-tests-"))


def chromium() -> str:
    """The chromium executable; skips the test where it is missing, but fails under CI (which installs it)."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed; .ci/run installs it (apt-get install chromium)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return path


def screenshot(url: str, out: Path, budget_ms: int | None = None, timeout: float = 120.0, window: tuple[int, int] = WINDOW) -> np.ndarray:
    """Load ``url`` in headless Chromium in a ``window`` (width, height) of pixels, screenshot it to ``out`` (PNG)
    and return its RGB pixels (H, W, 3) as int."""
    args = [chromium(), *CHROMIUM_FLAGS, f"--window-size={window[0]},{window[1]}", f"--screenshot={out}"]
    if budget_ms is not None:
        args.append(f"--virtual-time-budget={budget_ms}")
    # chromium's own profile in a scratch folder: no state shared between runs
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([*args, f"--user-data-dir={profile}", url], check=True, timeout=timeout, capture_output=True)
    return np.asarray(Image.open(out).convert("RGB"), dtype=int)


def changed(a: np.ndarray, b: np.ndarray, threshold: int = 40) -> np.ndarray:
    """Boolean mask (H, W) of pixels whose RGB values differ by more than ``threshold`` (sum of |differences|)."""
    return np.abs(a - b).sum(axis=2) > threshold


def central(mask: np.ndarray, margin: float = 0.15) -> np.ndarray:
    """The mask without a ``margin`` band (fraction of each side) around the image."""
    h, w = mask.shape
    dh, dw = int(margin * h), int(margin * w)
    return mask[dh : h - dh, dw : w - dw]


def read_viewer_url(proc: subprocess.Popen, timeout: float) -> str:
    """The next viewer URL (``3D viewer at URL``) in a CLI process's output (text mode); fails after ``timeout`` s
    or when the process ends first."""
    deadline, seen = time.monotonic() + timeout, []
    while time.monotonic() < deadline:
        if select.select([proc.stdout], [], [], 1.0)[0]:
            seen.append(proc.stdout.readline())
            match = re.search(r"3D viewer at (http://\S+)", seen[-1])
            if match:
                return match.group(1)
        if proc.poll() is not None:
            break
    pytest.fail(f"no viewer URL within {timeout} s; output: {''.join(seen)!r}")
