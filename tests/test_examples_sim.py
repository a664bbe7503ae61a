"""The simulation examples run (``--quick``), write their figures, and report what their docstrings claim."""
from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _main(name: str):
    return runpy.run_path(str(EXAMPLES / f"{name}.py"), run_name=f"example_{name}")["main"]


def test_hand_contact_example(tmp_path):
    out = _main("hand_contact")(["--quick", "--animate", "--out", str(tmp_path)])
    result = out["result"]
    assert result.success and len(result.impacts) == 4  # one impact per finger
    assert result.max_penetration <= 1e-6 and result.forces.min() >= 0.0
    assert out["figure"].is_file() and out["animation"].is_file()


def test_clik_example(tmp_path):
    out = _main("clik")(["--quick", "--out", str(tmp_path)])
    assert all(r.success and r.error < 1e-4 for r in out["results"].values())
    assert out["figure"].is_file()


def test_track_quadrotor_example(tmp_path):
    out = _main("track_quadrotor")(["--quick", "--out", str(tmp_path)])
    closed = out["closed_loop"]
    assert closed.success and np.isfinite(closed.states).all()
    assert out["final_error"]["LQR"] < 0.1 < out["final_error"]["feedforward"]
    assert out["figure"].is_file()


def test_examples_reject_unknown_options():
    with pytest.raises(SystemExit):
        _main("clik")(["--bogus"])
