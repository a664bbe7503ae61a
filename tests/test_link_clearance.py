"""Shank clearance (trajopt.legged.link_clearance) and the end at rest of a legged problem: checked against pinocchio.

The shank points are compared with pinocchio's forward kinematics (the knee is
the placement of the foot frame's parent joint, ``oMi``); the constraint's rows
with the numpy envelope of :mod:`trajopt.terrain.profile` at those points, and
on flat ground with the heights of the shanks' ends. The terrain solves are in
``tests/test_terrain_problems.py`` (slow); the Solo12 jump here (about 1 s each).
"""
from __future__ import annotations

import numpy as np
import pytest

import problems
import trajopt
from models import Go1
from trajopt import terrain as T
from trajopt.legged import LeggedProblem, gait, jump
from trajopt.legged.link_clearance import FOOT_GAP, has_shanks, leg_profiles, lowest_shank_point, shank_fractions, shank_points
from trajopt.report import solution_report

from .terrain_checks import pinocchio_shanks


def random_state(robot, seed):
    rng = np.random.default_rng(seed)
    x = robot.init_state()
    x[:3] += 0.1 * rng.standard_normal(3)
    quat = np.r_[1.0, 0.2 * rng.standard_normal(3)]
    x[3:7] = quat / np.linalg.norm(quat)
    x[7 : robot.nq] += 0.3 * rng.standard_normal(robot.nq - 7)
    return x


@pytest.mark.parametrize("seed", range(3))
def test_shank_points_match_pinocchio(seed):
    robot = Go1()
    x = random_state(robot, seed)
    points = np.array([P.T for P in shank_points(robot, x, shank_fractions(robot))])
    expected = pinocchio_shanks(robot, x)
    assert np.abs(points - expected).max() <= 1e-12
    # the last point stops FOOT_GAP short of the foot, the first is the knee
    feet = np.asarray(robot.kinematics(x)).reshape(-1, 3)
    np.testing.assert_allclose(np.linalg.norm(points[:, -1] - feet, axis=1), FOOT_GAP, rtol=0, atol=1e-12)


def gap_landing(link_clearance):
    """A jump onto the far side of a 20 cm gap whose hind feet may land 3 cm past the edge (the region's margin)."""
    return LeggedProblem(Go1(), jump(dt=0.02, crouch_knots=8, flight_knots=6, landing_knots=8), displacement=(0.6762, 0.0, 0.0), swing_apex=0.05,
                         terrain=T.gap(width=0.2, start=0.2381, before=1.2, after=1.8), link_clearance=link_clearance)  # fmt: skip


def test_shank_rows_are_the_heights_above_the_envelope_at_pinocchio_points():
    """The constraint's rows at a landing pose sunk into the far side: p_z - E(p) at pinocchio's shank points, E the numpy envelope."""
    problem = gap_landing(0.0)
    constraint = next(c for c in problem.resolved_constraints() if c.name == "shanks above the terrain")
    k = problem.N - 2
    x = problem.initial_guess()[0][k].copy()
    x[2] -= 0.08  # the whole robot 8 cm lower: the shanks' lower ends go below the surface
    row = int(np.flatnonzero(constraint.knots == k)[0])
    rows = np.asarray(constraint.function(x, np.zeros(problem.nu), constraint.params[row])).ravel()
    points = pinocchio_shanks(problem.robot, x)
    profiles = leg_profiles(problem)[k]
    expected = np.concatenate([points[i, :, 2] - profiles[i].envelope(points[i, :, :2]) for i in range(problem.n_feet)])
    np.testing.assert_allclose(rows, expected, rtol=0, atol=1e-12)
    assert rows.min() < 0 < rows.max()  # the sunk shanks' lower points violate it, the knees do not
    assert np.all(constraint.lower == 0.0) and np.all(np.isinf(constraint.upper))


def test_stance_envelope_fills_the_gap_behind_a_landing_foot():
    """A hind foot landed past the far edge: its shank's envelope stays at the rims' height over the gap."""
    problem = gap_landing(0.0)
    hind = problem.schedule.foot_names.index("RL_foot")
    profile = leg_profiles(problem)[problem.N - 1][hind]
    over_gap = np.array([[0.25, 0.13], [0.33, 0.13], [0.43, 0.13]])
    assert np.all(profile.envelope(over_gap) >= -1e-12)


def test_ground_rows_are_the_heights_of_pinocchio_shank_ends():
    """On flat ground the rows are the z of each shank's two ends (knee, last point before the foot), four legs in order."""
    robot = Go1()
    problem = LeggedProblem(robot, jump(dt=0.02, crouch_knots=8, flight_knots=6, landing_knots=8), displacement=(0.2, 0.0, 0.0), swing_apex=0.05, link_clearance=0.01)
    constraint = next(c for c in problem.resolved_constraints() if c.name == "shanks above the ground")
    assert constraint.knots.tolist() == list(range(1, problem.N))
    assert np.all(constraint.lower == 0.01) and np.all(np.isinf(constraint.upper))
    for seed in range(3):
        x = random_state(robot, seed)
        rows = np.asarray(constraint.function(x, np.zeros(problem.nu), []), dtype=float).ravel()
        ends = pinocchio_shanks(robot, x)[:, [0, -1], 2]
        np.testing.assert_allclose(rows, ends.ravel(), rtol=0, atol=1e-12)


def test_lowest_shank_point_is_the_lowest_pinocchio_shank_end_and_bounds_the_sampled_shank():
    robot = Go1()
    assert has_shanks(robot)
    states = np.array([random_state(robot, seed) for seed in range(5)])
    height, foot, knot = lowest_shank_point(robot, states)
    ends = np.array([pinocchio_shanks(robot, x)[:, [0, -1], 2] for x in states[1:]])  # the first state is not checked
    assert height == pytest.approx(ends.min(), abs=1e-12)
    assert ends[knot - 1, foot].min() == pytest.approx(height, abs=1e-12)
    samples = np.array([pinocchio_shanks(robot, x, samples=50)[:, :, 2] for x in states[1:]])
    assert samples.min() >= height - 1e-12  # a straight shank's lowest point over a plane is one of its ends


def test_solo12_jump_keeps_its_knees_above_the_ground_with_the_rows_and_the_report_warns_without():
    """Planned without the rows (the default), the Solo12's landing crouch puts a knee 5 cm into the ground; the report says so."""
    bare = trajopt.solve(problems.get("jump", robot="solo12"))
    held = trajopt.solve(problems.get("jump", robot="solo12", link_clearance=0.0))
    assert bare.success and held.success
    assert lowest_shank_point(bare.problem.robot, bare.states)[0] < -0.04
    assert lowest_shank_point(held.problem.robot, held.states)[0] >= -1e-6
    warned = solution_report(bare).splitlines()[-1]
    assert warned.startswith("WARNING: ") and "below the ground" in warned and "link_clearance" in warned
    assert "WARNING" not in solution_report(held)


def test_link_clearance_and_end_at_rest_arguments():
    robot, schedule = Go1(), gait("trot", dt=0.02, period=0.6, cycles=1)
    assert "shanks above the ground" in [c.name for c in LeggedProblem(robot, schedule, link_clearance=0.0).constraints]
    with pytest.raises(ValueError, match="link_clearance"):
        LeggedProblem(robot, schedule, terrain=T.Slope(0.1), link_clearance=float("nan"))
    with pytest.raises(TypeError, match="end_at_rest"):
        LeggedProblem(robot, schedule, end_at_rest="yes")
    names = [c.name for c in LeggedProblem(robot, schedule, end_at_rest=True).constraints]
    assert "at rest at the end" in names


def test_end_at_rest_bounds_the_last_accelerations():
    problem = LeggedProblem(Go1(), gait("trot", dt=0.02, period=0.6, cycles=1), end_at_rest=True)
    a = problem.contact_model.a_slice
    assert np.all(problem.control_lower[-1, a] == 0.0) and np.all(problem.control_upper[-1, a] == 0.0)
    assert np.all(np.isinf(problem.control_lower[-2, a]))


def test_go1_gap_keeps_its_shanks_above_the_terrain_and_ends_at_rest():
    problem = problems.get("go1-gap")
    names = [c.name for c in problem.constraints]
    assert "shanks above the terrain" in names and "at rest at the end" in names
    assert problem.link_clearance == 0.01 and problem.end_at_rest
