"""trajopt.sim.capsules: distances against brute-force sampling and coal, witness points, Jacobians.

Brute force: ``n`` evenly spaced samples per segment; the sampled minimum
``d_s`` satisfies ``d <= d_s <= d + (h_a + h_b) / 2`` (``h`` the sample
spacing), the resolution the exact distance is checked to.
"""
from __future__ import annotations

import coal
import numpy as np
import pinocchio as pin
import pytest

from models.hand import Hand
from models.manipulator import Manipulator
from trajopt.sim import Capsule, CapsuleCollisions, capsule_distance, capsules_from_geometry, closest_segment_points

SAMPLES = 801
GEOM_TOL = 1e-12


def _sampled_distance(a0, a1, ra, b0, b1, rb):
    """Brute-force distance and its resolution ``(h_a + h_b) / 2``."""
    s = np.linspace(0.0, 1.0, SAMPLES)[:, None]
    A, Bs = a0 + s * (a1 - a0), b0 + s * (b1 - b0)
    d2 = ((A[:, None, :] - Bs[None, :, :]) ** 2).sum(-1)
    resolution = 0.5 * (np.linalg.norm(a1 - a0) + np.linalg.norm(b1 - b0)) / (SAMPLES - 1)
    return np.sqrt(d2.min()) - ra - rb, resolution


def _point_segment_distance(p, a0, a1):
    d = a1 - a0
    s = 0.0 if d @ d == 0 else np.clip((p - a0) @ d / (d @ d), 0.0, 1.0)
    return np.linalg.norm(p - (a0 + s * d))


def _check_geometry(a0, a1, ra, b0, b1, rb):
    res = capsule_distance(a0, a1, ra, b0, b1, rb)
    d_s, resolution = _sampled_distance(a0, a1, ra, b0, b1, rb)
    assert res.distance - GEOM_TOL <= d_s <= res.distance + resolution + GEOM_TOL
    assert abs(np.linalg.norm(res.witness_b - res.witness_a) - abs(res.distance)) <= GEOM_TOL
    assert np.linalg.norm(res.witness_b - res.witness_a - res.distance * res.normal) <= GEOM_TOL
    assert abs(_point_segment_distance(res.witness_a, a0, a1) - ra) <= GEOM_TOL  # on capsule a's surface
    assert abs(_point_segment_distance(res.witness_b, b0, b1) - rb) <= GEOM_TOL
    assert abs(np.linalg.norm(res.normal) - 1) <= GEOM_TOL
    return res


def test_random_capsules_match_brute_force():
    rng = np.random.default_rng(0)
    for _ in range(40):
        a0, a1, b0, b1 = rng.uniform(-1, 1, (4, 3))
        ra, rb = rng.uniform(0, 0.3, 2)
        _check_geometry(a0, a1, ra, b0, b1, rb)


PARALLEL_CASES = {
    "overlapping": ([0, 0, 0], [1, 0, 0], [0.3, 0.5, 0], [1.6, 0.5, 0], 0.5),
    "contained": ([0, 0, 0], [2, 0, 0], [0.5, 0, 0.4], [1.0, 0, 0.4], 0.4),
    "antiparallel": ([0, 0, 0], [1, 0, 0], [1.5, 0.2, 0], [0.5, 0.2, 0], 0.2),
    "apart along the axis": ([0, 0, 0], [1, 0, 0], [1.5, 0.3, 0], [2.5, 0.3, 0], np.hypot(0.5, 0.3)),
    "collinear": ([0, 0, 0], [1, 0, 0], [1.2, 0, 0], [3, 0, 0], 0.2),
}


@pytest.mark.parametrize("case", sorted(PARALLEL_CASES))
def test_parallel_capsules(case):
    a0, a1, b0, b1, centre_distance = (np.asarray(v, dtype=float) if not np.isscalar(v) else v for v in PARALLEL_CASES[case])
    res = _check_geometry(a0, a1, 0.05, b0, b1, 0.1)
    assert abs(res.distance - (centre_distance - 0.15)) <= GEOM_TOL
    if case == "overlapping":  # witness points at the middle of the overlap [0.3, 1]
        assert abs(res.point_a[0] - 0.65) <= GEOM_TOL and abs(res.point_b[0] - 0.65) <= GEOM_TOL


def test_spheres_points_and_crossing_segments():
    sphere = _check_geometry(np.zeros(3), np.zeros(3), 0.1, np.array([0.3, 0.4, 0]), np.array([0.3, 0.4, 0]), 0.2)
    assert abs(sphere.distance - 0.2) <= GEOM_TOL
    crossing = _check_geometry(np.array([-1.0, 0, 0]), np.array([1.0, 0, 0]), 0.1, np.array([0, -1.0, 0]), np.array([0, 1.0, 0]), 0.1)
    assert abs(crossing.distance + 0.2) <= GEOM_TOL and abs(abs(crossing.normal[2]) - 1) <= GEOM_TOL
    pa, pb = closest_segment_points(np.zeros(3), np.zeros(3), np.array([1.0, 1.0, 0]), np.array([1.0, -1.0, 0]))
    assert np.allclose(pa, 0) and np.allclose(pb, [1.0, 0, 0])


def test_capsule_distance_rejects_bad_input():
    with pytest.raises(ValueError, match=r"a0: expected shape \(3,\)"):
        capsule_distance(np.zeros(2), np.zeros(3), 0.1, np.zeros(3), np.ones(3), 0.1)
    with pytest.raises(ValueError, match="b1: contains NaN"):
        capsule_distance(np.zeros(3), np.zeros(3), 0.1, np.zeros(3), np.full(3, np.nan), 0.1)
    with pytest.raises(ValueError, match="radius"):
        Capsule("c", "universe", np.zeros(3), np.ones(3), -0.1)


# ------------------------------------------------------------------ on models
@pytest.fixture(scope="module")
def hand():
    h = Hand()
    return h, CapsuleCollisions.from_geometry(h, h.geometry_model)


@pytest.fixture(scope="module")
def arm():
    m = Manipulator()
    caps = capsules_from_geometry(m, m.geometry_model)
    names = [c.name for c in caps]
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    return m, CapsuleCollisions(m, caps, pairs)


def test_hand_geometry_as_documented(hand):
    model, coll = hand
    assert coll.num_pairs == 20 and len(coll.capsules) == 14
    palm = coll.capsules[0]
    assert palm.name == "palm_distal" and palm.frame == "universe"
    assert np.allclose(sorted([palm.p0[1], palm.p1[1]]), [-0.03, 0.03]) and np.allclose(palm.p0[[0, 2]], [-0.012, 0])
    tip = next(c for c in coll.capsules if c.name == "finger1_3")
    assert tip.frame == "finger1_3" and np.allclose(sorted([tip.p0[0], tip.p1[0]]), [0, 0.025]) and tip.radius == 0.008
    assert coll.distances(model.curl(0.0)).min() > 0.01  # open hand: nothing touches
    assert coll.distances(model.curl(1.6)).min() < 0  # curled past contact: distal phalanges in the palm


@pytest.mark.parametrize("name", ["hand", "arm"])
def test_distances_match_coal(name, request):
    model, coll = request.getfixturevalue(name)
    geom = model.geometry_model.copy()
    geom.removeAllCollisionPairs()
    for a, b in coll.pairs:
        geom.addCollisionPair(pin.CollisionPair(a, b))
    gdata, data = pin.GeometryData(geom), model.pin_model.createData()
    rng = np.random.default_rng(1)
    for _ in range(10):
        q = rng.uniform(-1, 2, model.nq)
        pin.computeDistances(model.pin_model, data, geom, gdata, q)
        reference = np.array([r.min_distance for r in gdata.distanceResults])
        ours = coll.evaluate(q)
        assert np.abs(np.array([c.distance for c in ours]) - reference).max() <= 1e-9
        for c, r in zip(ours, gdata.distanceResults):
            if c.distance > 1e-6:  # witness points are unique away from contact and parallel segments
                assert np.linalg.norm(c.geometry.witness_a - r.getNearestPoint1()) <= 1e-6 or np.linalg.norm(c.geometry.witness_a - r.getNearestPoint2()) <= 1e-6


@pytest.mark.parametrize("name", ["hand", "arm"])
def test_distance_jacobian_matches_finite_differences(name, request):
    model, coll = request.getfixturevalue(name)
    rng = np.random.default_rng(2)
    eps = 1e-6
    for _ in range(5):
        q, dq = rng.uniform(-1, 2, model.nq), rng.standard_normal(model.nv)
        J = np.array([c.jacobian for c in coll.evaluate(q)])
        fd = (coll.distances(q + eps * dq) - coll.distances(q - eps * dq)) / (2 * eps)
        assert np.abs(J @ dq - fd).max() <= 1e-7 * max(1.0, np.abs(fd).max())  # central differences: O(eps^2) + round-off / eps


@pytest.mark.parametrize("name", ["hand", "arm"])
def test_drift_is_the_second_derivative_of_the_distance(name, request):
    """``d_ddot = J_d a + Jdot_d v``: along ``q(t) = q + v t`` (vector-space joints, ``vdot = 0``) it is the drift."""
    model, coll = request.getfixturevalue(name)
    rng = np.random.default_rng(3)
    h = 1e-4
    sliding = 0
    for _ in range(8):
        q, v = rng.uniform(-1, 2, model.nq), rng.standard_normal(model.nv)
        contacts = coll.evaluate(q, v)
        drift = np.array([c.drift for c in contacts])
        sliding += sum(0 < c.geometry.s < 1 or 0 < c.geometry.t < 1 for c in contacts)
        fd2 = (coll.distances(q + h * v) - 2 * coll.distances(q) + coll.distances(q - h * v)) / h**2
        assert np.abs(drift - fd2).max() <= 1e-5 * max(1.0, np.abs(fd2).max())  # second differences: O(h^2) + round-off / h^2
    assert sliding > 0  # interior closest points were exercised


def test_collisions_reject_unknown_names(arm):
    model, coll = arm
    with pytest.raises(ValueError, match="pairs: unknown capsule 'nope'"):
        CapsuleCollisions(model, coll.capsules, [("nope", "elbow_object")])
    with pytest.raises(ValueError, match=r"capsules\[0\].frame: no frame 'missing'"):
        CapsuleCollisions(model, [Capsule("c", "missing", np.zeros(3), np.zeros(3), 0.1)], [])
    with pytest.raises(ValueError, match="paired with itself"):
        CapsuleCollisions(model, coll.capsules, [(0, 0)])
    box = pin.GeometryModel()
    box.addGeometryObject(pin.GeometryObject("box", 0, 0, pin.SE3.Identity(), coal.Box(1.0, 1.0, 1.0)))
    with pytest.raises(ValueError, match="object 'box' is a Box"):
        capsules_from_geometry(model, box)
    with pytest.raises(ValueError, match="quaternion|q: expected shape"):
        coll.distances(np.zeros(5))
