"""What the viewer shows of a capsule contact simulation (:class:`trajopt.sim.ContactSimResult`).

:func:`contact_simulation_scene` turns a result into a :class:`~.scene.Scene`:

- ``bodies``: the model's visuals (for the capsule hand, its capsules) posed
  at the simulated states, and the collision witness points, as pinocchio's
  tutorial draws them (its ``displayCollision``): a red disc at each of a
  pair's two witness points (:class:`trajopt.sim.CapsuleDistance`: the
  closest surface points), its axis along the pair normal, shown while the
  pair is closer than ``witness_distance`` (m) and hidden otherwise;
- ``arrows``: the normal contact force on capsule b of every active pair
  (WORLD frame), from its witness point along the normal, ``force_scale``
  metres per newton (default: the largest force a third of the robot's size).

The camera looks across the plane the capsules move in (along the world
axis they move least along, the hand's y: its joints all turn about y), so
that gaps and contacts between the capsules are seen side on. The
simulation's steps are sampled every ``stride`` steps (at most
``max_fps`` samples per second of simulated time, the last step always
included); each sample shows the state, witness points and forces of its step.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..sim.contact_sim import ContactSimResult
from . import shapes
from .scene import Arrows, Body, Scene, mesh_radius, multibody_bodies
from .shapes import MAX_FACES

#: Witness discs: red, as the tutorial's, and their size relative to the smaller capsule of the pair.
WITNESS_COLOR = (0.9, 0.05, 0.05, 1.0)
WITNESS_RADIUS, WITNESS_THICKNESS = 1.25, 0.25
FORCE_COLOR = np.array([0.95, 0.45, 0.05])


def sample_steps(times: np.ndarray, max_fps: float) -> np.ndarray:
    """Indices of the steps shown: every ``stride``-th step, at most ``max_fps`` per second, and the last one."""
    if not max_fps > 0:
        raise ValueError(f"max_fps: expected a positive rate, got {max_fps!r}")
    dt = float(times[1] - times[0]) if len(times) > 1 else 1.0
    stride = max(1, int(np.ceil(1.0 / (max_fps * dt) - 1e-9)))
    steps = np.arange(0, len(times), stride)
    return steps if steps[-1] == len(times) - 1 else np.r_[steps, len(times) - 1]


def witness_poses(points: np.ndarray, normals: np.ndarray) -> np.ndarray:
    """Poses (..., 4, 4) of discs centred at ``points`` (..., 3) with their axis (local z) along ``normals``."""
    poses = np.zeros(points.shape[:-1] + (4, 4))
    poses[..., :3, :3] = shapes.z_onto(normals)
    poses[..., :3, 3] = points
    poses[..., 3, 3] = 1.0
    return poses


def _across_the_motion(result: ContactSimResult, steps: np.ndarray) -> np.ndarray:
    """A camera direction along the world axis the witness points move least along, a little from the front and above."""
    moving = np.ptp(np.concatenate([result.witness_a[steps], result.witness_b[steps]], axis=1), axis=0).sum(axis=0)
    axis = int(np.argmin(moving))
    default = np.array([0.55, -1.0, 0.5])  # the viewer's front left, above
    direction = 0.3 * default
    direction[axis] = np.sign(default[axis])
    return direction


def contact_simulation_scene(
    result: ContactSimResult,
    max_fps: float = 100.0,
    witness_distance: float = 5e-3,
    force_scale: Optional[float] = None,
    max_faces: Optional[int] = MAX_FACES,
) -> Scene:
    """The :class:`~.scene.Scene` of a contact simulation: its capsules at every step, the collision
    witness points as red discs and the contact forces as arrows."""
    if not isinstance(result, ContactSimResult):
        raise ValueError(f"result: expected a trajopt.sim.ContactSimResult, got {type(result).__name__}")
    if result.model is None or result.collisions is None or result.witness_a.shape[:2] != result.distances.shape:
        raise ValueError("result: no model, collisions or witness points recorded; simulate with trajopt.sim.ContactSimulator")
    if not (np.isfinite(witness_distance) and witness_distance >= 0):
        raise ValueError(f"witness_distance: expected a distance >= 0 [m], got {witness_distance!r}")
    if force_scale is not None and not (np.isfinite(force_scale) and force_scale > 0):
        raise ValueError(f"force_scale: expected a positive length per newton [m/N], got {force_scale!r}")
    steps = sample_steps(result.times, max_fps)
    t = result.times[steps] - result.times[0]
    bodies = multibody_bodies(result.model, result.states[steps], max_faces)
    size = mesh_radius(bodies)
    capsules = result.collisions.capsules
    near = result.distances[steps] < witness_distance
    for p, (a, b) in enumerate(result.collisions.pairs):
        radius = min(capsules[a].radius, capsules[b].radius) or 0.02 * size
        disc = shapes.cylinder(WITNESS_RADIUS * radius, WITNESS_THICKNESS * radius, WITNESS_COLOR)
        for side, points in (("a", result.witness_a), ("b", result.witness_b)):
            poses = witness_poses(points[steps, p], result.normals[steps, p])
            bodies.append(Body(f"witness_{p}_{side}", disc, poses, visible=near[:, p]))
    scene = Scene(t, bodies, size=size, camera_direction=_across_the_motion(result, steps))
    forces = result.forces[np.minimum(steps, len(result.forces) - 1)] if len(result.forces) else np.zeros((len(steps), len(capsules)))
    peak = float(forces.max(initial=0.0))
    if force_scale is None:
        force_scale = size / (3.0 * peak) if peak > 0 else 1.0
    vectors = force_scale * forces[..., None] * result.normals[steps]
    colors = np.broadcast_to(FORCE_COLOR, vectors.shape).copy()
    names = [f"{a}-{b}" for a, b in result.pair_names]
    scene.arrows = Arrows(names, result.witness_b[steps], vectors, colors, 0.01 * size, f"normal contact forces ({100 * force_scale:.3g} cm/N)")
    scene.title = f"contact simulation: {result.status}, {len(result.impacts)} impacts, t = 0-{t[-1]:.3g} s (witness points within {1e3 * witness_distance:g} mm in red)"
    return scene
