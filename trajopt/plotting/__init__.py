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
from .animation import animate_rigid_body
from .contact import animate_contact_simulation, plot_contact_simulation
from .legged import plot_base, plot_contact_forces, plot_foot_heights, plot_gait_diagram, plot_joints, plot_legged_summary
from .output import save_figure
from .rigid_body import plot_trajectory_3d
from .solution import animate_solution, plot_solution
from .stick_figure import animate_stick_figure, stick_segments
from .trajectories import plot_constraint_violation, plot_controls, plot_states

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
