"""The receding horizon over foot regions (trajopt.mpc.terrain_ground): the trunk's plane against a direct least-squares
fit, footholds inside the regions, the swing's envelope rows against the terrain's own profile, the per-tick data of
go1-stairs, the walk to the plan's end, bad input; go1-stairs climbed in MuJoCo."""
from __future__ import annotations

import numpy as np
import pytest

import problems
from trajopt.legged.terrain_plan import base_rotation, fit_plane
from trajopt.mpc.footholds_taken import Foothold, footholds_taken, off_the_regions
from trajopt.mpc.commands import Command
from trajopt.mpc.gaits import GaitSchedule
from trajopt.mpc.legged import LeggedMPC
from trajopt.mpc.loop import run_closed_loop
from trajopt.mpc.plan_tracking import PlanTrackingMPC
from tests.test_mpc_closed_loop import run_cli
from trajopt.mpc.tasks import PLAN_STANDING_TIME, PLAN_WAIT, STONES_PYRAMID, follows_its_plan, mpc_task, requires_its_plan
from trajopt.mpc.terrain_ground import CACHE_RESOLUTION, FOOTHOLD_MARGIN, PROFILE_STEPS, TerrainGround
from trajopt.terrain import HeightMap, boxes, stairs, stone_lanes
from trajopt.terrain.profile import clearance

STAIRS = stairs(rise=0.08, run=0.25, count=3, start=0.25)


def ground_of(terrain):
    return TerrainGround.for_robot(terrain, problems.get("go1-stairs").robot, 0.02)


def test_the_base_rotation_stands_on_the_normal_and_faces_the_heading():
    """``base_rotation``: a rotation (orthonormal, det 1) whose z axis is the normal and whose x axis is the heading
    projected onto the plane along the normal (in the plane of the heading and the normal, facing the heading); for K
    normals or headings the K rotations of one call each."""
    rng = np.random.default_rng(1)
    normals = np.c_[rng.uniform(-0.3, 0.3, (20, 2)), np.ones(20)]
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    headings = rng.uniform(-np.pi, np.pi, 20)
    rotations = base_rotation(normals, headings)
    for n, psi, R in zip(normals, headings, rotations):
        np.testing.assert_allclose(R.T @ R, np.eye(3), rtol=0, atol=1e-14)
        assert np.linalg.det(R) == pytest.approx(1.0, abs=1e-14)
        np.testing.assert_allclose(R[:, 2], n, rtol=0, atol=1e-15)
        heading = np.array([np.cos(psi), np.sin(psi), 0.0])
        assert abs(R[:, 0] @ np.cross(heading, n)) < 1e-14 and R[:, 0] @ heading > 0
        np.testing.assert_array_equal(base_rotation(n, psi), R)
    np.testing.assert_array_equal(base_rotation(normals[0], headings), np.array([base_rotation(normals[0], psi) for psi in headings]))


def test_the_trunks_plane_is_the_least_squares_fit_through_the_terrain_under_the_hips():
    ground = ground_of(STAIRS)
    rng = np.random.default_rng(0)
    xy, headings = rng.uniform([-0.2, -0.3], [1.2, 0.3], (30, 2)), rng.uniform(-0.5, 0.5, 30)
    heights, rotations = ground.base_frames(xy, headings)
    for p, psi, h, R in zip(xy, headings, heights, rotations):
        c, s = np.cos(psi), np.sin(psi)
        hips = p + ground.hips @ np.array([[c, -s], [s, c]]).T
        along = np.linspace(-ground.span, ground.span, 9)
        z = [STAIRS.height(hip + np.outer(along, [c, s])).mean() for hip in hips]
        c0, gx, gy = fit_plane(np.c_[hips, z])
        normal = np.array([-gx, -gy, 1.0]) / np.sqrt(1 + gx * gx + gy * gy)
        assert h == pytest.approx(c0 + gx * p[0] + gy * p[1], abs=1e-12)
        np.testing.assert_allclose(R, base_rotation(normal, psi), rtol=0, atol=1e-12)
    flat = ground.base_frames(np.array([[-1.0, 0.0]]), np.zeros(1))
    assert flat[0][0] == 0.0 and np.allclose(flat[1][0], np.eye(3), atol=1e-15)  # before the stairs: level, on the floor


def test_footholds_lie_inside_the_foot_regions_away_from_the_edges():
    ground = ground_of(STAIRS)
    inside = ground.foothold(np.array([0.37, 0.1]), 0.002)  # mid-tread: where it was aimed, on the tread
    np.testing.assert_allclose(inside, [0.37, 0.1, 0.082], atol=1e-15)
    for x in np.linspace(0.2, 0.9, 50):
        hold = ground.foothold(np.array([x, 0.0]), 0.0)
        region = STAIRS.region_at(hold[:2], 0.0)
        assert region.contains(hold[:2], FOOTHOLD_MARGIN - 1e-9)[0], (x, hold)  # the treads are 25 cm deep: the full margin fits
        assert hold[2] == pytest.approx(float(region.height(hold[:2])[0]), abs=1e-15)
        assert abs(hold[0] - x) <= FOOTHOLD_MARGIN + 1e-9  # the nearest such point: moved by at most the margin
    near_edge = ground.foothold(np.array([0.26, 0.0]), 0.0)  # 1 cm onto the first tread: onto the tread, the margin in
    assert near_edge[0] == pytest.approx(0.25 + FOOTHOLD_MARGIN) and near_edge[2] == pytest.approx(0.08)
    between = np.array([0.49, 0.0])  # 1 cm before the second edge: back onto the first tread, unless the reference's target is past it
    assert ground.foothold(between, 0.0)[0] == pytest.approx(0.5 - FOOTHOLD_MARGIN)
    assert ground.foothold(between, 0.0, toward=np.array([0.52, 0.0]))[0] == pytest.approx(0.5 + FOOTHOLD_MARGIN)
    assert ground.foothold(np.array([0.37, 0.0]), 0.0, toward=np.array([0.6, 0.0]))[0] == 0.37  # well inside a tread: kept


def test_a_region_too_small_for_the_margin_gets_a_smaller_one():
    crate = boxes([((0.4, 0.1), (0.1, 0.1), 0.05)])  # a 10 cm square box, 5 cm high
    ground = ground_of(crate)
    hold = ground.foothold(np.array([0.47, 0.1]), 0.0, toward=np.array([0.44, 0.1]))  # 2 cm past the box; the reference's target on it
    assert hold[0] == pytest.approx(0.45 - 0.5 * FOOTHOLD_MARGIN) and hold[2] == 0.05  # 10 cm: 3.5 cm from its edges


def test_over_stepping_stones_the_horizon_follows_the_plan():
    """Footholds chosen one landing at a time are refused where the floor gives no footing; the stones' task follows
    the solved plan instead (its footholds chosen for the whole crossing), in MuJoCo on the stones."""
    lanes = stone_lanes([-0.13, 0.13], size=0.1, gap=0.1, first=-0.45, count=7, depth=0.3)
    with pytest.raises(ValueError, match="gives footing on its blocks only"):
        ground_of(lanes)
    problem = problems.get("go1-stones")
    assert follows_its_plan(problem) and follows_its_plan(problems.get("go1-jump"))
    task = mpc_task(problem)
    assert isinstance(task.legged, PlanTrackingMPC) and task.terrain is problem.terrain and task.name == "go1-stones-mpc"
    assert task.duration == pytest.approx(PLAN_WAIT + task.legged.plan.tf + PLAN_STANDING_TIME)
    np.testing.assert_allclose(task.reference(np.array([0.0, task.duration])), task.legged.plan.states[[0, -1]], rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="our KKT plant has flat ground only"):
        task.plant(sim="own")
    mu = problem.robot.mu  # over the stones the horizon's pyramid is inside MuJoCo's pyramidal cone too; a jump keeps the gaits'
    assert task.legged.pyramid_coefficient == pytest.approx(STONES_PYRAMID * mu, rel=1e-15)
    assert mpc_task(problems.get("go1-jump")).legged.pyramid_coefficient == pytest.approx(mu / np.sqrt(2.0), rel=1e-15)


@pytest.mark.parametrize("name, params", [("go1-stones", {}), ("stones", {"robot": "solo12"})], ids=["go1", "solo12"])
def test_a_quadruped_crosses_the_stepping_stones_in_mujoco_and_stands_on_the_last_ones(name, params):
    """go1-stones and Solo12's stones under MPC from their default task: no fall (no link but a foot touching the
    stones), every foothold taken on a stone, every foot over the stone of its plan's last foothold at the end. Solo12
    crosses with the horizon's pyramid at mu / 2; at mu / sqrt(2) a stance foot slid off its stone at 0.66 s."""
    pytest.importorskip("mujoco")
    problem = problems.get(name, **params)
    task = mpc_task(problem)
    result = run_closed_loop(task.controller(mode="rti"), task.plant(), task.duration, 50.0, delay="tick")
    assert not result.fell, result.fall_reason
    taken = footholds_taken(result, problem.robot)
    assert len(taken) >= 12 and not off_the_regions(taken, problem.terrain)
    feet = np.asarray(problem.robot.kinematics(result.states[-1])).reshape(4, 3)
    last = task.legged.plan_feet[-1]
    for foot, planned in zip(feet, last):
        stone = problem.terrain.region_at(planned[:2], 0.0)
        assert stone.contains(foot[:2])[0] and abs(foot[2]) < 0.01


def test_the_landing_box_holds_the_foot_near_its_foothold_and_in_its_region():
    ground = ground_of(STAIRS)
    tol, margin = ground.landing_tolerance, STAIRS.margin
    np.testing.assert_allclose(ground.foothold_box(np.array([0.4, 0.05, 0.08])), [0.4 - tol, 0.4 + tol, 0.05 - tol, 0.05 + tol], atol=1e-15)
    near_edge = ground.foothold_box(np.array([0.32, 0.53, 0.08]))  # the tread's margin cuts the box: behind, and at the side
    np.testing.assert_allclose(near_edge, [0.25 + margin - 1e-3, 0.32 + tol, 0.53 - tol, 0.6 - margin + 1e-3], atol=1e-12)


def test_the_swings_rows_are_the_terrains_own_envelope():
    ground = ground_of(STAIRS)
    start, end = np.array([0.15, 0.1, 0.0]), np.array([0.37, 0.12, 0.08])
    params = ground.swing_params(start, end)
    profile = STAIRS.swing_profile(start[:2], end[:2], half_width=ground.corridor)
    np.testing.assert_array_equal(params, profile.params(PROFILE_STEPS))
    points = np.c_[np.linspace(0.15, 0.37, 12), np.linspace(0.1, 0.12, 12), np.linspace(0.0, 0.2, 12)]
    np.testing.assert_allclose([ground.clearance_row(params, p) for p in points], profile.clearance(points), rtol=0, atol=1e-15)
    np.testing.assert_allclose([float(clearance(params, p, PROFILE_STEPS, STAIRS.ramp)) for p in points], profile.clearance(points), rtol=0, atol=1e-15)
    assert params[7] < 0.25 and params[8] == pytest.approx(0.08)  # one step up, its ramp starting before the edge
    near = ground.swing_params(start, end + [0.4 * CACHE_RESOLUTION, 0.0, 0.0])
    assert near is params  # a target that moved less than the cache's resolution shares the envelope
    required = ground.required_clearance(np.array([0.0, 0.1, 0.2, 0.5, 0.9, 1.0]))
    np.testing.assert_allclose(required, [0.0, 0.01, 0.02, 0.02, 0.01, 0.0], atol=1e-15)


def test_the_stance_feet_height_estimate_ignores_a_foot_off_the_terrain():
    ground = ground_of(STAIRS)
    feet = np.array([[0.0, 0.1, -0.004], [0.4, 0.1, 0.076], [0.3, -0.1, 0.0], [-0.2, -0.1, 0.0]])
    feet[2, 2] = -0.2  # in no region's reach: dropped
    assert ground.offset_of(feet) == pytest.approx(np.mean([-0.004, -0.004, 0.0]), abs=1e-15)
    assert ground.offset_of(feet[2:3]) == 0.0


def test_a_stairs_tick_aims_its_landings_at_the_treads():
    """One update of go1-stairs' horizon while the first swing is under way: the touchdown rows hold each landing foot at
    its foothold's tread height plus the stance feet's offset, the landing boxes hold it in its tread at its touchdown
    knot only, and the swing clearance rows are bounded only where the envelope rises above the lift-off's level."""
    task = mpc_task(problems.get("go1-stairs"), follow_plan=False)
    legged, x = task.legged, task.x0.copy()
    legged.start(0.0, x)
    legged.update(task.problem, 0.36, x)
    touchdown = np.isfinite(legged.touchdown_heights)
    assert touchdown.any()
    boxes = np.isfinite(legged.foothold_box.lower)
    np.testing.assert_array_equal(boxes, np.repeat(touchdown, 2, axis=1))
    for j, i in zip(*np.nonzero(touchdown)):
        hold = legged.planned_footholds[next(key for key in sorted(legged.planned_footholds) if key[0] == i and key[1] > 0.36)]
        assert legged.touchdown_heights[j, i] == pytest.approx(hold[2], abs=1e-15)
        assert legged.foothold_box.lower[j, 2 * i] <= hold[0] <= legged.foothold_box.upper[j, 2 * i]
        assert task.terrain.region_at(hold[:2], 0.0).contains(hold[:2], FOOTHOLD_MARGIN - 1e-9)[0]
    bounded = np.isfinite(legged.swing_clearance.lower)
    assert not bounded[:2].any()  # knots 1 and 2 are left free
    assert bounded.any()  # the front foot swinging up the first step
    assert not np.isfinite(legged.swing_clearance.lower[:, 2:]).any()  # the hind feet swing on the floor: no edge to clear


def test_the_flat_ground_gets_no_terrain_rows():
    task = mpc_task(problems.get("go1-trot"))
    names = [c.name for c in task.problem.constraints]
    assert names == ["friction pyramid", "touchdown on the ground", "touchdown at rest"]
    assert task.legged.goal is None and task.legged.foothold_box is None and task.legged.swing_clearance is None


def test_a_horizon_that_never_lifts_a_foot_has_no_touchdown_rows():
    """Standing, they would be free rows in every QP, and HPIPM's iterations cost more with every row, bounded or not."""
    robot = problems.get("go1-trot").robot
    standing = LeggedMPC(robot, "stand")
    assert [c.name for c in standing.problem.constraints] == ["friction pyramid"] and standing.touchdown is None
    standing.update(standing.problem, 0.5, robot.init_state())  # the update has no rows to bound
    later = LeggedMPC(robot, GaitSchedule.parse("0:stand,2:trot"))
    assert [c.name for c in later.problem.constraints] == ["friction pyramid", "touchdown on the ground", "touchdown at rest"]


def test_the_reference_walks_to_the_goal_and_stops_there():
    robot = problems.get("go1-trot").robot
    legged = LeggedMPC(robot, "trot", commands=Command(0.3, 0.0, 0.0), goal=(0.5, 0.2))
    x = robot.init_state()
    legged.start(0.0, x)
    for k in range(1, 400):  # the base following the reference exactly
        legged._advance_reference(0.02 * k, x)
        x = x.copy()
        x[:2] = legged._p_ref
    np.testing.assert_allclose(legged._p_ref, [0.5, 0.2], atol=2e-3)
    assert np.abs(legged._v_ref[:2]).max() < 0.02
    standing = LeggedMPC(robot, GaitSchedule([(0.0, "stand"), (1.0, "trot")]), commands=Command(0.3, 0.0, 0.0), goal=(0.5, 0.0))
    standing.start(0.0, robot.init_state())
    standing._advance_reference(0.5, robot.init_state())
    assert np.all(standing._v_ref == 0.0)  # no walking while the gait stands


def test_go1_stairs_task_walks_to_the_plans_end():
    problem = problems.get("go1-stairs")
    task = mpc_task(problem, follow_plan=False)
    np.testing.assert_allclose(task.legged.goal, problem.target_base_position[:2], atol=0)
    assert task.name == "go1-stairs-mpc" and task.terrain is problem.terrain
    assert task.legged.commands.at(0.0).vx == pytest.approx(0.2)
    assert task.duration == pytest.approx(1.5 * np.linalg.norm(problem.target_base_position[:2] - problem.x0[:2]) / 0.2 + 3.0)


def test_what_the_horizon_cannot_walk_is_refused_in_one_line():
    with pytest.raises(ValueError, match=r"has the gait 'pronk'; the receding horizon runs"):
        mpc_task(problems.get("pronk"))
    with pytest.raises(ValueError, match="expected a BlockTerrain"):
        TerrainGround(HeightMap(np.zeros((3, 3)), 0.1), np.zeros((4, 2)), 0.02)
    with pytest.raises(ValueError, match="^terrain: "):  # stairs the legs cannot climb: refused with the problem, before any loop
        mpc_task(problems.get("go1-stairs", rise=0.3))


def test_go1_climbs_the_stairs_in_mujoco_and_stands_on_the_top_tread():
    """go1-stairs under the generated gait's horizon, which reads the terrain itself (``follow_plan=False``; the default
    task follows the plan): no fall (no link but a foot touching the stairs), every foothold taken on a tread, all four
    feet over the top tread at the end."""
    problem = problems.get("go1-stairs")
    task = mpc_task(problem, follow_plan=False)
    result = run_closed_loop(task.controller(mode="rti"), task.plant(), task.duration, 50.0, delay="tick")
    assert not result.fell, result.fall_reason
    taken = footholds_taken(result, problem.robot)
    assert len(taken) > 40 and not off_the_regions(taken, problem.terrain)
    feet = np.asarray(problem.robot.kinematics(result.states[-1])).reshape(4, 3)
    assert (feet[:, 0] > 0.25 + 2 * 0.25).all() and (feet[:, 2] > 0.24 - 0.03).all()  # past the last edge, on the top


def test_which_horizon_a_legged_task_gets_follows_the_follow_plan_choice():
    """``follow_plan``: ``None`` lets :func:`follows_its_plan` decide (on stairs: the plan, for any point-footed
    robot), ``False`` is refused for the problems that run only by following their plans (before any solve), and both
    are refused for a problem that is not legged."""
    anymal = problems.get("stairs", robot="anymal_b")
    assert anymal.robot.knee_directions(anymal.robot.init_state()) == ("backward", "backward", "forward", "forward")
    assert follows_its_plan(anymal) and not requires_its_plan(anymal)
    assert follows_its_plan(problems.get("stairs", robot="solo12")) and follows_its_plan(problems.get("go1-stairs"))
    assert not follows_its_plan(problems.get("trot", robot="anymal_b")) and not follows_its_plan(problems.get("go1-slope"))
    assert requires_its_plan(problems.get("go1-stones")) and requires_its_plan(problems.get("go1-jump")) and not requires_its_plan(problems.get("go1-stairs"))
    assert isinstance(mpc_task(anymal, follow_plan=False).legged, LeggedMPC)
    assert isinstance(mpc_task(problems.get("go1-stairs"), follow_plan=False).legged, LeggedMPC)
    for name, kind in (("go1-stones", "trot over stepping stones"), ("go1-jump", "jump")):
        with pytest.raises(ValueError, match=rf"^follow_plan: '{name}' \({kind}\) runs only by following its solved plan$"):
            mpc_task(problems.get(name), follow_plan=False)
    for choice in (True, False):
        with pytest.raises(ValueError, match="^follow_plan: a legged robot's horizon .* 'quadrotor' is not legged$"):
            mpc_task(problems.get("quadrotor"), follow_plan=choice)
    with pytest.raises(ValueError, match="^follow_plan: the plan-following horizon is for point-footed robots; 'humanoid-walk' stands on soles"):
        mpc_task(problems.get("humanoid-walk"), follow_plan=True)
    with pytest.raises(ValueError, match="^follow_plan: expected True, False or None, got 'yes'$"):
        mpc_task(anymal, follow_plan="yes")
    out = run_cli("go1-stairs", "--follow-plan", "--vx", "0.3", "--duration", "0.1")
    assert out.returncode == 2 and "runs its offline plan (trot) under feedback; it takes no velocity commands" in out.stderr
    # commands on the stairs, whose default is the plan: refused before the plan's solve, naming the horizon that takes them
    with pytest.raises(ValueError, match=r"it takes no velocity commands, gaits or controller robot; follow_plan=False \(--no-follow-plan\) generates its gait"):
        mpc_task(problems.get("go1-stairs"), commands=Command(0.3, 0.0, 0.0))
    with pytest.raises(ValueError, match=r"it takes no velocity commands, gaits or controller robot$"):  # a jump has no other horizon
        mpc_task(problems.get("go1-jump"), commands=Command(0.3, 0.0, 0.0))
    assert isinstance(mpc_task(problems.get("go1-stairs"), commands=Command(0.3, 0.0, 0.0), follow_plan=False).legged, LeggedMPC)


@pytest.mark.parametrize("robot", ["anymal_b", "solo12"])
def test_a_quadruped_climbs_the_stairs_following_its_plan_in_mujoco(robot):
    """The stairs from the default task, which follows the plan: no fall (no link but a foot touching the stairs), every
    foothold taken on a tread, every foot on the region of its plan's last foothold at the end. Under the generated
    gait ANYmal B put a hind knee on the first riser (4.2 s) and Solo12's base crept until it fell (2.7 s); following
    the plan with its last state (moving at 0.55 m/s) as the reference past its end, Solo12 slid off the top tread
    (3.6 s; docs/design/mpc.md)."""
    pytest.importorskip("mujoco")
    problem = problems.get("stairs", robot=robot)
    task = mpc_task(problem)
    assert isinstance(task.legged, PlanTrackingMPC) and task.terrain is problem.terrain
    result = run_closed_loop(task.controller(mode="rti"), task.plant(), task.duration, 50.0, delay="tick")
    assert not result.fell, result.fall_reason
    taken = footholds_taken(result, problem.robot)
    assert len(taken) >= 20 and not off_the_regions(taken, problem.terrain)
    feet = np.asarray(problem.robot.kinematics(result.states[-1])).reshape(4, 3)
    for foot, planned in zip(feet, problem.terrain_plan.footholds[-1]):
        region = problem.terrain.region_at(planned[:2], 0.0)
        assert region.contains(foot[:2])[0] and abs(foot[2] - planned[2]) < 0.01


def test_footholds_taken_are_the_feet_at_the_middle_of_their_stance_phases():
    from types import SimpleNamespace

    robot = problems.get("go1-stairs").robot
    x = robot.init_state()
    states = []
    for k in range(6):
        s = x.copy()
        s[0] = 0.1 * k  # the whole robot moved forward, so each tick's feet differ
        states.append(s)
    masks = np.ones((6, 4))
    masks[2:4, 0] = 0.0  # foot 0 swings at ticks 2 and 3
    log = [SimpleNamespace(t=0.02 * k, params=masks[k], state=states[k]) for k in range(6)]
    taken = footholds_taken(SimpleNamespace(log=log), robot)
    foot0 = [f for f in taken if f.foot == 0]
    assert [(f.t0, f.t1) for f in foot0] == [(0.0, 0.02), (0.08, 0.1)]
    np.testing.assert_allclose(foot0[1].position, np.asarray(robot.kinematics(states[4])).reshape(4, 3)[0], atol=0)
    assert len(taken) == 5  # the other feet stand throughout
    on_riser = [Foothold(0, 0.0, 0.1, np.array([0.25, 0.1, 0.0]))]  # at the first edge, at the floor's height: the step's top is 8 cm up
    assert off_the_regions(on_riser, STAIRS) == on_riser
    assert off_the_regions([Foothold(0, 0.0, 0.1, np.array([0.37, 0.1, 0.075]))], STAIRS) == []


def test_a_swing_over_many_short_treads_keeps_the_edges_it_crosses():
    """Treads of 8 cm: the profile's window (30 cm before and after the swing) holds more rises than the rows; those
    behind the lift-off are folded into its level, those past the foothold dropped, and the envelope along the swing
    itself is the terrain's own."""
    short = stairs(rise=0.03, run=0.08, count=8, start=0.25)
    ground = ground_of(short)
    start, end = np.array([0.46, 0.0, 0.09]), np.array([0.6, 0.0, 0.15])
    profile = short.swing_profile(start[:2], end[:2], half_width=ground.corridor)
    assert len(profile.steps) > PROFILE_STEPS
    params = ground.swing_params(start, end)
    along = np.c_[np.linspace(0.44, 0.62, 40), np.zeros(40), np.full(40, 0.3)]
    np.testing.assert_allclose([ground.clearance_row(params, p) for p in along], profile.clearance(along), rtol=0, atol=1e-12)


def test_the_top_view_draws_each_tread_with_its_edges_and_height():
    import matplotlib.pyplot as plt

    from trajopt.plotting.mpc import _draw_blocks

    terrain = stairs(rise=0.08, run=0.25, count=3, start=0.3)
    figure, ax = plt.subplots()
    _draw_blocks(ax, terrain)
    outlines = [patch.get_xy() for patch in ax.patches]
    assert len(outlines) == len(terrain.blocks) == 3
    for outline, block in zip(outlines, terrain.blocks):  # each outline is its block's top polygon
        assert np.allclose(outline[: len(block.vertices)], block.vertices, rtol=0, atol=1e-12)
    assert [t.get_text() for t in ax.texts] == ["0.08 m", "0.16 m", "0.24 m"]
    _draw_blocks(ax, None)  # a plane: nothing more
    assert len(ax.patches) == 3
    plt.close(figure)


def test_the_closed_loop_plot_over_stairs_has_a_side_view_of_the_treads():
    """A short loop of go1-stairs in MuJoCo (0.2 s, uncompiled): its figure gains a side view whose ground profile is
    the terrain's height along x, under the measured base path and the footholds taken and planned at their heights;
    the flat trot's figure has none. Its tick panel draws each whole tick (preparation and feedback) and its feedback."""
    pytest.importorskip("mujoco")
    import matplotlib

    matplotlib.use("Agg")
    from trajopt.plotting.mpc import plot_closed_loop

    problem = problems.get("go1-stairs")
    task = mpc_task(problem)
    result = run_closed_loop(task.controller(mode="rti", compile=False), task.plant(), 0.2, 50.0, delay="tick")
    figure = plot_closed_loop(result, task)
    side = next(ax for ax in figure.axes if ax.get_ylabel() == "z [m]")
    assert len(figure.axes) == 7
    profile = next(line for line in side.lines if line.get_label().startswith("terrain at y"))
    x, z = profile.get_xdata(), profile.get_ydata()
    y = float(profile.get_label().split("=")[1].split()[0])
    np.testing.assert_allclose(z, problem.terrain.height(np.c_[x, np.full_like(x, y)]), rtol=0, atol=1e-12)
    base = next(line for line in side.lines if line.get_label() == "base")
    np.testing.assert_allclose(np.c_[base.get_xdata(), base.get_ydata()], result.states[:, [0, 2]], rtol=0, atol=1e-12)
    planned = np.array([p for p in task.legged.planned_footholds.values()])
    crosses = np.concatenate([np.c_[line.get_xdata(), line.get_ydata()] for line in side.lines if line.get_marker() == "x"])
    assert len(planned) and sorted(map(tuple, crosses)) == sorted(map(tuple, planned[:, [0, 2]]))
    ticks = next(ax for ax in figure.axes if ax.get_ylabel() == "tick [ms]")
    lines = {line.get_label(): line.get_ydata() for line in ticks.lines}
    np.testing.assert_allclose(lines["tick (preparation + feedback)"], [1e3 * (r.preparation_time + r.compute_time) for r in result.log[1:]], rtol=1e-12)
    np.testing.assert_allclose(lines["feedback"], [1e3 * r.compute_time for r in result.log[1:]], rtol=1e-12)
    flat = mpc_task(problems.get("go1-trot"))
    assert len(plot_closed_loop(run_closed_loop(flat.controller(mode="rti", compile=False), flat.plant(), 0.04, 50.0, delay="tick"), flat).axes) == 6
