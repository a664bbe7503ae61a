"""Compiled CasADi functions (:mod:`models.compiled`) and ``MultibodyModel.compile``.

The compiled and virtual-machine paths must agree to ``EXACT = 1e-12``
(relative with a floor). The fast tests compile small functions only (a tiny
SX function, the floating body) into a per-test cache folder; the Go1 compile
(seconds of gcc per function) is marked slow.
"""
from __future__ import annotations

import shutil
import warnings
from pathlib import Path
from typing import Any

import casadi as ca
import numpy as np
import pytest

from models import compiled
from models import pinocchio_builders as builders
from models.compiled import CompilerWarning, build_library, compile_function, default_cache_dir
from models.multibody_model import COMPILED, HOT_FUNCTIONS, MultibodyModel
from models.robot_data import urdf_path

EXACT = 1e-12
N_POINTS = 50

needs_compiler = pytest.mark.skipif(shutil.which("gcc") is None, reason="no C compiler")


def assert_close(actual: Any, expected: Any, tol: float = EXACT) -> None:
    actual, expected = np.asarray(actual, dtype=float), np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape
    assert np.all(np.abs(actual - expected) <= tol * np.maximum(1.0, np.abs(expected)))


def outputs(value: Any) -> tuple:
    """A Function call's outputs as a tuple (a single output comes back bare)."""
    return value if isinstance(value, tuple) else (value,)


def small_function(scale: float = 2.0) -> ca.Function:
    x, y = ca.SX.sym("x", 3), ca.SX.sym("y", 2)
    out = ca.vertcat(ca.sin(x) * scale, ca.dot(x[:2], y), ca.exp(y[0]) / (1 + x[2] ** 2))
    return ca.Function("small", [x, y], [out, ca.jacobian(out, x)], ["x", "y"], ["out", "jac"])


def floating_body() -> MultibodyModel:
    return MultibodyModel(builders.floating_body_model(2.0, (0.1, 0.2, 0.3)), kinematics_bodies=["root_body"], input_matrix=np.eye(6), name="floating_body")


def _no_compiler(*args: Any, **kwargs: Any) -> None:
    raise AssertionError("the compiler ran although the library is cached")


@needs_compiler
def test_compiled_function_matches_and_is_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = small_function()
    lib = build_library(f, cache_dir=tmp_path)
    assert lib.built and lib.path.is_file() and lib.compile_seconds > 0
    g = lib.load()
    assert g.name_in() == f.name_in() and g.name_out() == f.name_out()
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((3, N_POINTS)), rng.standard_normal((2, N_POINTS))
    for ours, ref in zip(g.map(N_POINTS)(X, Y), f.map(N_POINTS)(X, Y)):
        assert_close(ours.full(), ref.full())

    monkeypatch.setattr(compiled.subprocess, "Popen", _no_compiler)
    again = build_library(small_function(), cache_dir=tmp_path)
    assert not again.built and again.path == lib.path
    assert compile_function(small_function(), cache_dir=tmp_path).class_name() != f.class_name()


@pytest.mark.parametrize("name, value", [("jobs", 0), ("jobs", 1.5), ("jobs", True), ("chunk", 0), ("chunk", "1000")])
def test_bad_jobs_or_chunk_are_refused_before_the_cache_is_read(tmp_path: Path, name: str, value: Any) -> None:
    with pytest.raises(ValueError, match=f"{name}: expected None or an int >= 1"):
        build_library(small_function(), cache_dir=tmp_path, **{name: value})
    with pytest.raises(ValueError, match=f"{name}: expected None or an int >= 1"):
        compiled.compile_functions([small_function()], cache_dir=tmp_path, **{name: value})
    assert not (tmp_path / "compiled").exists()


def test_cache_key_follows_function_and_flags() -> None:
    f = small_function()
    key = compiled.function_key(f, "gcc", "-O1")
    assert key == compiled.function_key(small_function(), "gcc", "-O1")
    assert key != compiled.function_key(small_function(3.0), "gcc", "-O1")
    assert key != compiled.function_key(f, "gcc", "-O3")
    assert key != compiled.function_key(f, "clang", "-O1")
    assert key != compiled.function_key(f, "gcc", "-O1", chunk=None) != compiled.function_key(f, "gcc", "-O1", chunk=500)


def test_missing_compiler_falls_back_with_a_warning(tmp_path: Path) -> None:
    f = small_function()
    with pytest.warns(CompilerWarning, match="not found"):
        g = compile_function(f, cache_dir=tmp_path, compiler=str(tmp_path / "no-such-gcc"))
    assert g is f
    assert not (tmp_path / "compiled").exists() or not any((tmp_path / "compiled").iterdir())


@pytest.mark.skipif(shutil.which("false") is None, reason="no `false` executable")
def test_failing_compiler_falls_back_with_a_warning(tmp_path: Path) -> None:
    f = small_function()
    with pytest.warns(CompilerWarning, match="failed"):
        assert compile_function(f, cache_dir=tmp_path, compiler="false") is f


def test_default_cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TRAJOPT_CACHE", str(tmp_path / "cache"))
    assert default_cache_dir() == tmp_path / "cache"
    monkeypatch.delenv("TRAJOPT_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "trajopt"


def _compare_paths(model: MultibodyModel, keys: Any, rng: np.random.Generator) -> None:
    """Every compiled key against its virtual-machine function at N_POINTS mapped inputs."""
    X = np.column_stack([model.randn_state(rng) for _ in range(N_POINTS)])
    inputs = {"x": X, "tau": rng.standard_normal((model.nv, N_POINTS)), "vdot": rng.standard_normal((model.nv, N_POINTS)), "f": rng.standard_normal((3 * model.nc, N_POINTS))}
    for key in keys:
        vm, fast = model.casadi_function(key), model.casadi_function(key + COMPILED)
        args = [inputs[name] for name in vm.name_in()]
        for ours, ref in zip(outputs(fast.map(N_POINTS)(*args)), outputs(vm.map(N_POINTS)(*args))):
            assert_close(ours.full(), ref.full())


@needs_compiler
def test_model_compile_serves_numeric_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = floating_body()
    keys = ["forward_dynamics", "forward_dynamics_deriv", "inverse_dynamics_deriv", "kinematics"]
    assert model.compile(keys, cache_dir=tmp_path) == keys
    _compare_paths(model, keys, np.random.default_rng(1))
    x, tau = model.randn_state(np.random.default_rng(2)), np.arange(6.0)
    reference = floating_body()
    assert_close(model.forward_dynamics(x, tau), reference.forward_dynamics(x, tau))
    for ours, ref in zip(model.forward_dynamics_deriv(x, tau), reference.forward_dynamics_deriv(x, tau)):
        assert_close(ours, ref)
    xs, taus = ca.SX.sym("x", model.nx), ca.SX.sym("tau", model.nv)
    symbolic = ca.Function("fd", [xs, taus], [model.forward_dynamics(xs, taus)])
    assert_close(symbolic(x, tau).full().ravel(), reference.forward_dynamics(x, tau))
    monkeypatch.setattr(compiled.subprocess, "Popen", _no_compiler)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert floating_body().compile(keys, cache_dir=tmp_path) == keys


def test_model_compile_without_compiler(tmp_path: Path) -> None:
    model = floating_body()
    with pytest.warns(CompilerWarning):
        assert model.compile(["forward_dynamics"], cache_dir=tmp_path, compiler=str(tmp_path / "no-gcc")) == []
    x = model.randn_state(np.random.default_rng(3))
    assert model.forward_dynamics(x, np.zeros(6)).shape == (6,)


@pytest.mark.slow
@needs_compiler
def test_go1_compiled_hot_functions(tmp_path: Path) -> None:
    model = MultibodyModel.from_urdf(urdf_path("go1"), kinematics_bodies=["FL_foot", "FR_foot", "RL_foot", "RR_foot"], name="go1")
    assert model.compile(cache_dir=tmp_path) == list(HOT_FUNCTIONS)
    _compare_paths(model, HOT_FUNCTIONS, np.random.default_rng(4))
