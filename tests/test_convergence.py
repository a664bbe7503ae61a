"""Flagship solves converge from their default guesses, and their iteration counts survive round-off.

``bench/convergence.py`` prints the whole table; here the flagship rows must
hold its bounds: every solve succeeds in at most 50 iterations, and the most
iterations over the base solve, five 1e-9 perturbations of the guess and
CasADi's BLAS on two threads are at most 1.5x the fewest. A setting whose
count jumps with round-off (go1-jump took 40 to 300) fails here on any machine.
"""
from __future__ import annotations

import pytest

from bench.convergence import cases, format_row, measure

FLAGSHIPS = ("go1-trot", "go1-jump", "go2-trot", "quadrotor", "quadrotor-flip", "readme-quadrotor", "example-thrust-body", "rigid-body-slew")


@pytest.mark.slow
@pytest.mark.parametrize("name", FLAGSHIPS)
def test_flagship_convergence_is_fast_and_robust_to_round_off(name):
    problem, kwargs = cases()[name]()
    row = measure(name, problem, kwargs, perturbations=5, blas=True)
    assert row.passes(max_iter=50, max_ratio=1.5), format_row(row, 50, 1.5)
