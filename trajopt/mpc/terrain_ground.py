"""The ground of a receding horizon over a terrain of horizontal foot regions: stairs.

:class:`TerrainGround` gives the legged horizon (:class:`~trajopt.mpc.legged.LeggedMPC`)
what :class:`~trajopt.mpc.ground_plane.GroundPlane` gives it on one plane,
read from a :class:`trajopt.terrain.BlockTerrain` whose surfaces are
horizontal (every block's top and the floor). Its floor must give footing:
over stepping stones (footing on the blocks only) the footholds below, each
chosen for one landing, made the Go1 fall in MuJoCo, and such terrains are
refused (docs/design/mpc.md): their tasks follow the solved plan instead
(:func:`trajopt.mpc.tasks.requires_its_plan`).

- **heights:** ``z = h(x, y) + c``, ``h`` the terrain's height and ``c`` the
  offset of the stance feet from it, estimated at every tick as on a plane
  (the mean of ``p_z - h(p_x, p_y)`` over the stance feet: a soft ground lets
  them sink a few millimetres); touchdown rows hold a landing foot at the
  height of its foothold;
- **friction:** the pyramid about ``e_z`` (every foot region is horizontal);
- **footholds inside the regions:** a swing's target is moved to the nearest
  point of the foot regions, each shrunk by :data:`FOOTHOLD_MARGIN` where it
  is wide enough, by less where it is not (a narrow box)
  (:meth:`TerrainGround.foothold`), and at the landing knot the foot is held
  within :data:`LANDING_TOLERANCE` of its foothold, inside that region's
  axis-aligned rows (:meth:`TerrainGround.foothold_box`: exact for the
  rectangles of stairs laid along ``x``);
- **swing clearance over edges:** from knot 3 on, at the swing knots where
  the swing's envelope ``E`` (:meth:`trajopt.terrain.Terrain.swing_profile`
  in a corridor of :data:`SWING_CORRIDOR` about the swing's path: the
  terrain's shape from lift-off to foothold, its valleys filled, its rises
  ramped) rises above the lift-off's level, the foot ``p`` is held
  ``p_z - E(p_x, p_y) >= c(s)``, a hard row as in the offline plans; ``c``
  is ``clearance`` grown from 0 over the first and last
  :data:`CLEARANCE_PHASE` of the swing ``s`` (:meth:`TerrainGround.required_clearance`);
  the swing's reference path keeps the full clearance above ``E``;
- **the trunk following the ground:** its reference stands
  ``standing_height`` above the least-squares plane through the terrain under
  its four hips, each hip's height the mean of the terrain over
  :data:`HIP_SPAN` along the heading (so the plane tilts gradually as the hips
  cross an edge), its ``z`` axis along that plane's normal and its ``x``
  axis the heading tilted into it, as the offline plans fit the base's plane
  through the feet (:func:`~trajopt.legged.terrain_plan.base_rotation`).
"""
from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from ..legged.scaling import GaitScale
from ..legged.terrain_plan import base_rotation
from ..terrain.blocks import BlockTerrain
from ..terrain.profile import PROFILE_HEAD, STEP_SIZE, clearance, envelope, smoothstep

#: Half length (m, the Go1's; scaled) along the heading over which the terrain under a hip is averaged.
HIP_SPAN = 0.1
#: Points of that average.
HIP_SAMPLES = 9
#: Half width (m, the Go1's; scaled) of the corridor about a swing's straight path whose terrain its envelope covers:
#: the offline plans' 8 cm corridor, tilted with a short sideways swing, reached the next stair from the foot's start.
SWING_CORRIDOR = 0.04
#: Distance (m, the Go1's; scaled) a foothold keeps from its region's edges where the region is wide enough: a Go1's
#: shank slopes back over the riser behind a foot that lands just past a stair's edge, and touched it.
FOOTHOLD_MARGIN = 0.07
#: How far (m, the Go1's; scaled) from a swing's target its foothold is searched.
SEARCH_RADIUS = 0.3
#: How far (m, the Go1's; scaled) from its foothold a foot may land (the touchdown knot's box): left to the cost
#: alone, feet came down behind their footholds, some on a stair's edge (docs/design/mpc.md).
LANDING_TOLERANCE = 0.03
#: The largest sink (m) of a stance foot below the terrain that its height estimate reads (a foot deeper than this, or
#: above the terrain by as much, is not standing where the terrain says: a foot off a stair's edge).
OFFSET_LIMIT = 0.05
#: Horizontal resolution (m) of the caches of foothold regions and swing envelopes: targets that move less share them.
CACHE_RESOLUTION = 0.002
#: Entries a cache holds before it is emptied.
CACHE_SIZE = 512
#: Steps of a swing's envelope the horizon's rows hold (a swing over stairs crosses one or two edges).
PROFILE_STEPS = 4
#: Length of a swing's envelope parameters (:meth:`TerrainGround.swing_params`).
PROFILE_SIZE = PROFILE_HEAD + STEP_SIZE * PROFILE_STEPS
#: Fraction of a swing at each end over which its clearance above the envelope grows from 0 (the Go1 trot's 0.2 s swing: 0.04 s).
CLEARANCE_PHASE = 0.2


class TerrainGround:
    """The horizontal foot regions of ``terrain`` (a :class:`trajopt.terrain.BlockTerrain` whose floor gives footing)
    under a robot whose feet stand at ``hips`` (4, 2) from its base in the heading frame (module docstring).

    ``clearance`` (m): the swing's margin over the terrain's envelope; ``span`` (m): the half length of a hip's
    height average; ``corridor`` (m): the half width of a swing's envelope; ``foothold_margin`` (m): how far a
    foothold keeps from its region's edges; ``search_radius`` (m): how far from a target its foothold is
    searched; ``landing_tolerance`` (m): how far from its foothold a foot may land. :meth:`for_robot` scales the
    Go1's values of the module's constants to a robot. ``ValueError`` for another terrain."""

    def __init__(
        self, terrain: Any, hips: Any, clearance: float, span: float = HIP_SPAN, corridor: float = SWING_CORRIDOR, foothold_margin: float = FOOTHOLD_MARGIN, search_radius: float = SEARCH_RADIUS,
        landing_tolerance: float = LANDING_TOLERANCE,
    ) -> None:
        if not isinstance(terrain, BlockTerrain):
            raise ValueError(f"terrain: expected a BlockTerrain (horizontal foot regions), got {type(terrain).__name__}")
        if not terrain.floor_standable:
            raise ValueError(
                f"terrain: {terrain.name} gives footing on its blocks only; footholds chosen one landing at a time, "
                "each the nearest point of a region, do not keep a quadruped on stepping stones (the Go1 fell in MuJoCo)"
            )
        self.terrain = terrain
        self.hips = np.asarray(hips, dtype=float).reshape(-1, 2)
        self.clearance, self.span, self.corridor = float(clearance), float(span), float(corridor)
        #: how far footholds keep from their region's edges, tried in turn: the first that leaves a region a point
        self.margins = (float(foothold_margin), 0.75 * foothold_margin, 0.5 * foothold_margin, terrain.margin)
        #: how far (m) from a target its foothold is searched: the leg's reach about its hip
        self.search_radius = search_radius
        #: how far (m) from its foothold a foot may land (:meth:`foothold_box`)
        self.landing_tolerance = landing_tolerance
        self._regions: dict = {}
        self._profiles: dict = {}
        self.offset = 0.0
        self.normal = np.array([0.0, 0.0, 1.0])
        self._along = np.linspace(-self.span, self.span, HIP_SAMPLES)
        self._fit = np.linalg.pinv(np.c_[np.ones(len(self.hips)), self.hips])  # (3, 4): heights under the hips -> (c, a_x, a_y)

    @classmethod
    def for_robot(cls, terrain: Any, robot: Any, clearance: float) -> "TerrainGround":
        """The ground of ``terrain`` under ``robot`` (a :class:`models.LeggedRobot`): its standing feet as the hips,
        the module's Go1 lengths scaled by its legs (:class:`~trajopt.legged.scaling.GaitScale`)."""
        x = robot.init_state()
        feet = np.asarray(robot.kinematics(x), dtype=float).reshape(-1, 3)
        scale = GaitScale.of(robot)
        return cls(
            terrain, feet[:, :2] - robot.base_position(x)[:2], clearance, scale.distance(HIP_SPAN), scale.distance(SWING_CORRIDOR), scale.distance(FOOTHOLD_MARGIN), scale.distance(SEARCH_RADIUS),
            scale.distance(LANDING_TOLERANCE),
        )

    # ------------------------------------------------------------ what a plane gives too
    #: length of a swing's envelope parameters (:meth:`swing_params`)
    profile_size = PROFILE_SIZE
    #: the envelope parameters of the floor at z = 0 (the rows' parameters where no foot swings; their bounds are infinite)
    flat_params = np.r_[0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, np.zeros(STEP_SIZE * PROFILE_STEPS)]
    #: the base's reference tilts with the ground under it
    tilts_base = True
    #: footholds are held inside foot regions (:meth:`foothold_box`)
    has_regions = True

    def holding_ratio(self) -> float:
        """0: every foot region is horizontal."""
        return 0.0

    def height(self, xy: Any, offset: Optional[float] = None) -> np.ndarray:
        """The terrain's height (K,) at ``xy`` (K, 2) or (2,) plus ``offset`` (default 0)."""
        xy = np.asarray(xy, dtype=float)
        h = self.terrain.height(xy.reshape(-1, 2)) + (0.0 if offset is None else offset)
        return h if xy.ndim > 1 else float(h[0])

    def relative_height(self, p: Any) -> Any:
        """``p_z`` (numpy or CasADi): the touchdown rows' bounds carry each foothold's height."""
        return p[2]

    def local_force(self, f: Any) -> Any:
        """``f`` itself: the pyramid about ``e_z``."""
        return f

    def offset_of(self, points: np.ndarray) -> float:
        """The mean of ``p_z - h(p_x, p_y)`` (m) over the stance feet ``points`` (K, 3) within :data:`OFFSET_LIMIT`
        of the terrain: how far they stand above it (0 when none is)."""
        points = np.atleast_2d(np.asarray(points, dtype=float))
        above = points[:, 2] - self.terrain.height(points[:, :2])
        near = np.abs(above) <= OFFSET_LIMIT
        return float(np.mean(above[near])) if near.any() else 0.0

    # ------------------------------------------------------------ the trunk
    def base_frames(self, xy: np.ndarray, headings: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """The ground's height (K,) under base positions ``xy`` (K, 2) at ``headings`` (K,) and the base's reference
        rotations (K, 3, 3): the plane fitted through the terrain under the hips (module docstring).

        The fit is done in the heading frame, where the hips sit at the same offsets ``d_i`` at every knot:
        ``z_i = c + a . d_i`` is solved by one pseudo-inverse for all knots, ``c`` is the height under the base
        and ``R(psi) a`` the world gradient ``(g_x, g_y)``."""
        xy, headings = np.atleast_2d(np.asarray(xy, dtype=float)), np.atleast_1d(np.asarray(headings, dtype=float))
        c, s = np.cos(headings), np.sin(headings)
        R = np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)  # (K, 2, 2) heading frame -> world
        hips = xy[:, None, :] + np.einsum("kij,hj->khi", R, self.hips)  # (K, 4, 2)
        samples = hips[:, :, None, :] + self._along[None, None, :, None] * R[:, None, None, :, 0]  # (K, 4, S, 2) along the heading
        z = self.terrain.height(samples.reshape(-1, 2)).reshape(samples.shape[:3]).mean(axis=2)  # (K, 4)
        fit = z @ self._fit.T  # (K, 3): c, a_x, a_y in the heading frame
        gradient = np.einsum("kij,kj->ki", R, fit[:, 1:])
        normal = np.column_stack([-gradient, np.ones(len(xy))]) / np.sqrt(1.0 + np.sum(gradient**2, axis=1))[:, None]
        return fit[:, 0], base_rotation(normal, headings)

    # ------------------------------------------------------------ the feet
    def footholds(self, xy: np.ndarray, offset: float, toward: Optional[np.ndarray] = None) -> np.ndarray:
        """The footholds (K, 3) of targets ``xy`` (K, 2) (:meth:`foothold` of each distinct one, with ``toward`` (K, 2))."""
        xy = np.asarray(xy, dtype=float)
        toward = xy if toward is None else np.asarray(toward, dtype=float)
        _, index, inverse = np.unique(np.c_[xy, toward], axis=0, return_index=True, return_inverse=True)
        return np.array([self.foothold(xy[j], offset, toward[j]) for j in index])[np.ravel(inverse)]

    def foothold(self, xy: Any, offset: float, toward: Optional[np.ndarray] = None) -> np.ndarray:
        """The foothold (3,) for a target ``xy`` (2,): ``xy`` itself where it lies well inside a foot region (its
        region shrunk by :data:`FOOTHOLD_MARGIN`), else its nearest point in the :meth:`foothold_region` of ``toward``
        (default ``xy``: the reference's target decides on which side of an edge a target between two regions lands), at
        that region's height plus ``offset``."""
        xy = np.asarray(xy, dtype=float)
        region = self.terrain.region_at(xy, self.margins[0])
        if region is None or not region.contains(xy)[0]:
            region = self.foothold_region(xy if toward is None else np.asarray(toward, dtype=float))
        p = region.closest_point(xy)
        return np.r_[p, float(region.height(p)[0]) + offset]

    def foothold_region(self, xy: np.ndarray) -> Any:
        """The foot region (shrunk) a target ``xy`` (2,) is moved into: of the regions within :attr:`search_radius`,
        each shrunk by the largest of :attr:`margins` that leaves it a point, the one nearest ``xy``; ``ValueError``
        when none is there. Cached for targets within :data:`CACHE_RESOLUTION` of each other."""
        key = tuple(np.round(xy / CACHE_RESOLUTION).astype(int))
        if key in self._regions:
            return self._regions[key]
        region = self.terrain.region_at(xy, self.margins[0])
        if region is None or not region.contains(xy)[0]:  # not well inside the region under it: the nearest
            best = None
            for candidate in self.terrain.regions_near(xy, self.search_radius, 0.0):
                for margin in self.margins:
                    shrunk = candidate.shrunk(margin)
                    try:
                        distance = float(np.linalg.norm(shrunk.closest_point(xy) - xy))
                    except ValueError:  # too small for this margin
                        continue
                    if best is None or distance < best[0]:
                        best = (distance, shrunk)
                    break
            if best is None:
                raise ValueError(f"terrain: no foot region within {self.search_radius:.2f} m of ({xy[0]:.3f}, {xy[1]:.3f})")
            region = best[1]
        return _remember(self._regions, key, region)

    def foothold_box(self, foothold: np.ndarray) -> np.ndarray:
        """``(x_lo, x_hi, y_lo, y_hi)`` where a foot aimed at ``foothold`` (2,) or (3,) lands: within
        :attr:`landing_tolerance` of it, inside the rows along the axes of its foot region (shrunk by the terrain's
        margin; other rows are left out), widened by 1 mm so that the foothold itself lies inside."""
        xy = np.asarray(foothold, dtype=float)[:2]
        box = np.array([xy[0] - self.landing_tolerance, xy[0] + self.landing_tolerance, xy[1] - self.landing_tolerance, xy[1] + self.landing_tolerance])
        region = self.terrain.region_at(xy)
        for a, b in zip(region.A, region.b) if region is not None else ():
            for axis in (0, 1):
                if abs(a[1 - axis]) < 1e-12 and abs(a[axis]) > 1e-12:
                    bound = b / a[axis]
                    if a[axis] > 0:
                        box[2 * axis + 1] = min(box[2 * axis + 1], max(bound, xy[axis]) + 1e-3)
                    else:
                        box[2 * axis] = max(box[2 * axis], min(bound, xy[axis]) - 1e-3)
        return box

    def swing_params(self, start: np.ndarray, end: np.ndarray) -> np.ndarray:
        """The envelope's parameter vector (:data:`PROFILE_SIZE`,) of a swing from ``start`` to ``end``
        (:meth:`trajopt.terrain.Terrain.swing_profile`, padded to :data:`PROFILE_STEPS` steps); cached for ends within
        :data:`CACHE_RESOLUTION` of each other.

        The profile covers the terrain some way before and after the swing; of more steps than the rows hold, those
        whose ramp ends a corridor's half width before the lift-off are folded into its base level and those that
        start as far past the foothold are dropped. ``ValueError`` when the swing itself crosses more."""
        key = tuple(np.round(np.r_[start[:2], end[:2]] / CACHE_RESOLUTION).astype(int))
        if key in self._profiles:
            return self._profiles[key]
        profile = self.terrain.swing_profile(start[:2], end[:2], half_width=self.corridor)
        plane, steps = profile.plane.copy(), profile.steps
        if len(steps) > PROFILE_STEPS:
            length = float(np.linalg.norm(np.asarray(end[:2]) - np.asarray(start[:2])))
            before, after = steps[:, 0] + profile.ramp < -self.corridor, steps[:, 0] > length + self.corridor
            plane[0] += steps[before, 1].sum()
            steps = steps[~before & ~after]
            if len(steps) > PROFILE_STEPS:
                raise ValueError(f"terrain: a swing from {np.round(start[:2], 3)} to {np.round(end[:2], 3)} crosses {len(steps)} edges; the horizon's rows hold {PROFILE_STEPS}")
        table = np.zeros((PROFILE_STEPS, STEP_SIZE))
        table[: len(steps)] = steps
        return _remember(self._profiles, key, np.concatenate([profile.start, profile.direction, plane, table.ravel()]))

    def clearance_row(self, params: Any, p: Any) -> Any:
        """``p_z - E(p_x, p_y)`` (CasADi or numpy) of a foot ``p`` (3,) over the envelope of ``params`` (:meth:`swing_params`)."""
        return clearance(params, p, PROFILE_STEPS, self.terrain.ramp)

    def required_clearance(self, phases: np.ndarray) -> np.ndarray:
        """The clearance (K,) a swinging foot keeps at ``phases`` (K,) in [0, 1] of its swing: ``clearance``, grown from
        0 over the first and last :data:`CLEARANCE_PHASE` of the swing by a smoothstep."""
        near = np.minimum(phases, 1.0 - phases) / CLEARANCE_PHASE
        return self.clearance * smoothstep(np.clip(near, 0.0, 1.0))

    def envelope(self, params: np.ndarray, points: np.ndarray) -> np.ndarray:
        """The envelope ``E`` (K,) of ``params`` (:meth:`swing_params`) at horizontal ``points`` (K, 2)."""
        points = np.atleast_2d(points)
        return np.ravel(envelope(params, points[:, 0], points[:, 1], PROFILE_STEPS, self.terrain.ramp))


def _remember(cache: dict, key: tuple, value: Any) -> Any:
    """``value`` stored under ``key`` in ``cache``, which is emptied first when it holds :data:`CACHE_SIZE` entries."""
    if len(cache) >= CACHE_SIZE:
        cache.clear()
    cache[key] = value
    return value
