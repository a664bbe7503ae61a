"""
Your own rigid-body model
=========================

A free-flying robot inside a space station (the size of NASA's Astrobee): a
9.6 kg cube pushed by fans that give a force and a moment along each of its
own axes. We write it as a :class:`models.RigidBody` subclass, check its
equations of motion by hand, and plan a move with it.

A :class:`~models.RigidBody` needs three things from a subclass: its mass and
inertia, the size of its control vector, and the force (WORLD frame) and
moment (BODY frame, about the centre of mass) the controls produce. The base
class writes the equations of motion once, in CasADi, for any attitude
parameterization; here a modified Rodrigues parameter vector (MRP, 3
numbers) instead of the default quaternion, and a linear velocity in the body
frame, as an on-board odometry would measure it.
"""

import numpy as np

from lie import axis_angle_to_quat, quat_to_mrp
from models import RigidBody
from trajopt import GoalConstraint, Problem, QuadraticCost, solve

#: Largest fan force along each body axis (N) and moment about it (N m).
MAX_FORCE, MAX_MOMENT = 0.6, 0.1


class FreeFlyer(RigidBody):
    """A 9.6 kg free flyer with a body-frame force ``u[:3]`` (N) and moment ``u[3:]`` (N m); no gravity."""

    name = "free_flyer"

    def __init__(self):
        super().__init__(rotation="mrp", velocity_frame="body", mass=9.6, inertia=[0.153, 0.143, 0.162])

    @property
    def control_dim(self):
        return 6

    def control_bounds(self):
        limits = np.array([MAX_FORCE] * 3 + [MAX_MOMENT] * 3)
        return -limits, limits

    def wrenches(self, x, u, t):
        # the force is given in the body frame: the model wants it in the world frame
        return self.rotation_matrix(x) @ u[:3], u[3:6]


robot = FreeFlyer()
print("state size", robot.state_dim, "(r, MRP, v_body, w_body); error-state size", robot.error_dim, "; controls", robot.control_dim)

# %%
# Check the equations of motion
# -----------------------------
#
# With a body-frame velocity the model's equations are
# ``rdot = R v``, ``vdot = R^T F / m - w x v`` and
# ``wdot = J^-1 (tau - w x J w)``. At any state and control, the model's
# ``dynamics`` must give exactly that (the attitude rate, ``pdot = K(p) w``,
# is the MRP kinematics of :mod:`lie.mrp`):

rng = np.random.default_rng(0)
attitude = quat_to_mrp(axis_angle_to_quat([0.2, -0.4, 0.9]))
x = robot.build_state([0.5, -0.2, 1.0], attitude, [0.1, 0.0, -0.05], [0.02, -0.03, 0.05])
u = rng.uniform(-1, 1, 6) * np.array([MAX_FORCE] * 3 + [MAX_MOMENT] * 3)
xdot = robot.dynamics(x, u)

R = robot.rotation_matrix(x)
v, w = x[6:9], x[9:12]
J = robot.inertia()
by_hand = np.concatenate([R @ v, R.T @ (R @ u[:3]) / robot.mass() - np.cross(w, v), np.linalg.solve(J, u[3:] - np.cross(w, J @ w))])
model_rates = np.concatenate([xdot[:3], xdot[6:12]])
print("largest difference to the hand-written equations:", np.abs(model_rates - by_hand).max())

# %%
# The same method on CasADi symbols returns an expression, from which CasADi
# differentiates; this is what the optimizer uses. Here is the Jacobian of
# the dynamics with respect to the control: the force enters the body-frame
# velocity rates as ``1/m`` and the moment the angular ones as ``J^-1``.

import casadi as ca

xs, us = ca.SX.sym("x", robot.state_dim), ca.SX.sym("u", robot.control_dim)
dxdot_du = ca.Function("dxdot_du", [xs, us], [ca.jacobian(robot.dynamics(xs, us), us)])
print(np.round(np.asarray(dxdot_du(x, u))[6:12], 4))

# %%
# Plan a move
# -----------
#
# Rest to rest: 1 m forward and a quarter turn about the vertical in 30 s,
# minimizing the fans' effort, within their limits (the model's
# ``control_bounds`` are the problem's default bounds). The goal is an
# equality on the manifold (12 equations: the attitude error is an
# axis-angle).

rest = np.zeros(3)
start = robot.build_state(rest, quat_to_mrp(axis_angle_to_quat(rest)), rest, rest)
goal = robot.build_state([1.0, 0.0, 0.0], quat_to_mrp(axis_angle_to_quat([0.0, 0.0, np.pi / 2])), rest, rest)

problem = Problem(robot, N=41, tf=30.0, x0=start, name="free-flyer move")
problem.add_cost(QuadraticCost(robot, Q=np.zeros(12), R=np.array([1.0, 1.0, 1.0, 10.0, 10.0, 10.0]), x_ref=goal))
problem.add_constraint(GoalConstraint(robot, goal))
solution = solve(problem, print_level=0)
print(solution.summary())
print("largest force", np.abs(solution.controls[:, :3]).max(), "N; largest moment", np.abs(solution.controls[:, 3:]).max(), "N m")

# %%
# The summary page draws the position, the attitude (as ZYX Euler angles),
# the body-frame velocities and the controls against their bounds.

from trajopt.plotting.solution import plot_solution

plot_solution(solution, path="free_flyer.png")
