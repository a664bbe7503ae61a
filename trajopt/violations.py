"""Where a point of the NLP breaks its bounds or constraints, in words.

:meth:`trajopt.nlp.NLP.violation` gives how much (the largest violation and
its per-knot maximum); :func:`worst_violation` names the one entry that
attains it: a variable's bound (a state component by its name, a joint's for
a robot; a control; ``tf``) or a row of ``g`` (a constraint by its name and
row, a dynamics defect, a quaternion's unit norm), with its knot or
interval, its value and the bound it crosses. A failed solve's report reads
it to say where the returned point is infeasible.
"""
from __future__ import annotations

from typing import Any, Tuple

import numpy as np

from .problem_check import state_names


def _side(value: float, lower: float, upper: float) -> Tuple[str, float]:
    """``("lower", lower)`` when ``value`` is below ``lower``, else ``("upper", upper)``."""
    return ("lower", lower) if lower - value >= value - upper else ("upper", upper)


def variable_label(nlp: Any, i: int) -> str:
    """What entry ``i`` of the NLP's variables ``w`` is: a knot's state or control component, an interval variable, or a free duration."""
    if nlp.timing is not None and i in nlp.idx_durations:
        j = int(np.flatnonzero(nlp.idx_durations == i)[0])
        return "the final time tf" if nlp.timing.count == 1 else f"the duration of {nlp.timing.phase_names[j]}"
    for kind, idx in (("state", nlp.idx_x), ("control", nlp.idx_u), ("interval variable", nlp.idx_z)):
        hits = np.argwhere(idx == i)
        if hits.size:
            k, j = (int(v) for v in hits[0])
            if kind == "state":
                names = state_names(nlp.problem.model) if not nlp.chart else [f"dx[{c}]" for c in range(nlp.n_state)]
                return f"the state bound on {names[j]} at knot {k}"
            if kind == "control":
                return f"the control bound on u[{j}] at knot {k}"
            return f"the bound on interval {k}'s variable z[{j}]"
    raise ValueError(f"i: {i} is not an index of the NLP's {nlp.n_w} variables")


def row_label(nlp: Any, r: int) -> str:
    """What row ``r`` of the NLP's constraints ``g`` (stage order) is: a constraint's row at a knot, on an interval or at a
    collocation point; a dynamics defect or transcription residual of an interval; a quaternion's unit norm at a knot."""
    position, start = int(nlp.perm[r]), 0
    for block in nlp.blocks:
        size = block.rows * block.K
        if position < start + size:
            column, row = divmod(position - start, block.rows)
            k = int(block.stages[column])
            of = f" row {row}" if block.rows > 1 else ""
            name = repr(nlp.constraints[block.constraint].name) if block.constraint >= 0 else ""
            return {
                "constraint": f"constraint {name}{of} at knot {k}",
                "midpoint": f"constraint {name}{of} at collocation point {block.point} of interval {k}",
                "interval": f"interval constraint {name}{of} on interval {k}",
                "defect": f"the dynamics defect{of} on interval {k}",
                "residual": f"the transcription's residual{of} on interval {k}",
                "norm": f"the unit norm of the quaternion{of} at knot {k}",
                "control_hull": f"the control bound on the interpolant's Bezier point{of} on interval {k}",
                "timing": f"the phase durations' linear row {row}",
            }[block.kind]
        start += size
    raise ValueError(f"r: {r} is not a row of the NLP's {nlp.n_g} constraints")


def worst_violation(nlp: Any, w: np.ndarray, g: np.ndarray, bounds: Tuple[np.ndarray, ...]) -> str:
    """The entry of ``(w, g)`` that breaks its bound the most, e.g. ``"constraint 'wall' at knot 20: -0.5 < lower
    bound 0"``; ``""`` when nothing is violated. ``bounds``: ``(lbw, ubw, lbg, ubg)``."""
    lbw, ubw, lbg, ubg = bounds
    vw = np.maximum(lbw - w, w - ubw)
    vg = np.maximum(lbg - g, g - ubg) if g.size else np.zeros(0)
    worst_w, worst_g = float(vw.max(initial=0.0)), float(vg.max(initial=0.0))
    if max(worst_w, worst_g) <= 0:
        return ""
    if worst_w >= worst_g:
        i = int(np.argmax(vw))
        label, value, (side, bound) = variable_label(nlp, i), float(w[i]), _side(w[i], lbw[i], ubw[i])
    else:
        r = int(np.argmax(vg))
        label, value, (side, bound) = row_label(nlp, r), float(g[r]), _side(g[r], lbg[r], ubg[r])
    return f"{label}: {value:.6g} {'<' if side == 'lower' else '>'} {side} bound {float(bound):.6g}"
