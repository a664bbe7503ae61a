"""Free phase durations of the legged problems (trajopt.legged.timing, ``-p timing=free``): the phases of a
schedule, their bounds and rows, the registry and command line, and the jumps solved with free timing and
verified in MuJoCo against their fixed-timing solutions."""
import numpy as np
import pytest

import problems
from trajopt import PhaseDurations, solve
from trajopt.batch.points import ProblemRef, canonical_params
from trajopt.cli import main
from trajopt.legged import gait, jump
from trajopt.legged.timing import PHASE_RANGE, free_phase_durations, schedule_phases
from trajopt.mpc.tasks import mpc_task
from trajopt.plotting import plot_solution


def test_phases_are_the_runs_of_one_stance_pattern():
    trot = gait("trot", dt=0.02, period=0.6)
    knots = schedule_phases(trot)
    assert knots == [0, 2, 15, 17, 30]
    for a, b in zip(knots[:-1], knots[1:]):
        assert (trot.stance[a:b] == trot.stance[a]).all()  # one pattern within a phase
        if b < trot.N - 1:
            assert not np.array_equal(trot.stance[b], trot.stance[a])  # another from its last knot on
    assert schedule_phases(jump(crouch_knots=15, flight_knots=10, landing_knots=15)) == [0, 15, 25, 39]


def test_free_timing_bounds_each_phase_and_keeps_the_total():
    schedule = jump(crouch_knots=15, flight_knots=10, landing_knots=15)
    timing = free_phase_durations(schedule, "free")
    scheduled = np.array([15, 10, 14]) * 0.02
    assert np.allclose(timing.guess, scheduled, rtol=0, atol=1e-15)
    assert np.allclose(timing.lower, PHASE_RANGE[0] * scheduled) and np.allclose(timing.upper, PHASE_RANGE[1] * scheduled)
    assert timing.rows.tolist() == [[1.0, 1.0, 1.0]] and timing.row_lower[0] == timing.row_upper[0] == schedule.duration
    assert timing.phase_names == ("0:####", "1:....", "2:####")
    # the flight is every foot's complete swing: a minimum longer than its lower bound becomes a row
    timing = free_phase_durations(schedule, "free-total", min_swing=0.15)
    assert timing.rows.tolist() == [[0.0, 1.0, 0.0]] and timing.row_lower.tolist() == [0.15] and np.isinf(timing.row_upper[0])


def test_minimum_times_no_phase_can_meet_are_refused_before_solving():
    schedule = jump(crouch_knots=15, flight_knots=10, landing_knots=15)
    with pytest.raises(ValueError, match=r"min_swing: FL's swing from knot 15 to knot 25 lasts at most 0.4 s \(2 times its scheduled 0.2 s\), shorter than 1 s"):
        free_phase_durations(schedule, "free", min_swing=1.0)
    with pytest.raises(ValueError, match="timing: expected one of"):
        free_phase_durations(schedule, "fixed")
    # each minimum fits its own phases, but three trot cycles cannot hold them all within their 1.8 s
    trot = gait("trot", dt=0.02, period=0.6, cycles=3)
    with pytest.raises(ValueError, match=r"min_stance, min_swing: the minimum stance \(0.5 s\) and swing \(0.45 s\) times cannot all hold within the schedule's total of 1.8 s"):
        free_phase_durations(trot, "free", min_stance=0.5, min_swing=0.45)
    assert free_phase_durations(trot, "free-total", min_stance=0.5, min_swing=0.45).rows.shape[0] > 0  # a free total stretches
    problem = problems.get("go1-jump")
    with pytest.raises(ValueError, match=r"timing: expected one of \('fixed', 'free', 'free-total'\), got 'loose'"):
        problem.set_timing("loose")


def test_every_legged_problem_takes_the_timing_options():
    assert {"timing", "min_stance", "min_swing"} <= set(problems.parameters("go1-gap"))
    assert "timing" not in problems.parameters("pendulum")
    with pytest.raises(TypeError, match="problem 'pendulum' takes no parameter 'timing'"):
        problems.get("pendulum", timing="free")
    with pytest.raises(TypeError, match="timing: problem 'go1-trot' expects a value like the default 'fixed'"):
        problems.get("go1-trot", timing=1)
    trot = problems.get("go1-trot", timing="free", min_swing=0.2)
    assert isinstance(trot.tf, PhaseDurations) and trot.tf.count == 4 and trot.recipe["params"] == {"timing": "free", "min_swing": 0.2}
    trot.set_timing("fixed")
    assert trot.tf == 0.6 and not trot.free_time and "mumps_pivot_order" not in trot.solver_options["ipopt"]
    contact = problems.get("go1-trot", formulation="contact", timing="free")
    assert contact.solve_defaults["solver"] == "ipopt"  # fatrop takes a fixed tf
    assert canonical_params(ProblemRef.resolve("go1-jump"), {"timing": "free"}) == {"timing": "free"}  # a sweep's fixed parameter


def test_the_receding_horizon_refuses_free_timing():
    with pytest.raises(ValueError, match="timing: the receding horizon runs 'go1-trot' on its gait's fixed schedule"):
        mpc_task(problems.get("go1-trot", timing="free"))


def test_the_command_line_prints_the_chosen_durations(capsys, tmp_path):
    assert main(["solve", "go1-jump", "-p", "timing=free", "--quiet", "--save", str(tmp_path / "jump.npz")]) == 0
    out = capsys.readouterr().out
    assert "phase durations" in out and "0:####" in out and "1:...." in out
    saved = problems.load_solution(tmp_path / "jump.npz")  # the recipe rebuilds the free timing
    assert isinstance(saved.problem.tf, PhaseDurations) and saved.evaluate(saved.tf)[0].shape == (37,)
    assert main(["solve", "pendulum", "-p", "timing=free"]) == 2
    assert "problem 'pendulum' takes no parameter 'timing'" in capsys.readouterr().err


def _fixed_and_free(name: str):
    fixed, free = solve(problems.get(name)), solve(problems.get(name, timing="free"))
    assert fixed.success and free.success, (fixed.status, free.status)
    return fixed, free


def _check_free_timing(fixed, free):
    """Same constraints, a lower objective, the same total, durations inside their bounds, verified in MuJoCo."""
    timing = free.problem.timing
    tau = timing.of_times(free.times)
    assert free.objective < fixed.objective - 1e-3 * abs(fixed.objective), (free.objective, fixed.objective)
    assert abs(free.tf - fixed.tf) <= 1e-9 and (tau >= timing.lower - 1e-9).all() and (tau <= timing.upper + 1e-9).all()
    assert np.abs(tau - timing.guess).max() > 0.01  # the optimizer moved the phases
    figure = plot_solution(free)  # the gait diagram draws the scheduled footfalls under the optimized ones
    gait = [ax for ax in figure.axes if "the schedule's timing" in ax.get_title(loc="left")]
    assert len(gait) == 1 and abs(gait[0].get_xlim()[1] - free.tf) <= 1e-12
    pytest.importorskip("mujoco")
    from trajopt.mujoco.verify import verify

    report = verify(free)
    assert report.ok, report.summary()


def test_jump_with_free_timing_is_cheaper_and_passes_mujoco():
    _check_free_timing(*_fixed_and_free("go1-jump"))


@pytest.mark.slow
def test_gap_with_free_timing_is_cheaper_and_passes_mujoco():
    _check_free_timing(*_fixed_and_free("go1-gap"))


def test_a_periodic_trot_with_free_timing_repeats_in_mujoco():
    pytest.importorskip("mujoco")
    from trajopt.mujoco import PDFeedforward, plan_timestep, sample_plan, track

    solution = solve(problems.get("go1-trot", periodic=True, timing="free"))
    assert solution.success, solution.status
    dt = plan_timestep(solution)
    assert abs(solution.tf / dt - round(solution.tf / dt)) <= 1e-9  # the steps divide the plan, not its uneven knots
    plan = sample_plan(solution, dt, cycles=2)
    knot_times = np.concatenate([solution.times, solution.tf + solution.times[1:]])
    assert np.array_equal(plan.knot_steps, np.round(knot_times / dt).astype(int))
    steps = int(round(solution.tf / dt))
    local = (np.arange(2 * steps) % steps) * dt  # each step's time within its cycle
    k = np.minimum(np.searchsorted(solution.times, local + 1e-9 * dt, side="right") - 1, solution.N - 2)
    assert np.array_equal(plan.stance, solution.problem.schedule.stance[k])  # each step in its knot interval's stance
    result = track(solution, PDFeedforward(), cycles=2)
    assert not result.fell and result.max_position_error < 0.02


def test_the_kinodynamic_trot_takes_free_timing_too():
    assert "timing" in problems.parameters("go1-trot-kinodynamic")
    fixed, free = solve(problems.get("go1-trot-kinodynamic")), solve(problems.get("go1-trot-kinodynamic", timing="free"))
    assert fixed.success and free.success and isinstance(free.problem.tf, PhaseDurations)
    assert free.objective < fixed.objective and abs(free.tf - fixed.tf) <= 1e-9
