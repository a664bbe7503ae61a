"""Legged gait optimization (issue 5): schedules, the Go1/Go2 gait problems, replay."""
import numpy as np
import pytest

import problems
from models import Go1
from trajopt import solve
from trajopt.legged import ContactSchedule, LeggedProblem, gait, jump
from trajopt.legged.replay import replay

from .legged_checks import TOL, check_contact_plan



def test_trot_schedule_matches_crocoddyl_timing():
    s = gait("trot")
    assert s.N == 31 and np.isclose(s.duration, 0.6)
    fl, fr, rl, rr = (s.stance[:, i] for i in range(4))
    assert np.array_equal(fl, rr) and np.array_equal(fr, rl)  # diagonal pairs
    assert s.swings(1) == [(2, 14)] and s.swings(0) == [(17, 29)]  # 2 support, 13 swing, 2 support, 13 swing
    assert s.stance[[0, 1, 15, 16, 30]].all()
    assert "FL |#################.............#|" in s.diagram()  # keyed by leg roles
    assert "FL_foot |#################.............#|" in problems.get("go1-trot").schedule.diagram()  # bound to Go1's feet


@pytest.mark.parametrize("name", ["pace", "bound", "pronk", "stand"])
def test_gait_templates(name):
    s = gait(name, cycles=2)
    assert s.N == 61
    if name == "stand":
        assert s.stance.all()
    elif name == "pronk":
        assert (~s.stance.any(axis=1)).sum() > 0  # flight knots
    else:
        assert s.stance.sum(axis=1).min() == 2


def test_schedule_bad_input():
    with pytest.raises(ValueError, match="unknown gait 'gallop'"):
        gait("gallop")
    with pytest.raises(ValueError, match="stance"):
        ContactSchedule(("a", "b"), np.ones((5, 3), bool), 0.02)
    with pytest.raises(ValueError, match="period"):
        gait("trot", period=0.61)
    robot = Go1()
    with pytest.raises(ValueError, match="not frames"):
        LeggedProblem(robot, gait("trot", foot_names=("FL_foot", "FR_foot", "RL_foot", "paw")))
    with pytest.raises(ValueError, match="schedule: has 3 feet"):
        LeggedProblem(robot, ContactSchedule(("FL_foot", "FR_foot", "RL_foot"), np.ones((5, 3), bool), 0.02))
    with pytest.raises(ValueError, match="schedule: has 31 knots but the problem has N = 20"):
        LeggedProblem(robot, gait("trot"), N=20)
    assert problems.get("go1-trot", N=61).schedule.dt == pytest.approx(0.01)
    with pytest.raises(ValueError, match="N: expected"):
        problems.get("go1-trot", N=10, cycles=2)


def check_gait_solution(problem, solution):
    """The issue's acceptance checks at every knot."""
    assert solution.success, solution.status
    assert solution.max_violation < TOL
    robot, cm = problem.robot, problem.contact_model
    X, W = solution.states, solution.controls
    feet = np.array([np.asarray(robot.kinematics(x)).reshape(-1, 3) for x in X])
    check_contact_plan(problem, feet, W[:, cm.f_slice].reshape(len(X), robot.nc, 3))
    # torques within the URDF limits, final base position commanded
    assert (np.abs(W[:, cm.u_slice]) - robot.torque_limits()).max() <= TOL
    assert np.linalg.norm(X[-1, :3] - problem.target_base_position) < 1e-3
    # the inverse-dynamics residual really is the manipulator equation (checked with pinocchio's rnea)
    import pinocchio as pin

    data = robot.pin_model.createData()
    for x, w in zip(X, W):
        q_pin = robot.change_order(x[: robot.nq], "nominal", "pinocchio")
        u, f, a = cm.split_control(w) if cm.formulation == "inverse" else (w[cm.u_slice], w[cm.f_slice], None)
        if a is None:
            continue
        pin.framesForwardKinematics(robot.pin_model, data, q_pin)
        Jt_f = sum(pin.computeFrameJacobian(robot.pin_model, data, q_pin, robot.pin_model.getFrameId(b), pin.LOCAL_WORLD_ALIGNED)[:3].T @ f[3 * i : 3 * i + 3] for i, b in enumerate(robot.kinematics_bodies))
        tau = pin.rnea(robot.pin_model, data, q_pin, x[robot.nq :], a)
        assert np.abs(tau - Jt_f - robot.B_func() @ u).max() < TOL * max(1.0, np.abs(tau).max())


@pytest.fixture(scope="module")
def go1_trot():
    problem = problems.get("go1-trot")
    return problem, solve(problem)


def test_go1_trot_solves_and_meets_the_contact_constraints(go1_trot):
    problem, solution = go1_trot
    check_gait_solution(problem, solution)
    assert solution.transcription == "trapezoidal"


def test_go1_trot_replay_drift_is_bounded(go1_trot):
    # Open-loop replay with the planned contacts enforced: the plan's trapezoidal
    # collocation error (h = 0.02 s) feeds an unstable (falling) system, so the
    # drift grows; measured 1.9 mm / 0.63 deg / 7.4 mm (feet) over 0.6 s.
    problem, solution = go1_trot
    result = replay(problem, solution, substeps=10)
    assert result.base_position_drift.max() < 0.01
    assert np.degrees(result.base_orientation_drift.max()) < 3.0
    assert result.foot_drift.max() < 0.02
    assert np.all(np.isfinite(result.states))


@pytest.mark.parametrize("name", ["go1-pace", "go1-bound", "go1-jump", "go2-trot"])
def test_other_gaits_solve(name):
    problem = problems.get(name)
    check_gait_solution(problem, solve(problem))


@pytest.mark.slow
@pytest.mark.parametrize("formulation, transcription", [("forward", "trapezoidal"), ("forward", "hermite_simpson"), ("inverse", "hermite_simpson")])
def test_go1_trot_other_formulations(formulation, transcription):
    problem = problems.get("go1-trot", formulation=formulation)
    check_gait_solution(problem, solve(problem, transcription=transcription))


def test_inverse_formulation_refuses_multiple_shooting():
    with pytest.raises(ValueError, match="multiple shooting"):
        solve(problems.get("go1-trot"), transcription="multiple_shooting")


def test_jump_has_a_flight_phase():
    s = jump()
    flight = ~s.stance.any(axis=1)
    assert flight.sum() == 10 and s.stance[0].all() and s.stance[-1].all()


def test_humanoid_shift_solves():
    # four corners per sole share the sole's 6 stance rows (36 iterations, ~2 s; with
    # all 24 corner rows it took 175 iterations): every corner must still sit on its foothold
    problem = problems.get("humanoid-shift")
    solution = solve(problem)
    check_gait_solution(problem, solution)
    assert sum(problem.stance_directions()[i].shape[0] for i in range(problem.robot.nc)) == 12


def test_go1_jump_replay_drift_is_bounded():
    # The jump pushes off at the torque limits; without the control-rate penalty
    # the trapezoidal plan alternates its controls from knot to knot and an
    # open-loop replay drifts 8.6 cm / 17 deg. With it: measured 5 mm / 0.6 deg.
    problem = problems.get("go1-jump")
    result = replay(problem, solve(problem), substeps=10)
    assert result.base_position_drift.max() < 0.02
    assert np.degrees(result.base_orientation_drift.max()) < 3.0


def test_periodic_trot_with_the_exact_friction_cone():
    robot = Go1(mu=0.7)
    problem = LeggedProblem(robot, gait("trot"), periodic=True, friction="cone")
    solution = solve(problem)
    assert solution.success and solution.max_violation < TOL
    X, nq = solution.states, robot.nq
    assert np.abs(X[-1, 7:nq] - X[0, 7:nq]).max() < TOL  # joints back where they started
    assert np.abs(X[-1, nq:] - X[0, nq:]).max() < TOL  # velocities too
    assert np.linalg.norm(X[-1, :3] - problem.target_base_position) < 1e-3
    F = solution.controls[:, problem.contact_model.f_slice].reshape(len(X), robot.nc, 3)[problem.schedule.stance]
    assert (robot.mu * F[:, 2] - np.hypot(F[:, 0], F[:, 1])).min() >= -TOL  # the cone itself, not the pyramid
