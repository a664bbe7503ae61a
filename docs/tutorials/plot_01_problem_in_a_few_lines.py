"""
A problem in a few lines
========================

A quadrotor flies from hover at the origin to hover 5 m ahead and 1 m up in
5 s. This is the README's Python example: a model, a problem on 51 knots, a
quadratic cost, a goal constraint, and a solve by Hermite-Simpson
collocation with IPOPT.
"""

import numpy as np

from lie import axis_angle_to_quat
from models import Quadrotor
from trajopt import GoalConstraint, Problem, QuadraticCost, solve

model = Quadrotor()  # quaternion attitude, 4 rotor inputs
hover = lambda p: model.build_state(p, axis_angle_to_quat(np.zeros(3)), np.zeros(3), np.zeros(3))  # noqa: E731
x0, xf = hover([0, 0, 0]), hover([5, 0, 1])
problem = Problem(model, N=51, tf=5.0, x0=x0)
problem.add_cost(QuadraticCost(model, Q=np.full(12, 1e-2), R=np.full(4, 1e-1), x_ref=xf, u_ref=model.hover_control()))
problem.add_constraint(GoalConstraint(model, xf))  # on the manifold: 12 equations
solution = solve(problem, transcription="hermite_simpson", print_level=0)
print(solution.summary())

# %%
# What the pieces are
# -------------------
#
# The state of :class:`~models.Quadrotor` is ``[r; q; v; w]`` (13 numbers):
# position ``r`` (m, world frame), unit quaternion ``q = [qw, qx, qy, qz]``
# rotating body vectors into the world, linear velocity ``v`` (m/s, world
# frame) and angular velocity ``w`` (rad/s, body frame); see
# :doc:`/conventions`. ``build_state`` assembles it from those four parts.
# The controls are the four rotor thrusts (N).
#
# The cost and the goal are measured in the error state, which has 12
# entries, not 13: the attitude error is an axis-angle (3 numbers), so
# ``Q`` has 12 weights and the goal constraint 12 equations. ``u_ref`` is the
# hover thrust, so the control cost penalizes the deviation from hovering.
#
# ``solve`` picks IPOPT; ``print_level=0`` (the default) keeps it silent,
# ``print_level=5`` prints its iteration log. The solution holds the states and controls at the knots
# (``solution.states`` is ``(N, 13)``, ``solution.controls`` ``(N, 4)``),
# the status, the iterations, the objective and the largest constraint
# violation.

print("states", solution.states.shape, "controls", solution.controls.shape)
print("final position", solution.states[-1, :3], "m")
print("largest constraint violation", solution.max_violation)

# %%
# Between the knots
# -----------------
#
# Hermite-Simpson collocation has a midpoint state and control in each
# interval; between the knots it assumes the state is the cubic Hermite
# interpolant (in the local chart of the interval's first knot, so
# quaternions stay unit) and the control the quadratic through the knot,
# midpoint and next-knot values.
# :meth:`~trajopt.Solution.evaluate` samples that interpolation, which is
# what the plots and the 3D viewer draw:

times = np.linspace(0.0, solution.tf, 6)
states, controls = solution.evaluate(times)
for t, x, u in zip(times, states, controls):
    print(f"t = {t:.1f} s: position {np.round(x[:3], 3)} m, thrusts {np.round(u, 3)} N")

# %%
# A picture
# ---------
#
# :func:`~trajopt.plotting.solution.plot_solution` draws one summary page:
# position, attitude, velocities and controls against their bounds. Given a
# path it writes the file; the page shows it below.

from trajopt.plotting.solution import plot_solution

plot_solution(solution, path="quadrotor.png")
