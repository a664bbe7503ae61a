"""A PD-driven capsule hand closing on itself: contacts, impacts, distances and contact forces.

The four fingers of :class:`models.hand.Hand` curl one after the other toward
1.8 rad per joint, past the point where the distal phalanges meet the palm
(about 1.45 rad), so the fingertips hit the palm (inelastic impacts) and are
then held against it by contact forces (Gauss's principle QP, quadprog). The
controller is a PD with gravity compensation whose gains are scaled by each
joint's inertia (``Kp = w^2 M_ii``, ``Kv = 2 w M_ii``, ``w = 20 rad/s``),
tracking a smooth ramp. Writes ``hand_contact.png`` (distances, forces and a
side view with the collision witness points), with ``--animate``
``hand_contact.gif`` (that side view in motion) and with ``--html``
``hand_contact.html`` (the 3D replay, witness points as red discs; needs the
``viz`` extra).

    python examples/hand_contact.py [--quick] [--out DIR] [--animate] [--html]
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Optional, Sequence

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402

from models.hand import Hand  # noqa: E402
from trajopt.plotting import animate_contact_simulation, plot_contact_simulation  # noqa: E402
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


def main(argv: Optional[Sequence[str]] = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short run (0.6 s)")
    parser.add_argument("--out", type=Path, default=Path("example_output"), help="output directory")
    parser.add_argument("--animate", action="store_true", help="also write a GIF animation")
    parser.add_argument("--html", action="store_true", help="also write a 3D replay (needs the viz extra)")
    args = parser.parse_args(argv)
    _, result = run(T=0.6) if args.quick else run()
    print(f"{result.status}: {len(result.times) - 1} steps, {len(result.impacts)} impacts, deepest penetration {1e3 * result.max_penetration:.2e} mm, largest contact force {result.forces.max():.3g} N")
    outputs = {"result": result, "figure": args.out / "hand_contact.png"}
    plot_contact_simulation(result, outputs["figure"], overwrite=True)
    if args.animate:
        outputs["animation"] = animate_contact_simulation(result, args.out / "hand_contact.gif", fps=10 if args.quick else 30, overwrite=True)
    if args.html:
        from trajopt.viewer import export_html

        outputs["html"] = export_html(result, args.out / "hand_contact.html", overwrite=True)
    return outputs


if __name__ == "__main__":
    main()
