"""Animations of a rigid body, and the resampling every animation shares.

:func:`animate_rigid_body` flies a quadrotor-like body (two crossed arms with
rotors, and body axes) along a trajectory resampled to the frame rate:
positions linearly (:func:`interpolate_linear`), attitudes by spherical linear
interpolation (:func:`slerp_quaternions`) of the quaternions; the frames are
written by :func:`.movie.write_movie` (GIF or MP4, at :func:`.movie.frame_rate`).

Quaternions are ``[qw, qx, qy, qz]`` (Hamilton, body to world, docs/conventions.md);
positions are in the world frame [m]; times in seconds.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional, TextIO

import numpy as np
from matplotlib.figure import Figure
from scipy.spatial.transform import Rotation, Slerp

from .checks import as_array, as_quaternions, as_times
from ..atomic_file import prepare_output_path
from .movie import frame_rate, write_movie
from .output import ANIMATION_EXTENSIONS
from .rigid_body import AXIS_COLORS, label_axes_3d, rotation_matrices, set_equal_3d

#: Size of animation frames: inches at :data:`ANIMATION_DPI` (600 x 600 pixels).
ANIMATION_SIZE = (6.0, 6.0)
#: Resolution of animation frames (dots per inch).
ANIMATION_DPI = 100


def frame_times(times: np.ndarray, fps: float) -> np.ndarray:
    """Frame times from ``times[0]`` to ``times[-1]`` at ``fps`` frames per second."""
    if not fps > 0:
        raise ValueError(f"fps: expected a positive frame rate, got {fps}")
    n = int(np.floor((times[-1] - times[0]) * fps + 1e-9)) + 1
    return np.minimum(times[0] + np.arange(n) / fps, times[-1])


def interpolate_linear(times: np.ndarray, values: np.ndarray, t_new: np.ndarray) -> np.ndarray:
    """Linear interpolation along axis 0 of ``values`` (N, ...) at ``t_new`` (M,)."""
    flat = values.reshape(values.shape[0], -1)
    out = np.column_stack([np.interp(t_new, times, column) for column in flat.T])
    return out.reshape((t_new.size,) + values.shape[1:])


def slerp_quaternions(times: np.ndarray, quaternions: np.ndarray, t_new: np.ndarray) -> np.ndarray:
    """Slerp of unit quaternions ``[qw, qx, qy, qz]`` (N, 4) at ``t_new`` (M,), result (M, 4).

    Between two knots the rotation takes the shortest path (``q`` and ``-q``
    are the same rotation). Uses scipy, whose order is ``[qx, qy, qz, qw]``.
    """
    rotations = Rotation.from_quat(quaternions[:, [1, 2, 3, 0]])
    xyzw = Slerp(times, rotations)(t_new).as_quat()
    return xyzw[:, [3, 0, 1, 2]]


def quadrotor_outline(arm_length: float) -> list[np.ndarray]:
    """Polylines (each (M, 3), body frame [m]) of an X quadrotor.

    Two arms of half-length ``arm_length`` along the body-frame diagonals
    ``(1, 1, 0)`` and ``(1, -1, 0)``, and a rotor circle of radius
    ``0.4 arm_length`` at each arm tip.
    """
    diagonals = np.array([[1.0, 1.0, 0.0], [1.0, -1.0, 0.0]]) / np.sqrt(2.0)
    arms = [np.array([-d, d]) * arm_length for d in diagonals]
    angle = np.linspace(0.0, 2.0 * np.pi, 25)
    circle = 0.4 * arm_length * np.column_stack([np.cos(angle), np.sin(angle), np.zeros_like(angle)])
    tips = np.vstack([arms[0], arms[1]])
    return arms + [tip + circle for tip in tips]


def animate_rigid_body(
    times: np.ndarray,
    positions: np.ndarray,
    quaternions: np.ndarray,
    path: str | Path,
    fps: Optional[float] = None,
    arm_length: float = 0.175,
    overwrite: bool = False,
    progress: Optional[TextIO] = None,
) -> Path:
    """Animate a quadrotor-like body along a trajectory; write GIF or MP4.

    ``times`` (N,) [s]; ``positions`` (N, 3) world frame [m];
    ``quaternions`` (N, 4) unit ``[qw, qx, qy, qz]`` body to world. The
    trajectory is resampled at ``fps`` (default and GIF rounding:
    :func:`.movie.frame_rate`; positions linear, attitudes slerp); the camera
    is fixed, so only the moving lines are redrawn per frame.
    The body is an X of two arms (half-length ``arm_length`` [m]) with
    rotors, plus its x (red), y (green), z (blue) axes; the whole path is
    dotted and the flown part solid; the view is fixed with equal axis
    scaling. ``path`` ends in ``.gif`` or ``.mp4``; an existing file is
    replaced only with ``overwrite=True``. ``progress`` (a stream) gets a
    progress line. Returns ``path`` as a Path.
    """
    t = as_times(times)
    p = as_array(positions, "positions", (t.size, 3))
    q = as_quaternions(quaternions, "quaternions", t.size)
    out = prepare_output_path(path, overwrite, ANIMATION_EXTENSIONS)
    fps = frame_rate(out, fps)
    t_frames = frame_times(t, fps)
    p_frames = interpolate_linear(t, p, t_frames)
    rot_frames = rotation_matrices(slerp_quaternions(t, q, t_frames))

    fig = Figure(figsize=ANIMATION_SIZE, layout="constrained")
    ax = fig.add_subplot(projection="3d")
    ax.plot(*p.T, color="0.6", linestyle=":", linewidth=1.0)
    flown = ax.plot([], [], [], color="0.2", linewidth=1.2)[0]
    outline = quadrotor_outline(arm_length)
    body_lines = [ax.plot([], [], [], color="black", linewidth=1.5)[0] for _ in outline]
    axis_lines = [ax.plot([], [], [], color=c, linewidth=2.0)[0] for c in AXIS_COLORS]
    set_equal_3d(ax, np.vstack([p - arm_length, p + arm_length]))
    label_axes_3d(ax)
    ax.set_title(" ", fontsize="medium")

    def draw_frame(k: int) -> None:
        center, rot = p_frames[k], rot_frames[k]
        flown.set_data_3d(*p_frames[: k + 1].T)
        for line, polyline in zip(body_lines, outline):
            line.set_data_3d(*(center + polyline @ rot.T).T)
        for axis, line in enumerate(axis_lines):
            line.set_data_3d(*np.array([center, center + 0.6 * arm_length * rot[:, axis]]).T)
        ax.title.set_text(f"t = {t_frames[k]:.2f} s")  # not set_title, which moves the title back to its default place

    return write_movie(fig, draw_frame, t_frames.size, out, fps, animated=[flown, *body_lines, *axis_lines, ax.title], progress=progress)
