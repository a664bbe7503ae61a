"""PinnZoo-style multibody model: exact CasADi dynamics of a pinocchio model.

:class:`MultibodyModel` wraps a :class:`models.multibody.RigidBodyTree` (our
CasADi re-expression of a ``pinocchio.Model``) and exposes PinnZoo's API. Every
method takes numpy arrays (returns numpy) or CasADi SX/MX (returns the same
kind); each is one ``casadi.Function`` built on first use and cached on the
model (:meth:`casadi_function`). :meth:`MultibodyModel.compile` moves the
numeric calls of the hot functions to generated C (:mod:`models.compiled`).

Conventions (docs/conventions.md):

- ``x = [q; v]``, ``q = [x, y, z, qw, qx, qy, qz, joints]`` for a floating base
  (position in the world frame), ``v = [v_body, w_body, joint rates]``.
- ``M(q) vdot + C(q, v) = tau + sum_i J_i^T f_i`` with ``tau = B u``; ``f_i``
  are 3D forces at the kinematics bodies in the WORLD frame and ``J_i`` their
  world-aligned linear Jacobians (LOCAL_WORLD_ALIGNED).
- ``qdot = E(q) v`` with ``E = blkdiag(Rot(q), 0.5 G(q), I)`` and
  ``v = E_T(q) qdot`` with ``E_T = blkdiag(Rot(q)^T, 2 G(q)^T, I)``.
- Error state (size ``2 nv``): position error in the body frame of ``x0``,
  attitude error ``axis_angle(conj(q0) * q)``, other coordinates subtracted.

Derivatives with respect to ``x`` are "raw": one column per entry of ``x``,
four for the quaternion. They depend on how an expression extends off the unit
sphere, so only their tangent contraction ``J[:, :nq] @ E(q)`` is meaningful;
it equals pinocchio's derivative along its tangent (to first order pinocchio's
``integrate`` and :meth:`MultibodyModel.apply_dx` move a configuration alike).
The raw quaternion columns of :meth:`forward_dynamics_deriv` are those of
``-M^-1 d(rnea)/dq``, which differ from an automatic derivative of the
articulated-body algorithm in the radial (norm) direction only.
"""
from __future__ import annotations

import difflib
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import casadi as ca
import numpy as np
import pinocchio as pin

from lie import LieState, UnitQuaternion
from lie import _backend as B
from lie import attitude_jacobian, axis_angle_to_quat, check_unit_quaternion, quat_error, quat_mult, quat_to_rot

from .casadi_names import casadi_name
from .lie_group_model import LieGroupModel
from .model import COMPILED, fill_out  # noqa: F401  (COMPILED: re-exported, the compiled functions' key suffix)
from .multibody import RigidBodyTree
from .multibody.ltl import dof_parents, ltl_factor, ltl_solve
from .orders import change_order, change_orders, generate_conversions, standard_orders
from .locked_joints import LockedJoints, lock_joints, srdf_pose
from .robot_data import load_pinocchio_model, read_urdf_limits

#: Slices of the floating-base configuration and of its tangent.
BASE_POS, BASE_QUAT = slice(0, 3), slice(3, 7)
BASE_NQ, BASE_NV = 7, 6
TANGENT_POS, TANGENT_ROT = slice(0, 3), slice(3, 6)

#: Functions :meth:`MultibodyModel.compile` compiles by default (the ones rollouts and checks call most).
HOT_FUNCTIONS = (
    "M_func",
    "C_func",
    "forward_dynamics",
    "forward_dynamics_deriv",
    "dynamics",
    "dynamics_deriv",
    "inverse_dynamics",
    "inverse_dynamics_deriv",
    "kinematics",
    "kinematics_jacobian",
)


class MultibodyModel(LieGroupModel):
    """Dynamics and kinematics of a pinocchio model as CasADi functions (PinnZoo API).

    Parameters
    ----------
    pin_model:
        A ``pinocchio.Model`` (from a URDF with a free-flyer root, a fixed base,
        or built in Python). Supported joints: revolute, prismatic, free-flyer
        (others raise ``ValueError``).
    kinematics_bodies:
        Frame names whose world positions :meth:`kinematics` returns (e.g. feet).
    input_matrix:
        ``B`` (nv x nu) mapping actuator torques to generalized forces. Default:
        the identity on the joint coordinates (every non-base joint actuated).
    name:
        The model's name, any non-empty text; its generated functions are named
        after it (``<name>_<function>``, made a valid CasADi name by
        :func:`models.casadi_names.casadi_name`).
    urdf_path:
        The URDF file the model came from, if any: enables the ``"mujoco"``
        vector order (the file's joint order) in :meth:`change_order`.
    welded_joints:
        Joints of that URDF which ``pin_model`` has locked at zero (e.g.
        :class:`models.Humanoid`'s ``locked``): the ``"mujoco"`` order leaves
        them out, and its MuJoCo model welds them.
    """

    hot_functions = HOT_FUNCTIONS

    def __init__(
        self,
        pin_model: Any,
        kinematics_bodies: Sequence[str] = (),
        input_matrix: Optional[np.ndarray] = None,
        name: str = "multibody",
        urdf_path: Optional[str] = None,
        welded_joints: Sequence[str] = (),
    ) -> None:
        super().__init__()
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"name: expected a non-empty string, got {name!r}")
        self.name = name
        check_model(pin_model)
        self.tree = RigidBodyTree(pin_model)
        self.pin_model = pin_model
        self.nq, self.nv = self.tree.nq, self.tree.nv
        self.nx = self.nq + self.nv
        self.kinematics_bodies = frame_names(pin_model, kinematics_bodies)
        self.nc = len(self.kinematics_bodies)
        default_B = input_matrix is None
        if default_B:
            nb = BASE_NV if self.is_floating else 0
            input_matrix = np.vstack([np.zeros((nb, self.nv - nb)), np.eye(self.nv - nb)])
        self._B = np.asarray(input_matrix, dtype=float)
        if self._B.ndim != 2 or self._B.shape[0] != self.nv or not np.isfinite(self._B).all():
            raise ValueError(f"input_matrix: expected a finite ({self.nv}, nu) matrix, got shape {self._B.shape}")
        self.nu = self._B.shape[1]
        self._lie = LieState(UnitQuaternion, (3, self.nx - BASE_NQ)) if self.is_floating else LieState(UnitQuaternion, (self.nx,))
        self._dof_parents = dof_parents(pin_model)
        limits = read_urdf_limits(pin_model)
        #: Position limits (joints after the base, nominal order; +-inf where unbounded) and velocity limits.
        self.joint_names, self.joint_lower, self.joint_upper = limits.names, limits.lower, limits.upper
        self.velocity_limits = np.where(limits.velocity > 0, limits.velocity, np.inf)
        self.urdf_path = urdf_path
        #: joints of the URDF that ``pin_model`` has welded at zero (:func:`models.locked_joints.lock_joints`): left out of
        #: the MuJoCo order, and welded in the MuJoCo model too (:func:`trajopt.mujoco.model.build_model`)
        self.welded_joints = tuple(welded_joints)
        self.orders = standard_orders(pin_model, urdf_path, self.welded_joints)
        if not default_B:  # actuators of a custom B keep their order in every vector order
            actuators = tuple(f"u{k}" for k in range(self.nu))
            self.orders = {k: replace(o, torque_names=actuators) for k, o in self.orders.items()}
        self.conversions = generate_conversions(self.orders)

    @classmethod
    def from_urdf(
        cls,
        urdf_path: Union[str, Path],
        floating: bool = True,
        locked_joints: LockedJoints = (),
        srdf: Union[str, Path, None] = None,
        pose: Optional[str] = None,
        **kwargs: Any,
    ) -> "MultibodyModel":
        """Load a URDF (free-flyer root when ``floating``) and wrap it.

        ``locked_joints``: joints welded at a position (:func:`models.locked_joints.lock_joints`):
        names, locked at the SRDF file ``srdf``'s pose ``pose`` when both are given (else at
        their neutral position), or a mapping of names to positions. A model with locked joints
        has no ``"mujoco"`` order and no ``urdf_path`` (the file describes the whole robot).
        Raises ``FileNotFoundError`` for a missing file and ``ValueError`` for one pinocchio
        cannot parse, an unknown joint or pose. ``kwargs`` go to the constructor.
        """
        pin_model = load_pinocchio_model(urdf_path, floating=floating)
        if (srdf is None) != (pose is None):
            raise ValueError(f"srdf, pose: give both (the SRDF file and the name of one of its poses) or neither, got srdf={srdf!r}, pose={pose!r}")
        if locked_joints:
            reference = srdf_pose(pin_model, srdf, pose) if srdf is not None else None
            return cls(lock_joints(pin_model, locked_joints, reference), urdf_path=None, **kwargs)
        return cls(pin_model, urdf_path=str(urdf_path), **kwargs)

    def srdf_state(self, srdf: Union[str, Path], pose: str) -> np.ndarray:
        """The state (nx,) at the SRDF file ``srdf``'s pose ``pose`` (:func:`models.locked_joints.srdf_pose`),
        at rest, in the nominal order."""
        q = srdf_pose(self.pin_model, srdf, pose)
        return np.concatenate([self.change_order(q, "pinocchio", "nominal"), np.zeros(self.nv)])

    # ---------------------------------------------------------------- orders
    def change_order(self, value: Any, from_: str, to: str, axis: Optional[int] = None, out: Optional[np.ndarray] = None, kind: Optional[str] = None) -> np.ndarray:
        """Permute a vector or matrix between vector orders ("nominal", "pinocchio", "mujoco").

        The vector kind (configuration nq, velocity nv, state nx, error state
        2 nv, torque nu) is deduced from the size along each permuted axis;
        ``axis`` picks rows (0), columns (1) or both (None) of a matrix. A pure
        permutation: see :func:`models.orders.to_mujoco_state` for MuJoCo's
        world-frame base velocity. ``out`` receives the result in place.
        """
        return change_order(self.conversions, value, from_, to, self.nq, self.nv, self.nu, axis=axis, out=out, kind=kind)

    def change_orders(self, values: Sequence[Any], from_: str, to: str, axis: Optional[int] = None, inplace: bool = False, kind: Optional[str] = None) -> List[np.ndarray]:
        """:meth:`change_order` applied to each of several vectors or matrices.

        ``inplace=True`` permutes each array in its own memory and returns the
        same arrays (PinnZoo.jl's ``change_orders!``; :func:`models.orders.change_orders`).
        """
        return change_orders(self.conversions, values, from_, to, self.nq, self.nv, self.nu, axis=axis, inplace=inplace, kind=kind)

    # ------------------------------------------------------------ description
    @property
    def mass(self) -> float:
        """Total mass (kg): the sum of the bodies' masses, links fixed to them included."""
        return float(pin.computeTotalMass(self.pin_model))

    def state_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """``(lower, upper)`` (nx,): the URDF's joint position limits on the joint coordinates and its
        velocity limits ``-v_max <= v <= v_max`` on the joint velocities; the base and any unlimited
        joint (continuous, or a velocity limit of 0) unbounded. For ``problem.bound_states(*model.state_bounds())``."""
        lower, upper = np.full(self.nx, -np.inf), np.full(self.nx, np.inf)
        limits = read_urdf_limits(self.pin_model)
        q = limits.q_indices  # a joint's configuration index is the same in the nominal and pinocchio orders
        lower[q], upper[q] = self.joint_lower, self.joint_upper
        v = self.nq + limits.v_indices
        lower[v], upper[v] = -self.velocity_limits, self.velocity_limits
        return lower, upper

    def summary(self) -> str:
        """One line on the robot as loaded: name, total mass, moving bodies and the URDF links merged into them, sizes.

        E.g. ``go1: 12.84 kg in 13 bodies (45 links), floating base, nq 19, nv 18, nu 12``.
        Pinocchio merges every link fixed to another into one body; a mass far
        from the robot's datasheet points at a link whose inertial was dropped.
        """
        links = sum(1 for frame in self.pin_model.frames if frame.type == pin.FrameType.BODY)
        base = "floating base" if self.is_floating else "fixed base"
        return f"{self.name}: {self.mass:.4g} kg in {self.pin_model.njoints - 1} bodies ({links} links), {base}, nq {self.nq}, nv {self.nv}, nu {self.nu}"

    # ------------------------------------------------------------------ sizes
    @property
    def is_floating(self) -> bool:
        """True when the root joint is a free-flyer."""
        return self.tree.is_floating

    @property
    def state_dim(self) -> int:
        return self.nx

    @property
    def control_dim(self) -> int:
        return self.nu

    @property
    def error_dim(self) -> int:
        return 2 * self.nv

    # ------------------------------------------------------------ base layout
    #: Entries of a floating base's position (WORLD frame) and unit quaternion ``[qw, qx, qy, qz]`` in ``q`` (and ``x``).
    base_position_slice, base_orientation_slice = BASE_POS, BASE_QUAT

    @property
    def joint_position_slice(self) -> slice:
        """Entries of the joint positions in ``q`` (and ``x``): after the base's 7 for a floating base, all of ``q`` else."""
        return slice(BASE_NQ if self.is_floating else 0, self.nq)

    def base_position(self, x: Any) -> Any:
        """A floating base's position (3,) in a configuration or state ``x`` (a numpy stack (K, n): (K, 3))."""
        return _entries(x, BASE_POS)

    def base_orientation(self, x: Any) -> Any:
        """A floating base's unit quaternion ``[qw, qx, qy, qz]`` (4,) in a configuration or state ``x`` (a numpy stack (K, n): (K, 4))."""
        return _entries(x, BASE_QUAT)

    def joint_positions(self, x: Any) -> Any:
        """The joint positions (nq - 7 for a floating base) in a configuration or state ``x`` (a numpy stack (K, n): (K, .))."""
        return _entries(x, self.joint_position_slice)

    def contact_parents(self) -> Tuple[int, ...]:
        """The pinocchio joint that moves each contact point (kinematics body), in their order:
        contacts with the same parent are on one rigid body."""
        model = self.pin_model
        return tuple(model.frames[model.getFrameId(b)].parentJoint for b in self.kinematics_bodies)

    def shared_contacts(self) -> List[List[int]]:
        """The contact points (indices into the kinematics bodies) grouped by the rigid body they share, for the bodies
        that carry two or more (a sole's corners), in the order of their first points; empty when every contact is
        alone on its body (point feet)."""
        parents = self.contact_parents()
        return [[i for i, q in enumerate(parents) if q == p] for p in dict.fromkeys(parents) if parents.count(p) > 1]

    def sole_half_width(self) -> float:
        """Half the narrower side (m) of the narrowest sole: per body of :meth:`shared_contacts`, the contact points'
        axis-aligned extents in the frame of the joint that moves them, the middle one of the three halved (the
        smallest is the sole's flatness); ``nan`` for point feet."""
        model = self.pin_model
        widths = []
        for points in self.shared_contacts():
            frames = [model.frames[model.getFrameId(self.kinematics_bodies[i])] for i in points]
            local = np.array([f.placement.translation for f in frames])
            widths.append(float(np.sort(np.ptp(local, axis=0))[1]) / 2)
        return min(widths) if widths else float("nan")

    def sole_actuators(self) -> np.ndarray:
        """(nu,) bool: the ankles, the actuators of the joints that carry a sole (a body of :meth:`shared_contacts`)
        and sit within the sole's length of its contact points' centre, in the neutral configuration (a knee sits a
        shank above); none for point feet."""
        model = self.pin_model
        data = model.createData()
        pin.framesForwardKinematics(model, data, pin.neutral(model))
        first, parents = 1 + int(self.is_floating), self.contact_parents()
        out = np.zeros(self.nu, dtype=bool)
        for points in self.shared_contacts():
            corners = np.array([data.oMf[model.getFrameId(self.kinematics_bodies[i])].translation for i in points])
            centre, length = corners.mean(axis=0), float(np.max(np.ptp(corners, axis=0)))
            near = [j for j in model.supports[parents[points[0]]] if j >= first and np.linalg.norm(data.oMi[j].translation - centre) < length]
            out |= self._joint_actuators(near)
        return out

    def _joint_actuators(self, joints: Sequence[int]) -> np.ndarray:
        """(nu,) bool: the actuators whose ``B`` column has a nonzero on a velocity coordinate of one of the pinocchio
        ``joints``."""
        model = self.pin_model
        dofs = [model.joints[j].idx_v + d for j in joints for d in range(model.joints[j].nv)]
        return np.any(self._B[dofs] != 0, axis=0)

    def contact_actuators(self) -> np.ndarray:
        """(nc, nu) bool: entry ``(i, k)`` says that actuator ``k`` drives a joint between the base and contact point ``i``
        (its leg): ``B[:, k]`` has a nonzero on a velocity coordinate of a joint supporting the point's parent joint (the
        floating base's coordinates excluded). Those are the columns of the point's Jacobian that the actuator moves."""
        model = self.pin_model
        first = 1 + int(self.is_floating)  # the universe, then the free flyer
        out = np.zeros((self.nc, self.nu), dtype=bool)
        for i, parent in enumerate(self.contact_parents()):
            out[i] = self._joint_actuators([j for j in model.supports[parent] if j >= first])
        return out

    def lie_state(self) -> LieState:
        """Layout ``[x, y, z, quat, rest]`` (floating) or a plain vector (fixed base).

        The error maps of this class override LieState's: the position error is
        taken in the body frame of the reference state (PinnZoo/pinocchio-style).
        """
        return self._lie

    def B_func(self) -> np.ndarray:
        """Input Jacobian ``B`` (nv x nu): ``tau = B u``."""
        return self._B.copy()

    def control_bounds(self) -> Tuple[np.ndarray, np.ndarray]:
        lim = self.torque_limits()
        return -lim, lim

    def torque_limits(self) -> np.ndarray:
        """Actuator torque limits (nu,) from the model's ``effortLimit``.

        An actuator that drives one coordinate ``i`` (column ``B[:, k] = b e_i``)
        is limited to ``effortLimit[i] / |b|``; every other actuator, and every
        coordinate without a limit (0 or pinocchio's ``DBL_MAX``), gets ``inf``.
        """
        effort = np.asarray(self.pin_model.effortLimit, dtype=float)
        lim = np.full(self.nu, np.inf)
        for k, column in enumerate(self._B.T):
            rows = np.flatnonzero(column)
            if len(rows) == 1 and 0 < effort[rows[0]] < np.finfo(float).max:
                lim[k] = effort[rows[0]] / abs(column[rows[0]])
        return lim

    # ------------------------------------------------------- function cache
    def _symbols(self) -> Dict[str, ca.SX]:
        return {
            "x": ca.SX.sym("x", self.nx),
            "tau": ca.SX.sym("tau", self.nv),
            "vdot": ca.SX.sym("vdot", self.nv),
            "f": ca.SX.sym("f", 3 * self.nc),
        }

    def _builders(self) -> Dict[str, Callable[[], ca.Function]]:
        nq, nv, nx = self.nq, self.nv, self.nx
        return {
            **super()._builders(),
            "M_func": lambda: self._make("M_func", ["x"], lambda s: [self._mass(s)]),
            "C_func": lambda: self._make("C_func", ["x"], lambda s: [self._bias(s)]),
            "forward_dynamics": lambda: self._make("forward_dynamics", ["x", "tau", "f"], lambda s: [self._aba(s)]),
            "forward_dynamics_deriv": lambda: self._make("forward_dynamics_deriv", ["x", "tau", "f"], self._aba_deriv),
            "dynamics": lambda: self._make("dynamics", ["x", "tau", "f"], lambda s: [self._xdot(s)]),
            "dynamics_deriv": lambda: self._make("dynamics_deriv", ["x", "tau", "f"], self._xdot_deriv),
            "inverse_dynamics": lambda: self._make("inverse_dynamics", ["x", "vdot", "f"], lambda s: [self._rnea(s)]),
            "inverse_dynamics_deriv": lambda: self._make("inverse_dynamics_deriv", ["x", "vdot", "f"], lambda s: [ca.jacobian(self._rnea(s), s["x"]), self._mass(s)]),
            "inverse_dynamics_hvp": lambda: self._make("inverse_dynamics_hvp", ["x", "vdot", "lam", "f"], self._rnea_hvp, lam=nx),
            "inverse_dynamics_hTvp": lambda: self._make("inverse_dynamics_hTvp", ["x", "vdot", "lam", "f"], self._rnea_hTvp, lam=nv),
            "velocity_kinematics": lambda: self._make("velocity_kinematics", ["x"], lambda s: [self._E(s["x"])]),
            "velocity_kinematics_T": lambda: self._make("velocity_kinematics_T", ["x"], lambda s: [self._E_T(s["x"])]),
            "velocity_kinematics_jvp_deriv": lambda: self._make("velocity_kinematics_jvp_deriv", ["x", "w"], lambda s: [ca.jacobian(self._E(s["x"]) @ s["w"], s["x"])], w=nv),
            "velocity_kinematics_T_jvp_deriv": lambda: self._make("velocity_kinematics_T_jvp_deriv", ["x", "w"], lambda s: [ca.jacobian(self._E_T(s["x"]) @ s["w"], s["x"])], w=nq),
            "kinematics": lambda: self._make("kinematics", ["x"], lambda s: [self._kin(s["x"])]),
            "kinematics_rotation": lambda: self._make("kinematics_rotation", ["x"], lambda s: [self._kin_rot(s["x"])]),
            "kinematics_jacobian": lambda: self._make("kinematics_jacobian", ["x"], lambda s: [ca.jacobian(self._kin(s["x"]), s["x"])]),
            "kinematics_jacobian_q": lambda: self._make("kinematics_jacobian_q", ["x"], lambda s: [ca.jacobian(self._kin(s["x"]), s["x"])[:, :nq]]),
            "kinematics_hvp": lambda: self._make("kinematics_hvp", ["x", "dx"], lambda s: [ca.jacobian(ca.jtimes(self._kin(s["x"]), s["x"], s["dx"]), s["x"])], dx=nx),
            "kinematics_hvp_q": lambda: self._make("kinematics_hvp_q", ["x", "dq"], self._kin_hvp_q, dq=nq),
            "kinematics_velocity": lambda: self._make("kinematics_velocity", ["x"], lambda s: [self._kin_vel(s["x"])]),
            "kinematics_velocity_jacobian": lambda: self._make("kinematics_velocity_jacobian", ["x"], lambda s: [ca.jacobian(self._kin_vel(s["x"]), s["x"])]),
            "kinematics_velocity_matrix": lambda: self._make("kinematics_velocity_matrix", ["x"], lambda s: [self._Jv(s["x"])]),
            "kinematics_jacobianTvp": lambda: self._make("kinematics_jacobianTvp", ["x", "f"], lambda s: [self._JTf(s)]),
            "kinematics_force_jacobian": lambda: self._make("kinematics_force_jacobian", ["x", "f"], lambda s: [ca.jacobian(self._JTf(s), s["x"])]),
            "kinematics_force_hvp": lambda: self._make("kinematics_force_hvp", ["x", "f", "mult"], self._force_hvp, mult=nx),
            "kinematics_force_hTvp": lambda: self._make("kinematics_force_hTvp", ["x", "f", "mult"], self._force_hTvp, mult=nv),
        }

    def _make(self, key: str, inputs: List[str], outputs: Callable[[Dict[str, ca.SX]], List[ca.SX]], **extra: int) -> ca.Function:
        """SX Function ``<name>_<key>`` of the named inputs (``extra``: sizes of further ones), CSE applied."""
        s = {**self._symbols(), **{k: ca.SX.sym(k, n) for k, n in extra.items()}}
        outs = outputs(s)
        names = [f"o{i}" for i in range(len(outs))]
        return ca.Function(casadi_name(f"{self.name}_{key}"), [s[i] for i in inputs], outs, inputs, names, {"cse": True})

    # ------------------------------------------------- symbolic building blocks
    def _qv(self, x: ca.SX) -> Tuple[ca.SX, ca.SX]:
        return x[: self.nq], x[self.nq :]

    def _point_forces(self, f: ca.SX) -> Optional[List[Tuple[str, ca.SX]]]:
        return [(b, f[3 * i : 3 * i + 3]) for i, b in enumerate(self.kinematics_bodies)] if self.nc else None

    def _mass(self, s: Dict[str, ca.SX]) -> ca.SX:
        return self.tree.crba(self._qv(s["x"])[0])

    def _bias(self, s: Dict[str, ca.SX]) -> ca.SX:
        return self.tree.nle(*self._qv(s["x"]))

    def _aba(self, s: Dict[str, ca.SX]) -> ca.SX:
        q, v = self._qv(s["x"])
        return self.tree.aba(q, v, s["tau"], point_forces=self._point_forces(s["f"]))

    def _rnea(self, s: Dict[str, ca.SX]) -> ca.SX:
        q, v = self._qv(s["x"])
        return self.tree.rnea(q, v, s["vdot"], point_forces=self._point_forces(s["f"]))

    def _aba_deriv(self, s: Dict[str, ca.SX]) -> List[ca.SX]:
        """``[d vdot/dx, d vdot/dtau]`` by the RNEA identity, no derivative of the ABA.

        ``rnea(x, vdot(x, tau), f) = tau`` for all ``x``, so
        ``d vdot/dx = -M^-1 d rnea/dx`` at ``a = vdot`` and ``d vdot/dtau = M^-1``,
        with ``vdot = M^-1 (tau - rnea(x, 0, f))`` and every ``M^-1`` applied
        through the tree-sparse factorization of :mod:`models.multibody.ltl`.
        """
        factor = ltl_factor(self._mass(s), self._dof_parents)
        vdot = ltl_solve(factor, s["tau"] - self._rnea({**s, "vdot": ca.SX.zeros(self.nv)}))
        a = ca.SX.sym("a", self.nv)
        drnea_dx = ca.substitute(ca.jacobian(self._rnea({**s, "vdot": a}), s["x"]), a, vdot)
        return [-ltl_solve(factor, drnea_dx), ltl_solve(factor, ca.SX.eye(self.nv))]

    def _xdot(self, s: Dict[str, ca.SX]) -> ca.SX:
        return ca.vertcat(self._E(s["x"]) @ self._qv(s["x"])[1], self._aba(s))

    def _xdot_deriv(self, s: Dict[str, ca.SX]) -> List[ca.SX]:
        dvdot_dx, dvdot_dtau = self._aba_deriv(s)
        dqdot_dx = ca.jacobian(self._E(s["x"]) @ self._qv(s["x"])[1], s["x"])
        return [ca.vertcat(dqdot_dx, dvdot_dx), ca.vertcat(ca.SX.zeros(self.nq, self.nv), dvdot_dtau)]

    def _rnea_hvp(self, s: Dict[str, ca.SX]) -> List[ca.SX]:
        """Jacobians of ``(d tau/dx) lam`` (a forward directional derivative) w.r.t. ``x`` and ``vdot``."""
        jvp = ca.jtimes(self._rnea(s), s["x"], s["lam"])
        return [ca.jacobian(jvp, s["x"]), ca.jacobian(jvp, s["vdot"])]

    def _rnea_hTvp(self, s: Dict[str, ca.SX]) -> List[ca.SX]:
        """``d/dx (d tau/dx)^T lam`` (the Hessian of ``lam^T tau``) and ``d/dx (M lam)``."""
        hessian, _ = ca.hessian(ca.dot(s["lam"], self._rnea(s)), s["x"])
        return [hessian, ca.jacobian(self._mass(s) @ s["lam"], s["x"])]

    def _E(self, x: ca.SX) -> ca.SX:
        if not self.is_floating:
            return ca.SX.eye(self.nv)
        quat = x[BASE_QUAT]
        return ca.diagcat(quat_to_rot(quat), 0.5 * attitude_jacobian(quat), ca.SX.eye(self.nv - BASE_NV))

    def _E_T(self, x: ca.SX) -> ca.SX:
        if not self.is_floating:
            return ca.SX.eye(self.nv)
        quat = x[BASE_QUAT]
        return ca.diagcat(quat_to_rot(quat).T, 2 * attitude_jacobian(quat).T, ca.SX.eye(self.nv - BASE_NV))

    def _kin(self, x: ca.SX) -> ca.SX:
        q = x[: self.nq]
        return ca.vertcat(*[self.tree.frame_placement(q, b)[1] for b in self.kinematics_bodies]) if self.nc else ca.SX(0, 1)

    def _kin_rot(self, x: ca.SX) -> ca.SX:
        q = x[: self.nq]
        return ca.vertcat(*[self.tree.frame_placement(q, b)[0] for b in self.kinematics_bodies]) if self.nc else ca.SX(0, 3)

    def _kin_hvp_q(self, s: Dict[str, ca.SX]) -> List[ca.SX]:
        """``d (J_raw dq)/dq`` with ``J_raw dq`` a forward directional derivative."""
        jvp = ca.jtimes(self._kin(s["x"]), s["x"], ca.vertcat(s["dq"], ca.SX.zeros(self.nv)))
        return [ca.jacobian(jvp, s["x"])[:, : self.nq]]

    def _Jv(self, x: ca.SX) -> ca.SX:
        """Stacked world-aligned linear Jacobians (3 nc x nv), mapping v to body velocities."""
        q = x[: self.nq]
        if not self.nc:
            return ca.SX(0, self.nv)
        return ca.vertcat(*[self.tree.frame_jacobian(q, b, "LOCAL_WORLD_ALIGNED")[:3, :] for b in self.kinematics_bodies])

    def _kin_vel(self, x: ca.SX) -> ca.SX:
        return self._Jv(x) @ x[self.nq :]

    def _JTf(self, s: Dict[str, ca.SX]) -> ca.SX:
        return self._Jv(s["x"]).T @ s["f"]

    def _force_hvp(self, s: Dict[str, ca.SX]) -> List[ca.SX]:
        """Jacobians of ``K mult`` w.r.t. ``x`` and ``f``, ``K = d(J^T f)/dx``."""
        jvp = ca.jtimes(self._JTf(s), s["x"], s["mult"])
        return [ca.jacobian(jvp, s["x"]), ca.jacobian(jvp, s["f"])]

    def _force_hTvp(self, s: Dict[str, ca.SX]) -> List[ca.SX]:
        """Jacobians of ``K^T mult`` w.r.t. ``x`` (the Hessian of ``mult^T J^T f``) and ``f``."""
        vjp = ca.jtimes(self._JTf(s), s["x"], s["mult"], True)
        hessian, _ = ca.hessian(ca.dot(s["mult"], self._JTf(s)), s["x"])
        return [hessian, ca.jacobian(vjp, s["f"])]

    # ------------------------------------------------------------ validation
    def _x(self, x: Any, name: str = "x") -> Any:
        x = B.vector(x, self.nx, name)
        if self.is_floating and not B.is_symbolic(x):
            check_unit_quaternion(x[BASE_QUAT], f"{name}[3:7] (base quaternion)")
        return x

    def _forces(self, forces: Any, like: Any) -> Any:
        if forces is None:
            return B.zeros((3 * self.nc, 1), like=like) if B.is_symbolic(like) else np.zeros(3 * self.nc)
        return B.vector(forces, 3 * self.nc, "forces")

    def _input(self, tau_or_u: Any) -> Tuple[Any, Optional[np.ndarray]]:
        """``(tau, map)``: ``tau`` (nv) as given, or ``B u`` for actuator torques ``u`` (nu).

        The two are told apart by size (``tau`` wins when ``nu == nv``);
        ``map`` is ``B`` for ``u`` (so ``d/du = d/dtau @ B``), else ``None``.
        """
        value = tau_or_u if B.is_symbolic(tau_or_u) else np.atleast_1d(B.numeric_array(tau_or_u, "tau"))
        n = max(value.shape) if len(value.shape) == 2 and min(value.shape) == 1 else value.shape[0]
        if n == self.nv:
            return B.vector(value, self.nv, "tau"), None
        if n == self.nu:
            u = B.vector(value, self.nu, "u")
            return (ca.mtimes(ca.DM(self._B), u) if B.is_symbolic(u) else self._B @ u), self._B
        raise ValueError(f"tau: expected generalized forces ({self.nv},) or actuator torques ({self.nu},), got shape {tuple(value.shape)}")

    # ------------------------------------------------------------- dynamics
    def M_func(self, x: Any) -> Any:
        """Mass matrix ``M(q)`` (nv x nv) of the configuration part of ``x``."""
        return self._call("M_func", self._x(x), matrix=True)

    def C_func(self, x: Any) -> Any:
        """Bias ``C(q, v)`` (nv,): Coriolis, centrifugal and gravity generalized forces."""
        return self._call("C_func", self._x(x))

    def forward_dynamics(self, x: Any, tau: Any, forces: Any = None) -> Any:
        """``vdot = M^-1 (tau + J^T f - C)`` (nv,) by the articulated-body algorithm.

        ``tau`` is the generalized force (nv,) or the actuator torques (nu,),
        mapped through :meth:`B_func`; ``forces`` (3 nc,) are optional WORLD-frame
        forces at the kinematics bodies.
        """
        x = self._x(x)
        return self._call("forward_dynamics", x, self._input(tau)[0], self._forces(forces, x))

    def forward_dynamics_deriv(self, x: Any, tau: Any, forces: Any = None) -> Tuple[Any, Any]:
        """``(d vdot/dx, d vdot/dtau)``: (nv x nx) raw in the quaternion, and ``M^-1`` (nv x nv).

        With actuator torques ``u`` (nu,) as second argument the second matrix
        is ``d vdot/du = M^-1 B`` (nv x nu). Computed as ``-M^-1 d rnea/dx`` at
        ``a = vdot``. The columns of the quaternion are derivatives with respect to the raw
        quaternion: multiply by ``E(q)`` (:meth:`velocity_kinematics`) for tangent derivatives.
        """
        x = self._x(x)
        tau, input_map = self._input(tau)
        dx, dtau = self._call("forward_dynamics_deriv", x, tau, self._forces(forces, x), matrix=True)
        return dx, _times(dtau, input_map)

    def dynamics(self, x: Any, tau: Any, t: Any = 0.0, forces: Any = None, tangent: bool = False, out: Optional[np.ndarray] = None) -> Any:
        """``xdot = [E(q) v; vdot]`` (nx,): a true time derivative of ``x``.

        The second argument is ``tau`` (nv,) or ``u`` (nu,) (told apart by
        size; the same when ``B = I``). ``t`` is unused (time-invariant), kept
        for the :class:`models.Model` interface. ``tangent=True`` returns
        PinnZoo.jl's ``[v; vdot]`` (2 nv,) instead: the rate of the error
        state (``error_jacobian_T(x) @ xdot``), not a derivative of ``x``
        itself when the base is floating (its first block would have to be
        ``qdot = E(q) v``, nq entries), which is why it is not the default.
        ``out``: a float array (nx,) (or (2 nv,) with ``tangent``) filled in
        place and returned (RobotDynamics.jl's ``dynamics!``; numeric calls).
        """
        x = self._x(x)
        B.time_argument(t)
        if tangent:
            return fill_out(B.vcat([x[self.nq :], self.forward_dynamics(x, tau, forces)]), out)
        return fill_out(self._call("dynamics", x, self._input(tau)[0], self._forces(forces, x)), out)

    def dynamics_deriv(self, x: Any, tau: Any, forces: Any = None, tangent: bool = False) -> Tuple[Any, Any]:
        """``(d xdot/dx, d xdot/dtau)`` ((nx x nx), (nx x nv)); ``(nx x nu)`` ``d xdot/du`` for ``u``.

        ``tangent=True``: the derivatives of PinnZoo.jl's ``[v; vdot]`` (:meth:`dynamics`),
        ``[[0, I]; d vdot/dx]`` (2 nv x nx) and ``[0; d vdot/dtau]`` (2 nv x nv or nu).
        """
        if tangent:
            dvdot_dx, dvdot_dtau = self.forward_dynamics_deriv(x, tau, forces)
            dv_dx = B.hcat([B.zeros((self.nv, self.nq), like=dvdot_dx), B.eye(self.nv, like=dvdot_dx)])
            return B.block([[dv_dx], [dvdot_dx]]), B.block([[B.zeros((self.nv, dvdot_dtau.shape[1]), like=dvdot_dtau)], [dvdot_dtau]])
        x = self._x(x)
        tau, input_map = self._input(tau)
        dx, dtau = self._call("dynamics_deriv", x, tau, self._forces(forces, x), matrix=True)
        return dx, _times(dtau, input_map)

    def continuous_dynamics(self, x: Any, u: Any, t: Any) -> Any:
        return self.casadi_function("dynamics")(x, ca.mtimes(ca.DM(self._B), u), B.zeros((3 * self.nc, 1), like=x))

    def dynamics_jacobian(self, x: Any, u: Any, t: Any = 0.0) -> Tuple[Any, Any]:
        """``(d xdot/dx, d xdot/du)`` for actuator torques ``u`` (nu,), whatever ``nu``."""
        u = B.vector(u, self.nu, "u")
        tau = ca.mtimes(ca.DM(self._B), u) if B.is_symbolic(u) else self._B @ u
        A, dtau = self.dynamics_deriv(x, tau)
        return A, _times(dtau, self._B)

    def inverse_dynamics(self, x: Any, vdot: Any, forces: Any = None) -> Any:
        """``tau = M vdot + C - J^T f`` (nv,) by the recursive Newton-Euler algorithm."""
        x = self._x(x)
        return self._call("inverse_dynamics", x, B.vector(vdot, self.nv, "vdot"), self._forces(forces, x))

    def inverse_dynamics_deriv(self, x: Any, vdot: Any, forces: Any = None) -> Tuple[Any, Any]:
        """``(d tau/dx, d tau/dvdot)`` ((nv x nx) raw in the quaternion, (nv x nv) = M)."""
        x = self._x(x)
        return self._call("inverse_dynamics_deriv", x, B.vector(vdot, self.nv, "vdot"), self._forces(forces, x), matrix=True)

    def inverse_dynamics_hvp(self, x: Any, vdot: Any, lam: Any, forces: Any = None) -> Tuple[Any, Any]:
        """Derivatives of ``(d tau/dx) lam`` (lam: nx) w.r.t. ``x`` (nv x nx) and ``vdot`` (nv x nv)."""
        x = self._x(x)
        return self._call("inverse_dynamics_hvp", x, B.vector(vdot, self.nv, "vdot"), B.vector(lam, self.nx, "lam"), self._forces(forces, x), matrix=True)

    def inverse_dynamics_hTvp(self, x: Any, vdot: Any, lam: Any, forces: Any = None) -> Tuple[Any, Any]:
        """Derivatives w.r.t. ``x`` of ``(d tau/dx)^T lam`` (nx x nx, symmetric) and ``(d tau/dvdot)^T lam = M lam`` (nv x nx); lam: nv."""
        x = self._x(x)
        return self._call("inverse_dynamics_hTvp", x, B.vector(vdot, self.nv, "vdot"), B.vector(lam, self.nv, "lam"), self._forces(forces, x), matrix=True)

    # ------------------------------------------------------ velocity kinematics
    def velocity_kinematics(self, x: Any) -> Any:
        """``E(q)`` (nq x nv) with ``qdot = E(q) v``."""
        return self._call("velocity_kinematics", self._x(x), matrix=True)

    def velocity_kinematics_T(self, x: Any) -> Any:
        """``E_T(q)`` (nv x nq) with ``v = E_T(q) qdot`` and ``E_T E = I``."""
        return self._call("velocity_kinematics_T", self._x(x), matrix=True)

    def velocity_kinematics_jvp_deriv(self, x: Any, v: Any) -> Any:
        """``d (E(q) v) / dx`` (nq x nx) for a fixed vector ``v`` (nv,)."""
        return self._call("velocity_kinematics_jvp_deriv", self._x(x), B.vector(v, self.nv, "v"), matrix=True)

    def velocity_kinematics_T_jvp_deriv(self, x: Any, qdot: Any) -> Any:
        """``d (E_T(q) qdot) / dx`` (nv x nx) for a fixed vector ``qdot`` (nq,)."""
        return self._call("velocity_kinematics_T_jvp_deriv", self._x(x), B.vector(qdot, self.nq, "qdot"), matrix=True)

    # ------------------------------------------------------------ error state
    def state_error(self, x: Any, x0: Any) -> Any:
        """``dx`` (2 nv,): body-frame position error, axis-angle attitude error, differences.

        The attitude error does not depend on the quaternions' norms; numeric
        states are not checked for unit quaternions here (``apply_dx`` checks ``x0``).
        """
        x, x0 = B.vector(x, self.nx, "x"), B.vector(x0, self.nx, "x0")
        if not self.is_floating:
            return x - x0
        q0 = x0[BASE_QUAT]
        dp = quat_to_rot(q0).T @ (x[BASE_POS] - x0[BASE_POS])
        dphi = quat_error(x[BASE_QUAT], q0)
        return B.vcat([dp, dphi, x[BASE_NQ:] - x0[BASE_NQ:]])

    def apply_dx(self, x0: Any, dx: Any) -> Any:
        """``x0 (+) dx`` (nx,): ``p = p0 + Rot(q0) dp``, ``q = q0 * exp(dphi)``, rest added."""
        x0, dx = self._x(x0, "x0"), B.vector(dx, 2 * self.nv, "dx")
        if not self.is_floating:
            return x0 + dx
        q0 = x0[BASE_QUAT]
        p = x0[BASE_POS] + quat_to_rot(q0) @ dx[TANGENT_POS]
        q = quat_mult(q0, axis_angle_to_quat(dx[TANGENT_ROT]))
        return B.vcat([p, q, x0[BASE_NQ:] + dx[BASE_NV:]])

    def error_jacobian(self, x: Any) -> Any:
        """``d apply_dx(x, dx)/d dx`` at 0 = ``blkdiag(E(q), I)`` (nx x 2 nv)."""
        x = self._x(x)
        return B.blkdiag([self.velocity_kinematics(x), B.eye(self.nv, like=x)])

    def error_jacobian_T(self, x: Any) -> Any:
        """``d state_error(y, x)/dy`` at ``y = x`` = ``blkdiag(E_T(q), I)`` (2 nv x nx)."""
        x = self._x(x)
        return B.blkdiag([self.velocity_kinematics_T(x), B.eye(self.nv, like=x)])

    # ------------------------------------------------------------- kinematics
    def kinematics(self, x: Any) -> Any:
        """World positions of the kinematics bodies, stacked (3 nc,)."""
        return self._call("kinematics", self._x(x))

    def kinematics_rotation(self, x: Any) -> Any:
        """World rotations (body to world) of the kinematics bodies, stacked (3 nc x 3)."""
        return self._call("kinematics_rotation", self._x(x), matrix=True)

    def kinematics_jacobian(self, x: Any, wrt: str = "x") -> Any:
        """``d kinematics / dx`` (3 nc x nx): PinnZoo.jl's Jacobian with respect to the whole state, raw
        in the quaternion (not projected on the tangent space); its velocity columns are zero.

        ``wrt="q"`` gives the configuration block ``d kinematics / dq`` (3 nc x nq), whose product
        with ``E(q)`` (:meth:`velocity_kinematics`) is the world-aligned frame Jacobian.
        """
        return self._call(self._wrt_key("kinematics_jacobian", wrt), self._x(x), matrix=True)

    def kinematics_hvp(self, x: Any, dx: Any, wrt: str = "x") -> Any:
        """``d (kinematics_jacobian(x) @ dx) / dx`` (3 nc x nx) for a fixed ``dx`` (nx,): PinnZoo.jl's
        Hessian-vector product of the kinematics.

        ``wrt="q"``: the configuration-only form, ``d (J_q(x) @ dq) / dq`` (3 nc x nq) for ``dq`` (nq,).
        """
        key = self._wrt_key("kinematics_hvp", wrt)
        return self._call(key, self._x(x), B.vector(dx, self.nx if wrt == "x" else self.nq, "dx"), matrix=True)

    def _wrt_key(self, key: str, wrt: str) -> str:
        """The cached function of ``key`` with respect to ``wrt``: ``"x"`` (the state) or ``"q"`` (the configuration)."""
        if wrt not in ("x", "q"):
            raise ValueError(f"wrt: expected 'x' (the state) or 'q' (the configuration), got {wrt!r}")
        return key if wrt == "x" else f"{key}_q"

    def kinematics_velocity(self, x: Any) -> Any:
        """World linear velocities of the kinematics bodies ``J(q) v`` (3 nc,)."""
        return self._call("kinematics_velocity", self._x(x))

    def kinematics_velocity_jacobian(self, x: Any) -> Any:
        """``d kinematics_velocity / dx`` (3 nc x nx) = ``[d(J v)/dq, J]``."""
        return self._call("kinematics_velocity_jacobian", self._x(x), matrix=True)

    def kinematics_velocity_matrix(self, x: Any) -> Any:
        """``J(q)`` (3 nc x nv): world-aligned linear Jacobians mapping ``v`` to body velocities."""
        return self._call("kinematics_velocity_matrix", self._x(x), matrix=True)

    def kinematics_jacobianTvp(self, x: Any, forces: Any) -> Any:
        """``J(q)^T f`` (nv,): generalized force of WORLD-frame forces at the bodies."""
        return self._call("kinematics_jacobianTvp", self._x(x), B.vector(forces, 3 * self.nc, "forces"))

    def kinematics_force_jacobian(self, x: Any, forces: Any) -> Any:
        """``K = d (J(q)^T f) / dx`` (nv x nx)."""
        return self._call("kinematics_force_jacobian", self._x(x), B.vector(forces, 3 * self.nc, "forces"), matrix=True)

    def kinematics_force_hvp(self, x: Any, forces: Any, mult: Any) -> Tuple[Any, Any]:
        """Jacobians of ``K(x, f) @ mult`` (mult: nx) w.r.t. ``x`` (nv x nx) and ``f`` (nv x 3 nc)."""
        return self._call("kinematics_force_hvp", self._x(x), B.vector(forces, 3 * self.nc, "forces"), B.vector(mult, self.nx, "mult"), matrix=True)

    def kinematics_force_hTvp(self, x: Any, forces: Any, mult: Any) -> Tuple[Any, Any]:
        """Jacobians of ``K(x, f)^T @ mult`` (mult: nv) w.r.t. ``x`` (nx x nx, symmetric) and ``f`` (nx x 3 nc)."""
        return self._call("kinematics_force_hTvp", self._x(x), B.vector(forces, 3 * self.nc, "forces"), B.vector(mult, self.nv, "mult"), matrix=True)

    # ---------------------------------------------------------------- states
    def randn_state(self, rng: Optional[np.random.Generator] = None) -> np.ndarray:
        """State with standard-normal coordinates; the base quaternion normalized."""
        rng = rng if rng is not None else np.random.default_rng()
        x = rng.standard_normal(self.nx)
        if self.is_floating:
            x[BASE_QUAT] /= np.linalg.norm(x[BASE_QUAT])
        return x

    def init_state(self) -> np.ndarray:
        """A valid initial state: zeros (identity base attitude for floating models)."""
        x = np.zeros(self.nx)
        if self.is_floating:
            x[BASE_QUAT.start] = 1.0
        return x


def multibody_robot(model: Any) -> Optional["MultibodyModel"]:
    """The multibody robot a model is made of: the model itself, or the ``robot`` of a model built on one
    (contact or floating-base dynamics, whose state starts with the robot's); ``None`` for other models."""
    robot = model if isinstance(model, MultibodyModel) else getattr(model, "robot", None)
    return robot if isinstance(robot, MultibodyModel) else None


def check_model(pin_model: Any) -> None:
    """``TypeError`` unless ``pin_model`` is a ``pinocchio.Model``."""
    if not isinstance(pin_model, pin.Model):
        raise TypeError(f"pin_model: expected a pinocchio.Model (load a URDF with MultibodyModel.from_urdf), got {B.describe(pin_model)}")


def frame_names(pin_model: Any, bodies: Sequence[str], name: str = "kinematics_bodies") -> List[str]:
    """Validated frame names of ``pin_model`` (argument ``name``): a sequence of strings, each an existing frame."""
    if isinstance(bodies, str) or not isinstance(bodies, Sequence) or not all(isinstance(b, str) for b in bodies):
        raise ValueError(f"{name}: expected a sequence of frame names, got {bodies!r}")
    missing = [b for b in bodies if not pin_model.existFrame(b)]
    if missing:
        known = sorted(f.name for f in pin_model.frames)
        close = sorted({c for b in missing for c in difflib.get_close_matches(b, known, n=3)})
        hint = f" (close: {', '.join(close)})" if close else ""
        raise ValueError(f"{name}: {missing} are not frames of the model {pin_model.name!r}{hint}")
    return list(bodies)


def _entries(x: Any, entries: slice) -> Any:
    """``x[entries]`` of a vector (numpy or CasADi), ``x[..., entries]`` of a numpy stack of vectors."""
    return x[..., entries] if isinstance(x, np.ndarray) else x[entries]


def _times(matrix: Any, right: Optional[np.ndarray]) -> Any:
    """``matrix @ right`` (numpy or CasADi), or ``matrix`` when ``right`` is None."""
    if right is None:
        return matrix
    return ca.mtimes(matrix, ca.DM(right)) if B.is_symbolic(matrix) else matrix @ right
