"""Model-predictive control: re-solve a receding horizon from each measured state (:class:`MPC`)."""
from .controller import MODES, MPC, TickRecord
from .plan import Plan

__all__ = ["MODES", "MPC", "Plan", "TickRecord"]
