"""The compiled stage-wise NLP (``trajopt.solve(..., compile=True)``) against the virtual machine.

The compiled path generates C for each stage function and its derivatives
(:func:`trajopt.solvers.derivatives.stagewise_nlp`); it must give the NLP's values,
gradient, Jacobian and Hessian to ``EXACT = 1e-12`` (relative with a floor)
and the same IPOPT solution. The fast tests compile the cartpole's small
functions into a per-test cache; every transcription (fixed and free final
time), the quadrotor (quaternions, unit-norm rows) and the Go1 trot run gcc
for seconds and are marked slow.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, List, Tuple

import casadi as ca
import numpy as np
import pytest

import problems
from models import compiled
from models.compiled import CompilerWarning, compile_functions
from trajopt import IpoptSolver, NLP
from trajopt.solvers.derivatives import stagewise_nlp

from .test_transcriptions import TRANSCRIPTIONS, rich_problem

EXACT = 1e-12

needs_compiler = pytest.mark.skipif(shutil.which("gcc") is None, reason="no C compiler")


def assert_close(actual: Any, expected: Any, tol: float = EXACT) -> None:
    actual, expected = np.asarray(actual, dtype=float), np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape
    assert np.all(np.abs(actual - expected) <= tol * np.maximum(1.0, np.abs(expected))), np.abs(actual - expected).max()


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty compile cache for this test (``$TRAJOPT_CACHE``)."""
    monkeypatch.setenv("TRAJOPT_CACHE", str(tmp_path))
    return tmp_path


def evaluations(nlp: NLP, compile: bool, seed: int = 0) -> List[np.ndarray]:
    """``f``, ``g``, the gradient, the Jacobian and the Hessian (dense) at a perturbed initial guess."""
    nlp_fn, options = stagewise_nlp(nlp, compile)
    rng = np.random.default_rng(seed)
    w, p = nlp.initial_guess() + 0.1 * rng.standard_normal(nlp.n_w), nlp.parameters()
    lam = rng.standard_normal(nlp.n_g)
    f, g = nlp_fn(w, p)
    f_grad, grad = options["grad_f"](w, p)
    g_jac, jac = options["jac_g"](w, p)
    hess = options["hess_lag"](w, p, 0.7, lam)
    return [np.asarray(ca.densify(m)) for m in (f, g, f_grad, grad, g_jac, jac, hess)]


def compiled_libraries(cache: Path) -> List[Path]:
    """The shared libraries in the compile cache ``cache``."""
    return sorted((cache / "compiled").glob("*.so")) if (cache / "compiled").is_dir() else []


def solve_both(name: str, **kwargs: Any) -> Tuple[Any, Any]:
    """The registry problem ``name`` solved on the virtual machine and compiled (same options)."""
    problem = problems.get(name, **kwargs)
    return IpoptSolver(problem).solve(), IpoptSolver(problem, compile=True).solve()


def assert_same_solution(vm: Any, fast: Any) -> None:
    """Same status, iterations and iterate (primal, constraint multipliers, objective); constraints met."""
    assert fast.success and vm.success and fast.status == vm.status
    assert fast.iterations == vm.iterations
    assert_close(fast.primal, vm.primal)
    assert_close(fast.lam_g, vm.lam_g)
    assert_close(fast.objective, vm.objective)
    assert fast.max_violation < 1e-6


@needs_compiler
def test_compiled_nlp_functions_match_the_virtual_machine(cache: Path) -> None:
    nlp = NLP(problems.get("cartpole"))
    fast = evaluations(nlp, compile=True)
    assert compiled_libraries(cache), "nothing was compiled"
    for ours, ref in zip(fast, evaluations(nlp, compile=False)):
        assert_close(ours, ref)


@needs_compiler
def test_compiled_solve_matches_and_reuses_the_cache(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vm, fast = solve_both("cartpole")
    assert_same_solution(vm, fast)
    built = compiled_libraries(cache)

    def no_compiler(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the compiler ran although every library is cached")

    monkeypatch.setattr(compiled.subprocess, "Popen", no_compiler)
    again = IpoptSolver(problems.get("cartpole"), compile=True).solve()
    assert compiled_libraries(cache) == built
    assert_close(again.primal, fast.primal)


@pytest.mark.usefixtures("cache")
def test_compile_without_a_compiler_falls_back_to_the_virtual_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    problem = problems.get("cartpole")
    with pytest.warns(CompilerWarning, match="not found"):
        fallback = IpoptSolver(problem, compile=True)
    assert_same_solution(IpoptSolver(problem).solve(), fallback.solve())


@needs_compiler
def test_compile_functions_builds_many_and_reports_failures(tmp_path: Path) -> None:
    x = ca.SX.sym("x", 2)
    fs = [ca.Function(f"f{i}", [x], [ca.sin(x) * (i + 1)]) for i in range(3)]
    out = compile_functions(fs, cache_dir=tmp_path, jobs=2)
    assert [f.name() for f in out] == [f.name() for f in fs] and all(f.class_name() == "External" for f in out)
    for ours, ref in zip(out, fs):
        assert_close(ours([0.3, -1.2]), ref([0.3, -1.2]))
    with pytest.warns(CompilerWarning, match="3 function"):
        fallback = compile_functions([ca.Function(f"g{i}", [x], [x * i]) for i in range(3)], cache_dir=tmp_path, compiler=str(tmp_path / "no-cc"))
    assert all(f.class_name() == "SXFunction" for f in fallback)


@pytest.mark.slow
@needs_compiler
@pytest.mark.parametrize("free_time", [False, True], ids=["fixed_tf", "free_tf"])
@pytest.mark.parametrize("transcription", TRANSCRIPTIONS)
@pytest.mark.usefixtures("cache")
def test_compiled_transcriptions_match(transcription: str, free_time: bool) -> None:
    """Every transcription, fixed and free final time, on test_transcriptions' problem (costs, constraints, quaternions)."""
    nlp = NLP(rich_problem(free_time=free_time), transcription)
    for ours, ref in zip(evaluations(nlp, compile=True), evaluations(nlp, compile=False)):
        assert_close(ours, ref)


@pytest.mark.slow
@needs_compiler
def test_compiled_quadrotor_matches(cache: Path) -> None:
    """Quaternion states: unit-norm rows and manifold defects (Hermite-Simpson)."""
    nlp = NLP(problems.get("quadrotor"))
    for ours, ref in zip(evaluations(nlp, compile=True), evaluations(nlp, compile=False)):
        assert_close(ours, ref)
    assert compiled_libraries(cache)
    assert_same_solution(*solve_both("quadrotor"))


@pytest.mark.slow
@needs_compiler
def test_compiled_go1_trot_matches(cache: Path) -> None:
    """The benchmark problem (bench/go1_trot.py): same iterates, hard constraints met, faster evaluations."""
    vm, fast = solve_both("go1-trot")
    assert_same_solution(vm, fast)
    assert fast.eval_time < vm.eval_time
    stems = {lib.name.rsplit("_", 1)[0] for lib in compiled_libraries(cache)}
    assert {"dynamics_residual_term_jac", "dynamics_residual_term_hess", "interval_term_hess"} <= stems
