"""
A Go1 gait and its checks
=========================

``go1-trot`` is one trot cycle of the Unitree Go1 with its full rigid-body
dynamics (18 velocity coordinates, 12 joint torques), four point feet with
friction pyramids, the URDF's torque limits and a contact schedule. This
tutorial builds it, looks at what it contains, solves it, and then checks
the result with tools that did not produce it: pinocchio's own kinematics and
RNEA, and a forward simulation of the planned torques.
"""

import os

import numpy as np
import pinocchio as pin

import problems
from trajopt import solve

# the documentation's CI build sets TRAJOPT_DOCS_QUICK=1 and skips the jump at the end
QUICK = os.environ.get("TRAJOPT_DOCS_QUICK") == "1"

problem = problems.get("go1-trot")
robot, schedule = problem.robot, problem.schedule
print(f"{problem.name}: N = {problem.N} knots over {problem.tf_guess} s, formulation {problem.contact_model.formulation!r}")
print(f"state size {robot.nx} (q: {robot.nq}, v: {robot.nv}), control size {problem.contact_model.control_dim}")
print("feet", schedule.foot_names, "friction coefficient", robot.mu)

# %%
# The problem
# -----------
#
# The default ``"inverse"`` formulation has, at every knot, the joint torques
# (12, N m), the feet's contact forces (4 x 3, N, WORLD frame) and the
# accelerations (18) as controls, and imposes the manipulator equation
# ``RNEA(q, v, a) - sum J_i^T f_i = B u`` as an equality. The schedule says
# which foot is in stance at each knot (``#``) and which swings (``-``): a
# trot moves the diagonal pairs together.

for i, foot in enumerate(schedule.foot_names):
    print(f"{foot:8s}", "".join("#" if s else "-" for s in schedule.stance[:, i]))
print("step length", problem.footholds[-1, 0, 0] - problem.footholds[0, 0, 0], "m; swing apex", problem.swing_apex, "m")

# %%
# Solve
# -----

solution = solve(problem, print_level=0)
print(solution.summary())

# %%
# The report that ``trajopt solve`` prints is :func:`trajopt.report.solution_report`:

from trajopt.report import solution_report

print(solution_report(solution))

# %%
# Check it with pinocchio
# -----------------------
#
# At every knot, pinocchio computes the feet's world positions from the
# planned configuration (our quaternion order converted to pinocchio's), and
# its RNEA the generalized forces the planned accelerations need. From them:
#
# - **slip**: the largest move of a stance foot from one stance knot to the
#   next (m);
# - **swing apex**: the lowest peak height of a swing (m), against the
#   problem's ``swing_apex``;
# - **friction**: the smallest margin ``mu fz - max(|fx|, |fy|)`` of a stance
#   force (N), and the largest force on a swinging foot;
# - **torque ratio**: the largest ``|u| / effortLimit`` (the URDF's limits);
# - **dynamics**: the largest residual of ``RNEA(q, v, a) - sum J_i^T f_i - B u``,
#   relative to the size of the RNEA.

model, data = robot.pin_model, robot.pin_model.createData()
frames = [model.getFrameId(name) for name in schedule.foot_names]
u, forces, accelerations = (np.array(part) for part in zip(*(problem.contact_model.split_control(w) for w in solution.controls)))
forces = forces.reshape(problem.N, len(frames), 3)
feet, residual = [], 0.0
for x, tau_u, f, a in zip(solution.states, u, forces, accelerations):
    q, v = robot.change_order(x[: robot.nq], "nominal", "pinocchio"), x[robot.nq :]
    pin.framesForwardKinematics(model, data, q)
    feet.append([data.oMf[i].translation.copy() for i in frames])
    contact = sum(pin.computeFrameJacobian(model, data, q, i, pin.LOCAL_WORLD_ALIGNED)[:3].T @ f[k] for k, i in enumerate(frames))
    rnea = pin.rnea(model, data, q, v, a)
    residual = max(residual, np.abs(rnea - contact - robot.B_func() @ tau_u).max() / max(1.0, np.abs(rnea).max()))
feet = np.array(feet)

stance = schedule.stance
slip = max(np.abs(feet[k, i] - feet[k - 1, i]).max() for i in range(4) for k in range(1, problem.N) if stance[k, i] and stance[k - 1, i])
apex = min(feet[a : b + 1, i, 2].max() for i in range(4) for a, b in schedule.swings(i))
fx, fy, fz = np.abs(forces[stance, 0]), np.abs(forces[stance, 1]), forces[stance, 2]
checks = {
    "stance slip per knot (m)": slip,
    "lowest swing apex (m)": apex,
    "smallest friction margin (N)": (robot.mu * fz - np.maximum(fx, fy)).min(),
    "largest swing-foot force (N)": np.abs(forces[~stance]).max(),
    "largest torque / limit": (np.abs(u) / model.effortLimit[6:]).max(),
    "dynamics residual (relative)": residual,
}
for name, value in checks.items():
    print(f"{name:30s} {value:.3g}")
assert slip < 1e-9 and apex >= problem.swing_apex - 1e-6 and residual < 1e-9

# %%
# The friction margin is zero where a constraint is active, never negative
# beyond IPOPT's tolerance; the torque ratio stays at or below 1.
#
# Replay the torques
# ------------------
#
# :func:`trajopt.legged.replay.replay` drives a fine simulation of the full
# dynamics with the planned torques (interpolated between knots as the
# transcription assumes), holding stance feet with stabilized contact
# constraints. Open loop, a legged robot drifts; the drift at the end of the
# cycle says how well the plan's dynamics hold between the knots.

from trajopt.legged.replay import replay

replayed = replay(problem, solution)
print(replayed.summary())

# %%
# The summary page
# ----------------
#
# :func:`~trajopt.plotting.solution.plot_solution` draws the legged summary:
# base position and orientation, joint angles and torques against their
# limits, contact forces with the friction limit, foot heights, and the gait.

from trajopt.plotting.solution import plot_solution

plot_solution(solution, path="go1_trot.png")

# %%
# Other gaits
# -----------
#
# ``go1-pace``, ``go1-bound``, ``go1-jump`` and ``go2-trot`` are solved the
# same way (``trajopt list`` shows them all). The jump has a flight phase:
# all four feet leave the ground. (Skipped in the quick build.)

if not QUICK:
    jump = solve(problems.get("go1-jump"), print_level=0)
    print(jump.summary())
    print(replay(jump.problem, jump).summary())
    plot_solution(jump, path="go1_jump.png")
