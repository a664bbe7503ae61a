"""The rewriting of CasADi's generated C into chunks (:mod:`models.chunked_c`).

The oracle is CasADi itself: the chunked library must give the numbers of
CasADi's virtual machine (``EXACT = 1e-12``, relative with a floor), and
after merging common subexpressions it must hold as many statements as
CasADi's own common-subexpression elimination (``Function`` option ``cse``)
leaves instructions. Test functions are small (a few thousand
instructions) and cut into chunks of a few dozen statements, so gcc takes
well under a second.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import List

import casadi as ca
import numpy as np
import pytest

from models.chunked_c import PREAMBLE_END, chunk_source, split_source

EXACT = 1e-12
needs_compiler = pytest.mark.skipif(shutil.which("gcc") is None, reason="no C compiler")


def tangled_function(n: int = 1500, seed: int = 0) -> ca.Function:
    """An SX function whose values are read far from where they are computed, with repeated
    subexpressions CasADi does not merge (``x[i] * x[j]`` built twice makes two nodes). Operands
    of ``*`` and ``+`` come in index order, so no repetition differs only by their order."""
    rng = np.random.default_rng(seed)
    x, y = ca.SX.sym("x", 8), ca.SX.sym("y", 3)
    values: List[ca.SX] = [x[k] for k in range(8)] + [y[k] for k in range(3)]
    for k in range(n):
        i, j = sorted(int(v) for v in rng.integers(0, len(values), 2))
        if k % 5 == 0:
            new = ca.sin(values[i] * values[j]) - ca.cos(values[i] * values[j])  # the same product twice
        elif k % 5 == 1:
            new = ca.sin(values[i]) - 0.5 * values[j]
        elif k % 5 == 2:
            new = values[i] / (1 + values[j] ** 2)
        elif k % 5 == 3:
            new = ca.if_else(values[i] > values[j], values[i], 0.3 * values[j])
        else:
            new = ca.tanh(values[i] + values[j])
        values.append(new)
    outputs = ca.vertcat(*values[-40:], values[20], values[n // 2])
    return ca.Function("tangled", [x, y], [outputs, ca.sumsqr(ca.vertcat(*values[::7]))], ["x", "y"], ["v", "s"])


def generated_c(f: ca.Function, folder: Path) -> str:
    source = ca.CodeGenerator(f"{f.name()}.c", {"with_header": False})
    source.add(f)
    return Path(source.generate(str(folder) + "/")).read_text()


def compiled(source: str, name: str, folder: Path) -> ca.Function:
    c_file, library = folder / f"{name}_chunked.c", folder / f"{name}_chunked.so"
    c_file.write_text(source)
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", str(c_file), "-o", str(library), "-lm"], check=True)
    return ca.external(name, str(library))


def statements(source: str) -> int:
    """Assignments and output writes of the generated code (one per CasADi instruction)."""
    return len(re.findall(r"^  (?:[av]\d+|s\[\d+\])=", source, re.M)) + len(re.findall(r"^  if \(res\[\d+\]!=0\)", source, re.M))


@needs_compiler
def test_chunks_give_the_numbers_of_the_virtual_machine(tmp_path: Path) -> None:
    f = tangled_function()
    source = chunk_source(generated_c(f, tmp_path), 40)
    chunks = re.findall(r"^static \w+ void casadi_f0_chunk(\d+)\(", source, re.M)
    assert len(chunks) > 20 and "s[0]" in source
    g = compiled(source, f.name(), tmp_path)
    rng = np.random.default_rng(1)
    X, Y = rng.standard_normal((8, 200)), rng.standard_normal((3, 200))
    for ours, ref in zip(g.map(200)(X, Y), f.map(200)(X, Y)):
        ours, ref = ours.full(), ref.full()
        assert np.all(np.abs(ours - ref) <= EXACT * np.maximum(1.0, np.abs(ref)))


@needs_compiler
def test_files_compiled_apart_and_linked_give_the_same_numbers(tmp_path: Path) -> None:
    f = tangled_function()
    files = split_source(generated_c(f, tmp_path), 40, 400)
    assert len(files) >= 5 and re.search(r"^TRAJOPT_HIDDEN void casadi_f0_chunk\d+\(.*\);$", files[0], re.M)  # declares the chunks of the other files
    assert all(PREAMBLE_END not in text and "casadi_f0_chunk" in text for text in files[1:])  # chunks and helpers, nothing else
    objects = []
    for k, text in enumerate(files):
        c_file, obj = tmp_path / f"part{k}.c", tmp_path / f"part{k}.o"
        c_file.write_text(text)
        subprocess.run(["gcc", "-c", "-fPIC", "-O1", "-Wall", "-Werror", str(c_file), "-o", str(obj)], check=True)
        objects.append(str(obj))
    library = tmp_path / "split.so"
    subprocess.run(["gcc", "-shared", "-fPIC", *objects, "-o", str(library), "-lm"], check=True)
    g = ca.external(f.name(), str(library))
    rng = np.random.default_rng(2)
    X, Y = rng.standard_normal((8, 100)), rng.standard_normal((3, 100))
    for ours, ref in zip(g.map(100)(X, Y), f.map(100)(X, Y)):
        assert np.array_equal(ours.full(), ref.full())  # the same operations in the same order
    if shutil.which("nm"):
        exported = subprocess.run(["nm", "-D", "--defined-only", str(library)], capture_output=True, text=True, check=True).stdout
        assert "tangled_n_in" in exported and "chunk" not in exported  # the chunks stay inside the library


def test_one_part_is_the_chunked_source(tmp_path: Path) -> None:
    source = generated_c(tangled_function(), tmp_path)
    assert split_source(source, 40, 10**9) == [chunk_source(source, 40)]
    assert split_source(source.replace(PREAMBLE_END, "/* moved */"), 40, 400) == [chunk_source(source.replace(PREAMBLE_END, "/* moved */"), 40)]
    with pytest.raises(ValueError, match="part_statements: expected an int >= 40, got 39"):
        split_source(source, 40, 39)


def test_common_subexpressions_are_merged_as_casadi_does(tmp_path: Path) -> None:
    f = tangled_function()
    merged = ca.Function("tangled", f.sx_in(), f.call(f.sx_in()), {"cse": True})
    assert merged.n_instructions() < f.n_instructions() - 250  # the test function repeats about 300 products
    source = chunk_source(generated_c(f, tmp_path), 40)
    assert statements(source) == merged.n_instructions()


def test_commuted_operands_are_merged(tmp_path: Path) -> None:
    x = ca.SX.sym("x", 2)
    chain = [x[0], x[1]]
    for k in range(60):
        chain.append(ca.sin(chain[-1] * chain[-2]) + chain[-2] * chain[-1])  # a*b and b*a
    f = ca.Function("commuted", [x], [chain[-1]])
    source = chunk_source(generated_c(f, tmp_path), 10)
    products = re.findall(r"=\((?:v\d+|s\[\d+\])\*(?:v\d+|s\[\d+\])\);", source)
    assert len(products) == 60 and statements(source) == f.n_instructions() - 60


def test_values_crossing_chunks_reuse_memory_slots(tmp_path: Path) -> None:
    source = chunk_source(generated_c(tangled_function(), tmp_path), 40)
    slots = int(re.search(r"^  casadi_real s\[(\d+)\];", source, re.M).group(1))
    stored = len(re.findall(r"^  s\[\d+\]=", source, re.M))
    assert 0 < slots < stored  # a slot is reused once its value is dead


def function_text(source: str, name: str) -> str:
    """The definition of the generated C function ``name`` (``casadi_f0``: the function itself, ``casadi_f1``: what it calls)."""
    start = source.index(f"static int {name}(")
    return source[start : source.index("\n}\n", start) + 3]


def test_short_or_unknown_functions_are_left_as_they_are(tmp_path: Path) -> None:
    source = generated_c(tangled_function(200), tmp_path)
    assert chunk_source(source, 10_000) == source
    z, x = ca.SX.sym("z", 2), ca.SX.sym("x", 2)
    inner = ca.Function("inner", [z], [ca.sin(z) * z[0] + ca.cos(z[1])], {"never_inline": True})
    caller = ca.Function("caller", [x], [inner(x) + ca.cos(x) + inner(2 * x) * x[1]])
    source = generated_c(caller, tmp_path)
    chunked = chunk_source(source, 2)
    assert "if (casadi_f1(" in function_text(source, "casadi_f0")  # a call: not a statement the rewriting knows
    assert function_text(chunked, "casadi_f0") == function_text(source, "casadi_f0")
    assert "casadi_f1_chunk1(arg, res, s);" in function_text(chunked, "casadi_f1")


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "100"])
def test_bad_chunk_size_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="statements: expected an int >= 1"):
        chunk_source("", bad)  # type: ignore[arg-type]


def same_numbers(ours: ca.DM, ref: ca.DM) -> bool:
    """Same sparsity, and every nonzero within ``EXACT`` (relative, floor 1; NaN where the reference is NaN)."""
    a, b = np.array(ours.nonzeros()), np.array(ref.nonzeros())
    both_nan = np.isnan(a) & np.isnan(b)
    close = np.abs(a - b) <= EXACT * np.maximum(1.0, np.abs(b))
    return ours.sparsity() == ref.sparsity() and bool(np.all(close | both_nan))


@pytest.mark.slow  # gcc on real stage derivatives: about a minute of CPU
@needs_compiler
def test_contact_stage_derivatives_compile_to_the_numbers_of_the_virtual_machine(tmp_path: Path) -> None:
    """Real functions: stage functions of the legged contact formulation (what ``go1-trot -p
    formulation=contact`` compiles: the largest Jacobian, Lagrangian gradient and value under
    110k instructions) and a sparse Jacobian of a foot constraint, each compiled through
    :func:`models.compiled.build_library` as chunks and as CasADi's C, and evaluated on random
    inputs against CasADi's virtual machine."""
    import problems
    from models.chunked_c import CHUNK_STATEMENTS
    from models.compiled import build_library
    from trajopt.nlp import NLP
    from trajopt.solvers.derivatives import stage_functions
    from trajopt.solvers import SolverSettings

    problem = problems.get("go1-trot", formulation="contact")
    chosen = SolverSettings(compile=True).resolved(problem)
    stages = sorted(stage_functions(NLP(problem, chart=chosen.chart), chosen.hessian), key=lambda f: -f.n_instructions())
    cases = [(next(f for f in stages if f.name().endswith(kind) and f.n_instructions() <= 110_000), CHUNK_STATEMENTS) for kind in ("_jac", "_lag_grad", "_g")]
    foot = next(f for f in stages if f.name() == "FL_foot_touchdown_at_rest_term_g")
    v, q = foot.sx_in()
    sparse = ca.Function("foot_sparse_jac", [v, q], [ca.jacobian(foot(v, q), v)])
    assert sparse.nnz_out(0) < 0.5 * sparse.numel_out(0)
    cases.append((sparse, 200))
    rng = np.random.default_rng(3)
    assert len(split_source(generated_c(cases[0][0], tmp_path))) > 1  # compiled as several files
    for f, chunk in cases:
        assert f"_chunk{5 if chunk == 200 else 20}(" in chunk_source(generated_c(f, tmp_path), chunk)  # really cut
        chunked = build_library(f, cache_dir=tmp_path, chunk=chunk).load()
        plain = build_library(f, cache_dir=tmp_path, chunk=None).load()
        for _ in range(5):
            args = [ca.DM(f.sparsity_in(i), 0.3 * rng.standard_normal(f.nnz_in(i))) for i in range(f.n_in())]
            ref = f.call(args)
            assert all(np.isfinite(np.array(r.nonzeros())).all() for r in ref)
            for out, r in zip(chunked.call(args), ref):
                assert same_numbers(out, r), f.name()
            for out, r in zip(plain.call(args), ref):
                assert same_numbers(out, r), f.name()
