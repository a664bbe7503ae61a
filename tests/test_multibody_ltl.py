"""Tree-sparse ``M = L^T D L`` factorization (:mod:`models.multibody.ltl`) against dense solves.

Joint-space inertia matrices of Go1 and the G1 humanoid (pinocchio's CRBA) at
random configurations; ``M^-1 B`` must match ``numpy.linalg.solve`` to
``TOL = 1e-12`` relative to ``max(1, |x|)`` after scaling by ``|M^-1|``.
"""
from __future__ import annotations

import casadi as ca
import numpy as np
import pinocchio as pin
import pytest

from models.multibody.ltl import dof_parents, ltl_factor, ltl_solve
from models.robot_data import load_pinocchio_model, urdf_path

TOL = 1e-12


@pytest.mark.parametrize("robot", ["go1", "g1"])
def test_solve_matches_dense_solve(robot: str) -> None:
    model = load_pinocchio_model(urdf_path(robot))
    data = model.createData()
    parents = dof_parents(model)
    assert all(-1 <= p < i for i, p in enumerate(parents))
    M_sym, b_sym = ca.SX.sym("M", model.nv, model.nv), ca.SX.sym("b", model.nv, 3)
    solve = ca.Function("tree_solve", [M_sym, b_sym], [ltl_solve(ltl_factor(M_sym, parents), b_sym)])
    rng = np.random.default_rng(0)
    for _ in range(20):
        q = pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq))
        M = pin.crba(model, data, q)
        M = np.triu(M) + np.triu(M, 1).T
        b = rng.standard_normal((model.nv, 3))
        expected = np.linalg.solve(M, b)
        scale = np.abs(np.linalg.inv(M)).max() * np.abs(b).max()
        assert np.all(np.abs(solve(M, b).full() - expected) <= TOL * max(1.0, scale))


def test_dof_parents_of_a_floating_quadruped() -> None:
    parents = dof_parents(load_pinocchio_model(urdf_path("go1")))
    assert parents[:6] == [-1, 0, 1, 2, 3, 4]  # the free-flyer's DoFs form a chain
    assert [parents[i] for i in (6, 9, 12, 15)] == [5, 5, 5, 5]  # each hip hangs off the base
    assert parents[7:9] == [6, 7]


def test_bad_shapes() -> None:
    parents = [-1, 0]
    with pytest.raises(ValueError, match="M: expected shape"):
        ltl_factor(ca.SX.sym("M", 3, 3), parents)
    with pytest.raises(ValueError, match="b: expected 2 rows"):
        ltl_solve(ltl_factor(ca.SX.sym("M", 2, 2), parents), ca.SX.sym("b", 3))
