"""Swappable direct transcriptions: trapezoidal, Hermite-Simpson, multiple shooting (RK4)."""
from __future__ import annotations

from typing import Callable, Dict

from .base import Transcription
from .hermite_simpson import HermiteSimpson
from .multiple_shooting import MultipleShooting
from .trapezoidal import Trapezoidal

_FACTORIES: Dict[str, Callable[[], Transcription]] = {
    "trapezoidal": Trapezoidal,
    "hermite_simpson": HermiteSimpson,
    "multiple_shooting": MultipleShooting,
}
#: Accepted names (hyphens and underscores are interchangeable).
TRANSCRIPTIONS = tuple(_FACTORIES)


def get_transcription(transcription: Transcription | str) -> Transcription:
    """A :class:`Transcription` from itself or its name: "trapezoidal", "hermite_simpson",
    "multiple_shooting" (RK4) or "multiple_shooting_<integrator>" (e.g. "multiple_shooting_rk3"),
    either with the suffix "_knot_cost" (running cost at the knots, :mod:`.multiple_shooting`);
    hyphens may replace underscores. Raises ``ValueError`` otherwise."""
    if isinstance(transcription, Transcription):
        return transcription
    key = transcription.lower().replace("-", "_") if isinstance(transcription, str) else None
    if key is not None and key.startswith("multiple_shooting"):
        rest = key[len("multiple_shooting") :]
        cost = "knots" if rest.endswith("_knot_cost") else "integrated"
        rest = rest[: -len("_knot_cost")] if cost == "knots" else rest
        if rest == "" or rest.startswith("_"):
            return MultipleShooting(rest[1:] or "rk4", cost)
    if key not in _FACTORIES:
        raise ValueError(f"transcription: expected one of {', '.join(TRANSCRIPTIONS)} or a Transcription, got {transcription!r}")
    return _FACTORIES[key]()


__all__ = ["HermiteSimpson", "MultipleShooting", "TRANSCRIPTIONS", "Transcription", "Trapezoidal", "get_transcription"]
