"""Legged gait problems on the floating-base (kinodynamic) model: contact forces and joint velocities as inputs.

Each factory returns a :class:`trajopt.legged.kinodynamic.KinodynamicProblem`
(see its docstring) solved with trapezoidal collocation by default.

- ``go1-trot-kinodynamic``: ``go1-trot``'s gait, step, apex and friction on
  :class:`models.FloatingBaseModel` (no joint torques; the joint accelerations
  are neglected in the base dynamics), ``"inverse"`` formulation by default.
  ``problem.full_problem`` is the matching full-dynamics problem (``go1-trot``
  with the same parameters).
"""
from __future__ import annotations

from models import Go1
from trajopt.legged import gait
from trajopt.legged.kinodynamic import KinodynamicProblem

from .registry import register


@register("go1-trot-kinodynamic")
def go1_trot_kinodynamic(
    step: float = 0.15, apex: float = 0.08, mu: float = 0.7, cycles: int = 1, dt: float = 0.02, period: float = 0.6, friction: str = "pyramid", formulation: str = "inverse", payload: float = 0.0
) -> KinodynamicProblem:
    """Go1 trot with go1-trot's gait on the floating-base (kinodynamic) model.

    ``step`` is the base displacement per cycle (m)."""
    schedule = gait("trot", dt=dt, period=period, cycles=cycles)
    return KinodynamicProblem(Go1(mu=mu, payload=payload), schedule, displacement=(step * cycles, 0.0, 0.0), swing_apex=apex, friction=friction, formulation=formulation, name="go1-trot-kinodynamic")
