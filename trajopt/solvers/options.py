"""Solver options checked before a problem is transcribed or solved, and CasADi's errors made readable.

IPOPT knows its options (names, types, ranges, the values of string options);
CasADi hands them over when it builds an ``nlpsol`` and turns a mistake into a
``RuntimeError`` quoting its C++ sources, after the NLP has been built (seconds
for a legged robot), while IPOPT prints its explanation to stdout.
:func:`check_ipopt_options` instead builds a one-variable IPOPT solver with the
user's options (about 2 ms; IPOPT's output captured), and when IPOPT refuses
them finds each culprit and raises one ``ValueError`` naming it:

- an unknown name, with the closest known names (from IPOPT's documentation
  dump, :func:`ipopt_documentation`, read only on this error path);
- a value of the wrong type or outside the valid range or settings, with
  what IPOPT expects (its documentation of that option).

CasADi's own ``nlpsol`` options are checked by name against
``casadi.nlpsol_options(plugin)`` (:func:`check_nlpsol_options`), and
:func:`casadi_message` strips the C++ source locations from a CasADi error.
"""
from __future__ import annotations

import contextlib
import difflib
import functools
import io
import re
from typing import Any, Dict, List, Mapping, Optional

import casadi as ca

#: Header line of an option in IPOPT's documentation dump: its name, then its range or default.
_OPTION_LINE = re.compile(r"^([a-z][a-z0-9_]*)\s{2,}(\S.*)$")
#: A numeric option's documentation: ``lower bound ( default ) upper bound``, e.g. ``0 <  (1e-08) <  +inf``.
_BOUNDS = re.compile(r"^([^(]*<=?)\s*\(\s*([^)]*?)\s*\)\s*(<=?[^ ]*\s*\S+)")
#: A C++ source location in a CasADi message, e.g. ``.../casadi/core/function_internal.cpp:164: ``.
_SOURCE = re.compile(r"\S*\.(?:cpp|hpp|h):\d+:\s*")
#: A string option's documentation: ``("default")``.
_DEFAULT = re.compile(r'^\(("[^"]*")\)')


def _build(options: Mapping[str, Any]) -> Optional[str]:
    """Build a one-variable IPOPT solver with ``options``: ``None`` if IPOPT accepts them, else why not.

    IPOPT's own printout (its documentation of a rejected option) is captured
    into the returned text; when it accepts the options, anything captured is
    written to the real stdout (IPOPT prints nothing then).
    """
    x = ca.SX.sym("x")
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):  # CasADi sends IPOPT's output through Python's sys.stdout
            ca.nlpsol("ipopt_options_check", "ipopt", {"x": x, "f": x * x}, {"print_time": False, "ipopt": {"sb": "yes", **options}})
    except RuntimeError as err:
        reason = str(err).strip().splitlines()[-1]
        return f"{reason}\n{out.getvalue()}"
    print(out.getvalue(), end="")
    return None


@functools.lru_cache(maxsize=1)
def ipopt_documentation() -> Dict[str, str]:
    """IPOPT's documentation of every option, advanced ones included: ``{name: text}`` (read once, from IPOPT)."""
    x = ca.SX.sym("x")
    out = io.StringIO()
    options = {"print_level": 5, "print_options_documentation": "yes", "print_advanced_options": "yes", "max_iter": 0, "sb": "yes"}
    with contextlib.redirect_stdout(out):
        ca.nlpsol("ipopt_documentation", "ipopt", {"x": x, "f": x * x}, {"print_time": False, "ipopt": options})(x0=0)
    docs: Dict[str, List[str]] = {}
    current: Optional[List[str]] = None
    for line in out.getvalue().splitlines():
        match = _OPTION_LINE.match(line)
        if match:
            current = docs.setdefault(match.group(1), [match.group(2).strip()])
        elif line.startswith("###") or not line.strip():
            current = None if line.startswith("###") else current
        elif current is not None:
            current.append(line.strip())
    return {name: " ".join(lines) for name, lines in docs.items()}


def _expected(name: str) -> str:
    """What IPOPT accepts for option ``name``: its range or settings, from the documentation dump."""
    doc = ipopt_documentation().get(name, "")
    settings = re.findall(r"- (\S+)", doc.split("Possible values:", 1)[1]) if "Possible values:" in doc else []
    if settings and settings != ["*"]:
        return "one of " + ", ".join(repr(s) for s in settings)
    bounds = _BOUNDS.match(doc)
    if bounds:
        lower, default, upper = (" ".join(part.split()) for part in bounds.groups())
        return f"a number with {lower} {name} {upper} (default {default})"
    default = _DEFAULT.match(doc)
    return f"a string (default {default.group(1)})" if default else "a valid value (see IPOPT's options reference)"


def _describe(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})"


def check_ipopt_options(options: Optional[Mapping[str, Any]]) -> None:
    """Raise ``ValueError`` naming every IPOPT option of ``options`` that IPOPT rejects (an unknown name,
    a value of the wrong type or outside its range), before any problem is built.

    ``TypeError`` when ``options`` is not a mapping of option names (str) to values.
    """
    if not options:
        return
    if not isinstance(options, Mapping):
        raise TypeError(f"options: expected a dict of IPOPT options, got {type(options).__name__}")
    bad_keys = [k for k in options if not isinstance(k, str)]
    if bad_keys:
        raise TypeError(f"options: IPOPT option names must be strings, got {bad_keys!r}")
    if _build(options) is None:
        return
    problems = []
    for name, value in options.items():
        reason = _build({name: value})
        if reason is None:
            continue
        if "No such IPOPT option" in reason:
            close = difflib.get_close_matches(name, ipopt_documentation(), n=3)
            hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else "; see IPOPT's options reference"
            problems.append(f"unknown IPOPT option {name!r}{hint}")
        else:
            problems.append(f"IPOPT option {name!r} expects {_expected(name)}, got {_describe(value)}")
    if not problems:  # each option alone is fine: IPOPT refuses the combination
        problems.append(f"IPOPT refuses the combination {dict(options)!r}")
    raise ValueError("options: " + "; ".join(problems))


def check_nlpsol_options(options: Optional[Mapping[str, Any]], plugin: str = "ipopt") -> None:
    """Raise ``ValueError`` naming the keys of ``options`` that are not ``casadi.nlpsol`` options of ``plugin``."""
    if not options:
        return
    known = set(ca.nlpsol_options(plugin))
    unknown = [k for k in options if k not in known]
    if unknown:
        hints = []
        for key in unknown:
            close = difflib.get_close_matches(str(key), known, n=1)
            hints.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise ValueError(f"nlpsol_options: unknown casadi.nlpsol option(s) of {plugin} {', '.join(hints)}; the solver's own options go in options=")


def casadi_message(err: BaseException) -> str:
    """The text of a CasADi ``RuntimeError`` without its C++ source locations (``.../file.cpp:123:``) and call-stack lines."""
    lines = []
    for line in str(err).splitlines():
        line = _SOURCE.sub("", line).strip()
        if line and not line.startswith("Error calling"):
            lines.append(line)
    return " ".join(lines)
