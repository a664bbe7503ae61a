"""Legged locomotion on top of the core: contact schedules, footholds, the legged OCP."""
from .kinodynamic import KinodynamicProblem
from .footholds import foothold_table, nominal_foot_paths, swing_apex_knots
from .ocp import LeggedProblem, LeggedWeights
from .schedule import LEG_ROLES, ContactSchedule, gait, jump, periodic_schedule

__all__ = [
    "ContactSchedule",
    "KinodynamicProblem",
    "LEG_ROLES",
    "LeggedProblem",
    "LeggedWeights",
    "foothold_table",
    "gait",
    "jump",
    "nominal_foot_paths",
    "periodic_schedule",
    "swing_apex_knots",
]
