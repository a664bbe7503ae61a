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

from models.chunked_c import chunk_source

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
