"""The kinodynamic legged OCP (issue 7): go1-trot-kinodynamic on FloatingBaseModel, against go1-trot.

The plan is checked at every knot with the full model's kinematics of the
converted state (feet on footholds, swing heights, friction, limits), and its
base dynamics with pinocchio: the planned ``a_B`` is
``M[:6,:6]^-1 (sum_i J_b,i^T f_i - nle[:6])`` at zero joint accelerations.
Tolerances: ``TOL = 1e-6`` on constraints (IPOPT stops at 1e-8); ``A_TOL =
1e-5`` on ``a_B``, which is the residual (<= 1e-8) times ``M_bb^-1`` (norm
~15 for Go1's 13 kg, 0.1 kg m^2) relative to accelerations of order 10.
The comparison with the full-dynamics trot uses loose, measured bounds (two
different models of the same gait; see each comment).
"""
import numpy as np
import pinocchio as pin
import pytest

import problems
from lie import quat_to_rot
from models.floating_base import BASE_POSITION, JOINT_POSITIONS, MAX_PITCH, PITCH
from trajopt import solve
from trajopt.legged import ContactSchedule, gait
from trajopt.legged.kinodynamic import KinodynamicProblem

from .legged_checks import TOL, check_contact_plan

A_TOL = 1e-5


@pytest.fixture(scope="module")
def trot():
    problem = problems.get("go1-trot-kinodynamic")
    return problem, solve(problem)


@pytest.fixture(scope="module")
def full_trot(trot):
    problem, _ = trot
    return solve(problem.full_problem)


def locked_inertia_acceleration(robot, x_mb, forces):
    """Pinocchio's ``M[:6,:6]^-1 (sum_i J_b,i^T f_i - nle[:6])`` (joint accelerations zero)."""
    m, d = robot.pin_model, robot.pin_model.createData()
    q, v = robot.change_order(x_mb[: robot.nq], "nominal", "pinocchio"), x_mb[robot.nq :]
    M = pin.crba(m, d, q)
    M = np.triu(M) + np.triu(M, 1).T
    pin.computeJointJacobians(m, d, q)
    pin.framesForwardKinematics(m, d, q)
    g = sum(pin.getFrameJacobian(m, d, m.getFrameId(b), pin.LOCAL_WORLD_ALIGNED)[:3].T @ forces[3 * i : 3 * i + 3] for i, b in enumerate(robot.kinematics_bodies))
    return np.linalg.solve(M[:6, :6], g[:6] - pin.nonLinearEffects(m, d, q, v)[:6])


def check_kinodynamic_solution(problem, solution):
    """The gait constraints at every knot, in the full model's kinematics."""
    assert solution.success, solution.status
    assert solution.max_violation < TOL
    robot, fb = problem.robot, problem.floating_base
    X, U = solution.states, solution.controls
    X_mb = problem.multibody_states(X, U)
    feet = np.array([robot.kinematics(x).reshape(-1, 3) for x in X_mb])
    F = U[:, fb.force_slice].reshape(len(X), robot.nc, 3)
    check_contact_plan(problem, feet, F)
    assert (X[1:, JOINT_POSITIONS] >= robot.joint_lower - TOL).all() and (X[1:, JOINT_POSITIONS] <= robot.joint_upper + TOL).all()
    assert (np.abs(U[:, fb.joint_velocity_slice]) <= robot.velocity_limits + TOL).all()
    assert np.abs(X[:, PITCH]).max() <= MAX_PITCH
    assert np.linalg.norm(X[-1, BASE_POSITION] - problem.target_base_position) < 1e-3
    # the planned base acceleration is the locked-inertia dynamics (pinocchio)
    for x_mb, x, u in zip(X_mb, X, U):
        a_b = u[fb.base_acceleration_slice] if problem.formulation == "inverse" else fb.dynamics(x, u)[:6]
        expected = locked_inertia_acceleration(robot, x_mb, u[fb.force_slice])
        assert np.all(np.abs(a_b - expected) <= A_TOL * np.maximum(1.0, np.abs(expected)))


def test_go1_trot_kinodynamic_solves_and_meets_the_contact_constraints(trot):
    problem, solution = trot
    assert problem.formulation == "inverse" and solution.transcription == "trapezoidal"
    check_kinodynamic_solution(problem, solution)
    assert np.array_equal(solution.controls[0, problem.floating_base.joint_velocity_slice], np.zeros(12))  # starts at rest like x0


def test_kinodynamic_trot_is_close_to_the_full_dynamics_trot(trot, full_trot):
    problem, solution = trot
    X_kino = problem.multibody_states(solution.states, solution.controls)
    X_full = full_trot.states
    assert full_trot.success
    # same schedule, footholds and weights; the models differ by the leg inertia coupling
    # M_bj qddot_j and the torque terms: measured 7.3 mm and 0.82 deg apart at most
    assert np.linalg.norm(X_kino[:, :3] - X_full[:, :3], axis=1).max() < 0.02
    angles = [np.arccos(np.clip((np.trace(quat_to_rot(a[3:7]).T @ quat_to_rot(b[3:7])) - 1) / 2, -1, 1)) for a, b in zip(X_kino, X_full)]
    assert np.degrees(max(angles)) < 3.0
    # torque-free plan: its implied torques (zero joint accelerations) stay within the Go1 limits (measured <= 50 %)
    fb = problem.floating_base
    tau = np.array([fb.implied_joint_torques(x, u) for x, u in zip(solution.states, solution.controls)])
    assert (np.abs(tau) <= problem.robot.torque_limits()).all()


def test_forward_formulation_reaches_the_same_trot(trot):
    # the flow map itself inside the collocation; the optima differ only by the
    # inverse formulation's 1e-4 regularization of a_B (measured 0.16 mm)
    _, inverse = trot
    problem = problems.get("go1-trot-kinodynamic", formulation="forward")
    solution = solve(problem)
    check_kinodynamic_solution(problem, solution)
    assert np.abs(solution.states[:, BASE_POSITION] - inverse.states[:, BASE_POSITION]).max() < 1e-3


@pytest.mark.slow  # 1-11 s each; multiple shooting integrates the flow map with RK4
@pytest.mark.parametrize("formulation, transcription", [("inverse", "hermite_simpson"), ("forward", "hermite_simpson"), ("forward", "multiple_shooting")])
def test_other_transcriptions(formulation, transcription):
    problem = problems.get("go1-trot-kinodynamic", formulation=formulation)
    check_kinodynamic_solution(problem, solve(problem, transcription=transcription))


def test_inverse_formulation_refuses_multiple_shooting():
    with pytest.raises(ValueError, match="multiple shooting"):
        solve(problems.get("go1-trot-kinodynamic"), transcription="multiple_shooting")


def test_bad_input_is_a_clear_error(trot):
    robot = trot[0].robot
    with pytest.raises(ValueError, match="formulation"):
        KinodynamicProblem(robot, gait("trot"), formulation="implicit")
    with pytest.raises(ValueError, match="friction"):
        KinodynamicProblem(robot, gait("trot"), friction="square")
    with pytest.raises(ValueError, match="not frames"):
        KinodynamicProblem(robot, gait("trot", foot_names=("FL_foot", "FR_foot", "RL_foot", "paw")))
    with pytest.raises(ValueError, match="schedule: has 3 feet"):
        KinodynamicProblem(robot, ContactSchedule(("FL_foot", "FR_foot", "RL_foot"), np.ones((5, 3), bool), 0.02))
