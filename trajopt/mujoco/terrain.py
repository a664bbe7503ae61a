"""A terrain and the robot's bodies in MuJoCo: what the feet stand on and what must not touch it.

:func:`add_terrain` adds the solids of a :class:`trajopt.terrain.Terrain`
(:meth:`~trajopt.terrain.Terrain.solids`) as MuJoCo geoms, each moved by the
contact spheres' radius ``r`` along its surface normal (down for prisms and
height fields), as :mod:`trajopt.mujoco.model` lowers its ground plane: a sphere resting on
a surface has its centre, the plan's contact point, on the terrain the plan
saw. Planes become ``plane`` geoms (the slope's tilted), rectangular prisms
``box`` geoms and other prisms convex ``mesh`` geoms; a height grid becomes
an ``hfield`` (MuJoCo normalizes its elevations, so the geom sits at the
lowest height and ``size[2]`` spans to the highest; rows are ``y``, columns
``x``). MuJoCo triangulates a height field's cells where the plans
interpolate them bilinearly: the two agree at the grid points and differ
inside a cell by at most a quarter of its twist ``|h00 + h11 - h10 - h01|``.

:func:`add_body_collisions` gives the robot's links their URDF collision
primitives (boxes, cylinders, capsules, spheres; pinocchio reads them) so
that MuJoCo simulates, and :func:`terrain_contacts` reports, any contact of a
body other than a foot with the terrain. The feet's own shapes are left out
(the contact spheres stand for them), and every shape on a link that carries
a foot is cut back to end :data:`FOOT_CLEARANCE` short of the contact point,
along its axis nearest the foot (a shank's box reaches the foot's centre,
where the plan's contact point is), or left out when nothing of it is left
(ANYmal C's shank cover). The links meet a second copy of the terrain
(:data:`LINK_TERRAIN`), moved down by the radius of the robot's real
feet (:func:`foot_radius`, the URDF's foot sphere, 2 cm on the Go1) instead
of the small contact spheres' ``r``: the plans put the feet's centres on the
terrain, so the real terrain is a real foot's radius below them, and that is
the terrain the shanks must clear (with ``r`` = 5 mm a Go1 shank standing
near a stair's edge would sit 15 mm closer to it than it does;
docs/design/terrain.md). Collision filters: feet
and the first copy collide (``contype`` 1 against ``conaffinity`` 1),
links and the second copy (``contype`` 2 against ``conaffinity`` 2),
nothing else.
"""
from __future__ import annotations

from typing import Any, List, Optional, Tuple

import mujoco
import numpy as np
import pinocchio as pin

from lie import rot_to_quat, yaw_to_rot

from .sources import urdf_collision_geometry, urdf_sphere_radius

#: Distance [m] from a contact point within which the shapes of the link carrying it are cut back.
FOOT_CLEARANCE = 0.03
#: Collision bits (module docstring).
FOOT_BITS, BODY_BITS = 1, 2
#: Name prefix of the terrain's second copy, the one the links' shapes are checked against (module docstring).
LINK_TERRAIN = "link_terrain_"


def _quat(R: np.ndarray) -> np.ndarray:
    return np.asarray(rot_to_quat(R), dtype=float)


def foot_radius(robot: Any, default: float) -> float:
    """The radius (m) of the robot's real feet: the URDF's first collision sphere on its first foot link
    (2 cm on the Go1), ``default`` when it has no URDF or no such sphere."""
    urdf = getattr(robot, "urdf_path", None)
    radius = urdf_sphere_radius(urdf, robot.kinematics_bodies[0]) if urdf else None
    return default if radius is None else float(radius)


def add_terrain(spec: "mujoco.MjSpec", terrain: Any, radius: float, prefix: str = "terrain_") -> List[Any]:
    """The terrain's solids as geoms of ``spec``'s world body, named ``prefix`` and their index, moved
    down by ``radius`` (module docstring); returns the geoms."""
    from ..terrain import HeightGrid, Plane, Prism  # the terrain package itself needs no MuJoCo

    world, geoms = spec.worldbody, []
    for i, solid in enumerate(terrain.solids()):
        name = f"{prefix}{i}"
        if isinstance(solid, Plane):
            R = solid.rotation()
            geoms.append(world.add_geom(name=name, type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1], pos=np.asarray(solid.point) - radius * R[:, 2], quat=_quat(R)))
        elif isinstance(solid, Prism) and solid.box is not None:
            centre, half, yaw = solid.box
            geoms.append(world.add_geom(name=name, type=mujoco.mjtGeom.mjGEOM_BOX, size=half, pos=centre - [0.0, 0.0, radius], quat=_quat(yaw_to_rot(yaw))))
        elif isinstance(solid, Prism):
            V = np.asarray(solid.vertices, dtype=float)
            vertices = np.vstack([np.c_[V, np.full(len(V), solid.bottom)], np.c_[V, np.full(len(V), solid.top)]])
            spec.add_mesh(name=f"{name}_mesh", uservert=vertices.ravel().tolist())
            geoms.append(world.add_geom(name=name, type=mujoco.mjtGeom.mjGEOM_MESH, meshname=f"{name}_mesh", pos=[0.0, 0.0, -radius]))
        elif isinstance(solid, HeightGrid):
            H = np.asarray(solid.heights, dtype=float)
            low, span = float(H.min()), max(float(H.max() - H.min()), 1e-6)
            x0, x1, y0, y1 = solid.extent
            field = spec.add_hfield(name=f"{name}_field", nrow=H.shape[1], ncol=H.shape[0], size=[0.5 * (x1 - x0), 0.5 * (y1 - y0), span, max(low - solid.bottom, 1e-3)])
            field.userdata = ((H - low) / span).T.ravel().tolist()
            geoms.append(world.add_geom(name=name, type=mujoco.mjtGeom.mjGEOM_HFIELD, hfieldname=f"{name}_field", pos=[0.5 * (x0 + x1), 0.5 * (y0 + y1), low - radius]))
        else:  # pragma: no cover - every solid type is handled above
            raise TypeError(f"terrain: unknown solid {type(solid).__name__}")
    for geom in geoms:
        geom.rgba = np.array([0.62, 0.60, 0.55, 1.0])
    return geoms


def _cut_back(size: np.ndarray, placement: pin.SE3, kind: str, foot: np.ndarray) -> Optional[Tuple[np.ndarray, pin.SE3]]:
    """A box (half sizes) or cylinder/capsule (radius, half length) shortened along its axis nearest
    ``foot`` (joint frame) to end :data:`FOOT_CLEARANCE` short of it; unchanged when it already does; ``None`` when
    nothing of it is left (the whole shape lies within that distance of the foot, as ANYmal C's shank cover does)."""
    R, c = placement.rotation, placement.translation
    axes = [0, 1, 2] if kind == "box" else [2]
    halves = list(size) if kind == "box" else [size[1]]
    local = R.T @ (foot - c)
    j = max(range(len(axes)), key=lambda k: abs(local[axes[k]]) / max(halves[k], 1e-9))
    axis, half, reach = axes[j], halves[j], local[axes[j]]
    end = abs(reach) - FOOT_CLEARANCE
    if end >= half:
        return size, placement
    lo, hi = -half, min(half, end)
    if hi <= lo:
        return None
    new_half = 0.5 * (hi - lo)
    shift = np.zeros(3)
    shift[axis] = np.sign(reach) * 0.5 * (hi + lo)
    size = np.array(size, dtype=float)
    if kind == "box":
        size[axis] = new_half
    else:
        size[1] = new_half
    return size, pin.SE3(R, c + R @ shift)


def add_body_collisions(spec: "mujoco.MjSpec", robot: Any, body_of_joint: Any) -> List[str]:
    """The URDF collision primitives of ``robot``'s links as geoms (module docstring); returns their names.

    ``body_of_joint(joint_id)`` gives the MuJoCo body whose frame is that
    pinocchio joint's. A robot without a URDF has no shapes to add.
    """
    urdf = getattr(robot, "urdf_path", None)
    if not urdf:
        return []
    model = robot.pin_model
    geometry = urdf_collision_geometry(robot)
    feet = {model.getFrameId(b): model.frames[model.getFrameId(b)] for b in robot.kinematics_bodies}
    foot_joints = {f.parentJoint: f.placement.translation for f in feet.values()}
    names = []
    for k, obj in enumerate(geometry.geometryObjects):
        if obj.parentFrame in feet:
            continue
        shape, placement = obj.geometry, obj.placement
        kind = type(shape).__name__.lower()
        if kind == "box":
            size = np.asarray(shape.halfSide, dtype=float)
        elif kind in ("cylinder", "capsule"):
            size = np.array([shape.radius, shape.halfLength])
        elif kind == "sphere":
            size = np.array([shape.radius])
        else:  # meshes and other shapes: MuJoCo would need the files; not checked
            continue
        if size.max() < 1e-3:  # the URDF's millimetre placeholders of sensors
            continue
        foot = foot_joints.get(obj.parentJoint)
        if foot is not None:
            if kind == "sphere":
                if np.linalg.norm(placement.translation - foot) < size[0] + FOOT_CLEARANCE:
                    continue
            else:
                kept = _cut_back(size, placement, "box" if kind == "box" else "cylinder", foot)
                if kept is None:
                    continue
                size, placement = kept
        mj_type = {"box": mujoco.mjtGeom.mjGEOM_BOX, "cylinder": mujoco.mjtGeom.mjGEOM_CYLINDER, "capsule": mujoco.mjtGeom.mjGEOM_CAPSULE, "sphere": mujoco.mjtGeom.mjGEOM_SPHERE}[kind]
        name = f"body_{k}_{obj.name}"
        geom = body_of_joint(obj.parentJoint).add_geom(name=name, type=mj_type, size=np.r_[size, np.zeros(3 - len(size))], pos=placement.translation, quat=_quat(placement.rotation))
        geom.contype, geom.conaffinity, geom.group = BODY_BITS, 0, 3
        names.append(name)
    return names


def terrain_contacts(model: "mujoco.MjModel", data: "mujoco.MjData", body_geoms: np.ndarray, terrain_geoms: np.ndarray) -> List[Tuple[int, int, float]]:
    """``(body geom, terrain geom, depth [m])`` of every contact MuJoCo found between a body and the terrain (after ``mj_forward``/``mj_step``)."""
    bodies, ground = set(int(g) for g in body_geoms), set(int(g) for g in terrain_geoms)
    out = []
    for c in range(data.ncon):
        con = data.contact[c]
        pair = (int(con.geom1), int(con.geom2))
        if pair[0] in bodies and pair[1] in ground:
            out.append((pair[0], pair[1], float(-con.dist)))
        elif pair[1] in bodies and pair[0] in ground:
            out.append((pair[1], pair[0], float(-con.dist)))
    return out


def terrain_distance(model: "mujoco.MjModel", data: "mujoco.MjData", body_geoms: np.ndarray, terrain_geoms: np.ndarray, reach: float = 0.2) -> Tuple[float, int]:
    """Smallest signed distance [m] (negative: penetration) between a body geom and the terrain, and that body geom
    (``inf``, -1 when none comes within ``reach``); after ``mj_kinematics``."""
    best, which = np.inf, -1
    for b in body_geoms:
        for t in terrain_geoms:
            d = mujoco.mj_geomDistance(model, data, int(b), int(t), reach, None)
            if d < best:
                best, which = d, int(b)
    return float(best), which
