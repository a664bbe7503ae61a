"""Integrators, transcriptions, OCP builder, IPOPT solve, solutions, plots, CLI."""
__version__ = "0.1.0"
