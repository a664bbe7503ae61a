"""The closed loop drawn live (:mod:`trajopt.viewer.live_loop`): what it sends, checked against pinocchio.

A recording stand-in for meshcat's window keeps every command; the bodies'
``set_transform`` matrices must be pinocchio's world placements of the
visuals at the tick's measured state, and the plan's foot paths pinocchio's
foot frames at the plan's knots.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pinocchio as pin
import pytest

from models import Cartpole, Go1
from trajopt.viewer.meshcat_scene import ROOT

pytest.importorskip("umsgpack")

from trajopt.viewer.live_loop import LoopView  # noqa: E402
from trajopt.viewer.visuals import robot_visuals  # noqa: E402


class RecordingViewer:
    """What :class:`LoopView` uses of a :class:`~trajopt.viewer.live.LiveViewer`: ``visualizer.window.send``."""

    def __init__(self) -> None:
        self.commands: list[dict] = []
        self.visualizer = SimpleNamespace(window=SimpleNamespace(send=lambda lowered: self.commands.append(lowered.lower())))

    def last(self, kind: str, path: str) -> dict:
        return [c for c in self.commands if c["type"] == kind and c["path"] == path][-1]


def _go1_state(robot: Go1, seed: int) -> np.ndarray:
    """A random Go1 state in our order (quaternion w first), the base 0.3 m up."""
    rng = np.random.default_rng(seed)
    q = pin.randomConfiguration(robot.pin_model, -np.ones(robot.nq), np.ones(robot.nq))
    q[:3] = rng.uniform(-0.5, 0.5, 3) + [0.0, 0.0, 0.3]
    ours = np.r_[q[:3], q[6], q[3:6], q[7:]]
    return np.r_[ours, rng.standard_normal(robot.nv)]


def _pin_q(x: np.ndarray, nq: int) -> np.ndarray:
    return np.r_[x[:3], x[4:7], x[3], x[7:nq]]


def test_loop_view_poses_the_robot_at_the_tick_and_draws_the_plans_feet():
    robot = Go1()
    viewer = RecordingViewer()
    x0, x1 = _go1_state(robot, 0), _go1_state(robot, 1)
    plan = SimpleNamespace(states=np.array([_go1_state(robot, k) for k in range(2, 7)]))
    view = LoopView(viewer, robot, x0, fps=1000.0)
    view.on_tick(SimpleNamespace(state=x1), None, plan)
    view.close()

    data = robot.pin_model.createData()
    pin.forwardKinematics(robot.pin_model, data, _pin_q(x1, robot.nq))
    for visual in robot_visuals(robot):
        sent = np.array(viewer.last("set_transform", f"{ROOT}/{visual.name}")["matrix"]).reshape(4, 4).T  # column-major
        expected = (data.oMi[visual.joint] * pin.SE3(visual.placement)).homogeneous
        assert np.allclose(sent, expected, rtol=0, atol=1e-12), visual.name

    for i, frame in enumerate(robot.kinematics_bodies):
        line = viewer.last("set_object", f"{ROOT}/plan/foot{i}")["object"]["geometries"][0]["data"]["attributes"]["position"]
        points = np.frombuffer(line["array"].data, dtype=np.float32).reshape(-1, 3)
        fid = robot.pin_model.getFrameId(frame)
        for state, point in zip(plan.states, points):
            d = robot.pin_model.createData()
            pin.framesForwardKinematics(robot.pin_model, d, _pin_q(state, robot.nq))
            assert np.allclose(point, d.oMf[fid].translation, atol=1e-6), frame  # float32 on the wire
    trail = viewer.last("set_object", f"{ROOT}/trail")["object"]["geometries"][0]["data"]["attributes"]["position"]
    assert np.allclose(np.frombuffer(trail["array"].data, dtype=np.float32).reshape(-1, 3), [x0[:3], x1[:3]], atol=1e-6)


def test_loop_view_skips_ticks_it_cannot_draw_in_time_and_keeps_the_newest():
    """At 1 frame per second the ticks of a fast loop are not all drawn, and close() draws the newest one."""
    robot = Go1()
    viewer = RecordingViewer()
    view = LoopView(viewer, robot, _go1_state(robot, 0), fps=1.0)
    states = [_go1_state(robot, k) for k in range(1, 30)]
    for x in states:
        view.on_tick(SimpleNamespace(state=x), None, None)
    view.close()
    assert view.frames < len(states)
    data = robot.pin_model.createData()
    pin.forwardKinematics(robot.pin_model, data, _pin_q(states[-1], robot.nq))
    visual = robot_visuals(robot)[0]
    sent = np.array(viewer.last("set_transform", f"{ROOT}/{visual.name}")["matrix"]).reshape(4, 4).T
    assert np.allclose(sent, (data.oMi[visual.joint] * pin.SE3(visual.placement)).homogeneous, atol=1e-12)


def test_loop_view_draws_a_cartpole():
    model = Cartpole()
    viewer = RecordingViewer()
    view = LoopView(viewer, model, np.zeros(model.state_dim), fps=1000.0)
    view.on_tick(SimpleNamespace(state=np.array([0.3, 1.0, 0.0, 0.0])), None, SimpleNamespace(states=np.zeros((3, 4))))
    view.close()
    cart = np.array(viewer.last("set_transform", f"{ROOT}/mass_1")["matrix"]).reshape(4, 4).T
    assert np.allclose(cart[:3, 3], model.chain_points(np.array([0.3, 1.0]))[0])


def test_loop_view_refuses_a_bad_frame_rate():
    with pytest.raises(ValueError, match="fps"):
        LoopView(RecordingViewer(), Go1(), np.zeros(37), fps=0.0)


def _websocket_messages(url: str, seconds: float) -> list:
    """The meshcat commands a browser at ``url`` receives in ``seconds`` (the server's stored scene, then the live ones)."""
    import asyncio
    import time

    import umsgpack
    from tornado.websocket import websocket_connect

    async def collect() -> list:
        socket = await websocket_connect(url)
        received, end = [], time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                message = await asyncio.wait_for(socket.read_message(), timeout=max(end - time.monotonic(), 0.01))
            except asyncio.TimeoutError:
                break
            if message is None:
                break
            received.append(umsgpack.unpackb(message))
        socket.close()
        return received

    return asyncio.run(collect())


def test_mpc_view_streams_the_plant_to_the_browser_while_it_runs():
    """`trajopt mpc go1-trot --vx 0.3 --view`: a browser connected during the run receives the trunk's pose tick
    after tick, moving forward; the first Ctrl-C stops the run and the viewer serves it at the same address until
    the second (exit status 130: interrupted)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from .interruptible import default_sigint, interrupt
    from .viewer_helpers import read_viewer_url

    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    command = [sys.executable, "-m", "trajopt.cli", "mpc", "go1-trot", "--vx", "0.3", "--duration", "60", "--delay", "tick", "--view", "-q"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, preexec_fn=default_sigint)
    try:
        url = read_viewer_url(proc, timeout=300)
        socket_url = "ws://" + url.split("//", 1)[1].split("/", 1)[0] + "/"
        messages = _websocket_messages(socket_url, 4.0)
        trunk = [m for m in messages if m.get("type") == "set_transform" and m.get("path") == f"{ROOT}/trunk_0"]
        assert len(trunk) >= 10, f"{len(trunk)} poses of the trunk in 4 s of the run"
        x = [np.asarray(m["matrix"], dtype=float).reshape(4, 4).T[0, 3] for m in trunk]
        assert x[-1] - x[0] > 0.1, f"the trunk moved {x[-1] - x[0]:.3f} m forward in 4 s at 0.3 m/s"
        assert any(m.get("path") == f"{ROOT}/plan/foot0" for m in messages), "no planned foot path"
        proc.send_signal(signal.SIGINT)
        assert read_viewer_url(proc, timeout=120) == url  # the run stopped; the whole run is served at the same address
        time.sleep(1.0)
        assert proc.poll() is None, "the viewer stopped serving after the run"
    finally:
        _, err = interrupt(proc)
    assert proc.returncode == 130, err
    assert "Traceback" not in err


def test_loop_view_draws_the_plants_terrain_instead_of_the_ground():
    import problems

    problem = problems.get("go1-slope")
    viewer = RecordingViewer()
    view = LoopView(viewer, problem.robot, problem.x0, fps=1000.0, terrain=problem.terrain)
    view.close()
    paths = {c["path"] for c in viewer.commands if c["type"] == "set_object"}
    assert f"{ROOT}/terrain" in paths and f"{ROOT}/ground" not in paths
    mesh = viewer.last("set_object", f"{ROOT}/terrain")["object"]["geometries"][0]["data"]["attributes"]["position"]
    vertices = np.frombuffer(mesh["array"].data, dtype=np.float32).reshape(-1, 3)
    top = vertices[vertices[:, 2] >= problem.terrain.height(vertices[:, :2]) - 1e-4]  # the slab's upper face lies on the slope
    assert len(top) >= 4
    np.testing.assert_allclose(top[:, 2], problem.terrain.height(top[:, :2]), atol=1e-5)
