"""Rewrite the C that CasADi generates for a large SX function into chunks gcc compiles in linear time.

CasADi generates an SX function as one straight-line C function: one
statement per instruction, every intermediate value in a local scalar
(``a0``, ``a1``, ... reused once dead). On the stage derivatives of the legged
contact formulation thousands of those values are live at once (the forward
sweep's values wait for the reverse sweep), and gcc's register allocation
and data-flow passes grow faster than linearly with the function.

:func:`chunk_source` rewrites every function body longer than a chunk:

1. Common subexpressions are merged (value numbering: a statement that
   applies the same operation to the same values as an earlier one, with
   the operands of ``+`` and ``*`` in either order, reuses its value). gcc
   does this itself inside one function, not across chunks; CasADi does not,
   and without it the chunks run slower than the single function.
2. The statements are cut into ``noinline`` chunk functions of
   :data:`CHUNK_STATEMENTS`, called in order. A value used only inside the
   chunk that computes it is a local of that chunk; a value used by a later
   chunk lives in a memory slot ``s[k]`` (an array of the calling function,
   slots reused once their value is dead). Such a value lives across
   thousands of statements, and gcc would spill it to memory anyway.
3. :func:`split_source` also spreads the chunks over several files of
   :data:`PART_STATEMENTS` (translation units compiled by parallel gcc
   processes, then linked): the largest function no longer keeps one core
   busy while the others wait.

Every remaining statement is the one CasADi wrote with its variables
renamed, evaluated in the same order: the chunks give the same numbers as
CasADi's virtual machine (IEEE ``+`` and ``*`` are commutative). gcc sees
small functions with short-lived locals, which it compiles faster and
which run faster on the largest functions; on functions of about a hundred
thousand instructions chunks gain nothing. Design notes, with the
measurements: docs/design/compiled.md. A chunk only
calls helpers CasADi defines before :data:`PREAMBLE_END`, so a file of
chunks needs nothing else of the original.

The rewriting recognises the statements of CasADi's code generation for SX
functions (``aN=<expression>;`` and ``if (res[i]!=0) res[i][j]=aN;``); a
function with any other statement (a call of another function, a generator
of another CasADi version) is left as it is.
"""
from __future__ import annotations

import gc
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

#: Statements per chunk: the size at which gcc compiled both the largest and the mid-sized stage
#: functions fastest (docs/design/compiled.md).
CHUNK_STATEMENTS = 1000
#: Statements per translation unit of :func:`split_source`: the contact interval Jacobian's 411k
#: statements (after merging) become 9 files, which spread over the cores (docs/design/compiled.md).
PART_STATEMENTS = 50_000
#: Largest memory array (doubles) kept on the calling function's stack (512 KiB); a function needing
#: more is left as it is rather than risk the stack of a thread.
MAX_SLOTS = 65536
#: The line of CasADi's generated C after its includes, type definitions and helper functions
#: (``casadi_sq``, ``casadi_fmin``, ...): what a split-off file copies of the original.
PREAMBLE_END = "/* Configuration this file was compiled with */"

_FUNCTION = re.compile(r"^static int (casadi_f\d+)\(const casadi_real\*\* arg, casadi_real\*\* res, casadi_int\* iw, casadi_real\* w, int mem\) \{$")
_LOCALS = re.compile(r"^  casadi_real a\d+(, a\d+)*;$")
_OUTPUT = re.compile(r"^  if \(res\[\d+\]!=0\) res\[\d+\]\[\d+\]=a\d+;$")
_VARIABLE = re.compile(r"\b(a\d+)\b")
#: The templates (text around the operands) of the commutative operations.
_COMMUTATIVE = ("=(", "+", ");"), ("=(", "*", ");")
#: ``TRAJOPT_NOINLINE`` keeps gcc from merging the chunks of a file back into one function;
#: ``TRAJOPT_HIDDEN`` keeps a chunk defined in another file out of the library's exported symbols.
_MACROS = [
    "#if defined(__GNUC__)",
    "#define TRAJOPT_NOINLINE __attribute__((noinline))",
    '#define TRAJOPT_HIDDEN __attribute__((visibility("hidden")))',
    "#else",
    "#define TRAJOPT_NOINLINE",
    "#define TRAJOPT_HIDDEN",
    "#endif",
]
_UNDEF = ["#undef TRAJOPT_NOINLINE", "#undef TRAJOPT_HIDDEN"]


def chunk_source(source: str, statements: int = CHUNK_STATEMENTS) -> str:
    """``source`` with every function body of more than ``statements`` statements rewritten (module docstring).

    Functions that are short enough or hold a statement the rewriting does not know are kept as they are.
    """
    return split_source(source, statements, None)[0]


def split_source(source: str, statements: int = CHUNK_STATEMENTS, part_statements: Optional[int] = PART_STATEMENTS) -> List[str]:
    """:func:`chunk_source`, with the chunks spread over translation units of about ``part_statements``
    statements that gcc compiles in parallel (``None``: one file).

    The first file is the whole program (CasADi's file with the chunks of the first
    ``part_statements`` statements, declaring the others); each further file holds the
    chunks that follow, after a copy of CasADi's includes, type definitions and helper
    functions (the lines before :data:`PREAMBLE_END`, their symbols renamed with CasADi's
    ``CODEGEN_PREFIX`` so that no two files define the same one). The files are compiled
    separately (``-c``) and linked into one library; a source without :data:`PREAMBLE_END`
    stays one file.
    """
    for name, value, least in (("statements", statements, 1), ("part_statements", part_statements, statements)):
        if value is None and name == "part_statements":
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"{name}: expected an int >= {least}, got {value!r}")
    lines = source.split("\n")
    if PREAMBLE_END not in lines:
        part_statements = None
    collecting = gc.isenabled()
    gc.disable()  # millions of small lists and tuples, none cyclic: the collector's passes doubled the time
    try:
        main, parts = _split_source(lines, statements, part_statements)
    finally:
        if collecting:
            gc.enable()
    if not parts:
        return ["\n".join(main)]
    preamble = lines[: lines.index(PREAMBLE_END)]
    files = ["\n".join(main)]
    for k in sorted(parts):
        head = ["#define CASADI_CODEGEN_PREFIX", f"#define CODEGEN_PREFIX trajopt_part{k}_"]
        tail = [*_UNDEF, "#ifdef __cplusplus", "} /* extern \"C\" */", "#endif", ""]
        files.append("\n".join(head + preamble + _MACROS + parts[k] + tail))
    return files


def _split_source(lines: List[str], statements: int, part_statements: Optional[int]) -> Tuple[List[str], Dict[int, List[str]]]:
    """The lines of the first file and of the chunks of each further part (:func:`split_source`)."""
    main: List[str] = []
    parts: Dict[int, List[str]] = {}
    placed = 0  # statements of the chunks placed so far
    i = 0
    while i < len(lines):
        match = _FUNCTION.match(lines[i])
        end = _body_end(lines, i) if match else None
        chunked = _chunk_function(lines[i + 1 : end], statements) if match and end is not None else None
        if chunked is None:
            main.extend(lines[i : i + 1] if end is None else lines[i : end + 1])
            i = i + 1 if end is None else end + 1
            continue
        name = match.group(1)
        chunks, slots = chunked
        main.extend(_MACROS)
        for c, (local, code) in enumerate(chunks):
            part = placed // part_statements if part_statements else 0
            placed += len(code)
            signature = f"void {name}_chunk{c}(const casadi_real** arg, casadi_real** res, casadi_real* s)"
            locals_ = ["  casadi_real " + ", ".join(local[k : k + 12]) + ";" for k in range(0, len(local), 12)]
            if part == 0:
                main.extend([f"static TRAJOPT_NOINLINE {signature} {{", *locals_, *code, "}", ""])
            else:
                main.append(f"TRAJOPT_HIDDEN {signature};")
                parts.setdefault(part, []).extend([f"TRAJOPT_HIDDEN {signature} {{", *locals_, *code, "}", ""])
        main.extend(_UNDEF)
        calls = [f"  {name}_chunk{c}(arg, res, s);" for c in range(len(chunks))]
        main.extend([lines[i], f"  casadi_real s[{max(slots, 1)}];", *calls, "  return 0;", "}"])
        i = end + 1
    return main, parts


def _body_end(lines: List[str], start: int) -> Optional[int]:
    """Index of the ``}`` closing the function opened at ``lines[start]``, or ``None``."""
    for k in range(start + 1, len(lines)):
        if lines[k] == "}":
            return k
    return None


@dataclass
class _Program:
    """The statements kept after merging common subexpressions.

    ``template[i]``: the text of statement ``i`` around its operands (for a
    value ``aN=(a3*a4);``: ``["=(", "*", ");"]``, the assigned variable
    dropped; for an output: ``["  if (res[0]!=0) res[0][3]=", ";"]``);
    ``operands[i]``: the statement computing each operand; ``assigns[i]``:
    whether it computes a value (else it writes an output); ``last_use[i]``:
    the last statement reading the value of statement ``i`` (-1: none).
    """

    template: List[Tuple[str, ...]]
    operands: List[List[int]]
    assigns: List[bool]
    last_use: List[int]


def _chunk_function(body: List[str], statements: int) -> Optional[Tuple[List[Tuple[List[str], List[str]]], int]]:
    """The chunks of a function body (:func:`_emit`) and its memory slots, or ``None`` to keep it as it is."""
    code = [line for line in body if not _LOCALS.match(line)]
    if not code or code[-1] != "  return 0;" or len(code) - 1 <= statements:
        return None
    program = _merged_program(code[:-1])
    if program is None:
        return None
    chunks, slots = _emit(program, statements)
    return None if slots > MAX_SLOTS else (chunks, slots)


def _merged_program(code: List[str]) -> Optional[_Program]:
    """The statements of ``code`` with common subexpressions merged, or ``None`` for an unknown statement."""
    split = _VARIABLE.split
    latest: Dict[str, int] = {}  # variable -> the kept statement holding its current value
    seen: Dict[Tuple[Tuple[str, ...], Tuple[int, ...]], int] = {}  # (template, operand values) -> kept statement
    program = _Program([], [], [], [])
    for line in code:
        parts = split(line)
        assigns = parts[0] == "  " and len(parts) > 2 and parts[2].startswith("=") and line.endswith(";")
        if not assigns and not _OUTPUT.match(line):
            return None
        template = tuple(parts[2::2] if assigns else parts[0::2])
        try:
            operands = [latest[v] for v in parts[3 if assigns else 1 :: 2]]
        except KeyError:  # a variable read before it is written: not CasADi's straight-line code
            return None
        i = len(program.template)
        if assigns:
            key = (template, tuple(sorted(operands)) if len(operands) == 2 and template in _COMMUTATIVE else tuple(operands))
            known = seen.get(key)
            if known is not None:
                latest[parts[1]] = known
                continue
            seen[key] = latest[parts[1]] = i
        for d in operands:
            program.last_use[d] = i
        program.template.append(template)
        program.operands.append(operands)
        program.assigns.append(assigns)
        program.last_use.append(-1)
    return program


def _emit(program: _Program, statements: int) -> Tuple[List[Tuple[List[str], List[str]]], int]:
    """The chunks (their locals and statements) and the number of memory slots they use."""
    slot: Dict[int, int] = {}  # value in memory -> its slot
    free: List[int] = []
    slots = 0
    chunks: List[Tuple[List[str], List[str]]] = []
    n = len(program.template)
    for first in range(0, n, statements):
        last = min(n, first + statements)
        local: List[str] = []
        lines: List[str] = []
        for i in range(first, last):
            operands = program.operands[i]
            names = [f"s[{slot[d]}]" if d in slot else f"v{d}" for d in operands]
            for d in set(operands):  # a slot is free once its value's last reader has read it
                if d in slot and program.last_use[d] == i:
                    free.append(slot.pop(d))
            target = ""
            if program.assigns[i]:
                if program.last_use[i] < 0:  # never read
                    continue
                if program.last_use[i] >= last:  # read by a later chunk
                    if not free:
                        free.append(slots)
                        slots += 1
                    slot[i] = free.pop()
                    target = f"  s[{slot[i]}]"
                else:
                    local.append(f"v{i}")
                    target = f"  v{i}"
            lines.append(target + "".join(text + name for text, name in zip(program.template[i], names + [""])))
        chunks.append((local, lines))
    return chunks, slots
