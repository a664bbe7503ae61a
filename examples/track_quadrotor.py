"""Tracking an optimized quadrotor trajectory in simulation: feedforward plus time-varying LQR feedback.

1. Plan: the registry's ``"quadrotor"`` problem (hover at the origin to hover
   at (5, 0, 1) m in 5 s), solved by IPOPT (Hermite-Simpson).
2. Gains: time-varying LQR around the plan on the tangent space of the state
   (position, axis-angle attitude, velocities), from the RK4 linearization of
   each knot interval (:func:`trajopt.sim.lqr_gains`).
3. Simulation (RK4, 5 ms, the controller held per step as a digital loop
   would) of a quadrotor 10% heavier than the planning model, starting
   0.2 m off and tilted by 0.2 rad, under ``u = u_ref(t) - K(t) e`` with the
   rotor commands saturated to the model's bounds, and, for comparison, under
   the feedforward alone.

Writes ``track_quadrotor.png``: planned and simulated (LQR) positions, and
the tracking error of both simulations (the feedforward alone drifts away by
tens of meters).

    python examples/track_quadrotor.py [--quick] [--out DIR]
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Optional, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import problems  # noqa: E402
import trajopt  # noqa: E402
from lie import axis_angle_to_quat, quat_mult  # noqa: E402
from models.quadrotor import Quadrotor  # noqa: E402
from trajopt.plotting import save_figure  # noqa: E402
from trajopt.sim import SimResult, TrackingController, lqr_gains, simulate  # noqa: E402

#: Tangent-space weights of the LQR: position, attitude, linear velocity, angular velocity.
Q_WEIGHTS = np.r_[np.full(3, 100.0), np.full(3, 10.0), np.full(3, 1.0), np.full(3, 0.1)]
R_WEIGHT = 0.1
MASS_ERROR = 1.10


def plan(N: int = 51) -> trajopt.Solution:
    """The optimized trajectory (raises ``RuntimeError`` if IPOPT fails)."""
    solution = trajopt.solve(problems.get("quadrotor", N=N))
    if not solution.success:
        raise RuntimeError(f"planning failed: {solution.summary()}")
    return solution


def perturbed_start(x0: np.ndarray) -> np.ndarray:
    """``x0`` moved by (0.2, -0.2, 0.1) m and tilted by 0.2 rad about (1, 1, 0)."""
    x = x0.copy()
    x[0:3] += [0.2, -0.2, 0.1]
    x[3:7] = quat_mult(x[3:7], axis_angle_to_quat(0.2 * np.array([1.0, 1.0, 0.0]) / np.sqrt(2)))
    return x


def track(solution: trajopt.Solution, dt: float = 5e-3) -> tuple[SimResult, SimResult]:
    """Closed-loop (LQR) and feedforward-only simulations of the heavier quadrotor."""
    model = solution.problem.model
    K = lqr_gains(model, solution.times, solution.states, solution.controls, Q_WEIGHTS, R_WEIGHT)
    plant = Quadrotor(mass=MASS_ERROR * model.mass(), u_max=model.u_max)
    x0, T = perturbed_start(solution.states[0]), float(solution.times[-1])
    feedback = TrackingController(model, solution, K, saturate=True)
    feedforward = TrackingController(model, solution, np.zeros_like(K), saturate=True)
    closed = simulate(plant, x0, feedback, dt=dt, T=T, control="hold")
    open_loop = simulate(plant, x0, feedforward, dt=dt, T=T, control="hold")
    return closed, open_loop


def position_error(solution: trajopt.Solution, result: SimResult) -> np.ndarray:
    """``|p_sim(t) - p_plan(t)|`` (m) at the simulation times."""
    planned, _ = solution.evaluate(result.times - result.times[0])
    return np.linalg.norm(result.states[:, 0:3] - planned[:, 0:3], axis=1)


def plot(solution: trajopt.Solution, closed: SimResult, open_loop: SimResult, path: Optional[Path] = None) -> plt.Figure:
    fig, axes = plt.subplots(2, 2, figsize=(10, 6))
    for i, (ax, label) in enumerate(zip(axes.flat[:3], ("x", "y", "z"))):
        ax.plot(solution.times, solution.states[:, i], "k.", label="plan (knots)")
        ax.plot(closed.times, closed.states[:, i], label="simulated, feedforward + LQR")
        ax.set_ylabel(f"{label} [m]")
        ax.set_xlabel("time [s]")
    axes.flat[0].legend(fontsize=8)
    err = axes.flat[3]
    err.semilogy(closed.times, position_error(solution, closed), label="feedforward + LQR")
    err.semilogy(open_loop.times, position_error(solution, open_loop), "--", label="feedforward only")
    err.set_ylabel("|p - p_plan| [m]")
    err.set_xlabel("time [s]")
    err.legend(fontsize=8)
    fig.suptitle(f"Quadrotor: plan vs simulation ({MASS_ERROR - 1:.0%} heavier, perturbed start)")
    fig.tight_layout()
    return save_figure(fig, path, overwrite=True)


def main(argv: Optional[Sequence[str]] = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="coarse plan (21 knots) and 10 ms steps")
    parser.add_argument("--out", type=Path, default=Path("example_output"), help="output directory")
    args = parser.parse_args(argv)
    solution = plan(N=21 if args.quick else 51)
    print(solution.summary())
    closed, open_loop = track(solution, dt=1e-2 if args.quick else 5e-3)
    final = {name: position_error(solution, r)[-1] for name, r in (("LQR", closed), ("feedforward", open_loop))}
    print(f"final position error: {final['LQR']:.3g} m with LQR feedback, {final['feedforward']:.3g} m with feedforward only")
    figure = args.out / "track_quadrotor.png"
    plot(solution, closed, open_loop, figure)
    return {"solution": solution, "closed_loop": closed, "open_loop": open_loop, "final_error": final, "figure": figure}


if __name__ == "__main__":
    main()
