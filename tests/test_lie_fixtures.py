"""Shared samplers and checkers for the ``lie`` tests (plus tests of the samplers themselves).

Random points are drawn from seeded numpy generators. Rotation angles cover
the near-zero range (log-uniform in [1e-9, 1e-5]), exact zero is tested
separately, and the rest is uniform up to ``pi - 1e-3`` (that end included).
Tolerances are relative with a floor: ``max|a - b| <= tol * max(1, max|b|)``.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import casadi as ca
import numpy as np

import lie

#: Points per Jacobian check.
N_POINTS = 200
#: Largest sampled rotation angle (rad).
MAX_ANGLE = np.pi - 1e-3
#: Central-difference step and tolerance (DESIGN: step 1e-7, rtol 1e-6).
FD_STEP = 1e-7
FD_TOL = 1e-6


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def angles(gen: np.random.Generator, n: int = N_POINTS, max_angle: float = MAX_ANGLE) -> np.ndarray:
    """``n`` angles: a quarter log-uniform in [1e-9, 1e-5] (1e-9 included), the rest up to ``max_angle`` (included)."""
    k = n // 4
    small = 10.0 ** gen.uniform(-9, -5, k)
    small[:1] = 1e-9
    large = gen.uniform(1e-5, max_angle, n - k)
    large[-1:] = max_angle
    return np.concatenate([small, large])


def unit_vectors(gen: np.random.Generator, n: int, dim: int = 3) -> np.ndarray:
    u = gen.normal(size=(n, dim))
    return u / np.linalg.norm(u, axis=1, keepdims=True)


def rotvecs(gen: np.random.Generator, n: int = N_POINTS, max_angle: float = MAX_ANGLE) -> np.ndarray:
    """Rotation vectors (n x 3) with :func:`angles` as norms and uniform axes."""
    return unit_vectors(gen, n) * angles(gen, n, max_angle)[:, None]


def quats(gen: np.random.Generator, n: int = N_POINTS, max_angle: float = MAX_ANGLE) -> np.ndarray:
    """Unit quaternions (n x 4) of :func:`rotvecs`, each with a random sign."""
    signs = gen.choice([-1.0, 1.0], size=n)
    return np.array([s * lie.axis_angle_to_quat(phi) for s, phi in zip(signs, rotvecs(gen, n, max_angle))])


#: Largest sampled ZYX Euler pitch (rad): 0.1 rad short of gimbal lock, where the chart is singular and
#: the derivatives of its maps lose digits as 1/cos(pitch)^2 (as rotation angles stop short of pi).
MAX_PITCH = np.pi / 2 - 0.1


def params(rotation: type, gen: np.random.Generator, n: int = N_POINTS) -> np.ndarray:
    """Parameters (n x size) of random rotations; MRPs include shadow sets (|p| > 1) for angles > 1 rad,
    ZYX Euler angles have their pitch clipped to ``+-MAX_PITCH``."""
    out = []
    for q in quats(gen, n):
        p = rotation.from_quat(q)
        if rotation is lie.MRP and np.linalg.norm(p) > np.tan(0.25) and gen.uniform() < 0.5:
            p = -p / np.dot(p, p)
        if rotation is lie.EulerZYX:
            p[1] = np.clip(p[1], -MAX_PITCH, MAX_PITCH)
        out.append(p)
    return np.array(out)


def assert_close(a: Any, b: Any, tol: float, what: str = "") -> None:
    """``max|a - b| <= tol * max(1, max|b|)`` with a readable failure message."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape, f"{what}: shapes {a.shape} != {b.shape}"
    err, scale = np.abs(a - b).max(initial=0.0), max(1.0, np.abs(b).max(initial=0.0))
    assert err <= tol * scale, f"{what}: max error {err:.3g} > {tol:g} * {scale:.3g}"


def central_diff(f: Callable[[np.ndarray], Any], x: np.ndarray, h: float = FD_STEP) -> np.ndarray:
    """Central-difference Jacobian of ``f`` at ``x`` (one column per entry of ``x``)."""
    cols = []
    for i in range(len(x)):
        e = np.zeros(len(x))
        e[i] = h
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h))
    return np.array(cols).T


def casadi_function(f: Callable[..., Any], sizes: Sequence[int], sym: type = ca.SX, jacobian_of: int | None = None) -> ca.Function:
    """``ca.Function`` of ``f`` on symbols of ``sizes``; with ``jacobian_of = k`` it returns ``d f/d arg_k``."""
    args = [sym.sym(f"a{i}", n) for i, n in enumerate(sizes)]
    out = f(*args)
    if jacobian_of is not None:
        out = ca.jacobian(ca.vec(out), args[jacobian_of])
    return ca.Function("f", args, [out])


def evaluate(F: ca.Function, *args: Any) -> np.ndarray:
    """Evaluate a one-output ``ca.Function`` numerically; column vectors come back 1-D."""
    out = F(*args).full()
    return out[:, 0] if out.shape[1] == 1 else out


# ---------------------------------------------------------------- sampler tests
def test_angles_cover_near_zero_and_near_pi() -> None:
    a = angles(rng(0))
    assert len(a) == N_POINTS and a.min() == 1e-9 and a.max() == MAX_ANGLE
    assert np.sum(a < 1e-5) >= N_POINTS // 4


def test_quats_are_unit_with_both_signs() -> None:
    q = quats(rng(1))
    assert_close(np.linalg.norm(q, axis=1), np.ones(N_POINTS), 1e-15, "norm")
    assert (q[:, 0] < 0).any() and (q[:, 0] > 0).any()


def test_mrp_params_include_shadow_sets() -> None:
    p = params(lie.MRP, rng(2))
    assert (np.linalg.norm(p, axis=1) > 1).any() and (np.linalg.norm(p, axis=1) <= 1).any()
