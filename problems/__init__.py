"""Ready-made optimal-control problems and their registry."""
from .registry import accepts_none, factory, get, load_solution, names, parameters, rebuild, register

# importing a module registers its problems
from . import classic, humanoid, legged, legged_kinodynamic, quadrotor, quadrupeds, rigid_body, terrain  # noqa: E402,F401  (isort: skip)

__all__ = ["accepts_none", "factory", "get", "load_solution", "names", "parameters", "rebuild", "register"]
