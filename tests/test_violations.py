"""trajopt.violations: the largest violation of a point named, for every kind of row and variable."""
from __future__ import annotations

import numpy as np
import pytest

from trajopt import Constraint, IntervalConstraint, Solution, solve
from trajopt.nlp import NLP
from trajopt.report import solution_report
from trajopt.violations import row_label, variable_label, worst_violation
from tests.test_problem_check import _cart_past_a_wall


def _cart_with_every_row_kind() -> NLP:
    problem = _cart_past_a_wall(0.0)
    problem.add_constraint(Constraint(lambda x: x[1], knots=[3, 4], lower=-10.0, upper=10.0, midpoints=True, name="angle"))
    problem.add_interval_constraint(IntervalConstraint(lambda x, u, y, w: y[0] - x[0], intervals=[2], fractions=[0.5, 1.0], lower=-1.0, upper=1.0, name="step"))
    return NLP(problem, "hermite_simpson")


def test_every_row_and_variable_is_named_after_its_block():
    nlp = _cart_with_every_row_kind()
    labels = [row_label(nlp, r) for r in range(nlp.n_g)]
    assert labels.count("constraint 'wall' at knot 7") == 1 and "constraint 'goal' row 3 at knot 20" in labels
    assert "constraint 'angle' at collocation point 0 of interval 3" in labels
    assert "interval constraint 'step' row 1 on interval 2" in labels and "the dynamics defect row 3 on interval 19" in labels
    for r, label in enumerate(labels):  # each label's knot or interval is the row's stage
        assert label.endswith(f" {nlp.row_stage[r]}")
    names = [variable_label(nlp, i) for i in range(nlp.n_w)]
    assert len(set(names)) == nlp.n_w
    assert f"the state bound on x[2] at knot 5" == names[nlp.idx_x[5, 2]] and names[nlp.idx_u[4, 0]] == "the control bound on u[0] at knot 4"


def test_the_worst_entry_is_the_largest_violation():
    """At a solved point, the wall's row at knot 7 and then a control bound are made the largest violation."""
    nlp = _cart_with_every_row_kind()
    w = solve(nlp.problem, "hermite_simpson", print_level=0).primal
    g = np.asarray(nlp.g_function()(w, nlp.parameters())).reshape(-1)
    lbw, ubw, lbg, ubg = (*nlp.bounds_w(), *nlp.bounds_g())
    wall = next(b for b, block in enumerate(nlp.blocks) if block.kind == "constraint" and nlp.constraints[block.constraint].name == "wall")
    row = int(nlp.block_rows(wall)[7, 0])
    lbg = lbg.copy()
    lbg[row] = g[row] + 0.3
    bounds = (lbw, ubw, lbg, ubg)
    assert nlp.violation(w, g, bounds)[0] == pytest.approx(0.3, rel=1e-12)
    assert worst_violation(nlp, w, g, bounds) == f"constraint 'wall' at knot 7: {g[row]:.6g} < lower bound {g[row] + 0.3:.6g}"
    u = nlp.idx_u[2, 0]
    ubw = ubw.copy()
    ubw[u] = w[u] - 0.5
    assert worst_violation(nlp, w, g, (lbw, ubw, lbg, ubg)) == f"the control bound on u[0] at knot 2: {w[u]:.6g} > upper bound {w[u] - 0.5:.6g}"


def test_a_failed_solve_names_where_it_is_infeasible(tmp_path):
    """The goal behind the wall, solved anyway: IPOPT reports infeasibility; the report says which row, where."""
    solution = solve(_cart_past_a_wall(1.0), check=False, print_level=0)
    assert not solution.success
    first = solution_report(solution).splitlines()[0]
    assert first.startswith(f"cart: {solution.status} (FAILED; most violated: constraint 'goal' row 0 at knot 20: ")
    assert solution.worst_violation in first
    solution.save(tmp_path / "cart.npz")
    assert Solution.load(tmp_path / "cart.npz").worst_violation == solution.worst_violation

