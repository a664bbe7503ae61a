"""Quadrupeds from any URDF: the four 3-joint legs, their feet, leg roles and standing height.

A quadruped here is a floating-base pinocchio model whose base carries four
legs: chains of three revolute joints (hip, thigh, calf), each the only child
of the previous one, the calf joint a leaf of the joint tree, with the foot a
frame on the calf beyond the knee. Other branches at the base (an arm, a
head) may be present; their joints are simply not legs.

Conventions (REP 103): the base frame has ``x`` forward, ``y`` left, ``z``
up. Leg roles are :data:`LEG_ROLES`, front-left, front-right, hind-left,
hind-right, assigned from the feet's ``(x, y)`` in the base frame at zero
joint angles (where :meth:`models.LeggedRobot.init_state` puts them under
the hips): the two feet farthest forward are the front pair, and in each pair
the one with the larger ``y`` is the left foot.

The foot of a leg, when not given, is the frame on the calf body that is a
leaf of pinocchio's frame tree (no frame hangs below it) and lies farthest
from the knee; :func:`find_feet` returns the four in role order.
"""
from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np
import pinocchio as pin

from .leg_ik import LegGeometry, legs_from_feet
from .robot_data import installed_urdfs, is_floating, load_pinocchio_model

#: Leg roles in the order every quadruped's legs are listed: front-left, front-right, hind-left, hind-right.
LEG_ROLES = ("FL", "FR", "HL", "HR")
ROLE_NAMES = {"FL": "front-left", "FR": "front-right", "HL": "hind-left", "HR": "hind-right"}
#: Margin (m) by which the front feet must lie ahead of the hind feet, and the left feet left of the right ones.
ROLE_MARGIN = 1e-3
#: Distance from the thigh joint to the foot, in the leg's plane, as a fraction of thigh + calf
#: when standing: Go1's stance (0.27 m base height, thigh + calf 0.426 m, hip and thigh
#: joints at the base's height), i.e. a knee bent by about 100 degrees from straight.
STANDING_REACH = 0.27 / 0.426
#: Joints per leg.
LEG_JOINTS = 3


class NotAQuadrupedError(ValueError):
    """The model is not a floating-base quadruped with four 3-joint legs (the message says why)."""


def _children(model: pin.Model) -> list[list[int]]:
    children: list[list[int]] = [[] for _ in range(model.njoints)]
    for joint in range(1, model.njoints):
        children[model.parents[joint]].append(joint)
    return children


def _chain(children: list[list[int]], first: int) -> list[int]:
    """Joints from ``first`` down while each has exactly one child (the last one has 0 or several)."""
    chain = [first]
    while len(children[chain[-1]]) == 1:
        chain.append(children[chain[-1]][0])
    return chain


def _foot_frame(model: pin.Model, data: pin.Data, calf: int) -> str | None:
    """The leaf frame on joint ``calf`` farthest from it (``data`` at the neutral configuration)."""
    has_child = {frame.parentFrame for frame in model.frames}
    leaves = [i for i, frame in enumerate(model.frames) if frame.parentJoint == calf and i not in has_child]
    if not leaves:
        return None
    knee = data.oMi[calf].translation
    distances = [np.linalg.norm(data.oMf[i].translation - knee) for i in leaves]
    return model.frames[leaves[int(np.argmax(distances))]].name


def _describe_branches(model: pin.Model, children: list[list[int]]) -> str:
    parts = []
    for first in children[1]:
        chain = _chain(children, first)
        kind = "branching" if children[chain[-1]] else "ending"
        parts.append(f"{model.names[first]} ({len(chain)} joints, then {kind})")
    return ", ".join(parts) or "none"


def find_feet(pin_model: pin.Model) -> tuple[str, str, str, str]:
    """The foot frames of a quadruped's four legs, in :data:`LEG_ROLES` order (FL, FR, HL, HR):
    each leg's leaf frame after three revolute joints, given its role by its position.

    Raises :class:`NotAQuadrupedError` with one line saying why when the model
    has no floating base, or not exactly four legs of three revolute joints
    ending at a foot beyond the knee, or legs that cannot be told apart as
    front/hind and left/right.
    """
    model = pin_model
    if not is_floating(model):
        raise NotAQuadrupedError(f"model {model.name!r}: not a quadruped: it has no floating base (load it with a free-flyer root)")
    children = _children(model)
    data = model.createData()
    pin.framesForwardKinematics(model, data, pin.neutral(model))
    feet = []
    for first in children[1]:
        chain = _chain(children, first)
        if len(chain) != LEG_JOINTS or children[chain[-1]]:
            continue
        foot = _foot_frame(model, data, chain[-1])
        if foot is None:
            continue
        try:
            legs_from_feet(model, [foot])
        except ValueError:  # not three revolute joints with parallel thigh and knee axes
            continue
        feet.append(foot)
    if len(feet) != len(LEG_ROLES):
        found = f"{len(feet)} leg{'s' if len(feet) != 1 else ''} ({', '.join(feet)})" if feet else "no leg"
        raise NotAQuadrupedError(
            f"model {model.name!r}: not a quadruped: found {found} of three revolute joints ending at a foot, "
            f"expected 4; branches at the base: {_describe_branches(model, children)}"
        )
    return order_feet(model, feet)


def leg_roles(legs: Sequence[LegGeometry]) -> tuple[str, ...]:
    """The role (:data:`LEG_ROLES`) of each of four legs, from its foot's ``(x, y)`` at zero angles (base frame).

    Raises :class:`NotAQuadrupedError` when there are not four legs, or the
    two front feet are not ahead of the two hind feet, or a pair's feet are
    not side by side, by :data:`ROLE_MARGIN`.
    """
    if len(legs) != len(LEG_ROLES):
        raise NotAQuadrupedError(f"legs: a quadruped has 4 legs, got {len(legs)}")
    feet = np.array([leg.hip_pos + leg.hip_to_thigh + leg.thigh + leg.calf for leg in legs])
    by_x = np.argsort(-feet[:, 0], kind="stable")
    front, hind = by_x[:2], by_x[2:]
    if feet[front, 0].min() - feet[hind, 0].max() < ROLE_MARGIN:
        raise NotAQuadrupedError(f"legs: cannot tell the front feet from the hind feet, their x in the base frame are {np.round(feet[:, 0], 4).tolist()}")
    roles = [""] * len(legs)
    for pair, (left, right) in ((front, ("FL", "FR")), (hind, ("HL", "HR"))):
        a, b = pair[np.argsort(-feet[pair, 1], kind="stable")]
        if feet[a, 1] - feet[b, 1] < ROLE_MARGIN:
            raise NotAQuadrupedError(f"legs: cannot tell left from right, the feet's y in the base frame are {np.round(feet[:, 1], 4).tolist()}")
        roles[a], roles[b] = left, right
    return tuple(roles)


def order_feet(pin_model: pin.Model, feet: Sequence[str]) -> tuple[str, str, str, str]:
    """Four foot frames (any order) sorted into :data:`LEG_ROLES` order by :func:`leg_roles`.

    Raises ``ValueError`` naming ``feet`` when it does not hold four distinct
    frames at the end of 3-joint legs (see :func:`models.leg_ik.legs_from_feet`).
    """
    feet = tuple(feet)
    if len(feet) != len(LEG_ROLES) or len(set(feet)) != len(feet):
        raise ValueError(f"feet: expected 4 distinct foot frames, got {list(feet)}")
    missing = [foot for foot in feet if not pin_model.existFrame(foot)]
    if missing:
        raise ValueError(f"feet: no frame {', '.join(map(repr, missing))} in model {pin_model.name!r}")
    roles = leg_roles(legs_from_feet(pin_model, feet))
    return tuple(feet[roles.index(role)] for role in LEG_ROLES)  # type: ignore[return-value]


def standing_height(legs: Sequence[LegGeometry], reach: float = STANDING_REACH) -> float:
    """Base height (m) at which feet under the hips are ``reach (thigh + calf)`` from the thigh joints.

    Per leg, the foot is at the zero-angle ``(x, y)`` of
    :meth:`models.LeggedRobot.leg_ends_under_hips` and at depth ``H`` below the
    base; with ``d(H)`` its offset from the thigh-joint origin projected on the
    leg's plane (perpendicular to the knee axis), ``|d(H)| = reach (thigh + calf)``
    is a quadratic in ``H`` whose larger root puts the foot below. Returns the
    mean of the legs' roots (equal for a symmetric robot).
    """
    if not 0 < reach < 1:
        raise ValueError(f"reach: expected a fraction of the leg length in (0, 1), got {reach}")
    heights = []
    for leg in legs:
        plane = leg.plane
        foot = leg.hip_pos + leg.hip_to_thigh + leg.thigh + leg.calf
        foot[2] = 0.0
        d0 = plane @ (foot - leg.hip_pos - leg.hip_to_thigh)
        up = plane @ np.array([0.0, 0.0, 1.0])  # d(H) = d0 - H up
        r = reach * (leg.thigh_length + leg.calf_length)
        a, b, c = up @ up, d0 @ up, d0 @ d0 - r * r
        if a < 1e-6 or b * b - a * c < 0:
            raise ValueError(f"legs: the {leg.joint_names[0]} leg cannot stand with its foot {r:.3f} m below its thigh joint")
        heights.append((b + np.sqrt(b * b - a * c)) / a)
    return float(np.mean(heights))


@dataclass(frozen=True)
class InstalledQuadruped:
    """A quadruped URDF of the installed example-robot-data: its names (:func:`models.robot_data.installed_urdfs`),
    file and feet in :data:`LEG_ROLES` order."""

    names: tuple[str, ...]
    urdf: Path
    feet: tuple[str, str, str, str]


def installed_quadrupeds() -> list[InstalledQuadruped]:
    """The example-robot-data URDFs that are quadrupeds (:func:`find_feet` accepts them), by first name.

    Every URDF is loaded with pinocchio (a quarter of a second for all of
    them); files pinocchio cannot parse are skipped, and what its URDF parser
    prints about them on the process's stderr is silenced.
    """
    by_file: dict[Path, list[str]] = {}
    for name, path in installed_urdfs().items():
        by_file.setdefault(path, []).append(name)
    found = []
    for path, names in by_file.items():
        try:
            with _native_stderr_silenced():
                model = load_pinocchio_model(path)
            feet = find_feet(model)
        except ValueError:  # not a quadruped, or a file pinocchio cannot parse
            continue
        found.append(InstalledQuadruped(tuple(names), path, feet))
    return sorted(found, key=lambda q: q.names[0])


@contextlib.contextmanager
def _native_stderr_silenced() -> Iterator[None]:
    """File descriptor 2 sent to /dev/null (C++ libraries write to it directly, bypassing ``sys.stderr``)."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
