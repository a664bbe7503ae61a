"""A :class:`~.scene.Scene` as meshcat commands: meshes once, poses as animation tracks.

:func:`scene_commands` lowers a scene to the messages meshcat's viewer
understands (``set_object``, ``set_transform``, ``set_property``,
``set_animation``: dictionaries that :func:`encode` packs with msgpack), the
same bytes whether they go to a live meshcat server or into a static page:

- every body is one ``Mesh`` under ``/meshcat/robot/<name>`` (a body that is
  not always visible, e.g. a collision witness point, also gets a ``.scale``
  track, 1e-6 where it is hidden): a three.js
  ``BufferGeometry`` (float32 positions, uint16 indices when there are fewer
  than 65,536 vertices, else uint32; msgpack-lite's typed-array extension
  types) and a Phong material, sent ONCE;
- one ``set_animation`` holds, per body, a position track (``vector3``) and a
  quaternion track (three.js order ``[x, y, z, w]``) keyed at the scene's sample
  times in seconds (clip ``fps`` 1); three.js interpolates linearly (slerp for
  quaternions) between samples, which are dense enough to follow
  :meth:`Solution.evaluate`;
- every arrow is a shaft (a unit cylinder scaled along its axis) and a head
  (a cone of fixed size, shrunk for arrows shorter than it), animated by
  position, quaternion, scale and ``.material.color`` tracks; a zero force
  has zero scale;
- the base path is a ``Line``, the footholds one mesh of discs, the ground a
  thin box with grid lines on it (meshcat's own grid, at z = 0, is hidden);
  a terrain one mesh of its solids (:mod:`.terrain_mesh`, the grid hidden too);
- the camera looks at the middle of the motion from the front left, above
  (or along the scene's own ``camera_direction``)
  (meshcat's orbit controls turn about the viewer's origin, so the scene is
  shifted to put the middle of the motion there; the world axes move with it);
  a motion longer than ``FOLLOW_RATIO`` robot sizes (the quadrotor's 5 m) is
  followed instead: the shift is animated to keep the base at the origin.

The animation loops (``repetitions`` = infinity) and plays on load; meshcat's
"Animations" panel has play, pause, reset, the time slider and ``timeScale``
(1 = real time, 0.25 = four times slower).
"""
from __future__ import annotations

import math
import uuid
from typing import Any, Iterable

import numpy as np

from ..plotting.stick_figure import GRID_SPACINGS, _grid_segments
from . import shapes
from .extra import require_viz
from .scene import GROUND_COLOR, Scene
from .shapes import TriangleMesh

#: msgpack-lite extension codes of typed arrays, as meshcat's viewer decodes them.
TYPED_ARRAYS = {np.dtype(np.uint16): ("Uint16Array", 0x14), np.dtype(np.uint32): ("Uint32Array", 0x16), np.dtype(np.float32): ("Float32Array", 0x17)}
ROOT = "/meshcat/robot"
#: Camera viewing direction (from the target toward the camera, world frame) and field of view.
CAMERA_DIRECTION = np.array([0.55, -1.0, 0.5])
CAMERA_FOV_DEG = 75.0
#: The camera follows the robot when its motion spans more than this many robot sizes.
FOLLOW_RATIO = 6.0
#: Height of the grid lines above the ground, per metre of ground edge (drawn over it, not into it).
GRID_LIFT = 5e-4
GRID_COLOR = (0.55, 0.56, 0.55, 1.0)


def _typed_array(array: np.ndarray) -> Any:
    """A msgpack extension object that meshcat's viewer decodes into a JavaScript typed array."""
    array = np.ascontiguousarray(array)
    return require_viz("umsgpack")["umsgpack"].Ext(TYPED_ARRAYS[array.dtype][1], array.tobytes())


def _packed(array: np.ndarray, item_size: int) -> dict:
    """A three.js buffer attribute (JSON with a typed array)."""
    array = np.ascontiguousarray(array)
    return {"itemSize": item_size, "type": TYPED_ARRAYS[array.dtype][0], "array": _typed_array(array), "normalized": False}


def _hex(color: Iterable[float]) -> int:
    r, g, b = (int(round(255 * min(max(c, 0.0), 1.0))) for c in list(color)[:3])
    return (r << 16) | (g << 8) | b


def _material(color: np.ndarray, vertex_colors: bool = False, kind: str = "MeshPhongMaterial") -> dict:
    opacity = float(color[3]) if len(color) > 3 else 1.0
    return {
        "uuid": str(uuid.uuid4()),
        "type": kind,
        "color": _hex(np.ones(3) if vertex_colors else color),
        "vertexColors": 2 if vertex_colors else 0,
        "transparent": opacity < 1.0,
        "opacity": opacity,
        "side": 2,
        "shininess": 30,
    }


def mesh_object(mesh: TriangleMesh, name: str = "") -> dict:
    """The three.js JSON (meshcat ``set_object`` payload) of a triangle mesh."""
    index_type = np.uint16 if len(mesh.vertices) < 65536 else np.uint32
    attributes = {"position": _packed(mesh.vertices, 3)}
    if mesh.vertex_colors is not None:
        attributes["color"] = _packed(mesh.vertex_colors, 3)
    geometry = {"uuid": str(uuid.uuid4()), "type": "BufferGeometry", "data": {"attributes": attributes, "index": _packed(mesh.faces.astype(index_type).ravel(), 1)}}
    material = _material(mesh.color, mesh.vertex_colors is not None)
    return _object("Mesh", geometry, material, name)


def _object(kind: str, geometry: dict, material: dict, name: str) -> dict:
    return {
        "metadata": {"version": 4.5, "type": "Object"},
        "geometries": [geometry],
        "materials": [material],
        "object": {"uuid": str(uuid.uuid4()), "type": kind, "name": name, "geometry": geometry["uuid"], "material": material["uuid"], "matrix": np.eye(4).ravel().tolist()},
    }


def line_object(points: np.ndarray, color: Iterable[float], kind: str = "Line") -> dict:
    """A polyline through ``points`` (M, 3) (three.js ``Line``), or segments between pairs of them (``LineSegments``)."""
    geometry = {"uuid": str(uuid.uuid4()), "type": "BufferGeometry", "data": {"attributes": {"position": _packed(np.asarray(points, dtype=np.float32), 3)}}}
    material = _material(np.asarray(list(color), dtype=float), kind="LineBasicMaterial")
    material["linewidth"] = 2.0
    return _object(kind, geometry, material, "")


def xyzw(rotations: np.ndarray) -> np.ndarray:
    """Unit quaternions ``[x, y, z, w]`` (three.js order) of rotation matrices (..., 3, 3), sign-continuous along axis 0."""
    from scipy.spatial.transform import Rotation

    flat = rotations.reshape(-1, 3, 3)
    q = Rotation.from_matrix(flat).as_quat().reshape(rotations.shape[:-2] + (4,))
    # q and -q are one rotation; keep consecutive samples in one hemisphere so slerp takes the short way
    for k in range(1, q.shape[0]):
        flip = np.sum(q[k] * q[k - 1], axis=-1) < 0
        q[k] = np.where(flip[..., None], -q[k], q[k])
    return q


def _track(name: str, kind: str, times: np.ndarray, values: np.ndarray) -> dict:
    return {"name": name, "type": kind, "times": _typed_array(times.astype(np.float32)), "values": _typed_array(values.astype(np.float32).ravel())}


def _clip(path: str, tracks: list) -> dict:
    return {"path": path, "clip": {"fps": 1, "name": "default", "tracks": tracks}}


def _arrow_commands(scene: Scene) -> tuple[list, list]:
    """``set_object`` commands and animation clips of the scene's arrows (module docstring)."""
    arrows, t = scene.arrows, scene.times
    radius = arrows.radius
    head_length, head_radius = 3.0 * radius, 2.0 * radius
    lift = np.eye(4)
    lift[2, 3] = 0.5
    unit_shaft = shapes.cylinder(radius, 1.0, (1, 1, 1, 1), sections=12).transformed(lift)  # z from 0 to 1
    head = shapes.cone(head_radius, head_length, (1, 1, 1, 1))
    objects, clips = [], []
    length = np.linalg.norm(arrows.vectors, axis=-1)
    rotations = xyzw(shapes.z_onto(arrows.vectors))
    head_scale = np.clip(length / head_length, 0.0, 1.0)
    shaft_length = np.maximum(length - head_length * head_scale, 0.0)
    for i, name in enumerate(arrows.names):
        direction = np.where(length[:, i, None] > 0, arrows.vectors[:, i] / np.maximum(length[:, i, None], 1e-300), 0.0)
        colors = arrows.colors[:, i]
        hidden = length[:, i] <= 0
        shaft_scale = np.column_stack([np.where(hidden, 1e-6, 1.0)] * 2 + [np.maximum(shaft_length[:, i], 1e-6)])
        heads = np.column_stack([np.maximum(head_scale[:, i], 1e-6)] * 3)
        for part, mesh, position, scale in (
            ("shaft", unit_shaft, arrows.tails[:, i], shaft_scale),
            ("head", head, arrows.tails[:, i] + direction * shaft_length[:, i, None], heads),
        ):
            path = f"{ROOT}/arrows/{name}/{part}"
            objects.append({"type": "set_object", "path": path, "object": mesh_object(mesh)})
            tracks = [
                _track(".position", "vector3", t, position),
                _track(".quaternion", "quaternion", t, rotations[:, i]),
                _track(".scale", "vector3", t, scale),
                _track(".material.color", "color", t, colors),
            ]
            clips.append(_clip(f"{path}/<object>", tracks))
    return objects, clips


def _camera_commands(scene: Scene) -> tuple[list, list]:
    """Commands that aim the camera at the motion, and a clip that follows the robot when it travels far."""
    lo, hi = scene.bounds()
    target = 0.5 * (lo + hi)
    follow = float(np.linalg.norm(hi - lo)) > FOLLOW_RATIO * scene.size
    extent = (4.0 * scene.size) if follow else float(np.linalg.norm(hi - lo)) + 2.0 * scene.size
    distance = 0.5 * extent / math.tan(math.radians(CAMERA_FOV_DEG) / 2)
    direction = CAMERA_DIRECTION if scene.camera_direction is None else np.asarray(scene.camera_direction, dtype=float)
    offset = distance * direction / np.linalg.norm(direction)
    # meshcat's orbit controls turn about the viewer's origin: the scene (and the world axes) are shifted
    # by -target so that the middle of the motion sits there
    shift = np.eye(4)
    shift[:3, 3] = -target
    matrix = shift.T.ravel().tolist()
    # the camera hangs under "rotated" = Rx(+90 deg): world offset (x, y, z) is (x, z, -y) there
    local = [float(offset[0]), float(offset[2]), float(-offset[1])]
    commands = [
        {"type": "set_transform", "path": "/meshcat", "matrix": matrix},
        {"type": "set_transform", "path": "/Axes", "matrix": matrix},
        {"type": "set_property", "path": "/Cameras/default/rotated/<object>", "property": "position", "value": local},
    ]
    clips = []
    if follow:  # keep the first body (the base) at the origin: the scene slides under a following camera
        base = scene.bodies[0].poses[:, :3, 3]
        clips = [_clip("/meshcat", [_track(".position", "vector3", scene.times, -base)]), _clip("/Axes", [_track(".position", "vector3", scene.times, -base)])]
    return commands, clips


def scene_commands(scene: Scene) -> list[dict]:
    """The meshcat commands that draw and animate ``scene``, in order: each mesh sent once, the poses as
    animation tracks, the arrows, paths, markers, ground and camera."""
    t = scene.times
    commands: list[dict[str, Any]] = []
    clips = []
    for body in scene.bodies:
        path = f"{ROOT}/{body.name}"
        commands.append({"type": "set_object", "path": path, "object": mesh_object(body.mesh)})
        rotations = xyzw(body.poses[:, :3, :3])
        tracks = [_track(".position", "vector3", t, body.poses[:, :3, 3]), _track(".quaternion", "quaternion", t, rotations)]
        if body.visible is not None:  # hidden = shrunk to nothing, as a zero force's arrow
            tracks.append(_track(".scale", "vector3", t, np.repeat(np.where(body.visible, 1.0, 1e-6)[:, None], 3, axis=1)))
        clips.append(_clip(f"{path}/<object>", tracks))
    if scene.arrows is not None:
        objects, arrow_clips = _arrow_commands(scene)
        commands += objects
        clips += arrow_clips
    for name, points, color in scene.paths:
        commands.append({"type": "set_object", "path": f"{ROOT}/{name}", "object": line_object(points, color)})
    for name, points, radius, color in scene.markers:
        if len(points):
            disc = shapes.cylinder(radius, 0.1 * radius, color)
            placed = []
            for p in points:
                T = np.eye(4)
                T[:3, 3] = p + [0.0, 0.0, 0.05 * radius]
                placed.append(disc.transformed(T))
            commands.append({"type": "set_object", "path": f"{ROOT}/{name}", "object": mesh_object(shapes.merge(placed))})
    if scene.terrain is not None:
        commands.append({"type": "set_object", "path": f"{ROOT}/terrain", "object": mesh_object(scene.terrain)})
        commands.append({"type": "set_property", "path": "/Grid", "property": "visible", "value": False})
    if scene.ground is not None:
        centre, edge, z = scene.ground
        thickness = 0.01 * edge
        T = np.eye(4)
        T[:3, 3] = (centre[0], centre[1], z - 0.5 * thickness)
        commands.append({"type": "set_object", "path": f"{ROOT}/ground", "object": mesh_object(shapes.box((edge, edge, thickness), GROUND_COLOR).transformed(T))})
        spacing = min(GRID_SPACINGS, key=lambda d: abs(d - edge / 20))
        lines = _grid_segments(np.asarray(centre, dtype=float), 0.5 * edge, spacing)
        lines[..., 2] = z + GRID_LIFT * edge
        commands.append({"type": "set_object", "path": f"{ROOT}/ground_grid", "object": line_object(lines.reshape(-1, 3), GRID_COLOR, "LineSegments")})
        commands.append({"type": "set_property", "path": "/Grid", "property": "visible", "value": False})
    camera, camera_clips = _camera_commands(scene)
    commands += camera
    clips += camera_clips
    # A meshcat server stores each command at its path and replays its tree depth-first to a browser that
    # connects: stored at a path created last under ROOT, the animation comes after the meshes it drives.
    commands.append({"type": "set_animation", "path": f"{ROOT}/animation", "animations": clips, "options": {"play": True, "repetitions": math.inf}})
    return commands


def encode(command: dict) -> bytes:
    """The msgpack bytes meshcat's viewer decodes (``handle_command_bytearray``)."""
    return require_viz("umsgpack")["umsgpack"].packb(command)
