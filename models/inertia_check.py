"""Physical consistency of a ``pinocchio.Model``'s body inertias, checked when a URDF is loaded.

Pinocchio merges every link fixed to a joint's child link into one body,
whose inertia is ``model.inertias[j]``: its mass ``m``, the centre of mass
``c`` in the joint's frame, and the rotational inertia ``I_c`` about ``c``.
A body of a real robot has

- a finite mass ``m >= 0``;
- ``I_c`` symmetric positive semi-definite: principal moments
  ``I_1 <= I_2 <= I_3``, all ``>= 0``;
- the triangle inequality ``I_1 + I_2 >= I_3``, which every mass
  distribution meets (``I_1 + I_2 - I_3 = 2 * integral of r_3^2 dm`` along
  the third principal axis).

Shipped URDFs round their inertias: point masses whose moments are 1e-20
below zero, a dummy link with one moment of 3e-6 kg m^2. Each test therefore
allows ``TOLERANCE`` of the body's largest moment plus ``FLOOR`` kg m^2;
a body outside it is a wrong robot (a typo, a sign, a moment in the wrong
unit), whose dynamics are not those of any mass distribution.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

#: Allowed violation of the tests, relative to the body's largest principal moment.
TOLERANCE = 1e-6
#: Allowed violation in kg m^2 whatever the body's moments (round-off of point masses).
FLOOR = 1e-12


def inertia_problem(inertia: pin.Inertia) -> str | None:
    """What makes one body's inertia non-physical (``None`` when it is physical), in words with its numbers."""
    mass = float(inertia.mass)
    if not np.isfinite(mass) or mass < 0:
        return f"mass {mass:g} kg (expected finite and >= 0)"
    rotational = np.asarray(inertia.inertia, dtype=float)
    if not np.isfinite(rotational).all():
        return f"rotational inertia with non-finite entries {rotational.ravel().tolist()}"
    moments = np.linalg.eigvalsh(0.5 * (rotational + rotational.T))
    allowed = TOLERANCE * max(moments[2], 0.0) + FLOOR
    shown = ", ".join(f"{m:.4g}" for m in moments)
    if moments[0] < -allowed:
        return f"principal moments {shown} kg m^2: not positive semi-definite"
    if moments[0] + moments[1] - moments[2] < -allowed:
        return f"principal moments {shown} kg m^2 break the triangle inequality I1 + I2 >= I3"
    return None


def body_links(model: pin.Model, joint: int) -> list[str]:
    """The links merged into the body that ``joint`` moves: its child link first, then the links fixed to it."""
    links = [f for f in model.frames if f.type == pin.FrameType.BODY and f.parentJoint == joint]
    child = [f.name for f in links if model.frames[f.parentFrame].type == pin.FrameType.JOINT]
    return child + [f.name for f in links if f.name not in child]


def fixed_link_problems(model: pin.Model, joint: int) -> dict[str, str]:
    """The links fixed to ``joint``'s body whose own inertia is non-physical, with what is wrong.

    Pinocchio keeps a fixed link's own inertia on the frame of the fixed
    joint that attaches it (the frame before the link's body frame).
    """
    problems = {}
    for frame in model.frames:
        before = model.frames[frame.parentFrame] if frame.type == pin.FrameType.BODY else None
        if frame.parentJoint == joint and before is not None and before.type == pin.FrameType.FIXED_JOINT:
            problem = inertia_problem(before.inertia)
            if problem is not None:
                problems[frame.name] = problem
    return problems


def check_body_inertias(model: pin.Model, source: str) -> None:
    """``ValueError`` naming the first body of ``model`` (read from ``source``) whose inertia is not physical.

    The message names the link at fault when one of the links fixed to the
    body is non-physical on its own, and otherwise the body's child link,
    the links fixed to it (pinocchio's merge) and the joint; with the failed
    test and its numbers.
    """
    for joint in range(1, model.njoints):
        problem = inertia_problem(model.inertias[joint])
        if problem is None:
            continue
        culprits = fixed_link_problems(model, joint)
        if culprits:
            link, own = next(iter(culprits.items()))
            raise ValueError(f"urdf: {source}: link {link!r} (fixed to the body of joint {model.names[joint]!r}) has a non-physical inertia: {own}")
        links = body_links(model, joint)
        merged = f" (with the links fixed to it: {', '.join(links[1:6])}{', ...' if len(links) > 6 else ''})" if len(links) > 1 else ""
        link = f"link {links[0]!r}" if links else "the body"
        raise ValueError(f"urdf: {source}: {link}{merged}, moved by joint {model.names[joint]!r}, has a non-physical inertia: {problem}")
