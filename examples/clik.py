"""Closed-loop inverse kinematics: pinocchio's sample manipulator reaching a pose.

The target of pinocchio's CLIK example: joint 6 (frame ``wrist2_joint``) at
the identity rotation and position (1, 0, 1) m, from the neutral
configuration. Solved with damped least squares on the log6 error (step 0.1)
in three variants: fixed tiny damping with the joint limits as a bounded QP
step (the default), adaptive damping, and the tutorial's unconstrained
iteration; the result is checked with pinocchio's own ``forwardKinematics``.
Writes ``clik.png`` (error norm per iteration).

    python examples/clik.py [--quick] [--out DIR]
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Optional, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402

from models.manipulator import END_EFFECTOR, Manipulator  # noqa: E402
from trajopt.ik import FrameTarget, IKResult, clik  # noqa: E402
from trajopt.plotting import save_figure  # noqa: E402

TARGET = pin.SE3(np.eye(3), np.array([1.0, 0.0, 1.0]))
VARIANTS = {
    "joint limits as QP, damping 1e-12": {},
    "adaptive damping": {"adaptive_damping": True},
    "no joint limits (tutorial)": {"joint_limits": "none"},
}


def solve(model: Manipulator, max_iter: int = 1000) -> dict[str, IKResult]:
    """One CLIK run per variant of :data:`VARIANTS`."""
    target = FrameTarget(END_EFFECTOR, pose=TARGET)
    return {name: clik(model, target, max_iter=max_iter, **options) for name, options in VARIANTS.items()}


def pinocchio_error(model: Manipulator, q: np.ndarray) -> float:
    """``|log6(oMi[6]^-1 oMdes)|`` by pinocchio's own kinematics."""
    data = model.pin_model.createData()
    pin.forwardKinematics(model.pin_model, data, q)
    return float(np.linalg.norm(pin.log6(data.oMi[6].actInv(TARGET)).vector))


def plot(results: dict[str, IKResult], path: Optional[Path] = None) -> plt.Figure:
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, res in results.items():
        ax.semilogy(res.errors, label=f"{name}: {res.iterations} it.")
    ax.axhline(1e-4, color="gray", linestyle="--", linewidth=0.8, label="tolerance")
    ax.set_xlabel("iteration")
    ax.set_ylabel("|log6 error|")
    ax.set_title("CLIK: sample manipulator to the pose (I, [1, 0, 1])")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return save_figure(fig, path, overwrite=True)


def main(argv: Optional[Sequence[str]] = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="at most 300 iterations")
    parser.add_argument("--out", type=Path, default=Path("example_output"), help="output directory")
    args = parser.parse_args(argv)
    model = Manipulator()
    results = solve(model, max_iter=300 if args.quick else 1000)
    for name, res in results.items():
        print(f"{name}: success {res.success} in {res.iterations} iterations, error {res.error:.2e} (pinocchio: {pinocchio_error(model, res.q):.2e}), q = {np.round(res.q, 4)}")
    figure = args.out / "clik.png"
    plot(results, figure)
    return {"results": results, "figure": figure}


if __name__ == "__main__":
    main()
