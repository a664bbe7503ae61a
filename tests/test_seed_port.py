"""Port test (issue 27): the RobotDynamics.jl and PinnZoo.jl calls their documentation names, written
in their order of arguments, run here apart from Python syntax.

Python syntax: ``f(model, args...)`` is ``model.f(args...)``; Julia's 1-based indices are 0-based;
``f!`` (in place) is ``f(..., out=...)``; ``:symbol`` is ``"symbol"``; a property read (``state_dim``,
``is_floating``, ``RBState``'s parts) has no parentheses. Each row gives the seed's call and ours; the
values are checked where a one-line check says something (the oracles of each function are in the
tests of its module).
"""
from __future__ import annotations

import numpy as np
import pytest

import lie
from lie import (
    MRP,
    L_mult,
    LieState,
    QuatState,
    R_mult,
    RBState,
    RodriguesParam,
    UnitQuaternion,
    attitude_jacobian,
    quat_to_axis_angle,
    quat_to_rot,
    rot_to_quat,
    skew,
)
from models import Cartpole, DoubleCartpole, DoublePendulum, FloatingBody, Go1, Go2, Humanoid, MultibodyQuadrotor, Pendulum, Quadrotor, RigidBody, WheeledBiped
from models.orders import ConversionIndices, StateOrder, generate_conversions


class Satellite(RigidBody):
    """A RobotDynamics-style rigid body: forces (world) and moments (body) from ``u``; ``forces`` without ``t``."""

    name = "satellite"
    control_dim = 6

    def forces(self, x, u):
        return u[:3]

    def moments(self, x, u, t):
        return u[3:]


RNG = np.random.default_rng(2027)
Q = lie.axis_angle_to_quat(np.array([0.2, -0.4, 0.3]))
R3, V3, W3 = np.array([1.0, 2.0, 3.0]), np.array([0.1, 0.2, 0.3]), np.array([-0.3, 0.1, 0.2])
SAT = {R: Satellite(R, mass=2.0, inertia=[1.0, 2.0, 3.0]) for R in (UnitQuaternion, MRP, RodriguesParam)}
X = {R: m.build_state(R3, Q, V3, W3) for R, m in SAT.items()}
U6 = RNG.normal(size=6)
RB = RBState(R3, Q, V3, W3)

#: (seed call, our call) -- RobotDynamics.jl (seed 004)
ROBOTDYNAMICS = [
    ("LieState(UnitQuaternion, (3, 2, 3))", lambda: len(LieState(UnitQuaternion, (3, 2, 3))) == 16),
    ("LieState(UnitQuaternion, 3, 2, 3)", lambda: LieState(UnitQuaternion, 3, 2, 3) == LieState(UnitQuaternion, (3, 2, 3))),
    ("length(s::LieState)", lambda: len(LieState(MRP, 3, 6)) == 12),
    ("QuatState(16, SA[4, 10])", lambda: QuatState(16, (3, 9)) == LieState(UnitQuaternion, 3, 2, 3)),  # 0-based starts
    ("control_dim(model)", lambda: SAT[MRP].control_dim == 6),
    ("LieState(model)", lambda: SAT[MRP].lie_state() == LieState(MRP, 3, 6)),
    ("dynamics(model, x, u, t)", lambda: SAT[MRP].dynamics(X[MRP], U6, 0.0).shape == (12,)),
    ("forces(model, x, u, [t])", lambda: np.allclose(SAT[MRP].forces(X[MRP], U6), U6[:3])),
    ("moments(model, x, u, [t])", lambda: np.allclose(SAT[MRP].moments(X[MRP], U6, 0.0), U6[3:])),
    ("wrenches(model, x, u, t)", lambda: np.allclose(SAT[MRP].wrenches(X[MRP], U6, 0.0)[1], U6[3:])),
    ("inertia(model, x, u)", lambda: np.allclose(SAT[MRP].inertia(X[MRP], U6), np.diag([1.0, 2.0, 3.0]))),
    ("mass(model, x, u)", lambda: SAT[MRP].mass(X[MRP], U6) == 2.0),
    ("RigidBody{UnitQuaternion/MRP/RodriguesParam}", lambda: [m.rotation for m in SAT.values()] == [UnitQuaternion, MRP, RodriguesParam]),
    ("position(model, x)", lambda: np.allclose(SAT[MRP].position(X[MRP]), R3)),
    ("orientation(model, x)", lambda: isinstance(SAT[MRP].orientation(X[MRP]), MRP)),
    ("linear_velocity(model, x)", lambda: np.allclose(SAT[MRP].linear_velocity(X[MRP]), V3)),
    ("angular_velocity(model, x)", lambda: np.allclose(SAT[MRP].angular_velocity(X[MRP]), W3)),
    ("position(x::RBState)", lambda: np.allclose(RB.position, R3)),
    ("orientation(x::RBState)", lambda: np.allclose(RB.orientation, Q)),
    ("linear_velocity(x::RBState)", lambda: np.allclose(RB.linear_velocity, V3)),
    ("angular_velocity(x::RBState)", lambda: np.allclose(RB.angular_velocity, W3)),
    ("build_state(model, x::RBState)", lambda: np.allclose(SAT[MRP].build_state(RB), X[MRP])),
    ("build_state(model, x::AbstractVector)", lambda: np.allclose(SAT[MRP].build_state(RB.vector()), X[MRP])),
    ("build_state(model, r, q, v, ω)", lambda: np.allclose(SAT[MRP].build_state(R3, Q, V3, W3), X[MRP])),
    ("parse_state(model, x, renorm=false)", lambda: isinstance(SAT[MRP].parse_state(X[MRP], False)[1], MRP)),
    ("parse_state(model, x, renorm=true)", lambda: np.isclose(np.linalg.norm(SAT[UnitQuaternion].parse_state(1.1 * X[UnitQuaternion], renorm=True)[1]), 1.0)),
    ("gen_inds(model)", lambda: SAT[MRP].gen_inds()["ω"] == slice(9, 12)),
    ("flipquat(model, x)", lambda: np.allclose(SAT[UnitQuaternion].flipquat(X[UnitQuaternion])[3:7], -Q)),
    ("RBState(r, q, v, ω)", lambda: RBState(R3, Q, V3, W3).isapprox(RB)),
    ("RBState(x)", lambda: RBState(RB.vector()).isapprox(RB)),
    ("RBState(model, x, renorm)", lambda: RBState(SAT[MRP], X[MRP], False).isapprox(RB, 1e-14)),
]

GO1 = Go1()
XG = GO1.randn_state(RNG)
TAU, VDOT, F = RNG.normal(size=GO1.nv), RNG.normal(size=GO1.nv), RNG.normal(size=3 * GO1.nc)

#: (seed call, our call) -- PinnZoo.jl (seed 000)
PINNZOO = [
    ("StateOrder(config_names, vel_names, torque_names = vel_names)", lambda: StateOrder(("a", "b"), ("a", "b")).nu == 2),
    ("ConversionIndices", lambda: isinstance(GO1.conversions[("nominal", "mujoco")], ConversionIndices)),
    ("change_order!(model, input, from, to)", lambda: GO1.change_order(XG.copy(), "nominal", "pinocchio", out=np.empty(GO1.nx)).shape == (GO1.nx,)),
    ("change_order!(model, input::Matrix, from, to; dims = (1, 2))", lambda: GO1.change_order(np.eye(GO1.nv), "nominal", "mujoco", axis=None).shape == (GO1.nv, GO1.nv)),
    ("change_order(model, input, :nominal, :mujoco)", lambda: GO1.change_order(XG, "nominal", "mujoco").shape == (GO1.nx,)),
    ("change_orders(model, inputs, from, to; dims)", lambda: len(GO1.change_orders([XG, TAU], "nominal", "pinocchio")) == 2),
    ("generate_conversions(orders, conversions; from_scratch = false)", lambda: generate_conversions(GO1.orders, dict(GO1.conversions), from_scratch=False) is not None),
    ("M_func(model, x)", lambda: GO1.M_func(XG).shape == (GO1.nv, GO1.nv)),
    ("C_func(model, x)", lambda: GO1.C_func(XG).shape == (GO1.nv,)),
    ("dynamics(model, x, τ)", lambda: GO1.dynamics(XG, TAU, tangent=True).shape == (2 * GO1.nv,)),  # [v; v̇]
    ("dynamics_deriv(model, x, τ)", lambda: GO1.dynamics_deriv(XG, TAU, tangent=True)[0].shape == (2 * GO1.nv, GO1.nx)),
    ("forward_dynamics(model, x, τ)", lambda: GO1.forward_dynamics(XG, TAU).shape == (GO1.nv,)),
    ("forward_dynamics_deriv(model, x, τ)", lambda: GO1.forward_dynamics_deriv(XG, TAU)[0].shape == (GO1.nv, GO1.nx)),
    ("inverse_dynamics(model, x, v̇)", lambda: np.allclose(GO1.forward_dynamics(XG, GO1.inverse_dynamics(XG, VDOT)), VDOT)),
    ("inverse_dynamics_deriv(model, x, v̇)", lambda: GO1.inverse_dynamics_deriv(XG, VDOT)[1].shape == (GO1.nv, GO1.nv)),
    ("inverse_dynamics_hvp(model, x, v̇, lam)", lambda: GO1.inverse_dynamics_hvp(XG, VDOT, RNG.normal(size=GO1.nx))[0].shape == (GO1.nv, GO1.nx)),
    ("inverse_dynamics_hTvp(model, x, v̇, lam)", lambda: GO1.inverse_dynamics_hTvp(XG, VDOT, RNG.normal(size=GO1.nv))[0].shape == (GO1.nx, GO1.nx)),
    ("velocity_kinematics(model, x)", lambda: GO1.velocity_kinematics(XG).shape == (GO1.nq, GO1.nv)),
    ("velocity_kinematics_T(model, x)", lambda: np.allclose(GO1.velocity_kinematics_T(XG) @ GO1.velocity_kinematics(XG), np.eye(GO1.nv))),
    ("velocity_kinematics_jvp_deriv(model, x, v)", lambda: GO1.velocity_kinematics_jvp_deriv(XG, XG[GO1.nq :]).shape == (GO1.nq, GO1.nx)),
    ("velocity_kinematics_T_jvp_deriv(model, x, q)", lambda: GO1.velocity_kinematics_T_jvp_deriv(XG, XG[: GO1.nq]).shape == (GO1.nv, GO1.nx)),
    ("state_error(model, x, x0)", lambda: GO1.state_error(XG, GO1.init_state()).shape == (2 * GO1.nv,)),
    ("apply_Δx(model, x_k, Δx)", lambda: np.allclose(GO1.apply_Δx(GO1.init_state(), GO1.state_error(XG, GO1.init_state()))[7:], XG[7:])),
    ("error_jacobian(model, x)", lambda: GO1.error_jacobian(XG).shape == (GO1.nx, 2 * GO1.nv)),
    ("error_jacobian_T(model, x)", lambda: GO1.error_jacobian_T(XG).shape == (2 * GO1.nv, GO1.nx)),
    ("kinematics(model, x)", lambda: GO1.kinematics(XG).shape == (3 * GO1.nc,)),
    ("kinematics_rotation(model, x)", lambda: GO1.kinematics_rotation(XG).shape == (3 * GO1.nc, 3)),
    ("kinematics_jacobian(model, x)", lambda: GO1.kinematics_jacobian(XG).shape == (3 * GO1.nc, GO1.nx)),
    ("kinematics_hvp(model, x, dx)", lambda: GO1.kinematics_hvp(XG, RNG.normal(size=GO1.nx)).shape == (3 * GO1.nc, GO1.nx)),
    ("kinematics_velocity(model, x)", lambda: GO1.kinematics_velocity(XG).shape == (3 * GO1.nc,)),
    ("kinematics_velocity_jacobian(model, x)", lambda: GO1.kinematics_velocity_jacobian(XG).shape == (3 * GO1.nc, GO1.nx)),
    ("kinematics_force_jacobian(model, x, λ)", lambda: GO1.kinematics_force_jacobian(XG, F).shape == (GO1.nv, GO1.nx)),
    ("kinematics_jacobianTvp(model, x, λ)", lambda: GO1.kinematics_jacobianTvp(XG, F).shape == (GO1.nv,)),
    ("kinematics_force_hvp(model, x, λ)", lambda: GO1.kinematics_force_hvp(XG, F, RNG.normal(size=GO1.nx))[0].shape == (GO1.nv, GO1.nx)),
    ("kinematics_force_hTvp(model, x, λ)", lambda: GO1.kinematics_force_hTvp(XG, F, RNG.normal(size=GO1.nv))[0].shape == (GO1.nx, GO1.nx)),
    ("is_floating(model)", lambda: GO1.is_floating),
    ("randn_state(model)", lambda: GO1.randn_state().shape == (GO1.nx,)),
    ("init_state(model)", lambda: GO1.init_state().shape == (GO1.nx,)),
    ("quat_to_axis_angle(q; tol = 1e-12)", lambda: np.allclose(quat_to_axis_angle(Q, tol=1e-12), [0.2, -0.4, 0.3])),
    ("skew(v)", lambda: np.allclose(skew(V3) @ W3, np.cross(V3, W3))),
    ("L_mult(q)", lambda: np.allclose(L_mult(Q) @ Q, lie.quat_mult(Q, Q))),
    ("R_mult(q)", lambda: np.allclose(R_mult(Q) @ Q, lie.quat_mult(Q, Q))),
    ("attitude_jacobian(q)", lambda: attitude_jacobian(Q).shape == (4, 3)),
    ("quat_to_rot(q)", lambda: np.allclose(quat_to_rot(Q) @ quat_to_rot(Q).T, np.eye(3))),
    ("rot_to_quat(R)", lambda: np.allclose(rot_to_quat(quat_to_rot(Q)), Q)),
    ("B_func(quad)", lambda: GO1.B_func().shape == (GO1.nv, GO1.nu)),
    ("fix_joint_limits(model, x; supress_error = false)", lambda: GO1.fix_joint_limits(GO1.init_state(), suppress_error=False).shape == (GO1.nx,)),
    ("inverse_kinematics(model, x, foot_locs)", lambda: GO1.inverse_kinematics(GO1.init_state(), GO1.kinematics(GO1.init_state())).shape == (12, 2)),
    ("nearest_ik(model, q, foot_locs; obey_limits = true)", lambda: np.allclose(GO1.nearest_ik(GO1.init_state(), GO1.kinematics(GO1.init_state()), obey_limits=True), GO1.init_state()[7:19])),
    ("Pendulum(), DoublePendulum(), Cartpole(), DoubleCartpole()", lambda: all(m.state_dim > 0 for m in (Pendulum(), DoublePendulum(), Cartpole(), DoubleCartpole()))),
    ("RigidBody()", lambda: FloatingBody().nq == 7),
    ("Quadrotor()", lambda: MultibodyQuadrotor().nu == 4 and Quadrotor().control_dim == 4),
    ("Go1(; μ = 0.3), Go2(; μ = 0.3)", lambda: Go1(mu=0.3).mu == Go2(mu=0.3).mu == 0.3),
    ("Nadia(; nc_per_foot = 1, μ = 1.0, kinematics_ori = :Quaternion)", lambda: Humanoid(contacts_per_foot=1, mu=1.0, kinematics_ori="quaternion").nc == 2),
    ("Pineapple(; μ = 0.3)", lambda: WheeledBiped(mu=0.3).mu == 0.3),
]


@pytest.mark.parametrize("seed_call, ours", ROBOTDYNAMICS, ids=[c for c, _ in ROBOTDYNAMICS])
def test_robotdynamics_calls_run(seed_call, ours):
    assert ours(), seed_call


@pytest.mark.parametrize("seed_call, ours", PINNZOO, ids=[c for c, _ in PINNZOO])
def test_pinnzoo_calls_run(seed_call, ours):
    assert ours(), seed_call
