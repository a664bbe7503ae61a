"""crocoddyl's and mim-solvers' Go1 trot and jump, timed and checked: the peers of ``bench/go1_trot.py``.

Runs INSIDE the benchmark-only environment (``bash bench/crocoddyl_env.sh``
creates it and prints its python): this script imports numpy, pinocchio 3,
crocoddyl, mim-solvers and ``bench/contact_checks.py``, never the project.
``bench/go1_trot.py`` starts it as a subprocess and reads the JSON it prints on
its last line.

Problems (``crocoddyl.utils.quadruped.SimpleQuadrupedalGaitProblem``, an
example helper of crocoddyl, not its stable API), on the Go1 URDF given with
``--urdf`` (``go1_trot.py`` passes OUR environment's example-robot-data file,
so both sides load the same robot; the free-flyer model is built with
``pinocchio.buildModelFromUrdf``) and the standing configuration ``--q0`` (in
OUR convention ``[x, y, z, qw, qx, qy, qz, 12 joints in pinocchio's order]``,
moved to pinocchio's ``[qx, qy, qz, qw]`` here; the initial state, at rest):

- ``trot``: ``createTrottingProblem``, step 0.15 m, step height 0.08 m,
  dt 0.02 s, 13 step knots, 2 support knots: one cycle of 30 contact-dynamics
  intervals and a touchdown impulse model after each swing (32 action models),
  like ``go1-trot``. Each case gives the friction coefficient ``mu`` (the
  helper's, used by its friction-cone costs and by our constraints) and
  ``torque_scale``, which scales the URDF effort limits of the pinocchio model
  before the helper builds its models (so BoxFDDP's control boxes, which
  crocoddyl's contact dynamics take from the model, are the scaled limits).
- ``jump``: ``createJumpingProblem`` matched to ``go1-jump`` as far as the
  helper allows: forward 0.2 m (``jumpLength = [0.2, 0, 0]``), dt 0.02 s,
  15 ground models before and after the flight and 5 + 5 flying ones, with
  the landing impulse model between flight and landing; the last landed model
  is the terminal one, so 40 running models: 39 contact-dynamics intervals
  (0.3 s push-off, 0.2 s flight, 0.28 s landed), the 39 intervals of
  ``go1-jump``'s 40 knots (15 crouch, 10 flight, 15 landing). Differences:
  the helper asks for a CoM ``jumpHeight`` (0.05 m, our feet's mid-flight apex) above its standing
  height at the end of the upward half of the flight as a COST (weight 1e6)
  where ``go1-jump`` constrains the feet to be 0.05 m high at mid-flight; its
  flight has no CoM task in the downward half, its landing is an impulse
  model with foot-placement costs where ours is a touchdown at rest on the
  new footholds, every target is a cost, not a constraint, and its cost
  weights are its own.

Solvers (each started like crocoddyl's examples: ``xs = [x0] * (T + 1)``,
``us = problem.quasiStatic(...)``, at most ``--max-iter`` iterations):

- ``fddp``: FDDP on the helper's problem: friction cones, state bounds and
  foot targets are penalties; no torque limits;
- ``boxfddp``: BoxFDDP, the same problem with the controls boxed by the
  (scaled) torque limits;
- ``csqp``, ``csqp/tight-qp``, ``csqp/loose-qp``: mim-solvers' SolverCSQP on
  the same costs with HARD path constraints on every contact-dynamics model
  (a ``crocoddyl.ConstraintModelManager``, as mim-solvers' examples do): per
  stance foot the friction pyramid of the case's ``mu`` with its unilateral
  row (``ResidualModelContactFrictionCone`` with ``FrictionCone(I, mu, 4,
  inner_appr=False)``: ``|f_x|, |f_y| <= mu f_z``, ``f_z >= 0``), and the
  torque limits (``ResidualModelControl`` between the scaled limits). The
  terminal model has no constraints (a running model reused as terminal
  model leaves CSQP with an uninitialised constraint norm), impulse models
  neither. Termination tolerance 1e-3 on CSQP's KKT residual (below ~1e-3 it
  stalls: its inner ADMM QP stops at its iteration limit); QP settings:
  mim-solvers' defaults (``eps_abs = eps_rel = 1e-4``, 1000 QP iterations),
  tight (``eps_abs`` 1e-6, ``eps_rel`` 0) and loose (``eps_abs = eps_rel =
  1e-3``); the JSON lists every setting as read back from the solver.

Without ``--cases`` the trots run all five and the jump BoxFDDP, FDDP and
CSQP with the default QP settings (:data:`DEFAULT_CASES`).

Measured here, not taken from the solvers: after the last solve the script
evaluates the problem at the returned ``(xs, us)`` and reads each stance
foot's contact force from its contact data (``fext``, the force in the foot's
parent-joint frame, rotated to the WORLD frame with that joint's placement:
the world-aligned ``f`` of the helper's ``LOCAL_WORLD_ALIGNED`` contacts,
whatever the contact's reference frame); it checks those forces against the dynamics (``rnea(q, v, a) - tau = sum_i
J_i^T f_i`` with pinocchio's world-aligned foot Jacobians and the models'
accelerations, ``dynamics_residual``), then reports the worst friction and
torque violations (:mod:`contact_checks`, the code that checks our own rows),
the largest ``|u| / limit`` and the largest dynamics gap ``|x_{k+1} (-)
f(x_k, u_k)|_inf``. Impulse models carry impulses, not forces, and are not
checked for friction.

Timing: problem construction (helper + shooting problem + solver) is reported
apart from ``solve``; each of the ``--repeat`` solves runs on a fresh solver
object (CSQP keeps its QP duals from one solve to the next) from the same
initial guess, and the median is reported.

    python bench/crocoddyl_peers.py --urdf PATH --q0 '[0, 0, 0.27, 1, 0, ...]' [--repeat 7] [--cases JSON]
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any, Dict, List, Tuple

import numpy as np
import pinocchio as pin
import crocoddyl  # noqa: I001  (pinocchio, then crocoddyl, then mim_solvers: the wheels' libraries load in that order)
import mim_solvers
from crocoddyl.utils.quadruped import SimpleQuadrupedalGaitProblem

sys.path.insert(0, str(Path(__file__).resolve().parent))
from contact_checks import friction_violation, torque_ratio, torque_violation  # noqa: E402

FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")  # the helper's lf, rf, lh, rh feet
#: ``createTrottingProblem``'s arguments: go1-trot's gait.
TROT = {"stepLength": 0.15, "stepHeight": 0.08, "timeStep": 0.02, "stepKnots": 13, "supportKnots": 2}
#: ``createJumpingProblem``'s arguments: go1-jump's timing, length and apex (module docstring).
JUMP = {"jumpHeight": 0.05, "jumpLength": [0.2, 0.0, 0.0], "timeStep": 0.02, "groundKnots": 15, "flyingKnots": 5}
#: CSQP's termination tolerance on its KKT residual (module docstring).
CSQP_TOLERANCE = 1e-3
#: Solver name -> (class, settings, hard constraints).
SOLVERS: Dict[str, Tuple[Any, Dict[str, float], bool]] = {
    "fddp": (crocoddyl.SolverFDDP, {}, False),
    "boxfddp": (crocoddyl.SolverBoxFDDP, {}, False),
    "csqp": (mim_solvers.SolverCSQP, {"termination_tolerance": CSQP_TOLERANCE}, True),
    "csqp/tight-qp": (mim_solvers.SolverCSQP, {"termination_tolerance": CSQP_TOLERANCE, "eps_abs": 1e-6, "eps_rel": 0.0}, True),
    "csqp/loose-qp": (mim_solvers.SolverCSQP, {"termination_tolerance": CSQP_TOLERANCE, "eps_abs": 1e-3, "eps_rel": 1e-3}, True),
}
#: CSQP settings read back into the JSON.
CSQP_SETTINGS = ("termination_tolerance", "eps_abs", "eps_rel", "max_qp_iters", "rho_sparse", "rho_update_interval", "use_filter_line_search", "equality_qp_initial_guess", "mu_dynamic", "mu_constraint")
#: The cases run without ``--cases``: go1_trot.py's nominal and constrained trots and the jump.
DEFAULT_CASES = [
    {"name": "trot", "gait": "trot", "mu": 0.7, "torque_scale": 1.0, "solvers": ["fddp", "boxfddp", "csqp", "csqp/tight-qp", "csqp/loose-qp"]},
    {"name": "trot-constrained", "gait": "trot", "mu": 0.3, "torque_scale": 0.6, "solvers": ["fddp", "boxfddp", "csqp", "csqp/tight-qp", "csqp/loose-qp"]},
    {"name": "jump", "gait": "jump", "mu": 0.7, "torque_scale": 1.0, "solvers": ["boxfddp", "fddp", "csqp"]},
]


def peak_rss_mb() -> float:
    """Peak resident memory of this process (MB): ``VmHWM`` (``ru_maxrss`` would inherit the parent's through exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return float(line.split()[1]) / 1024.0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def own_urdf() -> Path:
    """This environment's example-robot-data Go1 URDF (under the cmeel prefix of pinocchio's install)."""
    for parent in Path(pin.__file__).resolve().parents:
        candidate = parent / "share" / "example-robot-data" / "robots" / "go1_description" / "urdf" / "go1.urdf"
        if candidate.is_file():
            return candidate
    raise FileNotFoundError("urdf: no example-robot-data Go1 URDF in this environment; pass --urdf")


def to_pinocchio(q: List[float], nq: int) -> np.ndarray:
    """Our ``[p, qw, qx, qy, qz, joints]`` as pinocchio's ``[p, qx, qy, qz, qw, joints]``."""
    q = np.asarray(q, dtype=float)
    if q.shape != (nq,):
        raise ValueError(f"q0: expected {nq} entries, got shape {q.shape}")
    return np.concatenate([q[:3], q[4:7], q[3:4], q[7:]])


def load_model(urdf: Path, q0: List[float], torque_scale: float) -> Tuple[pin.Model, np.ndarray]:
    """The free-flyer Go1 with its joint effort limits scaled by ``torque_scale``, and the standing state."""
    model = pin.buildModelFromUrdf(str(urdf), pin.JointModelFreeFlyer())
    model.effortLimit = np.concatenate([model.effortLimit[:6], torque_scale * model.effortLimit[6:]])
    q = to_pinocchio(q0, model.nq)
    model.referenceConfigurations["standing"] = q
    return model, np.concatenate([q, np.zeros(model.nv)])


def with_hard_constraints(model: crocoddyl.ActionModelAbstract, mu: float, limits: np.ndarray) -> crocoddyl.ActionModelAbstract:
    """A copy of a contact-dynamics model (same contacts and costs) with the friction pyramids of its
    stance feet and the torque limits as constraints (module docstring); impulse models as they are."""
    if not isinstance(model, crocoddyl.IntegratedActionModelEuler):
        return model
    dam = model.differential
    state, nu = dam.state, dam.nu
    constraints = crocoddyl.ConstraintModelManager(state, nu)
    for name, item in dam.contacts.contacts.todict().items():
        cone = crocoddyl.FrictionCone(np.eye(3), mu, 4, False)
        residual = crocoddyl.ResidualModelContactFrictionCone(state, item.contact.id, cone, nu, True)
        constraints.addConstraint(f"{name}_pyramid", crocoddyl.ConstraintModelResidual(state, residual, cone.lb, cone.ub))
    constraints.addConstraint("torque_limits", crocoddyl.ConstraintModelResidual(state, crocoddyl.ResidualModelControl(state, nu), -limits, limits))
    hard = crocoddyl.DifferentialActionModelContactFwdDynamics(state, dam.actuation, dam.contacts, dam.costs, constraints, 0.0, True)
    return crocoddyl.IntegratedActionModelEuler(hard, model.dt)


def build_problem(model: pin.Model, x0: np.ndarray, case: Dict[str, Any], hard: bool) -> crocoddyl.ShootingProblem:
    """The case's shooting problem from a fresh helper; with ``hard`` the CSQP form (module docstring)."""
    gait = SimpleQuadrupedalGaitProblem(model, *FEET)
    gait.mu = case["mu"]
    if case["gait"] == "trot":
        problem = gait.createTrottingProblem(x0, **TROT)
    elif case["gait"] == "jump":
        problem = gait.createJumpingProblem(x0, **{**JUMP, "jumpLength": list(JUMP["jumpLength"])})
    else:
        raise ValueError(f"cases: gait expected 'trot' or 'jump', got {case['gait']!r}")
    if not hard:
        return problem
    running = [with_hard_constraints(m, case["mu"], model.effortLimit[6:]) for m in problem.runningModels]
    return crocoddyl.ShootingProblem(x0, running, problem.terminalModel)


def make_solver(name: str, problem: crocoddyl.ShootingProblem) -> Any:
    cls, settings, _ = SOLVERS[name]
    solver = cls(problem)
    for key, value in settings.items():
        setattr(solver, key, value)
    return solver


def check_solution(model: pin.Model, problem: crocoddyl.ShootingProblem, xs: List[np.ndarray], us: List[np.ndarray], mu: float) -> Dict[str, float]:
    """Friction, torque and dynamics checks of ``(xs, us)`` computed here (module docstring)."""
    problem.calc(xs, us)
    data = model.createData()
    forces, torques, residual, gap = [], [], 0.0, 0.0
    for k, (m, d) in enumerate(zip(problem.runningModels, problem.runningDatas)):
        gap = max(gap, float(np.max(np.abs(m.state.diff(d.xnext, xs[k + 1])))))
        if not isinstance(m, crocoddyl.IntegratedActionModelEuler):
            continue  # an impulse model: no controls, impulses instead of forces
        torques.append(np.asarray(us[k]))
        dd, nq = d.differential, model.nq
        q, v = xs[k][:nq], xs[k][nq:]
        pin.computeJointJacobians(model, data, q)
        pin.updateFramePlacements(model, data)
        generalized = pin.rnea(model, data, q, v, dd.xout) - dd.multibody.actuation.tau
        contact_datas = dd.multibody.contacts.contacts.todict()
        for name, item in m.differential.contacts.contacts.todict().items():
            joint = model.frames[item.contact.id].parentJoint
            f_world = dd.multibody.pinocchio.oMi[joint].rotation @ contact_datas[name].fext.linear
            forces.append(f_world)
            generalized -= pin.getFrameJacobian(model, data, item.contact.id, pin.LOCAL_WORLD_ALIGNED)[:3].T @ f_world
        residual = max(residual, float(np.max(np.abs(generalized))))
    limits = model.effortLimit[6:]
    F, U = np.reshape(forces, (-1, 3)), np.reshape(torques, (-1, len(limits)))
    return {
        "friction_violation_n": friction_violation(F, mu),
        "torque_violation_nm": torque_violation(U, limits),
        "torque_ratio": torque_ratio(U, limits),
        "min_normal_force_n": float(F[:, 2].min()) if len(F) else 0.0,
        "dynamics_residual": residual,
        "max_gap": gap,
    }


def run(model: pin.Model, x0: np.ndarray, case: Dict[str, Any], solver_name: str, repeat: int, max_iter: int) -> Dict[str, Any]:
    """Construction time, median solve time and the checked solution of one solver on one case."""
    if solver_name not in SOLVERS:
        raise ValueError(f"cases: solver expected one of {list(SOLVERS)}, got {solver_name!r}")
    hard = SOLVERS[solver_name][2]
    start = time.perf_counter()
    problem = build_problem(model, x0, case, hard)
    solver = make_solver(solver_name, problem)
    construction = time.perf_counter() - start
    csqp = isinstance(solver, mim_solvers.SolverCSQP)
    settings = {key: getattr(solver, key) for key in CSQP_SETTINGS} if csqp else {}  # before rho adapts
    times = []
    for r in range(repeat):
        if r:
            solver = make_solver(solver_name, problem)  # untimed: every solve starts cold
        xs, us = [x0] * (problem.T + 1), problem.quasiStatic([x0] * problem.T)
        start = time.perf_counter()
        converged = bool(solver.solve(xs, us, max_iter, False))
        times.append(time.perf_counter() - start)
    result = {
        "solver": solver_name,
        "hard_constraints": hard,
        "models": int(problem.T),
        "construction_s": construction,
        "solve_s": statistics.median(times),
        "solve_samples_s": times,
        "iterations": int(solver.iter),
        "converged": converged,
        "stop_name": "KKT" if csqp else "stop",
        "stop": float(solver.KKT if csqp else solver.stop),
        "cost": float(solver.cost),
        **check_solution(model, problem, list(solver.xs), list(solver.us), case["mu"]),
    }
    if csqp:
        result["settings"] = settings
        result["qp_iterations_last"] = int(solver.qp_iters)
    return result


def main(argv: List[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urdf", type=Path, default=None, help="Go1 URDF (default: this environment's example-robot-data)")
    parser.add_argument("--q0", required=True, help="standing configuration, JSON list in our convention (qw first)")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--max-iter", type=int, default=100)
    parser.add_argument("--cases", default=None, help='JSON list of {"name", "gait": trot|jump, "mu", "torque_scale", "solvers": [...]} (default: trot, trot-constrained, jump)')
    args = parser.parse_args(argv)
    urdf = args.urdf or own_urdf()
    cases = json.loads(args.cases) if args.cases else DEFAULT_CASES
    out = []
    for case in cases:
        model, x0 = load_model(urdf, json.loads(args.q0), float(case["torque_scale"]))
        results = [run(model, x0, case, name, args.repeat, args.max_iter) for name in case["solvers"]]
        out.append({**case, "torque_limits": model.effortLimit[6:].tolist(), "results": results})
    versions = {name: version(name) for name in ("crocoddyl", "pin", "mim-solvers", "example-robot-data")}
    versions["python"] = sys.version.split()[0]
    print(json.dumps({"urdf": str(urdf), "urdf_source": "argument" if args.urdf else "own", "versions": versions, "rss_peak_mb": peak_rss_mb(), "cases": out}))


if __name__ == "__main__":
    main()
