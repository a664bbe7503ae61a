"""Where :func:`.model.build_model` gets its MuJoCo bodies: the robot's URDF, or its pinocchio model.

- :func:`spec_from_urdf`: MuJoCo's own URDF parser on the file with its
  visual elements removed (and its collision elements, unless asked to keep
  them), after :func:`fold_invalid_inertias`
  has given each welded group of links holding an inertia MuJoCo refuses
  (not positive definite, or principal moments breaking the triangle
  inequality) the group's total inertia, as pinocchio computes it.
- :func:`spec_from_pinocchio`: bodies, revolute/prismatic joints and inertias
  copied from a ``pinocchio.Model`` built in Python.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, Optional, Sequence, Tuple

import mujoco
import numpy as np
import pinocchio as pin

from lie import rot_to_quat

#: pinocchio joint kinds rebuilt as MuJoCo hinges (axis) and slides.
_HINGES = {"JointModelRX": (1, 0, 0), "JointModelRY": (0, 1, 0), "JointModelRZ": (0, 0, 1)}
_SLIDES = {"JointModelPX": (1, 0, 0), "JointModelPY": (0, 1, 0), "JointModelPZ": (0, 0, 1)}
#: The collision mesh files MuJoCo reads; a URDF collision mesh in another format (COLLADA ``.dae``) is left out.
MESH_FORMATS = (".stl", ".obj", ".msh")
#: URDF inertia attributes and their matrix entries.
_INERTIA_ENTRIES = {"ixx": (0, 0), "iyy": (1, 1), "izz": (2, 2), "ixy": (0, 1), "ixz": (0, 2), "iyz": (1, 2)}


def spec_from_urdf(path: str, keep_collisions: bool = False, drop_collisions_of: Sequence[str] = ()) -> Tuple["mujoco.MjSpec", list]:
    """MuJoCo's parse of the URDF without visuals (and without collisions unless ``keep_collisions``, then
    without those of the links ``drop_collisions_of`` and the meshes MuJoCo cannot read, :data:`MESH_FORMATS`;
    ``package://`` mesh paths resolved by :func:`resolve_package_path`), and the links whose invalid inertias
    were folded (module docstring)."""
    root = ET.parse(path).getroot()
    for link in root.findall("link"):
        tags = ("visual",) if keep_collisions and link.get("name") not in drop_collisions_of else ("visual", "collision")
        for tag in tags:
            for element in link.findall(tag):
                link.remove(element)
        for collision in link.findall("collision"):
            mesh = collision.find("geometry/mesh")
            if mesh is None:
                continue
            if Path(mesh.get("filename", "")).suffix.lower() not in MESH_FORMATS:
                link.remove(collision)  # MuJoCo cannot read it (HyQ's COLLADA trunk): the link keeps its other shapes
            else:
                mesh.set("filename", resolve_package_path(mesh.get("filename", ""), path))
    for extension in root.findall("mujoco"):
        root.remove(extension)
    folded = fold_invalid_inertias(root)
    return mujoco.MjSpec.from_string(ET.tostring(root, encoding="unicode")), folded


def urdf_sphere_radius(path: str, link: str) -> Optional[float]:
    """The radius (m) of the first collision sphere of ``link`` in the URDF at ``path`` (None if it has none)."""
    for element in ET.parse(path).getroot().findall("link"):
        if element.get("name") == link:
            for collision in element.findall("collision"):
                sphere = collision.find("geometry/sphere")
                if sphere is not None:
                    return float(sphere.get("radius"))
    return None


def resolve_package_path(filename: str, urdf: str) -> str:
    """``package://NAME/REST`` as the file ``REST`` in the folder ``NAME`` that holds the URDF ``urdf`` (how
    example-robot-data lays out its robots); other names, or a package not found there, unchanged."""
    if not filename.startswith("package://"):
        return filename
    package, _, rest = filename[len("package://") :].partition("/")
    folder = package_folder(urdf, package)
    return str(folder / rest) if folder is not None else filename


def package_folder(urdf: str, package: str) -> Optional[Path]:
    """The folder named ``package`` that holds the URDF file ``urdf`` (an ancestor of it), None when there is none."""
    return next((parent for parent in Path(urdf).resolve().parents if parent.name == package), None)


def urdf_collision_geometry(robot: Any) -> pin.GeometryModel:
    """The collision shapes of ``robot``'s URDF (``urdf_path``) on its ``pin_model``; their ``package://`` mesh files
    resolve next to an example-robot-data URDF. ``ValueError`` when a mesh file cannot be found."""
    urdf = robot.urdf_path
    package = package_folder(urdf, "example-robot-data")  # its meshes are named package://example-robot-data/...
    return pin.buildGeomFromUrdf(robot.pin_model, urdf, pin.GeometryType.COLLISION, package_dirs=[str(package.parent)] if package else [])


def contact_link(robot: Any, body: str) -> str:
    """The URDF link of ``robot``'s contact point ``body``: the frame itself (a foot link), or the link an added
    contact frame sits on (the G1's sole corners: its ankle-roll link)."""
    model = robot.pin_model
    frame = model.frames[model.getFrameId(body)]
    return model.frames[frame.parentFrame].name if frame.type == pin.FrameType.OP_FRAME else body


def urdf_foot_radius(robot: Any) -> Optional[float]:
    """The contact radius (m) of ``robot``'s feet in its URDF: the radius of the first foot link's collision
    sphere (for a contact point that is a frame added on a link, such as the G1's sole corners, that link's
    sphere: the G1's soles are four 5 mm spheres), or, for contact points on a sole the URDF models as a flat
    face (Talos), the robot's ``sole_contact_radius`` (:class:`models.Humanoid`), or, for a foot modelled as a
    collision mesh (the Go2's near-spherical foot, Solo12's disc), half the largest extent of the mesh's
    vertices in the foot's frame (Go2 2.3 cm, Solo12 1.6 cm).
    None when the robot has no URDF, its foot no collision sphere or mesh, or the mesh's file cannot be
    found (``package://`` paths resolve next to an example-robot-data URDF)."""
    urdf, foot = getattr(robot, "urdf_path", None), robot.kinematics_bodies[0]
    if not urdf:
        return None
    model = robot.pin_model
    radius = urdf_sphere_radius(urdf, contact_link(robot, foot))
    if radius is None:
        radius = getattr(robot, "sole_contact_radius", None)
    if radius is not None:
        return radius
    try:
        geometry = urdf_collision_geometry(robot)
    except ValueError:  # a mesh file that cannot be found
        return None
    frame = model.getFrameId(foot)
    to_foot = model.frames[frame].placement.inverse()
    for obj in geometry.geometryObjects:
        shape = obj.geometry
        if obj.parentFrame == frame and hasattr(shape, "num_vertices") and shape.num_vertices:
            placement = to_foot * obj.placement
            vertices = np.asarray(shape.vertices()) @ placement.rotation.T + placement.translation
            return float(0.5 * np.max(vertices.max(axis=0) - vertices.min(axis=0)))
    return None


def _urdf_inertia(link: ET.Element) -> Optional[pin.Inertia]:
    """The link's inertia about its frame origin as a ``pinocchio.Inertia`` (None without ``<inertial>``)."""
    inertial = link.find("inertial")
    if inertial is None:
        return None
    origin = inertial.find("origin")
    xyz = np.array([float(s) for s in (origin.get("xyz", "0 0 0") if origin is not None else "0 0 0").split()])
    rpy = np.array([float(s) for s in (origin.get("rpy", "0 0 0") if origin is not None else "0 0 0").split()])
    mass = float(inertial.find("mass").get("value"))
    e = inertial.find("inertia")
    ixx, iyy, izz, ixy, ixz, iyz = (float(e.get(k, 0.0)) for k in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz"))
    rot = pin.rpy.rpyToMatrix(rpy)
    inertia = rot @ np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]]) @ rot.T
    return pin.Inertia(mass, xyz, inertia)


def _rejected_by_mujoco(inertia: pin.Inertia) -> bool:
    """A rotational inertia MuJoCo's compiler refuses: not zero (a massless link is accepted)
    and either not positive definite or breaking the triangle inequality of its principal moments."""
    if not np.any(inertia.inertia != 0):
        return False
    moments = np.linalg.eigvalsh(inertia.inertia)
    return bool(moments[0] <= 0 or moments[0] + moments[1] < moments[2])


def _set_urdf_inertia(link: ET.Element, inertia: Optional[pin.Inertia]) -> None:
    """Replace the link's ``<inertial>`` by ``inertia`` (about its centre of mass, link axes); remove it for None."""
    for element in link.findall("inertial"):
        link.remove(element)
    if inertia is None:
        return
    inertial = ET.SubElement(link, "inertial")
    ET.SubElement(inertial, "origin", xyz=" ".join(repr(float(c)) for c in inertia.lever), rpy="0 0 0")
    ET.SubElement(inertial, "mass", value=repr(float(inertia.mass)))
    I = inertia.inertia
    ET.SubElement(inertial, "inertia", **{k: repr(float(I[i, j])) for k, (i, j) in _INERTIA_ENTRIES.items()})


def _origin(element: Optional[ET.Element]) -> pin.SE3:
    """The placement of a URDF ``<origin xyz rpy>`` (identity when absent)."""
    values = {key: np.zeros(3) for key in ("xyz", "rpy")}
    if element is not None:
        for key in values:
            values[key] = np.array([float(v) for v in element.get(key, "0 0 0").split()])
    return pin.SE3(pin.rpy.rpyToMatrix(values["rpy"]), values["xyz"])


def fold_invalid_inertias(root: ET.Element) -> list:
    """Give each welded group of links holding an inertia MuJoCo refuses its total inertia, on the group's root link.

    A welded group is a link whose parent joint moves (or the URDF's root) and
    every link attached below it by fixed joints: one rigid body, whose inertia
    pinocchio computes as the sum of its links' (``Inertia`` addition after
    ``SE3.act``). We put that same sum on the group's root link and remove the
    other links' inertias; ``fusestatic`` then makes the group one MuJoCo body
    with exactly pinocchio's inertia. Groups whose links MuJoCo accepts are
    left as the URDF has them. Returns the names of the refused links.
    """
    links = {link.get("name"): link for link in root.findall("link")}
    welded_to: dict = {}  # child link -> (parent link, child placement in the parent's frame)
    for joint in root.findall("joint"):
        if joint.get("type") == "fixed":
            welded_to[joint.find("child").get("link")] = (joint.find("parent").get("link"), _origin(joint.find("origin")))
    groups: dict = {}  # group root -> [(link, placement in the root's frame)]
    for name in links:
        link, placement = name, pin.SE3.Identity()
        while link in welded_to:
            link, step = welded_to[link]
            placement = step * placement
        groups.setdefault(link, []).append((name, placement))
    folded = []
    for group_root, members in groups.items():
        inertias = [(name, placement, _urdf_inertia(links[name])) for name, placement in members]
        refused = [name for name, _, inertia in inertias if inertia is not None and _rejected_by_mujoco(inertia)]
        if not refused:
            continue
        total = pin.Inertia.Zero()
        for name, placement, inertia in inertias:
            if inertia is not None:
                total += placement.act(inertia)
                _set_urdf_inertia(links[name], None)
        _set_urdf_inertia(links[group_root], total)
        folded += refused
    return folded


def spec_from_pinocchio(pin_model: pin.Model) -> "mujoco.MjSpec":
    """A MuJoCo body tree of a pinocchio model built in Python (revolute, prismatic and free-flyer joints)."""
    spec = mujoco.MjSpec()
    bodies = {0: spec.worldbody}
    for jid in range(1, pin_model.njoints):
        joint, name = pin_model.joints[jid], pin_model.names[jid]
        kind = joint.shortname()
        placement = pin_model.jointPlacements[jid]
        body = bodies[pin_model.parents[jid]].add_body(name=f"{name}_body", pos=placement.translation, quat=rot_to_quat(placement.rotation))
        inertia = pin_model.inertias[jid]
        if inertia.mass > 0:
            I = inertia.inertia
            body.mass, body.ipos, body.explicitinertial = inertia.mass, inertia.lever, True
            if np.count_nonzero(I - np.diag(np.diag(I))):
                body.fullinertia = np.array([I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]])
            else:  # diagonal, possibly zero (a point mass), which fullinertia rejects
                body.inertia = np.diag(I).copy()
        if kind == "JointModelFreeFlyer":
            if jid != 1:
                raise ValueError(f"pin_model: free-flyer joint {name!r} must be the root joint")
        elif kind in _HINGES or kind == "JointModelRevoluteUnaligned":
            axis = _HINGES[kind] if kind in _HINGES else joint.extract().axis
            _add_limited_joint(body, pin_model, jid, mujoco.mjtJoint.mjJNT_HINGE, axis)
        elif kind in _SLIDES or kind == "JointModelPrismaticUnaligned":
            axis = _SLIDES[kind] if kind in _SLIDES else joint.extract().axis
            _add_limited_joint(body, pin_model, jid, mujoco.mjtJoint.mjJNT_SLIDE, axis)
        else:
            raise ValueError(f"pin_model: joint {name!r} of kind {kind} has no MuJoCo counterpart here (revolute, prismatic, free-flyer)")
        bodies[jid] = body
    return spec


def _add_limited_joint(body: Any, pin_model: pin.Model, jid: int, kind: Any, axis: Any) -> None:
    i = pin_model.joints[jid].idx_q
    lower, upper = pin_model.lowerPositionLimit[i], pin_model.upperPositionLimit[i]
    joint = body.add_joint(name=pin_model.names[jid], type=kind, axis=np.asarray(axis, dtype=float))
    if np.isfinite([lower, upper]).all() and abs(lower) < 1e300 and abs(upper) < 1e300 and lower < upper:
        joint.limited, joint.range = mujoco.mjtLimited.mjLIMITED_TRUE, np.array([lower, upper])
    else:
        joint.limited = mujoco.mjtLimited.mjLIMITED_FALSE
