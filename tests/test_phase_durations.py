"""Phase durations as decision variables (trajopt.phase_durations): validation, knot times, the NLP's
durations and rows, and a bang-bang oracle whose optimal phase durations are known in closed form."""
import casadi as ca
import numpy as np
import pytest

from models.model import Model
from trajopt import NLP, FreeTime, FunctionCost, GoalConstraint, PhaseDurations, Problem, Solution, solve


class DoubleIntegrator(Model):
    """``p'' = u`` on a line, ``u`` in ``[-1, 2]``; with ``time_varying`` the force grows with ``t`` (to be refused)."""

    name = "double_integrator"
    state_dim, control_dim = 2, 1

    def __init__(self, time_varying: bool = False) -> None:
        super().__init__()
        self.time_varying = time_varying

    def control_bounds(self):
        return np.array([-1.0]), np.array([2.0])

    def continuous_dynamics(self, x, u, t):
        return ca.vertcat(x[1], u[0] * (1 + t if self.time_varying else 1))


def two_phases(guess=(1.0, 1.0), lower=(0.1, 0.1), upper=(5.0, 5.0), **rows) -> PhaseDurations:
    return PhaseDurations((0, 4, 8), guess, lower, upper, **rows)


def minimum_time(tf) -> Problem:
    """Reach ``p = 1`` at rest from rest in minimum time (cost ``integral 1 dt = tf``)."""
    model = DoubleIntegrator()
    problem = Problem(model, N=9, tf=tf, x0=[0.0, 0.0], name="min-time double integrator")
    problem.add_cost(FunctionCost(lambda x, u: 1.0 + 0 * u[0]))
    problem.add_constraint(GoalConstraint(model, np.array([1.0, 0.0])))
    return problem


def test_phase_durations_validate_their_arguments():
    with pytest.raises(ValueError, match="knots"):
        PhaseDurations((0, 4, 4), [1, 1], [0.1, 0.1], [2, 2])
    with pytest.raises(ValueError, match="knots"):
        PhaseDurations((1, 4), [1], [0.1], [2])
    with pytest.raises(ValueError, match="guess: expected one duration per phase"):
        PhaseDurations((0, 4, 8), [1], [0.1, 0.1], [2, 2])
    with pytest.raises(ValueError, match="phase 1: needs finite 0 < lower <= guess <= upper"):
        two_phases(guess=(1.0, 6.0))
    with pytest.raises(ValueError, match="phase 0"):
        two_phases(lower=(0.0, 0.1))
    with pytest.raises(ValueError, match=r"rows: expected a finite matrix \(R, 2\)"):
        two_phases(rows=[[1.0, 1.0, 1.0]])
    with pytest.raises(ValueError, match="row_lower: expected 1 bounds"):
        two_phases(rows=[[1.0, 1.0]], row_lower=[1.0, 2.0])
    with pytest.raises(ValueError, match="exceeds"):
        two_phases(rows=[[1.0, 1.0]], row_lower=[3.0], row_upper=[2.0])
    with pytest.raises(ValueError, match="no phase durations within their bounds satisfy"):  # a total the bounds cannot reach
        two_phases(rows=[[1.0, 1.0]], row_lower=[11.0], row_upper=[11.0])
    with pytest.raises(ValueError, match="no phase durations within their bounds satisfy"):  # minima that exceed a fixed total together
        two_phases(rows=[[1.0, 1.0], [1.0, 0.0], [0.0, 1.0]], row_lower=[2.0, 1.5, 1.5], row_upper=[2.0, np.inf, np.inf])
    assert two_phases(rows=[[1.0, 1.0], [1.0, 0.0]], row_lower=[2.0, 1.5], row_upper=[2.0, np.inf]).rows.shape == (2, 2)
    with pytest.raises(ValueError, match="span 9 knots, the problem has N = 5"):
        Problem(DoubleIntegrator(), N=5, tf=two_phases())


def test_knot_times_are_evenly_spaced_within_each_phase():
    timing = two_phases()
    tau = np.array([0.4, 1.2])
    assert np.allclose(timing.spacing(tau), [0.1] * 4 + [0.3] * 4, rtol=0, atol=1e-15)
    times = timing.times(tau)
    assert np.allclose(times, [0, 0.1, 0.2, 0.3, 0.4, 0.7, 1.0, 1.3, 1.6], rtol=0, atol=1e-15)
    assert np.allclose(timing.of_times(times), tau, rtol=0, atol=1e-15)
    assert timing.describe(tau) == "phase 0 0.4 s, phase 1 1.2 s"
    problem = minimum_time(timing)
    assert problem.free_time and problem.timing is timing and problem.tf_guess == 2.0
    assert np.array_equal(problem.times(), timing.times())
    with pytest.raises(ValueError, match="durations: expected 2 phase durations"):
        timing.times([1.0])
    # a free final time is one phase of evenly spaced knots
    free = minimum_time(FreeTime(0.5, 5.0, 2.0))
    assert free.timing.count == 1 and free.timing.knots == (0, 8)
    assert np.array_equal(free.times(3.0), np.linspace(0, 3, 9))


def test_the_nlp_holds_one_variable_per_phase_and_the_rows_on_them():
    problem = minimum_time(two_phases(rows=[[1.0, 1.0]], row_lower=[2.0], row_upper=[2.0]))
    nlp = NLP(problem, "multiple_shooting")
    assert nlp.idx_durations.shape == (2,) and (nlp.var_stage[nlp.idx_durations] == -1).all()
    lbw, ubw = nlp.bounds_w()
    assert np.array_equal(lbw[nlp.idx_durations], [0.1, 0.1]) and np.array_equal(ubw[nlp.idx_durations], [5.0, 5.0])
    timing_rows = [b for b in nlp.blocks if b.kind == "timing"]
    assert len(timing_rows) == 1 and timing_rows[0].stages.tolist() == [8]
    w = nlp.initial_guess()
    w[nlp.idx_durations] = [0.5, 1.0]
    g = np.asarray(nlp.g_function()(w, nlp.parameters())).ravel()
    lbg, ubg = nlp.bounds_g()
    row = nlp.block_rows(nlp.blocks.index(timing_rows[0]))[0, 0]
    assert g[row] == 1.5 and lbg[row] == ubg[row] == 2.0
    assert nlp.unpack(w).tf == 1.5 and np.array_equal(nlp.unpack(w).durations, [0.5, 1.0])


def test_bang_bang_switch_lands_on_the_phase_boundary():
    """Minimum time from rest to rest over 1 m with ``u`` in ``[-1, 2]``: accelerate at 2 for ``tau_0``, brake at
    -1 for ``tau_1 = 2 tau_0``, ``3 tau_0^2 = 1``: ``tau = (1, 2) / sqrt(3)``, ``tf = sqrt(3)``. Multiple
    shooting holds ``u`` over each interval and RK4 integrates a constant force exactly, so the phases'
    solution is the continuous optimum; evenly spaced knots (a free ``tf``) cannot put the switch at
    ``tf / 3`` with 8 intervals and end later."""
    phases = solve(minimum_time(two_phases()), "multiple_shooting", options={"tol": 1e-10})
    assert phases.success, phases.status
    tau = phases.problem.timing.of_times(phases.times)
    assert np.allclose(tau, np.array([1.0, 2.0]) / np.sqrt(3), rtol=0, atol=1e-7), tau
    assert abs(phases.tf - np.sqrt(3)) <= 1e-7
    assert np.allclose(phases.controls[:4, 0], 2.0, atol=1e-6) and np.allclose(phases.controls[4:8, 0], -1.0, atol=1e-6)
    even = solve(minimum_time(FreeTime(0.5, 5.0, 2.0)), "multiple_shooting", options={"tol": 1e-10})
    assert even.success and even.tf > np.sqrt(3) + 1e-3, even.tf
    # the solution evaluates on its own knots, between them, and from a file
    x, _ = phases.evaluate(phases.times)
    assert np.allclose(x, phases.states, rtol=0, atol=1e-12)
    k, t_k, h = phases.interval_of([0.0, tau[0] + 1e-9, phases.tf])
    assert k.tolist() == [0, 4, 7] and np.allclose(h, [tau[0] / 4, tau[1] / 4, tau[1] / 4])
    loaded = Solution.from_bytes(phases.to_bytes())
    loaded.attach(phases.problem)
    assert np.array_equal(loaded.times, phases.times) and np.allclose(loaded.evaluate(1.0)[0], phases.evaluate(1.0)[0], rtol=0, atol=1e-15)


def test_a_warm_start_carries_the_phase_durations():
    first = solve(minimum_time(two_phases()), "multiple_shooting", options={"tol": 1e-10})
    again = solve(minimum_time(two_phases()), "multiple_shooting", warm_start=first, options={"tol": 1e-10})
    assert again.success and again.iterations <= 3 and np.allclose(again.times, first.times, rtol=0, atol=1e-8)


def test_time_varying_dynamics_are_refused_with_phases():
    model = DoubleIntegrator(time_varying=True)
    problem = Problem(model, N=9, tf=two_phases(), x0=[0.0, 0.0])
    with pytest.raises(ValueError, match="the dynamics of this problem read the time t; phase durations need time-invariant"):
        NLP(problem, "trapezoidal")
    NLP(Problem(model, N=9, tf=FreeTime(0.5, 5.0, 2.0), x0=[0.0, 0.0]), "trapezoidal")  # a free tf keeps t = k tf / (N - 1)


def test_riccati_backends_refuse_phase_durations():
    for solver in ("fatrop", "sqp"):
        with pytest.raises(ValueError, match=f"free phase durations are variables shared by many stages; the {solver} .*needs a fixed tf"):
            solve(minimum_time(two_phases()), "multiple_shooting", solver=solver)
