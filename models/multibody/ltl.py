"""Tree-sparse ``M = L^T D L`` factorization of the joint-space inertia matrix (Featherstone).

Number the DoFs so that every DoF's parent comes first (pinocchio's depth-first
order: a joint's DoFs are consecutive, and its first DoF's parent is the last
DoF of the parent joint). Then ``M_ij`` is structurally zero unless one of
``i``, ``j`` is an ancestor of the other, and the factorization
``M = L^T D L`` (``L`` unit lower triangular, ``D`` diagonal) creates no
fill-in: ``L_ij`` (``i > j``) is nonzero only for ancestors ``j`` of ``i``
(RBDA, section 6.5). For DoF ``k`` from the last to the first, and each
ancestor ``i`` of ``k``::

    L_ki = M_ki / M_kk,   M_ij -= L_ki M_kj  for every ancestor j of i (j = i included),

leaving ``D_k = M_kk``. A solve ``M x = b`` is ``L^T y = b`` (leaves first),
``z = D^-1 y``, ``L x = z`` (root first): ``2 nnz(L) + n`` multiply-adds per
right-hand side instead of the ``n^2`` of a dense inverse. For Go1 (18 DoFs:
a 6-DoF base and four 3-DoF legs) ``nnz(L) = 99``.

Used on CasADi SX to build cheap symbolic ``M^-1 b`` (forward dynamics and
its derivatives); entries are read from the lower triangle of ``M`` only.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import casadi as ca
import pinocchio as pin


def dof_parents(model: pin.Model) -> list[int]:
    """Parent DoF of each velocity index (``-1`` for DoFs attached to the world).

    Inside a multi-DoF joint each DoF is the parent of the next one; the first
    DoF of a joint has the last DoF of its parent joint as parent.
    """
    parents = [-1] * model.nv
    for jid in range(1, model.njoints):
        joint, parent = model.joints[jid], model.parents[jid]
        for k in range(joint.nv):
            i = joint.idx_v + k
            if k > 0:
                parents[i] = i - 1
            elif parent > 0:
                parents[i] = model.joints[parent].idx_v + model.joints[parent].nv - 1
    if any(p >= i for i, p in enumerate(parents)):
        raise ValueError("model: DoFs are not numbered parents first; the tree-sparse factorization needs it")
    return parents


def _ancestors(parents: Sequence[int], i: int) -> list[int]:
    chain = []
    i = parents[i]
    while i != -1:
        chain.append(i)
        i = parents[i]
    return chain


@dataclass(frozen=True)
class TreeLTL:
    """Factors of ``M = L^T D L``: ``L[(i, j)]`` for ancestors ``j`` of ``i``, ``d_inv[i] = 1 / D_i``."""

    parents: tuple[int, ...]
    L: dict[tuple[int, int], Any]
    d_inv: tuple[Any, ...]


def ltl_factor(M: ca.SX, parents: Sequence[int]) -> TreeLTL:
    """Factor a symmetric positive definite ``M`` (n x n) with the DoF tree ``parents`` (SX)."""
    n = len(parents)
    if M.shape != (n, n):
        raise ValueError(f"M: expected shape ({n}, {n}), got {M.shape}")
    anc = [_ancestors(parents, i) for i in range(n)]
    H = {(i, j): M[i, j] for i in range(n) for j in [i] + anc[i]}
    for k in reversed(range(n)):
        for idx, i in enumerate(anc[k]):
            a = H[k, i] / H[k, k]
            for j in anc[k][idx:]:  # i and its ancestors
                H[i, j] = H[i, j] - a * H[k, j]
            H[k, i] = a
    L = {(i, j): H[i, j] for i in range(n) for j in anc[i]}
    return TreeLTL(tuple(parents), L, tuple(1 / H[i, i] for i in range(n)))


def ltl_solve(factor: TreeLTL, b: ca.SX) -> ca.SX:
    """``M^-1 b`` for ``b`` (n x k) from the factors of :func:`ltl_factor` (SX)."""
    n = len(factor.parents)
    if b.shape[0] != n:
        raise ValueError(f"b: expected {n} rows, got {b.shape}")
    anc = [_ancestors(factor.parents, i) for i in range(n)]
    rows = [b[i, :] for i in range(n)]
    for i in reversed(range(n)):  # L^T y = b
        for j in anc[i]:
            rows[j] = rows[j] - factor.L[i, j] * rows[i]
    rows = [r * d for r, d in zip(rows, factor.d_inv)]
    for i in range(n):  # L x = z
        for j in anc[i]:
            rows[i] = rows[i] - factor.L[i, j] * rows[j]
    return ca.vertcat(*rows)
