"""
Any quadruped from a URDF
=========================

The gait templates ``trot``, ``pace``, ``bound``, ``pronk`` and ``jump`` run on
any quadruped with 3-joint legs: a robot of the ``example-robot-data`` wheel
by its name, or any URDF file. The feet are found in the URDF (the leaf frame
at the end of each 3-joint leg) and given roles by their positions
(front-left, front-right, hind-left, hind-right); the robot stands with its
feet under its hips at a height from its leg length; torque and joint limits
come from the URDF.
"""

import os

import numpy as np

import problems
from models import LeggedRobot
from models.robot_data import urdf_path
from trajopt import solve

# the documentation's CI build sets TRAJOPT_DOCS_QUICK=1 and solves the Solo12 trot only
QUICK = os.environ.get("TRAJOPT_DOCS_QUICK") == "1"

# %%
# A robot from a URDF file
# ------------------------
#
# :meth:`models.LeggedRobot.from_urdf` takes a path (here the Solo12's file,
# as installed by ``example-robot-data``), and optionally the four foot
# frames and the knee posture; ``describe`` says what it found.

path = urdf_path("solo12")
print(path.name)
solo = LeggedRobot.from_urdf(path, name="solo12")
print(solo.describe())

# %%
# By name, :meth:`~models.LeggedRobot.from_robot_data` does the same. ANYmal
# stands with its knees "inward" (an X seen from the side), as its joint
# limits suggest; Unitree robots bend them backward.

anymal = LeggedRobot.from_robot_data("anymal")
print(anymal.describe())

# %%
# A gait template on it
# ---------------------
#
# ``problems.get("trot", robot=...)`` (or ``urdf=PATH``) builds the Go1
# trot's gait carried to the robot's size: step, swing apex and period
# scaled by the leg length ``L`` (lengths by ``L / 0.426 m``, times by its
# square root). From the command line: ``trajopt solve trot --robot solo12``
# or ``trajopt solve trot --urdf my_robot.urdf``.

problem = problems.get("trot", robot="solo12")
print(f"{problem.name}: step {problem.footholds[-1, 0, 0] - problem.footholds[0, 0, 0]:.3f} m, apex {problem.swing_apex:.3f} m, {problem.N} knots over {problem.tf_guess:.3f} s")
solution = solve(problem, print_level=0)
print(solution.summary())
torques = problem.joint_torques(solution.controls)
print(f"largest torque {np.abs(torques).max():.2f} N m of the URDF's {solo.torque_limits().max():.2f} N m")

from trajopt.plotting.solution import plot_solution

plot_solution(solution, path="solo12_trot.png")

# %%
# Heavier robots
# --------------
#
# The same call on ANYmal (30.5 kg) and HyQ (86.8 kg), and a jump. (Skipped
# in the quick build.)

if not QUICK:
    for name, robot in (("trot", "anymal"), ("trot", "hyq"), ("jump", "anymal")):
        result = solve(problems.get(name, robot=robot), print_level=0)
        print(f"{robot} {name}: {result.status}, {result.iterations} iterations, objective {result.objective:.4g}")
    plot_solution(result, path="anymal_jump.png")
