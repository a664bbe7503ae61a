"""Viewer and plots of issue 27: the classic models in 3D, collision witness points of a capsule simulation.

Oracles: pinocchio's frame placements of the matching pinocchio models (:mod:`models.pinocchio_builders`)
for the pendulums and cartpoles, coal's nearest points (``pinocchio.computeDistances`` on the hand's
geometry model) for the witness points; headless Chromium for what the 3D page shows.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from PIL import Image

import problems
from examples.hand_contact import run as hand_closing
from models import pinocchio_builders as builders
from trajopt import solve
from trajopt.cli import main
from trajopt.plotting.contact import animate_contact_simulation, plot_contact_simulation
from trajopt.viewer import check_viewable, contact_simulation_scene, export_html, solution_scene
from trajopt.viewer.contact_scene import sample_steps
from trajopt.viewer.meshcat_scene import ROOT, scene_commands

from .viewer_helpers import WINDOW, screenshot

pytest.importorskip("umsgpack")

#: problem -> (pinocchio model of the same chain, where each point mass is: ("joint", id) or ("frame", name))
CLASSIC = {
    "pendulum": (builders.pendulum_model(), [("frame", "tip")]),
    "acrobot": (builders.double_pendulum_model(), [("joint", 2), ("frame", "tip")]),
    "cartpole": (builders.cartpole_model(), [("joint", 1), ("frame", "tip")]),
    "double-cartpole": (builders.double_cartpole_model(), [("joint", 1), ("joint", 3), ("frame", "tip")]),
}


@pytest.mark.parametrize("name", sorted(CLASSIC))
def test_classic_models_are_drawn_where_pinocchio_puts_them(name):
    problem = problems.get(name, N=11)
    check_viewable(problem)  # refused before issue 27
    solution = solve(problem, options={"max_iter": 0})  # the initial guess: a motion from hanging to upright
    scene = solution_scene(solution)
    X, _ = solution.evaluate(scene.times)
    pin_model, places = CLASSIC[name]
    data = pin_model.createData()
    bodies = {b.name: b for b in scene.bodies}
    model = problem.model
    for k, x in enumerate(X):
        pin.framesForwardKinematics(pin_model, data, x[: model.nv])
        expected = [data.oMi[i].translation if kind == "joint" else data.oMf[pin_model.getFrameId(i)].translation for kind, i in places]
        drawn = [bodies[f"mass_{j + 1}"].poses[k, :3, 3] for j in range(len(model.masses))]
        np.testing.assert_allclose(drawn[len(drawn) - len(expected) :], expected, atol=1e-12)
        chain = model.chain_points(x[: model.nv])
        for i in range(len(chain) - 1):  # each rod from one chain point to the next
            pose = bodies[f"link_{i + 1}"].poses[k]
            d = chain[i + 1] - chain[i]
            np.testing.assert_allclose(pose[:3, 3], 0.5 * (chain[i] + chain[i + 1]), atol=1e-12)
            np.testing.assert_allclose(pose[:3, 2], d / np.linalg.norm(d), atol=1e-12)
    assert ("rail" in bodies) == model.has_cart


def test_cli_writes_the_cartpole_html(tmp_path, capsys):
    out = tmp_path / "cartpole.html"
    assert main(["solve", "cartpole", "--print-level", "0", "--html", str(out)]) == 0
    assert out.stat().st_size > 1e5 and "wrote" in capsys.readouterr().out


# ---------------------------------------------------------------- witness points
@pytest.fixture(scope="module")
def closing():
    """The capsule hand closing on itself (examples/hand_contact.py), 0.45 s: three impacts."""
    hand, result = hand_closing(T=0.45)
    assert result.success and result.impacts
    return hand, result


def coal_nearest_points(hand, q):
    """Nearest points (P, 2, 3) and distances (P,) of the hand's collision pairs, by coal."""
    geom, model = hand.geometry_model, hand.pin_model
    gdata = geom.createData()
    pin.computeDistances(model, model.createData(), geom, gdata, q)
    points = np.array([[r.getNearestPoint1(), r.getNearestPoint2()] for r in gdata.distanceResults])
    return points, np.array([r.min_distance for r in gdata.distanceResults])


def test_witness_points_are_the_nearest_points_and_shown_when_near(closing):
    hand, result = closing
    near = 5e-3
    scene = contact_simulation_scene(result, witness_distance=near)
    steps = sample_steps(result.times, 100.0)
    bodies = {b.name: b for b in scene.bodies}
    shown = 0
    for row, k in enumerate(steps):
        points, distances = coal_nearest_points(hand, result.states[k, : hand.nq])
        np.testing.assert_allclose(result.distances[k], distances, atol=1e-6)
        for p in range(len(result.pair_names)):
            a, b = bodies[f"witness_{p}_a"], bodies[f"witness_{p}_b"]
            assert a.visible[row] == b.visible[row] == (result.distances[k, p] < near)
            if distances[p] > 1e-6:  # nearest points are unique apart from contact (coal: GJK, 1e-6)
                np.testing.assert_allclose([a.poses[row, :3, 3], b.poses[row, :3, 3]], points[p], atol=1e-6)
                np.testing.assert_allclose(a.poses[row, :3, 2], (points[p, 1] - points[p, 0]) / distances[p], atol=1e-5)
            shown += a.visible[row]
    assert shown > 0
    clips = next(c for c in scene_commands(scene) if c["type"] == "set_animation")["animations"]
    scale_tracks = [t for c in clips if c["path"].startswith(f"{ROOT}/witness_") for t in c["clip"]["tracks"] if t["name"] == ".scale"]
    assert len(scale_tracks) == 2 * len(result.pair_names)
    active = result.forces[np.minimum(steps, len(result.forces) - 1)] > 0
    lengths = np.linalg.norm(scene.arrows.vectors, axis=-1)
    assert np.array_equal(lengths > 0, active)


def test_contact_simulation_exports_html(closing, tmp_path):
    _, result = closing
    out = export_html(result, tmp_path / "hand.html")
    assert out.stat().st_size > 1e5
    with pytest.raises(ValueError, match="witness_distance"):
        contact_simulation_scene(result, witness_distance=-1.0)


def test_plots_draw_the_witness_points(closing, tmp_path):
    hand, result = closing
    k = int(np.argmax(result.forces.sum(axis=1)))
    fig = plot_contact_simulation(result, tmp_path / "hand.png", near=5e-3)
    view = fig.axes[1]
    dots = np.concatenate([np.column_stack(line.get_data()) for line in view.lines if line.get_marker() == "o"])
    points, distances = coal_nearest_points(hand, result.states[k, : hand.nq])
    near = result.distances[k] < 5e-3
    expected = np.concatenate([points[near, 0], points[near, 1]])[:, [0, 2]]  # the hand is seen in x-z
    assert len(dots) == len(expected) > 0
    for point in expected:  # each witness point (coal's, to its 1e-6) is a drawn dot
        assert np.min(np.linalg.norm(dots - point, axis=1)) < 1e-5
    gif = animate_contact_simulation(result, tmp_path / "hand.gif", fps=10)
    assert Image.open(gif).n_frames == 5
    with pytest.raises(ValueError, match="time: expected a time in"):
        plot_contact_simulation(result, time=9.0)
    with pytest.raises(FileExistsError):
        plot_contact_simulation(result, tmp_path / "hand.png")  # nothing saved is overwritten silently


@pytest.mark.browser
def test_browser_shows_red_witness_discs_at_contact(closing, tmp_path):
    """Chromium: the page at a contact time has many more red pixels (witness discs) than at the start."""
    _, result = closing
    page = export_html(result, tmp_path / "hand.html")
    steps = sample_steps(result.times, 100.0)
    t_contact = result.times[steps[np.argmax((result.distances[steps] < 5e-3).sum(axis=1))]]  # most pairs near

    def red(t):
        shot = screenshot(f"{page.as_uri()}#t={t}", tmp_path / f"hand_{t:.3f}.png", budget_ms=3000)
        assert shot.shape == (WINDOW[1], WINDOW[0], 3)
        return int(((shot[..., 0] > 150) & (shot[..., 1] < 80) & (shot[..., 2] < 80)).sum())

    assert red(t_contact) > red(0.0) + 50
