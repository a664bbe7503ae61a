"""Plots and animations of trajectories, written against plain numpy arrays.

- :mod:`.trajectories`: states (quaternions also as ZYX Euler angles),
  controls with limits, constraint violation per knot.
- :mod:`.rigid_body`: 3D path with body-axes triads.
- :mod:`.animation`: quadrotor-like rigid-body animation, GIF/MP4 writing.
- :mod:`.legged`: base, joints, contact forces, foot heights, gait diagram,
  a one-page summary.
- :mod:`.stick_figure`: a stick-figure animation (segments from pinocchio).
- :mod:`.contact`: a capsule contact simulation: distances, contact forces,
  impacts, and a side view (still or animated) with the collision witness points.
- :mod:`.solution`: :func:`plot_solution` and :func:`animate_solution`, which
  pick the plots for a :class:`trajopt.Solution` by its problem and model.
- :mod:`.output`: :func:`save_figure`, used by every plot's ``path`` argument.

Conventions follow docs/conventions.md: quaternions ``[qw, qx, qy, qz]`` (Hamilton,
body to world), ZYX Euler angles ordered ``(yaw, pitch, roll)``, SI units.
"""
from importlib import import_module
from typing import Any

#: Where each public name is defined. The submodules are imported on first use (PEP 562), so that
#: importing the package (or a light submodule of it, :mod:`.output`) does not import matplotlib's
#: figure machinery and scipy for a command that draws nothing.
_SOURCES = {
    "animate_rigid_body": "animation",
    "animate_contact_simulation": "contact",
    "plot_contact_simulation": "contact",
    "plot_base": "legged",
    "plot_contact_forces": "legged",
    "plot_foot_heights": "legged",
    "plot_gait_diagram": "legged",
    "plot_joints": "legged",
    "plot_legged_summary": "legged",
    "save_figure": "output",
    "plot_trajectory_3d": "rigid_body",
    "animate_solution": "solution",
    "plot_solution": "solution",
    "animate_stick_figure": "stick_figure",
    "stick_segments": "stick_figure",
    "plot_constraint_violation": "trajectories",
    "plot_controls": "trajectories",
    "plot_states": "trajectories",
}


def __getattr__(name: str) -> Any:
    if name not in _SOURCES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{_SOURCES[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(_SOURCES))


__all__ = [
    "animate_contact_simulation",
    "animate_rigid_body",
    "animate_solution",
    "plot_solution",
    "animate_stick_figure",
    "plot_base",
    "plot_constraint_violation",
    "plot_contact_simulation",
    "plot_contact_forces",
    "plot_controls",
    "plot_foot_heights",
    "plot_gait_diagram",
    "plot_joints",
    "plot_legged_summary",
    "plot_states",
    "plot_trajectory_3d",
    "save_figure",
    "stick_segments",
]
