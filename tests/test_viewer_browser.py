"""The 3D viewer in a real headless Chromium: the static export and the live meshcat server.

Pixel oracle: the same page drawn without the robot's bodies (same camera,
ground, footholds, path and arrows) is the background; the robot is drawn
when many pixels in the middle of the image differ from it, and it moved when
two times of the motion differ. ``TRAJOPT_README_SCREENSHOT=docs/go1_trot.png``
also keeps the Go1 screenshot (the README's picture).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from .interruptible import default_sigint, interrupt

from trajopt.viewer import solution_scene
from trajopt.viewer.html import page, write_page
from trajopt.viewer.meshcat_scene import ROOT, scene_commands

from .viewer_helpers import WINDOW, central, changed, go1_trot, quadrotor, read_viewer_url, screenshot, session_dir

pytestmark = pytest.mark.browser

#: A drawn robot covers at least this fraction of the central image region (Go1: ~8 %).
MIN_ROBOT_FRACTION = 0.01
#: Two times of a motion differ in at least this fraction of the central region.
MIN_MOTION_FRACTION = 0.002


def _pages(solution, folder: Path, name: str) -> tuple[Path, Path]:
    """The solution's page, and the same page without the robot's bodies (the background)."""
    scene = solution_scene(solution)
    commands = scene_commands(scene)
    bodies = {f"{ROOT}/{b.name}" for b in scene.bodies}
    background = []
    for command in commands:
        if command["type"] == "set_object" and command["path"] in bodies:
            continue
        if command["type"] == "set_animation":
            command = {**command, "animations": [a for a in command["animations"] if a["path"].rsplit("/", 1)[0] not in bodies]}
        background.append(command)
    legend = scene.arrows.label if scene.arrows is not None else ""
    full = write_page(page(commands, scene.title, scene.duration, legend), folder / f"{name}.html", overwrite=True)
    empty = write_page(page(background, scene.title, scene.duration, legend), folder / f"{name}_background.html", overwrite=True)
    return full, empty


def _check_drawn_and_moving(solution, name: str, times: tuple[float, float], tmp_path: Path) -> np.ndarray:
    full, empty = _pages(solution, tmp_path, name)
    first = screenshot(f"{full.as_uri()}#t={times[0]}", tmp_path / f"{name}_a.png")
    second = screenshot(f"{full.as_uri()}#t={times[1]}", tmp_path / f"{name}_b.png")
    background = screenshot(f"{empty.as_uri()}#t={times[0]}", tmp_path / f"{name}_bg.png")
    assert first.shape == (WINDOW[1], WINDOW[0], 3)
    robot = changed(first, background)
    inside = central(robot).mean()
    assert inside > MIN_ROBOT_FRACTION, f"robot covers {inside:.3%} of the central region"
    assert robot.sum() - central(robot).sum() < 0.25 * robot.sum(), "the robot is not framed in the middle"
    motion = central(changed(first, second)).mean()
    assert motion > MIN_MOTION_FRACTION, f"only {motion:.3%} of the central region changed between t = {times}"
    return first


def test_go1_trot_export_shows_the_robot_trotting(tmp_path):
    """Acceptance: the Go1 trot's HTML replays with meshes in Chromium; the robot is drawn and moves."""
    shot = _check_drawn_and_moving(go1_trot(), "go1_trot", (0.12, 0.24), tmp_path)
    keep = os.environ.get("TRAJOPT_README_SCREENSHOT")
    if keep:
        shutil.copy(tmp_path / "go1_trot_b.png", keep)
    # the robot's own colours: pixels of the Go1's bluish-grey Collada material (0.45, 0.53, 0.67), shaded
    leg_colour = np.abs(shot - np.array([0.45, 0.53, 0.67]) * 255).max(axis=2) < 40
    assert leg_colour.sum() > 500, f"only {leg_colour.sum()} pixels of the Go1's leg colour"


def test_quadrotor_export_shows_the_body_moving(tmp_path):
    solution = quadrotor()
    _check_drawn_and_moving(solution, "quadrotor", (0.0, solution.tf), tmp_path)


def test_live_viewer_serves_the_motion_until_interrupted(tmp_path):
    """`trajopt view FILE` with no display: prints the URL, serves the animated scene, stops cleanly on Ctrl-C."""
    saved = session_dir() / "trot_live.npz"
    if not saved.exists():
        go1_trot().save(saved)
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    proc = subprocess.Popen([sys.executable, "-m", "trajopt.cli", "view", str(saved)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, preexec_fn=default_sigint)
    try:
        url = read_viewer_url(proc, timeout=120)
        # the live page plays the loop: two virtual-time budgets show two times of the motion
        early = screenshot(url, tmp_path / "live_a.png", budget_ms=1000)
        late = screenshot(url, tmp_path / "live_b.png", budget_ms=1300)
        _, empty = _pages(go1_trot(), tmp_path, "live_reference")
        background = screenshot(f"{empty.as_uri()}#t=0", tmp_path / "live_bg.png")
        robot = central(changed(early, background))
        # the live page has no caption; the robot and its arrows are most of what differs
        assert robot.mean() > MIN_ROBOT_FRACTION, f"robot covers {robot.mean():.3%} of the central region"
        assert central(changed(early, late)).mean() > MIN_MOTION_FRACTION
        assert proc.poll() is None, "the viewer stopped serving"
    finally:
        out, err = interrupt(proc)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
