"""
An arm from its URDF: limits, locked joints and an end-effector target
======================================================================

A fixed-base arm is a :class:`models.MultibodyModel` like any robot. This
tutorial takes the Franka Panda of ``example-robot-data``, locks its two
finger joints, starts from the pose its SRDF file calls ``default``, keeps
every joint within the position and velocity limits of its URDF, and brings
the gripper's tool frame to a point in 1 s, at rest. pinocchio, on the full
robot read again from the file, checks where the tool ends up.
"""

import matplotlib.pyplot as plt
import numpy as np
import pinocchio as pin

from models import MultibodyModel
from models.robot_data import urdf_path
from trajopt import InfeasibleProblem, Problem, QuadraticCost, frame_target, solve

URDF = urdf_path("panda")
SRDF = URDF.parent.parent / "srdf" / "panda.srdf"
FINGERS = ["panda_finger_joint1", "panda_finger_joint2"]
TOOL = "panda_hand_tcp"

# %%
# The robot
# ---------
#
# ``locked_joints`` welds the fingers at their positions in the SRDF's pose
# (:func:`models.locked_joints.lock_joints`): the model keeps the seven arm
# joints, and the hand's mass. The summary line is what a user should check
# first: a mass far from the datasheet's points at a link that did not load.

arm = MultibodyModel.from_urdf(URDF, floating=False, locked_joints=FINGERS, srdf=SRDF, pose="default", name="panda")
print(arm.summary())
start = arm.srdf_state(SRDF, "default")
lower, upper = arm.state_bounds()  # the URDF's position limits and velocity limits
for name, lo, hi, v in zip(arm.joint_names, lower[:7], upper[:7], upper[7:]):
    print(f"{name}: {lo:+.4f} .. {hi:+.4f} rad, |v| <= {v:.3f} rad/s")

# %%
# A start outside the limits is refused before the solve
# -------------------------------------------------------
#
# The arm's all-zero configuration is not a pose of the Panda: joint 4 must
# stay below -0.0698 rad. :func:`trajopt.solve` checks the states a problem
# fixes (its start, its goal) against its bounds and the constraints that do
# not read the control, and names what is wrong in one line, before any
# iteration (``check=False`` turns that off).

zero_pose = Problem(arm, N=21, tf=1.0, x0=np.zeros(arm.nx), name="panda-from-zero")
zero_pose.bound_states(lower, upper)
try:
    solve(zero_pose)
except InfeasibleProblem as err:
    print(err)

# %%
# Point to point
# --------------
#
# From the SRDF pose to the tool at ``TARGET`` (world frame, m) in 1 s: the
# target is one line (:func:`trajopt.frame_target`, a constraint at the
# final knot), the rest at the end a bound on the last knot's velocities, and
# the cost penalizes joint velocities and torques.

TARGET = np.array([0.5, 0.3, 0.3])
reach = Problem(arm, N=21, tf=1.0, x0=start, name="panda-reach")
reach.bound_states(lower, upper)
reach.bound_states(np.r_[lower[:7], np.zeros(7)], np.r_[upper[:7], np.zeros(7)], knots=-1)
reach.add_cost(QuadraticCost(arm, np.r_[np.zeros(7), np.full(7, 0.1)], np.full(7, 1e-3), x_ref=start))
reach.add_constraint(frame_target(arm, TOOL, TARGET))
solution = solve(reach, print_level=0)
print(solution.summary())

# %%
# Checked by pinocchio on the whole robot
# ---------------------------------------
#
# pinocchio reads the URDF again, with the fingers as joints, puts them where
# they were locked, and computes the tool frame's placement at the last knot.

full = pin.buildModelFromUrdf(str(URDF))
q = pin.neutral(full)
for name in arm.joint_names:
    q[full.joints[full.getJointId(name)].idx_q] = solution.states[-1][arm.joint_names.index(name)]
pin.loadReferenceConfigurations(full, str(SRDF), False)
for name in FINGERS:
    idx = full.joints[full.getJointId(name)].idx_q
    q[idx] = full.referenceConfigurations["default"][idx]
data = full.createData()
pin.framesForwardKinematics(full, data, q)
error = np.linalg.norm(data.oMf[full.getFrameId(TOOL)].translation - TARGET)
print(f"tool position error against pinocchio: {error:.2e} m")
assert error < 1e-9

# %%
# The joints against their limits
# -------------------------------
#
# The limits hold at every knot. Between knots, the report's ``between
# knots`` line measures them on the transcription's interpolation
# (:mod:`trajopt.between_knots`).

fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), layout="constrained")
t = solution.times
for j, name in enumerate(arm.joint_names):
    span = upper[j] - lower[j]
    axes[0].plot(t, (solution.states[:, j] - lower[j]) / span, label=name.replace("panda_", ""))
    axes[1].plot(t, solution.states[:, 7 + j] / upper[7 + j])
axes[0].set(xlabel="t [s]", ylabel="position within its range (0: lower, 1: upper)", ylim=(-0.05, 1.05))
axes[1].set(xlabel="t [s]", ylabel="velocity / its limit", ylim=(-1.05, 1.05))
axes[0].legend(fontsize=7, ncol=2)
plt.show()
