"""Quickstart: define a rigid-body model, write an optimal-control problem, solve, plot.

A torque-driven satellite (a :class:`models.RigidBody` subclass) slews by
90 degrees about its z axis in 4 s, minimizing torque; the attitude is a unit
quaternion and every cost and constraint is taken on the manifold.

    python examples/quickstart.py [--out DIR]
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from lie import axis_angle_to_quat
from models import RigidBody
from trajopt import GoalConstraint, Problem, QuadraticCost, solve
from trajopt.plotting.solution import plot_solution


class Satellite(RigidBody):
    """A rigid body in space driven by three body-frame torques (N m)."""

    name = "satellite"

    def __init__(self) -> None:
        super().__init__(rotation="quaternion")
        self.set_mass_properties(10.0, [1.0, 2.0, 3.0])

    @property
    def control_dim(self) -> int:
        return 3

    def moments(self, x, u, t):
        return u


def satellite_slew() -> Problem:
    """The slew: rest to rest, 90 degrees about z in 4 s, |u| <= 2 N m, minimizing the torques."""
    model = Satellite()
    rest = np.zeros(3)
    x0 = model.build_state(rest, axis_angle_to_quat(rest), rest, rest)
    xf = model.build_state(rest, axis_angle_to_quat([0.0, 0.0, np.pi / 2]), rest, rest)

    problem = Problem(model, N=31, tf=4.0, x0=x0, name="satellite slew")
    problem.add_cost(QuadraticCost(model, Q=np.zeros(12), R=np.ones(3), x_ref=xf))
    problem.add_constraint(GoalConstraint(model, xf))
    problem.bound_controls(lower=-2.0, upper=2.0)  # |u| <= 2 N m
    return problem


def main(argv: Optional[Sequence[str]] = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("example_output"), help="output directory")
    args = parser.parse_args(argv)

    solution = solve(satellite_slew())
    print(solution.summary())
    figure = args.out / "satellite.png"
    plot_solution(solution, path=figure, overwrite=True)
    print(f"wrote {figure}")
    return {"solution": solution, "figure": figure}


if __name__ == "__main__":
    main()
