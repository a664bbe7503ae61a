"""Lagrangian dynamics of point masses moved by a few generalized coordinates.

The classic textbook systems (pendulum, double pendulum, cartpole, double
cartpole) are point masses whose world positions ``p_i(q)`` are explicit
functions of the coordinates ``q``. With kinetic energy ``T = 1/2 qd^T M qd``,
``M(q) = sum_i m_i J_i^T J_i`` (``J_i = dp_i/dq``), and potential
``V = sum_i m_i g z_i``, Lagrange's equations give the manipulator form

    M(q) qdd + C(q, qd) = B u,   C = c(q, qd) + dV/dq,

which :class:`PointMassChain` builds symbolically once (CasADi SX) and reuses.
The velocity terms ``c`` have two exact expressions:

    Christoffel:  c_i = sum_jk 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i) qd_j qd_k
    point masses: c = sum_i m_i J_i^T (dJ_i/dt qd)

CasADi cancels different terms in each (a cancelled term also vanishes from
every derivative an NLP takes), so the shorter one is kept. Measured as the
SX instructions of an RK4 step's Hessian: pendulum 136 either way (point
masses: 1116), cartpole 1436 (point masses 2098; the textbook
``(dM/dt) qd - 1/2 d(qd^T M qd)/dq``: 2714), double pendulum 9618 with point
masses (Christoffel 13871, textbook 17285), double cartpole 14132 (23730,
28308).
"""
from __future__ import annotations

from abc import abstractmethod
from typing import Any, Callable, Dict, Sequence, Tuple

import casadi as ca
import numpy as np

from lie import _backend as B

from .casadi_names import casadi_name
from .model import Model


class PointMassChain(Model):
    """Base of the point-mass models: state ``x = [q; qd]``, ``xdot = [qd; qdd]``.

    Subclasses give :meth:`mass_positions` (world positions of the point masses
    as SX expressions of ``q``), :attr:`masses`, :attr:`input_matrix` ``B``
    (nv x nu) and :attr:`gravity` (along -z). The masses hang on a chain of
    rigid links (what a viewer draws, :meth:`chain_points`): from the fixed
    pivot at the origin to each mass in turn, or, when :attr:`has_cart`, from
    the first mass (a cart sliding along y) to each following one.
    """

    #: Gravity (m/s^2), along world -z.
    gravity: float = 9.81
    #: Whether the first point mass is a cart on a rail along +y (the chain starts there, not at a pivot).
    has_cart: bool = False

    def __init__(self, masses: Sequence[float], input_matrix: np.ndarray, u_max: float = np.inf) -> None:
        super().__init__()
        #: The point masses (kg), in the order of :meth:`mass_positions`.
        self.masses = np.array([B.real(m, "mass", lower=0.0, strict=True) for m in np.atleast_1d(B.numeric_array(masses, "masses"))])
        #: ``B`` (nv x nu): the generalized forces ``B u`` of the controls.
        self.input_matrix = np.asarray(input_matrix, dtype=float)
        #: Bound on every control's magnitude (N or N m; ``inf``: unbounded).
        self.u_max = B.real(u_max, "u_max", lower=0.0, strict=True, allow_inf=True)
        self._manipulator = self._build_manipulator()

    @property
    def nv(self) -> int:
        """Number of generalized coordinates."""
        return self.input_matrix.shape[0]

    @property
    def state_dim(self) -> int:
        return 2 * self.nv

    @property
    def control_dim(self) -> int:
        return self.input_matrix.shape[1]

    def control_bounds(self) -> Tuple[np.ndarray, np.ndarray]:
        return np.full(self.control_dim, -self.u_max), np.full(self.control_dim, self.u_max)

    @abstractmethod
    def mass_positions(self, q: ca.SX) -> Sequence[ca.SX]:
        """World positions (3x1 each) of the point masses."""

    def _builders(self) -> Dict[str, Callable[[], ca.Function]]:
        return {**super()._builders(), "mass_positions": self._build_mass_positions}

    def _build_mass_positions(self) -> ca.Function:
        """``q -> P`` with the world positions of the point masses as rows (n_masses x 3)."""
        q = ca.SX.sym("q", self.nv)
        return ca.Function(f"{self.name}_mass_positions", [q], [ca.horzcat(*self.mass_positions(q)).T], ["q"], ["p"])

    def chain_points(self, q: Any) -> np.ndarray:
        """World positions (n, 3) [m] of the chain at the numeric configuration ``q`` (nv,):
        the pivot (origin) then every point mass, or, with a cart, the point masses from the cart on.

        Consecutive points are joined by rigid links (constant lengths).
        """
        masses = np.asarray(self.casadi_function("mass_positions")(B.vector(q, self.nv, "q")), dtype=float)
        return masses if self.has_cart else np.vstack([np.zeros(3), masses])

    def _build_manipulator(self) -> ca.Function:
        """``(q, qd) -> (M, C)`` with the shorter exact velocity terms (module docstring)."""
        nv = self.nv
        q, qd = ca.SX.sym("q", nv), ca.SX.sym("qd", nv)
        M, V, point_masses = ca.SX.zeros(nv, nv), 0, 0
        for m, p in zip(self.masses, self.mass_positions(q)):
            J = ca.jacobian(p, q)
            M += m * (J.T @ J)
            V += m * self.gravity * p[2]
            point_masses += m * (J.T @ ca.jtimes(J @ qd, q, qd))
        M = ca.triu(M) + ca.triu(M, False).T  # one expression per symmetric pair, so Christoffel terms cancel
        dM = [ca.jacobian(M[:, k], q) for k in range(nv)]  # dM[k][i, l] = dM_ik / dq_l
        christoffel = ca.vertcat(*[
            sum(0.5 * (dM[j][i, k] + dM[k][i, j] - dM[k][j, i]) * qd[j] * qd[k] for j in range(nv) for k in range(nv))
            for i in range(nv)
        ])
        c = min((christoffel, point_masses), key=lambda e: ca.Function("c", [q, qd], [e]).n_instructions())
        return ca.Function(casadi_name(f"{self.name}_manipulator"), [q, qd], [M, c + ca.gradient(V, q)], ["q", "qd"], ["M", "C"])

    def mass_matrix(self, q: Any) -> Any:
        """``M(q)`` (nv x nv)."""
        q = B.vector(q, self.nv, "q")
        M = self._manipulator(q, B.zeros((self.nv, 1), like=q))[0]
        return M if B.is_symbolic(q) else np.asarray(M)

    def bias_force(self, q: Any, qd: Any) -> Any:
        """``C(q, qd)``: Coriolis, centrifugal and gravity terms (nv,)."""
        q, qd = B.vector(q, self.nv, "q"), B.vector(qd, self.nv, "qd")
        C = self._manipulator(q, qd)[1]
        return C if B.is_symbolic(q, qd) else np.asarray(C).reshape(-1)

    def continuous_dynamics(self, x: Any, u: Any, t: Any) -> Any:
        q, qd = x[: self.nv], x[self.nv :]
        M, C = self._manipulator(q, qd)
        qdd = ca.solve(M, self.input_matrix @ u - C)
        return ca.vertcat(qd, qdd)


def _rot_x_tip(angle: Any, length: float) -> ca.SX:
    """``Rx(angle) @ [0, 0, length]``: a link of ``length`` turned about +x."""
    return ca.vertcat(0, -length * ca.sin(angle), length * ca.cos(angle))


class Pendulum(PointMassChain):
    """Point-mass pendulum turning about +x; ``theta = 0`` points up (+z).

    State ``[theta, theta_dot]``, input the joint torque. Defaults m = l = 1,
    g = 9.81: ``m l^2 thdd = m g l sin(theta) + u``.
    """

    name = "pendulum"

    def __init__(self, mass: float = 1.0, length: float = 1.0, u_max: float = np.inf) -> None:
        self.length = B.real(length, "length", lower=0.0, strict=True)
        super().__init__([B.real(mass, "mass", lower=0.0, strict=True)], np.eye(1), u_max)

    def mass_positions(self, q: ca.SX) -> Sequence[ca.SX]:
        return [_rot_x_tip(q[0], self.length)]


class DoublePendulum(PointMassChain):
    """Two point-mass links about +x; ``theta1`` absolute, ``theta2`` relative; 0 = up.

    ``actuated`` picks the driven joints: ``(0, 1)`` both (default), ``(1,)``
    the acrobot, ``(0,)`` the pendubot. Defaults m1 = m2 = l1 = l2 = 1.
    """

    name = "double_pendulum"

    def __init__(self, masses: Sequence[float] = (1.0, 1.0), lengths: Sequence[float] = (1.0, 1.0), actuated: Sequence[int] = (0, 1), u_max: float = np.inf) -> None:
        self.lengths = tuple(B.real(l, "lengths", lower=0.0, strict=True) for l in lengths)
        if isinstance(actuated, (str, bytes)) or not set(actuated) <= {0, 1} or len(set(actuated)) != len(actuated):
            raise ValueError(f"actuated: expected distinct joint indices among (0, 1), got {actuated!r}")
        super().__init__(masses, np.eye(2)[:, list(actuated)], u_max)

    def mass_positions(self, q: ca.SX) -> Sequence[ca.SX]:
        p1 = _rot_x_tip(q[0], self.lengths[0])
        return [p1, p1 + _rot_x_tip(q[0] + q[1], self.lengths[1])]


class Cartpole(PointMassChain):
    """Cart sliding along +y with a pole turning about +x, mass at the pole tip.

    State ``[y, theta, y_dot, theta_dot]``; ``theta = 0`` is the pole up. Input
    the horizontal force on the cart. Defaults m_cart = m_pole = l = 1.
    """

    name = "cartpole"
    has_cart = True

    def __init__(self, cart_mass: float = 1.0, pole_mass: float = 1.0, length: float = 1.0, u_max: float = np.inf) -> None:
        self.length = B.real(length, "length", lower=0.0, strict=True)
        super().__init__([B.real(cart_mass, "cart_mass", lower=0.0, strict=True), B.real(pole_mass, "pole_mass", lower=0.0, strict=True)], np.array([[1.0], [0.0]]), u_max)

    def mass_positions(self, q: ca.SX) -> Sequence[ca.SX]:
        cart = ca.vertcat(0, q[0], 0)
        return [cart, cart + _rot_x_tip(q[1], self.length)]


class DoubleCartpole(PointMassChain):
    """Cartpole with a second pole on the first (relative angle), masses at the tips.

    State ``[y, theta1, theta2, y_dot, theta1_dot, theta2_dot]``, input the cart
    force. Defaults: all masses and lengths 1.
    """

    name = "double_cartpole"
    has_cart = True

    def __init__(self, masses: Sequence[float] = (1.0, 1.0, 1.0), lengths: Sequence[float] = (1.0, 1.0), u_max: float = np.inf) -> None:
        self.lengths = tuple(B.real(l, "lengths", lower=0.0, strict=True) for l in lengths)
        super().__init__(masses, np.array([[1.0], [0.0], [0.0]]), u_max)

    def mass_positions(self, q: ca.SX) -> Sequence[ca.SX]:
        cart = ca.vertcat(0, q[0], 0)
        p1 = cart + _rot_x_tip(q[1], self.lengths[0])
        return [cart, p1, p1 + _rot_x_tip(q[1] + q[2], self.lengths[1])]
