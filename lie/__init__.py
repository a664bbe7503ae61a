"""Rotations and Lie-group math, written once for numpy and CasADi SX/MX."""
from .quaternion import (
    H,
    T,
    L_mult,
    R_mult,
    attitude_jacobian,
    axis_angle_to_quat,
    quat_conj,
    quat_mult,
    quat_to_axis_angle,
    quat_to_rot,
    rot_to_quat,
    skew,
)
