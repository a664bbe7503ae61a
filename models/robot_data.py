"""Offline robot descriptions: example-robot-data URDFs, pinocchio loading, URDF limits.

The ``example-robot-data`` wheel installs its robots under its cmeel prefix,
``<site-packages>/cmeel.prefix/share/example-robot-data/robots/``; nothing here
downloads anything. :func:`urdf_path` maps a short robot name to a file there
(:data:`KNOWN_ROBOTS`, or the name :func:`installed_urdfs` gives any other
URDF of the installed wheel),
:func:`load_pinocchio_model` builds a ``pinocchio.Model`` (with a free-flyer root
for floating-base robots), :func:`read_urdf_limits` collects the per-joint
position, velocity and effort limits pinocchio parsed, and
:func:`urdf_joint_order` gives the order in which a URDF file's kinematic tree
lists its movable joints (the order MuJoCo uses when it loads the file).
"""
from __future__ import annotations

import os
import re
import site
import sys
import tempfile
import xml.etree.ElementTree as ET
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Iterator

import numpy as np
import pinocchio as pin

from models.inertia_check import check_body_inertias

#: Location of the robots folder relative to a site-packages directory.
ROBOTS_SUBDIR = Path("cmeel.prefix", "share", "example-robot-data", "robots")

#: Short robot names and their URDF files relative to :func:`robot_data_dir`.
KNOWN_ROBOTS: dict[str, str] = {
    "go1": "go1_description/urdf/go1.urdf",
    "go2": "go2_description/urdf/go2.urdf",
    "a1": "a1_description/urdf/a1.urdf",
    "b1": "b1_description/urdf/b1.urdf",
    "laikago": "laikago_description/urdf/laikago.urdf",
    "solo12": "solo_description/robots/solo12.urdf",
    "anymal": "anymal_b_simple_description/robots/anymal.urdf",  # ANYmal B, the one crocoddyl's examples use
    "anymal_b": "anymal_b_simple_description/robots/anymal.urdf",
    "anymal_c": "anymal_c_simple_description/urdf/anymal.urdf",
    "hyq": "hyq_description/robots/hyq_no_sensors.urdf",
    "g1": "g1_description/urdf/g1_29dof_rev_1_0.urdf",
    "talos": "talos_data/robots/talos_reduced.urdf",
    "bolt": "bolt_description/robots/bolt.urdf",
    "quadrotor": "hector_description/robots/quadrotor_base.urdf",
    "double_pendulum": "double_pendulum_description/urdf/double_pendulum.urdf",
    "ur5": "ur_description/urdf/ur5_robot.urdf",
    "panda": "panda_description/urdf/panda.urdf",
}


def robot_data_dir() -> Path:
    """The example-robot-data ``robots`` folder, found offline.

    Searches every ``sys.path`` entry and the interpreter's site-packages
    directories for ``cmeel.prefix/share/example-robot-data/robots``.
    Raises ``FileNotFoundError`` when no entry has it.
    """
    entries = [*sys.path, *site.getsitepackages(), site.getusersitepackages()]
    for entry in entries:
        candidate = Path(entry or ".") / ROBOTS_SUBDIR
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"example-robot-data robots folder '{ROBOTS_SUBDIR}' not found under any sys.path "
        "or site-packages entry; install it with `pip install example-robot-data`"
    )


def installed_urdfs() -> dict[str, Path]:
    """Every URDF file of the installed example-robot-data, by robot name, sorted by name.

    Files of :data:`KNOWN_ROBOTS` appear under their short names (a file may
    have several, e.g. ``anymal`` and ``anymal_b``); every other file under its
    stem (``anymal-kinova``, ``b1-z1``), or its path relative to the robots
    folder without ``.urdf`` when another file has the same stem.
    """
    root = robot_data_dir()
    files = sorted(path.relative_to(root) for path in root.rglob("*.urdf"))
    known = {Path(rel): name for name, rel in KNOWN_ROBOTS.items()}
    others = [rel for rel in files if rel not in known]
    stems = [rel.stem for rel in others]
    names = {name: root / rel for name, rel in KNOWN_ROBOTS.items() if (root / rel).is_file()}
    for rel, stem in zip(others, stems):
        unique = stems.count(stem) == 1 and stem not in names
        names[stem if unique else rel.with_suffix("").as_posix()] = root / rel
    return dict(sorted(names.items()))


def urdf_path(name: str) -> Path:
    """Path of the URDF of a robot in example-robot-data by name, e.g. ``"go1"``.

    ``name`` is a key of :data:`KNOWN_ROBOTS` or a name from
    :func:`installed_urdfs`. Raises ``ValueError`` for an unknown name (listing
    the known ones) and ``FileNotFoundError`` when the installed
    example-robot-data lacks the file.
    """
    if name in KNOWN_ROBOTS:
        path = robot_data_dir() / KNOWN_ROBOTS[name]
        if not path.is_file():
            raise FileNotFoundError(f"URDF of robot {name!r} not found at {path}")
        return path
    installed = installed_urdfs()
    if name not in installed:
        raise ValueError(f"name: unknown robot {name!r}; known robots: {', '.join(sorted(KNOWN_ROBOTS))} (and the other URDFs of example-robot-data by file name, see installed_urdfs)")
    return installed[name]


def load_pinocchio_model(urdf: str | Path, floating: bool = True) -> pin.Model:
    """Build a ``pinocchio.Model`` from a URDF file, checked to be a physical robot.

    With ``floating=True`` the root link is attached to the world by a
    free-flyer joint (pinocchio configuration ``[x, y, z, qx, qy, qz, qw, ...]``,
    tangent ``[v_body, w_body, ...]``); otherwise the root link is fixed.
    Raises ``FileNotFoundError`` for a missing file and ``ValueError`` naming
    the file when pinocchio cannot parse it, naming the link when urdfdom
    could not read one of its elements (pinocchio would load the robot
    without it: a trunk whose ``<inertial>`` has an unreadable mass becomes a
    massless trunk), and naming the link and the joint when a body's merged
    inertia is not physical (:func:`models.inertia_check.check_body_inertias`).
    Loading prints nothing unless urdfdom warns.
    """
    if not isinstance(urdf, (str, os.PathLike)):
        raise TypeError(f"urdf: expected a path to a URDF file, got {type(urdf).__name__} {urdf!r}")
    path = Path(urdf)
    if not path.is_file():
        raise FileNotFoundError(f"urdf: no such file {path}")
    failure = None
    with tempfile.TemporaryFile() as log:
        try:
            with _stderr_to(log):  # urdfdom prints its parse errors (with its C++ source lines) to the process's stderr
                model = pin.buildModelFromUrdf(str(path), *([pin.JointModelFreeFlyer()] if floating else []))
        except (RuntimeError, ValueError) as err:
            failure = str(err)
        log.seek(0)
        printed = [line.strip() for line in log.read().decode(errors="replace").splitlines() if line.strip()]
    errors = [re.sub(r"^(Error:\s*)+", "", line) for line in printed if line.startswith("Error:")]
    if failure is not None:
        details = [re.sub(r"^(Error:\s*)+", "", line) for line in printed if not line.startswith("at line ")]
        raise ValueError(f"urdf: pinocchio could not parse {path}: {failure}" + "".join(f"; {d}" for d in details))
    if errors:
        links = sorted(set(re.findall(r"Link \[([^\]]*)\]", " ".join(errors))))
        where = f"link {links[0]!r}" if len(links) == 1 else f"links {links}" if links else "an element"
        raise ValueError(f"urdf: {path}: {where}: {'; '.join(errors)} (pinocchio loads the file without what urdfdom could not read: a wrong robot)")
    warnings = [line for line in printed if not line.startswith("at line ")]
    if warnings:  # urdfdom's warnings belong on stderr
        print("\n".join(warnings), file=sys.stderr)
    check_body_inertias(model, str(path))
    return model


@contextmanager
def _stderr_to(log: IO[bytes]) -> Iterator[None]:
    """Send the process's stderr (file descriptor 2, C++ output included) to ``log`` during the block."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        os.dup2(log.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def is_floating(model: pin.Model) -> bool:
    """True when the model's first joint is a free flyer attached to the world."""
    return model.njoints > 1 and model.joints[1].shortname() == "JointModelFreeFlyer"


def joint_position_limits(model: pin.Model, joint_id: int) -> tuple[float, float]:
    """Position limits ``(lower, upper)`` of a 1-DoF joint; ``(-inf, inf)`` for an
    unbounded revolute joint (configuration ``[cos, sin]``)."""
    joint = model.joints[joint_id]
    if joint.nv != 1:
        raise ValueError(f"model: joint {model.names[joint_id]!r} ({joint.shortname()}) has {joint.nv} DoF, expected 1")
    if joint.nq != 1:
        return -np.inf, np.inf
    i = joint.idx_q
    lower, upper = _unbounded_as_inf(np.array([model.lowerPositionLimit[i], model.upperPositionLimit[i]]))
    return float(lower), float(upper)


def _unbounded_as_inf(values: np.ndarray) -> np.ndarray:
    """Pinocchio marks "no limit" with +-DBL_MAX; return those entries as +-inf."""
    values = np.asarray(values, dtype=float)
    return np.where(np.abs(values) >= np.finfo(float).max, np.copysign(np.inf, values), values)


@dataclass(frozen=True, eq=False)
class JointLimits:
    """Limits of the actuated (non-root) joints of a pinocchio model, in tangent order.

    ``v_indices[i]`` is joint ``names[i]``'s index in the velocity (tangent)
    vector and ``q_indices[i]`` its index in pinocchio's configuration vector.
    ``lower``/``upper`` are position limits (rad or m; ``-inf``/``inf`` for
    unbounded revolute joints, whose configuration is ``[cos, sin]``),
    ``velocity`` and ``effort`` the symmetric velocity and effort limits
    (pinocchio's "unlimited" ``DBL_MAX`` is reported as ``inf``).
    """

    names: tuple[str, ...]
    v_indices: np.ndarray
    q_indices: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray


def read_urdf_limits(model: pin.Model) -> JointLimits:
    """Joint limits pinocchio read from the URDF, one entry per 1-DoF non-root joint.

    A free-flyer root joint (the floating base) is skipped. Every other joint
    must have one degree of freedom (revolute, prismatic or unbounded
    revolute); any other kind raises ``ValueError`` naming the joint.
    """
    names, v_idx, q_idx, lower, upper = [], [], [], [], []
    first = 2 if is_floating(model) else 1
    for jid in range(first, model.njoints):
        joint = model.joints[jid]
        names.append(model.names[jid])
        v_idx.append(joint.idx_v)
        q_idx.append(joint.idx_q)
        lo, hi = joint_position_limits(model, jid)
        lower.append(lo)
        upper.append(hi)
    v_indices = np.asarray(v_idx, dtype=int)
    return JointLimits(
        names=tuple(names),
        v_indices=v_indices,
        q_indices=np.asarray(q_idx, dtype=int),
        lower=np.asarray(lower, dtype=float),
        upper=np.asarray(upper, dtype=float),
        velocity=_unbounded_as_inf(model.velocityLimit[v_indices]),
        effort=_unbounded_as_inf(model.effortLimit[v_indices]),
    )


def urdf_joint_order(urdf: str | Path) -> list[str]:
    """Names of a URDF file's movable (non-fixed) joints in kinematic-tree order.

    Depth-first from the root link, each link's child joints taken in the order
    their ``<joint>`` elements appear in the file. This is the order MuJoCo
    numbers the joints when it loads the file (pinocchio instead sorts sibling
    branches by name). Raises ``FileNotFoundError``/``ValueError`` for a
    missing or malformed file.
    """
    if not isinstance(urdf, (str, os.PathLike)):
        raise TypeError(f"urdf: expected a path to a URDF file, got {type(urdf).__name__} {urdf!r}")
    path = Path(urdf)
    if not path.is_file():
        raise FileNotFoundError(f"urdf: no such file {path}")
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as err:
        raise ValueError(f"urdf: cannot parse {path}: {err}") from err
    children: dict[str, list[ET.Element]] = {}
    child_links = set()
    for joint in root.findall("joint"):
        parent, child = joint.find("parent"), joint.find("child")
        if parent is None or child is None:
            raise ValueError(f"urdf: joint {joint.get('name')!r} in {path} lacks <parent> or <child>")
        children.setdefault(parent.get("link"), []).append(joint)
        child_links.add(child.get("link"))
    roots = [link.get("name") for link in root.findall("link") if link.get("name") not in child_links]
    if len(roots) != 1:
        raise ValueError(f"urdf: {path} has {len(roots)} root links {roots}, expected 1")
    order: list[str] = []
    stack = list(reversed(children.get(roots[0], [])))
    while stack:
        joint = stack.pop()
        if joint.get("type") != "fixed":
            order.append(joint.get("name"))
        stack.extend(reversed(children.get(joint.find("child").get("link"), [])))
    return order
