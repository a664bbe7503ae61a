"""RigidBodyTree (our CasADi spatial algebra) against pinocchio, the numeric oracle.

Every comparison is element-wise with a relative-with-floor tolerance,
``|ours - pin| <= TOL * max(1, |pin|)``, TOL = 1e-9, at N_STATES random states
(random unit quaternions, joint positions, velocities, accelerations, torques,
external forces). Each model's casadi.Functions are built once (module-scoped
fixture) and evaluated on all states at once through ``Function.map``.
Our quaternion order is ``[qw, qx, qy, qz]``, pinocchio's ``[qx, qy, qz, qw]``.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Callable, Iterator

import casadi as ca
import numpy as np
import pinocchio as pin
import pytest

from models.multibody import RigidBodyTree
from models.robot_data import load_pinocchio_model, urdf_path

TOL = 1e-9
N_STATES = 50
REFERENCES = ("LOCAL_WORLD_ALIGNED", "LOCAL", "WORLD")


# -- models -------------------------------------------------------------------


def _random_placement(rng: np.random.Generator) -> pin.SE3:
    quat = rng.normal(size=4)
    quat /= np.linalg.norm(quat)
    return pin.SE3(pin.Quaternion(*quat).toRotationMatrix(), rng.uniform(-0.5, 0.5, 3))


def _random_inertia(rng: np.random.Generator) -> pin.Inertia:
    A = rng.normal(size=(3, 3))
    return pin.Inertia(rng.uniform(0.5, 2.0), rng.uniform(-0.3, 0.3, 3), 0.1 * A @ A.T + 0.05 * np.eye(3))


def _add_body(model: pin.Model, parent: int, joint: pin.JointModel, name: str, rng: np.random.Generator) -> int:
    jid = model.addJoint(parent, joint, _random_placement(rng), name)
    model.appendBodyToJoint(jid, _random_inertia(rng), pin.SE3.Identity())
    model.addFrame(pin.Frame(f"{name}_point", jid, 0, _random_placement(rng), pin.FrameType.OP_FRAME))
    return jid


def _unit(v: list[float]) -> np.ndarray:
    return np.asarray(v, dtype=float) / np.linalg.norm(v)


def mixed_model() -> pin.Model:
    """Fixed-base branching tree with every supported joint type, incl. unaligned
    axes, a negative aligned axis and a free-flyer in the middle of a chain."""
    rng = np.random.default_rng(3)
    m = pin.Model()
    m.name = "mixed"
    # depth-first order: pinocchio's CRBA assumes each subtree's DoFs are contiguous
    j1 = _add_body(m, 0, pin.JointModelRevoluteUnaligned(_unit([0.3, -0.5, 0.8])), "rev_unaligned", rng)
    j2 = _add_body(m, j1, pin.JointModelPrismaticUnaligned(_unit([1.0, 2.0, -2.0])), "pri_unaligned", rng)
    j3 = _add_body(m, j2, pin.JointModelRX(), "rx", rng)
    j4 = _add_body(m, j3, pin.JointModelPY(), "py", rng)
    j5 = _add_body(m, j4, pin.JointModelFreeFlyer(), "free_mid", rng)
    j6 = _add_body(m, j5, pin.JointModelRY(), "ry", rng)
    _add_body(m, j6, pin.JointModelPX(), "px", rng)
    j8 = _add_body(m, j1, pin.JointModelRZ(), "rz", rng)
    _add_body(m, j8, pin.JointModelRevoluteUnaligned(np.array([0.0, -1.0, 0.0])), "rev_minus_y", rng)
    _add_body(m, j8, pin.JointModelPZ(), "pz", rng)
    return m


def floating_body() -> pin.Model:
    """One rigid body on a free-flyer: off-centre mass, full inertia tensor."""
    m = pin.Model()
    m.name = "floating_body"
    _add_body(m, 0, pin.JointModelFreeFlyer(), "root", np.random.default_rng(5))
    return m


def with_armature(model: pin.Model, seed: int) -> pin.Model:
    """``model`` with rotor inertias (0.005 .. 0.02 kg m^2, random) on every joint but a free flyer's, which pinocchio's
    RNEA, CRBA and ABA include (``model.armature``)."""
    rng = np.random.default_rng(seed)
    for joint in model.joints[1:]:
        if joint.shortname() != "JointModelFreeFlyer":
            model.armature[joint.idx_v : joint.idx_v + joint.nv] = rng.uniform(0.005, 0.02, joint.nv)
    return model


MODELS: dict[str, Callable[[], pin.Model]] = {
    "go1": lambda: load_pinocchio_model(urdf_path("go1")),
    "go2": lambda: load_pinocchio_model(urdf_path("go2")),
    "g1": lambda: load_pinocchio_model(urdf_path("g1")),
    "manipulator": pin.buildSampleModelManipulator,
    "floating_body": floating_body,
    "mixed": mixed_model,
    "go1_armature": lambda: with_armature(load_pinocchio_model(urdf_path("go1")), 11),
    "manipulator_armature": lambda: with_armature(pin.buildSampleModelManipulator(), 12),
}


# -- helpers --------------------------------------------------------------------


def free_flyer_quat_starts(model: pin.Model) -> list[int]:
    """First configuration index of each free-flyer's quaternion."""
    return [j.idx_q + 3 for j in model.joints[1:] if j.shortname() == "JointModelFreeFlyer"]


def to_pin_q(model: pin.Model, q: np.ndarray) -> np.ndarray:
    """Our ``[.., qw, qx, qy, qz, ..]`` -> pinocchio's ``[.., qx, qy, qz, qw, ..]``."""
    q = np.array(q, dtype=float)
    for i in free_flyer_quat_starts(model):
        q[i : i + 4] = np.r_[q[i + 1 : i + 4], q[i]]
    return q


def to_our_q(model: pin.Model, q: np.ndarray) -> np.ndarray:
    """Pinocchio's quaternion order -> ours."""
    q = np.array(q, dtype=float)
    for i in free_flyer_quat_starts(model):
        q[i : i + 4] = np.r_[q[i + 3], q[i : i + 3]]
    return q


def assert_close(ours: np.ndarray, ref: np.ndarray, what: str) -> None:
    """Element-wise ``|ours - ref| <= TOL * max(1, |ref|)``."""
    ours, ref = np.asarray(ours), np.asarray(ref)
    assert ours.shape == ref.shape, f"{what}: shape {ours.shape} != {ref.shape}"
    err = np.abs(ours - ref) / np.maximum(1.0, np.abs(ref))
    assert err.max() <= TOL, f"{what}: max relative error {err.max():.3e} at {np.unravel_index(err.argmax(), err.shape)}"


@dataclass
class States:
    """N_STATES random samples, one per row; ``q`` in OUR quaternion order."""

    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    tau: np.ndarray
    fext: np.ndarray  # N x njoints x 6 (joint-local wrenches; entry 0 ignored)
    forces: np.ndarray  # N x 2 x 3 (world-frame point forces)

    @staticmethod
    def sample(model: pin.Model, rng: np.random.Generator) -> "States":
        n = N_STATES
        q = rng.uniform(-np.pi, np.pi, (n, model.nq))
        for i in free_flyer_quat_starts(model):
            quat = rng.normal(size=(n, 4))
            q[:, i : i + 4] = quat / np.linalg.norm(quat, axis=1, keepdims=True)
        return States(
            q=q,
            v=rng.normal(0, 2, (n, model.nv)),
            a=rng.normal(0, 2, (n, model.nv)),
            tau=rng.normal(0, 10, (n, model.nv)),
            fext=rng.normal(0, 5, (n, model.njoints, 6)),
            forces=rng.normal(0, 20, (n, 2, 3)),
        )


@dataclass
class Case:
    name: str
    model: pin.Model
    tree: RigidBodyTree
    states: States
    jac_frames: list[int]
    force_frames: list[int]
    functions: dict[str, ca.Function] = field(default_factory=dict)

    def batch(self, name: str, *args: np.ndarray) -> np.ndarray:
        """Evaluate function ``name`` at all states; each arg has one row per state.

        Returns one output per state: ``N x rows`` for vector outputs, ``N x rows x cols`` else.
        """
        f = self.functions[name].map(N_STATES)
        out = f(*[np.reshape(x, (N_STATES, -1)).T for x in args]).full()
        per_state = out.reshape(out.shape[0], N_STATES, -1).transpose(1, 0, 2)
        return per_state[..., 0] if per_state.shape[2] == 1 else per_state

    def pin_states(self) -> Iterator[tuple[pin.Data, np.ndarray, int]]:
        """Yield ``(data, q_pin, k)`` per state."""
        data = self.model.createData()
        for k in range(N_STATES):
            yield data, to_pin_q(self.model, self.states.q[k]), k


def _test_frames(model: pin.Model) -> list[int]:
    """Up to ~8 frames spread over the tree, including the last (deepest) one."""
    ids = list(range(model.nframes))
    return sorted(set(ids[:: max(1, len(ids) // 7)] + [ids[-1]]))


def _force_frames(model: pin.Model) -> list[int]:
    """Two frames carrying point forces: feet when the robot has them."""
    feet = [model.getFrameId(f) for f in ("FL_foot", "RR_foot") if model.existFrame(f)]
    if len(feet) == 2:
        return feet
    moving = [f for f in range(model.nframes) if model.frames[f].parentJoint > 0]
    return [moving[len(moving) // 2], moving[-1]]


def _build_functions(case: Case) -> None:
    tree, model = case.tree, case.model
    nq, nv, nj = model.nq, model.nv, model.njoints
    q, v, a = ca.SX.sym("q", nq), ca.SX.sym("v", nv), ca.SX.sym("a", nv)
    F, P = ca.SX.sym("F", 6 * nj), ca.SX.sym("P", 3 * 2)  # stacked wrenches / forces
    fext = [F[6 * i : 6 * i + 6] for i in range(nj)]
    pforces = [(case.force_frames[k], P[3 * k : 3 * k + 3]) for k in range(2)]
    placements = [tree.frame_placement(q, f) for f in range(model.nframes)]
    fns = {
        "crba": ([q], tree.crba(q)),
        "nle": ([q, v], tree.nle(q, v)),
        "rnea": ([q, v, a], tree.rnea(q, v, a)),
        "rnea_fext": ([q, v, a, F], tree.rnea(q, v, a, fext=fext)),
        "rnea_pf": ([q, v, a, P], tree.rnea(q, v, a, point_forces=pforces)),
        "aba": ([q, v, a], tree.aba(q, v, a)),
        "aba_fext": ([q, v, a, F], tree.aba(q, v, a, fext=fext)),
        "aba_pf": ([q, v, a, P], tree.aba(q, v, a, point_forces=pforces)),
        "placements": ([q], ca.vertcat(*[ca.vertcat(ca.vec(R), p) for R, p in placements])),
        "joints": ([q], ca.vertcat(*[ca.vertcat(ca.vec(R), p) for R, p in tree.joint_placements(q)])),
    }
    for ref in REFERENCES:
        fns[f"jac_{ref}"] = ([q], ca.vertcat(*[tree.frame_jacobian(q, f, ref) for f in case.jac_frames]))
        fns[f"vel_{ref}"] = ([q, v], ca.vertcat(*[tree.frame_velocity(q, v, f, ref) for f in case.jac_frames]))
        for classical in (False, True):
            fns[f"acc_{ref}_{classical}"] = (
                [q, v, a],
                ca.vertcat(*[tree.frame_acceleration(q, v, a, f, ref, classical) for f in case.jac_frames]),
            )
    case.functions = {name: ca.Function(name, ins, [out]) for name, (ins, out) in fns.items()}


@pytest.fixture(scope="module", params=list(MODELS))
def case(request) -> Case:
    model = MODELS[request.param]()
    c = Case(
        name=request.param,
        model=model,
        tree=RigidBodyTree(model),
        states=States.sample(model, np.random.default_rng(zlib.crc32(request.param.encode()))),
        jac_frames=_test_frames(model),
        force_frames=_force_frames(model),
    )
    _build_functions(c)
    return c


# -- comparisons with pinocchio -----------------------------------------------------


def test_crba(case: Case) -> None:
    ours = case.batch("crba", case.states.q)
    for data, qp, k in case.pin_states():
        M = pin.crba(case.model, data, qp)
        M = np.triu(M) + np.triu(M, 1).T
        assert_close(ours[k], M, f"{case.name} crba, state {k}")
        assert np.array_equal(ours[k], ours[k].T)


def test_nle_and_rnea(case: Case) -> None:
    s = case.states
    nle = case.batch("nle", s.q, s.v)
    tau = case.batch("rnea", s.q, s.v, s.a)
    tau_fext = case.batch("rnea_fext", s.q, s.v, s.a, s.fext)
    for data, qp, k in case.pin_states():
        assert_close(nle[k], pin.nle(case.model, data, qp, s.v[k]), f"{case.name} nle, state {k}")
        assert_close(tau[k], pin.rnea(case.model, data, qp, s.v[k], s.a[k]), f"{case.name} rnea, state {k}")
        fext = [pin.Force(f) for f in s.fext[k]]
        ref = pin.rnea(case.model, data, qp, s.v[k], s.a[k], fext)
        assert_close(tau_fext[k], ref, f"{case.name} rnea with fext, state {k}")


def _point_force_torque(case: Case, data: pin.Data, qp: np.ndarray, k: int) -> np.ndarray:
    """``sum_i J_i^T f_i`` with pinocchio's LOCAL_WORLD_ALIGNED linear frame Jacobians."""
    pin.computeJointJacobians(case.model, data, qp)
    pin.updateFramePlacements(case.model, data)
    total = np.zeros(case.model.nv)
    for i, frame in enumerate(case.force_frames):
        J = pin.getFrameJacobian(case.model, data, frame, pin.LOCAL_WORLD_ALIGNED)
        total += J[:3].T @ case.states.forces[k, i]
    return total


def test_rnea_point_forces(case: Case) -> None:
    s = case.states
    ours = case.batch("rnea_pf", s.q, s.v, s.a, s.forces)
    for data, qp, k in case.pin_states():
        ref = pin.rnea(case.model, data, qp, s.v[k], s.a[k]) - _point_force_torque(case, data, qp, k)
        assert_close(ours[k], ref, f"{case.name} rnea with point forces, state {k}")


def test_aba(case: Case) -> None:
    s = case.states
    vdot = case.batch("aba", s.q, s.v, s.tau)
    vdot_fext = case.batch("aba_fext", s.q, s.v, s.tau, s.fext)
    vdot_pf = case.batch("aba_pf", s.q, s.v, s.tau, s.forces)
    for data, qp, k in case.pin_states():
        assert_close(vdot[k], pin.aba(case.model, data, qp, s.v[k], s.tau[k]), f"{case.name} aba, state {k}")
        fext = [pin.Force(f) for f in s.fext[k]]
        ref = pin.aba(case.model, data, qp, s.v[k], s.tau[k], fext)
        assert_close(vdot_fext[k], ref, f"{case.name} aba with fext, state {k}")
        ref = pin.aba(case.model, data, qp, s.v[k], s.tau[k] + _point_force_torque(case, data, qp, k))
        assert_close(vdot_pf[k], ref, f"{case.name} aba with point forces, state {k}")


def test_placements(case: Case) -> None:
    frames = case.batch("placements", case.states.q).reshape(N_STATES, case.model.nframes, 12)
    joints = case.batch("joints", case.states.q).reshape(N_STATES, case.model.njoints, 12)
    for data, qp, k in case.pin_states():
        pin.framesForwardKinematics(case.model, data, qp)
        ref = [np.r_[M.rotation.flatten(order="F"), M.translation] for M in data.oMf]
        assert_close(frames[k], np.array(ref), f"{case.name} frame placements, state {k}")
        ref = [np.r_[M.rotation.flatten(order="F"), M.translation] for M in data.oMi]
        assert_close(joints[k], np.array(ref), f"{case.name} joint placements, state {k}")


@pytest.mark.parametrize("reference", REFERENCES)
def test_frame_jacobians(case: Case, reference: str) -> None:
    ours = case.batch(f"jac_{reference}", case.states.q)
    for data, qp, k in case.pin_states():
        pin.computeJointJacobians(case.model, data, qp)
        pin.updateFramePlacements(case.model, data)
        ref = [pin.getFrameJacobian(case.model, data, f, getattr(pin, reference)) for f in case.jac_frames]
        assert_close(ours[k], np.vstack(ref), f"{case.name} {reference} Jacobians, state {k}")


@pytest.mark.parametrize("reference", REFERENCES)
def test_frame_velocity_and_acceleration(case: Case, reference: str) -> None:
    s, model, ref_frame = case.states, case.model, getattr(pin, reference)
    ours = {
        pin.getFrameVelocity: case.batch(f"vel_{reference}", s.q, s.v),
        pin.getFrameAcceleration: case.batch(f"acc_{reference}_False", s.q, s.v, s.a),
        pin.getFrameClassicalAcceleration: case.batch(f"acc_{reference}_True", s.q, s.v, s.a),
    }
    for data, qp, k in case.pin_states():
        pin.forwardKinematics(model, data, qp, s.v[k], s.a[k])
        pin.updateFramePlacements(model, data)
        for getter, values in ours.items():
            ref = np.concatenate([getter(model, data, f, ref_frame).vector for f in case.jac_frames])
            assert_close(values[k], ref, f"{case.name} {getter.__name__} {reference}, state {k}")


# -- API behaviour ------------------------------------------------------------------


def test_attributes(case: Case) -> None:
    tree, model = case.tree, case.model
    assert (tree.nq, tree.nv, tree.model) == (model.nq, model.nv, model)
    assert tree.is_floating == (case.name in ("go1", "go2", "g1", "floating_body", "go1_armature"))
    assert tree.joint_names == list(model.names)
    assert tree.frame_names == [f.name for f in model.frames]


def test_numeric_and_mx_calls_match_sx(case: Case) -> None:
    """numpy arguments give numpy results; MX arguments give one MX graph; same values."""
    s, tree = case.states, case.tree
    q, v, tau = s.q[0], s.v[0], s.tau[0]
    ref = np.asarray(case.functions["aba"](q, v, tau)).ravel()
    out = tree.aba(q, v, tau)
    assert isinstance(out, np.ndarray) and out.shape == (case.model.nv,)
    np.testing.assert_array_equal(out, ref)
    qm, vm = ca.MX.sym("q", case.model.nq), ca.MX.sym("v", case.model.nv)
    expr = tree.aba(qm, vm, tau)
    assert isinstance(expr, ca.MX)
    np.testing.assert_array_equal(np.asarray(ca.Function("f", [qm, vm], [expr])(q, v)).ravel(), ref)
    R, p = tree.frame_placement(q, case.jac_frames[-1])
    assert R.shape == (3, 3) and p.shape == (3,)
    assert tree.crba(q).shape == (case.model.nv, case.model.nv)


def test_numeric_shapes_single_dof() -> None:
    """With nv = 1, matrices stay 2-D and vectors 1-D; ``None`` fext entries are zero."""
    model = pin.Model()
    _add_body(model, 0, pin.JointModelRY(), "hinge", np.random.default_rng(1))
    tree = RigidBodyTree(model)
    q, v = np.array([0.3]), np.array([-1.0])
    assert tree.crba(q).shape == (1, 1)
    assert tree.frame_jacobian(q, "hinge_point").shape == (6, 1)
    assert tree.nle(q, v).shape == (1,)
    np.testing.assert_array_equal(tree.rnea(q, v, v, fext=[None, None]), tree.rnea(q, v, v))


def test_zero_velocity_rnea_is_gravity_only(case: Case) -> None:
    """``nle(q, 0)`` is the generalized gravity, i.e. ``-J_com^T m g`` summed over bodies."""
    q = to_pin_q(case.model, case.states.q[0])
    data = case.model.createData()
    ref = pin.computeGeneralizedGravity(case.model, data, q)
    assert_close(case.tree.nle(case.states.q[0], np.zeros(case.model.nv)), ref, f"{case.name} gravity")


def test_bad_arguments_raise() -> None:
    model = floating_body()
    tree = RigidBodyTree(model)
    q = to_our_q(model, pin.neutral(model))
    with pytest.raises(ValueError, match="v: expected shape"):
        tree.rnea(q, np.zeros(5), np.zeros(6))
    with pytest.raises(ValueError, match="quaternion"):
        tree.crba(np.r_[q[:3], 2.0, 0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="fext"):
        tree.rnea(q, np.zeros(6), np.zeros(6), fext=[np.zeros(6)])
    with pytest.raises(ValueError, match="no frame named 'nope'"):
        tree.frame_placement(q, "nope")
    with pytest.raises(ValueError, match="reference"):
        tree.frame_jacobian(q, 0, "BODY")
    with pytest.raises(TypeError, match="mix"):
        tree.nle(ca.SX.sym("q", 7), ca.MX.sym("v", 6))


@pytest.mark.parametrize(
    "joint, type_name",
    [
        (pin.JointModelSpherical(), "JointModelSpherical"),
        (pin.JointModelPlanar(), "JointModelPlanar"),
        (pin.JointModelRUBZ(), "JointModelRUBZ"),
    ],
)
def test_unsupported_joint_raises(joint: pin.JointModel, type_name: str) -> None:
    model = pin.buildSampleModelManipulator()
    jid = model.addJoint(model.njoints - 1, joint, pin.SE3.Identity(), "odd_joint")
    model.appendBodyToJoint(jid, pin.Inertia.FromSphere(1.0, 0.1), pin.SE3.Identity())
    with pytest.raises(ValueError, match=f"'odd_joint'.*{type_name}"):
        RigidBodyTree(model)


def test_go1_graph_stays_small() -> None:
    """Regression guard on SX size (CasADi's VM costs ~4-5 ns per instruction)."""
    tree = RigidBodyTree(MODELS["go1"]())
    q, v, a = ca.SX.sym("q", tree.nq), ca.SX.sym("v", tree.nv), ca.SX.sym("a", tree.nv)
    sizes = {
        "aba": ca.Function("f", [q, v, a], [tree.aba(q, v, a)]).n_instructions(),
        "rnea": ca.Function("f", [q, v, a], [tree.rnea(q, v, a)]).n_instructions(),
        "crba": ca.Function("f", [q], [tree.crba(q)]).n_instructions(),
    }
    assert sizes["aba"] < 5000 and sizes["rnea"] < 3000 and sizes["crba"] < 1600, sizes


def test_armature_on_a_free_flyer_is_refused() -> None:
    """A free flyer has no rotor: pinocchio would add its armature to the base's inertia, which no body has."""
    model = load_pinocchio_model(urdf_path("go1"))
    model.armature[2] = 0.1
    with pytest.raises(ValueError, match="'root_joint': a free flyer has no rotor"):
        RigidBodyTree(model)
