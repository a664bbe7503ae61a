"""The verdict of ``trajopt verify``: every check against its threshold, friction judged in the plan's
own model (the pyramid ``|f_x|, |f_y| <= mu f_z`` or the cone) with MuJoCo's cone reported beside it."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

pytest.importorskip("mujoco")

from trajopt.cli import main  # noqa: E402
from trajopt.mujoco.verify import verify  # noqa: E402
from trajopt.mujoco.model import GRAVITY  # noqa: E402
from trajopt.mujoco.verdict import CONTACT_TOLERANCE, EOM_TOLERANCE, FORCE_TOLERANCE, JOINT_TOLERANCE, TORQUE_TOLERANCE, limit_check  # noqa: E402

from .solved_plans import solved  # noqa: E402


@pytest.fixture(scope="module")
def trot_report():
    return verify(solved("go1-trot"))


def planned_forces(solution) -> np.ndarray:
    """The plan's WORLD-frame contact forces (N, 4, 3), read from the controls of the inverse formulation."""
    return solution.controls[:, solution.problem.contact_model.f_slice].reshape(solution.N, 4, 3)


def test_friction_is_judged_in_the_plans_pyramid(trot_report):
    solution = solved("go1-trot")
    F, mu, stance = planned_forces(solution), solution.problem.robot.mu, trot_report.knots.stance
    # written out independently: the pyramid's excess max(|f_x|, |f_y|) - mu f_z, MuJoCo's elliptic cone hypot(f_x, f_y) - mu f_z
    pyramid = np.where(stance, np.maximum(np.abs(F[..., 0]), np.abs(F[..., 1])) - mu * F[..., 2], np.nan)
    cone = np.where(stance, np.hypot(F[..., 0], F[..., 1]) - mu * F[..., 2], np.nan)
    np.testing.assert_allclose(trot_report.knots.plan_friction_excess, pyramid, atol=1e-12)
    np.testing.assert_allclose(trot_report.knots.friction_excess, cone, atol=1e-12)
    assert trot_report.plan_friction == "pyramid"
    # the plan keeps its pyramid to IPOPT's tolerance; its corners reach outside the elliptic cone (measured +0.09 N)
    assert np.nanmax(pyramid) < 1e-6 < np.nanmax(cone)
    lines = trot_report.summary().splitlines()
    assert any(line.startswith("  friction, the plan's pyramid |f_x|, |f_y| <= mu f_n: worst -") for line in lines)
    mujoco_line = next(line for line in lines if line.startswith("  friction, MuJoCo's elliptic cone"))
    assert "not judged: the plan's pyramid reaches outside MuJoCo's cone" in mujoco_line
    assert lines[-1] == "verdict: PASS (10 checks within their thresholds)"
    assert trot_report.ok


def test_a_cone_plan_is_judged_in_its_cone():
    report = verify(solved("go1-trot", friction="cone"))
    assert report.plan_friction == "cone"
    np.testing.assert_allclose(report.knots.plan_friction_excess, report.knots.friction_excess, atol=1e-12)  # the same cone as MuJoCo's
    assert "friction, the plan's cone |f_t| <= mu f_n" in report.summary() and "not judged" not in report.summary()
    assert report.ok


def test_every_check_has_its_threshold(trot_report):
    weight = trot_report.mass * GRAVITY
    checks = {check.name: check for check in trot_report.checks()}
    assert list(checks) == [
        "EOM residual", "stance slip", "ground penetration", "friction (pyramid)", "negative normal force", "swing-foot force",
        "torque limit", "joint limit", "tracked replay", "shank below the ground",
    ]  # fmt: skip
    expected = {
        "EOM residual": EOM_TOLERANCE, "stance slip": CONTACT_TOLERANCE, "ground penetration": CONTACT_TOLERANCE,
        "friction (pyramid)": FORCE_TOLERANCE * weight, "negative normal force": FORCE_TOLERANCE * weight,
        "swing-foot force": FORCE_TOLERANCE * weight, "torque limit": TORQUE_TOLERANCE, "joint limit": JOINT_TOLERANCE,
        "shank below the ground": CONTACT_TOLERANCE,
    }  # fmt: skip
    for name, threshold in expected.items():
        assert checks[name].threshold == pytest.approx(threshold, rel=1e-12) and checks[name].passed
    worst = trot_report.worst()
    assert checks["torque limit"].value == worst["torque_excess"] and checks["negative normal force"].value == -worst["min_normal_force"]


def test_limit_check_reports_the_worst_knot():
    values = np.array([[np.nan, 0.1], [0.5, np.nan], [0.2, 0.3]])
    check = limit_check("x", values, 0.4, "N")
    assert (check.value, check.knot, check.passed) == (0.5, 1, False)
    assert check.describe() == "x +0.5 N > 0.4 N at knot 1"
    nothing = limit_check("swing", np.full((3, 2), np.nan), 0.4, "N")
    assert nothing.passed and np.isnan(nothing.value)  # nothing to check: no swing foot


def test_a_violating_plan_fails_with_the_check_its_value_and_threshold(trot_report):
    """Torques raised past the URDF limit and a tangential force pushed out of the pyramid: the
    verdict names both checks with their worst values and thresholds."""
    knots = trot_report.knots
    torque = knots.torque_excess.copy()
    torque[7, 3] = 0.25
    friction = knots.plan_friction_excess.copy()
    friction[4, 0] = 2.0
    tampered = dataclasses.replace(trot_report, knots=dataclasses.replace(knots, torque_excess=torque, plan_friction_excess=friction))
    threshold = FORCE_TOLERANCE * trot_report.mass * GRAVITY
    assert not tampered.ok
    assert tampered.verdict() == f"verdict: FAIL: friction (pyramid) +2 N > {threshold:.3g} N at knot 4; torque limit +0.25 N m > 1e-06 N m at knot 7"
    fell = dataclasses.replace(trot_report, tracked=dataclasses.replace(trot_report.tracked, fell=True, fall_time=0.4125))
    assert fell.verdict() == "verdict: FAIL: tracked replay fell at t = 0.412 s" and not fell.ok


def test_cli_exit_status_follows_the_verdict(tmp_path, capsys):
    solution = solved("go1-trot")
    path = tmp_path / "trot.npz"
    solution.save(path)
    assert main(["verify", str(path)]) == 0
    assert capsys.readouterr().out.rstrip().splitlines()[-1].startswith("verdict: PASS")
    # a plan whose torques exceed the limits: the same file with every torque scaled by 3
    broken = dataclasses.replace(solution, controls=solution.controls.copy())
    broken.controls[:, solution.problem.contact_model.u_slice] *= 3.0
    broken.save(tmp_path / "broken.npz")
    assert main(["verify", str(tmp_path / "broken.npz")]) == 1
    last = capsys.readouterr().out.rstrip().splitlines()[-1]
    assert last.startswith("verdict: FAIL: EOM residual") and "torque limit +" in last and "> 1e-06 N m at knot" in last
