"""Export a solution for a controller: a CSV table, or MuJoCo keyframes.

:func:`trajectory_table` samples a :class:`~trajopt.Solution` at its knots (or
every ``dt`` seconds, with the transcription's interpolation,
:meth:`~trajopt.Solution.evaluate`) and lays it out in one of the vector
orders of :mod:`models.orders`:

- ``"nominal"`` (ours): ``q = [x, y, z, qw, qx, qy, qz, joints]`` with the
  joints in pinocchio's order; ``v = [v_body, w_body, joint rates]`` (base
  velocities in the BODY frame);
- ``"pinocchio"``: as nominal with the quaternion ``[qx, qy, qz, qw]``;
- ``"mujoco"``: MuJoCo's ``qpos``/``qvel``/``ctrl`` of the model
  :func:`trajopt.mujoco.build_model` makes: joints in the URDF file's order
  (Go1: FR, FL, RR, RL legs) and the free joint's LINEAR velocity in the WORLD
  frame (angular velocity still in the body frame), columns ``v:vx_world``...

Columns: ``t``, then ``q:<name>`` (nq), ``v:<name>`` (nv), ``tau:<name>``
(the actuator torques, nu) and, for a legged problem, ``f:<contact>:x|y|z``
(contact forces in the WORLD frame, the contacts in the robot's order).
A problem whose model is not a multibody robot gets ``x[i]`` and ``u[i]``
columns, in the nominal order only.

:func:`write_csv` writes that table (header line, comma-separated,
``repr`` precision); :func:`mujoco_keyframes` writes the MJCF
``<keyframe>`` element (``time``, ``qpos``, ``qvel``, ``ctrl`` per key) to
paste into, or ``<include>`` from, a model with the same joints and actuators.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, List, Optional, Tuple

import numpy as np

from lie import quat_to_rot

from .atomic_file import atomic_output

#: Vector orders of the exported tables.
ORDERS = ("nominal", "pinocchio", "mujoco")
_AXES = ("x", "y", "z")


def sample_times(solution: Any, dt: Optional[float] = None) -> np.ndarray:
    """The knot times, or ``0, dt, 2 dt, ...`` up to ``tf`` (``tf`` itself included)."""
    if dt is None:
        return np.asarray(solution.times, dtype=float)
    if not (isinstance(dt, (int, float)) and np.isfinite(dt) and dt > 0):
        raise ValueError(f"dt: expected a positive sampling period (s), got {dt!r}")
    times = np.arange(int(np.floor(solution.tf / dt + 1e-9)) + 1) * dt
    return times if solution.tf - times[-1] <= 1e-9 * max(1.0, solution.tf) else np.append(times, solution.tf)


def _parts(solution: Any) -> Tuple[Any, Any]:
    """``(robot, contact_model)``: the multibody robot (None if the model is not one) and the contact model (None without contacts)."""
    problem = getattr(solution, "problem", None)
    if problem is None:
        raise ValueError("solution: no problem attached; load it with problems.load_solution(path) or Solution.load(path, problem=...)")
    model = problem.model
    if hasattr(model, "robot") and hasattr(model, "f_slice"):
        return model.robot, model
    if hasattr(model, "orders") and hasattr(model, "pin_model"):
        return model, None
    return None, None


def trajectory_table(solution: Any, order: str = "nominal", dt: Optional[float] = None) -> Tuple[List[str], np.ndarray]:
    """Column names and rows (K, columns) of ``solution``'s trajectory: time, configuration, velocity,
    torques (and contact forces), in the vector ``order`` ``"nominal"``, ``"pinocchio"`` or ``"mujoco"``,
    at the knots or every ``dt`` seconds (sampled with :meth:`~trajopt.Solution.evaluate`)."""
    if order not in ORDERS:
        raise ValueError(f"order: expected one of {ORDERS}, got {order!r}")
    robot, contacts = _parts(solution)
    times = sample_times(solution, dt)
    X, W = (np.asarray(solution.states, dtype=float), np.asarray(solution.controls, dtype=float)) if dt is None else solution.evaluate(times)
    X, W = np.atleast_2d(X), np.atleast_2d(W)
    if robot is None:
        if order != "nominal":
            raise ValueError(f"order: {order!r} needs a multibody robot; this problem's model has only the 'nominal' order")
        names = [f"x[{i}]" for i in range(X.shape[1])] + [f"u[{i}]" for i in range(W.shape[1])]
        return ["t"] + names, np.column_stack([times, X, W])
    if order not in robot.orders:
        raise ValueError(f"order: robot {robot.name!r} has no {order!r} order (known: {sorted(robot.orders)}); the MuJoCo order needs a robot loaded from a URDF")
    vector_order = robot.orders[order]
    u = W[:, contacts.u_slice] if contacts is not None else W
    states = robot.change_order(X, "nominal", order, axis=1, kind="state")
    torques = robot.change_order(u, "nominal", order, axis=1, kind="torque")
    vel_names = list(vector_order.vel_names)
    if order == "mujoco" and robot.is_floating:
        nq = robot.nq
        for row in states:
            row[nq : nq + 3] = quat_to_rot(robot.base_orientation(row)) @ row[nq : nq + 3]  # MuJoCo keeps the base where the nominal order has it
        vel_names[:3] = [f"{name}_world" for name in vel_names[:3]]
    columns = ["t"] + [f"q:{n}" for n in vector_order.config_names] + [f"v:{n}" for n in vel_names] + [f"tau:{n}" for n in vector_order.torque_names]
    blocks = [times[:, None], states, torques]
    if contacts is not None:
        columns += [f"f:{body}:{axis}" for body in robot.kinematics_bodies for axis in _AXES]
        problem = solution.problem
        blocks.append(problem.contact_forces(X, W, knots=problem.knot_index(times, solution.times)).reshape(len(times), -1))
    return columns, np.hstack(blocks)


def write_csv(solution: Any, path: str | os.PathLike, order: str = "nominal", dt: Optional[float] = None, overwrite: bool = False) -> None:
    """Write :func:`trajectory_table` to ``path`` as CSV (a header line, then one row per sample).

    Refuses an existing file (``FileExistsError``) unless ``overwrite``; the
    file is written to a temporary name and renamed, so a failure leaves no
    partial file.
    """
    columns, rows = trajectory_table(solution, order, dt)
    text = ",".join(columns) + "\n" + "\n".join(",".join(repr(float(v)) for v in row) for row in rows) + "\n"
    _write_text(path, text, overwrite)


def mujoco_keyframes(solution: Any, dt: Optional[float] = None) -> str:
    """The MJCF ``<mujoco><keyframe>`` text of ``solution`` in MuJoCo's vector order, at the knots or every ``dt`` s.

    One ``<key name="k<i>">`` per sample with ``time``, ``qpos``, ``qvel``
    (free joint linear velocity in the WORLD frame) and ``ctrl`` (the planned
    torques, actuators in joint order: the model of
    :func:`trajopt.mujoco.build_model`).
    """
    columns, rows = trajectory_table(solution, "mujoco", dt)
    q = [i for i, c in enumerate(columns) if c.startswith("q:")]
    v = [i for i, c in enumerate(columns) if c.startswith("v:")]
    u = [i for i, c in enumerate(columns) if c.startswith("tau:")]
    text = lambda values: " ".join(repr(float(x)) for x in values)  # noqa: E731
    keys = [f'    <key name="k{i}" time="{float(row[0])!r}" qpos="{text(row[q])}" qvel="{text(row[v])}" ctrl="{text(row[u])}"/>' for i, row in enumerate(rows)]
    return "<mujoco>\n  <keyframe>\n" + "\n".join(keys) + "\n  </keyframe>\n</mujoco>\n"


def write_mujoco_keyframes(solution: Any, path: str | os.PathLike, dt: Optional[float] = None, overwrite: bool = False) -> None:
    """Write :func:`mujoco_keyframes` to ``path`` (same overwrite rule as :func:`write_csv`)."""
    _write_text(path, mujoco_keyframes(solution, dt), overwrite)


def _write_text(path: str | os.PathLike, text: str, overwrite: bool) -> None:
    """``text`` into ``path`` (its folder created), whole or not at all (:func:`trajopt.atomic_file.atomic_output`)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(path, overwrite) as tmp:
        tmp.write_text(text)
