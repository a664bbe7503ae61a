"""Any model name works: every ``casadi.Function`` built from a model's name gets a valid name
(:func:`models.casadi_names.casadi_name`), while the model, its solution and its files keep the
name the user gave."""
from __future__ import annotations

import re

import casadi as ca
import numpy as np
import pytest

from lie import axis_angle_to_quat
from models import MultibodyModel, Pendulum, RigidBody
from models.casadi_names import casadi_name
from models.pinocchio_builders import pendulum_model
from trajopt import GoalConstraint, Problem, QuadraticCost, Solution, solve
from trajopt.plotting.solution import plot_solution

#: A hyphen (as the registered problems are named), a space, a leading digit, non-ASCII letters.
AWKWARD_NAMES = ["thrust-body", "thrust body", "3body", "Drohne-ä", "λ-body"]


def casadi_accepts(name: str) -> bool:
    """Whether CasADi itself takes ``name`` for a Function (the oracle of the rule)."""
    x = ca.SX.sym("x")
    try:
        ca.Function(name, [x], [x])
    except RuntimeError:
        return False
    return True


@pytest.mark.parametrize(
    "label",
    [*AWKWARD_NAMES, "", "-", "__", "_a", "a__b", "a_", "jac", "hess", "null", "無人機", "Straße", "x" * 3, "my robot (v2).urdf", "ﬁve"],
)
def test_casadi_name_is_accepted_by_casadi(label):
    name = casadi_name(label)
    assert casadi_accepts(name), name
    assert casadi_name(name) == name  # idempotent: a valid name stays as it is


@pytest.mark.parametrize("label", ["a", "thrust_body", "Go1", "a_", "x1_2", "int", "jac_g"])
def test_valid_names_are_unchanged(label):
    assert casadi_accepts(label)
    assert casadi_name(label) == label


@pytest.mark.parametrize(
    "label, expected",
    [
        ("thrust-body_chart_velocity", "thrust_body_chart_velocity"),
        ("thrust body", "thrust_body"),
        ("3body", "fn_3body"),
        ("Drohne-ä", "Drohne_a"),
        ("λ-body", "u03bb_body"),
        ("jac", "fn_jac"),
        ("", "fn"),
    ],
)
def test_casadi_name_mapping(label, expected):
    assert casadi_name(label) == expected


class ThrustBody(RigidBody):
    """A rigid body (1 kg, inertia diag(0.01, 0.01, 0.02) kg m^2) under gravity, with a body-z thrust
    ``u[0]`` (N) and three body-frame moments ``u[1:4]`` (N m); its name is whatever the user gives."""

    def __init__(self, name: str) -> None:
        super().__init__(rotation="quaternion")
        self.name = name
        self.set_mass_properties(1.0, [0.01, 0.01, 0.02])

    @property
    def control_dim(self) -> int:
        return 4

    def forces(self, x, u, t):
        R = self.rotation.to_rot(x[3:7])
        return R[:, 2] * u[0] - ca.DM([0.0, 0.0, 9.81 * self.mass()])

    def moments(self, x, u, t):
        return u[1:4]


def hop_problem(model: ThrustBody) -> Problem:
    """Hover at the origin to hover at (1, 0, 1) m in 2 s, N = 21."""
    rest = np.zeros(3)
    x0 = model.build_state(rest, axis_angle_to_quat(rest), rest, rest)
    xf = model.build_state([1.0, 0.0, 1.0], axis_angle_to_quat(rest), rest, rest)
    problem = Problem(model, N=21, tf=2.0, x0=x0)
    problem.add_cost(QuadraticCost(model, Q=np.full(12, 1e-2), R=np.full(4, 1e-1), x_ref=xf, u_ref=[9.81, 0, 0, 0]))
    problem.add_constraint(GoalConstraint(model, xf))
    return problem


@pytest.mark.parametrize("name", AWKWARD_NAMES)
def test_rigid_body_with_any_name_solves(name, tmp_path):
    problem = hop_problem(ThrustBody(name))
    for solver, transcription, chart in (("ipopt", "hermite_simpson", False), ("fatrop", "multiple_shooting_rk4", True)):
        solution = solve(problem, transcription, solver=solver, chart=chart)
        assert solution.success, (name, solver, solution.status)
        np.testing.assert_allclose(solution.states[-1, :3], [1.0, 0.0, 1.0], atol=1e-6)
    assert problem.model.name == name  # the model keeps the user's name ...
    assert name in solution.model_name
    path = tmp_path / "hop.npz"
    solution.save(path)
    assert Solution.load(path, problem=problem).model_name == solution.model_name  # ... and its files too
    plot_solution(solution, tmp_path / "hop.png")


def swing_up_solution(model):
    """A pendulum-like model (state [theta, theta_dot], one torque) swung from 0 to pi in 3 s, |u| <= 5 N m."""
    problem = Problem(model, N=31, tf=3.0, x0=[0.0, 0.0])
    problem.add_cost(QuadraticCost(model, Q=np.zeros(2), R=np.ones(1), x_ref=np.zeros(2)))
    problem.add_constraint(GoalConstraint(model, [np.pi, 0.0]))
    problem.bound_controls(-5.0, 5.0)
    return solve(problem)


def test_planar_chain_with_any_name_solves():
    model = Pendulum()
    model.name = "pendule n°1"
    solution = swing_up_solution(model)
    assert solution.success, solution.status
    assert model.casadi_function("dynamics").name() == "pendule_n_1_dynamics"


def test_multibody_model_with_any_name_solves():
    model = MultibodyModel(pendulum_model(1.0, 1.0), kinematics_bodies=["tip"], name="2-link arm/ü")
    assert model.name == "2-link arm/ü"
    solution = swing_up_solution(model)
    assert solution.success, solution.status


@pytest.mark.slow
def test_compiled_functions_of_any_name(tmp_path):
    """The compiled path names its C files and libraries after the Functions, and solves with them."""
    model = MultibodyModel(pendulum_model(1.0, 1.0), kinematics_bodies=["tip"], name="2-link arm/ü")
    assert model.compile(["dynamics"], cache_dir=tmp_path) == ["dynamics"]
    assert [path.name.split(".")[0].rsplit("_", 1)[0] for path in tmp_path.rglob("*.so")] == ["fn_2_link_arm_u_dynamics"]
    x, u = np.array([0.3, -0.2]), np.array([0.5])
    np.testing.assert_allclose(model.dynamics(x, u), model.casadi_function("dynamics")(x, u, 0).full().ravel(), rtol=1e-12, atol=1e-12)
    solution = solve(hop_problem(ThrustBody("thrust-body")), "hermite_simpson", compile=True)
    assert solution.success, solution.status
