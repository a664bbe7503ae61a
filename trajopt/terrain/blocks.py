"""Terrains of flat-topped blocks on a floor: flat ground, stairs, stepping stones, boxes, gaps.

A :class:`BlockTerrain` is a horizontal floor at ``floor`` and vertical
prisms (:class:`~.geometry.Prism`: a convex polygon from ``bottom`` to
``top``). The height at ``(x, y)`` is the highest top of the blocks whose
polygon holds the point (closed polygons), else the floor's; every surface is
horizontal, so the normal is ``e_z`` (the vertical faces count as the top of
their block). The floor may be a pit bottom that gives no footing
(``floor_standable=False``: stepping stones and gaps).

Foot regions: a block's top polygon shrunk by the margin, at its top; on a
standable floor, the square of half width :data:`FLOOR_REGION` around the
point cut by one edge of every block that rises above the floor (the edge
the point is farthest outside of, moved out by the margin), a convex region
that keeps clear of the blocks.

Swing envelopes (:mod:`.profile`): the highest top over the corridor,
across the path, is a piecewise-constant function of ``s``: each block's
polygon clipped to the corridor spans an interval of ``s``; the breaks are
those intervals' ends and each piece's level the highest top (or the floor)
over it, valleys filled (:func:`~.profile.fill_valleys`: a foot stepping
from stone to stone keeps above their tops). A swing with no block within :data:`CORRIDOR_REACH` of its corridor
gets the floor's height and no corridor.

Constructors (world frame, the robot starting at the origin facing ``+x``
unless ``heading`` turns the feature): :func:`flat`, :func:`stairs`,
:func:`stepping_stones`, :func:`stone_lanes`, :func:`boxes`, :func:`gap`.
"""
from __future__ import annotations

from typing import Any, List, Optional, Sequence

import numpy as np

from lie import _backend as B

from .base import SWING_HALF_WIDTH, SWING_OVERHANG, Terrain, as_points, swing_frame
from .geometry import Plane, Prism, Solid
from .profile import SwingProfile, fill_valleys, steps_of_levels
from .surface import Surface, polygon_halfspaces

#: Half width [m] of the square a floor region is cut from.
FLOOR_REGION = 0.5
#: A swing with no block within this distance [m] of its corridor needs no corridor.
CORRIDOR_REACH = 0.5
#: Default ramp width [m] of the swing envelopes (:mod:`.profile`): a steeper envelope is a stiffer
#: constraint, which costs IPOPT iterations (docs/design/terrain.md).
RAMP = 0.04


class BlockTerrain(Terrain):
    """A floor at ``floor`` [m] and ``blocks`` (:class:`~.geometry.Prism`) (module docstring).

    ``floor_standable``: whether feet may stand on the floor; ``ramp`` and
    ``margin``: :class:`~.base.Terrain`; ``name`` a short description.
    """

    def __init__(self, blocks: Sequence[Prism] = (), floor: float = 0.0, floor_standable: bool = True, ramp: float = RAMP, margin: Optional[float] = None, name: str = "blocks") -> None:
        super().__init__(ramp, margin)
        self.floor = B.real(floor, "floor")
        self.floor_standable = bool(floor_standable)
        self.name = name
        self.blocks: List[Prism] = []
        self._halfspaces = []
        for i, block in enumerate(blocks):
            if not isinstance(block, Prism):
                raise TypeError(f"blocks[{i}]: expected a trajopt.terrain.Prism, got {type(block).__name__}")
            if not (np.isfinite(block.top) and np.isfinite(block.bottom) and block.bottom < block.top):
                raise ValueError(f"blocks[{i}]: expected finite bottom < top, got bottom {block.bottom}, top {block.top}")
            self._halfspaces.append(polygon_halfspaces(block.vertices, f"blocks[{i}].vertices"))
            self.blocks.append(block)
        if not self.floor_standable and not self.blocks:
            raise ValueError("floor_standable: a terrain without blocks needs a standable floor")

    @property
    def flat_height(self) -> Optional[float]:
        return self.floor if not any(b.top > self.floor for b in self.blocks) and self.floor_standable else None

    # ------------------------------------------------------------ surface
    def _inside(self, P: np.ndarray, tol: float = 1e-9) -> np.ndarray:
        """(K, n_blocks) whether each point lies in each block's closed polygon."""
        if not self.blocks:
            return np.zeros((len(P), 0), dtype=bool)
        return np.stack([np.all(P @ A.T - b <= tol, axis=1) for A, b in self._halfspaces], axis=1)

    def height(self, xy: Any) -> np.ndarray:
        P = as_points(xy)
        tops = np.array([b.top for b in self.blocks])
        inside = self._inside(P)
        return np.max(np.where(inside, tops, self.floor), axis=1, initial=self.floor)

    def normal(self, xy: Any) -> np.ndarray:
        return np.tile([0.0, 0.0, 1.0], (len(as_points(xy)), 1))

    # ------------------------------------------------------------ foot regions
    def _block_region(self, i: int, margin: float) -> Surface:
        block, (A, b) = self.blocks[i], self._halfspaces[i]
        return Surface(np.array([block.top, 0.0, 0.0, 0.0]), A, b - margin, block.name, block.vertices)

    def _floor_region(self, p: np.ndarray, margin: float) -> Surface:
        """The convex floor region around ``p`` (module docstring)."""
        A = [np.array([1.0, 0.0]), np.array([-1.0, 0.0]), np.array([0.0, 1.0]), np.array([0.0, -1.0])]
        b = [p[0] + FLOOR_REGION, -p[0] + FLOOR_REGION, p[1] + FLOOR_REGION, -p[1] + FLOOR_REGION]
        reach = FLOOR_REGION * np.sqrt(2) + margin
        for block, (Ab, bb) in zip(self.blocks, self._halfspaces):
            if block.top <= self.floor or np.min(np.linalg.norm(block.vertices - p, axis=1)) > reach + _diameter(block.vertices):
                continue
            j = int(np.argmax(Ab @ p - bb))  # the edge the point is farthest outside of (or nearest inside)
            A.append(-Ab[j])
            b.append(-(bb[j] + margin))
        corners = p + FLOOR_REGION * np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
        return Surface(np.array([self.floor, 0.0, 0.0, 0.0]), np.array(A), np.array(b), "floor", corners)

    def region_at(self, xy: Any, margin: Optional[float] = None) -> Optional[Surface]:
        p, m = as_points(xy)[0], self._margin(margin)
        inside = self._inside(p[None])[0]
        if inside.any():
            tops = np.where(inside, [b.top for b in self.blocks], -np.inf)
            i = int(np.argmax(tops))
            if tops[i] >= self.floor:
                return self._block_region(i, m)
        return self._floor_region(p, m) if self.floor_standable else None

    def regions_near(self, xy: Any, radius: float, margin: Optional[float] = None) -> List[Surface]:
        p, m = as_points(xy)[0], self._margin(margin)
        out = []
        for i, block in enumerate(self.blocks):
            if block.top < self.floor:
                continue
            region = self._block_region(i, m)
            try:
                if np.linalg.norm(region.closest_point(p) - p) <= radius:
                    out.append(region)
            except ValueError:  # a block narrower than twice the margin gives no footing
                continue
        if self.floor_standable:
            out.append(self._floor_region(p, m))
        return out

    # ------------------------------------------------------------ swings
    def swing_profile(self, start: Any, end: Any, half_width: float = SWING_HALF_WIDTH, heading: float = 0.0) -> SwingProfile:
        a, u, length = swing_frame(start, end, heading)
        v = np.array([-u[1], u[0]])
        lo, hi = -SWING_OVERHANG, length + SWING_OVERHANG
        spans, near = [], False
        for block in self.blocks:
            if block.top <= self.floor:
                continue
            local = np.column_stack([(block.vertices - a) @ u, (block.vertices - a) @ v])
            near = near or len(_clip_to_box(local, lo - CORRIDOR_REACH, hi + CORRIDOR_REACH, -half_width - CORRIDOR_REACH, half_width + CORRIDOR_REACH)) > 0
            clipped = _clip_to_box(local, lo, hi, -half_width, half_width)
            if len(clipped):
                spans.append((clipped[:, 0].min(), clipped[:, 0].max(), block.top))
        if not near:  # nothing rises from the floor near this swing: the floor's height bounds it anywhere around
            return SwingProfile(a, u, np.array([self.floor, 0.0, 0.0]), np.zeros((0, 2)), self.ramp)
        breaks = np.unique([s for s0, s1, _ in spans for s in (s0, s1) if lo < s < hi])
        edges = np.concatenate([[lo], breaks, [hi]])
        levels = []
        for s0, s1 in zip(edges[:-1], edges[1:]):
            mid = 0.5 * (s0 + s1)
            levels.append(max([self.floor] + [top for a0, a1, top in spans if a0 <= mid <= a1]))
        z0, steps = steps_of_levels(breaks, fill_valleys(levels), self.ramp)
        return SwingProfile(a, u, np.array([z0, 0.0, 0.0]), steps, self.ramp, half_width, (lo, hi))

    # ------------------------------------------------------------ drawing
    def solids(self) -> List[Solid]:
        return [Plane(np.array([0.0, 0.0, self.floor]), np.array([0.0, 0.0, 1.0]), "floor" if self.floor_standable else "pit")] + list(self.blocks)

    def describe(self) -> str:
        floor = f"floor at {self.floor:g} m" + ("" if self.floor_standable else " (no footing)")
        return f"{self.name}: {len(self.blocks)} blocks, {floor}"


def _diameter(vertices: np.ndarray) -> float:
    return float(np.max(np.linalg.norm(vertices[:, None] - vertices[None], axis=-1)))


def _clip_to_box(polygon: np.ndarray, s_lo: float, s_hi: float, l_lo: float, l_hi: float) -> np.ndarray:
    """The convex polygon (V, 2) of ``(s, l)`` points clipped to ``[s_lo, s_hi] x [l_lo, l_hi]`` (Sutherland-Hodgman)."""
    out = polygon
    for axis, bound, keep_below in ((0, s_hi, True), (0, s_lo, False), (1, l_hi, True), (1, l_lo, False)):
        if not len(out):
            break
        points = []
        for p, q in zip(out, np.roll(out, -1, axis=0)):
            p_in = p[axis] <= bound if keep_below else p[axis] >= bound
            q_in = q[axis] <= bound if keep_below else q[axis] >= bound
            if p_in:
                points.append(p)
            if p_in != q_in:
                t = (bound - p[axis]) / (q[axis] - p[axis])
                points.append(p + t * (q - p))
        out = np.array(points).reshape(-1, 2)
    return out


def _rectangle(s0: float, s1: float, l0: float, l1: float, heading: float) -> np.ndarray:
    """Counter-clockwise corners (4, 2) of ``[s0, s1] x [l0, l1]`` in the frame turned by ``heading``."""
    u, v = np.array([np.cos(heading), np.sin(heading)]), np.array([-np.sin(heading), np.cos(heading)])
    return np.array([s * u + l * v for s, l in ((s0, l0), (s1, l0), (s1, l1), (s0, l1))])


def _positive(value: Any, name: str) -> float:
    return B.real(value, name, lower=0.0, strict=True)


def flat(height: float = 0.0) -> BlockTerrain:
    """Flat ground at ``height`` [m]."""
    return BlockTerrain([], floor=height, name="flat")


def stairs(rise: float = 0.08, run: float = 0.25, count: int = 3, start: float = 0.3, width: float = 1.2, landing: float = 1.0, down: bool = False, heading: float = 0.0) -> BlockTerrain:
    """``count`` steps of ``rise`` x ``run`` [m], ``width`` wide, the first edge ``start`` ahead of the origin.

    Up (default): the ground at 0, step ``i`` (1..count) a block of top
    ``i rise`` from ``start + (i - 1) run``; the last one ``landing`` long.
    ``down``: the robot starts on a platform at ``count rise`` (``landing``
    behind the origin, up to ``start``), the steps go down by ``rise`` every
    ``run`` and the ground at 0 follows. ``heading`` (rad) turns the stairs about the origin.
    """
    rise, run, width, landing = (_positive(v, n) for v, n in ((rise, "rise"), (run, "run"), (width, "width"), (landing, "landing")))
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
        raise ValueError(f"count: expected an int >= 1, got {count!r}")
    start, half = B.real(start, "start"), 0.5 * width
    blocks = []
    if not down:
        for i in range(1, count + 1):
            s1 = start + i * run if i < count else start + (count - 1) * run + landing
            blocks.append(Prism(_rectangle(start + (i - 1) * run, s1, -half, half, heading), 0.0, i * rise, f"step {i}"))
    else:
        blocks.append(Prism(_rectangle(start - landing, start, -half, half, heading), 0.0, count * rise, "platform"))
        for i in range(1, count):
            blocks.append(Prism(_rectangle(start + (i - 1) * run, start + i * run, -half, half, heading), 0.0, (count - i) * rise, f"step {i}"))
    kind = "down" if down else "up"
    return BlockTerrain(blocks, floor=0.0, name=f"stairs {kind}: {count} x {100 * rise:g} cm rise, {100 * run:g} cm run")


def stepping_stones(stones: Sequence[tuple], depth: float = 0.3, ramp: float = RAMP, margin: float = 0.02) -> BlockTerrain:
    """Stones ``(vertices (V, 2) counter-clockwise, top [m])`` over a pit ``depth`` below the lowest top: feet only on the stones.

    ``margin`` (default 2 cm) may stay below ``ramp`` while the stones are at
    least ``ramp`` apart: the envelope rises over the gap before a higher
    stone, not over the lower one, and stays level between stones of one height."""
    if not len(stones):
        raise ValueError("stones: expected at least one (vertices, top) stone")
    depth = _positive(depth, "depth")
    floor = min(float(top) for _, top in stones) - depth
    blocks = [Prism(np.asarray(v, dtype=float), floor, float(top), f"stone {i}") for i, (v, top) in enumerate(stones)]
    return BlockTerrain(blocks, floor=floor, floor_standable=False, ramp=ramp, margin=margin, name=f"stepping stones ({len(blocks)})")


def stone_lanes(lanes: Sequence[float], size: float = 0.1, gap: float = 0.1, first: float = -0.6, count: int = 10, top: float = 0.0, depth: float = 0.3, heading: float = 0.0, margin: float = 0.02) -> BlockTerrain:
    """Square stones ``size`` [m] wide, ``gap`` apart, in lanes at lateral offsets ``lanes`` [m]:
    lane stones centred at ``first + k (size + gap)``, ``k = 0..count-1``, along ``heading``."""
    size, gap = _positive(size, "size"), B.real(gap, "gap", lower=0.0)
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
        raise ValueError(f"count: expected an int >= 1, got {count!r}")
    lanes = [B.real(y, "lanes") for y in np.atleast_1d(np.asarray(lanes, dtype=float))]
    pitch, h = size + gap, 0.5 * size
    stones = [(_rectangle(c - h, c + h, y - h, y + h, heading), top) for y in lanes for c in first + pitch * np.arange(count)]
    terrain = stepping_stones(stones, depth, margin=margin)
    terrain.name = f"stepping stones: {100 * size:g} cm, {100 * gap:g} cm gaps, {len(lanes)} lanes of {count}"
    return terrain


def boxes(items: Sequence[tuple], floor: float = 0.0) -> BlockTerrain:
    """Boxes ``(centre (2,), size (2,), height [m] above the floor, yaw [rad])`` on flat ground at ``floor``."""
    blocks = []
    for i, item in enumerate(items):
        if len(item) not in (3, 4):
            raise ValueError(f"items[{i}]: expected (centre, size, height[, yaw]), got {item!r}")
        centre, size = B.vector(item[0], 2, f"items[{i}] centre"), B.vector(item[1], 2, f"items[{i}] size")
        height, yaw = _positive(item[2], f"items[{i}] height"), float(item[3]) if len(item) == 4 else 0.0
        if (size <= 0).any():
            raise ValueError(f"items[{i}] size: expected positive edges, got {size}")
        corners = _rectangle(-0.5 * size[0], 0.5 * size[0], -0.5 * size[1], 0.5 * size[1], yaw) + centre
        blocks.append(Prism(corners, floor, floor + height, f"box {i}"))
    return BlockTerrain(blocks, floor=floor, name=f"boxes ({len(blocks)})")


def gap(width: float = 0.2, start: float = 0.1, depth: float = 0.5, before: float = 1.0, after: float = 1.0, lateral: float = 1.2, heading: float = 0.0, margin: float = 0.03) -> BlockTerrain:
    """A gap ``width`` [m] wide starting ``start`` ahead of the origin: ground at 0 ``before`` it and
    ``after`` it (``lateral`` wide), a pit ``depth`` deep in between that gives no footing; footholds
    keep ``margin`` from the edges (the envelope is level across the gap, no ramp next to a foothold)."""
    width, depth, before, after, lateral = (_positive(v, n) for v, n in ((width, "width"), (depth, "depth"), (before, "before"), (after, "after"), (lateral, "lateral")))
    start, half = B.real(start, "start"), 0.5 * lateral
    blocks = [
        Prism(_rectangle(start - before, start, -half, half, heading), -depth, 0.0, "near side"),
        Prism(_rectangle(start + width, start + width + after, -half, half, heading), -depth, 0.0, "far side"),
    ]
    return BlockTerrain(blocks, floor=-depth, floor_standable=False, margin=margin, name=f"gap of {100 * width:g} cm")
