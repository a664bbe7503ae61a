"""Bad input at every public entry point gets a clear error naming the argument (issue 15).

One table of cases over the public API: lie functions, model dynamics and
kinematics, robot constructors, ``Problem`` and its ``add_*`` methods, costs
and constraints, ``solve`` and its options, the problem registry and
``Solution.load``. Each case names the exception type it must raise and the
argument its message must name; a second table runs the CLI, which must exit
with status 2 and one line on stderr naming the option. No case may surface
an exception of CasADi or pinocchio (their messages name C++ files, not the
user's mistake): neither as the error nor as its displayed cause.
"""
from __future__ import annotations

import functools
import json
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, List, Tuple, Type

import casadi as ca
import numpy as np
import pytest

import lie
import problems
from lie import LieState, QuatState, RBState, UnitQuaternion
from models import Cartpole, DoublePendulum, FloatingBaseModel, FloatingBody, Go1, Go2, Hand, Humanoid, LeggedRobot, MultibodyModel, MultibodyQuadrotor, Pendulum, Quadrotor, WheeledBiped, pendulum_multibody
from models.hand import HandDimensions
from models.wheeled_biped import BipedDimensions
from models import pinocchio_builders as builders
from models.robot_data import load_pinocchio_model, urdf_path
from trajopt import (
    Constraint,
    FreeTime,
    FunctionCost,
    FunctionTerminalCost,
    GoalConstraint,
    IpoptSolver,
    Problem,
    QuadraticCost,
    QuadraticTerminalCost,
    Solution,
    get_integrator,
    get_transcription,
    solve,
)

REPO = Path(__file__).resolve().parents[1]
NAN, INF = float("nan"), float("inf")
#: Text that only third-party C++ errors contain.
FOREIGN = (".cpp", ".hpp", "casadi/core", "Boost.Python", "pinocchio::", "std::")


@dataclass(frozen=True)
class Case:
    """``call()`` must raise ``error`` whose message names ``argument``."""

    id: str
    call: Callable[[], Any]
    error: Type[Exception]
    argument: str


# ------------------------------------------------------------ shared objects (built once)


@functools.lru_cache(maxsize=None)
def quadrotor() -> Quadrotor:
    return Quadrotor()


@functools.lru_cache(maxsize=None)
def go1() -> Go1:
    return Go1()


@functools.lru_cache(maxsize=None)
def floating_body() -> MultibodyModel:
    return MultibodyModel(builders.floating_body_model(2.0, (0.1, 0.2, 0.3)), kinematics_bodies=["root_body"], name="floating_body")


def hover() -> np.ndarray:
    return quadrotor().build_state(np.zeros(3), np.array([1.0, 0, 0, 0]), np.zeros(3), np.zeros(3))


def quad_problem() -> Problem:
    model = quadrotor()
    return Problem(model, N=11, tf=1.0, x0=hover())


def pendulum_problem() -> Problem:
    return problems.get("pendulum", N=11)


def with_entry(x: np.ndarray, index: int, value: float) -> np.ndarray:
    x = np.array(x, dtype=float)
    x[index] = value
    return x


@functools.lru_cache(maxsize=None)
def saved_solution(folder: str) -> Path:
    """A pendulum solution saved in ``folder`` (the source of the damaged files below)."""
    path = Path(folder) / "pendulum.npz"
    if not path.exists():
        solve(pendulum_problem(), options={"max_iter": 3}).save(path)
    return path


def damaged(folder: Path, kind: str) -> Path:
    """A file that ``Solution.load`` must refuse, derived from a good solution file."""
    good = saved_solution(str(folder))
    path = folder / f"{kind}.npz"
    data = good.read_bytes()
    if kind == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "text":
        path.write_text("time,x\n0,1\n")
    elif kind == "zip":
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("readme.txt", "not numpy")
    elif kind == "npy":
        np.save(path.with_suffix(".npy"), np.zeros(3))
        path = path.with_suffix(".npy")
    elif kind == "pickle":
        np.savez(path, metadata=np.array(json.dumps({"format": "trajopt-solution-1"})), states=np.array([{"a": 1}], dtype=object))
    elif kind in ("format", "fields", "arrays", "json", "shapes"):
        with np.load(good) as z:
            arrays = {k: z[k] for k in z.files}
        meta = json.loads(str(arrays["metadata"]))
        if kind == "format":
            meta["format"] = "trajopt-solution-99"
        elif kind == "fields":
            meta["colour"] = "blue"
        elif kind == "arrays":
            del arrays["lam_g"]
        elif kind == "shapes":
            arrays["controls"] = arrays["controls"][:-2]
        arrays["metadata"] = np.array("{not json" if kind == "json" else json.dumps(meta))
        np.savez(path, **arrays)
    return path


def knot_solution(folder: Path, problem: Problem) -> Path:
    """A file holding a (zero) solution of ``problem``'s sizes, saved with the problem attached."""
    N, nx, nu = problem.N, problem.nx, problem.nu
    zeros = np.zeros
    solution = Solution(
        times=problem.times(), states=zeros((N, nx)), controls=zeros((N, nu)), tf=problem.tf_guess, objective=0.0, status="-", success=False,
        iterations=0, solve_time=0.0, eval_time=0.0, solver_time=0.0, build_time=0.0, max_violation=0.0, knot_violation=zeros(N),
        transcription="hermite_simpson", intervals=zeros((N - 1, 0)), primal=zeros(1), lam_x=zeros(1), lam_g=zeros(0), problem=problem,
    )
    path = folder / f"{problem.name}-zero.npz"
    solution.save(path, overwrite=True)
    return path


def urdf_file(folder: Path, text: str) -> Path:
    path = folder / "robot.urdf"
    path.write_text(text)
    return path


# ------------------------------------------------------------ the table


def cases(tmp: Path) -> List[Case]:
    q_bad = np.array([2.0, 0, 0, 0])
    x_quad = hover()
    x_go1 = go1().init_state()
    quad_x_nonunit = with_entry(x_quad, 3, 2.0)
    go1_x_nonunit = with_entry(x_go1, 3, 0.5)
    sx3, mx2 = ca.SX.sym("a", 3), ca.MX.sym("b", 2)
    return [
        # ---- lie
        Case("quat_to_rot-short", lambda: lie.quat_to_rot([1.0, 0, 0]), ValueError, "q"),
        Case("quat_to_rot-string", lambda: lie.quat_to_rot("1,0,0,0"), TypeError, "q"),
        Case("quat_to_rot-None", lambda: lie.quat_to_rot(None), TypeError, "q"),
        Case("quat_to_rot-dict", lambda: lie.quat_to_rot({"w": 1}), TypeError, "q"),
        Case("quat_to_rot-nan", lambda: lie.quat_to_rot([NAN, 0, 0, 0]), ValueError, "q"),
        Case("quat_to_rot-inf", lambda: lie.quat_to_rot([INF, 0, 0, 0]), ValueError, "q"),
        Case("quat_to_rot-matrix", lambda: lie.quat_to_rot(np.eye(4)), ValueError, "q"),
        Case("quat_mult-q2-short", lambda: lie.quat_mult([1.0, 0, 0, 0], [1.0, 2.0]), ValueError, "q2"),
        Case("quat_mult-symbolic-shape", lambda: lie.quat_mult(sx3, [1.0, 0, 0, 0]), ValueError, "q"),
        Case("axis_angle_to_quat-shape", lambda: lie.axis_angle_to_quat(np.zeros((3, 3))), ValueError, "phi"),
        Case("axis_angle_to_quat-MX-shape", lambda: lie.axis_angle_to_quat(mx2), ValueError, "phi"),
        Case("quat_to_axis_angle-inf", lambda: lie.quat_to_axis_angle([1.0, INF, 0, 0]), ValueError, "q"),
        Case("rot_to_quat-shape", lambda: lie.rot_to_quat(np.eye(4)), ValueError, "R"),
        Case("rot_to_quat-nan", lambda: lie.rot_to_quat(np.full((3, 3), NAN)), ValueError, "R"),
        Case("so3_exp-shape", lambda: lie.so3_exp([1.0, 2.0]), ValueError, "phi"),
        Case("so3_log-inf", lambda: lie.so3_log(np.diag([INF, 1, 1])), ValueError, "R"),
        Case("so3_right_jacobian-string", lambda: lie.so3_right_jacobian("abc"), TypeError, "phi"),
        Case("exp6-shape", lambda: lie.exp6(np.zeros(3)), ValueError, "nu"),
        Case("log6-shape", lambda: lie.log6(np.eye(3)), ValueError, "T"),
        Case("Jlog6-nan", lambda: lie.Jlog6(np.full((4, 4), NAN)), ValueError, "T"),
        Case("skew-shape", lambda: lie.skew([1.0, 2.0, 3.0, 4.0]), ValueError, "v"),
        Case("quat_to_mrp-nonunit", lambda: lie.quat_to_mrp(q_bad), ValueError, "q"),
        Case("quat_to_euler-nonunit", lambda: lie.quat_to_euler_zyx(q_bad), ValueError, "q"),
        Case("euler_to_quat-shape", lambda: lie.euler_zyx_to_quat([0.1, 0.2]), ValueError, "e"),
        Case("mrp_to_quat-nan", lambda: lie.mrp_to_quat([NAN, 0, 0]), ValueError, "p"),
        Case("rodrigues_to_rot-shape", lambda: lie.rodrigues_to_rot(np.zeros(4)), ValueError, "g"),
        Case("LieState-rotation", lambda: LieState("quaternion", 3), ValueError, "rotation"),
        Case("LieState-partition", lambda: LieState(UnitQuaternion, -1, 2), ValueError, "partition"),
        Case("QuatState-starts", lambda: QuatState(7, (5,)), ValueError, "quat_starts"),
        Case("LieState.state_error-x0", lambda: LieState(UnitQuaternion, 3, 3).state_error(np.r_[np.zeros(3), 1, 0, 0, 0, np.zeros(3)], np.zeros(9)), ValueError, "x0"),
        Case("LieState.apply_dx-dx", lambda: LieState(UnitQuaternion, 3, 3).apply_dx(np.r_[np.zeros(3), 1, 0, 0, 0, np.zeros(3)], np.zeros(10)), ValueError, "dx"),
        Case("RBState-nonunit", lambda: RBState(np.zeros(3), q_bad, np.zeros(3), np.zeros(3), renormalize=False), ValueError, "q"),
        Case("RBState-position", lambda: RBState(np.zeros(2), [1.0, 0, 0, 0], np.zeros(3), np.zeros(3)), ValueError, "r"),
        # ---- models: dynamics and kinematics
        Case("quadrotor.dynamics-x-shape", lambda: quadrotor().dynamics(np.zeros(12), np.zeros(4)), ValueError, "x"),
        Case("quadrotor.dynamics-u-shape", lambda: quadrotor().dynamics(x_quad, np.zeros(3)), ValueError, "u"),
        Case("quadrotor.dynamics-x-nonunit", lambda: quadrotor().dynamics(quad_x_nonunit, np.zeros(4)), ValueError, "x[3:7]"),
        Case("quadrotor.dynamics-x-nan", lambda: quadrotor().dynamics(with_entry(x_quad, 0, NAN), np.zeros(4)), ValueError, "x"),
        Case("quadrotor.dynamics-u-inf", lambda: quadrotor().dynamics(x_quad, [INF, 0, 0, 0]), ValueError, "u"),
        Case("quadrotor.dynamics-t-string", lambda: quadrotor().dynamics(x_quad, np.zeros(4), "now"), TypeError, "t"),
        Case("quadrotor.dynamics-t-nan", lambda: quadrotor().dynamics(x_quad, np.zeros(4), NAN), ValueError, "t"),
        Case("quadrotor.dynamics_jacobian-u-None", lambda: quadrotor().dynamics_jacobian(x_quad, None), TypeError, "u"),
        Case("quadrotor.state_error-x0", lambda: quadrotor().state_error(x_quad, np.zeros(12)), ValueError, "x0"),
        Case("quadrotor.apply_dx-dx", lambda: quadrotor().apply_dx(x_quad, np.zeros(13)), ValueError, "dx"),
        Case("quadrotor.build_state-attitude", lambda: quadrotor().build_state(np.zeros(3), q_bad, np.zeros(3), np.zeros(3)), ValueError, "attitude"),
        Case("pendulum.dynamics-x-list-of-str", lambda: Pendulum().dynamics(["a", "b"], [0.0]), TypeError, "x"),
        Case("cartpole.dynamics_jacobian-x-shape", lambda: Cartpole().dynamics_jacobian(np.zeros(3), [0.0]), ValueError, "x"),
        Case("model.casadi_function-key", lambda: quadrotor().casadi_function("dynamic"), ValueError, "key"),
        Case("go1.forward_dynamics-x-shape", lambda: go1().forward_dynamics(np.zeros(36), np.zeros(12)), ValueError, "x"),
        Case("go1.forward_dynamics-x-nonunit", lambda: go1().forward_dynamics(go1_x_nonunit, np.zeros(12)), ValueError, "x[3:7]"),
        Case("go1.forward_dynamics-tau-shape", lambda: go1().forward_dynamics(x_go1, np.zeros(7)), ValueError, "tau"),
        Case("go1.forward_dynamics-forces-shape", lambda: go1().forward_dynamics(x_go1, np.zeros(12), np.zeros(3)), ValueError, "forces"),
        Case("go1.forward_dynamics-forces-nan", lambda: go1().forward_dynamics(x_go1, np.zeros(12), np.full(12, NAN)), ValueError, "forces"),
        Case("go1.inverse_dynamics-vdot-shape", lambda: go1().inverse_dynamics(x_go1, np.zeros(17)), ValueError, "vdot"),
        Case("go1.inverse_dynamics-tau-string", lambda: go1().forward_dynamics(x_go1, "zero"), TypeError, "tau"),
        Case("go1.kinematics-x-inf", lambda: go1().kinematics(with_entry(x_go1, 10, INF)), ValueError, "x"),
        Case("go1.kinematics_jacobian-x-None", lambda: go1().kinematics_jacobian(None), TypeError, "x"),
        Case("go1.M_func-x-nonunit", lambda: go1().M_func(go1_x_nonunit), ValueError, "x[3:7]"),
        Case("go1.apply_dx-dx-shape", lambda: go1().apply_dx(x_go1, np.zeros(37)), ValueError, "dx"),
        Case("go1.inverse_kinematics-shape", lambda: go1().inverse_kinematics(x_go1, np.zeros(11)), ValueError, "leg_end_locs"),
        Case("go1.change_order-order", lambda: go1().change_order(x_go1, "nominal", "ros"), ValueError, "to"),
        Case("go1.change_order-size", lambda: go1().change_order(np.zeros(5), "nominal", "mujoco"), ValueError, "value"),
        Case("go1.compile-keys", lambda: go1().compile(["dynamics_fast"], cache_dir=tmp / "cache"), ValueError, "key"),
        Case("floating_body.dynamics-forces", lambda: floating_body().dynamics(floating_body().init_state(), np.zeros(6), forces=np.zeros(2)), ValueError, "forces"),
        # ---- models: constructors and robots
        Case("Quadrotor-mass", lambda: Quadrotor(mass=-1.0), ValueError, "mass"),
        Case("Quadrotor-inertia", lambda: Quadrotor(inertia=(1.0, 2.0)), ValueError, "inertia"),
        Case("Quadrotor-arm_length-nan", lambda: Quadrotor(arm_length=NAN), ValueError, "arm_length"),
        Case("Quadrotor-u-bounds", lambda: Quadrotor(u_min=2.0, u_max=1.0), ValueError, "u_max"),
        Case("Quadrotor-rotation", lambda: Quadrotor(rotation="euler"), ValueError, "rotation"),
        Case("Quadrotor-velocity_frame", lambda: Quadrotor(velocity_frame="local"), ValueError, "velocity_frame"),
        Case("Pendulum-length", lambda: Pendulum(length=0.0), ValueError, "length"),
        Case("Pendulum-mass-string", lambda: Pendulum(mass="heavy"), TypeError, "mass"),
        Case("Cartpole-u_max", lambda: Cartpole(u_max=-1.0), ValueError, "u_max"),
        Case("Go1-mu", lambda: Go1(mu=-0.5), ValueError, "mu"),
        Case("Go1-standing_height", lambda: Go1(standing_height=NAN), ValueError, "standing_height"),
        Case("Humanoid-contacts", lambda: Humanoid(contacts_per_foot=3), ValueError, "contacts_per_foot"),
        Case("urdf_path-name", lambda: urdf_path("go3"), ValueError, "name"),
        Case("from_urdf-missing", lambda: MultibodyModel.from_urdf(tmp / "missing.urdf"), FileNotFoundError, "urdf"),
        Case("from_urdf-garbage", lambda: MultibodyModel.from_urdf(urdf_file(tmp, "<robot name='r'><link name=")), ValueError, "urdf"),
        Case("from_urdf-not-urdf", lambda: MultibodyModel.from_urdf(urdf_file(tmp, "<html><body/></html>")), ValueError, "urdf"),
        Case("from_urdf-directory", lambda: MultibodyModel.from_urdf(tmp), FileNotFoundError, "urdf"),
        Case("load_pinocchio_model-None", lambda: load_pinocchio_model(None), TypeError, "urdf"),
        Case("MultibodyModel-pin_model", lambda: MultibodyModel("go1.urdf"), TypeError, "pin_model"),
        Case("MultibodyModel-bodies", lambda: MultibodyModel(go1().pin_model, kinematics_bodies=["FL_toe"]), ValueError, "kinematics_bodies"),
        Case("MultibodyModel-name", lambda: MultibodyModel(go1().pin_model, name=""), ValueError, "name"),
        Case("MultibodyModel-input_matrix", lambda: MultibodyModel(go1().pin_model, input_matrix=np.eye(3)), ValueError, "input_matrix"),
        Case("LeggedRobot-leg_ends", lambda: LeggedRobot(go1().pin_model, leg_ends=["FL_foot", "nose"]), ValueError, "leg_ends"),
        Case("FloatingBaseModel-formulation", lambda: FloatingBaseModel(go1(), point_contacts=["FL_foot"], formulation="magic"), ValueError, "formulation"),
        Case("FloatingBaseModel-contacts", lambda: FloatingBaseModel(go1(), point_contacts=["tail"]), ValueError, "point_contacts"),
        Case("Quadrotor-rotation-type", lambda: Quadrotor(rotation=42), ValueError, "rotation"),
        Case("DoublePendulum-actuated", lambda: DoublePendulum(actuated=(2,)), ValueError, "actuated"),
        Case("FloatingBody-mass", lambda: FloatingBody(mass=-1.0), ValueError, "mass"),
        Case("FloatingBody-inertia", lambda: FloatingBody(inertia=(1.0, 2.0)), ValueError, "inertia"),
        Case("MultibodyQuadrotor-arm_length", lambda: MultibodyQuadrotor(arm_length=-0.1), ValueError, "arm_length"),
        Case("pendulum_multibody-mass", lambda: pendulum_multibody(mass=0.0), ValueError, "mass"),
        Case("Hand-dims-type", lambda: Hand(dims={"fingers": 4}), TypeError, "dims"),
        Case("Hand-dims-length", lambda: Hand(dims=replace(HandDimensions(), phalanx_lengths=(-0.04, 0.03, 0.025))), ValueError, "phalanx_lengths"),
        Case("Hand.curl-angle", lambda: Hand().curl("closed"), TypeError, "angle"),
        Case("WheeledBiped-dims", lambda: WheeledBiped(dims=replace(BipedDimensions(), wheel_radius=0.0)), ValueError, "wheel_radius"),
        Case("WheeledBiped-kinematics", lambda: WheeledBiped(kinematics="hub"), ValueError, "kinematics"),
        Case("Humanoid-mu", lambda: Humanoid(mu=-1.0), ValueError, "mu"),
        Case("Go2-mu-type", lambda: Go2(mu="high"), TypeError, "mu"),
        # ---- Problem and its add_* methods
        Case("Problem-model", lambda: Problem("quadrotor", N=11, tf=1.0), TypeError, "model"),
        Case("Problem-N", lambda: Problem(quadrotor(), N=1, tf=1.0), ValueError, "N"),
        Case("Problem-N-float", lambda: Problem(quadrotor(), N=10.5, tf=1.0), ValueError, "N"),
        Case("Problem-tf-negative", lambda: Problem(quadrotor(), N=11, tf=-1.0), ValueError, "tf"),
        Case("Problem-tf-inf", lambda: Problem(quadrotor(), N=11, tf=INF), ValueError, "tf"),
        Case("Problem-x0-shape", lambda: Problem(quadrotor(), N=11, tf=1.0, x0=np.zeros(12)), ValueError, "x0"),
        Case("Problem-x0-nonunit", lambda: Problem(quadrotor(), N=11, tf=1.0, x0=quad_x_nonunit), ValueError, "x0"),
        Case("Problem-x0-nan", lambda: Problem(quadrotor(), N=11, tf=1.0, x0=with_entry(x_quad, 0, NAN)), ValueError, "x0"),
        Case("Problem-x0-string", lambda: Problem(quadrotor(), N=11, tf=1.0, x0="hover"), TypeError, "x0"),
        Case("FreeTime-order", lambda: FreeTime(2.0, 1.0, 1.5), ValueError, "tf"),
        Case("add_cost-type", lambda: quad_problem().add_cost(lambda x: x @ x), ValueError, "cost"),
        Case("add_constraint-type", lambda: quad_problem().add_constraint(GoalConstraint), ValueError, "constraint"),
        Case("QuadraticCost-Q-shape", lambda: QuadraticCost(quadrotor(), np.ones(13), np.ones(4), x_ref=x_quad), ValueError, "Q"),
        Case("QuadraticCost-R-indefinite", lambda: QuadraticCost(quadrotor(), np.ones(12), -np.ones(4), x_ref=x_quad), ValueError, "R"),
        Case("QuadraticCost-Q-inf", lambda: QuadraticCost(quadrotor(), np.full(12, INF), np.ones(4), x_ref=x_quad), ValueError, "Q"),
        Case("QuadraticCost-x_ref-shape", lambda: QuadraticCost(quadrotor(), np.ones(12), np.ones(4), x_ref=np.zeros(12)), ValueError, "x_ref"),
        Case("QuadraticCost-x_ref-nonunit", lambda: QuadraticCost(quadrotor(), np.ones(12), np.ones(4), x_ref=quad_x_nonunit), ValueError, "x_ref"),
        Case("QuadraticCost-u_ref-inf", lambda: QuadraticCost(quadrotor(), np.ones(12), np.ones(4), x_ref=x_quad, u_ref=np.full(4, INF)), ValueError, "u_ref"),
        Case("QuadraticTerminalCost-x_ref", lambda: QuadraticTerminalCost(quadrotor(), np.ones(12), x_ref=np.zeros(3)), ValueError, "x_ref"),
        Case("FunctionCost-fn", lambda: quad_problem().add_cost(FunctionCost("x'x")), ValueError, "function_cost"),
        Case("FunctionCost-arity", lambda: quad_problem().add_cost(FunctionCost(lambda a, b, c, d: 0)), ValueError, "function_cost"),
        Case("FunctionCost-vector", lambda: quad_problem().add_cost(FunctionCost(lambda x: x)), ValueError, "function_cost"),
        Case("FunctionCost-casadi-sizes", lambda: quad_problem().add_cost(FunctionCost(ca.Function("f", [ca.SX.sym("x", 3)], [0]))), ValueError, "function_cost"),
        Case("FunctionTerminalCost-params", lambda: quad_problem().add_cost(FunctionTerminalCost(lambda x: 0.0, params=[1.0])), ValueError, "function_terminal_cost"),
        Case("Constraint-knots-range", lambda: quad_problem().add_constraint(Constraint(lambda x: x[0], knots=[0, 11])), ValueError, "knots"),
        Case("Constraint-knots-order", lambda: quad_problem().add_constraint(Constraint(lambda x: x[0], knots=[3, 2])), ValueError, "knots"),
        Case("Constraint-knots-string", lambda: quad_problem().add_constraint(Constraint(lambda x: x[0], knots="last")), ValueError, "knots"),
        Case("Constraint-bounds", lambda: quad_problem().add_constraint(Constraint(lambda x: x[0], lower=1.0, upper=0.0)), ValueError, "lower"),
        Case("Constraint-lower-shape", lambda: quad_problem().add_constraint(Constraint(lambda x: x[:2], lower=np.zeros(3))), ValueError, "lower"),
        Case("Constraint-output-matrix", lambda: quad_problem().add_constraint(Constraint(lambda x: ca.repmat(x[:2], 1, 2))), ValueError, "constraint"),
        Case("Constraint-params-shape", lambda: quad_problem().add_constraint(Constraint(lambda x, u, p: x[0] - p, params=np.zeros((3, 1)), knots=[1, 2])), ValueError, "params"),
        Case("GoalConstraint-x_goal", lambda: GoalConstraint(quadrotor(), np.zeros(12)), ValueError, "x_goal"),
        Case("GoalConstraint-x_goal-nonunit", lambda: GoalConstraint(quadrotor(), quad_x_nonunit), ValueError, "x_goal"),
        Case("GoalConstraint-components", lambda: GoalConstraint(quadrotor(), x_quad, components=[12]), ValueError, "components"),
        Case("bound_states-shape", lambda: quad_problem().bound_states(lower=np.zeros(5)), ValueError, "lower"),
        Case("bound_states-knots", lambda: quad_problem().bound_states(lower=0.0, knots=[20]), ValueError, "knots"),
        Case("bound_controls-empty", lambda: quad_problem().bound_controls(lower=2.0, upper=1.0), ValueError, "control bounds"),
        Case("bound_controls-nan", lambda: quad_problem().bound_controls(upper=NAN), ValueError, "upper"),
        Case("set_initial_guess-states", lambda: quad_problem().set_initial_guess(states=np.zeros((10, 13))), ValueError, "states"),
        Case("set_initial_guess-controls", lambda: quad_problem().set_initial_guess(controls=np.full(4, NAN)), ValueError, "controls"),
        Case("penalize_control_rate-W", lambda: quad_problem().penalize_control_rate(np.ones(3)), ValueError, "W"),
        Case("Problem.x0-setter", lambda: setattr(quad_problem(), "x0", np.zeros(13)), ValueError, "x0"),
        # ---- solve and its options
        Case("solve-problem", lambda: solve("pendulum"), ValueError, "problem"),
        Case("solve-transcription", lambda: solve(pendulum_problem(), "collocation"), ValueError, "transcription"),
        Case("solve-solver", lambda: solve(pendulum_problem(), solver="snopt"), ValueError, "solver"),
        Case("solve-options-type", lambda: solve(pendulum_problem(), options=[("tol", 1e-6)]), ValueError, "options"),
        Case("solve-ipopt-unknown", lambda: solve(pendulum_problem(), options={"max_iterations": 10}), ValueError, "max_iterations"),
        Case("solve-ipopt-type", lambda: solve(pendulum_problem(), options={"tol": "tight"}), ValueError, "tol"),
        Case("solve-ipopt-range", lambda: solve(pendulum_problem(), options={"tol": -1.0}), ValueError, "tol"),
        Case("solve-ipopt-enum", lambda: solve(pendulum_problem(), options={"mu_strategy": "fast"}), ValueError, "mu_strategy"),
        Case("solve-ipopt-key-type", lambda: solve(pendulum_problem(), options={1: 2}), ValueError, "options"),
        Case("solve-print_level", lambda: solve(pendulum_problem(), print_level=13), ValueError, "print_level"),
        Case("solve-derivatives", lambda: solve(pendulum_problem(), derivatives="exact"), ValueError, "derivatives"),
        Case("solve-threads", lambda: solve(pendulum_problem(), threads=0), ValueError, "threads"),
        Case("solve-nlpsol_options", lambda: solve(pendulum_problem(), nlpsol_options={"no_such": 1}), ValueError, "nlpsol_options"),
        Case("solve-warm_start-type", lambda: solve(pendulum_problem(), warm_start=str(saved_solution(str(tmp)))), ValueError, "warm_start"),
        Case("IpoptSolver.solve-initial_guess", lambda: IpoptSolver(pendulum_problem()).solve(initial_guess=np.zeros(3)), ValueError, "initial_guess"),
        Case("fatrop-quaternion", lambda: solve(quad_problem(), solver="fatrop"), ValueError, "solver"),
        Case("get_transcription-name", lambda: get_transcription("midpoint"), ValueError, "transcription"),
        Case("get_integrator-name", lambda: get_integrator("rk5"), ValueError, "integrator"),
        # ---- registry
        Case("problems.get-name", lambda: problems.get("pendulumm"), ValueError, "name"),
        Case("problems.get-param", lambda: problems.get("pendulum", n=11), TypeError, "n"),
        Case("problems.get-value", lambda: problems.get("pendulum", N=1), ValueError, "N"),
        Case("problems.get-type", lambda: problems.get("go1-trot", cycles="two"), TypeError, "cycles"),
        Case("problems.get-formulation", lambda: problems.get("go1-trot", formulation="magic"), ValueError, "formulation"),
        Case("problems.factory-name", lambda: problems.factory("go3-trot"), ValueError, "name"),
        Case("problems.get-dt", lambda: problems.get("go1-trot", dt=-0.02), ValueError, "dt"),
        Case("problems.get-cycles", lambda: problems.get("go1-pace", cycles=0), ValueError, "cycles"),
        Case("problems.get-knots", lambda: problems.get("go1-jump", knots=(1, 1)), ValueError, "knots"),
        Case("problems.get-shift", lambda: problems.get("humanoid-shift", shift=(0.0, 1.0)), ValueError, "shift"),
        Case("problems.get-checkpoints", lambda: problems.get("quadrotor-flip", checkpoints=0), ValueError, "checkpoints"),
        Case("problems.get-u_max", lambda: problems.get("cartpole", u_max=0.0), ValueError, "u_max"),
        Case("problems.get-robot", lambda: problems.get("trot", robot="go3"), ValueError, "robot"),
        Case("problems.get-urdf", lambda: problems.get("pace", urdf=str(tmp / "missing.urdf")), FileNotFoundError, "urdf"),
        Case("problems.get-feet", lambda: problems.get("trot", robot="go1", feet=["a", "b", "c", "d"]), ValueError, "feet"),
        Case("LeggedRobot.from_urdf-missing", lambda: LeggedRobot.from_urdf(tmp / "missing.urdf"), FileNotFoundError, "urdf"),
        Case("LeggedRobot.from_urdf-not-quadruped", lambda: LeggedRobot.from_urdf(urdf_file(tmp, "<robot name='r'><link name='a'/></robot>")), ValueError, "quadruped"),
        Case("LeggedRobot.from_robot_data-name", lambda: LeggedRobot.from_robot_data("go3"), ValueError, "name"),
        Case("problems.get-friction", lambda: problems.get("go1-bound", friction="ice"), ValueError, "friction"),
        # ---- Solution.load and files
        Case("load-missing", lambda: Solution.load(tmp / "missing.npz"), FileNotFoundError, "path"),
        Case("load-directory", lambda: Solution.load(tmp), FileNotFoundError, "path"),
        Case("load-truncated", lambda: Solution.load(damaged(tmp, "truncated")), ValueError, "path"),
        Case("load-empty", lambda: Solution.load(damaged(tmp, "empty")), ValueError, "path"),
        Case("load-text", lambda: Solution.load(damaged(tmp, "text")), ValueError, "path"),
        Case("load-zip", lambda: Solution.load(damaged(tmp, "zip")), ValueError, "path"),
        Case("load-npy", lambda: Solution.load(damaged(tmp, "npy")), ValueError, "path"),
        Case("load-pickle", lambda: Solution.load(damaged(tmp, "pickle")), ValueError, "path"),
        Case("load-format", lambda: Solution.load(damaged(tmp, "format")), ValueError, "path"),
        Case("load-fields", lambda: Solution.load(damaged(tmp, "fields")), ValueError, "path"),
        Case("load-arrays", lambda: Solution.load(damaged(tmp, "arrays")), ValueError, "path"),
        Case("load-json", lambda: Solution.load(damaged(tmp, "json")), ValueError, "path"),
        Case("load-shapes", lambda: Solution.load(damaged(tmp, "shapes")), ValueError, "path"),
        Case("load-other-model", lambda: Solution.load(saved_solution(str(tmp)), problem=problems.get("cartpole", N=11)), ValueError, "problem"),
        Case("load-other-horizon", lambda: Solution.load(saved_solution(str(tmp)), problem=problems.get("pendulum", N=12)), ValueError, "problem"),
        Case("load-same-sizes-other-model", lambda: Solution.load(knot_solution(tmp, problems.get("go1-trot")), problem=problems.get("go2-trot")), ValueError, "problem"),
        Case("load_solution-truncated", lambda: problems.load_solution(damaged(tmp, "truncated")), ValueError, "path"),
        Case("save-exists", lambda: Solution.load(saved_solution(str(tmp))).save(saved_solution(str(tmp))), FileExistsError, "path"),
        Case("save-directory-missing", lambda: Solution.load(saved_solution(str(tmp))).save(tmp / "no" / "such" / "dir.npz"), FileNotFoundError, "path"),
    ]


# ------------------------------------------------------------ checks


def displayed_chain(err: BaseException) -> List[BaseException]:
    """``err`` and the exceptions Python prints with it (its cause, or its context unless suppressed)."""
    chain = [err]
    while True:
        nxt = err.__cause__ or (None if err.__suppress_context__ else err.__context__)
        if nxt is None or nxt in chain:
            return chain
        chain.append(nxt)
        err = nxt


def assert_clear(err: BaseException, error: Type[Exception], argument: str) -> None:
    assert isinstance(err, error), f"{type(err).__module__}.{type(err).__name__}: {err}"
    message = str(err)
    assert argument in message, f"the message does not name {argument!r}: {message}"
    for e in displayed_chain(err):
        module = type(e).__module__.split(".")[0]
        assert module not in ("casadi", "pinocchio", "Boost"), f"a {type(e).__module__}.{type(e).__name__} surfaced: {e}"
        assert not any(s in str(e) for s in FOREIGN), f"a third-party C++ error surfaced: {e}"


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Tuple[Path, List[Case]]:
    tmp = tmp_path_factory.mktemp("bad_input")
    return tmp, cases(tmp)


CASE_IDS = [c.id for c in cases(Path("/nonexistent"))]


@pytest.mark.parametrize("index", range(len(CASE_IDS)), ids=CASE_IDS)
def test_bad_input_gets_a_clear_error(table: Tuple[Path, List[Case]], index: int) -> None:
    _, all_cases = table
    case = all_cases[index]
    with pytest.raises(Exception) as info:
        case.call()
    assert_clear(info.value, case.error, case.argument)


def test_the_table_is_large_enough() -> None:
    assert len(CASE_IDS) >= 60 and len(set(CASE_IDS)) == len(CASE_IDS)


# ------------------------------------------------------------ the command line


def cli_cases(tmp: Path) -> List[Tuple[str, List[str], str]]:
    """``(id, argv, text)``: ``trajopt argv`` must exit with status 2 and one stderr line containing ``text``."""
    good = lambda: str(saved_solution(str(tmp)))  # noqa: E731
    bad = lambda kind: str(damaged(tmp, kind))  # noqa: E731
    return [
        ("unknown-problem", ["solve", "pendulumm"], "unknown problem 'pendulumm'"),
        ("N-value", ["solve", "pendulum", "--N", "1"], "N: expected an int >= 2, got 1"),
        ("param-value", ["solve", "pendulum", "-p", "u_max=-1"], "u_max: expected a number > 0"),
        ("param-type", ["solve", "quadrotor", "-p", "u_max=strong"], "parameter u_max"),
        ("max-iter-range", ["solve", "pendulum", "--quiet", "--max-iter", "-1"], "--max-iter: expected an int >= 0"),
        ("warm-start-truncated", ["solve", "pendulum", "--N", "11", "--warm-start", lambda: bad("truncated")], "--warm-start: path:"),
        ("warm-start-text", ["solve", "pendulum", "--N", "11", "--warm-start", lambda: bad("text")], "--warm-start: path:"),
        ("warm-start-pickle", ["solve", "pendulum", "--N", "11", "--warm-start", lambda: bad("pickle")], "--warm-start: path:"),
        ("warm-start-edited", ["solve", "pendulum", "--N", "11", "--warm-start", lambda: bad("shapes")], "--warm-start: path:"),
        ("warm-start-other-model", ["solve", "go2-trot", "--warm-start", lambda: str(knot_solution(tmp, problems.get("go1-trot")))], "--warm-start"),
        ("warm-start-directory", ["solve", "pendulum", "--warm-start", str(tmp)], "--warm-start: path: no solution file"),
        ("save-exists", ["solve", "pendulum", "--N", "11", "--save", good], "--save:"),
        ("save-under-a-file", ["solve", "pendulum", "--N", "11", "--save", lambda: str(Path(good()) / "x.npz")], "--save:"),
        ("plot-under-a-file", ["solve", "pendulum", "--N", "11", "--plot", lambda: str(Path(good()) / "x.png")], "--plot:"),
    ]


CLI_IDS = [c[0] for c in cli_cases(Path("/nonexistent"))]


@pytest.mark.parametrize("index", range(len(CLI_IDS)), ids=CLI_IDS)
def test_cli_bad_input_exits_2_with_one_line(table: Tuple[Path, List[Case]], index: int, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    from trajopt.cli import main

    tmp, _ = table
    _, argv, text = cli_cases(tmp)[index]
    argv = [a() if callable(a) else a for a in argv]
    capsys.readouterr()
    monkeypatch.setenv("MPLBACKEND", "Agg")
    code = main(argv)
    _, err = capsys.readouterr()
    assert code == 2, err
    assert text in err and len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err and not any(s in err for s in FOREIGN), err
