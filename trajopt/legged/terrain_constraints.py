"""The constraints of a legged problem on a terrain (a :class:`~.ocp.LeggedProblem` with ``terrain``).

With the :class:`~.terrain_plan.TerrainPlan` of the problem (footholds on
foot regions, swing envelopes, base reference), :func:`add_terrain_constraints`
imposes, for every foot ``i`` with position ``p = p_i(q)``:

- **Stance on the terrain.** At the touchdown knot of each stance phase
  after the start, ``p_z = h(p_x, p_y)`` on the phase's foot region
  (:mod:`trajopt.terrain.surface`) and ``A [p_x; p_y] <= b`` (inside it);
  the foot at rest there, ``J_i v = 0``; and from each stance knot to the
  next, ``p(q_k+1) = p(q_k)`` (an :class:`~trajopt.IntervalConstraint`: the
  foot does not slip; with Hermite-Simpson also at the midpoint). The
  start's stance feet stand where ``x0`` puts them.
- **Friction about the local normal** ``n`` of the region at the foot (a
  constant on planes, ``n(p)`` on a height-map cell), with tangents
  ``t1, t2`` (:func:`trajopt.terrain.surface.surface_tangents`): the pyramid
  ``mu f.n -+ f.t1 >= 0``, ``mu f.n -+ f.t2 >= 0`` (which implies
  ``f.n >= 0``), or the cone ``mu^2 (f.n)^2 - (f.t1)^2 - (f.t2)^2 >= 0``
  with ``f.n >= 0``; at every stance knot (and Hermite-Simpson midpoint).
- **Swing apex.** At the middle knot of every swing, ``p_z`` at least
  ``swing_apex`` above the higher of its lift-off and landing footholds (a
  fixed height: referred to the envelope under the foot, it would depend on
  which side of a stair's edge the foot is at that knot, and the problem
  would have one local optimum on each side).
- **Swing clearance.** ``p_z - E(p) >= c(t)`` (:mod:`trajopt.terrain.profile`,
  ``E`` the swing's envelope, at or above the terrain) at every swing knot and at
  ``clearance_samples`` evenly spaced points inside every interval of the
  swing, its lift-off and touchdown intervals included, on the
  transcription's interpolant (an :class:`~trajopt.IntervalConstraint`); and
  the foot inside the swing's corridor (``|l| <= half_width``, ``s`` within
  the window) wherever the envelope is imposed, for terrains whose envelope
  needs one. The required clearance (:func:`clearance_required`) is
  ``c(t) = clearance * Q(d / clearance_time)``, ``d`` the time since the
  foot's last stance knot or until its next one, whichever is nearer, and
  ``Q`` the smoothstep (0 at 0, 1 from 1 on, flat at both ends): the full
  margin from ``clearance_time`` after lift-off to ``clearance_time`` before
  touchdown, growing from 0 without a kink in between; ``clearance_time = 0``
  asks for the full margin at every swing knot and sample. A foot that had
  to be ``clearance`` up one knot after lifting off and come to rest one
  knot after being ``clearance`` up swings as fast as it can, a plan that
  costs more and that MuJoCo's replay does not follow
  (docs/design/terrain.md).
- **Final base position** the plan's last reference position (terrain height included).
"""
from __future__ import annotations

from typing import Any, List

import casadi as ca
import numpy as np

from ..constraints import Constraint
from ..costs import FunctionCost
from ..interval_constraints import IntervalConstraint
from ..terrain.profile import clearance, corridor_coordinates, smoothstep
from ..terrain.surface import region_rows, surface_height, surface_normal, surface_tangents
from .terrain_plan import SwingPhase, TerrainPlan

#: Interior points per interval where swinging feet are held above the terrain (the acceptance
#: check of the terrain problems looks at 10 points inside every interval).
CLEARANCE_SAMPLES = 10
#: Time (s) over which the clearance grows after lift-off and shrinks before touchdown (three knots of the Go1 gaits).
CLEARANCE_TIME = 0.06


def add_terrain_constraints(problem: Any) -> None:
    """Add the constraints of the module docstring to ``problem`` (a LeggedProblem with a terrain plan)."""
    plan: TerrainPlan = problem.terrain_plan
    rows = max((st.region.A.shape[0] for st in plan.stances), default=0)
    for i, foot in enumerate(problem.schedule.foot_names):
        _stance_constraints(problem, plan, i, foot, rows)
    _swing_constraints(problem, plan)
    target = plan.base_positions[-1]
    problem.target_base_position = target.copy()
    problem.add_constraint(Constraint(problem.robot.base_position, knots=-1, lower=target, upper=target, name="final base position"))


def _foot(problem: Any, x: Any, i: int) -> Any:
    return problem.robot.kinematics(x)[3 * i : 3 * i + 3]


def _stance_constraints(problem: Any, plan: TerrainPlan, i: int, foot: str, rows: int) -> None:
    robot = problem.robot
    phases = [st for st in plan.stances if st.foot == i]
    touchdowns = [st for st in phases if st.first > 0]
    if touchdowns:
        knots = [st.first for st in touchdowns]
        params = np.array([st.region.params(rows) for st in touchdowns])

        def on_region(x: Any, u: Any, p: Any) -> Any:
            q = _foot(problem, x, i)
            return ca.vertcat(q[2] - surface_height(p, q[0], q[1]), *region_rows(p, q[0], q[1], rows))

        lower = np.r_[0.0, np.full(rows, -np.inf)]
        upper = np.zeros(1 + rows)
        problem.add_constraint(Constraint(on_region, knots=knots, lower=lower, upper=upper, params=params, name=f"{foot} on its foot region"))
        problem.add_constraint(Constraint(lambda x: robot.kinematics_velocity(x)[3 * i : 3 * i + 3], knots=knots, name=f"{foot} touchdown at rest"))
    held = [k for st in phases for k in range(st.first, st.last)]
    if held:
        problem.add_interval_constraint(IntervalConstraint(lambda x, u, y, w: _foot(problem, y, i) - _foot(problem, x, i), intervals=held, midpoints=True, name=f"{foot} stance does not slip"))
    knots = [k for st in phases for k in range(st.first, st.last + 1)]
    if knots:
        params = np.array([next(st for st in phases if st.first <= k <= st.last).region.params(rows) for k in knots])
        problem.add_constraint(_friction_constraint(problem, i, foot, knots, params))


def _friction_constraint(problem: Any, i: int, foot: str, knots: List[int], params: np.ndarray) -> Constraint:
    """Friction rows of foot ``i``'s force about the normal of its region at the foot (module docstring)."""
    mu, s, cone = problem.robot.mu, problem.foot_force_slice(i), problem.friction == "cone"

    def rows(x: Any, w: Any, p: Any) -> Any:
        q = _foot(problem, x, i)
        n = ca.vertcat(*surface_normal(p, q[0], q[1]))
        t1, t2 = surface_tangents(n)
        f = w[s]
        fn, ft1, ft2 = ca.dot(f, n), ca.dot(f, t1), ca.dot(f, t2)
        if cone:
            return ca.vertcat(mu * mu * fn * fn - ft1 * ft1 - ft2 * ft2, fn)
        return ca.vertcat(mu * fn - ft1, mu * fn + ft1, mu * fn - ft2, mu * fn + ft2)

    return Constraint(rows, knots=knots, lower=0.0, upper=np.inf, params=params, midpoints=True, name=f"{foot} friction {problem.friction} about the terrain normal")


def add_foothold_cost(problem: Any, weight: float) -> None:
    """The running cost ``weight / 2 sum_i |p_i,xy(q) - f_i,xy|^2`` over the stance feet ``i`` and their
    nominal footholds ``f_i`` (:class:`.terrain_plan.StancePhase`): the regions bound the footholds, this picks one."""
    plan, nf = problem.terrain_plan, problem.n_feet
    params = np.zeros((problem.N, 3 * nf))
    for st in plan.stances:
        params[st.first : st.last + 1, 3 * st.foot : 3 * st.foot + 2] = st.foothold[:2]
        params[st.first : st.last + 1, 3 * st.foot + 2] = weight

    def cost(x: Any, u: Any, p: Any) -> Any:
        feet = problem.robot.kinematics(x)
        return sum(0.5 * p[3 * i + 2] * ca.sumsqr(feet[3 * i : 3 * i + 2] - p[3 * i : 3 * i + 2]) for i in range(nf))

    problem.add_cost(FunctionCost(cost, params=params, name="footholds"))


def vertical_force_implied(problem: Any) -> np.ndarray:
    """(N, nf) where a stance foot's friction rows imply ``f_z >= 0`` (so that it may be a bound too).

    A force in the friction pyramid about a normal ``n`` tilted by ``theta``
    has ``f_z = (f.n) n_z + (f.t1) t1_z + (f.t2) t2_z >= (f.n) (n_z - mu (|t1_z| + |t2_z|))``
    (the cone: ``>= (f.n) (cos theta - mu sin theta)``), non-negative when the
    bracket is: every horizontal surface, slopes up to ``atan(1 / (sqrt 2 mu))``.
    A height-map cell is checked at its corners, where its slope is largest.
    """
    plan, mu, cone = problem.terrain_plan, problem.robot.mu, problem.friction == "cone"
    out = np.zeros(problem.schedule.stance.shape, dtype=bool)
    for st in plan.stances:
        corners = st.region.vertices if len(st.region.vertices) else st.foothold[None, :2]
        ok = True
        for n in st.region.normal(corners):
            if cone:
                ok &= bool(n[2] - mu * np.sqrt(max(0.0, 1.0 - n[2] ** 2)) >= 0)
            else:
                t1, t2 = surface_tangents(n)
                ok &= bool(n[2] - mu * (abs(t1[2]) + abs(t2[2])) >= 0)
        out[st.first : st.last + 1, st.foot] = ok
    return out


def clearance_required(problem: Any, swing: SwingPhase, t: Any) -> np.ndarray:
    """The clearance (m) a swinging foot keeps above its envelope at times ``t`` (s) of its swing (module docstring):
    ``clearance * Q(min(t - t_lift, t_land - t) / clearance_time)``, ``Q`` the smoothstep, ``t_lift``
    the last stance knot before the swing (none at the start: full clearance), ``t_land`` the first after it."""
    h = problem.tf_guess / (problem.N - 1)
    t = np.asarray(t, dtype=float)
    since = t - (swing.first - 1) * h if swing.first > 0 else np.full(t.shape, np.inf)
    until = (swing.last + 1) * h - t if swing.last + 1 < problem.N else np.full(t.shape, np.inf)
    near = np.minimum(since, until)
    if problem.clearance_time == 0:
        return np.where(near > 0, problem.clearance, 0.0)
    return problem.clearance * smoothstep(near / problem.clearance_time)


def _swing_constraints(problem: Any, plan: TerrainPlan) -> None:
    """Clearance (and corridor) rows of every swing, at its knots and inside its intervals (module docstring).

    The rows inside the intervals come as one interval constraint per set of
    feet in the air together (a trot has two), so that each interval samples
    the transcription's interpolant once for all its swinging feet.
    """
    if not plan.swings:
        return
    steps = max(len(sw.profile.steps) for sw in plan.swings)
    ramp, base = plan.swings[0].profile.ramp, plan.swings[0].profile.base
    corridor = any(sw.profile.has_corridor for sw in plan.swings)
    h = problem.tf_guess / (problem.N - 1)

    def rows(q: Any, p: Any) -> list:
        out = [clearance(p, q, steps, ramp, base)]
        return out + list(corridor_coordinates(p, q[0], q[1])) if corridor else out

    def bounds(sw: SwingPhase, floor: float) -> tuple:
        if not corridor:
            return np.array([floor]), np.array([np.inf])
        lo, hi = sw.profile.corridor_bounds()
        return np.r_[floor, lo], np.r_[np.inf, hi]

    for i, foot in enumerate(problem.schedule.foot_names):
        swings = [sw for sw in plan.swings if sw.foot == i]
        if not swings:
            continue
        knots, params, lower, upper = [], [], [], []
        for sw in swings:
            for k in range(sw.first, sw.last + 1):
                lo, hi = bounds(sw, float(clearance_required(problem, sw, k * h)))
                knots.append(k)
                params.append(sw.profile.params(steps))
                lower.append(lo)
                upper.append(hi)
        fn = lambda x, u, p, i=i: ca.vertcat(*rows(_foot(problem, x, i), p))  # noqa: E731
        problem.add_constraint(Constraint(fn, knots=knots, lower=np.array(lower), upper=np.array(upper), params=np.array(params), name=f"{foot} swing clearance"))
        if problem.swing_apex > 0:
            heights = np.array([[max(sw.lift[2], sw.land[2]) + problem.swing_apex] for sw in swings])
            problem.add_constraint(Constraint(lambda x, i=i: _foot(problem, x, i)[2], knots=[sw.apex_knot for sw in swings], lower=heights, upper=np.inf, name=f"{foot} swing apex"))
    if not problem.clearance_samples:
        return
    # interval k -> the swings covering it: inside a swing, or its lift-off / touchdown interval
    cover: dict = {}
    for sw in plan.swings:
        for k in range(max(sw.first - 1, 0), min(sw.last, problem.N - 2) + 1):
            cover.setdefault(k, []).append(sw)
    groups: dict = {}
    for k in sorted(cover):
        groups.setdefault(tuple(sorted(sw.foot for sw in cover[k])), []).append(k)
    fractions = np.arange(1, problem.clearance_samples + 1) / (problem.clearance_samples + 1)
    names = problem.schedule.foot_names
    for feet, intervals in groups.items():
        params, lower, upper = [], [], []
        for k in intervals:
            by_foot = {sw.foot: sw for sw in cover[k]}
            params.append(np.concatenate([by_foot[i].profile.params(steps) for i in feet]))
            lo_k, hi_k = [], []
            for s in fractions:  # per point: each foot's rows
                for i in feet:
                    lo, hi = bounds(by_foot[i], float(clearance_required(problem, by_foot[i], (k + s) * h)))
                    lo_k.append(lo)
                    hi_k.append(hi)
            lower.append(np.concatenate(lo_k))
            upper.append(np.concatenate(hi_k))
        size = len(params[0]) // len(feet)

        def fn(x: Any, u: Any, y: Any, w: Any, p: Any, feet: tuple = feet, size: int = size) -> Any:
            return ca.vertcat(*[r for j, i in enumerate(feet) for r in rows(_foot(problem, y, i), p[j * size : (j + 1) * size])])

        label = "+".join(names[i] for i in feet)
        problem.add_interval_constraint(
            IntervalConstraint(fn, intervals=intervals, fractions=fractions, lower=np.array(lower), upper=np.array(upper), params=np.array(params), name=f"{label} swing clearance between knots")
        )
