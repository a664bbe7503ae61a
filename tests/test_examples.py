"""The core examples run and do what their docstrings say."""
from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np

from lie import quat_to_axis_angle

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_quickstart_slews_the_satellite(tmp_path):
    out = runpy.run_path(str(EXAMPLES / "quickstart.py"), run_name="example_quickstart")["main"](["--out", str(tmp_path)])
    solution = out["solution"]
    assert solution.success and solution.max_violation < 1e-6
    phi = quat_to_axis_angle(solution.states[-1][3:7])
    assert np.allclose(phi, [0.0, 0.0, np.pi / 2], atol=1e-6)
    assert np.abs(solution.controls).max() <= 2.0 + 1e-6
    assert out["figure"].is_file()
