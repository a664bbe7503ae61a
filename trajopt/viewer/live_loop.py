"""A closed loop shown live in meshcat while it runs (``trajopt mpc ... --view``).

:class:`LoopView` draws the controller's robot once (its meshes, a ground
for a legged robot) in a :class:`~.live.LiveViewer` and then moves it: its
:meth:`LoopView.on_tick` takes each tick of the loop (the
``on_tick(record, timing, plan)`` hook of
:func:`~trajopt.mpc.loop.run_closed_loop` and
:func:`~trajopt.mpc.realtime.run_realtime_loop`) and keeps the newest one;
a background thread poses the bodies at that tick's measured state and
draws that tick's plan:

- every body: a meshcat ``set_transform`` of its world pose (pinocchio's
  forward kinematics for a multibody robot; the state's pose for a rigid
  body; rods and masses for a pendulum or a cartpole, as the solution views
  draw them);
- the plan: the planned path of each contact point over the horizon (a
  legged robot's feet, in orange) and the planned base path (blue), from the
  plan's knot states;
- the trail: the base path the plant has taken so far (grey);
- the camera: aimed at the robot as the solution views aim it, and, for a
  floating base or a rigid body, following it (the scene is shifted by the
  base's position at every frame).

The thread sends at most ``fps`` frames per second of wall time and skips
the ticks in between, so that a slow browser or a busy machine never holds
the loop up: the loop only stores a reference. Frames use meshcat's
request-reply socket from this thread alone, until :meth:`LoopView.close`.
"""
from __future__ import annotations

import threading
from typing import Any, Optional

import numpy as np

from models.planar_chain import PointMassChain
from models.rigid_body import RigidBody

from .live import LiveViewer, _Lowered
from .meshcat_scene import ROOT, _camera_commands, line_object, mesh_object
from .scene import FOOTHOLD_COLOR, GROUND_COLOR, PATH_COLOR, Body, Scene, _point_mass_scene, _rigid_body_scene, mesh_radius
from .shapes import MAX_FACES, box
from .terrain_mesh import terrain_mesh
from .visuals import robot_visuals, visual_poses

#: Colour of the path the plant's base has taken so far (RGBA).
TRAIL_COLOR = (0.45, 0.45, 0.45, 1.0)
#: Edge of the ground square drawn under a legged robot (m), centred under its base.
GROUND_EDGE = 20.0
#: Edge of the square of a terrain drawn around the start (m).
TERRAIN_EDGE = 10.0
#: Trail points kept (the newest), one per frame.
TRAIL_POINTS = 5000


class LoopView:
    """The closed loop of ``model`` (the controller's :class:`models.Model`) drawn live in ``viewer``,
    starting at state ``x0``, at most ``fps`` frames per second of wall time (module docstring); a ``terrain``
    (the plant's, :class:`trajopt.terrain.Terrain`) is drawn around the start in place of the flat ground."""

    def __init__(self, viewer: LiveViewer, model: Any, x0: np.ndarray, fps: float = 25.0, max_faces: Optional[int] = MAX_FACES, terrain: Any = None) -> None:
        if not (np.isfinite(fps) and fps > 0):
            raise ValueError(f"fps: expected frames per second > 0, got {fps!r}")
        self.viewer, self.model, self.period = viewer, model, 1.0 / fps
        self.robot = getattr(model, "robot", model)
        x0 = np.asarray(x0, dtype=float)
        self._send({"type": "delete", "path": ROOT})
        if isinstance(model, (RigidBody, PointMassChain)):  # drawn as the solution views draw them, one state at a time
            self._visuals = None
            bodies = self._state_scene(x0[None]).bodies
        else:
            self._visuals = robot_visuals(self.robot, max_faces)
            poses = self._frames(x0[None])[0][0]
            bodies = [Body(visual.name, visual.mesh, poses[i][None]) for i, visual in enumerate(self._visuals)]
        self._names = [body.name for body in bodies]
        for body in bodies:
            self._send({"type": "set_object", "path": f"{ROOT}/{body.name}", "object": mesh_object(body.mesh)})
        camera, _ = _camera_commands(Scene(np.zeros(1), bodies, size=mesh_radius(bodies)))
        for command in camera:
            self._send(command)
        #: whether the view follows the base (a floating base or a rigid body), keeping it where the camera looks
        self.follows = isinstance(model, RigidBody) or bool(getattr(self.robot, "is_floating", False))
        self.contacts = int(getattr(self.robot, "nc", 0) or 0)
        #: whether a ground is drawn (a legged robot: a floating base with contact points), kept under the base
        self.grounded = bool(self.contacts) and bool(getattr(self.robot, "is_floating", False)) and terrain is None
        if terrain is not None:  # the plant's terrain, drawn once around the start
            self._send({"type": "set_object", "path": f"{ROOT}/terrain", "object": mesh_object(terrain_mesh(terrain, x0[:2], TERRAIN_EDGE))})
        if terrain is not None or self.grounded:  # meshcat's own grid hidden: it would slide with the scene
            self._send({"type": "set_property", "path": "/Grid", "property": "visible", "value": False})
        if self.grounded:
            T = np.eye(4)
            T[2, 3] = -0.005
            self._send({"type": "set_object", "path": f"{ROOT}/ground", "object": mesh_object(box((GROUND_EDGE, GROUND_EDGE, 0.01), GROUND_COLOR).transformed(T))})
        self._trail: list = []
        self._latest: Optional[tuple] = None
        self._wake, self._stop = threading.Event(), threading.Event()
        #: frames sent so far
        self.frames = 0
        self._draw(x0, None)
        self._thread = threading.Thread(target=self._run, name="loop-view", daemon=True)
        self._thread.start()

    def on_tick(self, record: Any, timing: Any, plan: Any) -> None:
        """The loop's hook: keep this tick's measured state and plan (``None`` for a failed tick) for the next frame."""
        self._latest = (np.asarray(record.state, dtype=float), plan)
        self._wake.set()

    def close(self) -> None:
        """Draw the newest tick, then stop the drawing thread (the viewer stays open)."""
        self._stop.set()
        self._wake.set()
        self._thread.join()
        if self._latest is not None:
            self._draw(*self._latest)

    # ------------------------------------------------------------ drawing
    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait()
            self._wake.clear()
            if self._stop.is_set():
                return
            latest, self._latest = self._latest, None
            if latest is not None:
                self._draw(*latest)
            self._stop.wait(self.period)  # at most one frame per period; ticks in between are skipped

    def _draw(self, x: np.ndarray, plan: Any) -> None:
        poses, bases = self._frames(x[None])
        for name, pose in zip(self._names, poses[0]):
            self._send({"type": "set_transform", "path": f"{ROOT}/{name}", "matrix": pose.T.ravel().tolist()})
        base = bases[0]
        if self.follows:  # the scene slides under the camera (meshcat's orbit controls turn about the origin)
            shift = np.eye(4)
            shift[:3, 3] = -base
            for path in ("/meshcat", "/Axes"):
                self._send({"type": "set_transform", "path": path, "matrix": shift.T.ravel().tolist()})
        if self.grounded:  # a plain ground square under the base, however far it walks
            under = np.eye(4)
            under[:2, 3] = base[:2]
            self._send({"type": "set_transform", "path": f"{ROOT}/ground", "matrix": under.T.ravel().tolist()})
        self._trail = (self._trail + [base])[-TRAIL_POINTS:]
        if len(self._trail) > 1:
            self._send({"type": "set_object", "path": f"{ROOT}/trail", "object": line_object(np.array(self._trail), TRAIL_COLOR)})
        if plan is not None:
            states = np.asarray(plan.states, dtype=float)
            self._send({"type": "set_object", "path": f"{ROOT}/plan/base", "object": line_object(self._frames(states, poses=False)[1], PATH_COLOR)})
            if self.contacts:
                feet = np.array([np.asarray(self.robot.kinematics(s), dtype=float).reshape(self.contacts, 3) for s in states])
                for i in range(self.contacts):
                    self._send({"type": "set_object", "path": f"{ROOT}/plan/foot{i}", "object": line_object(feet[:, i], FOOTHOLD_COLOR)})
        self.frames += 1

    def _state_scene(self, X: np.ndarray) -> Scene:
        """A rigid body's or a point-mass chain's scene at the states ``X`` (its meshes do not depend on them)."""
        if isinstance(self.model, RigidBody):
            return _rigid_body_scene(self.model, np.zeros(len(X)), X, np.zeros((len(X), self.model.control_dim)))
        return _point_mass_scene(self.model, np.zeros(len(X)), X)

    def _frames(self, X: np.ndarray, poses: bool = True) -> tuple:
        """At the states ``X``: the bodies' world poses (K, bodies, 4, 4; ``None`` without ``poses``) and the
        positions (K, 3) the paths follow (the base, the rigid body, a chain's tip), one scene built for both."""
        if self._visuals is None:
            scene = self._state_scene(X)
            return (np.stack([body.poses for body in scene.bodies], axis=1) if poses else None), scene.paths[0][1]
        bases = X[:, :3] if self.robot.is_floating else np.zeros((len(X), 3))
        return (visual_poses(self.robot.pin_model, self._visuals, X[:, : self.robot.nq]) if poses else None), bases

    def _send(self, command: dict) -> None:
        self.viewer.visualizer.window.send(_Lowered(command))
