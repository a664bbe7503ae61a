"""
A URDF robot's dynamics and derivatives, checked against pinocchio
==================================================================

Any URDF becomes a :class:`models.MultibodyModel`: pinocchio reads the file,
and the toolkit re-expresses the robot's rigid-body algorithms (RNEA, CRBA,
ABA, kinematics, Jacobians) as CasADi expressions, so an optimizer gets exact
derivatives. pinocchio stays the numeric reference: this tutorial loads the
Go1 from the ``example-robot-data`` wheel and compares every quantity with
pinocchio's own at a random state.
"""

import numpy as np
import pinocchio as pin

from models import MultibodyModel
from models.robot_data import urdf_path

FEET = ["FL_foot", "FR_foot", "RL_foot", "RR_foot"]
robot = MultibodyModel.from_urdf(urdf_path("go1"), kinematics_bodies=FEET, name="go1_urdf")
print(f"nq = {robot.nq}, nv = {robot.nv}, nu = {robot.nu}, feet: {robot.kinematics_bodies}")

# %%
# States in the two conventions
# -----------------------------
#
# Our configuration is ``q = [x, y, z, qw, qx, qy, qz, joints]`` (position in
# the world frame, unit quaternion base to world), the velocity
# ``v = [v_body, w_body, joint rates]`` with the base's linear and angular
# velocity in the BODY frame: pinocchio's free-flyer tangent. pinocchio
# stores the quaternion as ``[qx, qy, qz, qw]``; ``change_order`` permutes.

rng = np.random.default_rng(1)
x = robot.randn_state(rng)  # a random state with a unit quaternion
q, v = x[: robot.nq], x[robot.nq :]
q_pin = robot.change_order(q, "nominal", "pinocchio")
tau = rng.standard_normal(robot.nv)  # generalized forces (nv)
print("our quaternion", np.round(q[3:7], 3), " pinocchio's", np.round(q_pin[3:7], 3))

model, data = robot.pin_model, robot.pin_model.createData()


def relative_error(ours, reference):
    """Largest difference relative to the reference's size (at least 1)."""
    return float(np.abs(np.asarray(ours) - reference).max() / max(1.0, np.abs(reference).max()))


errors = {}

# %%
# Mass matrix, bias, forward and inverse dynamics
# -----------------------------------------------
#
# ``M_func`` is the joint-space inertia ``M(q)``, ``C_func`` the full bias
# ``C(q, v)`` (Coriolis, centrifugal and gravity), ``forward_dynamics`` the
# acceleration ``vdot = M^-1 (tau - C)`` by the articulated-body algorithm and
# ``inverse_dynamics`` the RNEA.

M_pin = pin.crba(model, data, q_pin)
M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T  # pinocchio fills the upper triangle
errors["M(q)"] = relative_error(robot.M_func(x), M_pin)
errors["C(q, v)"] = relative_error(robot.C_func(x), pin.nonLinearEffects(model, data, q_pin, v))
vdot = robot.forward_dynamics(x, tau)
errors["forward dynamics (ABA)"] = relative_error(vdot, pin.aba(model, data, q_pin, v, tau))
errors["inverse dynamics (RNEA)"] = relative_error(robot.inverse_dynamics(x, vdot), pin.rnea(model, data, q_pin, v, vdot))

# %%
# Foot positions and their Jacobians
# ----------------------------------
#
# ``kinematics`` stacks the world positions of the kinematics bodies (here
# the four feet, 12 numbers). Its Jacobian with respect to the state is
# ``(12, nx)``: with respect to the raw quaternion its columns depend on how
# the function extends off the unit sphere, so derivatives are compared in
# the tangent space, multiplied by ``E(q)`` (``velocity_kinematics``,
# ``qdot = E(q) v``). pinocchio's LOCAL_WORLD_ALIGNED frame Jacobians are
# those tangent derivatives.

pin.forwardKinematics(model, data, q_pin)
pin.updateFramePlacements(model, data)
feet_pin = np.concatenate([data.oMf[model.getFrameId(f)].translation for f in FEET])
errors["foot positions"] = relative_error(robot.kinematics(x), feet_pin)

E = robot.velocity_kinematics(x)  # (nq, nv)
J_ours = robot.kinematics_jacobian(x)[:, : robot.nq] @ E
pin.computeJointJacobians(model, data, q_pin)
J_pin = np.vstack([pin.getFrameJacobian(model, data, model.getFrameId(f), pin.LOCAL_WORLD_ALIGNED)[:3] for f in FEET])
errors["foot Jacobians (tangent)"] = relative_error(J_ours, J_pin)

# %%
# Derivatives of the forward dynamics
# -----------------------------------
#
# ``forward_dynamics_deriv`` returns ``d vdot / dx`` (raw in the quaternion,
# ``nv x nx``) and ``d vdot / dtau = M^-1``. pinocchio's
# ``computeABADerivatives`` gives the tangent derivatives: compare
# ``dvdot_dx[:, :nq] @ E(q)`` with ``ddq_dq`` and the velocity block with
# ``ddq_dv``.

dvdot_dx, dvdot_dtau = robot.forward_dynamics_deriv(x, tau)
ddq_dq, ddq_dv, Minv = pin.computeABADerivatives(model, data, q_pin, v, tau)
errors["d vdot / dq (tangent)"] = relative_error(dvdot_dx[:, : robot.nq] @ E, ddq_dq)
errors["d vdot / dv"] = relative_error(dvdot_dx[:, robot.nq :], ddq_dv)
errors["d vdot / dtau = M^-1"] = relative_error(dvdot_dtau, np.triu(Minv) + np.triu(Minv, 1).T)

for name, error in errors.items():
    print(f"{name:28s} {error:.1e}")
assert max(errors.values()) < 1e-9

# %%
# The same functions, symbolic
# ----------------------------
#
# Every one of these methods accepts CasADi symbols as well and returns an
# expression; this is how an optimal-control problem uses them. With MX
# symbols the call stays one node of the graph (cheap to build), with SX it is
# inlined.

import casadi as ca

xs = ca.MX.sym("x", robot.nx)
taus = ca.MX.sym("tau", robot.nv)
accel = robot.forward_dynamics(xs, taus)
print(type(accel).__name__, accel.shape)

# %%
# The comparison at a glance
# --------------------------

import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(7, 3.6), layout="constrained")
ax.barh(list(errors), [max(e, 1e-17) for e in errors.values()], color="tab:blue")
ax.set_xscale("log")
ax.set_xlim(1e-17, 1e-10)
ax.invert_yaxis()
ax.set_xlabel("largest difference to pinocchio, relative")
ax.set_title(f"Go1 from its URDF, one random state (nq = {robot.nq}, nv = {robot.nv})")
fig.savefig("go1_against_pinocchio.png")
