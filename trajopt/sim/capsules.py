"""Capsules on robot frames: signed distance, witness points, distance Jacobian and drift.

A capsule is the set of points within ``radius`` of a segment ``[p0, p1]``
(meters, coordinates in a frame of the robot; ``p0 = p1`` is a sphere). For
two capsules with world segments ``A(s) = a0 + s (a1 - a0)`` and
``B(t) = b0 + t (b1 - b0)``, ``s, t`` in ``[0, 1]``::

    d = min_{s,t} |B(t) - A(s)| - r_a - r_b        (signed: < 0 in penetration)

Let ``pa = A(s*)``, ``pb = B(t*)`` be closest segment points and the normal
``n = (pb - pa) / |pb - pa|`` (from capsule a to capsule b). The witness points
are ``wa = pa + r_a n`` and ``wb = pb - r_b n``, on the capsules' surfaces, with
``wb - wa = d n`` (so ``|wa - wb| = |d|``). For parallel segments the closest
points are not unique: the middle of the overlap of the two segments (along
their common direction) is used. When the segments touch (``pa = pb``) the
normal is ``a x b`` normalized, or any direction perpendicular to the segments.

Distance Jacobian (1 x nv). Take ``pa``, ``pb`` as material points of their
bodies; their world velocities are ``J_x(p) v`` with
``J_x(p) = J_lin - [p - o]_x J_ang`` (``J = [J_lin; J_ang]`` the frame's
LOCAL_WORLD_ALIGNED Jacobian, ``o`` its origin). Then

    d_dot = J_d v,   J_d = n^T (J_x(pb) - J_x(pa)),

exact also where the closest points slide along the segments (envelope
theorem). The drift ``Jdot_d v`` (so that ``d_ddot = J_d vdot + Jdot_d v``)
is the second derivative of the distance between the two material points at
zero joint acceleration, corrected for the sliding of the closest points::

    Jdot_d v = n^T (acc(pb) - acc(pa)) + (|dv|^2 - (n^T dv)^2) / |pb - pa|
               - g^T H^-1 g / |pb - pa|,

with ``acc(p) = a_o + alpha x r + w x (w x r)`` (``r = p - o``, frame origin
classical acceleration ``a_o`` and angular acceleration ``alpha`` at
``vdot = 0``), ``dv`` the relative velocity of the material points, and,
over the parameters ``sigma`` in ``(s, t)`` strictly inside ``(0, 1)`` (the
ones free to slide), ``F = |B(t) - A(s)|^2 / 2``, ``H = d^2F/dsigma^2`` and
``g = d/dt (dF/dsigma)`` at fixed ``sigma`` (the implicit-function term of a
minimum: the sliding only ever lowers ``d_ddot``). Exact away from the
switches between sliding and end-point contact and from touching segments
(``pb = pa``, where only the material-point term is kept).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

import coal
import numpy as np
import pinocchio as pin

from lie import _backend as B

from .pin_numerics import PinNumerics, as_pin_model

#: ``|a x b|^2 <= PARALLEL_TOL |a|^2 |b|^2`` counts as parallel segments (angle below 1e-6 rad).
PARALLEL_TOL = 1e-12
#: Segments shorter than this (m) are treated as points; closer points count as touching.
LENGTH_TOL = 1e-12
#: Closest-point parameters within this of 0 or 1 count as held at a segment end (they do not slide).
SLIDE_TOL = 1e-9


@dataclass(frozen=True, eq=False)
class Capsule:
    """Segment ``[p0, p1]`` (3,) in the coordinates of ``frame`` (a frame name), swept by a ball of ``radius`` (m)."""

    name: str
    frame: str
    p0: np.ndarray
    p1: np.ndarray
    radius: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "p0", B.vector(self.p0, 3, f"{self.name}.p0").copy())
        object.__setattr__(self, "p1", B.vector(self.p1, 3, f"{self.name}.p1").copy())
        if not (np.isfinite(self.radius) and self.radius >= 0):
            raise ValueError(f"radius: capsule {self.name!r} needs a finite radius >= 0, got {self.radius!r}")
        if not (np.isfinite(self.p0).all() and np.isfinite(self.p1).all()):
            raise ValueError(f"p0/p1: capsule {self.name!r} has non-finite end points")


@dataclass(frozen=True, eq=False)
class CapsuleDistance:
    """Signed distance of two capsules and its geometry (world frame, meters).

    ``point_a``/``point_b``: closest segment points, at parameters ``s``/``t``
    of the segments; ``witness_a``/``witness_b``: closest surface points;
    ``normal``: unit vector from a to b.
    """

    distance: float
    point_a: np.ndarray
    point_b: np.ndarray
    witness_a: np.ndarray
    witness_b: np.ndarray
    normal: np.ndarray
    s: float
    t: float


@dataclass(frozen=True, eq=False)
class PairContact:
    """One collision pair evaluated at ``(q, v)``: its :class:`CapsuleDistance`, the
    distance Jacobian ``jacobian`` (nv,) and the drift ``Jdot_d v`` (NaN without ``v``)."""

    pair: int
    names: Tuple[str, str]
    geometry: CapsuleDistance
    jacobian: np.ndarray
    drift: float

    @property
    def distance(self) -> float:
        """Signed distance between the two capsules' surfaces (m; negative in penetration)."""
        return self.geometry.distance


def closest_segment_parameters(a0: np.ndarray, a1: np.ndarray, b0: np.ndarray, b1: np.ndarray) -> Tuple[float, float]:
    """Parameters ``(s, t)`` in ``[0, 1]`` of closest points ``A(s)``, ``B(t)`` of segments ``[a0, a1]`` and ``[b0, b1]``.

    Minimizes ``|B(t) - A(s)|`` in closed form: the unconstrained minimizer in
    ``s`` clamped to ``[0, 1]``, then ``t`` the projection of ``A(s)`` on ``B``
    clamped, and ``s`` re-projected if ``t`` was clamped. Parallel segments
    take ``s`` at the middle of the overlap of ``B``'s projection onto ``A``
    with ``A`` (or the nearest end point). A point (zero-length segment) has
    parameter 0.
    """
    da, db, r = a1 - a0, b1 - b0, a0 - b0
    aa, ee, f = da @ da, db @ db, db @ r
    if aa <= LENGTH_TOL**2 and ee <= LENGTH_TOL**2:
        return 0.0, 0.0
    if aa <= LENGTH_TOL**2:
        return 0.0, _clip01(f / ee)
    c = da @ r
    if ee <= LENGTH_TOL**2:
        return _clip01(-c / aa), 0.0
    b = da @ db
    denom = aa * ee - b * b
    if denom > PARALLEL_TOL * aa * ee:
        s = _clip01((b * f - c * ee) / denom)
    else:  # parallel: middle of the overlap of B's projection [-c/aa, (b - c)/aa] with [0, 1]
        s0, s1 = sorted((-c / aa, (b - c) / aa))
        s = _clip01(0.5 * (max(0.0, s0) + min(1.0, s1)))
    t = (b * s + f) / ee
    if t < 0.0:
        return _clip01(-c / aa), 0.0
    if t > 1.0:
        return _clip01((b - c) / aa), 1.0
    return s, t


def closest_segment_points(a0: np.ndarray, a1: np.ndarray, b0: np.ndarray, b1: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Closest points ``(pa, pb)`` (each (3,)) of segments ``[a0, a1]`` and ``[b0, b1]`` (:func:`closest_segment_parameters`)."""
    s, t = closest_segment_parameters(a0, a1, b0, b1)
    return a0 + s * (a1 - a0), b0 + t * (b1 - b0)


def _clip01(x: float) -> float:
    return min(1.0, max(0.0, x))


def capsule_distance(a0: Any, a1: Any, radius_a: float, b0: Any, b1: Any, radius_b: float) -> CapsuleDistance:
    """Signed distance (m, negative in penetration), closest points, witness points and unit normal (A to B)
    of two capsules with world segments ``a0``-``a1``, ``b0``-``b1`` and radii ``radius_a``, ``radius_b`` (m)."""
    a0, a1, b0, b1 = (B.vector(p, 3, name) for p, name in ((a0, "a0"), (a1, "a1"), (b0, "b0"), (b1, "b1")))
    s, t = closest_segment_parameters(a0, a1, b0, b1)
    pa, pb = a0 + s * (a1 - a0), b0 + t * (b1 - b0)
    delta = pb - pa
    length = float(np.linalg.norm(delta))
    normal = delta / length if length > LENGTH_TOL else _touching_normal(a1 - a0, b1 - b0)
    d = length - radius_a - radius_b
    return CapsuleDistance(d, pa, pb, pa + radius_a * normal, pb - radius_b * normal, normal, s, t)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a x b`` of two 3-vectors, written out: ``numpy.cross``'s overhead dominates on arrays this small
    (docs/design/simulation.md)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def _skew(r: np.ndarray) -> np.ndarray:
    """``[r]_x`` (3x3) with ``[r]_x w = r x w``."""
    return np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])


def _touching_normal(da: np.ndarray, db: np.ndarray) -> np.ndarray:
    """A unit normal for touching segments: ``da x db``, else perpendicular to the longer one."""
    n = _cross(da, db)
    if np.linalg.norm(n) > LENGTH_TOL * max(1.0, np.linalg.norm(da) * np.linalg.norm(db)):
        return n / np.linalg.norm(n)
    axis = da if da @ da >= db @ db else db
    if axis @ axis <= LENGTH_TOL**2:
        return np.array([0.0, 0.0, 1.0])
    helper = np.eye(3)[int(np.argmin(np.abs(axis)))]
    n = _cross(axis, helper)
    return n / np.linalg.norm(n)


def capsules_from_geometry(model: Any, geometry_model: pin.GeometryModel) -> List[Capsule]:
    """:class:`Capsule` objects of a ``pinocchio.GeometryModel`` made of ``coal.Capsule`` and ``coal.Sphere`` shapes.

    A ``coal.Capsule`` is centered on its placement with its segment along
    the local z axis (``+-halfLength``); a sphere is a capsule of zero length.
    Each capsule is expressed in its geometry object's parent frame. Other
    shapes raise ``ValueError`` naming the object.
    """
    pin_model = as_pin_model(model)
    capsules = []
    for obj in geometry_model.geometryObjects:
        shape = obj.geometry
        if isinstance(shape, coal.Capsule):
            half = np.array([0.0, 0.0, shape.halfLength])
        elif isinstance(shape, coal.Sphere):
            half = np.zeros(3)
        else:
            raise ValueError(f"geometry_model: object {obj.name!r} is a {type(shape).__name__}, expected a coal.Capsule or coal.Sphere")
        frame = pin_model.frames[obj.parentFrame]
        if frame.parentJoint != obj.parentJoint:
            raise ValueError(f"geometry_model: object {obj.name!r} has parent joint {obj.parentJoint} but its frame {frame.name!r} moves with joint {frame.parentJoint}")
        in_frame = frame.placement.inverse() * obj.placement  # GeometryObject.placement is in the parent joint frame
        capsules.append(Capsule(obj.name, frame.name, in_frame.act(-half), in_frame.act(half), float(shape.radius)))
    return capsules


class CapsuleCollisions:
    """Distances, witness points, Jacobians and drifts of an explicit list of capsule pairs on a model.

    ``model``: a MultibodyModel or ``pinocchio.Model``; ``capsules``: the
    :class:`Capsule` objects; ``pairs``: ``(a, b)`` capsule names or indices
    (the normal of a pair points from ``a`` to ``b``).
    """

    def __init__(self, model: Any, capsules: Sequence[Capsule], pairs: Sequence[Tuple[Any, Any]]) -> None:
        self.numerics = PinNumerics(model)
        self.capsules = list(capsules)
        names = [c.name for c in self.capsules]
        if len(set(names)) != len(names):
            raise ValueError(f"capsules: names must be unique, got {names}")
        self._frame_ids = [self.numerics.frame_id(c.frame, f"capsules[{i}].frame") for i, c in enumerate(self.capsules)]
        self.pairs = [(self._index(a, "pairs"), self._index(b, "pairs")) for a, b in pairs]
        self._has_velocity = False
        for a, b in self.pairs:
            if a == b:
                raise ValueError(f"pairs: capsule {names[a]!r} paired with itself")

    @classmethod
    def from_geometry(cls, model: Any, geometry_model: pin.GeometryModel, pairs: Optional[Sequence[Tuple[Any, Any]]] = None) -> "CapsuleCollisions":
        """Capsules of a ``GeometryModel``; ``pairs`` default to its ``collisionPairs``."""
        capsules = capsules_from_geometry(model, geometry_model)
        if pairs is None:
            pairs = [(p.first, p.second) for p in geometry_model.collisionPairs]
        return cls(model, capsules, pairs)

    def _index(self, key: Any, arg: str) -> int:
        if isinstance(key, (int, np.integer)) and 0 <= key < len(self.capsules):
            return int(key)
        for i, c in enumerate(self.capsules):
            if c.name == key:
                return i
        raise ValueError(f"{arg}: unknown capsule {key!r}; capsules are {[c.name for c in self.capsules]}")

    @property
    def num_pairs(self) -> int:
        """Number of capsule pairs checked for collision."""
        return len(self.pairs)

    def pair_names(self, k: int) -> Tuple[str, str]:
        """Names of the two capsules of pair ``k``."""
        a, b = self.pairs[k]
        return self.capsules[a].name, self.capsules[b].name

    def update(self, q: Any, v: Any = None) -> None:
        """Set the configuration ``q`` (nq,) (and velocity ``v`` (nv,), for drifts) read by the pair methods."""
        num = self.numerics
        q = num.check_q(q)
        self._has_velocity = v is not None
        num.update_kinematics(q, None if v is None else num.check_v(v))

    def world_segment(self, i: int) -> Tuple[np.ndarray, np.ndarray]:
        """End points (world) of capsule ``i`` at the configuration of the last :meth:`update`."""
        T = self.numerics.data.oMf[self._frame_ids[i]]
        return T.act(self.capsules[i].p0), T.act(self.capsules[i].p1)

    def pair_distance(self, k: int) -> CapsuleDistance:
        """Distance geometry of pair ``k`` at the configuration of the last :meth:`update`."""
        a, b = self.pairs[k]
        return capsule_distance(*self.world_segment(a), self.capsules[a].radius, *self.world_segment(b), self.capsules[b].radius)

    def pair_contact(self, k: int, geometry: Optional[CapsuleDistance] = None) -> PairContact:
        """Pair ``k`` with its distance Jacobian and drift at the state of the last :meth:`update`."""
        geom = self.pair_distance(k) if geometry is None else geometry
        a, b = self.pairs[k]
        Ja, Jb = self._point_jacobian(a, geom.point_a), self._point_jacobian(b, geom.point_b)
        drift = self._drift(a, b, geom) if self._has_velocity else float("nan")
        return PairContact(k, self.pair_names(k), geom, geom.normal @ (Jb - Ja), drift)

    def evaluate(self, q: Any, v: Any = None, pairs: Optional[Sequence[int]] = None) -> List[PairContact]:
        """Every pair (or the indices ``pairs``) at configuration ``q`` (nq,), with drifts when ``v`` (nv,) is given."""
        self.update(q, v)
        return [self.pair_contact(k) for k in (range(self.num_pairs) if pairs is None else pairs)]

    def distances(self, q: Any) -> np.ndarray:
        """Signed distances (P,) of all pairs at ``q``."""
        self.update(q)
        return np.array([self.pair_distance(k).distance for k in range(self.num_pairs)])

    def _point_jacobian(self, i: int, point: np.ndarray) -> np.ndarray:
        """World velocity Jacobian (3 x nv) of the material point at ``point`` on capsule ``i``'s body."""
        fid = self._frame_ids[i]
        J = self.numerics.frame_jacobian(fid, "LOCAL_WORLD_ALIGNED")
        r = point - self.numerics.data.oMf[fid].translation
        return J[:3] - _skew(r) @ J[3:]

    def _point_motion(self, i: int, point: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """World velocity and drift acceleration (at ``vdot = 0``) of the material point ``point`` of capsule ``i``."""
        fid = self._frame_ids[i]
        r = point - self.numerics.data.oMf[fid].translation
        vel, acc = self.numerics.frame_velocity(fid), self.numerics.frame_drift(fid)
        w, alpha = vel[3:], acc[3:]
        return vel[:3] + _cross(w, r), acc[:3] + _cross(alpha, r) + _cross(w, _cross(w, r))

    def _drift(self, a: int, b: int, geom: CapsuleDistance) -> float:
        """``Jdot_d v``: material-point terms, minus the sliding of interior closest points (module docstring)."""
        va, acc_a = self._point_motion(a, geom.point_a)
        vb, acc_b = self._point_motion(b, geom.point_b)
        n, dv = geom.normal, vb - va
        drift = float(n @ (acc_b - acc_a))
        delta = geom.point_b - geom.point_a
        length = float(np.linalg.norm(delta))
        if length <= LENGTH_TOL:
            return drift
        drift += (dv @ dv - (n @ dv) ** 2) / length
        # g = d/dt (dF/d(s, t)) at fixed (s, t), H = d^2F/d(s, t)^2, F = |B(t) - A(s)|^2 / 2
        g, axes = [], []
        for i, param, sign in ((a, geom.s, -1.0), (b, geom.t, 1.0)):
            e0, e1 = self.world_segment(i)
            axis = e1 - e0
            if SLIDE_TOL < param < 1.0 - SLIDE_TOL and axis @ axis > LENGTH_TOL**2:
                axis_rate = self._point_motion(i, e1)[0] - self._point_motion(i, e0)[0]
                g.append(sign * (axis_rate @ delta + axis @ dv))
                axes.append(sign * axis)
        if g:
            A = np.array(axes)
            drift -= float(np.array(g) @ np.linalg.pinv(A @ A.T) @ np.array(g)) / length
        return drift
