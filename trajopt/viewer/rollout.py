"""The 3D scene of a closed loop: the plant's motion, its base path, and the pushes as red arrows.

:func:`rollout_scene` draws a :class:`trajopt.mpc.loop.ClosedLoopResult` as it
happened in the plant (not as planned): the states the plant went through,
sampled at up to ``max_fps`` frames per second of simulated time. A push (or
gust) is an arrow at the base along its WORLD force, ``force_scale`` metres
per newton, shown while it acts. Legged robots are drawn from their meshes
with a ground under them, rigid bodies (the quadrotor) and point-mass chains (the cartpole) as in a plan.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from models.planar_chain import PointMassChain
from models.rigid_body import RigidBody

from .scene import PATH_COLOR, Arrows, Scene, _ground_around, _point_mass_scene, _rigid_body_scene, mesh_radius, multibody_bodies
from .shapes import MAX_FACES
from .terrain_mesh import terrain_mesh

#: Colour of a push arrow (RGB).
PUSH_COLOR = (0.9, 0.1, 0.1)


def rollout_scene(result: Any, model: Any, title: str = "", max_fps: float = 60.0, force_scale: float = 0.005, max_faces: Optional[int] = MAX_FACES, terrain: Any = None) -> Scene:
    """The 3D scene of the closed loop ``result`` as the plant ran it, for the controller's ``model`` (its robot is drawn):
    the states sampled at up to ``max_fps`` frames per simulated second, the base path, and each push as a red arrow
    along its WORLD force (``force_scale`` m per N) while it acts; ``max_faces`` caps each mesh's triangles; a
    ``terrain`` (:class:`trajopt.terrain.Terrain`, the plant's) is drawn in place of the flat ground."""
    if not (np.isfinite(max_fps) and max_fps > 0):
        raise ValueError(f"max_fps: expected frames per second > 0, got {max_fps!r}")
    t_all = result.times
    if len(t_all) < 2:
        raise ValueError("result: the closed loop recorded fewer than two plant samples")
    stride = max(1, int(round((1.0 / max_fps) / (t_all[1] - t_all[0]))))
    keep = np.unique(np.r_[np.arange(0, len(t_all), stride), len(t_all) - 1])
    t, X, U, F = t_all[keep] - t_all[0], result.states[keep], result.controls[keep], result.forces[keep]
    robot = getattr(model, "robot", model)
    if isinstance(model, RigidBody):
        scene = _rigid_body_scene(model, t, X, U)
        base = X[:, model.gen_inds()["r"]]
    elif isinstance(model, PointMassChain):
        scene = _point_mass_scene(model, t, X)
        base = scene.paths[0][1]
    else:
        bodies = multibody_bodies(robot, X, max_faces)
        scene = Scene(t, bodies, size=mesh_radius(bodies))
        base = X[:, :3]
        scene.paths.append(("base_path", base, PATH_COLOR))
        scene.ground = _ground_around(scene, 0.0)
        if terrain is not None:
            centre, edge, _ = scene.ground
            scene.terrain, scene.ground = terrain_mesh(terrain, centre, edge), None
    if np.any(F):
        colors = np.broadcast_to(np.asarray(PUSH_COLOR), (len(t), 1, 3)).copy()
        scene.arrows = Arrows(["push"], base[:, None, :], force_scale * F[:, None, :], colors, 0.04 * scene.size, f"pushes ({100 * force_scale:.3g} cm/N)")
    scene.title = title
    return scene
