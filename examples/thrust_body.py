"""Your own model with gravity: a thrust-vectoring rigid body flies from hover to hover.

:class:`ThrustBody` is a :class:`models.RigidBody` subclass written as a user
would: one thrust ``T`` along the body z axis (``0 <= T <= 2 m g``) and three
body-frame torques (``|tau_i| <= 0.5`` N m), gravity along world -z::

    F_world  = Rot(q) [0, 0, T] - [0, 0, m g]
    tau_body = [tau_x, tau_y, tau_z]

The problem sets no initial guess: states are interpolated from the start to
the goal on the manifold and controls are the model's equilibrium controls
(hover thrust), which :meth:`trajopt.Problem.initial_guess` derives from the
model's own dynamics (:meth:`models.Model.equilibrium_control`).

    python examples/thrust_body.py [--out DIR]
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Optional, Sequence, Tuple

import numpy as np

from lie import axis_angle_to_quat
from lie import _backend as B
from models import RigidBody
from trajopt import GoalConstraint, Problem, QuadraticCost, solve
from trajopt.plotting.solution import plot_solution

GRAVITY = 9.81


class ThrustBody(RigidBody):
    """A 1.2 kg body with a body-z thrust and three body torques (module docstring)."""

    name = "thrust-body"

    def __init__(self) -> None:
        super().__init__(rotation="quaternion")
        self.set_mass_properties(1.2, [0.02, 0.02, 0.03])

    @property
    def control_dim(self) -> int:
        return 4

    def control_bounds(self) -> Tuple[np.ndarray, np.ndarray]:
        limit = 2.0 * self.mass() * GRAVITY
        return np.array([0.0, -0.5, -0.5, -0.5]), np.array([limit, 0.5, 0.5, 0.5])

    def wrenches(self, x: Any, u: Any, t: Any) -> Tuple[Any, Any]:
        R = self.rotation_matrix(x)
        F = R @ B.vcat([0, 0, u[0]]) - np.array([0.0, 0.0, self.mass() * GRAVITY])
        return F, u[1:4]


def thrust_body_flight() -> Problem:
    """Hover at the origin to hover at (3, 1, 1.5) m turned by 90 degrees about z, in 4 s (41 knots)."""
    model = ThrustBody()
    rest = np.zeros(3)
    x0 = model.build_state(rest, axis_angle_to_quat(rest), rest, rest)
    xf = model.build_state([3.0, 1.0, 1.5], axis_angle_to_quat([0.0, 0.0, np.pi / 2]), rest, rest)
    problem = Problem(model, N=41, tf=4.0, x0=x0, name="thrust-body flight")
    problem.add_cost(QuadraticCost(model, Q=np.full(12, 1e-2), R=np.array([1e-2, 1.0, 1.0, 1.0]), x_ref=xf))
    problem.add_constraint(GoalConstraint(model, xf))
    return problem


def main(argv: Optional[Sequence[str]] = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("example_output"), help="output directory")
    args = parser.parse_args(argv)

    solution = solve(thrust_body_flight())
    print(solution.summary())
    figure = args.out / "thrust_body.png"
    plot_solution(solution, path=figure, overwrite=True)
    print(f"wrote {figure}")
    return {"solution": solution, "figure": figure}


if __name__ == "__main__":
    main()
