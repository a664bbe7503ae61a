"""MuJoCo as a second simulator for our plans: model, verification, export, closed-loop tracking.

Needs the ``mujoco`` extra (``pip install -e ".[mujoco]"``); nothing else in
:mod:`trajopt` imports this package.

- :func:`build_model` / :class:`MujocoRobot` (:mod:`.model`): a MuJoCo model of
  one of our robots from the same description, and the vector maps.
- :func:`track` (:mod:`.track`): closed-loop simulation of a legged plan with
  :class:`PDFeedforward`, :class:`Feedforward` or :class:`TimeVaryingLQR`.
- :func:`verify` (:mod:`.verify`): the plan's equation-of-motion residual,
  slip, friction, unilateral, torque and joint limits in MuJoCo, and its
  tracked and feed-forward-only replays.
"""
try:
    import mujoco  # noqa: F401
except ImportError:  # pragma: no cover - exercised only without the extra
    raise ImportError('trajopt.mujoco needs MuJoCo: pip install -e ".[mujoco]"') from None

from ..legged.joint_gains import DEFAULT_GAINS
from .model import ContactParameters, MujocoRobot, build_model
from .reference import PlanSamples, plan_timestep, sample_plan
from .track import CONTROLLERS, Feedforward, PDFeedforward, TimeVaryingLQR, TrackingResult, track

__all__ = [
    "CONTROLLERS",
    "ContactParameters",
    "DEFAULT_GAINS",
    "Feedforward",
    "MujocoRobot",
    "PDFeedforward",
    "PlanSamples",
    "TimeVaryingLQR",
    "TrackingResult",
    "build_model",
    "plan_timestep",
    "sample_plan",
    "track",
]
