"""``RigidBodyTree``: a pinocchio model's dynamics as CasADi expressions.

Conventions (docs/conventions.md): ``q = [x, y, z, qw, qx, qy, qz, joints...]`` for a
free-flyer root (pinocchio's quaternion is ``[qx, qy, qz, qw]``: only that
order differs), ``v = [v_body, w_body, joint rates]`` (pinocchio's tangent,
base twist in the BODY frame). Spatial vectors are ``[linear; angular]``.

Each algorithm is built once per model (and per option, e.g. which frames carry
point forces) as an SX ``casadi.Function`` with common subexpressions merged,
cached on the instance, and then called on the arguments:

- SX arguments give the inlined SX expression,
- MX arguments give one MX call node (cheap graphs for NLPs),
- numeric arguments (numpy, lists, DM) give numpy results: vectors 1-D,
  matrices 2-D; a numeric ``q`` must hold unit quaternions
  (:func:`lie.check_unit_quaternion`).

A joint's rotor inertia (pinocchio's ``model.armature``, per velocity; a
MuJoCo model's ``armature``) enters as pinocchio has it: on the diagonal of
``M``, as ``armature * a`` in RNEA and in ABA's ``D``; a free flyer's must be 0.

A raw quaternion enters through :func:`lie.quat_to_rot`, which is exact only on
the unit sphere: derivatives with respect to ``q`` are meaningful in the
tangent space only (``d/dq @ E(q)``): compare them as ``J[:, :nq] @ E(q)``.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, Union

import casadi as ca
import numpy as np
import pinocchio as pin

from lie import check_unit_quaternion

from . import kinematics as kin
from .aba import aba
from .crba import crba
from .rnea import rnea
from .tree import FREE_FLYER, read_model

#: A frame given by name or by pinocchio index.
FrameRef = Union[str, int]


def _canonical(x: Any, n: int, name: str) -> Any:
    """SX/MX column (n x 1) kept symbolic; anything else a 1-D float array of length n."""
    if isinstance(x, (ca.SX, ca.MX)):
        if x.shape == (1, n) and n != 1:
            x = x.T
        if x.shape != (n, 1):
            raise ValueError(f"{name}: expected shape ({n},), got {x.shape}")
        return x
    arr = np.asarray(x.full() if isinstance(x, ca.DM) else x, dtype=float)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.reshape(-1)
    if arr.shape != (n,):
        raise ValueError(f"{name}: expected shape ({n},), got {arr.shape}")
    return arr


def _symbol_kind(args: Sequence[Any]) -> Optional[type]:
    """``ca.SX``, ``ca.MX`` or ``None`` (all numeric); mixing SX and MX is an error."""
    kinds = {type(a) for a in args if isinstance(a, (ca.SX, ca.MX))}
    if len(kinds) > 1:
        raise TypeError("arguments mix casadi.SX and casadi.MX")
    return kinds.pop() if kinds else None


def _vector(x: Any) -> Any:
    """A numeric (DM) result as a 1-D numpy array; symbolic results unchanged."""
    return np.reshape(x.full(), -1) if isinstance(x, ca.DM) else x


def _matrix(x: Any) -> Any:
    """A numeric (DM) result as a 2-D numpy array; symbolic results unchanged."""
    return x.full() if isinstance(x, ca.DM) else x


def _columns(items: Sequence[Any], kind: Optional[type]) -> Any:
    """Stack validated vectors as columns: a numpy array or a symbolic matrix."""
    if kind is None:
        return np.column_stack(items)
    return ca.horzcat(*[i if isinstance(i, kind) else ca.DM(i) for i in items])


class RigidBodyTree:
    """Symbolic rigid-body dynamics of a ``pinocchio.Model`` (our own spatial algebra).

    Attributes: ``model`` (the pinocchio model), ``nq``, ``nv``, ``is_floating``
    (joint 1 is a free-flyer), ``joint_names`` (pinocchio's, ``[0]`` = universe),
    ``frame_names``. Supported joints: revolute and prismatic about any axis,
    free-flyer (anything else raises ``ValueError`` here).
    """

    def __init__(self, model: pin.Model) -> None:
        self.model = model
        self._tree = read_model(model)
        self.nq, self.nv = model.nq, model.nv
        self.is_floating = bool(self._tree.joints) and self._tree.joints[0].kind == FREE_FLYER
        self.joint_names: list[str] = list(model.names)
        self.frame_names: list[str] = [f.name for f in model.frames]
        self._functions: dict[tuple, ca.Function] = {}

    # -- argument handling -------------------------------------------------

    def frame_id(self, frame: FrameRef) -> int:
        """Pinocchio index of a frame given by name or index (``ValueError`` if unknown)."""
        if isinstance(frame, str):
            if frame not in self.frame_names:
                raise ValueError(f"frame: no frame named {frame!r} in model {self.model.name!r}")
            return self.frame_names.index(frame)
        if isinstance(frame, (int, np.integer)) and 0 <= frame < len(self.frame_names):
            return int(frame)
        raise ValueError(f"frame: expected a frame name or an index in [0, {len(self.frame_names)}), got {frame!r}")

    def _q(self, q: Any) -> Any:
        """Validated configuration; a numeric one must hold unit quaternions."""
        q = _canonical(q, self.nq, "q")
        if isinstance(q, np.ndarray):
            for j in self._tree.joints:
                if j.kind == FREE_FLYER:
                    i = j.idx_q + 3
                    check_unit_quaternion(q[i : i + 4], f"q[{i}:{i + 4}] (joint {j.name!r})")
        return q

    def _v(self, x: Any, name: str) -> Any:
        """Validated tangent-size vector (velocity, acceleration, torque)."""
        return _canonical(x, self.nv, name)

    def _wrench_inputs(
        self, fext: Optional[Sequence[Any]], point_forces: Optional[Sequence[tuple[FrameRef, Any]]]
    ) -> tuple[dict[str, Any], tuple[int, ...]]:
        """Validated ``fext`` (6 x njoints) and point forces (3 x k) plus the point-force frames."""
        extra: dict[str, Any] = {}
        frames: tuple[int, ...] = ()
        if fext is not None:
            nj = self._tree.njoints
            if len(fext) != nj:
                raise ValueError(f"fext: expected a list of njoints = {nj} 6-vectors, got {len(fext)}")
            cols = [np.zeros(6) if f is None else _canonical(f, 6, f"fext[{i}]") for i, f in enumerate(fext)]
            extra["fext"] = _columns(cols, _symbol_kind(cols))
        if point_forces:
            frames = tuple(self.frame_id(fr) for fr, _ in point_forces)
            cols = [_canonical(f, 3, f"point_forces[{k}] force") for k, (_, f) in enumerate(point_forces)]
            extra["forces"] = _columns(cols, _symbol_kind(cols))
        return extra, frames

    def _evaluate(self, key: tuple, args: dict[str, Any], build: Callable[..., list[Any]]) -> list[Any]:
        """Call the cached SX Function ``key`` (built from ``build`` on first use) on ``args``.

        ``build`` receives SX symbols shaped like ``args`` (in order) and returns the
        outputs. Results are SX, MX or (for numeric ``args``) DM: see :func:`_vector`.
        """
        values = list(args.values())
        kind = _symbol_kind(values)
        f = self._functions.get(key)
        if f is None:
            syms = [ca.SX.sym(name, *(tuple(x.shape) + (1,))[:2]) for name, x in args.items()]
            outputs = [ca.SX(o) for o in build(*syms)]
            out_names = [f"o{k}" for k in range(len(outputs))]
            f = ca.Function("_".join(map(str, key)), syms, outputs, list(args), out_names, {"cse": True})
            self._functions[key] = f
        return f.call([x if kind is not None and isinstance(x, kind) else ca.DM(x) for x in values])

    # -- kinematics ---------------------------------------------------------

    def joint_placements(self, q: Any) -> list[tuple[Any, Any]]:
        """World placements ``o_M_i = (R 3x3, p 3x1)`` of all joints, index 0 = universe (identity)."""
        t = self._tree

        def build(q: ca.SX) -> list[Any]:
            world = kin.world_placements(t, kin.local_placements(t, q))
            return [x for R, p in world for x in (R, p)]

        out = self._evaluate(("joint_placements",), {"q": self._q(q)}, build)
        return [(_matrix(R), _vector(p)) for R, p in zip(out[0::2], out[1::2])]

    def frame_placement(self, q: Any, frame: FrameRef) -> tuple[Any, Any]:
        """World placement ``o_M_f = (R 3x3, p 3x1)`` of a pinocchio frame (name or index)."""
        t, fid = self._tree, self.frame_id(frame)

        def build(q: ca.SX) -> list[Any]:
            return list(kin.frame_placement(t, kin.world_placements(t, kin.local_placements(t, q)), fid))

        R, p = self._evaluate(("frame_placement", fid), {"q": self._q(q)}, build)
        return _matrix(R), _vector(p)

    def frame_jacobian(self, q: Any, frame: FrameRef, reference: Any = kin.LOCAL_WORLD_ALIGNED) -> Any:
        """Frame Jacobian (6 x nv, ``[linear; angular]``) like pinocchio's ``getFrameJacobian``.

        ``reference``: ``"LOCAL_WORLD_ALIGNED"`` (velocity of the frame origin and
        angular velocity, world axes), ``"LOCAL"`` (frame axes) or ``"WORLD"``
        (spatial velocity at the world origin); a ``pin.ReferenceFrame`` works too.
        """
        t, fid, ref = self._tree, self.frame_id(frame), _reference(reference)

        def build(q: ca.SX) -> list[Any]:
            return [kin.frame_jacobian(t, kin.world_placements(t, kin.local_placements(t, q)), fid, ref)]

        return _matrix(self._evaluate(("frame_jacobian", fid, ref), {"q": self._q(q)}, build)[0])

    def frame_velocity(self, q: Any, v: Any, frame: FrameRef, reference: Any = kin.LOCAL_WORLD_ALIGNED) -> Any:
        """Spatial velocity (6, ``[linear; angular]``) of a frame, like ``getFrameVelocity``.

        With LOCAL_WORLD_ALIGNED the linear part is the world-axes velocity of
        the frame origin (a foot point's velocity).
        """
        t, fid, ref = self._tree, self.frame_id(frame), _reference(reference)

        def build(q: ca.SX, v: ca.SX) -> list[Any]:
            local = kin.local_placements(t, q)
            vel, _ = kin.joint_velocities(t, local, v)
            world = kin.world_placements(t, local)
            return [kin.frame_motion(t, world, fid, vel[t.frames[fid].parent], ref)]

        args = {"q": self._q(q), "v": self._v(v, "v")}
        return _vector(self._evaluate(("frame_velocity", fid, ref), args, build)[0])

    def frame_acceleration(
        self, q: Any, v: Any, a: Any, frame: FrameRef, reference: Any = kin.LOCAL_WORLD_ALIGNED, classical: bool = False
    ) -> Any:
        """Spatial acceleration (6,) of a frame, like ``getFrameAcceleration`` (no gravity).

        ``classical=True`` adds ``w x v_lin`` to the linear part, like
        ``getFrameClassicalAcceleration``: with LOCAL_WORLD_ALIGNED it is the
        world-axes acceleration of the frame origin, ``J a + Jdot v``.
        """
        t, fid, ref = self._tree, self.frame_id(frame), _reference(reference)

        def build(q: ca.SX, v: ca.SX, a: ca.SX) -> list[Any]:
            local = kin.local_placements(t, q)
            vel, vJ = kin.joint_velocities(t, local, v)
            acc = kin.joint_accelerations(t, local, vel, vJ, a, np.zeros(6))
            world = kin.world_placements(t, local)
            parent = t.frames[fid].parent
            acc_f = kin.frame_motion(t, world, fid, acc[parent], ref)
            if not classical:
                return [acc_f]
            vel_f = kin.frame_motion(t, world, fid, vel[parent], ref)
            return [acc_f + ca.vertcat(ca.cross(vel_f[3:], vel_f[:3]), ca.SX.zeros(3, 1))]

        args = {"q": self._q(q), "v": self._v(v, "v"), "a": self._v(a, "a")}
        return _vector(self._evaluate(("frame_acceleration", fid, ref, int(classical)), args, build)[0])

    # -- dynamics -----------------------------------------------------------

    def _with_wrenches(
        self,
        name: str,
        algorithm: Callable[..., ca.SX],
        args: dict[str, Any],
        fext: Optional[Sequence[Any]],
        point_forces: Optional[Sequence[tuple[FrameRef, Any]]],
    ) -> Any:
        """Evaluate ``algorithm(tree, local, v, x, wrenches)`` (RNEA or ABA) with external forces."""
        t = self._tree
        extra, frames = self._wrench_inputs(fext, point_forces)

        def build(q: ca.SX, v: ca.SX, x: ca.SX, *forces: ca.SX) -> list[Any]:
            local = kin.local_placements(t, q)
            wrenches = None
            if forces:
                F = forces[0] if "fext" in extra else None
                P = forces[-1] if frames else None
                pf = [(fid, P[:, k]) for k, fid in enumerate(frames)]
                wrenches = kin.external_wrenches(t, kin.world_placements(t, local), F, pf)
            return [algorithm(t, local, v, x, wrenches)]

        key = (name, int("fext" in extra)) + frames
        return _vector(self._evaluate(key, {**args, **extra}, build)[0])

    def rnea(
        self,
        q: Any,
        v: Any,
        a: Any,
        fext: Optional[Sequence[Any]] = None,
        point_forces: Optional[Sequence[tuple[FrameRef, Any]]] = None,
    ) -> Any:
        """Inverse dynamics ``tau = M(q) a + C(q, v) - sum_i J_i^T f_i`` (nv), Featherstone's RNEA.

        ``fext``: ``njoints`` joint-LOCAL wrenches ``[f; n]`` acting on the bodies
        (pinocchio's ``fext``; entry 0 ignored, ``None`` entries are zero).
        ``point_forces``: ``(frame, f)`` pairs, ``f`` a WORLD-axes force (3,) at
        the frame origin; it enters as ``-J^T f`` with ``J`` the frame's
        LOCAL_WORLD_ALIGNED linear Jacobian.
        """
        args = {"q": self._q(q), "v": self._v(v, "v"), "a": self._v(a, "a")}
        return self._with_wrenches("rnea", rnea, args, fext, point_forces)

    def aba(
        self,
        q: Any,
        v: Any,
        tau: Any,
        fext: Optional[Sequence[Any]] = None,
        point_forces: Optional[Sequence[tuple[FrameRef, Any]]] = None,
    ) -> Any:
        """Forward dynamics ``vdot = M^-1 (tau - C + sum_i J_i^T f_i)`` (nv), Featherstone's ABA (O(n)).

        ``fext`` and ``point_forces`` as in :meth:`rnea`.
        """
        args = {"q": self._q(q), "v": self._v(v, "v"), "tau": self._v(tau, "tau")}
        return self._with_wrenches("aba", aba, args, fext, point_forces)

    def crba(self, q: Any) -> Any:
        """Joint-space inertia matrix ``M(q)`` (nv x nv, full and exactly symmetric), CRBA."""
        t = self._tree

        def build(q: ca.SX) -> list[Any]:
            return [crba(t, kin.local_placements(t, q))]

        return _matrix(self._evaluate(("crba",), {"q": self._q(q)}, build)[0])

    def nle(self, q: Any, v: Any) -> Any:
        """Bias ``C(q, v) = rnea(q, v, 0)`` (nv): Coriolis, centrifugal and gravity terms."""
        t = self._tree

        def build(q: ca.SX, v: ca.SX) -> list[Any]:
            return [rnea(t, kin.local_placements(t, q), v, ca.SX.zeros(t.nv, 1))]

        args = {"q": self._q(q), "v": self._v(v, "v")}
        return _vector(self._evaluate(("nle",), args, build)[0])


def _reference(reference: Any) -> str:
    """Name of a reference frame given as a string or a ``pin.ReferenceFrame``."""
    name = reference.name if isinstance(reference, pin.ReferenceFrame) else reference
    if name not in kin.REFERENCES:
        raise ValueError(f"reference: expected one of {kin.REFERENCES}, got {reference!r}")
    return name
