"""The receding horizon on a slope (trajopt.mpc.ground_plane): the plane's frame checked against the terrain's own
normal and heights, and go1-slope run in MuJoCo on the terrain `trajopt verify` builds."""
from __future__ import annotations

import numpy as np
import pytest

import problems
from lie import quat_to_rot
from trajopt.mpc.ground_plane import GroundPlane
from trajopt.mpc.loop import run_closed_loop
from trajopt.mpc.tasks import mpc_task
from trajopt.terrain import Slope


@pytest.mark.parametrize("angle, heading", [(15.0, 0.0), (-10.0, 0.7), (25.0, -2.0)])
def test_the_planes_frame_is_the_terrains(angle, heading):
    terrain = Slope(np.radians(angle), heading, origin=(0.3, -0.2, 0.1))
    ground = GroundPlane.of_terrain(terrain)
    xy = np.random.default_rng(0).uniform(-2, 2, (20, 2))
    np.testing.assert_allclose(ground.height(xy), terrain.height(xy), rtol=0, atol=1e-14)
    np.testing.assert_allclose(ground.normal, terrain.normal(xy[:1]).ravel(), rtol=0, atol=1e-15)
    R = ground.rotation
    np.testing.assert_allclose(R.T @ R, np.eye(3), rtol=0, atol=1e-15)
    np.testing.assert_allclose(np.linalg.det(R), 1.0, rtol=0, atol=1e-15)
    np.testing.assert_allclose(R[:, 2], ground.normal, rtol=0, atol=0)
    points = np.c_[xy, terrain.height(xy)]
    np.testing.assert_allclose([ground.relative_height(p) for p in points], terrain.height(np.zeros((1, 2)))[0] * np.ones(20), rtol=0, atol=1e-14)
    np.testing.assert_allclose(ground.offset_of(points + [0.0, 0.0, -0.01]), ground.offset - 0.01, rtol=0, atol=1e-14)
    f = np.array([3.0, -2.0, 40.0])
    np.testing.assert_allclose(ground.local_force(f), [R[:, 0] @ f, R[:, 1] @ f, ground.normal @ f], rtol=0, atol=1e-13)
    base = ground.base_rotation(0.4)
    np.testing.assert_allclose(base[:, 2], ground.normal, rtol=0, atol=1e-15)
    assert abs(base[:, 0] @ ground.normal) < 1e-15 and base[:, 0] @ [np.cos(0.4), np.sin(0.4), 0.0] > 0


def test_the_flat_ground_changes_nothing():
    flat = GroundPlane.of_terrain(None)
    assert not flat.inclined and np.array_equal(flat.rotation, np.eye(3))
    f = np.array([1.0, 2.0, 3.0])
    assert flat.local_force(f) is f and flat.relative_height(f) == 3.0


def test_a_terrain_that_is_not_one_plane_is_refused_by_the_plane():
    with pytest.raises(ValueError, match="is not one plane"):
        GroundPlane.of_terrain(problems.get("go1-stairs").terrain)


def test_go1_climbs_the_slope_in_mujoco_and_stands_at_its_end():
    """go1-slope under MPC: to where the plan ends, 0.3 m up the 15 deg slope, at 0.2 m/s (the terrain tasks' speed
    limit; the plan's mean speed is 0.25 m/s), then standing (the task's default duration); no fall, no body but the
    feet on the slope, the trunk its standing height above the slope and tilted with it, the stance feet on it."""
    problem = problems.get("go1-slope")
    task = mpc_task(problem)
    assert task.duration == pytest.approx(1.5 * 0.3 / 0.2 + 3.0)
    plant = task.plant()
    result = run_closed_loop(task.controller(mode="rti"), plant, task.duration, 50.0, delay="tick")
    assert not result.fell, result.fall_reason
    x = result.states[-1]
    robot = problem.robot
    climbed = x[0] - result.states[0][0]
    assert 0.8 * 0.3 < climbed < 1.2 * 0.3, climbed
    height = x[2] - problem.terrain.height(x[None, :2])[0]
    assert abs(height - robot.standing_height) < 0.02, height
    up = quat_to_rot(np.asarray(robot.base_orientation(x), dtype=float).ravel())[:, 2]
    assert np.degrees(np.arccos(up @ GroundPlane.of_terrain(problem.terrain).normal)) < 5.0  # tilted with the slope
    feet = np.asarray(robot.kinematics(x)).reshape(4, 3)
    assert np.abs(feet[:, 2] - problem.terrain.height(feet[:, :2])).max() < 0.01  # the contact spheres' centres on the slope


def test_a_slope_too_steep_for_the_feet_is_refused_before_the_loop():
    """Standing on 30 deg takes a friction ratio of tan(30 deg) = 0.577 along the slope; the horizon's pyramid
    allows mu / sqrt(2) = 0.495 at mu = 0.7: refused when the task is built, before any plant or loop."""
    with pytest.raises(ValueError, match=r"takes a friction ratio of 0.577 along the plane; the horizon's pyramid allows 0.495"):
        mpc_task(problems.get("go1-slope", angle=30.0))
    for heading in (0.0, np.pi / 2, -np.pi / 2):  # a slope along a tangent of the pyramid: tan(angle)
        assert GroundPlane.of_terrain(Slope(np.radians(20.0), heading)).holding_ratio() == pytest.approx(np.tan(np.radians(20.0)), rel=1e-14)
    assert GroundPlane().holding_ratio() == 0.0
