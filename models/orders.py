"""Vector orders of configurations, velocities and torques, and permutations between them.

Different libraries store the same robot state in different orders. A
:class:`StateOrder` names every entry of the configuration (size ``nq``), the
velocity (``nv``) and the actuator torque (``nu``) vectors; :func:`generate_conversions`
turns a set of named orders into index arrays (:class:`ConversionIndices`), and
:func:`change_order` applies them (``out = value[idx]``), deducing from the size
which vector it is given: configuration ``nq``, velocity ``nv``, state
``x = [q; v]`` (``nq + nv``), error state ``dx = [dq; dv]`` (``2 nv``, the
configuration tangent ordered like the velocity) or torque ``nu``.

:func:`standard_orders` builds the orders of a pinocchio model:

- ``"nominal"`` (ours): ``[x, y, z, qw, qx, qy, qz, joints...]`` with the joints
  in pinocchio's order; velocity ``[vx, vy, vz, wx, wy, wz, joints...]`` (base
  linear and angular velocity in the BODY frame).
- ``"pinocchio"``: as nominal but the quaternion stored ``[qx, qy, qz, qw]``.
- ``"mujoco"`` (when the URDF file is given): free joint ``[x, y, z, qw, qx, qy,
  qz]``, then the joints in the URDF file's tree order (Go1: FR, FL, RR, RL legs;
  Go2: FL, FR, RL, RR).

``change_order`` is a pure permutation: MuJoCo's free joint stores the base
LINEAR velocity in the WORLD frame, which :func:`to_mujoco_state` and
:func:`from_mujoco_state` convert explicitly (they need ``Rot(q)``).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, MutableMapping, Sequence

import numpy as np
import pinocchio as pin

from lie import check_unit_quaternion, quat_to_rot

from .robot_data import is_floating, urdf_joint_order

#: Floating-base configuration names, ours / MuJoCo ([qw, qx, qy, qz]) and pinocchio's ([qx, qy, qz, qw]).
BASE_CONFIG_NAMES = ("x", "y", "z", "qw", "qx", "qy", "qz")
BASE_CONFIG_NAMES_PINOCCHIO = ("x", "y", "z", "qx", "qy", "qz", "qw")
#: Floating-base velocity names (linear, then angular velocity).
BASE_VEL_NAMES = ("vx", "vy", "vz", "wx", "wy", "wz")
#: The vector kinds :func:`change_order` knows.
KINDS = ("config", "vel", "state", "error_state", "torque")

_BASE_QUAT = slice(3, 7)  # in a floating-base configuration
_BASE_LIN_VEL = slice(0, 3)  # in a floating-base velocity


@dataclass(frozen=True)
class StateOrder:
    """Names of the entries of the configuration, velocity and torque vectors.

    ``torque_names`` defaults to ``vel_names`` (one generalized force per
    velocity). Names must be unique within each vector.
    """

    config_names: tuple[str, ...]
    vel_names: tuple[str, ...]
    torque_names: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        torque = self.vel_names if self.torque_names is None else self.torque_names
        lists = {"config_names": self.config_names, "vel_names": self.vel_names, "torque_names": torque}
        for attr, names in lists.items():
            names = tuple(names)
            duplicates = sorted({n for n in names if names.count(n) > 1})
            if duplicates:
                raise ValueError(f"{attr}: duplicate names {duplicates}")
            object.__setattr__(self, attr, names)

    @property
    def nq(self) -> int:
        """Configuration size (the number of configuration names)."""
        return len(self.config_names)

    @property
    def nv(self) -> int:
        """Velocity size (the number of velocity names)."""
        return len(self.vel_names)

    @property
    def nu(self) -> int:
        """Control size (the number of torque names)."""
        return len(self.torque_names)


@dataclass(frozen=True, eq=False)
class ConversionIndices:
    """Index arrays converting vectors from one order to another: ``out = in[idx]``.

    ``state`` acts on ``[q; v]`` (``nq + nv``), ``error_state`` on ``[dq; dv]``
    (``2 nv``, both halves ordered like the velocity).
    """

    config: np.ndarray
    vel: np.ndarray
    state: np.ndarray
    error_state: np.ndarray
    torque: np.ndarray

    def size(self, kind: str) -> int:
        """Length of the vectors of ``kind`` (one of :data:`KINDS`)."""
        return len(getattr(self, kind))


def _permutation(src: Sequence[str], dst: Sequence[str], what: str) -> np.ndarray:
    """Indices ``idx`` with ``dst[i] == src[idx[i]]``; the name sets must agree."""
    if set(src) != set(dst):
        raise ValueError(
            f"{what}: orders name different entries (only in source: {sorted(set(src) - set(dst))}, "
            f"only in target: {sorted(set(dst) - set(src))})"
        )
    position = {name: i for i, name in enumerate(src)}
    return np.array([position[name] for name in dst], dtype=int)


def conversion_indices(src: StateOrder, dst: StateOrder) -> ConversionIndices:
    """Index arrays converting vectors ordered as ``src`` into ``dst``'s order."""
    config = _permutation(src.config_names, dst.config_names, "config_names")
    vel = _permutation(src.vel_names, dst.vel_names, "vel_names")
    torque = _permutation(src.torque_names, dst.torque_names, "torque_names")
    return ConversionIndices(
        config=config,
        vel=vel,
        state=np.concatenate([config, src.nq + vel]),
        error_state=np.concatenate([vel, src.nv + vel]),
        torque=torque,
    )


def generate_conversions(
    orders: Mapping[str, StateOrder],
    conversions: MutableMapping[tuple[str, str], ConversionIndices] | None = None,
    from_scratch: bool = False,
) -> MutableMapping[tuple[str, str], ConversionIndices]:
    """Conversions for every ordered pair ``(from, to)`` of named orders (identity pairs included).

    As PinnZoo.jl's ``generate_conversions(orders, conversions; from_scratch)``:
    with ``conversions`` (e.g. ``model.conversions``) the missing pairs are
    added to that mapping, in place, and it is returned; pairs it already
    holds are kept unless ``from_scratch``, which recomputes every pair of
    ``orders`` (pairs of other orders are left as they are). Without it a new
    dict is returned. Orders must name the same entries (``ValueError``
    naming the differing names otherwise).
    """
    if not isinstance(orders, Mapping) or not all(isinstance(o, StateOrder) for o in orders.values()):
        raise TypeError(f"orders: expected a mapping of names to StateOrder, got {type(orders).__name__}")
    if conversions is None:
        conversions = {}
    elif not isinstance(conversions, MutableMapping):
        raise TypeError(f"conversions: expected a dict of (from, to) -> ConversionIndices, got {type(conversions).__name__}")
    for a in orders:
        for b in orders:
            if from_scratch or (a, b) not in conversions:
                conversions[(a, b)] = conversion_indices(orders[a], orders[b])
    return conversions


def _axis_indices(conv: ConversionIndices, size: int, kind: str | None, axis_name: str) -> np.ndarray:
    """Index array for one axis of length ``size``.

    Every kind whose length is ``size`` is a candidate. When several match
    (e.g. ``nq == nv == nu`` for a fixed-base arm) and their index arrays are
    equal, any of them is right; when they differ the call is ambiguous and
    ``kind`` must say which one is meant.
    """
    if kind is not None:
        if kind not in KINDS:
            raise ValueError(f"kind: unknown vector kind {kind!r}; expected one of {KINDS}")
        if conv.size(kind) != size:
            raise ValueError(f"value: {axis_name} has length {size} but a {kind} vector has length {conv.size(kind)}")
        return getattr(conv, kind)
    matches = [k for k in KINDS if conv.size(k) == size]
    if not matches:
        sizes = ", ".join(f"{k} {conv.size(k)}" for k in KINDS)
        raise ValueError(f"value: {axis_name} has length {size}, which matches no vector kind ({sizes})")
    idx = getattr(conv, matches[0])
    if any(not np.array_equal(idx, getattr(conv, k)) for k in matches[1:]):
        raise ValueError(
            f"value: {axis_name} length {size} is ambiguous between {matches} with different orders; pass kind="
        )
    return idx


def change_order(
    conversions: Mapping[tuple[str, str], ConversionIndices],
    value: np.ndarray,
    from_: str,
    to: str,
    nq: int,
    nv: int,
    nu: int,
    axis: int | None = None,
    out: np.ndarray | None = None,
    kind: str | None = None,
) -> np.ndarray:
    """Permute a vector or matrix from order ``from_`` to order ``to``.

    The kind of each permuted axis (configuration ``nq``, velocity ``nv``, state
    ``nq + nv``, error state ``2 nv`` or torque ``nu``) is deduced from its
    length. There is no silent precedence between kinds of equal length: if
    they permute identically the result is the same, otherwise ``ValueError``
    asks for ``kind`` (one of :data:`KINDS`, used for every permuted axis).

    For a matrix, ``axis`` selects the rows (0), the columns (1) or both
    (``None``; e.g. a Jacobian ``d f/d x`` of shape ``(nv, nx)``). A vector is
    permuted along its only axis, and so is a row ``(1, n)`` or a column
    ``(n, 1)`` with ``axis=None`` (PinnZoo's adjoint vector): an axis of length
    1 has only the identity permutation, so it is left as it is. ``nq``, ``nv``, ``nu`` are checked against the
    conversion. With ``out`` the result is written into that array (it may be
    ``value`` itself, for an in-place permutation) and returned.
    """
    if (from_, to) not in conversions:
        known = sorted({name for pair in conversions for name in pair})
        raise ValueError(f"from_/to: no conversion {from_!r} -> {to!r}; known orders: {known}")
    conv = conversions[(from_, to)]
    for arg, n, k in (("nq", nq, "config"), ("nv", nv, "vel"), ("nu", nu, "torque")):
        if conv.size(k) != n:
            raise ValueError(f"{arg}: got {n} but the conversion's {k} vectors have length {conv.size(k)}")
    arr = np.asarray(value)
    if arr.ndim == 1:
        if axis not in (None, 0):
            raise ValueError(f"axis: a vector has only axis 0, got {axis}")
        result = arr[_axis_indices(conv, arr.shape[0], kind, "the vector")]
    elif arr.ndim == 2:
        if axis not in (None, 0, 1):
            raise ValueError(f"axis: expected 0 (rows), 1 (columns) or None (both), got {axis}")
        keep = [axis == 1 or (axis is None and arr.shape[0] == 1 != arr.shape[1]), axis == 0 or (axis is None and arr.shape[1] == 1 != arr.shape[0])]
        rows = np.arange(arr.shape[0]) if keep[0] else _axis_indices(conv, arr.shape[0], kind, "axis 0")
        cols = np.arange(arr.shape[1]) if keep[1] else _axis_indices(conv, arr.shape[1], kind, "axis 1")
        result = arr[np.ix_(rows, cols)]
    else:
        raise ValueError(f"value: expected a vector or a matrix, got shape {arr.shape}")
    if out is None:
        return result
    if not isinstance(out, np.ndarray) or out.shape != result.shape:
        raise ValueError(f"out: expected an array of shape {result.shape}, got {getattr(out, 'shape', type(out))}")
    out[...] = result
    return out


def change_orders(
    conversions: Mapping[tuple[str, str], ConversionIndices],
    values: Sequence[np.ndarray],
    from_: str,
    to: str,
    nq: int,
    nv: int,
    nu: int,
    axis: int | None = None,
    inplace: bool = False,
    kind: str | None = None,
) -> list[np.ndarray]:
    """:func:`change_order` applied to each of ``values`` (PinnZoo.jl's ``change_orders``).

    With ``inplace`` each value is permuted in its own memory and the same
    arrays are returned (PinnZoo.jl's ``change_orders!``): every value must
    then be a writeable floating-point ``numpy.ndarray`` (``TypeError`` naming
    its index otherwise), and all are checked before any is changed.
    """
    values = list(values)
    if inplace:
        for i, v in enumerate(values):
            if not isinstance(v, np.ndarray) or not np.issubdtype(v.dtype, np.floating) or not v.flags.writeable:
                raise TypeError(f"values[{i}]: in-place reordering needs a writeable floating-point numpy array, got {type(v).__name__}")
    results = [change_order(conversions, v, from_, to, nq, nv, nu, axis=axis, kind=kind) for v in values]
    if not inplace:
        return results
    for v, r in zip(values, results):
        v[...] = r
    return values


def _joint_names(model: pin.Model, first_joint: int) -> tuple[list[str], list[str]]:
    """Configuration and velocity entry names of joints ``first_joint ..`` in pinocchio order.

    A 1-DoF joint with one configuration entry is named after the joint; a
    joint with more entries gets ``name[k]`` (e.g. ``[cos, sin]`` of an
    unbounded revolute joint).
    """
    config, vel = [], []
    for jid in range(first_joint, model.njoints):
        joint, name = model.joints[jid], model.names[jid]
        config += [name] if joint.nq == 1 else [f"{name}[{k}]" for k in range(joint.nq)]
        vel += [name] if joint.nv == 1 else [f"{name}[{k}]" for k in range(joint.nv)]
    return config, vel


def standard_orders(pin_model: pin.Model, urdf_path: str | Path | None = None, welded: Sequence[str] = ()) -> dict[str, StateOrder]:
    """The ``"nominal"``, ``"pinocchio"`` and (with ``urdf_path``) ``"mujoco"`` orders of a model.

    Works for any pinocchio model with a free-flyer root (see
    :func:`models.robot_data.is_floating`) or a fixed base. Torques are the
    velocities of the non-root joints (``nu = nv - 6`` for a floating base).
    The MuJoCo order takes the joints in the URDF file's tree order
    (:func:`models.robot_data.urdf_joint_order`); it needs every non-root joint
    to be a 1-DoF joint with one configuration entry (MuJoCo hinge or slide).
    ``welded`` names the URDF's joints the model has locked (they are welded in
    MuJoCo too): they are left out of it.
    """
    floating = is_floating(pin_model)
    config, vel = _joint_names(pin_model, 2 if floating else 1)
    base_q = list(BASE_CONFIG_NAMES) if floating else []
    base_q_pin = list(BASE_CONFIG_NAMES_PINOCCHIO) if floating else []
    base_v = list(BASE_VEL_NAMES) if floating else []
    orders = {
        "nominal": StateOrder(base_q + config, base_v + vel, vel),
        "pinocchio": StateOrder(base_q_pin + config, base_v + vel, vel),
    }
    if urdf_path is not None:
        if config != vel:
            raise ValueError("pin_model: the MuJoCo order needs 1-DoF joints with one configuration entry each")
        joints = [joint for joint in urdf_joint_order(urdf_path) if joint not in welded]
        if set(joints) != set(config):
            raise ValueError(
                f"urdf_path: the movable joints of {urdf_path} {joints} are not those of the model {config}"
            )
        orders["mujoco"] = StateOrder(base_q + joints, base_v + joints, joints)
    return orders


def _rotate_base_velocity(x: np.ndarray, nq: int, to_world: bool, name: str) -> np.ndarray:
    """Copy of the state(s) ``x`` with the base linear velocity rotated by ``Rot(q)`` or ``Rot(q)^T``."""
    arr = np.array(x, dtype=float)
    if arr.ndim not in (1, 2) or arr.shape[-1] < nq + len(BASE_VEL_NAMES) or nq < len(BASE_CONFIG_NAMES):
        raise ValueError(f"{name}: expected a floating-base state (nx,) or (N, nx) with nq = {nq}, got {arr.shape}")
    lin_vel = slice(nq + _BASE_LIN_VEL.start, nq + _BASE_LIN_VEL.stop)
    for row in arr.reshape(-1, arr.shape[-1]):
        check_unit_quaternion(row[_BASE_QUAT], f"{name}[3:7] (base quaternion)")
        rot = quat_to_rot(row[_BASE_QUAT])
        row[lin_vel] = (rot if to_world else rot.T) @ row[lin_vel]
    return arr


def to_mujoco_state(x: np.ndarray, nq: int) -> np.ndarray:
    """MuJoCo ``[qpos; qvel]`` of a nominal-convention state already permuted to MuJoCo's order.

    ``x`` is ``(nx,)`` or ``(N, nx)``, e.g. ``change_order(conv, x, "nominal",
    "mujoco", ...)``. MuJoCo's free joint stores the base linear velocity in the
    WORLD frame and the angular velocity in the BODY frame, so
    ``qvel[0:3] = Rot(q) v_body`` and every other entry is copied. The base
    comes first in every order, so this commutes with the joint permutation.
    Raises ``ValueError`` for a non-unit base quaternion.
    """
    return _rotate_base_velocity(x, nq, True, "x")


def from_mujoco_state(x_mujoco: np.ndarray, nq: int) -> np.ndarray:
    """Inverse of :func:`to_mujoco_state`: ``v_body = Rot(q)^T qvel[0:3]`` (order unchanged)."""
    return _rotate_base_velocity(x_mujoco, nq, False, "x_mujoco")
