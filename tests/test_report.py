"""Text reports of solutions (trajopt.report): solver result, times, start and end, gait."""
from __future__ import annotations

import numpy as np
import pytest

import problems
from trajopt import solve
from trajopt.report import gait_text, solution_report, vector_text


@pytest.fixture(scope="module")
def pendulum():
    return solve(problems.get("pendulum", N=21))


def test_generic_report(pendulum):
    text = solution_report(pendulum)
    lines = text.splitlines()
    assert lines[0] == "pendulum: Solve_Succeeded (success)"
    assert "N = 21 knots" in text and f"iterations            {pendulum.iterations}" in text
    worst = int(np.argmax(pendulum.knot_violation))
    assert f"{pendulum.max_violation:.2e} (largest at knot {worst}," in text
    assert "state at t = 0        [3.1416 0.    ]" in text
    assert "goal                  [0. 0.]" in text
    assert len(lines) <= 24  # one screen


def test_rigid_body_report():
    text = solution_report(solve(problems.get("quadrotor", N=21)))
    assert "position [m]          [0. 0. 0.] -> [5. 0. 1.] (world)" in text
    assert "attitude [deg]        [0. 0. 0.] -> [0. 0. 0.] (ZYX: yaw, pitch, roll)" in text


def test_gait_text_and_vectors():
    stance = np.array([[True, False], [True, True], [False, True]])
    assert gait_text(stance, ["FL_foot", "RR"]) == ["FL_foot  ##-", "RR       -##"]
    assert vector_text([-1e-12, 0.123456, -2.0]).split() == ["[", "0.", "0.1235", "-2.", "]"]  # no "-0."


def test_legged_report_names_the_robot_as_loaded():
    """The robot's line: total mass (pinocchio's, against the URDF's masses summed here), bodies and links."""
    import xml.etree.ElementTree as ET

    from models.robot_data import urdf_path
    from tests.solved_plans import solved

    text = solution_report(solved("go1-stand"))
    mass = sum(float(m.get("value")) for m in ET.parse(urdf_path("go1")).getroot().iter("mass"))
    assert f"  robot                 go1: {mass:.4g} kg in 13 bodies (46 links), floating base, nq 19, nv 18, nu 12" in text.splitlines()
