"""Stepping sooner when pushed sideways (trajopt.mpc.step_timing): the gait's clock advanced, the swing in progress
shortened within its bounds and the footholds planned from the measured base, the horizon's masks following; refused where it does not apply."""
from __future__ import annotations

import numpy as np
import pytest

import problems
from models import Humanoid
from tests.test_mpc_closed_loop import run_cli
from trajopt.mpc.gaits import GaitSchedule, GaitTimeline
from trajopt.mpc.legged import LeggedMPC
from trajopt.mpc.plan_tracking import PlanTrackingMPC
from trajopt.mpc.step_timing import StepTiming, heading_offset
from trajopt.mpc.tasks import mpc_task

H = 0.02  # the Go1's knot step


@pytest.fixture(scope="module")
def trot():
    """The Go1's trot task: 0.4 s period, duty 0.6, FL+RR standing over phases [0, 0.6), FR+RL over [0.5, 1.1)."""
    return mpc_task(problems.get("go1-trot"))


def test_an_advanced_timeline_is_the_schedule_ahead_of_the_clock(trot):
    timeline = GaitTimeline(GaitSchedule.parse("0:trot,1.3:stand"), trot.legged.robot)
    times = np.linspace(0.0, 2.0, 401)
    before = timeline.stance(times + 0.06)
    lift, land = timeline.swing_times(np.array([0.05]), 1)
    timeline.advance = 0.06
    assert np.array_equal(timeline.stance(times), before)
    shifted = timeline.swing_times(np.array([0.05 - 0.06]), 1)
    np.testing.assert_allclose(np.ravel(shifted), np.ravel([lift - 0.06, land - 0.06]), atol=1e-12)
    assert int(timeline.segment(1.6 - 0.06 - 1e-9)) == 0 and int(timeline.segment(1.6 - 0.06 + 1e-9)) == 1  # the stand (from the cycle's end, 1.6 s) 0.06 s sooner


@pytest.mark.parametrize(
    "t, offset, timing, advance",
    [
        (0.06, (0.0, 0.05), StepTiming(), H),  # FR+RL lifted at 0.04 and land at 0.2: one knot sooner
        (0.10, (0.0, -0.05), StepTiming(), H),  # pushed to the right
        (0.14, (0.0, 0.05), StepTiming(), H),  # landing at 0.18 = knot 2
        (0.17, (0.0, 0.05), StepTiming(), 0.0),  # landing at 0.2 already is within two knots
        (0.06, (0.0, 0.05), StepTiming(min_swing=0.15), 0.0),  # a swing of 0.14 s would be too short
        (0.06, (0.0, 0.03), StepTiming(), 0.0),  # under the threshold
        (0.06, (0.08, 0.05), StepTiming(), 0.0),  # mostly forward: a sagittal push
        (0.02, (0.0, 0.2), StepTiming(), 0.0),  # every foot stands
    ],
)
def test_the_swing_in_progress_ends_sooner_within_its_bounds(trot, t, offset, timing, advance):
    timeline = GaitTimeline(GaitSchedule.constant("trot"), trot.legged.robot)
    assert timing.advance(timeline, t, H, offset) == pytest.approx(advance, abs=1e-12)


def test_the_capture_offset_is_turned_into_the_heading_frame():
    np.testing.assert_allclose(heading_offset(np.array([0.0, 0.1, 0.0]), np.pi / 2), [0.1, 0.0], atol=1e-15)
    np.testing.assert_allclose(heading_offset(np.array([0.1, 0.0, 0.0]), np.pi / 2), [0.0, -0.1], atol=1e-15)


def test_a_sideways_velocity_brings_the_touchdown_two_knots_nearer_per_tick(trot):
    legged = LeggedMPC(trot.legged.robot, step_timing=StepTiming())
    x = legged.x_stand.copy()
    legged.start(0.0, x)
    nq = legged.robot.nq
    x[nq + 1] = 0.4  # 0.4 m/s to the left (body frame = WORLD: level, heading 0): a capture offset of 6.8 cm
    legged.update(legged.problem, 2.06, x)
    masks = legged.problem.dynamics_params.astype(bool)
    assert not masks[:6, 1].any() and masks[6, 1]  # FR lands at 2.18 s, knot 6: 0.02 s before its clock
    legged.update(legged.problem, 2.08, x)
    masks = legged.problem.dynamics_params.astype(bool)
    assert not masks[:4, 1].any() and masks[4, 1]  # at 2.16 s, knot 4
    assert legged.timing_advances == [(2.06, pytest.approx(H)), (2.08, pytest.approx(H))]
    legged.start(3.0, legged.x_stand)
    assert legged.timeline.advance == 0.0 and legged.timing_advances == []


def test_with_step_timing_the_footholds_follow_the_measured_base(trot):
    """A base 5 cm to the left of its reference (within MAX_LAG, at rest: no advance) moves every planned foothold 5 cm
    to the left with step timing, none without."""
    footholds = []
    for timing in (None, StepTiming()):
        legged = LeggedMPC(trot.legged.robot, step_timing=timing)
        legged.start(0.0, legged.x_stand)
        x = legged.x_stand.copy()
        x[1] += 0.05
        legged.update(legged.problem, 2.06, x)
        assert legged.timeline.advance == 0.0
        footholds.append(dict(legged.planned_footholds))
    assert footholds[0].keys() == footholds[1].keys() and footholds[0]
    for key, hold in footholds[0].items():
        np.testing.assert_allclose(footholds[1][key] - hold, [0.0, 0.05, 0.0], atol=1e-12)


def test_without_step_timing_the_feet_keep_the_clock(trot):
    legged = LeggedMPC(trot.legged.robot)
    x = legged.x_stand.copy()
    x[legged.robot.nq + 1] = 0.4
    legged.update(legged.problem, 2.06, x)
    assert legged.timeline.advance == 0.0 and legged.timing_advances == []


def test_a_bipeds_step_timing_is_refused():
    """Tuned on the Go1's trot, it made the G1 walking in place fall without a push (docs/design/mpc.md): refused, in
    Python and on the command line."""
    robot = Humanoid(contacts_per_foot=4, locked=("waist", "arms"), knee=0.6)
    with pytest.raises(ValueError, match="step_timing: stepping sooner is the quadrupeds'.*walks on two soles"):
        LeggedMPC(robot, gaits="walk", step_timing=StepTiming())
    legged = LeggedMPC(robot, gaits="walk")
    with pytest.raises(ValueError, match="walks on two soles"):
        legged.set_step_timing(StepTiming())
    assert legged.step_timing is None
    out = run_cli("humanoid-walk", "--step-sooner", "--duration", "0.1")
    assert out.returncode == 2 and "walks on two soles" in out.stderr


@pytest.mark.parametrize("name", ["go1-slope", "go1-jump", "pendulum"])
def test_stepping_sooner_is_refused_off_flat_ground_and_without_a_gait(name):
    out = run_cli(name, "--step-sooner", "--duration", "0.1")
    assert out.returncode == 2 and f"--step-sooner: the touchdown times of a legged robot's gait on flat ground; {name!r} is not one" in out.stderr


@pytest.mark.parametrize(
    "options, message",
    [
        ({"threshold": -0.01}, "threshold > 0"),
        ({"min_swing": float("nan")}, "min_swing > 0"),
        ({"earliest_knot": 0}, "earliest_knot an int >= 1"),
    ],
)
def test_bad_step_timing_is_refused(options, message):
    with pytest.raises(ValueError, match=message):
        StepTiming(**options)


def test_step_timing_of_the_wrong_type_and_on_a_plan_is_refused(trot):
    with pytest.raises(ValueError, match="step_timing: expected a StepTiming or None"):
        LeggedMPC(trot.legged.robot, step_timing=0.05)
    with pytest.raises(ValueError, match="takes no step_timing"):
        PlanTrackingMPC(object(), step_timing=StepTiming())
