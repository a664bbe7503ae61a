"""Rotations and Lie-group math, written once for numpy and CasADi SX/MX.

Modules: ``quaternion`` (products, attitude Jacobian, matrices, axis-angle),
``so3`` (exp/log/Jacobians, exported as ``so3_*``), ``se3`` (exp6/log6/Jexp6/Jlog6,
pinocchio's conventions), ``mrp``, ``rodrigues``, ``cayley``, ``euler`` (ZYX,
OCS2 order), ``rotations`` (the parameterization classes ``UnitQuaternion``,
``MRP``, ``RodriguesParam``, ``Cayley``, ``EulerZYX``, ``RotationVec``, each
also the type of a rotation held in it), ``lie_state``
(``LieState``/``QuatState`` error-state maps), ``rbstate`` (``RBState``).
Conventions (quaternion order, frames, error states): docs/conventions.md.
"""
from .cayley import cayley_to_quat, quat_to_cayley
from .euler import (
    euler_zyx_rate_matrix,
    euler_zyx_rate_matrix_inv,
    euler_zyx_to_quat,
    euler_zyx_to_rot,
    quat_to_euler_zyx,
    rot_to_euler_zyx,
    yaw_to_quat,
    yaw_to_rot,
)
from .lie_state import LieState, QuatState
from .mrp import mrp_kinematics_matrix, mrp_kinematics_matrix_inv, mrp_to_quat, mrp_to_rot, quat_to_mrp
from .quaternion import (
    H,
    T,
    UNIT_TOL,
    L_mult,
    R_mult,
    attitude_jacobian,
    axis_angle_to_quat,
    check_unit_quaternion,
    quat_angle,
    quat_conj,
    quat_error,
    quat_mult,
    quat_to_axis_angle,
    quat_to_rot,
    rot_to_quat,
    skew,
)
from .rbstate import RBState
from .rodrigues import (
    quat_to_rodrigues,
    rodrigues_kinematics_matrix,
    rodrigues_kinematics_matrix_inv,
    rodrigues_to_quat,
    rodrigues_to_rot,
)
from .rotations import MRP, ROTATIONS, Cayley, EulerZYX, RodriguesParam, RotationParam, RotationVec, UnitQuaternion
from .se3 import Jexp6, Jlog6, exp6, log6
from .so3 import exp as so3_exp
from .so3 import left_jacobian as so3_left_jacobian
from .so3 import left_jacobian_inv as so3_left_jacobian_inv
from .so3 import log as so3_log
from .so3 import right_jacobian as so3_right_jacobian
from .so3 import right_jacobian_inv as so3_right_jacobian_inv
