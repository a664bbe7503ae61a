"""
Check a legged plan in MuJoCo
=============================

A plan that satisfies our own constraints is checked best by a simulator we
did not write. :mod:`trajopt.mujoco` builds a MuJoCo model of the robot from
the same URDF (its mass matrix and bias equal pinocchio's to 1e-15), then
:func:`~trajopt.mujoco.verify.verify` measures the plan knot by knot with
MuJoCo's dynamics and replays it in MuJoCo, and
:func:`~trajopt.mujoco.track` runs it in closed loop. It needs the ``mujoco``
extra.
"""

import os

import numpy as np

import problems
from trajopt import solve

# the documentation's CI build sets TRAJOPT_DOCS_QUICK=1 and tracks two cycles instead of ten
QUICK = os.environ.get("TRAJOPT_DOCS_QUICK") == "1"

jump = solve(problems.get("go1-jump"), print_level=0)
print(jump.summary())

# %%
# Verify the plan
# ---------------
#
# Per knot: the equation-of-motion residual with MuJoCo's mass matrix, bias
# and contact Jacobians (relative to the robot's weight ``m g``), the
# stance feet's speed and slip, ground penetration, the friction cone, the
# torque and joint limits. Then two replays with MuJoCo's contacts: the
# planned torques plus a PD feedback on the joints (per-robot gains, run
# inside MuJoCo's actuators), and the planned torques alone. Drift is the
# base's distance (and angle) from the plan.

from trajopt.mujoco.plot import plot_verification
from trajopt.mujoco.verify import verify

report = verify(jump)
print(report.summary())
print("verified" if report.ok else "NOT verified")
plot_verification(report, path="go1_jump_mujoco.png")

# %%
# The knot table (time, stance, residual, slip speed, friction excess, torque
# use and both replays' drift) is ``report.table()``; its first rows:

print("\n".join(report.table().splitlines()[:8]))

# %%
# The same from the command line
# ------------------------------
#
# A plan saved with ``--save`` (or :meth:`trajopt.Solution.save`) carries the
# recipe of its problem, so ``trajopt verify`` rebuilds the problem from the
# file alone. Its exit status is 0 when the residual is within 1e-6 m g and
# the tracked replay does not fall.

from trajopt.cli import main

jump.save("go1_jump.npz", overwrite=True)
status = main(["verify", "go1_jump.npz"])
print("exit status", status)

# %%
# Closed loop over several cycles
# -------------------------------
#
# A periodic trot (``periodic=True``: it ends with the joint angles and
# velocities it starts with) can be repeated. :func:`trajopt.mujoco.track`
# runs it for ``cycles`` cycles under the PD + feed-forward controller or a
# time-varying LQR on MuJoCo's own linearization (``mjd_transitionFD``).

from trajopt.mujoco import track

trot = solve(problems.get("go1-trot", periodic=True), print_level=0)
cycles = 2 if QUICK else 10
for controller in ("pd", "lqr"):
    result = track(trot, controller, cycles=cycles)
    print(f"{controller}: {result.summary()}")

# %%
# Export for a controller
# -----------------------
#
# ``to_csv`` writes the plan at a fixed rate in the vector order a
# controller expects (``"nominal"``, ``"pinocchio"`` or ``"mujoco"``: Go1's
# URDF lists the legs FR, FL, RR, RL, which is MuJoCo's order), and
# ``to_mujoco_keyframes`` MuJoCo keyframes (XML).

trot.to_csv("go1_trot_mujoco.csv", order="mujoco", dt=0.002, overwrite=True)
with open("go1_trot_mujoco.csv") as csv:
    header = csv.readline().strip().split(",")
print(len(header), "columns:", ", ".join(header[:12]), "...")
xml = trot.to_mujoco_keyframes()
print(xml.splitlines()[0], "...", f"({xml.count('<key ')} keyframes)")
