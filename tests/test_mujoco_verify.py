"""trajopt.mujoco verify and track (issue 16, items 2 and 4, and its targets).

Targets, measured on this branch (1 ms steps, implicitfast, contact spheres of
5 mm, solref (0.005, 1), the robot's default PD gains):

- EOM residual with MuJoCo's dynamics <= 1e-6 m g on every registered legged
  plan: measured 1e-16 .. 2e-13 m g;
- PD + feed-forward replay of go1-trot and go1-jump within 2 cm / 3 deg, no
  fall: measured go1-trot 2.4 mm / 0.22 deg, go1-jump 14.1 mm / 0.70 deg
  (margins 8x and 1.4x in position);
- the periodic go1-trot repeated 10 cycles with the tracker without falling:
  measured 18 mm / 1.7 deg (PD + feed-forward).
"""
from __future__ import annotations

import sys

import numpy as np
import pytest

pytest.importorskip("mujoco")

import matplotlib  # noqa: E402

matplotlib.use("Agg")

from PIL import Image  # noqa: E402

from models import Go1, LeggedRobot  # noqa: E402
from trajopt.cli import main  # noqa: E402
from trajopt.mujoco import Feedforward, PDFeedforward, TimeVaryingLQR, build_model, plan_timestep, sample_plan, track  # noqa: E402
from trajopt.mujoco.plot import plot_verification  # noqa: E402
from trajopt.legged.joint_gains import DEFAULT_GAINS, GO1_LEG_LENGTH, GO1_MASS, default_gains, torque_scale  # noqa: E402
from trajopt.legged.link_clearance import lowest_shank_point  # noqa: E402
from trajopt.mujoco.verify import EOM_TOLERANCE, knot_checks, verify  # noqa: E402

from .solved_plans import solved  # noqa: E402

DRIFT, TILT = 0.02, np.radians(3.0)  # the tracked-replay targets


@pytest.fixture(scope="module")
def trot_report():
    return verify(solved("go1-trot"))


@pytest.fixture(scope="module")
def jump_report():
    return verify(solved("go1-jump"))


@pytest.mark.parametrize("name", ["go1-trot", "go1-jump", "go1-pace", "go1-bound", "go2-trot", "humanoid-shift"])
def test_eom_residual_of_every_registered_legged_plan(name):
    # measured 1e-16 .. 2e-13 m g: MuJoCo's M, bias and contact Jacobians equal our RNEA's
    solution = solved(name)
    checks = knot_checks(build_model(solution.problem.robot), solution.problem, solution)
    assert checks.eom_residual.max() <= EOM_TOLERANCE
    assert checks.penetration.max() < 1e-6  # stance feet on z = 0, swing feet above it


@pytest.mark.parametrize("fixture", ["trot_report", "jump_report"])
def test_tracked_replay_meets_the_targets(fixture, request):
    report = request.getfixturevalue(fixture)
    # measured: trot 2.4 mm / 0.22 deg, jump 14.1 mm / 0.70 deg
    assert report.ok and not report.tracked.fell
    assert report.tracked.max_position_error <= DRIFT
    assert report.tracked.max_orientation_error <= TILT
    assert report.tracked.times[-1] == pytest.approx(report.knots.times[-1])  # the whole plan was replayed


def test_feedforward_only_replay_is_reported(trot_report, jump_report):
    # no target: it measures how realizable the plan is in MuJoCo's soft contacts. Measured:
    # trot 132 mm / 11.8 deg (still standing), jump 46 mm / 24 deg, collapsed at landing (t = 0.61 s)
    for report in (trot_report, jump_report):
        ff = report.feedforward
        assert ff.controller == "feed-forward only" and "feed-forward only" in report.summary()
        assert ff.max_position_error > 3 * report.tracked.max_position_error  # open loop: unstable
        assert ff.fell == (len(ff.times) < len(report.tracked.times))  # a fall ends the replay early
        if ff.fell:
            assert 0 < ff.fall_time < report.knots.times[-1] and "FELL" in report.summary()


def test_knot_checks_use_mujocos_kinematics_and_cone(trot_report, jump_report):
    for report in (trot_report, jump_report):
        k, w = report.knots, report.worst()
        assert k.eom_residual.shape == k.times.shape
        stance = k.stance
        assert np.isnan(k.stance_speed[~stance]).all() and np.isfinite(k.stance_speed[stance]).all()
        assert w["stance_speed"] < 0.05 and w["stance_slip"] < 1e-6  # footholds held at the knots
        assert w["swing_force"] < 1e-6 and w["min_normal_force"] > -1e-6
        assert w["torque_excess"] < 1e-6 and w["joint_excess"] < 1e-6
        # the plans use the friction pyramid |f_x|, |f_y| <= mu f_z; MuJoCo's elliptic cone is
        # tighter by up to sqrt(2): measured excess 0.09 N (trot) and 0.18 N (jump)
        assert w["friction_excess"] < 1.0
    solution = solved("go1-trot")
    F = solution.controls[:, solution.problem.contact_model.f_slice].reshape(solution.N, 4, 3)
    mu = solution.problem.robot.mu
    expected = np.where(trot_report.knots.stance, np.hypot(F[..., 0], F[..., 1]) - mu * F[..., 2], np.nan)
    np.testing.assert_allclose(trot_report.knots.friction_excess, expected, atol=1e-12)
    table = jump_report.table().splitlines()
    assert len(table) == 1 + solved("go1-jump").N and "EOM/mg" in table[0] and "----" in table[20]


def test_shank_heights_from_mujocos_kinematics_match_ours_and_fail_a_knee_in_the_ground(jump_report):
    """Each knot's lowest shank end from MuJoCo's joint anchors and contact spheres equals ours (pinocchio-checked in
    tests/test_link_clearance.py); Solo12's jump planned without shank rows lays a knee 5.4 cm into the ground and fails."""
    heights = jump_report.knots.shank_height
    assert heights.shape == jump_report.knots.stance.shape and np.isfinite(heights).all()
    jump = solved("go1-jump")
    height, foot, knot = lowest_shank_point(jump.problem.robot, jump.states)
    assert heights[1:].min() == pytest.approx(height, abs=1e-9) and heights[knot, foot] == pytest.approx(height, abs=1e-9)
    assert jump_report.ok and "shank below the ground" in [c.name for c in jump_report.checks()]
    solo = verify(solved("jump", robot="solo12"))
    assert solo.worst()["shank_height"] < -0.04 and not solo.ok
    assert "shank below the ground" in solo.verdict() and "knot 28" in solo.verdict()
    held = solved("jump", robot="solo12", link_clearance=0.0)
    assert knot_checks(build_model(held.problem.robot), held.problem, held).shank_height.min() >= -1e-6
    shift = solved("humanoid-shift")
    assert np.isnan(knot_checks(build_model(shift.problem.robot), shift.problem, shift).shank_height).all()  # soles: not shanks


def test_replay_records_mujoco_contact_forces(trot_report):
    tracked = trot_report.tracked
    assert tracked.forces.shape == tracked.planned_forces.shape == (len(tracked.times), 4, 3)
    # MuJoCo's solved normal forces follow the plan's while tracking (RMS ~ a few N on 30-140 N)
    rms = np.sqrt(np.mean((tracked.forces[:, :, 2] - tracked.planned_forces[:, :, 2]) ** 2))
    assert rms < 10.0
    weight = trot_report.mass * 9.81
    assert np.median(tracked.forces[:, :, 2].sum(axis=1)) == pytest.approx(weight, rel=0.3)


def test_lqr_tracks_the_trot_closer_than_pd(trot_report):
    # TV-LQR on MuJoCo's linearization (mjd_transitionFD): measured 1.0 mm / 0.04 deg against PD's 2.4 mm / 0.22 deg
    result = track(solved("go1-trot"), TimeVaryingLQR())
    assert not result.fell
    assert result.max_position_error < trot_report.tracked.max_position_error
    assert result.max_orientation_error < 0.5 * trot_report.tracked.max_orientation_error
    assert "LQR" in result.summary()


def test_periodic_trot_repeated_ten_cycles():
    solution = solved("go1-trot", periodic=True)
    result = track(solution, "pd", cycles=10)
    # measured 18 mm / 1.7 deg after 6 s; the target is not falling
    assert not result.fell and result.cycles == 10
    assert result.times[-1] == pytest.approx(10 * solution.tf)
    assert result.max_position_error < 0.1
    # the reference repeats: cycle c is the plan moved c times by its displacement (and its end yaw,
    # measured 9e-7 rad, which turns the second cycle's 0.15 m by 1.4e-7 m)
    plan = sample_plan(solution, 1e-3, cycles=3)
    steps = len(plan.times) // 3
    np.testing.assert_allclose(plan.states[2 * steps, :3] - plan.states[0, :3], 2 * (solution.states[-1, :3] - solution.states[0, :3]), atol=1e-6)
    np.testing.assert_allclose(plan.states[steps + 10, 7:], plan.states[10, 7:], atol=1e-12)


def test_non_periodic_plan_refuses_cycles():
    with pytest.raises(ValueError, match="not periodic.*periodic=True"):
        track(solved("go1-trot"), cycles=2)


def test_controller_input_checks():
    solution = solved("go1-trot")
    with pytest.raises(ValueError, match="controller: expected one of"):
        track(solution, "mpc")
    with pytest.raises(ValueError, match="kp: expected finite non-negative"):
        track(solution, PDFeedforward(-1.0, 1.0))
    with pytest.raises(ValueError, match="timestep|dt: the plan's duration"):
        track(solution, robot=build_model(solution.problem.robot, timestep=7e-4))
    with pytest.raises(ValueError, match="legged problem"):
        verify(solved("pendulum", N=21))
    with pytest.raises(ValueError, match="r_weight"):
        TimeVaryingLQR(r_weight=0.0)


def test_default_gains_scale_with_the_robot():
    go1 = Go1()
    assert (go1.mass, go1.leg_length) == pytest.approx((GO1_MASS, GO1_LEG_LENGTH), rel=1e-6)
    assert default_gains(go1) == DEFAULT_GAINS["go1"] and torque_scale(go1) == pytest.approx(1.0, rel=1e-6)
    solo = LeggedRobot.from_robot_data("solo12")
    s = solo.mass * solo.leg_length / (GO1_MASS * GO1_LEG_LENGTH)
    assert torque_scale(solo) == pytest.approx(s) and 0.1 < s < 0.2
    assert default_gains(solo) == pytest.approx((50.0 * s, 2.0 * s * np.sqrt(solo.leg_length / GO1_LEG_LENGTH)))
    assert default_gains(object()) == DEFAULT_GAINS["default"]


def test_scaled_template_on_another_quadruped():
    # the trot template scaled to Solo12's legs: knots every 17.3 ms, simulated at 0.994 ms so that
    # knots fall on steps; Go1's gains scaled by torque_scale: measured 8.1 mm / 0.85 deg
    solution = solved("trot", robot="solo12")
    dt = plan_timestep(solution)
    h = solution.tf / (solution.N - 1)
    assert dt <= 1e-3 and (h / dt) == pytest.approx(round(h / dt), abs=1e-9)
    result = track(solution)
    assert not result.fell and result.max_position_error < DRIFT and result.max_orientation_error < TILT
    assert result.times[-1] == pytest.approx(solution.tf)


def test_gains_are_stated_and_overridable():
    solution = solved("go1-trot")
    stiff = track(solution, PDFeedforward(kp=80.0))
    assert "Kp 80 N m/rad, Kd 2 N m s/rad" in stiff.controller  # Kd from Go1's defaults
    assert track(solution, Feedforward()).controller == "feed-forward only"


def test_plot(tmp_path, jump_report):
    path = tmp_path / "jump.png"
    fig = plot_verification(jump_report, path)
    assert [ax.get_title(loc="left") for ax in fig.axes[:4]] == ["base height", "base orientation (ZYX Euler)", "normal contact forces", "base drift from the plan"]
    assert Image.open(path).size[0] > 1000
    with pytest.raises(FileExistsError):
        plot_verification(jump_report, path)


def test_cli_verify(tmp_path, capsys):
    path = tmp_path / "trot.npz"
    solved("go1-trot").save(path)
    code = main(["verify", str(path), "--table", "--plot", str(tmp_path / "trot.png")])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "EOM residual" in out and "PD + feed-forward (Kp 50 N m/rad, Kd 2 N m s/rad)" in out and "feed-forward only" in out
    assert (tmp_path / "trot.png").exists() and "wrote" in out
    assert main(["verify", str(path), "--plot", str(tmp_path / "trot.png")]) == 2  # exists, no --overwrite
    assert "--overwrite" in capsys.readouterr().err
    assert main(["verify", str(tmp_path / "missing.npz")]) == 2
    assert "no solution file" in capsys.readouterr().err


def test_cli_verify_without_the_extra(tmp_path, capsys, monkeypatch):
    path = tmp_path / "trot.npz"
    solved("go1-trot").save(path)
    for name in [m for m in sys.modules if m == "trajopt.mujoco" or m.startswith("trajopt.mujoco.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mujoco", None)  # as if the package were not installed
    assert main(["verify", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ['trajopt verify: error: trajopt.mujoco needs MuJoCo: pip install -e ".[mujoco]"']
