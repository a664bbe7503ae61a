"""Contact-plan checks shared by the legged tests (full dynamics and kinodynamic)."""
import numpy as np
import pinocchio as pin

from trajopt.legged import swing_apex_knots

TOL = 1e-6  # acceptance tolerance of the gait issues (IPOPT converges to 1e-8)


def check_contact_plan(problem, feet: np.ndarray, forces: np.ndarray) -> None:
    """At every knot: stance feet on their footholds, swing feet above the ground and
    at the apex mid-swing, zero force in swing, unilateral force and friction pyramid
    in stance. ``feet`` (N, nc, 3) world foot positions, ``forces`` (N, nc, 3)."""
    robot, sched, st = problem.robot, problem.schedule, problem.schedule.stance
    assert np.abs(feet[st] - problem.footholds[st]).max() < TOL
    assert feet[~st][:, 2].min(initial=0.0) >= -TOL
    for i in range(robot.nc):
        for k in swing_apex_knots(sched, i):
            assert feet[k, i, 2] >= problem.footholds[k, i, 2] + problem.swing_apex - TOL
    assert np.abs(forces[~st]).max(initial=0.0) < TOL
    fx, fy, fz = forces[st].T
    assert fz.min() >= -TOL
    assert (robot.mu * fz - np.abs(fx)).min() >= -TOL and (robot.mu * fz - np.abs(fy)).min() >= -TOL


def pinocchio_contact_check(problem, solution) -> dict:
    """A legged solution measured with pinocchio's own frame kinematics and RNEA (not the model's CasADi functions).

    Per knot, the feet come from ``framesForwardKinematics`` and their
    velocities from ``getFrameVelocity`` (LOCAL_WORLD_ALIGNED). Returns

    - ``slip``: largest distance (m) a foot moves from where its stance phase began;
    - ``stance_height``: largest ``|z|`` (m) of a stance foot (the ground is ``z = 0``);
    - ``touchdown_speed``: largest foot speed (m/s) at a touchdown knot, ``stance_speed`` at any stance knot
      (the problem imposes rest only at touchdown: see :mod:`trajopt.legged.ocp`);
    - ``swing_floor``: lowest ``z`` (m) of a swing foot;
    - ``lift``: smallest peak height (m) of a swing phase (compare with ``problem.swing_apex``);
    - ``swing_force``: largest contact force (N) in swing;
    - ``friction_margin``: smallest ``mu fz - max(|fx|, |fy|)`` (N) in stance, ``min_fz`` the smallest ``fz``;
    - ``torque_ratio``: largest ``|u| / effortLimit`` (the URDF's, as pinocchio read it);
    - ``dynamics``: largest ``|rnea(q, v, a) - sum J^T f - B u|`` relative to ``max(1, |rnea|)`` (inverse
      formulation); with the contact formulation, the largest difference of the problem's contact forces
      from pinocchio's ``constraintDynamics`` under the knot's stance, relative to ``max(1, |f|)``, whose
      forces are then the ones checked (knots 0..N-2: the last knot has no control of its own).
    """
    robot, schedule = problem.robot, problem.schedule
    model = robot.pin_model
    data = model.createData()
    ids = [model.getFrameId(name) for name in schedule.foot_names]
    cm = problem.contact_model
    X, W = solution.states, solution.controls
    feet, speeds, dynamics = [], [], 0.0
    for x, w in zip(X, W):
        q, v = robot.change_order(x[: robot.nq], "nominal", "pinocchio"), x[robot.nq :]
        pin.forwardKinematics(model, data, q, v)
        pin.updateFramePlacements(model, data)
        feet.append([data.oMf[i].translation.copy() for i in ids])
        speeds.append([np.linalg.norm(pin.getFrameVelocity(model, data, i, pin.LOCAL_WORLD_ALIGNED).linear) for i in ids])
        if cm.formulation == "inverse":
            u, f, a = cm.split_control(w)
            J_T_f = sum(pin.computeFrameJacobian(model, data, q, i, pin.LOCAL_WORLD_ALIGNED)[:3].T @ f[3 * k : 3 * k + 3] for k, i in enumerate(ids))
            tau = pin.rnea(model, data, q, v, a)
            dynamics = max(dynamics, np.abs(tau - J_T_f - robot.B_func() @ u).max() / max(1.0, np.abs(tau).max()))
    feet, speeds = np.array(feet), np.array(speeds)
    stance = schedule.stance
    if cm.formulation == "contact":
        forces = pinocchio_contact_forces(problem, X[:-1], W[:-1])
        ours = problem.contact_forces(X[:-1], W[:-1], knots=np.arange(len(X) - 1))
        dynamics = np.abs(ours - forces).max() / max(1.0, np.abs(forces).max())
        X, W, stance = X[:-1], W[:-1], stance[:-1]
    else:
        forces = W[:, cm.f_slice].reshape(len(X), robot.nc, 3)
    slip, touchdown, lifts = 0.0, 0.0, []
    for i in range(robot.nc):
        k = 0
        while k < schedule.N:
            if schedule.stance[k, i]:
                start = k
                while k < schedule.N and schedule.stance[k, i]:
                    slip = max(slip, np.linalg.norm(feet[k, i] - feet[start, i]))
                    k += 1
                if start > 0:
                    touchdown = max(touchdown, speeds[start, i])
            else:
                k += 1
        lifts += [feet[a : b + 1, i, 2].max() for a, b in schedule.swings(i)]
    fx, fy, fz = np.abs(forces[stance]).T[0], np.abs(forces[stance]).T[1], forces[stance][:, 2]
    effort = model.effortLimit[6:]
    return {
        "slip": slip,
        "stance_height": np.abs(feet[schedule.stance][:, 2]).max(),
        "touchdown_speed": touchdown,
        "stance_speed": speeds[schedule.stance].max(),
        "swing_floor": feet[~schedule.stance][:, 2].min(initial=np.inf),
        "lift": min(lifts, default=np.inf),
        "swing_force": np.abs(forces[~stance]).max(initial=0.0),
        "friction_margin": (robot.mu * fz - np.maximum(fx, fy)).min(),
        "min_fz": fz.min(),
        "torque_ratio": (np.abs(W[:, cm.u_slice]) / effort).max(),
        "dynamics": dynamics,
    }


def pinocchio_contact_forces(problem, states: np.ndarray, controls: np.ndarray) -> np.ndarray:
    """WORLD-frame contact forces (K, nc, 3) of knots ``0..K-1`` by pinocchio's ``constraintDynamics``
    (3D contacts, LOCAL_WORLD_ALIGNED) under each knot's stance, torques from the controls."""
    robot, cm = problem.robot, problem.contact_model
    model = robot.pin_model
    data = model.createData()
    frames = [model.frames[model.getFrameId(name)] for name in problem.schedule.foot_names]
    out = np.zeros((len(states), robot.nc, 3))
    for k, (x, w) in enumerate(zip(states, controls)):
        q, v = robot.change_order(x[: robot.nq], "nominal", "pinocchio"), x[robot.nq :]
        tau = robot.B_func() @ w[cm.u_slice]
        active = np.flatnonzero(problem.schedule.stance[k])
        if active.size == 0:
            continue
        contacts = pin.StdVec_RigidConstraintModel(
            [pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, model, frames[i].parentJoint, frames[i].placement, pin.LOCAL_WORLD_ALIGNED) for i in active]
        )
        datas = pin.StdVec_RigidConstraintData([c.createData() for c in contacts])
        pin.initConstraintDynamics(model, data, contacts, datas)
        pin.constraintDynamics(model, data, q, v, tau, contacts, datas)
        out[k, active] = np.asarray(data.lambda_c).reshape(-1, 3)
    return out
