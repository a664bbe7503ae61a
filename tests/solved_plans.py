"""Registered plans solved once per test session, shared by the MuJoCo and export tests."""
from __future__ import annotations

import functools

import problems
from trajopt import solve


@functools.lru_cache(maxsize=None)
def solved(name: str, **params):
    """``solve(problems.get(name, **params))``, cached; its problem (with the registry recipe) is attached."""
    solution = solve(problems.get(name, **params))
    assert solution.success, solution.status
    return solution
