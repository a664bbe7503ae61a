"""Registry of named problems: ``names()``, ``get(name, **params)``, ``register``."""
from __future__ import annotations

from typing import Any, Callable, Dict

_FACTORIES: Dict[str, Callable[..., Any]] = {}


def register(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator registering a problem factory under ``name``."""

    def deco(factory: Callable[..., Any]) -> Callable[..., Any]:
        if name in _FACTORIES:
            raise ValueError(f"problem {name!r} is already registered")
        _FACTORIES[name] = factory
        return factory

    return deco


def names() -> list[str]:
    """Sorted names of all registered problems."""
    return sorted(_FACTORIES)


def factory(name: str) -> Callable[..., Any]:
    """The registered factory of problem ``name`` (its signature lists the parameters)."""
    if name not in _FACTORIES:
        raise ValueError(f"unknown problem {name!r}; known problems: {', '.join(names()) or '(none)'}")
    return _FACTORIES[name]


def get(name: str, **params: Any) -> Any:
    """Build the problem ``name`` with keyword parameters overriding its defaults."""
    return factory(name)(**params)
