"""Shank clearance: the legs' lower links held above the terrain or the flat ground, not only the feet.

A foot can stand where its shank cannot: a Go1's knee points backward, so a
hind foot landing just past a gap's far edge has its shank sloping up and back
over that edge, and a deep crouch lays it low enough to meet the corner
(go1-gap before this constraint: docs/design/terrain.md).
:func:`add_link_clearance` imposes, for every leg ``i`` at every knot ``k``
after the first and each point ``p`` of its shank (:func:`shank_points`),

    p_z - E_ik(p_x, p_y) >= link_clearance,

``E_ik`` a smooth envelope at or above the terrain (:mod:`trajopt.terrain.profile`):

- while the foot stands, the terrain's envelope along the robot's heading
  through its foothold, a leg length (:attr:`models.LeggedRobot.leg_length`)
  before and after it (where the shank can reach), across a corridor of the
  same half width: it fills valleys (a gap, the pits between stones) up to
  the lower of their rims, so the shank clears a gap's edges by the margin;
- while it swings, the swing's own envelope (:class:`.terrain_plan.SwingPhase`),
  which the foot itself keeps ``clearance`` above.

Heights are those of the plan's surface, which carries the feet's centres; a
real foot of radius ``r`` puts the ground ``r`` lower (2 cm on the Go1), and a
shank of half thickness ``t`` reaches ``t sqrt 2`` below its axis (the Go1's
calf box: 8 mm, so 11 mm): with ``link_clearance = 0`` the Go1's calves keep
at least ``r - t sqrt 2 = 9`` mm from the real terrain at the knots, away from
the envelope's ramps (which lie above the terrain).

On flat ground (:func:`add_ground_clearance`) the envelope is the ground
itself: ``p_z >= link_clearance`` for every leg at every knot after the
first, at the shank's two ends (the knee and the last point before the foot;
a straight segment's lowest point over a plane is one of its ends). A deep
landing crouch otherwise lays a knee on (or, in the plan, into) the ground:
Solo12's jump, planned without the rows, puts a hind knee 5.4 cm below it
(docs/design/legged.md). :func:`lowest_shank_point` finds the lowest shank
end of a trajectory, for the solve's report.

A shank runs from its knee ``k`` (the origin of the joint that carries the
foot frame) to the foot ``f``; its points are ``p = k + s (f - k)`` for
:data:`SHANK_SAMPLES` fractions ``s`` evenly spaced from 0 (the knee) to
``1 - FOOT_GAP / |f - k|``: the last :data:`FOOT_GAP` of the shank is the
foot, which stands on the terrain.
"""
from __future__ import annotations

from typing import Any, List, Tuple

import casadi as ca
import numpy as np

from ..constraints import Constraint
from ..terrain.profile import SwingProfile, clearance
from .terrain_plan import TerrainPlan

#: Points per shank where the clearance is imposed (module docstring).
SHANK_SAMPLES = 5
#: Length [m] at the foot's end of a shank that counts as the foot (the MuJoCo check cuts the
#: links' collision shapes back by as much, :data:`trajopt.mujoco.terrain.FOOT_CLEARANCE`).
FOOT_GAP = 0.03


def shank_lengths(robot: Any) -> np.ndarray:
    """Distance [m] (nf,) from each foot frame to the origin of its parent joint (the knee): the shank's length."""
    model = robot.pin_model
    return np.array([np.linalg.norm(model.frames[model.getFrameId(b)].placement.translation) for b in robot.kinematics_bodies])


def has_shanks(robot: Any) -> bool:
    """Whether every foot of ``robot`` is longer than :data:`FOOT_GAP` from its knee, so that its shank can be sampled."""
    return bool((shank_lengths(robot) > FOOT_GAP).all())


def shank_fractions(robot: Any, samples: int = SHANK_SAMPLES) -> np.ndarray:
    """(nf, samples) fractions ``s`` of the way from each knee to its foot of the shank points (module docstring)."""
    lengths = shank_lengths(robot)
    if (lengths <= FOOT_GAP).any():
        raise ValueError(f"robot: shanks of {np.round(lengths, 4).tolist()} m are too short to sample above the foot ({FOOT_GAP} m)")
    return np.outer(1.0 - FOOT_GAP / lengths, np.linspace(0.0, 1.0, samples))


def shank_ends(robot: Any) -> np.ndarray:
    """(nf, 2) fractions of each shank's two ends, the knee and its last point before the foot: over a plane, a straight
    shank's lowest point is one of them."""
    return shank_fractions(robot)[:, [0, -1]]


def shank_points(robot: Any, x: Any, fractions: np.ndarray) -> List[Any]:
    """World positions of the shank points: one (3, samples) matrix per foot (numpy or CasADi ``x``).

    ``fractions`` (nf, samples) from :func:`shank_fractions`; the knee is the
    world position of the foot frame's parent joint (:meth:`models.multibody.engine.RigidBodyTree.joint_placements`).
    """
    q = x[: robot.nq]
    joints = robot.tree.joint_placements(q)
    feet = robot.kinematics(x)
    out = []
    for i, parent in enumerate(robot.contact_parents()):
        knee = joints[parent][1]
        f = feet[3 * i : 3 * i + 3]
        out.append(ca.horzcat(*[knee + s * (f - knee) for s in fractions[i]]) if isinstance(knee, (ca.SX, ca.MX)) else np.column_stack([np.ravel(knee) + s * (np.ravel(f) - np.ravel(knee)) for s in fractions[i]]))
    return out


def stance_profile(plan: TerrainPlan, foothold: np.ndarray, reach: float) -> SwingProfile:
    """The terrain's envelope along the heading through ``foothold``, ``reach`` before and after it, ``reach`` wide each side."""
    u = np.array([np.cos(plan.heading), np.sin(plan.heading)])
    return plan.terrain.swing_profile(foothold[:2] - reach * u, foothold[:2] + reach * u, reach, plan.heading)


def leg_profiles(problem: Any) -> List[List[SwingProfile]]:
    """``profiles[k][i]``: the envelope leg ``i``'s shank keeps above at knot ``k`` (module docstring)."""
    plan: TerrainPlan = problem.terrain_plan
    reach = float(problem.robot.leg_length)
    out: List[List[Any]] = [[None] * problem.n_feet for _ in range(problem.N)]
    for st in plan.stances:
        profile = stance_profile(plan, st.foothold, reach)
        for k in range(st.first, st.last + 1):
            out[k][st.foot] = profile
    for sw in plan.swings:
        for k in range(sw.first, sw.last + 1):
            out[k][sw.foot] = sw.profile
    return out


def add_link_clearance(problem: Any, margin: float) -> None:
    """Hold every shank point ``margin`` [m] above its leg's envelope at every knot after the first (module docstring)."""
    robot, N, nf = problem.robot, problem.N, problem.n_feet
    fractions = shank_fractions(robot)
    profiles = leg_profiles(problem)
    every = [p for row in profiles for p in row]
    steps = max(len(p.steps) for p in every)
    ramps, bases = {p.ramp for p in every}, {p.base for p in every}
    if len(ramps) > 1 or len(bases) > 1:
        raise ValueError(f"terrain: shank envelopes with {len(ramps)} ramp widths and {len(bases)} base heights cannot share one constraint")
    ramp, base = every[0].ramp, every[0].base
    size = len(every[0].params(steps))
    knots = list(range(1, N))
    params = np.array([np.concatenate([profiles[k][i].params(steps) for i in range(nf)]) for k in knots])

    def rows(x: Any, u: Any, p: Any) -> Any:
        points = shank_points(robot, x, fractions)
        return ca.vertcat(*[clearance(p[i * size : (i + 1) * size], points[i][:, j], steps, ramp, base) for i in range(nf) for j in range(fractions.shape[1])])

    problem.add_constraint(Constraint(rows, knots=knots, lower=float(margin), upper=np.inf, params=params, name="shanks above the terrain"))


def add_ground_clearance(problem: Any, margin: float) -> None:
    """Hold both ends of every shank ``margin`` [m] above the flat ground ``z = 0`` at every knot after the first (module docstring)."""
    robot, N = problem.robot, problem.N
    ends = shank_ends(robot)

    def rows(x: Any) -> Any:
        return ca.vertcat(*[points[2, :].T for points in shank_points(robot, x, ends)])

    problem.add_constraint(Constraint(rows, knots=list(range(1, N)), lower=float(margin), upper=np.inf, name="shanks above the ground"))


def lowest_shank_point(robot: Any, states: np.ndarray) -> Tuple[float, int, int]:
    """The lowest of the shanks' end points (module docstring) over ``states`` (K, n) after the first: its height
    ``z`` [m] (the flat ground at ``z = 0`` carries the feet's centres), its foot's index and its knot."""
    ends = shank_ends(robot)
    heights = np.array([[points[2].min() for points in shank_points(robot, x, ends)] for x in states[1:]])
    k, foot = np.unravel_index(int(np.argmin(heights)), heights.shape)
    return float(heights[k, foot]), int(foot), int(k) + 1
