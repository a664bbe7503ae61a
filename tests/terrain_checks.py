"""Acceptance checks of a plan over a terrain, measured with pinocchio and the terrain's solids.

Nothing here calls the OCP's functions: feet come from pinocchio's
``framesForwardKinematics`` at the knots and at ``samples`` points inside
every interval of the transcription's interpolant
(:meth:`trajopt.Solution.evaluate`); footing is judged against the solids of
:meth:`trajopt.terrain.Terrain.solids` (a prism's top polygon, a plane other
than a pit) with point-in-polygon and plane formulas written out here; the
friction pyramid about the solid's normal uses tangents built here. The
swing clearance is compared with the terrain's height
(:meth:`Terrain.height`) under the foot.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from trajopt.legged.link_clearance import FOOT_GAP, SHANK_SAMPLES
from trajopt.legged.terrain_constraints import clearance_required
from trajopt.terrain import Plane, Prism

from .legged_checks import pinocchio_contact_check

#: Acceptance of issue 26: stance feet on their surface to 1 mm.
SURFACE_TOL = 1e-3


def feet_positions(problem, states: np.ndarray) -> np.ndarray:
    """WORLD positions (K, nc, 3) of the feet at ``states`` (K, nx), pinocchio's frame kinematics."""
    robot = problem.robot
    model, data = robot.pin_model, robot.pin_model.createData()
    ids = [model.getFrameId(name) for name in problem.schedule.foot_names]
    out = []
    for x in np.atleast_2d(states):
        pin.framesForwardKinematics(model, data, robot.change_order(x[: robot.nq], "nominal", "pinocchio"))
        out.append([data.oMf[i].translation.copy() for i in ids])
    return np.array(out)


def _footing(solids: list, p: np.ndarray) -> tuple:
    """``(distance above the nearest standable top surface under p (m), its upward normal, inside its outline)``."""
    best = (np.inf, None, False)
    for solid in solids:
        if isinstance(solid, Prism):
            V = np.asarray(solid.vertices, dtype=float)
            edges, rel = np.roll(V, -1, axis=0) - V, p[:2] - V
            inside = bool((edges[:, 0] * rel[:, 1] - edges[:, 1] * rel[:, 0] >= -1e-9).all())  # left of every CCW edge
            gap, normal = p[2] - solid.top, np.array([0.0, 0.0, 1.0])
        elif isinstance(solid, Plane) and solid.name != "pit":
            n, o = np.asarray(solid.normal, dtype=float), np.asarray(solid.point, dtype=float)
            gap, normal, inside = p[2] - (o[2] - (n[0] * (p[0] - o[0]) + n[1] * (p[1] - o[1])) / n[2]), n, True
        else:
            continue
        if inside and abs(gap) < abs(best[0]):
            best = (gap, normal, inside)
    return best


def terrain_acceptance(problem, solution, samples: int = 10) -> dict:
    """Worst values of the acceptance checks (module docstring) of a solved terrain problem.

    ``surface``: largest ``|z - top|`` (m) of a stance foot over the standable
    solid it stands in (``inf`` when outside every one); ``slip`` (m),
    ``dynamics`` and ``torque_ratio`` as :func:`.legged_checks.pinocchio_contact_check`;
    ``friction``: largest ``max(|f.t1|, |f.t2|) - mu f.n`` (N) about the solid's normal;
    ``clearance_deficit``: largest ``c(t) - (z - h(x, y))`` (m) of a swing foot at the knots and
    ``samples`` points inside every interval, ``c(t)`` the required clearance
    (:func:`trajopt.legged.terrain_constraints.clearance_required`), ``h`` the terrain's height;
    ``min_clearance_mid_swing``: smallest ``z - h`` where ``c(t)`` is the full margin.
    """
    robot, schedule, terrain = problem.robot, problem.schedule, problem.terrain
    solids = terrain.solids()
    X, W = solution.states, solution.controls
    feet = feet_positions(problem, X)
    base = pinocchio_contact_check(problem, solution)
    forces = W[:, problem.contact_model.f_slice].reshape(len(X), robot.nc, 3)
    surface, friction = 0.0, -np.inf
    for k, i in zip(*np.nonzero(schedule.stance)):
        gap, n, _ = _footing(solids, feet[k, i])
        surface = max(surface, abs(gap))
        if n is None:
            continue
        t1 = np.array([n[2], 0.0, -n[0]]) / np.hypot(n[0], n[2])
        t2 = np.cross(n, t1)
        f = forces[k, i]
        friction = max(friction, max(abs(f @ t1), abs(f @ t2)) - robot.mu * (f @ n))
    h = solution.tf / (solution.N - 1)
    deficit, mid = -np.inf, np.inf
    for sw in problem.terrain_plan.swings:
        inside = np.arange(1, samples + 1) / (samples + 1)  # interior fractions of an interval
        intervals = range(max(sw.first - 1, 0), min(sw.last, solution.N - 2) + 1)  # lift-off and touchdown intervals too
        t = np.concatenate([h * np.arange(sw.first, sw.last + 1)] + [h * (k + inside) for k in intervals])
        x, _ = solution.evaluate(t)
        p = feet_positions(problem, x)[:, sw.foot]
        above = p[:, 2] - np.asarray(terrain.height(p[:, :2]), dtype=float)
        required = clearance_required(problem, sw, t)
        deficit = max(deficit, float((required - above).max()))
        full = np.isclose(required, problem.clearance)
        if full.any():
            mid = min(mid, float(above[full].min()))
    return {
        "surface": surface,
        "slip": base["slip"],
        "friction": friction,
        "swing_force": base["swing_force"],
        "torque_ratio": base["torque_ratio"],
        "dynamics": base["dynamics"],
        "clearance_deficit": deficit,
        "min_clearance_mid_swing": mid,
    }


def pinocchio_shanks(robot, x, samples=SHANK_SAMPLES):
    """(nf, samples, 3) shank points written out with pinocchio: knee ``oMi`` of the foot's parent joint, foot ``oMf``."""
    model = robot.pin_model
    data = model.createData()
    q = robot.change_order(np.asarray(x[: robot.nq], dtype=float), "nominal", "pinocchio")
    pin.forwardKinematics(model, data, q)
    pin.updateFramePlacements(model, data)
    out = []
    for foot in robot.kinematics_bodies:
        frame = model.frames[model.getFrameId(foot)]
        knee, tip = data.oMi[frame.parentJoint].translation, data.oMf[model.getFrameId(foot)].translation
        length = np.linalg.norm(tip - knee)
        out.append([knee + s * (tip - knee) for s in np.linspace(0.0, 1.0 - FOOT_GAP / length, samples)])
    return np.array(out)
