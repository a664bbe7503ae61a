"""Gaits without a schedule: the homotopy on a constraint's bound, the contact-implicit problem, the gait it finds.

Oracles: the problem's own constraints evaluated on the returned plan (complementarity from the states and
forces, not from the solver's report), MuJoCo's dynamics through ``trajopt verify``, and the gait templates'
schedules for the gait classifier.
"""
import numpy as np
import pytest

import problems
import trajopt
from bench.convergence import perturbed_guess
from models import Go1, Humanoid, Pendulum
from trajopt import Constraint, IpoptSolver, Problem, QuadraticCost
from trajopt.homotopy import BoundHomotopy
from trajopt.legged import LEG_ROLES, gait
from trajopt.legged.contact_implicit import COMPLEMENTARITY, COMPLEMENTARITY_RELAXED, STANCE_FORCE, ContactImplicitProblem, discovery_period
from trajopt.legged.schedule import gait_name
from trajopt.report import solution_report
from trajopt.solvers import build_solver


def swing_up(bound: float) -> tuple:
    """A pendulum swing-up (3 s, reaching the top fast) whose torque ``u^2 <= bound`` is a constraint, and that constraint."""
    model = Pendulum()
    problem = Problem(model, N=41, tf=3.0, x0=[np.pi, 0.0])
    problem.add_constraint(Constraint(lambda x: x, knots=-1, lower=[0.0, 0.0], upper=[0.0, 0.0], name="up"))
    problem.add_cost(QuadraticCost(model, np.diag([1.0, 0.1]), np.array([[1e-3]]), x_ref=[0.0, 0.0]))
    torque = Constraint(lambda x, u: u * u, lower=-np.inf, upper=bound, name="torque squared")
    problem.add_constraint(torque)
    return problem, torque


def test_bound_homotopy_tightens_the_bound_solve_after_solve():
    """Each stage starts from the last; the returned solution holds the constraint's own (active) bound at the optimum
    a direct solve finds, counts every stage's iterations, lists the stages (in its file too); the bound is restored."""
    problem, torque = swing_up(4.0)
    problem.homotopy = BoundHomotopy(torque, (400.0, 25.0))
    solution = trajopt.solve(problem)
    assert solution.success and [stage["upper"] for stage in solution.homotopy] == [400.0, 25.0, 4.0]
    assert solution.iterations == sum(stage["iterations"] for stage in solution.homotopy)
    assert np.max(solution.controls[:, 0] ** 2) == pytest.approx(4.0, abs=1e-4) and torque.upper == 4.0
    direct = trajopt.solve(swing_up(4.0)[0])
    assert direct.success and solution.objective == pytest.approx(direct.objective, rel=1e-6)
    assert trajopt.Solution.from_bytes(solution.to_bytes()).homotopy == solution.homotopy


def test_later_homotopy_stages_start_as_homotopy_stages(monkeypatch):
    """The first stage starts from the guess; each later one from the last stage's primal-dual solution with the
    backend's homotopy options (trajopt.solvers.base.Start), not a re-solve's."""
    starts = []
    solve = IpoptSolver.solve

    def recorded(self, warm_start=None, initial_guess=None, multipliers=None, homotopy=False):
        starts.append((warm_start is not None, homotopy))
        return solve(self, warm_start, initial_guess, multipliers, homotopy)

    monkeypatch.setattr(IpoptSolver, "solve", recorded)
    problem, torque = swing_up(4.0)
    problem.homotopy = BoundHomotopy(torque, (400.0, 25.0))
    assert trajopt.solve(problem).success
    assert starts == [(False, False), (True, True), (True, True)]


def test_bound_homotopy_refuses_bounds_that_do_not_tighten():
    _, torque = swing_up(30.0)
    with pytest.raises(ValueError, match="decreasing order"):
        BoundHomotopy(torque, (100.0, 400.0))
    with pytest.raises(ValueError, match="must exceed the constraints' own upper bound 30"):
        BoundHomotopy(torque, (100.0, 20.0))
    with pytest.raises(TypeError, match="Constraint"):
        BoundHomotopy("torque", (1.0,))


def test_a_failed_stage_ends_the_homotopy_and_says_which():
    problem, torque = swing_up(4.0)
    problem.homotopy = BoundHomotopy(torque, (400.0, 25.0))
    solution = trajopt.solve(problem, max_iter=1)
    assert not solution.success and solution.status == "Maximum_Iterations_Exceeded (homotopy stage 1 of 3, torque squared <= 400)"
    assert len(solution.homotopy) == 1 and torque.upper == 4.0


@pytest.mark.parametrize("name", ["trot", "pace", "bound", "pronk"])
def test_gait_name_recognizes_the_templates(name):
    schedule = gait(name)
    assert gait_name(schedule.stance, LEG_ROLES)[0] == name
    shuffled = [2, 0, 3, 1]  # any column order, named by the roles
    assert gait_name(schedule.stance[:, shuffled], [LEG_ROLES[i] for i in shuffled])[0] == name
    assert gait_name(gait("stand").stance, LEG_ROLES) == ("stand", 1.0)
    walk = np.ones((40, 4), dtype=bool)
    for i, start in enumerate((0, 20, 10, 30)):  # each foot alone in the air, a quarter cycle apart
        walk[start : start + 8, i] = False
    assert gait_name(walk, LEG_ROLES)[0] == "four-beat"


def test_start_state_moves_the_base_with_the_feet_at_rest():
    robot = Go1()
    x = ContactImplicitProblem.start_state(robot, 0.5)
    assert np.abs(np.asarray(robot.kinematics_velocity(x))).max() < 1e-12 and x[robot.nq] == 0.5
    assert np.abs(np.asarray(robot.kinematics(x)).reshape(4, 3)[:, 2]).max() < 1e-12


@pytest.fixture(scope="module")
def discovered():
    problem = problems.get("go1-discover")
    return problem, trajopt.solve(problem)


def test_go1_discovers_a_walking_gait_at_half_a_metre_per_second(discovered):
    """From the all-stance guess: a gait with each foot swinging once (which one, trot or four-beat, bench/discover.py
    measures), complementarity within its bound (recomputed here from the states and forces), unloaded feet in the air
    and loaded ones at height zero and in place once the footfalls are held, the cycle's end its start moved 0.3 m."""
    problem, solution = discovered
    assert solution.success, solution.status
    assert [stage["upper"] for stage in solution.homotopy] == [*COMPLEMENTARITY_RELAXED, COMPLEMENTARITY, COMPLEMENTARITY]
    tolerance = 1e-8  # IPOPT's constraint violation tolerance (constr_viol_tol), absolute
    assert solution.homotopy[-2]["reached"] <= COMPLEMENTARITY + tolerance
    assert problem.complementarity_violation(solution) <= COMPLEMENTARITY + tolerance
    schedule = problem.solution_schedule(solution)
    assert problem.gait(solution)[0] in ("trot", "four-beat")
    for i in range(4):
        swings = np.flatnonzero(np.diff(schedule.stance[:, i].astype(int)) == -1)
        assert len(swings) == 1  # one lift-off per foot per cycle
    loads = problem.loads(solution.controls)
    assert np.all(loads[~schedule.stance] == 0.0) and np.all(loads[schedule.stance][1:] >= 0.0)
    feet = np.array([np.asarray(problem.robot.kinematics(x)).reshape(4, 3) for x in solution.states])
    assert np.abs(feet[:, :, 2][schedule.stance]).max() < 1e-6 and feet[:, :, 2].max() >= problem.swing_apex - 1e-6
    standing = schedule.stance[:-1] & schedule.stance[1:]
    assert np.abs(np.diff(feet[:, :, :2], axis=0)[standing]).max() < 1e-6  # a standing foot stays in place
    end = solution.states[-1].copy()
    end[0] -= 0.3
    np.testing.assert_allclose(end, problem.x0, atol=1e-6)


def test_the_discovered_gait_passes_mujoco_verification(discovered):
    pytest.importorskip("mujoco")
    from trajopt.mujoco.verify import verify

    problem, solution = discovered
    report = verify(solution)
    assert report.ok, report.verdict()
    assert np.array_equal(report.knots.stance, problem.solution_schedule(solution).stance)


def test_a_loaded_discovery_keeps_its_footfalls(discovered, tmp_path):
    """The footfalls held in the last solve are in the file: a reloaded solution has the same schedule and report."""
    problem, solution = discovered
    path = tmp_path / "gait.npz"
    solution.save(path)
    loaded = problems.load_solution(path)
    assert np.array_equal(loaded.problem.solution_schedule(loaded).stance, problem.solution_schedule(solution).stance)
    report = solution_report(loaded)
    assert f"gait found            {problem.gait(solution)[0]}" in report and "with the footfalls held" in report and "reached 1.00e-04" in report


def test_footfalls_count_short_lifts_as_stance():
    problem = problems.get("go1-discover")
    loads = np.full((problem.N, 4), 0.25)
    loads[5:7, 0] = 0.0  # two knots: a flicker, stance
    loads[10:20, 1] = 0.0  # a swing
    loads[12, 2] = STANCE_FORCE / 2  # below the threshold for one knot: stance
    forces = np.zeros((problem.N, 4, 3))
    forces[:, :, 2] = loads * problem.mass * 9.81
    W = np.zeros((problem.N, problem.contact_model.control_dim))
    W[:, problem.contact_model.f_slice] = forces.reshape(problem.N, 12)
    stance = problem.footfalls(W)
    assert stance[:, 0].all() and stance[:, 2].all() and (~stance[10:20, 1]).all() and stance[:10, 1].all()


def test_the_first_stage_takes_the_same_path_from_guesses_moved_by_round_off():
    """Solo12's first stage (complementarity relaxed to 1) from its guess and from guesses moved by a relative 1e-9:
    the same iterations and optimum. With height rows at the last knot, whose state the goal fixes with every foot
    on the ground (an inequality held on its bound), IPOPT failed there from seed 2 with an error in the step
    computation (docs/design/legged.md)."""
    problem = problems.get("discover", robot="solo12")
    assert problem.height_constraint.knots == list(range(1, problem.N - 1)) == problem.contact_complementarity.knots
    for constraint in (problem.contact_complementarity, problem.sliding_complementarity):
        constraint.upper = COMPLEMENTARITY_RELAXED[0]
    solver = build_solver(problem)
    runs = [solver.solve()]
    for seed in (1, 2):
        with perturbed_guess(problem, seed, 1e-9):
            runs.append(solver.solve())
    assert all(run.success for run in runs), [run.status for run in runs]
    assert len({run.iterations for run in runs}) == 1
    assert max(run.objective for run in runs) - min(run.objective for run in runs) <= 1e-9 * abs(runs[0].objective)


def test_the_default_cycle_shortens_with_speed():
    """0.6 s up to 0.5 m/s, the time to travel 0.3 m above, 0.4 s from 0.75 m/s, on the knots; any quadruped's scaled."""
    assert [discovery_period(v, 0.02) for v in (0.0, 0.5, -0.5, 0.6, 0.75, 1.5)] == pytest.approx([0.6, 0.6, 0.6, 0.5, 0.4, 0.4])
    assert problems.get("go1-discover", speed=1.5).schedule.duration == pytest.approx(0.4)
    go1 = problems.get("discover", robot="go1", speed=1.5)
    assert go1.schedule.duration == pytest.approx(0.4) and go1.schedule.dt == pytest.approx(0.02)
    assert problems.get("go1-discover", speed=1.5, period=0.6).schedule.duration == pytest.approx(0.6)


def test_bad_discovery_input():
    with pytest.raises(ValueError, match="one point foot per leg|leg roles"):
        ContactImplicitProblem(Humanoid(contacts_per_foot=4))
    with pytest.raises(ValueError, match="period"):
        ContactImplicitProblem(Go1(), period=0.1)
    with pytest.raises(ValueError, match="period"):
        ContactImplicitProblem(Go1(), period=0.61, dt=0.02)
    with pytest.raises(ValueError, match="speed"):
        ContactImplicitProblem(Go1(), speed=float("nan"))
    with pytest.raises(ValueError, match="complementarity"):
        ContactImplicitProblem(Go1(), complementarity=0.01)
    with pytest.raises(ValueError, match="finds a gait offline"):
        from trajopt.mpc.tasks import mpc_task

        mpc_task(problems.get("go1-discover"))
