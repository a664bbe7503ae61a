"""IPOPT on equilibrated variables (:mod:`trajopt.solvers.scaling`): the same optimum, in the problem's units, on a steadier path."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import problems
from bench.convergence import perturbed_guess
from trajopt.solvers import solver_class
from trajopt.solvers.scaling import control_bound_scale, equilibrated_scale


def _jacobian(seed: int = 0) -> sp.csc_matrix:
    rng = np.random.default_rng(seed)
    J = sp.random(30, 12, density=0.4, random_state=rng, format="csc")
    J.data = rng.uniform(0.5, 2.0, J.nnz) * rng.choice([-1.0, 1.0], J.nnz)
    return J + sp.eye(30, 12, format="csc")


def _column_spread(A: sp.spmatrix) -> float:
    """log2 of the largest column maximum of ``|A|`` over the smallest."""
    col = np.log2(abs(A).max(axis=0).toarray().ravel())
    return float(col.max() - col.min())


def test_the_scale_is_exact_and_undoes_most_of_a_change_of_units():
    """Scales are powers of two (scaling and unscaling are exact); columns measured in units 2^-6 .. 2^5
    apart are brought back close together; an equilibrated matrix is left as it is."""
    J = _jacobian()
    units = 2.0 ** np.arange(-6, 6)
    J_units = J @ sp.diags(units)
    D = equilibrated_scale(J_units, np.zeros(12, dtype=bool), [])
    assert np.array_equal(np.log2(D), np.round(np.log2(D)))
    assert _column_spread(J_units) > 10.0 and _column_spread(J_units @ sp.diags(D)) < 0.5 * _column_spread(J_units)
    signed_permutation = sp.csc_matrix(np.diag([1.0, -1.0, 1.0])[[2, 0, 1]])
    assert np.array_equal(equilibrated_scale(signed_permutation, np.zeros(3, dtype=bool), []), np.ones(3))


def test_controls_are_scaled_by_their_largest_bound_rounded_to_a_power_of_two():
    lbw = np.array([-1.0, -88.0, 0.0, -np.inf, 0.0, -5.0])
    ubw = np.array([1.0, 88.0, 4.0, np.inf, 0.0, 23.7])
    scale = control_bound_scale(lbw, ubw, np.array([[1, 2], [3, 4], [5, 0]]))
    assert scale.tolist() == [1.0, 64.0, 4.0, 1.0, 1.0, 32.0]  # 88 -> 2^6, 4 -> 2^2, unbounded and zero -> 1, 23.7 -> 2^5


def test_the_costs_curvature_caps_a_controls_unit():
    lbw = np.array([-1000.0, -1000.0, -23.7, -np.inf, 0.0])
    ubw = np.array([1000.0, 1000.0, 23.7, np.inf, 0.0])
    curvature = np.array([2.4e-4, 0.0, 2e-5, 1.0, 1.0])  # 1/sqrt: 64.5, none, 224, 1, 1
    scale = control_bound_scale(lbw, ubw, np.arange(5), curvature)
    assert scale.tolist() == [64.0, 1024.0, 32.0, 1.0, 1.0]  # capped; no curvature -> the bound's; the bound's smaller; unbounded or fixed -> 1


def test_a_coordinate_shares_one_scale_and_fixed_variables_follow_it():
    J = _jacobian(1) @ sp.diags(2.0 ** np.array([3, 0, -2, 1, 5, -1, 3, 0, -2, 1, 5, -1]))
    coordinates = [np.arange(12).reshape(4, 3)]  # 4 knots of a 3-coordinate variable
    fixed = np.zeros(12, dtype=bool)
    fixed[0] = True
    D = equilibrated_scale(J, fixed, coordinates)
    assert np.all(D.reshape(4, 3) == D[:3])


@pytest.fixture(scope="module")
def stand():
    return problems.get("go1-stand")


def test_scaled_ipopt_reaches_the_same_optimum_in_the_problems_units(stand):
    scaled = solver_class("ipopt")(stand)
    assert scaled.variable_scale is not None and not np.all(scaled.variable_scale == 1.0)
    a = scaled.solve()
    stand.scale_variables = False
    try:
        b = solver_class("ipopt")(stand).solve()
    finally:
        del stand.scale_variables  # back to the class's setting
    assert a.success and b.success
    assert abs(a.objective - b.objective) <= 1e-8 * abs(b.objective)
    assert np.allclose(a.states, b.states, atol=1e-6)
    assert a.max_violation <= 1e-8
    # stationarity in the problem's units: grad f + J^T lam_g + lam_x = 0 (multipliers unscaled)
    nlp, p = scaled.nlp, scaled.nlp.parameters()
    grad = np.asarray(scaled._stagewise_options["grad_f"](a.primal, p)[1]).ravel()
    J = scaled._stagewise_options["jac_g"](a.primal, p)[1]
    residual = grad + np.asarray(J.T @ a.lam_g).ravel() + a.lam_x
    free = nlp.bounds_w()[0] != nlp.bounds_w()[1]
    assert np.abs(residual[free]).max() <= 1e-6 * max(1.0, np.abs(grad).max())


def test_warm_start_keeps_the_scale_and_reconverges_at_once(stand):
    solver = solver_class("ipopt")(stand)
    first = solver.solve()
    again = solver.solve(warm_start=first)
    assert again.success and again.iterations <= 3
    assert abs(again.objective - first.objective) <= 1e-9 * abs(first.objective)


def test_round_off_no_longer_steers_the_stand(stand):
    """go1-stand took 7 to 20 iterations under perturbations of its guess by 1e-7 before the scaling."""
    solver = solver_class("ipopt")(stand)
    counts = {solver.solve().iterations}
    for seed in range(1, 6):
        with perturbed_guess(stand, seed, 1e-7):
            counts.add(solver.solve().iterations)
    assert len(counts) == 1, counts
