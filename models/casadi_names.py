"""Valid ``casadi.Function`` names built from free-form labels (a model's name, a constraint's name).

CasADi accepts a Function name only if it starts with an ASCII letter, holds
ASCII letters, digits and single underscores, and is none of ``null``, ``jac``,
``hess``. A model keeps the name its user gave it (plots, reports and files
show it); every Function built from that name goes through :func:`casadi_name`.
"""
from __future__ import annotations

import re
import unicodedata

#: Names CasADi refuses even though they are identifiers.
RESERVED = ("null", "jac", "hess")

#: CasADi's rule for a Function name (besides :data:`RESERVED`).
VALID = re.compile(r"[A-Za-z](?:_?[A-Za-z0-9])*_?")

#: Prefix of a name that does not start with an ASCII letter or is reserved.
PREFIX = "fn_"


def _ascii_piece(char: str) -> str:
    """``char`` itself if an ASCII letter or digit; its ASCII letters for an accented letter
    ("ä" -> "a"); ``u`` and its hexadecimal code point for another letter or digit ("λ" ->
    "u03bb"); a separator ``_`` for anything else (spaces, hyphens, punctuation)."""
    if char.isascii():
        return char if char.isalnum() else "_"
    base = "".join(c for c in unicodedata.normalize("NFKD", char) if c.isascii() and c.isalnum())
    if base:
        return base
    return f"_u{ord(char):04x}_" if char.isalnum() else "_"


def casadi_name(label: str) -> str:
    """A valid ``casadi.Function`` name for ``label``, unchanged when ``label`` already is one.

    Each run of characters other than ASCII letters and digits becomes one
    underscore (``"thrust-body_dynamics"`` -> ``"thrust_body_dynamics"``),
    accented letters lose their accents, other letters become their code
    point (``"λ"`` -> ``"u03bb"``), leading and trailing underscores go, and a
    name that would start with a digit, be empty or be reserved gets the
    prefix ``fn_`` (``"3body_dynamics"`` -> ``"fn_3body_dynamics"``).
    Deterministic, so compiled-code caches keyed on the name stay valid.
    """
    text = str(label)
    if VALID.fullmatch(text) and text not in RESERVED:
        return text
    ident = re.sub(r"_+", "_", "".join(_ascii_piece(c) for c in text)).strip("_")
    if ident[:1].isalpha() and ident not in RESERVED:
        return ident
    return f"{PREFIX}{ident}" if ident else PREFIX.rstrip("_")
