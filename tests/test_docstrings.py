"""Library docstrings state the contract; they do not quote measured figures (issue "docstrings state the contract").

Every module of :mod:`trajopt`, :mod:`lie` and :mod:`models` is imported (``pkgutil.walk_packages``) and
the docstrings of the module, of the classes and functions it defines, of their methods and properties,
its ``#:`` comments (which autodoc renders as the documentation of a constant) and its plain ``#``
comments are read sentence by sentence. A sentence quotes a *measured figure* when

- it holds a quantity (a number followed by ``ms``, ``s``, ``min``, ``%``, ``x``, ``MB``, ``iterations``...)
  *and* a sign that the number was observed rather than specified: ``measured``/``Measured`` as a verb
  ("measured on the Go1", "(measured)"), ``took``, ``median``, ``p50``/``p99``, ``RMS``, "against 6.1",
  "instead of 40" or ``->`` (a comparison of two runs), ``fell``, ``bench/``, "under load", a date or a
  commit; or
- it holds a number, with or without a unit, and says so: "(measured ..." opens a parenthesis, or
  "measured" is followed by the number ("measured 1.3e-5 m", "measured: 79 mm"); or
- it gives a speed-up (``3x faster``, ``~10x more``).

A number with a unit alone is a contract, not a measurement: a unit, a default period (``dt`` (0.02 s)),
a tolerance or a limit passes, and so does ``measured`` as an adjective (the measured state of a
controller). Where a measurement decided the design, the docstring keeps the contract and a one-line
reason and links to the design page (docs/design/) that holds the figures.
"""
from __future__ import annotations

import importlib
import inspect
import io
import pkgutil
import re
import tokenize

import pytest

PACKAGES = ("trajopt", "lie", "models")

NUMBER = r"(?<![\w.])~?\d[\d,]*(?:\.\d+)?(?:e-?\d+)?"
#: A number with a unit in which experiments are reported (times, shares, ratios, sizes, iteration counts).
QUANTITY = re.compile(
    rf"{NUMBER}(?:\s*(?:-|to|/)\s*\d[\d,]*(?:\.\d+)?)?\s*(?:ms|µs|us|ns|s|min|%|x|×|MB|GB|fps|(?:(?:IPOPT|HPIPM|SQP|interior-point) )?iterations?)(?![\w/^])"
)
#: Signs that a number in the same sentence was observed rather than specified.
OBSERVED = re.compile(
    r"\(measured|\bmeasured[:;)]|\bmeasured (?:on|with|over|across|by|in (?!the (?:world|WORLD|body|base)))"
    r"|\bMeasured\b|\btook\b|\bmedian\b|\bp50\b|\bp99\b|\bRMS\b|\bagainst ~?\d|\binstead of ~?\d"
    r"|->|\bfell\b|\bspent\b|\bbench/|\bunder load\b|\bloaded machine\b|\bwe (?:tried|measured|timed)\b"
    r"|\b20\d\d-\d\d-\d\d\b|\bcommit [0-9a-f]{7}"
)
#: "(measured ..." or "measured" followed by a number: with any number in the sentence, a measurement.
MEASURED_NUMBER = re.compile(rf"\(measured\b|\bmeasured:? {NUMBER}")
#: Figures that are measurements wherever they stand.
ALWAYS = re.compile(
    rf"{NUMBER}\s*(?:x|×)\s+(?:faster|slower|more|less|fewer|quicker)\b"  # a speed-up
)
#: Sentences that match the rule but state a contract, with the reason (qualified name, phrase in the sentence).
ALLOWED = {
    # the documented format of the progress line, whose figures are an example, not a result
    ("models.compile_progress", "done in 63.4 s (compiler CPU 118.2 s)"),
    # a worked example of the detection criterion ``s dt < threshold``, computed, not measured
    ("trajopt.sim.contact_sim", "0.95 m/s with ``dt = 1 ms`` against 1 mm"),
}
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(`:*-])")


def _modules():
    for package in PACKAGES:
        root = importlib.import_module(package)
        yield root
        for info in pkgutil.walk_packages(root.__path__, package + "."):
            if info.name.rsplit(".", 1)[-1] == "__main__":  # importing it runs the command line
                continue
            yield importlib.import_module(info.name)


def _docstrings(module):
    """(qualified name, docstring) of the module, its classes and functions, their methods and properties."""
    if module.__doc__:
        yield module.__name__, module.__doc__
    for name, obj in vars(module).items():
        if not (inspect.isclass(obj) or inspect.isfunction(obj)) or getattr(obj, "__module__", None) != module.__name__:
            continue
        if obj.__doc__:
            yield f"{module.__name__}.{name}", obj.__doc__
        if inspect.isclass(obj):
            for member, attr in vars(obj).items():
                function = attr.fget if isinstance(attr, property) else getattr(attr, "__func__", attr)
                if function is not None and (inspect.isfunction(function) or isinstance(attr, property)) and function.__doc__:
                    yield f"{module.__name__}.{name}.{member}", function.__doc__


def comment_blocks(source: str):
    """(line, text) of each block of consecutive comments in ``source``: ``#:`` comments, plain ``#``
    comments, and a comment that ends a line of code on its own."""
    block, start = [], 0
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            start = start or token.start[0]
            block.append(token.string[2:] if token.string.startswith("#:") else token.string[1:])
        elif token.type != tokenize.NL and block:
            yield start, " ".join(block)
            block, start = [], 0
    if block:
        yield start, " ".join(block)


def _comments(module):
    """(module:line, text) of each block of comments in the module's source (:func:`comment_blocks`)."""
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError):
        return
    for line, text in comment_blocks(source):
        yield f"{module.__name__}:{line}", text


def measured_figures(text: str) -> list[str]:
    """The sentences of ``text`` that quote a measured figure."""
    found = []
    for sentence in SENTENCE_END.split(" ".join(text.split())):
        if (
            ALWAYS.search(sentence)
            or (QUANTITY.search(sentence) and OBSERVED.search(sentence))
            or (MEASURED_NUMBER.search(sentence) and re.search(NUMBER, sentence))
        ):
            found.append(sentence)
    return found


def _allowed(where: str, sentence: str) -> bool:
    return any(where.split(":")[0].startswith(name) and phrase in sentence for name, phrase in ALLOWED)


@pytest.mark.parametrize(
    "text",
    [
        "The knot step is ``dt`` (0.02 s, the period of a 50 Hz controller).",
        "IPOPT with ``tol`` 1e-8, at most 1000 iterations.",
        "``sqpmethod`` options used unless overridden: HPIPM as the QP solver, 200 iterations, tolerances 1e-8.",
        "The horizon starts from the measured state of the plant (SI units, WORLD frame).",
        "A line at every 10 % and at least every 30 s.",
        "``timeout`` (s): how long a solve may run, 1 ms at the least.",
        "On a terrain (``knots.body_clearance`` measured), the rows of a link: its depth (threshold 0 m).",
        "The slip is measured in the WORLD frame against 1 mm.",
    ],
)
def test_contract_numbers_pass(text):
    assert measured_figures(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "ANYmal B's took 9.8 iterations with the rows in newtons and 5.3 in weights (measured).",
        "The stage-wise assembly builds 15-30x faster than CasADi's.",
        "A call costs one round trip (measured ~0.3 ms with the cartpole's arrays).",
        "Measured (VM, loaded machine): trot 38 iterations, pace 34.",
        "The tick went from 18 to 34 ms (p50).",
        "IPOPT's own time drops 30-65 % on the trot (measured in one run each).",
        "RK3 is the lowest order that drifts as little (measured: Euler 79 mm, RK2 2.7 mm, RK3 1.4 mm).",
        "Its positions follow to the integrator's accuracy, measured 1.3e-5 m of slip on the trot.",
        "The legs whirled to 30-300 rad/s, and the iteration diverged (measured in MuJoCo).",
    ],
)
def test_measured_figures_fail(text):
    assert measured_figures(text) != []


def test_plain_comments_are_read():
    source = "x = 1  # it helps IPOPT: measured on a jump, 178 -> 92 iterations\n# one\n# block\ny = 2\n"
    assert list(comment_blocks(source)) == [(1, " it helps IPOPT: measured on a jump, 178 -> 92 iterations"), (2, " one  block")]


def test_library_docstrings_quote_no_measured_figure():
    offenders = []
    for module in _modules():
        for where, text in [*_docstrings(module), *_comments(module)]:
            for sentence in measured_figures(text):
                if not _allowed(where, sentence):
                    offenders.append(f"{where}: {sentence[:160]}")
    assert not offenders, (
        f"{len(offenders)} docstring and comment sentences quote measured figures; keep the contract and a one-line reason, "
        "move the figures to docs/design/ and link it:\n" + "\n".join(offenders)
    )
