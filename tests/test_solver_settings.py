"""Solver settings as one object: checked where they are built, resolved against the problem, the
same in :func:`trajopt.solve`, the backends, the receding-horizon controller, the sweeps and the CLI."""
from __future__ import annotations

import argparse

import numpy as np
import pytest

import problems
import trajopt
from trajopt import SOLVERS, IpoptSolver, SolverSettings, solve
from trajopt.cli.arguments import UsageError, add_solver_options, solver_settings
from trajopt.solvers import BASE_DEFAULTS, build_solver
from trajopt.solvers.ipopt import DEFAULT_IPOPT_OPTIONS, HOMOTOPY_WARM_START_OPTIONS, WARM_START_OPTIONS


@pytest.mark.parametrize(
    "field, value",
    [("solver", "snopt"), ("max_iter", -1), ("max_iter", 2.5), ("tol", -1.0), ("tol", float("nan")), ("hessian", "bfgs"), ("compile", "yes"),
     ("chart", 1), ("max_wall_time", 0.0), ("options", ["tol"]), ("print_level", 13), ("derivatives", "autodiff"), ("threads", 0), ("transcription", "collocation")],
)  # fmt: skip
def test_a_bad_field_raises_one_line_naming_it(field, value):
    with pytest.raises(ValueError, match=f"^{field}: "):
        SolverSettings(**{field: value})


def test_settings_are_frozen_and_copied_with_replace():
    settings = SolverSettings(max_iter=5)
    with pytest.raises(AttributeError):
        settings.max_iter = 6  # type: ignore[misc]
    assert settings.replace(tol=1e-6) == SolverSettings(max_iter=5, tol=1e-6)
    with pytest.raises(ValueError, match="settings: unknown field"):
        settings.replace(max_iterations=6)
    with pytest.raises(ValueError, match="compile: .* needs derivatives='stagewise'"):
        settings.replace(compile=True, derivatives="casadi")


def test_resolved_takes_the_given_then_the_problems_then_the_base_defaults():
    quad = problems.get("quadrotor")
    assert SolverSettings().resolved(quad).solver == BASE_DEFAULTS["solver"] == "ipopt"
    contact = problems.get("go1-trot", formulation="contact")
    assert contact.solve_defaults, "the contact formulation names its backend"
    resolved = SolverSettings().resolved(contact)
    for key, value in contact.solve_defaults.items():
        assert getattr(resolved, key) == value
    assert SolverSettings(solver="ipopt", chart=False).resolved(contact).solver == "ipopt"


def test_every_backend_is_registered_with_its_capabilities():
    assert set(SOLVERS) == {"ipopt", "fatrop", "sqp", "rti"}
    assert trajopt.RtiSolver is SOLVERS["rti"]
    capabilities = {name: (cls.takes_multipliers, cls.reports_qp_iterations, cls.linearizes_alongside) for name, cls in SOLVERS.items()}
    assert capabilities == {"ipopt": (True, False, False), "fatrop": (False, False, False), "sqp": (True, False, False), "rti": (True, True, True)}


def test_the_options_merge_in_one_order():
    """Defaults < the problem's < the warm start's (a homotopy stage's) < the run's < max_iter/tol < the user's options."""
    problem = problems.get("quadrotor")
    problem.solver_options = {"ipopt": {"mu_init": 0.5, "tol": 1e-5, "max_iter": 7}}
    solver = IpoptSolver(problem, max_iter=9, tol=1e-9, options={"mu_init": 0.25})
    cold, warm, stage = (solver.backend_options(start) for start in ("cold", "warm", "homotopy"))
    assert cold["mu_init"] == 0.25 and cold["max_iter"] == 9 and cold["tol"] == 1e-9
    assert cold["mumps_pivot_order"] == DEFAULT_IPOPT_OPTIONS["mumps_pivot_order"]
    assert cold["max_wall_time"] == solver.max_wall_time and cold["print_level"] == 0
    assert all(warm[key] == value for key, value in WARM_START_OPTIONS.items() if key != "mu_init") and warm["mu_init"] == 0.25
    assert all(stage[key] == value for key, value in HOMOTOPY_WARM_START_OPTIONS.items() if key != "mu_init") and stage["mu_init"] == 0.25
    assert "warm_start_init_point" not in cold
    with pytest.raises(ValueError, match="start: expected 'cold', 'warm' or 'homotopy'"):
        solver.backend_options(True)


def test_max_iter_caps_the_solve_and_settings_equal_keywords():
    problem = problems.get("quadrotor")
    capped = solve(problem, SolverSettings(max_iter=3))
    assert capped.iterations == 3 and not capped.success
    by_keyword = solve(problem, max_iter=3)
    np.testing.assert_array_equal(by_keyword.primal, capped.primal)
    full = solve(problem, "hermite_simpson", tol=1e-9)
    assert full.success and full.transcription == "hermite_simpson"


def test_the_sqp_tolerance_is_its_primal_and_dual_ones():
    problem = problems.get("quadrotor")
    solver = build_solver(problem, solver="sqp", transcription="multiple_shooting", chart=True, tol=1e-7, max_iter=40)
    options = solver.backend_options("cold")
    assert options["tol_pr"] == options["tol_du"] == 1e-7 and options["max_iter"] == 40


def test_a_backend_refuses_what_is_not_settings():
    problem = problems.get("quadrotor")
    with pytest.raises(ValueError, match="settings: expected a trajopt.SolverSettings, a transcription or None"):
        IpoptSolver(problem, {"max_iter": 3})  # type: ignore[arg-type]
    assert IpoptSolver(problem, "hermite_simpson").nlp.transcription.name == "hermite_simpson"
    with pytest.raises(ValueError, match="options: the real-time iteration takes one step"):
        build_solver(problem, solver="rti", transcription="multiple_shooting_knot_cost", hessian="gauss-newton", chart=True, max_iter=5)


def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_solver_options(parser.add_argument_group("solver"))
    return parser.parse_args(argv)


def test_the_cli_flags_build_the_settings():
    assert solver_settings(_parse()) == SolverSettings()
    assert solver_settings(_parse("--solver", "fatrop", "--max-iter", "4", "--compile", "--chart", "--hessian", "gauss-newton")) == SolverSettings(
        solver="fatrop", max_iter=4, compile=True, chart=True, hessian="gauss-newton"
    )
    with pytest.raises(UsageError, match="^--max-iter: expected an int >= 0"):
        solver_settings(_parse("--max-iter", "-1"))


@pytest.mark.parametrize("command", ["solve", "sweep", "mpc"])
def test_the_three_commands_declare_the_same_solver_flags(command):
    """``solve``, ``sweep`` and ``mpc`` share one declaration: same flags, defaults and choices."""
    from trajopt.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._subparsers._group_actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    flags = {opt: action for action in sub._actions for opt in action.option_strings}
    shared = {opt: action for action in _parse_actions() for opt in action.option_strings}
    for flag, action in shared.items():
        assert flag in flags, f"trajopt {command} lacks {flag}"
        assert (flags[flag].default, flags[flag].choices, flags[flag].type) == (action.default, action.choices, action.type), flag
    assert tuple(flags["--solver"].choices) == tuple(SOLVERS)


def _parse_actions() -> list:
    parser = argparse.ArgumentParser(add_help=False)
    add_solver_options(parser.add_argument_group("solver"))
    return parser._actions
