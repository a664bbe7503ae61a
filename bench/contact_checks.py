"""Hard-constraint checks a benchmark applies to every legged plan it times, ours and the peers'.

numpy only: ``bench/go1_trot.py`` (the project's environment) and
``bench/crocoddyl_peers.py`` (the crocoddyl/mim-solvers benchmark environment)
both import it, so every row of the Go1 table is checked by the same code and
nothing is taken from a solver's own report.

- Friction: the linearized pyramid of the problem's ``mu`` around the WORLD
  ``z`` axis (flat ground), ``|f_x| <= mu f_z``, ``|f_y| <= mu f_z``, with the
  unilateral ``f_z >= 0``; the violation of one force is the largest of
  ``|f_x| - mu f_z``, ``|f_y| - mu f_z`` and ``-f_z`` (N), 0 inside.
- Torques: the violation of one joint torque is ``|u| - limit`` (Nm), 0 inside.
"""
from __future__ import annotations

import numpy as np


def friction_violation(forces: np.ndarray, mu: float) -> float:
    """Worst violation (N, >= 0) of the friction pyramid and ``f_z >= 0`` over WORLD-frame forces ``(..., 3)``.

    Feet in swing carry zero force and so never count; an empty array gives 0.
    """
    f = np.asarray(forces, dtype=float)
    if f.ndim == 0 or f.shape[-1] != 3:
        raise ValueError(f"forces: expected shape (..., 3), got {f.shape}")
    if not (np.isfinite(mu) and mu >= 0):
        raise ValueError(f"mu: expected a finite friction coefficient >= 0, got {mu!r}")
    if f.size == 0:
        return 0.0
    f = f.reshape(-1, 3)
    rows = np.stack([np.abs(f[:, 0]) - mu * f[:, 2], np.abs(f[:, 1]) - mu * f[:, 2], -f[:, 2]])
    return max(0.0, float(np.max(rows)))  # 0.0, not -0.0, inside


def torque_violation(torques: np.ndarray, limits: np.ndarray) -> float:
    """Worst excess (Nm, >= 0) of ``|torques|`` ``(K, nu)`` over the symmetric ``limits`` ``(nu,)``."""
    u, lim = np.atleast_2d(np.asarray(torques, dtype=float)), np.asarray(limits, dtype=float)
    if lim.ndim != 1 or u.shape[-1] != lim.shape[0]:
        raise ValueError(f"torques, limits: expected shapes (K, nu) and (nu,), got {u.shape} and {lim.shape}")
    if u.size == 0:
        return 0.0
    return max(0.0, float(np.max(np.abs(u) - lim)))


def torque_ratio(torques: np.ndarray, limits: np.ndarray) -> float:
    """Largest ``|u| / limit`` over ``torques`` ``(K, nu)`` (1 = at the limit)."""
    u, lim = np.atleast_2d(np.asarray(torques, dtype=float)), np.asarray(limits, dtype=float)
    if lim.ndim != 1 or u.shape[-1] != lim.shape[0]:
        raise ValueError(f"torques, limits: expected shapes (K, nu) and (nu,), got {u.shape} and {lim.shape}")
    return float(np.max(np.abs(u) / lim)) if u.size else 0.0
