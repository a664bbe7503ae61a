"""trajopt.problem_check: the states a problem fixes, tested against its bounds and constraints before the solve."""
from __future__ import annotations

import casadi as ca
import numpy as np
import pytest

import problems
from models.multibody_model import MultibodyModel
from models.planar_chain import Cartpole
from models.robot_data import urdf_path
from trajopt import Constraint, GoalConstraint, Problem, QuadraticCost, solve
from trajopt.problem_check import InfeasibleProblem, problem_violations, state_names


@pytest.fixture(scope="module")
def panda():
    return MultibodyModel.from_urdf(urdf_path("panda"), floating=False, name="panda")


def test_state_bounds_are_the_urdfs_limits(panda):
    """Joint 4 of the Panda: -3.0718 <= q4 <= -0.0698 rad, |v4| <= 2.175 rad/s (read from the file here)."""
    import xml.etree.ElementTree as ET

    limits = {j.get("name"): j.find("limit") for j in ET.parse(urdf_path("panda")).getroot().iter("joint") if j.get("type") != "fixed"}
    lower, upper = panda.state_bounds()
    names = state_names(panda)
    for i, name in enumerate(names[: panda.nq]):
        assert (lower[i], upper[i]) == (float(limits[name].get("lower")), float(limits[name].get("upper")))
        assert (lower[panda.nq + i], upper[panda.nq + i]) == (-float(limits[name].get("velocity")), float(limits[name].get("velocity")))
    assert names[3] == "panda_joint4" and names[panda.nq + 3] == "v[panda_joint4]"


def test_a_panda_at_its_zero_pose_is_refused_naming_joint_4(panda):
    """The neutral pose (all zeros) breaks q4 <= -0.0698 rad: one line, before anything is built."""
    problem = Problem(panda, N=11, tf=1.0, x0=np.zeros(panda.nx), name="panda")
    problem.bound_states(*panda.state_bounds())
    with pytest.raises(InfeasibleProblem, match=r"^problem 'panda': the initial state x0 breaks the state bounds at knot 0: panda_joint4 = 0 > upper bound -0.0698;"):
        solve(problem)
    start = np.zeros(panda.nx)
    start[3] = -1.0
    problem.x0 = start
    problem.check()


def _cart_past_a_wall(goal_position: float) -> Problem:
    """A cartpole whose cart must keep y <= 0.5 (a wall), at every knot, steered to ``goal_position``."""
    model = Cartpole(u_max=20.0)
    problem = Problem(model, N=21, tf=2.0, x0=np.array([0.0, np.pi, 0.0, 0.0]), name="cart")
    problem.add_cost(QuadraticCost(model, np.full(4, 1e-2), np.full(1, 1e-2), x_ref=np.zeros(4)))
    problem.add_constraint(Constraint(lambda x: 0.5 - x[0], lower=0.0, upper=np.inf, name="wall"))
    problem.add_constraint(GoalConstraint(model, np.array([goal_position, 0.0, 0.0, 0.0])))
    return problem


def test_a_goal_behind_the_wall_is_refused_naming_the_constraint():
    with pytest.raises(InfeasibleProblem, match=r"the goal breaks constraint 'wall' at knot 20: its value = -0.5 < lower bound 0"):
        _cart_past_a_wall(1.0).check()
    _cart_past_a_wall(0.5).check()  # on the wall: feasible


def test_knots_pinned_by_bounds_are_checked_and_control_rows_are_not():
    problem = _cart_past_a_wall(0.0)
    problem.bound_states([0.8, 0.0, 0.0, 0.0], [0.8, 0.0, 0.0, 0.0], knots=10)
    problem.add_constraint(Constraint(lambda x, u: u - 100.0, lower=0.0, upper=np.inf, name="needs a control"))
    violations = problem_violations(problem)
    assert [(v.what, v.knot, v.constraint) for v in violations] == [("the state the bounds fix at knot 10", 10, "constraint 'wall'")]


def test_an_infeasible_start_solves_with_check_off():
    """``check=False``: the solver is handed the start and reports what it finds."""
    problem = _cart_past_a_wall(0.0)
    problem.x0 = np.array([0.7, np.pi, 0.0, 0.0])
    with pytest.raises(InfeasibleProblem, match="x0 breaks constraint 'wall' at knot 0"):
        solve(problem)
    solution = solve(problem, check=False, max_iter=3)
    assert not solution.success


@pytest.mark.parametrize("name", sorted(problems.names()))
def test_every_registered_problem_passes_its_check(name):
    problems.get(name).check()


def test_the_check_reads_casadi_functions_of_the_state():
    """A ``casadi.Function`` of ``(x, u, p)`` that ignores ``u`` is checked; one that reads it is not."""
    model = Cartpole()
    x, u, p = ca.SX.sym("x", 4), ca.SX.sym("u", 1), ca.SX.sym("p", 0)
    problem = Problem(model, N=5, tf=1.0, x0=np.array([2.0, np.pi, 0.0, 0.0]))
    problem.add_constraint(Constraint(ca.Function("f", [x, u, p], [x[0]]), upper=1.0, lower=-1.0, name="track"))
    problem.add_constraint(Constraint(ca.Function("g", [x, u, p], [x[0] + u]), upper=1.0, lower=-1.0, name="track and force"))
    assert [v.constraint for v in problem_violations(problem)] == ["constraint 'track'"]
