"""Go1 dynamics: our CasADi functions (virtual machine and compiled C) against pinocchio.

For each function (forward dynamics, its Jacobian, inverse dynamics, its
Jacobian, the four feet's position Jacobian) the table gives

- ``instr``: SX instructions of the CasADi function, ``build s``: time to build it,
- ``codegen s`` / ``gcc s``: time to generate its C and to compile it (fresh cache),
- ``VM/eval``, ``C/eval``: cost per evaluation inside CasADi, one call of
  ``Function.map`` over ``--points`` stacked inputs divided by their number,
- ``VM/call``, ``C/call``: cost of one call of the public method from Python
  with numpy arguments (validation and numpy <-> DM conversion included),
- ``pin/call``: the peer's cost per call from Python (``timeit``).

Every time is the median of ``--repeat`` samples, in microseconds unless the
header says seconds; a row's samples are taken round-robin, so that load
changes on the machine hit ours and pinocchio's alike. The machine is shared and noisy: compare rows of one run
only. The last line gives the ratios ``C/eval / pin/call`` (the issue's
targets: forward dynamics <= 0.7, its Jacobian <= 1.0 with gcc <= 10 s, the
inverse-dynamics Jacobian <= 1.0). ``--structures``
adds the forward-dynamics Jacobian built as the automatic derivative of the
articulated-body algorithm (instead of the RNEA identity the model uses), at
-O1 and -O3, to show why the model does not use it. ``--contact`` times the
KKT contact dynamics of :mod:`models.multibody.contact` (the legged contact
formulation's dynamics, stance mask symbolic) and its Jacobian two ways,
automatic differentiation of the factorized solve and the RNEA identity,
against pinocchio's ``constraintDynamics`` and
``computeConstraintDynamicsDerivatives`` (4 feet in stance).

    python bench/dynamics.py [--points 1000] [--repeat 7] [--opt -O1] [--structures] [--contact]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import timeit
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import casadi as ca  # noqa: E402
import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402

from models.compiled import build_library  # noqa: E402
from models.multibody_model import MultibodyModel  # noqa: E402
from models.robot_data import urdf_path  # noqa: E402

FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")


@dataclass
class Row:
    """One function's measurements (seconds)."""

    key: str
    peer: str
    instructions: int
    build_s: float
    codegen_s: float
    gcc_s: float
    vm_eval: float
    c_eval: float
    vm_call: float
    c_call: float
    pin_call: float


def seconds_per_call(fn: Callable[[], object], number: int) -> Callable[[], float]:
    """A timer: seconds per call of ``fn`` over ``number`` calls."""
    return lambda: timeit.timeit(fn, number=number) / number


def seconds_per_evaluation(f: ca.Function, inputs: Sequence[ca.DM], points: int) -> Callable[[], float]:
    """A timer: seconds per evaluation of ``f`` inside CasADi, one mapped call over ``points`` columns."""
    mapped = f.map(points)
    mapped(*inputs)  # warm up
    return lambda: timeit.timeit(lambda: mapped(*inputs), number=1) / points


def interleaved(timers: dict[str, Callable[[], float]], repeat: int) -> dict[str, float]:
    """Median of ``repeat`` samples of each timer, run round-robin so load changes hit all alike."""
    samples: dict[str, list[float]] = {k: [] for k in timers}
    for _ in range(repeat):
        for k, timer in timers.items():
            samples[k].append(timer())
    return {k: statistics.median(v) for k, v in samples.items()}


def compile_stats(f: ca.Function, opt: str, cache: str) -> tuple[float, float, ca.Function]:
    """Codegen and compiler seconds of ``f`` (``cache`` must not hold it yet), and the loaded library."""
    lib = build_library(f, opt=opt, cache_dir=cache)
    assert lib.built, f"{f.name()} was already in {cache}"
    return lib.codegen_seconds, lib.compile_seconds, lib.load()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=1000, help="stacked inputs per mapped call")
    parser.add_argument("--repeat", type=int, default=7, help="samples per timing (median reported)")
    parser.add_argument("--opt", default="-O1", help="optimization flag of the compiled functions")
    parser.add_argument("--structures", action="store_true", help="also time the AD-of-ABA forward-dynamics Jacobian")
    parser.add_argument("--contact", action="store_true", help="also time the KKT contact dynamics and their Jacobians")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    n, rep = args.points, args.repeat

    model = MultibodyModel.from_urdf(urdf_path("go1"), kinematics_bodies=FEET, name="go1")
    pm, data = model.pin_model, model.pin_model.createData()
    X = np.column_stack([model.randn_state(rng) for _ in range(n)])
    columns = {"x": X, "tau": rng.standard_normal((model.nv, n)), "vdot": rng.standard_normal((model.nv, n)), "f": np.zeros((12, n))}
    x, tau, acc = X[:, 0], columns["tau"][:, 0], columns["vdot"][:, 0]
    q, v = model.change_order(x[: model.nq], "nominal", "pinocchio"), x[model.nq :]
    fids = [pm.getFrameId(f) for f in FEET]

    def foot_jacobians() -> list:
        pin.computeJointJacobians(pm, data, q)
        pin.updateFramePlacements(pm, data)
        return [pin.getFrameJacobian(pm, data, f, pin.LOCAL_WORLD_ALIGNED) for f in fids]

    peers = {
        "forward_dynamics": ("aba", lambda: pin.aba(pm, data, q, v, tau), lambda m: m.forward_dynamics(x, tau)),
        "forward_dynamics_deriv": ("computeABADerivatives", lambda: pin.computeABADerivatives(pm, data, q, v, tau), lambda m: m.forward_dynamics_deriv(x, tau)),
        "inverse_dynamics": ("rnea", lambda: pin.rnea(pm, data, q, v, acc), lambda m: m.inverse_dynamics(x, acc)),
        "inverse_dynamics_deriv": ("computeRNEADerivatives", lambda: pin.computeRNEADerivatives(pm, data, q, v, acc), lambda m: m.inverse_dynamics_deriv(x, acc)),
        "kinematics_jacobian": ("getFrameJacobian x4", foot_jacobians, lambda m: m.kinematics_jacobian(x)),
    }
    compiled = MultibodyModel.from_urdf(urdf_path("go1"), kinematics_bodies=FEET, name="go1")
    rows = []
    cache = tempfile.TemporaryDirectory()  # fresh, so that every function is compiled and timed
    for key, (peer, pin_call, our_call) in peers.items():
        t0 = time.perf_counter()
        f = model.casadi_function(key)
        build_s = time.perf_counter() - t0
        inputs = [ca.DM(columns[name]) for name in f.name_in()]
        codegen_s, gcc_s, fast = compile_stats(f, args.opt, cache.name)
        compiled.compile([key], opt=args.opt, cache_dir=cache.name)  # a cache hit: the library just built
        times = interleaved(
            {
                "vm_eval": seconds_per_evaluation(f, inputs, n),
                "c_eval": seconds_per_evaluation(fast, inputs, n),
                "vm_call": seconds_per_call(lambda: our_call(model), 200),
                "c_call": seconds_per_call(lambda: our_call(compiled), 200),
                "pin_call": seconds_per_call(pin_call, 2000),
            },
            rep,
        )
        rows.append(Row(key, peer, f.n_instructions(), build_s, codegen_s, gcc_s, **times))
    cache.cleanup()

    print(f"Go1 (nq {model.nq}, nv {model.nv}), {n} mapped evaluations, compiled with gcc {args.opt}; medians of {rep}; times in us")
    header = f"{'function':24s} {'instr':>6s} {'build s':>8s} {'codegen s':>9s} {'gcc s':>6s} {'VM/eval':>8s} {'C/eval':>7s} {'VM/call':>8s} {'C/call':>7s} {'pin/call':>8s}  peer"
    print(header)
    for r in rows:
        print(
            f"{r.key:24s} {r.instructions:6d} {r.build_s:8.3f} {r.codegen_s:9.2f} {r.gcc_s:6.2f} {1e6 * r.vm_eval:8.2f} {1e6 * r.c_eval:7.2f} "
            f"{1e6 * r.vm_call:8.1f} {1e6 * r.c_call:7.1f} {1e6 * r.pin_call:8.2f}  {r.peer}"
        )
    if args.structures:
        print_structures(model, columns, n, rep)
    if args.contact:
        print_contact(model, X, n, rep, args.opt)
    ratios = ", ".join(f"{r.key} {r.c_eval / r.pin_call:.2f}" for r in rows)
    print(f"ratios (ours compiled per evaluation / pinocchio per call): {ratios}")
    return 0


def print_structures(model: MultibodyModel, columns: dict, n: int, rep: int) -> None:
    """The forward-dynamics Jacobian two ways, each at -O1 and -O3."""
    x, tau, f = ca.SX.sym("x", model.nx), ca.SX.sym("tau", model.nv), ca.SX.sym("f", 3 * model.nc)
    vdot = model.forward_dynamics(x, tau, f)
    ad = ca.Function("go1_aba_ad_jacobian", [x, tau, f], [ca.jacobian(vdot, x), ca.jacobian(vdot, tau)], ["x", "tau", "f"], ["o0", "o1"], {"cse": True})
    identity = model.casadi_function("forward_dynamics_deriv")
    inputs = [ca.DM(columns[name]) for name in ("x", "tau", "f")]
    print("\nforward-dynamics Jacobian structures (gcc seconds, C/eval in us)")
    for label, fn in (("AD of the ABA", ad), ("RNEA identity + tree-sparse M^-1 (model)", identity)):
        cells = []
        for opt in ("-O1", "-O3"):
            with tempfile.TemporaryDirectory() as cache:
                _, gcc_s, fast = compile_stats(fn, opt, cache)
            per_eval = interleaved({"c": seconds_per_evaluation(fast, inputs, n)}, rep)["c"]
            cells.append(f"{opt}: gcc {gcc_s:5.1f} s, {1e6 * per_eval:6.2f} us")
        print(f"  {label:42s} {fn.n_instructions():6d} instr | " + " | ".join(cells))


def print_contact(model: MultibodyModel, X: np.ndarray, n: int, rep: int, opt: str) -> None:
    """The KKT contact dynamics, their Jacobian by AD and by the RNEA identity, against pinocchio (4 feet in stance).

    All three are compiled first; then their timers and pinocchio's run round-robin, as the rows of the main table do.
    """
    from models.multibody.contact import contact_dynamics_function

    kkt = contact_dynamics_function(model.tree, model._dof_parents, FEET, model.B_func(), "go1_kkt")
    xs, us, ss = ca.SX.sym("x", model.nx), ca.SX.sym("u", model.nu), ca.SX.sym("s", 4)
    a, f = kkt(xs, us, ss)  # inlined: automatic differentiation through the factorized solve
    ad = ca.Function("go1_kkt_ad_jacobian", [xs, us, ss], [ca.jacobian(ca.vertcat(a, f), ca.vertcat(xs, us))], {"cse": True})
    X_mx, U_mx, S_mx = ca.MX.sym("x", model.nx), ca.MX.sym("u", model.nu), ca.MX.sym("s", 4)
    a_mx, f_mx = kkt(X_mx, U_mx, S_mx)  # a call node: CasADi uses the custom (RNEA-identity) Jacobian
    identity = ca.Function("go1_kkt_identity_jacobian", [X_mx, U_mx, S_mx], [ca.jacobian(ca.vertcat(a_mx, f_mx), ca.vertcat(X_mx, U_mx))]).expand()
    rng = np.random.default_rng(1)
    U, S = rng.standard_normal((model.nu, n)), np.ones((4, n))
    inputs = [ca.DM(X), ca.DM(U), ca.DM(S)]
    pm, data = model.pin_model, model.pin_model.createData()
    q, v, tau = model.change_order(X[: model.nq, 0], "nominal", "pinocchio"), X[model.nq :, 0], model.B_func() @ U[:, 0]
    frames = [pm.frames[pm.getFrameId(name)] for name in FEET]
    contacts = pin.StdVec_RigidConstraintModel([pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, pm, fr.parentJoint, fr.placement, pin.LOCAL_WORLD_ALIGNED) for fr in frames])
    datas = pin.StdVec_RigidConstraintData([c.createData() for c in contacts])
    pin.initConstraintDynamics(pm, data, contacts, datas)

    def derivatives() -> None:
        pin.constraintDynamics(pm, data, q, v, tau, contacts, datas)
        pin.computeConstraintDynamicsDerivatives(pm, data, contacts, datas)

    print(f"\nKKT contact dynamics (4 feet in stance, mask symbolic; gcc {opt}; us per evaluation)")
    timers = {
        "dynamics": seconds_per_call(lambda: pin.constraintDynamics(pm, data, q, v, tau, contacts, datas), 2000),
        "derivatives": seconds_per_call(derivatives, 2000),
    }
    variants = (("forward (a, f)", kkt, "dynamics"), ("Jacobian, AD of the solve", ad, "derivatives"), ("Jacobian, RNEA identity (model)", identity, "derivatives"))
    gcc_seconds = {}
    with tempfile.TemporaryDirectory() as cache:
        for label, fn, _ in variants:
            _, gcc_seconds[label], fast = compile_stats(fn, opt, cache)
            timers[label] = seconds_per_evaluation(fast, inputs, n)
        times = interleaved(timers, rep)  # ours and pinocchio's round-robin: a load change hits both
    for label, fn, peer in variants:
        ratio = times[label] / times[peer]
        print(f"  {label:34s} {fn.n_instructions():7d} instr  gcc {gcc_seconds[label]:5.1f} s  C/eval {1e6 * times[label]:7.2f}  pinocchio {peer} {1e6 * times[peer]:6.2f}  ratio {ratio:.2f}")


if __name__ == "__main__":
    sys.exit(main())
