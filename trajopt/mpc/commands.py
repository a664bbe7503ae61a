"""What a legged robot is told to do: velocity commands and gait schedules, over time.

A :class:`Command` is a velocity in the robot's heading frame (the base's
yaw, level): ``vx`` forward and ``vy`` to the left (m/s), ``yaw_rate``
(rad/s, counter-clockwise). A :class:`CommandProfile` holds piecewise-constant
commands: each row applies from its time ``t`` (s) until the next row's
(:func:`read_commands` reads them from a CSV file with the columns ``t, vx,
vy, yaw_rate`` and, optionally, ``gait``). Commands beyond what the robot
can do are clamped to :func:`command_limits` (the Go1's, the same both ways
and scaled to the robot's legs by dynamic similarity: speeds by ``sqrt(s)``,
rates by ``1 / sqrt(s)``, ``s = L / L_Go1``; a biped's are
:data:`BIPED_LIMITS`, slower backward than forward) with one warning naming
the limit.

The optional ``gait`` column gives a :class:`~trajopt.mpc.gaits.GaitSchedule`.
"""
from __future__ import annotations

import csv
import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence, Tuple

import numpy as np

from ..legged.scaling import GaitScale
from .gaits import GaitSchedule, is_biped

#: The Go1's command limits: forward and lateral speed (m/s), yaw rate (rad/s).
GO1_LIMITS = (0.8, 0.4, 1.0)
#: A biped's command limits (the G1's, robots with ``sole_sides``): the lowest and highest ``vx``, ``vy`` (m/s) and
#: ``yaw_rate`` (rad/s): below what its receding horizon was measured to walk in MuJoCo, with a margin to the
#: speeds at which it fell (docs/design/mpc.md).
BIPED_LIMITS = ((-0.125, 0.3), (-0.075, 0.075), (-0.3, 0.3))


@dataclass(frozen=True)
class Command:
    """A velocity command in the heading frame: ``vx``, ``vy`` (m/s), ``yaw_rate`` (rad/s)."""

    vx: float = 0.0
    vy: float = 0.0
    yaw_rate: float = 0.0

    def __post_init__(self) -> None:
        for name in ("vx", "vy", "yaw_rate"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"command {name}: expected a finite number, got {getattr(self, name)!r}")

    def as_array(self) -> np.ndarray:
        """``[vx, vy, yaw_rate]`` (3,): m/s, m/s, rad/s."""
        return np.array([self.vx, self.vy, self.yaw_rate])


def command_limits(robot: object) -> Tuple[np.ndarray, np.ndarray]:
    """The lowest and highest ``[vx, vy, yaw_rate]`` (3,), (3,) of ``robot``: the Go1's (:data:`GO1_LIMITS`, the same
    both ways) scaled to its legs, speeds by ``sqrt(s)`` and the rate by ``1 / sqrt(s)``, ``s`` its leg length over
    the Go1's; a biped's (``sole_sides``) :data:`BIPED_LIMITS`."""
    if is_biped(robot):
        lower, upper = np.array(BIPED_LIMITS, dtype=float).T
        return lower, upper
    scale = GaitScale.of(robot)
    upper = np.array([GO1_LIMITS[0] * math.sqrt(scale.length), GO1_LIMITS[1] * math.sqrt(scale.length), GO1_LIMITS[2] / math.sqrt(scale.length)])
    return -upper, upper


def clamp(command: Command, limits: Tuple[np.ndarray, np.ndarray], where: str = "command") -> Command:
    """``command`` within ``limits`` (lowest, highest: :func:`command_limits`); a :class:`UserWarning` names each
    clamped component and the limit it crossed."""
    lower, upper = limits
    values = command.as_array()
    clamped = np.clip(values, lower, upper)
    for name, value, limit, unit in zip(("vx", "vy", "yaw_rate"), values, clamped, ("m/s", "m/s", "rad/s")):
        if value != limit:
            warnings.warn(f"{where}: {name} = {value:g} {unit} is beyond this robot's {limit:+.3g} {unit}; clamped to it", UserWarning, stacklevel=3)
    return Command(*clamped)


class CommandProfile:
    """Piecewise-constant commands: ``commands[i]`` from ``times[i]`` (s, increasing, the first 0)."""

    def __init__(self, times: Sequence[float], commands: Sequence[Command]) -> None:
        times = np.asarray(times, dtype=float)
        if times.ndim != 1 or len(times) != len(commands) or len(times) == 0:
            raise ValueError(f"commands: expected one time per command, got {len(times)} times and {len(commands)} commands")
        if times[0] != 0.0 or (np.diff(times) <= 0).any() or not np.isfinite(times).all():
            raise ValueError(f"commands: times must start at 0 and increase, got {times.tolist()}")
        self.times, self.commands = times, list(commands)
        self._values = np.array([c.as_array() for c in self.commands])  # the commands as rows [vx, vy, yaw_rate]

    @classmethod
    def constant(cls, command: Command) -> "CommandProfile":
        """A profile holding ``command`` from time 0 on."""
        return cls([0.0], [command])

    def at(self, t: float) -> Command:
        """The command in force at time ``t``."""
        return self.commands[int(np.searchsorted(self.times, t, side="right")) - 1 if t >= 0 else 0]

    def values_at(self, times: np.ndarray) -> np.ndarray:
        """``[vx, vy, yaw_rate]`` of the commands in force at ``times`` (K,): (K, 3), as :meth:`at` gives them."""
        return self._values[np.maximum(np.searchsorted(self.times, np.asarray(times, dtype=float), side="right") - 1, 0)]

    def clamped(self, limits: Tuple[np.ndarray, np.ndarray]) -> "CommandProfile":
        """The same profile with every command within ``limits`` (:func:`clamp`)."""
        return CommandProfile(self.times, [clamp(c, limits, f"command at t = {t:g} s") for t, c in zip(self.times, self.commands)])


def read_commands(path: str | Path) -> Tuple[CommandProfile, Optional[GaitSchedule]]:
    """The commands of a CSV file with a header ``t, vx, vy, yaw_rate`` (and optionally ``gait``), and its
    gait schedule when it has that column (a row's gait starts at its time; repeated gaits are merged).
    ``FileNotFoundError`` for a missing file, ``ValueError`` naming the line of a malformed one."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"commands: no file {str(path)!r}")
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    if not rows:
        raise ValueError(f"{path}: empty; expected a header line t,vx,vy,yaw_rate[,gait]")
    header = [h.strip() for h in rows[0]]
    if header[:4] != ["t", "vx", "vy", "yaw_rate"] or header[4:] not in ([], ["gait"]):
        raise ValueError(f"{path}, line 1: expected the header t,vx,vy,yaw_rate[,gait], got {','.join(header)}")
    times, commands, gaits = [], [], []
    for number, row in enumerate(rows[1:], start=2):
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise ValueError(f"{path}, line {number}: expected {len(header)} values ({','.join(header)}), got {len(row)}")
        try:
            t, vx, vy, yaw = (float(cell) for cell in row[:4])
            command = Command(vx, vy, yaw)
        except ValueError:
            raise ValueError(f"{path}, line {number}: expected numbers for t,vx,vy,yaw_rate, got {','.join(row[:4])}") from None
        if times and t <= times[-1]:
            raise ValueError(f"{path}, line {number}: time {t:g} s is not after the previous line's {times[-1]:g} s")
        times.append(t)
        commands.append(command)
        if len(header) == 5:
            gaits.append(row[4].strip())
    if not times or times[0] != 0.0:
        raise ValueError(f"{path}: the first command must be at t = 0, got {times[:1]}")
    schedule = None
    if gaits:
        merged = [(t, g) for i, (t, g) in enumerate(zip(times, gaits)) if i == 0 or g != gaits[i - 1]]
        try:
            schedule = GaitSchedule(merged)
        except ValueError as err:
            raise ValueError(f"{path}: {err}") from None
    return CommandProfile(times, commands), schedule
