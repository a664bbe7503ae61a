"""Contact simulation of capsule pairs: Gauss's principle QP, Baumgarte stabilization, inelastic impacts.

The loop of pinocchio's "snap your fingers" tutorial, with the physical
(mass-weighted) impact model and a stabilized contact constraint by default,
and the tutorial's own choices one option away (see "The tutorial's choices").
At each step ``k`` (time ``t_k``, state ``(q, v)``):

1. ``tau = controller(t_k, x)`` (nv,) (or ``u`` (nu,), mapped by ``B``).
2. Every collision pair is checked; pairs with signed distance
   ``d < threshold`` are active. Each active pair has a distance Jacobian row
   ``J_i`` (1 x nv) and a drift ``Jdot_i v`` (:mod:`trajopt.sim.capsules`).
3. Impact: when a pair becomes active (it was not at the previous step),
   the velocity jumps to the closest velocity, in the kinetic-energy metric,
   that no active pair approaches with (inelastic impact):

       v+ = argmin 1/2 (w - v)^T M (w - v)   s.t.  J w >= 0   (all active pairs).

   The multipliers are the normal impulses ``M (v+ - v) = J^T Lambda``,
   ``Lambda >= 0``. (The tutorial's projection ``v - J^+ J v`` is this QP with
   ``M = I`` and every constraint kept as an equality.)
4. Acceleration by Gauss's principle of least constraint: with the free
   acceleration ``a0 = M^-1 (tau - C(q, v))``,

       a = argmin 1/2 (a - a0)^T M (a - a0)
           s.t.  J a + Jdot v >= -k d - kd J v      (active pairs),

   i.e. each pair's distance obeys ``d_ddot >= -k d - kd d_dot`` (Baumgarte
   stabilization, ``k`` = ``stiffness`` in 1/s^2, ``kd`` = ``damping`` in 1/s,
   default ``2 sqrt(k)``). The multipliers ``lambda >= 0`` with
   ``M (a - a0) = J^T lambda`` are the normal contact forces (N), pushing the
   capsules apart along the pair normal.
5. Semi-implicit Euler: ``v <- v+ + a dt``, ``q <- integrate(q, v dt)``
   (:func:`trajopt.sim.integrate`).

The tutorial's choices. ``impact_model="projection"`` replaces step 3 by the
tutorial's ``v+ = v - J^+ J v`` (``J^+`` the pseudo-inverse of the stacked
active rows), and ``contact_constraint="distance"`` the constraint of step 4
by the tutorial's ``J a >= -d``. They are not the defaults because

- the projection ignores the mass matrix: ``M (v+ - v)`` is in general not
  ``J^T Lambda`` for any impulses, i.e. the velocity jump is not one that
  contact impulses can produce (momentum that no contact can touch changes),
  and it cancels the separating normal velocities of the active pairs too
  (an equality per pair), so a contact that was opening sticks;
- ``J a >= -d`` neglects the drift ``Jdot v`` (the tutorial says so) and
  has no velocity term: the normal velocity of a pair in contact is not
  damped, and the constraint mixes units (m/s^2 against m), so the
  penetration it tolerates depends on the units.

With both options the simulator runs exactly the tutorial's question 5 (the
hand example's test replays it step by step). :class:`Impact` then has NaN
impulses (there are none).

``contact_constraint="acceleration"`` is the tutorial's plain contact
constraint before its distance "trick": the distance of an active pair may
not accelerate toward penetration, ``d_ddot = J a + Jdot v >= 0`` (the
tutorial writes ``J a >= 0`` and says it neglects the drift ``Jdot v``; the
drift is kept here, so the constraint is exact for the pair's distance).
It has no position or velocity feedback: a pair that is already inside, or
approaching, stays so unless an impact stops it.

Both QPs are solved by ``quadprog.solve_qp(G, a, C, b)``, which minimizes
``1/2 x^T G x - a^T x`` subject to ``C^T x >= b``: here ``G = M``,
``a = M x0``, ``C = J^T``. A QP quadprog reports infeasible (e.g. two pairs
asking for opposite motions of a locked joint) ends the simulation with status
``"qp_infeasible"`` and the trajectory up to that step.

A pair within ``threshold`` but still apart (``0 < d < threshold``) is
already constrained: contact forces act across gaps below the threshold.
Contacts are detected at the steps only: a pair approaching at speed ``s``
is caught before it penetrates when ``s dt < threshold`` (the hand example:
0.95 m/s with ``dt = 1 ms`` against 1 mm); a faster approach may start
inside by up to ``s dt - threshold``, then pushed out by the Baumgarte term.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, List, Optional, Tuple

import numpy as np
import quadprog

from models.multibody_model import MultibodyModel

from .capsules import CapsuleCollisions, CapsuleDistance, PairContact
from .integrate import integrate
from .simulate import ControllerFn, controller_output, num_steps

#: Default activation distance (m).
DEFAULT_THRESHOLD = 1e-3
#: Default Baumgarte stiffness ``k`` (1/s^2).
DEFAULT_STIFFNESS = 1e3
#: Impact models: the kinetic-energy (mass-weighted) QP, or the tutorial's projection ``v - J^+ J v``.
IMPACT_MODELS = ("mass_weighted", "projection")
#: Contact constraints: Baumgarte-stabilized with the drift, the tutorial's ``J a >= -d``, or the plain
#: unilateral acceleration constraint ``J a + Jdot v >= 0``.
CONTACT_CONSTRAINTS = ("baumgarte", "distance", "acceleration")


class ContactQPError(RuntimeError):
    """quadprog could not solve a contact or impact QP (infeasible constraints)."""


def solve_projection_qp(M: np.ndarray, x0: np.ndarray, J: np.ndarray, b: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """``x = argmin 1/2 (x - x0)^T M (x - x0)`` s.t. ``J x >= b``, and its multipliers.

    ``M`` (n x n) symmetric positive definite, ``J`` (m x n), ``b`` (m,).
    Returns ``(x, lam)`` with ``lam >= 0`` (m,) and ``M (x - x0) = J^T lam``.
    Raises :class:`ContactQPError` when quadprog reports the constraints
    inconsistent (or ``M`` not positive definite).
    """
    if J.shape[0] == 0:
        return x0.copy(), np.zeros(0)
    try:
        x, _, _, _, lam, _ = quadprog.solve_qp(M, M @ x0, J.T, b, 0)
    except ValueError as err:
        raise ContactQPError(f"quadprog: {err} ({J.shape[0]} constraints)") from err
    return x, np.maximum(lam, 0.0)


@dataclass(frozen=True, eq=False)
class Impact:
    """An inelastic impact at the start of step ``step`` (time ``time``).

    ``new_pairs``: pairs that became active; ``pairs``: every active pair (the
    QP's constraints), with their normal velocities ``J v`` before and after
    (m/s) and the impulses (N s), all in the order of ``pairs``.
    """

    step: int
    time: float
    new_pairs: Tuple[int, ...]
    pairs: Tuple[int, ...]
    normal_velocity_before: np.ndarray
    normal_velocity_after: np.ndarray
    impulses: np.ndarray  # NaN for the "projection" impact model, which has none


@dataclass
class ContactSimResult:
    """A contact simulation.

    ``times`` (K+1,), ``states`` (K+1, nx), ``torques`` (K, nv) the
    generalized forces of the controller, ``distances`` (K+1, P) every pair's
    signed distance, ``witness_a``/``witness_b`` (K+1, P, 3) its witness
    points and ``normals`` (K+1, P, 3) its unit normal from a to b (world
    frame, m; :class:`trajopt.sim.CapsuleDistance`), ``active`` (K, P) the
    active set of step ``k``, ``forces`` (K, P) normal contact forces (N,
    zero for inactive pairs), ``impacts`` the :class:`Impact` events.
    ``status`` is ``"ok"``, ``"qp_infeasible"`` or ``"diverged"`` (arrays cut
    at the failing step, ``message`` says why). ``pair_names`` (P,) names
    each column; ``model`` and ``collisions`` are the model and the
    :class:`CapsuleCollisions` simulated (what :mod:`trajopt.viewer` and
    :mod:`trajopt.plotting.contact` draw).
    """

    times: np.ndarray
    states: np.ndarray
    torques: np.ndarray
    distances: np.ndarray
    active: np.ndarray
    forces: np.ndarray
    impacts: List[Impact] = field(default_factory=list)
    pair_names: List[Tuple[str, str]] = field(default_factory=list)
    status: str = "ok"
    message: str = ""
    witness_a: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 3)))
    witness_b: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 3)))
    normals: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 3)))
    collisions: Optional[CapsuleCollisions] = None
    model: Optional[MultibodyModel] = None

    @property
    def success(self) -> bool:
        """True when the simulation reached its end (status ``"ok"``)."""
        return self.status == "ok"

    @property
    def max_penetration(self) -> float:
        """Deepest penetration over the run, ``max(0, -min d)`` (m)."""
        return float(max(0.0, -np.min(self.distances))) if self.distances.size else 0.0


class ContactSimulator:
    """Time-stepping simulator of a multibody model whose capsule pairs touch without interpenetrating.

    Each step computes the joint accelerations from the controller's torques
    and, for the pairs closer than ``threshold``, a QP that keeps their
    distance from decreasing (contact forces along the normals, never
    pulling), applies inelastic impacts to the pairs that just touched, and
    integrates the state on the configuration manifold.

    ``collisions``: the model's :class:`CapsuleCollisions` (explicit pairs);
    ``threshold`` (m): activation distance; ``stiffness`` ``k`` (1/s^2) and
    ``damping`` ``kd`` (1/s, default ``2 sqrt(k)``): Baumgarte gains;
    ``impacts``: apply inelastic impacts when pairs activate;
    ``impact_model``: ``"mass_weighted"`` (default) or the tutorial's
    ``"projection"``; ``contact_constraint``: ``"baumgarte"`` (default), the
    tutorial's ``"distance"`` or its plain ``"acceleration"`` constraint
    ``J a + Jdot v >= 0`` (the defaults keep contacts from drifting
    apart and leave opening contacts free; :mod:`trajopt.sim.contact_sim` says why).
    """

    def __init__(
        self,
        model: MultibodyModel,
        collisions: CapsuleCollisions,
        threshold: float = DEFAULT_THRESHOLD,
        stiffness: float = DEFAULT_STIFFNESS,
        damping: Optional[float] = None,
        impacts: bool = True,
        impact_model: str = "mass_weighted",
        contact_constraint: str = "baumgarte",
    ) -> None:
        if not isinstance(model, MultibodyModel):
            raise ValueError(f"model: expected a MultibodyModel, got {type(model).__name__}")
        if collisions.numerics.pin_model is not model.pin_model:
            raise ValueError("collisions: built for a different model")
        for name, value in (("threshold", threshold), ("stiffness", stiffness)):
            if not (np.isfinite(value) and value >= 0):
                raise ValueError(f"{name}: expected a finite value >= 0, got {value!r}")
        for name, value, known in (("impact_model", impact_model, IMPACT_MODELS), ("contact_constraint", contact_constraint, CONTACT_CONSTRAINTS)):
            if value not in known:
                raise ValueError(f"{name}: expected one of {known}, got {value!r}")
        self.model = model
        self.collisions = collisions
        self.numerics = collisions.numerics
        self.threshold = float(threshold)
        self.stiffness = float(stiffness)
        self.damping = 2.0 * np.sqrt(self.stiffness) if damping is None else float(damping)
        self.impacts = bool(impacts)
        self.impact_model, self.contact_constraint = impact_model, contact_constraint
        self._B = model.B_func()

    def contacts(self, q: np.ndarray, v: np.ndarray) -> Tuple[np.ndarray, List[PairContact]]:
        """All signed distances (P,) and the active pairs (``d < threshold``) with Jacobians and drifts."""
        geoms, active = self._geometry(q, v)
        return np.array([g.distance for g in geoms]), active

    def _geometry(self, q: np.ndarray, v: np.ndarray) -> Tuple[List[CapsuleDistance], List[PairContact]]:
        """Every pair's distance geometry, and the active pairs with Jacobians and drifts."""
        coll = self.collisions
        coll.update(q, v)
        geoms = [coll.pair_distance(k) for k in range(coll.num_pairs)]
        return geoms, [coll.pair_contact(k, g) for k, g in enumerate(geoms) if g.distance < self.threshold]

    def impact(self, q: np.ndarray, v: np.ndarray, contacts: List[PairContact]) -> Tuple[np.ndarray, np.ndarray]:
        """Post-impact velocity ``v+`` (nv,) and impulses (len(contacts),) of an inelastic impact.

        ``"mass_weighted"``: the kinetic-energy QP ``min (v+ - v)^T M (v+ - v)`` with
        ``J_n v+ >= 0`` (impulses along the normals only, opening contacts free). ``"projection"``:
        the tutorial's ``v+ = v - J^+ J v``, impulses NaN.
        """
        J = _rows(contacts, self.numerics.nv)
        if self.impact_model == "projection":
            return v - np.linalg.pinv(J) @ (J @ v), np.full(len(contacts), np.nan)
        return solve_projection_qp(self.numerics.mass(q), v, J, np.zeros(len(contacts)))

    def acceleration(self, q: np.ndarray, v: np.ndarray, tau: np.ndarray, contacts: List[PairContact]) -> Tuple[np.ndarray, np.ndarray]:
        """Constrained acceleration (nv,) and normal contact forces (len(contacts),) by Gauss's principle.

        The constraint per active pair is ``J a + Jdot v >= -k d - kd J v``
        (``"baumgarte"``), the tutorial's ``J a >= -d`` (``"distance"``) or
        ``J a + Jdot v >= 0`` (``"acceleration"``).
        """
        a0 = self.numerics.aba(q, v, tau)
        if not contacts:
            return a0, np.zeros(0)
        J = _rows(contacts, self.numerics.nv)
        d = np.array([c.distance for c in contacts])
        if self.contact_constraint == "distance":
            rhs = -d
        elif self.contact_constraint == "acceleration":
            rhs = -np.array([c.drift for c in contacts])
        else:
            drift = np.array([c.drift for c in contacts])
            rhs = -self.stiffness * d - self.damping * (J @ v) - drift
        return solve_projection_qp(self.numerics.mass(q), a0, J, rhs)

    def simulate(self, x0: Any, controller: ControllerFn, dt: float, T: float, t0: float = 0.0) -> ContactSimResult:
        """Simulate ``T`` seconds with steps of ``dt`` seconds from state ``x0`` (our convention, nx,) at time ``t0``.

        ``controller(t, x)`` returns the actuator torques (nu,, N m) at each
        step. Returns a :class:`ContactSimResult`: states, torques, contact
        forces, distances and witness points per step, and a status.
        """
        num, P = self.numerics, self.collisions.num_pairs
        K = num_steps(dt, T)
        q, v = num.split_state(x0, "x0")
        times = t0 + dt * np.arange(K + 1)
        states, dists = np.empty((K + 1, num.nq + num.nv)), np.empty((K + 1, P))
        witness = np.empty((3, K + 1, P, 3))  # witness_a, witness_b, normals
        torques, forces, active = np.zeros((K, num.nv)), np.zeros((K, P)), np.zeros((K, P), dtype=bool)
        impacts: List[Impact] = []
        previous = np.zeros(P, dtype=bool)
        states[0] = np.concatenate([q, v])
        sizes = tuple(sorted({num.nv, self.model.nu}))
        for k in range(K):
            t = times[k]
            u = controller_output(controller(t, states[k]), sizes, t)
            tau = u if u.shape[0] == num.nv else self._B @ u
            geoms, contacts = self._geometry(q, v)
            dists[k], witness[:, k] = _record(geoms)
            idx = [c.pair for c in contacts]
            active[k, idx] = True
            try:
                new = tuple(i for i in idx if not previous[i])
                if self.impacts and new:
                    J = _rows(contacts, num.nv)
                    v_plus, impulses = self.impact(q, v, contacts)
                    impacts.append(Impact(k, t, new, tuple(idx), J @ v, J @ v_plus, impulses))
                    v = v_plus
                    dists[k], contacts = self.contacts(q, v)  # drifts at the new velocity
                a, f = self.acceleration(q, v, tau, contacts)
            except ContactQPError as err:
                return self._result(k, times, states, torques, dists, witness, active, forces, impacts, "qp_infeasible", f"t = {t:.6g} (step {k}), active pairs {idx}: {err}")
            torques[k], forces[k, idx] = tau, f
            previous = active[k]
            v = v + dt * a
            if not np.isfinite(v).all():  # blown up: integrate would refuse this velocity, so the run ends here
                return self._result(k, times, states, torques, dists, witness, active, forces, impacts, "diverged", f"non-finite velocity at step {k + 1} (t = {times[k + 1]:.6g})")
            q = integrate(num.pin_model, q, v, dt)
            states[k + 1] = np.concatenate([q, v])
            if not np.isfinite(states[k + 1]).all():
                return self._result(k, times, states, torques, dists, witness, active, forces, impacts, "diverged", f"non-finite state at step {k + 1}")
        dists[K], witness[:, K] = _record(self._geometry(q, v)[0])
        return self._result(K, times, states, torques, dists, witness, active, forces, impacts, "ok", "")

    def _result(self, n: int, times: np.ndarray, states: np.ndarray, torques: np.ndarray, dists: np.ndarray, witness: np.ndarray, active: np.ndarray, forces: np.ndarray, impacts: List[Impact], status: str, message: str) -> ContactSimResult:
        """Result cut to ``n`` completed steps (states and distances up to ``n``)."""
        names = [self.collisions.pair_names(k) for k in range(self.collisions.num_pairs)]
        wa, wb, normals = witness[:, : n + 1]
        return ContactSimResult(
            times[: n + 1], states[: n + 1], torques[:n], dists[: n + 1], active[:n], forces[:n], impacts, names, status, message,
            witness_a=wa, witness_b=wb, normals=normals, collisions=self.collisions, model=self.model,
        )  # fmt: skip


def _record(geoms: List[CapsuleDistance]) -> Tuple[np.ndarray, np.ndarray]:
    """Distances (P,) and stacked ``[witness_a, witness_b, normal]`` (3, P, 3) of every pair."""
    parts = np.array([[g.witness_a, g.witness_b, g.normal] for g in geoms]).reshape(len(geoms), 3, 3)
    return np.array([g.distance for g in geoms]), parts.transpose(1, 0, 2)


def _rows(contacts: List[PairContact], nv: int) -> np.ndarray:
    """Stacked distance Jacobians (len(contacts) x nv)."""
    return np.array([c.jacobian for c in contacts]).reshape(len(contacts), nv)
