"""A robot's visual geometry: which triangle mesh rides on which joint, and where.

A :class:`Visual` is a :class:`~.shapes.TriangleMesh` rigidly attached to a
joint of a ``pinocchio.Model``: its world pose at configuration ``q`` is
``oMi[joint] * placement`` (pinocchio's ``updateGeometryPlacements``), with
``oMi`` from ``pinocchio.forwardKinematics``. :func:`robot_visuals` finds the
visuals of a model, in this order:

1. its URDF (``model.urdf_path``): every ``<visual>`` of every ``<link>``
   (mesh files with their ``scale``, boxes, cylinders, spheres), placed by the
   link's frame in the pinocchio model and the visual's ``<origin>`` (URDF
   ``rpy`` = fixed-axis roll, pitch, yaw: ``R = Rz(y) Ry(p) Rx(r)``), coloured
   by its ``<material>``; ``package://PKG/PATH`` is looked up in the
   example-robot-data share folder and next to the URDF. Parsed here rather
   than through ``pinocchio.buildGeomFromUrdf``, which builds collision
   hierarchies for every mesh the viewer does not need (design notes:
   docs/design/viewer.md); the test suite checks the placements against
   pinocchio's at random configurations;
2. its ``geometry_model`` (a ``pinocchio.GeometryModel`` of coal shapes, e.g.
   the hand's capsules), with each object's ``meshColor``;
3. otherwise capsules along the kinematic tree (joint to child joint, and leaf
   joints to their farthest frame, as the stick figure draws them).

Names are ``<link>_<k>`` (the k-th visual of a link, pinocchio's naming) or the
geometry object's name.
"""
from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np
import pinocchio as pin

from models.robot_data import robot_data_dir

from ..sim.pin_numerics import PinNumerics
from . import shapes
from .shapes import MAX_FACES, TriangleMesh

#: Colour of visuals that name no material.
DEFAULT_COLOR = (0.7, 0.7, 0.72, 1.0)
#: Radius of the stick capsules of a model without visuals, as a fraction of its longest link.
STICK_RADIUS = 0.06


@dataclass(frozen=True, eq=False)
class Visual:
    """A mesh attached to ``joint`` (index in the pinocchio model) at ``placement`` (4x4, joint frame)."""

    name: str
    joint: int
    placement: np.ndarray
    mesh: TriangleMesh


# ------------------------------------------------------------------ URDF


def _origin(element: Optional[ET.Element]) -> np.ndarray:
    """The 4x4 transform of a URDF ``<origin xyz rpy>`` (identity when absent)."""
    T = np.eye(4)
    if element is not None:
        T[:3, 3] = np.array(element.get("xyz", "0 0 0").split(), dtype=float)
        T[:3, :3] = pin.rpy.rpyToMatrix(*np.array(element.get("rpy", "0 0 0").split(), dtype=float))
    return T


def _rgba(element: Optional[ET.Element]) -> Optional[np.ndarray]:
    color = element.find("color") if element is not None else None
    return None if color is None else np.array(color.get("rgba", "0.7 0.7 0.7 1").split(), dtype=float)


def resolve_mesh_path(filename: str, urdf: Path) -> Path:
    """The file a URDF mesh ``filename`` names: ``package://PKG/PATH``, ``file://PATH``, or relative to the URDF.

    A package is looked up in the example-robot-data ``share`` folder and in
    every folder above the URDF (as ``<dir>/PKG/PATH``, or ``<dir>/PATH`` when
    ``<dir>`` is named ``PKG``). Raises ``FileNotFoundError`` naming the mesh.
    """
    if filename.startswith("file://"):
        candidates = [Path(filename[len("file://") :])]
    elif filename.startswith("package://"):
        package, _, rest = filename[len("package://") :].partition("/")
        roots = []
        try:
            roots.append(robot_data_dir().parent.parent)
        except FileNotFoundError:
            pass
        roots += list(urdf.resolve().parents)
        candidates = [root / package / rest for root in roots] + [root / rest for root in roots if root.name == package]
    else:
        candidates = [urdf.parent / filename]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"urdf: mesh {filename!r} of {urdf} not found (looked in {', '.join(str(c) for c in candidates[:4])}, ...)")


def _urdf_shape(geometry: ET.Element, urdf: Path, color: np.ndarray, max_faces: Optional[int]) -> Optional[TriangleMesh]:
    """The triangle mesh of a URDF ``<geometry>``, or None for an empty one."""
    for shape in geometry:
        tag = shape.tag
        if tag == "mesh":
            scale = np.array(shape.get("scale", "1 1 1").split(), dtype=float)
            return shapes.load_mesh_file(resolve_mesh_path(shape.get("filename", ""), urdf), scale, color, max_faces)
        if tag == "box":
            return shapes.box(np.array(shape.get("size").split(), dtype=float), color)
        if tag == "cylinder":
            return shapes.cylinder(float(shape.get("radius")), float(shape.get("length")), color)
        if tag == "sphere":
            return shapes.sphere(float(shape.get("radius")), color)
        if tag == "capsule":
            return shapes.capsule(float(shape.get("radius")), float(shape.get("length")), color)
    return None


def urdf_visuals(pin_model: pin.Model, urdf: str | os.PathLike, max_faces: Optional[int] = MAX_FACES) -> list[Visual]:
    """The ``<visual>`` elements of ``urdf`` (meshes with their scale, boxes, cylinders, spheres, with their
    colours) attached to ``pin_model``'s link frames, placed by each visual's ``<origin>``."""
    urdf = Path(urdf)
    try:
        root = ET.parse(urdf).getroot()
    except (OSError, ET.ParseError) as err:
        raise ValueError(f"urdf: cannot parse {urdf}: {err}") from err
    materials = {m.get("name"): _rgba(m) for m in root.findall("material")}
    visuals = []
    for link in root.findall("link"):
        name = link.get("name")
        elements = link.findall("visual")
        if not elements:
            continue
        if not pin_model.existFrame(name, pin.BODY):
            raise ValueError(f"urdf: link {name!r} of {urdf} is not a body frame of the model {pin_model.name!r}")
        frame = pin_model.frames[pin_model.getFrameId(name, pin.BODY)]
        for k, element in enumerate(elements):
            material = element.find("material")
            color = _rgba(material)
            if color is None and material is not None:
                color = materials.get(material.get("name"))
            geometry = element.find("geometry")
            mesh = _urdf_shape(geometry, urdf, np.asarray(DEFAULT_COLOR if color is None else color), max_faces) if geometry is not None else None
            if mesh is not None:
                placement = frame.placement.homogeneous @ _origin(element.find("origin"))
                visuals.append(Visual(f"{name}_{k}", int(frame.parentJoint), placement, mesh))
    return visuals


# ------------------------------------------------------------------ geometry models


def _coal_shape(obj: Any, max_faces: Optional[int]) -> Optional[TriangleMesh]:
    """The triangle mesh of a ``pinocchio.GeometryObject`` (coal primitive or mesh file)."""
    geometry, color = obj.geometry, np.asarray(obj.meshColor, dtype=float)
    kind = type(geometry).__name__
    if kind == "Capsule":
        return shapes.capsule(geometry.radius, 2 * geometry.halfLength, color)
    if kind == "Cylinder":
        return shapes.cylinder(geometry.radius, 2 * geometry.halfLength, color)
    if kind == "Sphere":
        return shapes.sphere(geometry.radius, color)
    if kind == "Box":
        return shapes.box(2 * np.asarray(geometry.halfSide), color)
    if obj.meshPath and Path(obj.meshPath).is_file():
        return shapes.load_mesh_file(obj.meshPath, obj.meshScale, color, max_faces)
    return None


def geometry_model_visuals(geometry_model: Any, max_faces: Optional[int] = MAX_FACES) -> list[Visual]:
    """Visuals of a ``pinocchio.GeometryModel`` (objects placed relative to their parent joint)."""
    visuals = []
    for obj in geometry_model.geometryObjects:
        mesh = _coal_shape(obj, max_faces)
        if mesh is not None:
            visuals.append(Visual(obj.name, int(obj.parentJoint), obj.placement.homogeneous, mesh))
    return visuals


def _segment_placement(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A transform whose z axis runs from point ``a`` to ``b``, origin at their middle."""
    d = b - a
    z = d / np.linalg.norm(d)
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    T = np.eye(4)
    T[:3, :3] = np.column_stack([x, np.cross(z, x), z])
    T[:3, 3] = 0.5 * (a + b)
    return T


def stick_visuals(pin_model: pin.Model) -> list[Visual]:
    """Capsules from each joint to its child joints and from each leaf joint to its farthest frame."""
    segments = []  # (joint the capsule rides on, start, end) in that joint's frame
    parents = list(pin_model.parents)
    for child in range(1, pin_model.njoints):
        if parents[child] > 0:
            segments.append((parents[child], np.zeros(3), np.asarray(pin_model.jointPlacements[child].translation)))
    for leaf in (j for j in range(1, pin_model.njoints) if j not in parents):
        tips = [np.asarray(f.placement.translation) for f in pin_model.frames if f.parentJoint == leaf]
        if tips:
            tip = max(tips, key=np.linalg.norm)
            if np.linalg.norm(tip) > 1e-9:
                segments.append((leaf, np.zeros(3), tip))
    segments = [s for s in segments if np.linalg.norm(s[2] - s[1]) > 1e-9]
    if not segments:
        return []
    radius = STICK_RADIUS * max(np.linalg.norm(e - s) for _, s, e in segments)
    return [
        Visual(f"link_{k}", joint, _segment_placement(a, b), shapes.capsule(radius, float(np.linalg.norm(b - a)), DEFAULT_COLOR))
        for k, (joint, a, b) in enumerate(segments)
    ]


def robot_visuals(model: Any, max_faces: Optional[int] = MAX_FACES) -> list[Visual]:
    """The visuals of a multibody model: from its URDF's ``<visual>`` elements, else its geometry
    model's shapes, else capsules along its kinematic tree; ``max_faces`` triangles per mesh part."""
    pin_model = model.pin_model
    if getattr(model, "urdf_path", None):
        visuals = urdf_visuals(pin_model, model.urdf_path, max_faces)
        if visuals:
            return visuals
    geometry_model = getattr(model, "geometry_model", None)
    if geometry_model is not None:
        visuals = geometry_model_visuals(geometry_model, max_faces)
        if visuals:
            return visuals
    return stick_visuals(pin_model)


def visual_poses(pin_model: pin.Model, visuals: Sequence[Visual], configurations: np.ndarray) -> np.ndarray:
    """World poses (K, len(visuals), 4, 4) of ``visuals`` at configurations (K, nq) in OUR quaternion order.

    Quaternions are normalized first (a transcription's interpolation between
    knots leaves them slightly off the unit sphere); a zero or NaN one raises.
    """
    numerics = PinNumerics(pin_model)
    data = numerics.data
    qs = np.array(np.atleast_2d(np.asarray(configurations, dtype=float)))
    for i in numerics.quat_starts:
        with np.errstate(invalid="ignore", divide="ignore"):
            qs[:, i : i + 4] /= np.linalg.norm(qs[:, i : i + 4], axis=1, keepdims=True)
    out = np.empty((qs.shape[0], len(visuals), 4, 4))
    for k, q in enumerate(qs):
        pin.forwardKinematics(pin_model, data, numerics.to_pinocchio(numerics.check_q(q, f"configurations[{k}]")))
        for i, visual in enumerate(visuals):
            out[k, i] = data.oMi[visual.joint].homogeneous @ visual.placement
    return out
