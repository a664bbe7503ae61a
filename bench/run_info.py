"""Where and when a benchmark ran: what every bench's JSON output carries beside its figures.

The benchmarks page (``bench/benchmarks_page.py``) prints it under each table,
so that a figure always says the date, the machine, its load and the versions
it came from.
"""
from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any, Dict

ROOT = Path(__file__).resolve().parents[1]
#: Distributions whose versions a result depends on.
PACKAGES = ("casadi", "pin", "numpy", "scipy", "mujoco")


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``; the platform's processor string elsewhere)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def git_commit() -> str:
    """The checkout's commit (with ``+changes`` when the tree differs from it), or ``"unknown"``."""
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True, cwd=ROOT, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit + ("+changes" if dirty else "")


def versions() -> Dict[str, str]:
    """Installed versions of :data:`PACKAGES` (absent ones left out)."""
    found = {}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def run_info() -> Dict[str, Any]:
    """This moment's date (UTC), machine (CPU model, cores), load averages, Python, package versions and commit."""
    return {
        "started": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "load": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "versions": versions(),
        "commit": git_commit(),
    }


def write_result(path: str, bench: str, info: Dict[str, Any], settings: Dict[str, Any], **figures: Any) -> None:
    """Write a bench's JSON to ``path`` and say so: its name, the run (``info``, :func:`run_info` at its start, with the
    time and load at its end), its ``settings`` and its ``figures`` (``rows=`` or ``cases=``)."""
    end = run_info()
    payload = {"bench": bench, "run": {**info, "finished": end["started"], "load_end": end["load"]}, "settings": settings, **figures}
    Path(path).write_text(json.dumps(payload, indent=1, default=float) + "\n")
    print(f"wrote {path}")
