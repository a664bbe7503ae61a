"""The solver backends sit in one folder behind one seam (:mod:`trajopt.solvers`).

Checked from the source files (``ast``), not from what happens to be imported:
the backends import nothing from the problems, the CLI or the legged and
integration layers; the modelling layer at the top of ``trajopt/`` imports
nothing from the backends (no circle); the old module paths still work for
one release, with a ``DeprecationWarning``, and give the very same objects.
"""
from __future__ import annotations

import ast
import importlib
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import trajopt
from trajopt._moved_modules import MOVED

PACKAGE = Path(trajopt.__file__).resolve().parent
#: Packages the backends must not import (anything above the modelling layer).
ABOVE_THE_SEAM = ("problems", "trajopt.cli", "trajopt.legged", "trajopt.batch", "trajopt.mujoco", "trajopt.viewer", "trajopt.plotting", "trajopt.sim", "trajopt.report")


def imported_modules(path: Path) -> set:
    """Absolute names of the modules ``path`` imports (relative imports resolved), at any depth of the file."""
    module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module
            names.add(prefix)
            names.update(f"{prefix}.{alias.name}" for alias in node.names)
    return names


def test_backends_import_nothing_above_the_seam():
    files = sorted((PACKAGE / "solvers").glob("*.py"))
    assert {f.stem for f in files} >= {"__init__", "registry", "base", "ipopt", "fatrop", "sqp", "derivatives", "stage_layout", "options", "watchdog", "interrupt", "blas"}
    for path in files:
        for name in imported_modules(path):
            assert not any(name == up or name.startswith(up + ".") for up in ABOVE_THE_SEAM), f"{path.name} imports {name}"


def test_modelling_layer_does_not_import_the_backends():
    """Top-level modules (``trajopt/*.py`` but the package's own ``__init__``, which re-exports the seam)."""
    modelling = [p for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "_moved_modules.py")]
    assert modelling
    for path in modelling:
        hits = [n for n in imported_modules(path) if n == "trajopt.solvers" or n.startswith("trajopt.solvers.")]
        assert not hits, f"{path.name} imports {hits}"
    for subpackage in ("transcription",):
        for path in (PACKAGE / subpackage).glob("*.py"):
            assert not [n for n in imported_modules(path) if n.startswith("trajopt.solvers")], path


def test_top_level_holds_no_backend_module():
    old = {name.rsplit(".", 1)[1] for name in MOVED}
    assert not old & {p.stem for p in PACKAGE.glob("*.py")}


def test_public_imports_are_the_seams_objects():
    from trajopt import solvers

    for name in ("solve", "NlpSolver", "IpoptSolver", "FatropSolver", "SqpSolver", "RtiSolver", "SOLVERS", "SolveInterrupted", "SolverSettings", "DEFAULT_IPOPT_OPTIONS", "WARM_START_OPTIONS"):
        assert getattr(trajopt, name) is getattr(solvers, name)
    assert set(solvers.SOLVERS) == {"ipopt", "fatrop", "sqp", "rti"}


def test_no_module_outside_the_solvers_tests_a_backend_type():
    """Code outside trajopt/solvers asks a backend what it can do (its capability attributes), never its type."""
    from trajopt import solvers

    backends = {cls.__name__ for cls in solvers.SOLVERS.values()} | {"NlpSolver"}
    found = []
    for path in PACKAGE.rglob("*.py"):
        if "solvers" in path.relative_to(PACKAGE).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("isinstance", "issubclass") and len(node.args) == 2:
                named = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)} | {n.attr for n in ast.walk(node.args[1]) if isinstance(n, ast.Attribute)}
                found += [f"{path.relative_to(PACKAGE)}:{node.lineno}" for _ in named & backends]
    assert not found, f"type tests on backend classes: {found}"


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_module_paths_warn_and_forward(old):
    """Each old path, in a fresh interpreter (so the import really runs): one DeprecationWarning naming the new path,
    and every public name of the new module reachable through the old one as the same object."""
    new = MOVED[old]
    code = (
        "import warnings, importlib, sys\n"
        "warnings.simplefilter('error', DeprecationWarning)\n"
        f"new = importlib.import_module({new!r})\n"
        "try:\n"
        f"    importlib.import_module({old!r})\n"
        "except DeprecationWarning as w:\n"
        "    print('WARNED', w)\n"
        "warnings.simplefilter('ignore', DeprecationWarning)\n"
        f"old = importlib.import_module({old!r})\n"
        "names = [n for n in dir(new) if not n.startswith('_')]\n"
        "assert names and all(getattr(old, n) is getattr(new, n) for n in names), names\n"
        "print('SAME', len(names))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PACKAGE.parent, timeout=120)
    assert out.returncode == 0, out.stderr
    assert f"WARNED {old} moved to {new}" in out.stdout
    assert "SAME" in out.stdout


def test_old_path_from_import_in_this_process():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sys.modules.pop("trajopt.nlp_solver", None)
        module = importlib.import_module("trajopt.nlp_solver")
    assert module.NlpSolver is trajopt.NlpSolver
    assert any(issubclass(w.category, DeprecationWarning) and "trajopt.solvers.base" in str(w.message) for w in caught)
    with pytest.raises(AttributeError):
        module.no_such_name  # noqa: B018
