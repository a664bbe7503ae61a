"""``trajopt list``: the registered problems, or with ``--robots`` the installed quadrupeds and the humanoids."""
from __future__ import annotations

import argparse
import textwrap
from typing import Any

import problems

from models import LeggedRobot
from models.humanoid import HUMANOIDS
from models.quadruped import LEG_ROLES, installed_quadrupeds
from models.robot_data import robot_data_dir

from .arguments import description, problem_factory, signature_text


def add_list_parser(sub: Any) -> None:
    """The ``list`` subcommand's arguments."""
    listing = sub.add_parser("list", help="list the registered problems", description="List the registered problems with a one-line description.")
    listing.add_argument("--params", action="store_true", help="also show each factory's parameters and defaults")
    listing.add_argument("--robots", action="store_true", help="list the quadrupeds of the installed example-robot-data and the humanoids instead (for --robot)")


def list_command(args: argparse.Namespace) -> int:
    """Print the registered problems, one per line with its description (and parameters with ``--params``);
    with ``--robots``, the robots instead (:func:`list_robots`)."""
    if args.robots:
        return list_robots()
    names = problems.names()
    width = max(len(n) for n in names)
    for name in names:
        factory = problem_factory(name)
        print(f"{name:<{width}}  {description(factory)}")
        if args.params:
            print(textwrap.indent(textwrap.fill(signature_text(name), 100), " " * (width + 4)))
    return 0


def list_robots() -> int:
    """Print the quadrupeds of the installed example-robot-data (names, mass, leg length, stance, feet by role, file),
    then the humanoids the humanoid problems take (:data:`models.humanoid.HUMANOIDS`)."""
    found = installed_quadrupeds()
    rows = []
    for quad in found:
        robot = LeggedRobot.from_urdf(quad.urdf, quad.feet)
        cells = (", ".join(quad.names), f"{robot.mass:.1f}", f"{robot.leg_length:.3f}", f"{robot.standing_height:.3f}", robot.knee_posture(), ", ".join(quad.feet))
        rows.append((*cells, quad.urdf.relative_to(robot_data_dir()).as_posix()))
    header = ("name", "kg", "leg m", "stand m", "knees", "feet (" + ", ".join(LEG_ROLES) + ")", "urdf (in example-robot-data)")
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    print(f"{len(rows)} quadrupeds; solve one with `trajopt solve trot --robot NAME`")
    print(f"{len(HUMANOIDS)} humanoids ({', '.join(HUMANOIDS)}); walk one with `trajopt mpc humanoid-walk --robot NAME`")
    return 0
