"""The terrain gaits (go1-slope, go1-stairs, go1-stones, go1-gap): build, bad input, drawing, MuJoCo, and (slow) solves.

CI-time tests build problems and models only. The slow tests check each
problem's solution with pinocchio and the terrain's solids
(:mod:`.terrain_checks`, thresholds of the issue), and replay it in MuJoCo on
the same terrain (:func:`trajopt.mujoco.verify.verify`); how robustly they
converge is a flagship row of ``tests/test_convergence.py``.
"""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

import problems
from models import Go1
from problems.terrain import _front_hind
from trajopt import terrain as T
from trajopt.legged import LeggedProblem, gait
from trajopt.plotting.legged import plot_foot_heights
from trajopt.plotting.terrain import ground_under_feet
from trajopt.viewer.terrain_mesh import height_grid_mesh, prism_mesh, terrain_mesh

from .solved_plans import solved

TERRAIN_PROBLEMS = ("go1-slope", "go1-stairs", "go1-stones", "go1-gap")


@pytest.mark.parametrize("name", TERRAIN_PROBLEMS)
def test_terrain_problem_builds_on_its_terrain(name):
    problem = problems.get(name)
    plan = problem.terrain_plan
    assert plan is not None and problem.terrain.flat_height != 0.0
    feet = np.asarray(problem.robot.kinematics(problem.x0), dtype=float).reshape(-1, 3)
    # x0 stands on the terrain: each foot at the terrain's height under it (numpy, the terrain's own answer)
    assert np.abs(feet[:, 2] - problem.terrain.height(feet[:, :2])).max() < 1e-6
    for st in plan.stances:
        assert st.region.margin_to_edge(st.foothold[:2])[0] >= -1e-9


def test_flat_terrain_keeps_the_flat_problem():
    """``terrain=flat(0.0)`` is the flat ground: no terrain plan, the same footholds, constraints and guess."""
    robot, schedule = Go1(), gait("trot", dt=0.02, period=0.6, cycles=1)
    plain = LeggedProblem(robot, schedule, displacement=(0.1, 0.0, 0.0))
    flat = LeggedProblem(robot, schedule, displacement=(0.1, 0.0, 0.0), terrain=T.flat(0.0))
    assert flat.terrain_plan is None
    np.testing.assert_array_equal(flat.footholds, plain.footholds)
    assert [c.name for c in flat.constraints] == [c.name for c in plain.constraints]
    for a, b in zip(flat.initial_guess(), plain.initial_guess()):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "name, params, message",
    [
        ("go1-stairs", {"rise": 0.4}, "tilts"),  # a stair taller than the leg: the body cannot stand over it
        ("go1-gap", {"width": 1.0}, "out of reach"),  # a gap too wide: the landing footholds are beyond the legs
        ("go1-stones", {"gap": 0.5}, "out of reach"),  # stones too far apart
        ("go1-slope", {"angle": 80.0}, "angle"),
        ("go1-stones", {"size": 0.0}, "size"),
    ],
)
def test_impossible_terrain_raises_a_clear_error_before_the_solve(name, params, message):
    with pytest.raises(ValueError, match=message):
        problems.get(name, **params)


@pytest.mark.parametrize("robot", ["go1", "anymal_b", "anymal_c"])
def test_the_top_tread_holds_the_whole_robot_with_room_in_front(robot):
    """Every foot's last foothold on the top tread, the front ones at least half a run from its far end: the tread is 1 m
    long, or the front-to-hind foot distance plus a run where that is longer (ANYmal C's front feet were planned past
    the end of a 1 m tread, onto the floor, and its stairs refused)."""
    problem = problems.get("stairs", robot=robot)
    top = problem.terrain.blocks[-1]
    near, far = top.vertices[:, 0].min(), top.vertices[:, 0].max()
    feet = problem.terrain_plan.footholds[-1]
    run = near - problem.terrain.blocks[-2].vertices[:, 0].min()
    standing_front, standing_hind = _front_hind(problem.robot)  # the standing feet's extent along x
    assert far - near == pytest.approx(max(1.0, 2 * run, standing_front - standing_hind + run), rel=1e-12)
    assert feet[:, 0].min() > near and far - feet[:, 0].max() >= run / 2 and np.allclose(feet[:, 2], top.top)


def test_a_swing_over_ground_above_the_hips_is_refused():
    """check_rises: a block the swing must cross, higher than the hips, named in the error."""
    from trajopt.legged.terrain_plan import check_rises, plan_on_terrain

    robot = Go1()
    schedule = gait("trot", dt=0.02, period=0.6, cycles=1)
    plan = plan_on_terrain(robot, schedule, T.stairs(rise=0.05, run=0.3, count=1, start=0.22), np.array([0.1, 0.0, 0.0]), 0.08, 0.02)
    check_rises(robot, plan, 0.02)  # 5 cm: fine
    with pytest.raises(ValueError, match="above the hips' standing height"):
        check_rises(robot, plan, robot.standing_height)


def test_terrain_mesh_prism_is_closed_and_outward():
    """A prism's mesh encloses the polygon's area times its height (divergence theorem over outward faces)."""
    V = np.array([[0.0, 0.0], [0.3, 0.0], [0.4, 0.2], [0.1, 0.3]])
    mesh = prism_mesh(V, -0.1, 0.05, (1, 1, 1, 1))
    P = mesh.vertices.astype(float)[mesh.faces.astype(int)]
    volume = np.einsum("ij,ij->i", P[:, 0], np.cross(P[:, 1], P[:, 2])).sum() / 6.0
    area = 0.5 * abs(np.dot(V[:, 0], np.roll(V[:, 1], -1)) - np.dot(V[:, 1], np.roll(V[:, 0], -1)))
    assert volume == pytest.approx(area * 0.15, rel=1e-6)


def test_terrain_mesh_follows_the_slope_and_the_height_grid():
    slope = T.Slope(np.radians(15.0))
    mesh = terrain_mesh(slope, (0.2, 0.0), 1.0)
    top = mesh.vertices.astype(float)
    top = top[np.abs(top[:, 2] - slope.height(top[:, :2])) < 1e-5]
    assert len(top) >= 4  # the slab's top face lies on the slope
    heights = np.array([[0.0, 0.1, 0.0], [0.05, 0.2, 0.0]])
    grid = T.HeightMap(heights, spacing=(0.1, 0.2), origin=(0.0, 0.0))
    surface = height_grid_mesh(grid.solids()[0])
    np.testing.assert_allclose(surface.vertices[:, 2], heights.ravel(), atol=1e-7)
    np.testing.assert_allclose(grid.height(surface.vertices[:, :2].astype(float)), heights.ravel(), atol=1e-6)


def test_foot_height_plot_draws_the_terrain_under_the_feet():
    stairs = T.stairs(rise=0.08, run=0.25, count=3, start=0.2)
    t = np.linspace(0.0, 1.0, 11)
    feet = np.zeros((11, 2, 3))
    feet[:, :, 0] = np.linspace(0.01, 0.91, 11)[:, None]  # 1 cm or more from every edge
    ground = ground_under_feet(stairs, feet)
    np.testing.assert_allclose(ground[:, 0], 0.08 * np.clip(np.floor((feet[:, 0, 0] - 0.2) / 0.25) + 1, 0, 3))
    fig = plot_foot_heights(t, feet, np.ones((11, 2), bool), ["a", "b"], terrain=stairs)
    drawn = fig.axes[0].lines[0].get_ydata()
    np.testing.assert_allclose(drawn, ground[:, 0])


@pytest.mark.parametrize("name, params", [("go1-stairs", {}), ("stones", {"robot": "anymal_c"})], ids=["go1", "anymal_c"])
def test_mujoco_builds_the_terrain_under_the_planned_feet(name, params):
    """The terrain's solids in MuJoCo: each foot sphere of x0 touches them (mj_geomDistance ~ 0), no link does.
    ANYmal C's shank cover lies wholly within FOOT_CLEARANCE of its foot: cut back to nothing, it is left out
    (MuJoCo refused the model's negative size before)."""
    mujoco = pytest.importorskip("mujoco")
    from trajopt.mujoco.model import build_model
    from trajopt.mujoco.terrain import terrain_distance

    problem = problems.get(name, **params)
    robot = build_model(problem.robot, terrain=problem.terrain)
    assert len(robot.terrain_geoms) == len(robot.link_terrain_geoms) == len(problem.terrain.solids()) and len(robot.body_geoms) > 0
    data = mujoco.MjData(robot.model)
    robot.set_state(data, problem.x0)
    mujoco.mj_kinematics(robot.model, data)
    for geom in robot.contact_geoms:
        gap = min(mujoco.mj_geomDistance(robot.model, data, int(geom), int(t), 0.1, None) for t in robot.terrain_geoms)
        assert abs(gap) < 1e-6
    assert terrain_distance(robot.model, data, robot.body_geoms, robot.link_terrain_geoms)[0] > 0.01


# ---------------------------------------------------------------------------------------------- slow: solves


@pytest.mark.slow
@pytest.mark.parametrize("name", TERRAIN_PROBLEMS)
def test_terrain_solution_meets_the_acceptance_in_pinocchio(name):
    from .terrain_checks import SURFACE_TOL, terrain_acceptance

    solution = solved(name)
    problem = solution.problem
    worst = terrain_acceptance(problem, solution, samples=10)
    assert worst["surface"] <= SURFACE_TOL, worst
    assert worst["slip"] <= 1e-6, worst
    assert worst["friction"] <= 1e-6, worst
    assert worst["swing_force"] <= 1e-6, worst
    assert worst["torque_ratio"] <= 1.0 + 1e-6, worst
    assert worst["dynamics"] <= 1e-6, worst
    assert worst["clearance_deficit"] <= 1e-6, worst
    assert worst["min_clearance_mid_swing"] >= problem.clearance - 1e-6, worst


@pytest.mark.slow
def test_gap_plan_keeps_its_shanks_above_the_terrain_and_lands_at_rest():
    """go1-gap under pinocchio's kinematics: every shank point at every knot after the first at or above its
    leg's envelope (numpy), and the plan ends still (velocities and accelerations). Tolerance 1e-7: IPOPT's constraint tolerance."""
    from trajopt.legged.link_clearance import leg_profiles

    from .terrain_checks import pinocchio_shanks

    solution = solved("go1-gap")
    problem = solution.problem
    X = np.asarray(solution.states)
    profiles = leg_profiles(problem)
    heights = [P[:, 2] - profiles[k][i].envelope(P[:, :2]) for k in range(1, problem.N) for i, P in enumerate(pinocchio_shanks(problem.robot, X[k]))]
    assert min(h.min() for h in heights) >= problem.link_clearance - 1e-7
    assert np.abs(X[-1, problem.robot.nq :]).max() <= 1e-7
    assert np.abs(solution.controls[-1, problem.contact_model.a_slice]).max() <= 1e-7


@pytest.mark.slow
@pytest.mark.parametrize("name", TERRAIN_PROBLEMS)
def test_terrain_plan_replays_in_mujoco_on_its_terrain(name):
    pytest.importorskip("mujoco")
    from trajopt.mujoco.verify import verify

    from trajopt.mujoco import track

    solution = solved(name)
    report = verify(solution)
    assert report.ok, report.summary()  # EOM residual, contacts, limits, no fall, no link on the terrain
    assert report.collision_free, report.summary()
    # the matched-contact replay tracked by the time-varying LQR on MuJoCo's linearization within 2 cm / 3 deg
    # (verify's PD replay is reported: it drifts 57 mm / 2.6 deg over go1-stairs' 2.4 s, README)
    lqr = track(solution, "lqr")
    assert not lqr.fell and not lqr.terrain_contacts, lqr.summary()
    assert lqr.max_position_error <= 0.02 and np.degrees(lqr.max_orientation_error) <= 3.0, lqr.summary()


@pytest.mark.slow
def test_a_gap_the_checks_pass_but_the_solver_cannot_jump_ends_with_a_status():
    """Never a CasADi exception: a wide gap the checks let through returns a solution with its status."""
    from trajopt import solve

    solution = solve(problems.get("go1-gap", width=0.6), options={"max_iter": 60})
    assert isinstance(solution.status, str) and solution.status
    assert solution.success or "Maximum" in solution.status or "Infeasible" in solution.status or "Restoration" in solution.status


@pytest.mark.slow
@pytest.mark.browser
def test_viewer_draws_the_terrain_in_chromium(tmp_path):
    """The stairs plan in headless Chromium: the page with the terrain differs from the same page without it
    over many pixels. ``TRAJOPT_README_TERRAIN_SCREENSHOT=docs/go1_stairs.png`` keeps the picture (the README's)."""
    import os
    import shutil

    from trajopt.viewer import solution_scene
    from trajopt.viewer.html import page, write_page
    from trajopt.viewer.meshcat_scene import ROOT, scene_commands

    from .viewer_helpers import central, changed, screenshot

    solution = solved("go1-stairs")
    scene = solution_scene(solution)
    commands = scene_commands(scene)
    bare = [c for c in commands if not (c["type"] == "set_object" and c["path"] == f"{ROOT}/terrain")]
    assert len(bare) == len(commands) - 1
    t = 0.55 * solution.tf
    shots = []
    for name, cmds in (("stairs", commands), ("stairs_bare", bare)):
        html = write_page(page(cmds, scene.title, scene.duration, scene.arrows.label), tmp_path / f"{name}.html", overwrite=True)
        shots.append(screenshot(f"{html.as_uri()}#t={t}", tmp_path / f"{name}.png"))
    assert central(changed(*shots)).mean() > 0.05
    keep = os.environ.get("TRAJOPT_README_TERRAIN_SCREENSHOT")
    if keep:
        shutil.copy(tmp_path / "stairs.png", keep)


def test_terrain_guide_snippet_builds_the_stairs_problem():
    import re
    from pathlib import Path

    guide = Path(__file__).resolve().parents[1] / "docs" / "guide" / "terrain.md"
    blocks = re.findall(r"```python\n(.*?)```", guide.read_text(), flags=re.S)
    snippet = next(b for b in blocks if "terrain.stairs" in b)
    namespace: dict = {}
    exec(compile(snippet, str(guide), "exec"), namespace)
    problem = namespace["problem"]
    assert problem.terrain_plan is not None
    assert {st.region.name for st in problem.terrain_plan.stances} >= {"floor", "step 1", "step 2"}
