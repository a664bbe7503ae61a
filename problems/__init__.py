"""Ready-made optimal-control problems and their registry."""
from .registry import get, names, register

__all__ = ["get", "names", "register"]
