"""A PD-driven capsule hand closing on itself: contacts, impacts, distances and contact forces.

The four fingers of :class:`models.hand.Hand` curl one after the other toward
1.8 rad per joint, past the point where the distal phalanges meet the palm
(about 1.45 rad), so the fingertips hit the palm (inelastic impacts) and are
then held against it by contact forces (Gauss's principle QP, quadprog). The
controller is a PD with gravity compensation whose gains are scaled by each
joint's inertia (``Kp = w^2 M_ii``, ``Kv = 2 w M_ii``, ``w = 20 rad/s``),
tracking a smooth ramp. Writes ``hand_contact.png`` (distances and forces)
and, with ``--animate``, ``hand_contact.gif``.

    python examples/hand_contact.py [--quick] [--out DIR] [--animate]
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Optional, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from models.hand import Hand  # noqa: E402
from trajopt.plotting import animate_stick_figure, save_figure, stick_segments  # noqa: E402
from trajopt.sim import PD, CapsuleCollisions, ContactSimResult, ContactSimulator, PinNumerics  # noqa: E402

CLOSED = 1.8  # rad per joint, beyond the contact with the palm
RAMP = 0.25  # s to close one finger
STAGGER = 0.1  # s between two fingers


def smooth_ramp(t: float, start: float) -> tuple[float, float]:
    """``s(t)`` from 0 to 1 over ``[start, start + RAMP]`` (smoothstep) and its derivative."""
    u = np.clip((t - start) / RAMP, 0.0, 1.0)
    return 3 * u**2 - 2 * u**3, (6 * u - 6 * u**2) / RAMP if 0 < u < 1 else 0.0


def closing_reference(hand: Hand):
    """``q_des(t)``, ``v_des(t)``: finger ``i`` ramps to :data:`CLOSED` from ``t = STAGGER * i``."""

    def ramps(t: float) -> tuple[np.ndarray, np.ndarray]:
        s, ds = zip(*(smooth_ramp(t, STAGGER * i) for i in range(4)))
        return np.repeat(np.array(s), 3), np.repeat(np.array(ds), 3)

    return (lambda t: CLOSED * ramps(t)[0]), (lambda t: CLOSED * ramps(t)[1])


def run(T: float = 0.8, dt: float = 1e-3, w: float = 20.0) -> tuple[Hand, ContactSimResult]:
    """Simulate the closing hand for ``T`` seconds; returns the model and the result."""
    hand = Hand()
    inertia = np.diag(PinNumerics(hand).mass(hand.curl(1.0)))
    q_des, v_des = closing_reference(hand)
    controller = PD(hand, q_des, Kp=w**2 * inertia, Kv=2 * w * inertia, v_des=v_des, gravity_compensation=True)
    sim = ContactSimulator(hand, CapsuleCollisions.from_geometry(hand, hand.geometry_model))
    return hand, sim.simulate(np.zeros(2 * hand.nq), controller, dt=dt, T=T)


def plot(result: ContactSimResult, path: Optional[Path] = None) -> plt.Figure:
    """Distances of the pairs that ever come within 5 mm, their contact forces, and the impacts."""
    near = np.flatnonzero(result.distances.min(axis=0) < 5e-3)
    fig, (ax_d, ax_f) = plt.subplots(2, 1, sharex=True, figsize=(8, 6))
    for k in near:
        label = " / ".join(result.pair_names[k])
        ax_d.plot(result.times, 1e3 * result.distances[:, k], label=label)
        ax_f.plot(result.times[:-1], result.forces[:, k], label=label)
    ax_d.axhline(1e3 * 1e-3, color="gray", linestyle="--", linewidth=0.8, label="activation threshold")
    for impact in result.impacts:
        for ax in (ax_d, ax_f):
            ax.axvline(impact.time, color="red", linewidth=0.6, alpha=0.5)
    ax_d.set_ylabel("distance [mm]")
    ax_d.set_ylim(-0.5, 5.0)
    ax_d.set_title("Capsule hand closing: pair distances (impacts in red)")
    ax_d.legend(fontsize=7, ncol=2)
    ax_f.set_ylabel("normal contact force [N]")
    ax_f.set_xlabel("time [s]")
    fig.tight_layout()
    return save_figure(fig, path, overwrite=True)


def animate(hand: Hand, result: ContactSimResult, path: Path, fps: float = 30) -> Path:
    """Stick-figure animation: phalanges and the knuckle line as segments, fingertips filled when touching."""
    pairs = [(f"finger{i}_{j}", f"finger{i}_{j + 1}" if j < 3 else f"finger{i}_tip") for i in range(1, 5) for j in range(1, 4)]
    pairs.append(("finger1_1", "finger4_1"))  # the knuckle line
    configurations = result.states[:, : hand.nq]
    segments = stick_segments(hand.pin_model, configurations, frame_pairs=pairs)
    tips = segments[:, 2::3, 1, :]
    touching = np.array([[result.active[min(k, len(result.active) - 1), [p for p, names in enumerate(result.pair_names) if f"finger{i}_3" in names]].any() for i in range(1, 5)] for k in range(len(result.times))])
    return animate_stick_figure(result.times, segments, tips, None, touching, path, fps=fps, overwrite=True)


def main(argv: Optional[Sequence[str]] = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short run (0.6 s)")
    parser.add_argument("--out", type=Path, default=Path("example_output"), help="output directory")
    parser.add_argument("--animate", action="store_true", help="also write a GIF animation")
    args = parser.parse_args(argv)
    hand, result = run(T=0.6) if args.quick else run()
    print(f"{result.status}: {len(result.times) - 1} steps, {len(result.impacts)} impacts, deepest penetration {1e3 * result.max_penetration:.2e} mm, largest contact force {result.forces.max():.3g} N")
    outputs = {"result": result, "figure": args.out / "hand_contact.png"}
    plot(result, outputs["figure"])
    if args.animate:
        outputs["animation"] = animate(hand, result, args.out / "hand_contact.gif", fps=10 if args.quick else 30)
    return outputs


if __name__ == "__main__":
    main()
