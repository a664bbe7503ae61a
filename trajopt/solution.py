"""The result of a solve: knot trajectory, solver report, duals, continuous evaluation, files.

A :class:`Solution` carries the knot trajectory (``times`` (N,), ``states``
(N, n), ``controls`` (N, nu)), the solver's report (status, iterations, wall
times split into function evaluations and the solver's own work, constraint
violations) and the full primal/dual iterate (``primal``, ``lam_x``,
``lam_g``) needed to warm-start IPOPT. :meth:`Solution.evaluate` gives the
continuous trajectory the transcription assumes between knots.

Files (:meth:`Solution.save`) are one ``.npz`` archive: the arrays plus a
``metadata`` entry holding a JSON object with the scalars (floats written with
``repr`` precision, so a round trip is bit-exact). They are written to a
temporary file renamed at the end (:mod:`trajopt.atomic_file`), and read
without pickle; :meth:`Solution.load` checks the format tag, the fields, their
types and the array shapes, and names the file in a ``ValueError`` when
anything is off (truncated, another format, edited). A solution records its
model (:attr:`Solution.model_name`), so it is never attached to a problem on
another model, even one with the same sizes (Go1 and Go2). For controllers,
:meth:`Solution.to_csv` and :meth:`Solution.to_mujoco_keyframes` export the
trajectory in a stated vector order (:mod:`trajopt.export`).
"""
from __future__ import annotations

import io
import json
import os
import zipfile
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .atomic_file import atomic_output
from .export import mujoco_keyframes, write_csv, write_mujoco_keyframes
from .phase_durations import PhaseDurations
from .transcription import get_transcription

#: Format tag written into saved files.
FILE_FORMAT = "trajopt-solution-1"
_ARRAYS = ("times", "states", "controls", "intervals", "knot_violation", "primal", "lam_x", "lam_g")


@dataclass
class Solution:
    """A solved (or failed) trajectory optimization: the knot trajectory, the solver's report, the iterate.

    ``times`` (N,) s, ``states`` (N, n) and ``controls`` (N, nu) at the knots
    (the model's conventions: :meth:`evaluate` gives the trajectory between
    them); ``status``, ``success``, ``iterations``, ``objective``; the full
    primal-dual iterate ``primal``, ``lam_x``, ``lam_g`` (to warm-start a
    solve); ``problem``, the :class:`~trajopt.Problem` it solves when it is attached.

    Quaternions in ``states`` and ``intervals`` are projected to unit norm (the
    NLP enforces it as an equality, to IPOPT's tolerance); ``primal`` is the raw
    iterate. ``controls[N-1]`` repeats ``controls[N-2]`` for multiple shooting (the
    control is held over the last interval). ``intervals`` (N-1, nz) are the
    transcription's interval variables (Hermite-Simpson: ``[x_mid, u_mid]``).
    ``solve_time`` is the wall time of the solver call, ``eval_time`` the part
    spent evaluating NLP functions (from ``solver.stats()``) and
    ``solver_time = solve_time - eval_time`` the solver's own work (IPOPT: mostly
    MUMPS; fatrop: its Riccati recursion).
    ``max_violation`` is the largest bound or constraint violation at the
    returned point, ``knot_violation`` (N,) its largest value per knot and
    ``worst_violation`` where the largest is, in words.
    """

    times: np.ndarray
    states: np.ndarray
    controls: np.ndarray
    tf: float
    objective: float
    status: str
    success: bool
    iterations: int
    solve_time: float
    eval_time: float
    solver_time: float
    build_time: float
    max_violation: float
    knot_violation: np.ndarray
    transcription: str
    intervals: np.ndarray
    primal: np.ndarray
    lam_x: np.ndarray
    lam_g: np.ndarray
    problem_name: str = ""
    #: the problem's :attr:`trajopt.Problem.recipe` (registry name and parameters), ``{}`` when it has none
    problem_recipe: Dict[str, Any] = field(default_factory=dict)
    #: the model it was solved on, as :func:`model_name` gives it (``""`` for files of older versions)
    model_name: str = ""
    #: where ``max_violation`` is attained, in words (:func:`trajopt.violations.worst_violation`): the bound or
    #: constraint, its knot, value and bound; ``""`` when nothing is violated or the point was not checked
    worst_violation: str = ""
    #: the point the solve started from when it was not the guess the caller gave (:func:`trajopt.solve`: an SQP
    #: that HPIPM could not start from the guess starts from IPOPT's solution), ``""`` otherwise
    started_from: str = ""
    #: the stages of a solve by homotopy (:mod:`trajopt.homotopy`): per stage the constraint's upper bound, its
    #: iterations, status and solve time (the fields above hold their totals and the last stage's point); empty otherwise
    homotopy: List[Dict[str, Any]] = field(default_factory=list)
    problem: Any = field(default=None, repr=False, compare=False)
    _interpolant: Any = field(default=None, init=False, repr=False, compare=False)
    #: what the solve read of the problem (``p``, ``bounds``), for a later check of the violations
    #: (:meth:`trajopt.solvers.base.NlpSolver.check`); ``None`` when loaded from a file
    solve_data: Optional[Dict[str, Any]] = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.model_name and self.problem is not None:
            self.model_name = model_name(self.problem.model)

    @property
    def N(self) -> int:
        """Number of knots."""
        return self.times.shape[0]

    # ------------------------------------------------------------ evaluation
    def evaluate(self, t: Any) -> Tuple[np.ndarray, np.ndarray]:
        """State and control at time(s) ``t`` in ``[0, tf]``, as the transcription interpolates.

        Trapezoidal: linear ``u``, quadratic ``x``; Hermite-Simpson: cubic
        Hermite ``x``, quadratic ``u``; multiple shooting: ``u`` held,
        ``x`` one integrator step from the knot (states on the manifold, in
        the chart of the interval's first knot). Returns ``(x, u)`` of shapes
        (n,), (nu,) for a scalar ``t`` or (K, n), (K, nu) for K times. Needs the
        :class:`~trajopt.Problem` (attached by the solver, or given to :meth:`load`).
        """
        if self.problem is None:
            raise ValueError("evaluate: this solution has no problem attached; pass problem= to Solution.load")
        ts = np.atleast_1d(np.asarray(t, dtype=float))
        if ts.ndim != 1 or np.isnan(ts).any() or (ts < -1e-12 * self.tf).any() or (ts > self.tf * (1 + 1e-12)).any():
            raise ValueError(f"t: expected times in [0, tf = {self.tf}], got {np.asarray(t)!r}")
        k, t_k, h = self.interval_of(ts)
        tau = ts - t_k
        if self._interpolant is None:
            self._interpolant = get_transcription(self.transcription).interpolant(self.problem.model)
        fn = self._interpolant.map(len(ts))
        D = self.problem.dynamics_params
        x, u = fn(self.states[k].T, self.controls[k].T, self.intervals[k].T, self.states[k + 1].T, self.controls[k + 1].T, t_k, h, tau, D[k].T, D[k + 1].T)
        x, u = np.asarray(x).T, np.asarray(u).T
        return (x[0], u[0]) if np.ndim(t) == 0 else (x, u)

    @property
    def phase_spaced(self) -> bool:
        """Whether the knots are spaced phase by phase (free phase durations) rather than evenly."""
        return self.problem is not None and isinstance(self.problem.tf, PhaseDurations)

    @property
    def knot_spacing(self) -> np.ndarray:
        """The intervals' lengths ``h_k = t_(k+1) - t_k`` (N - 1,); ``tf / (N - 1)`` each for evenly spaced knots."""
        return np.diff(self.times) if self.phase_spaced else np.full(self.N - 1, self.tf / (self.N - 1))

    def interval_of(self, t: Any) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The interval ``k`` (K,) holding each of the times ``t`` (K,) in ``[0, tf]`` (``t_k <= t < t_(k+1)``, the
        last interval at ``tf``), its start ``t_k`` and its length ``h_k``. Knots evenly spaced by ``h = tf / (N - 1)``
        give ``k = floor(t / h)``; knots spaced phase by phase (free phase durations) are looked up in :attr:`times`."""
        ts, N = np.atleast_1d(np.asarray(t, dtype=float)), self.N
        if self.phase_spaced:
            k = np.clip(np.searchsorted(self.times, ts, side="right") - 1, 0, N - 2)
            return k, self.times[k], self.times[k + 1] - self.times[k]
        h = self.tf / (N - 1)
        k = np.clip(np.floor(ts / h).astype(int), 0, N - 2)
        return k, k * h, np.full(k.shape, h)

    # ------------------------------------------------------------ files
    def save(self, path: str | os.PathLike, overwrite: bool = False) -> None:
        """Write the solution to ``path``: one ``.npz`` archive of its arrays and a JSON ``metadata`` entry.

        Floats are written at full precision, so :meth:`load` gives the same
        numbers back; the file records the model's name and the recipe of a
        registered problem (:func:`problems.load_solution` rebuilds it).

        Refuses to replace an existing file (``FileExistsError``) unless
        ``overwrite``; ``FileNotFoundError`` when its folder does not exist.
        Interrupted, it leaves no partial file.
        """
        data = self.to_bytes()
        with atomic_output(path, overwrite) as tmp:
            tmp.write_bytes(data)

    def to_bytes(self) -> bytes:
        """The content of the file :meth:`save` writes (e.g. to send a solution between processes without pickle)."""
        meta: Dict[str, Any] = {"format": FILE_FORMAT}
        for f in fields(self):
            if f.name not in _ARRAYS and f.init and f.name != "problem":
                value = getattr(self, f.name)
                meta[f.name] = value.item() if isinstance(value, np.generic) else value
        arrays = {name: np.asarray(getattr(self, name), dtype=float) for name in _ARRAYS}
        buffer = io.BytesIO()
        np.savez(buffer, metadata=np.array(json.dumps(meta)), **arrays)
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes, problem: Any = None, name: str = "data") -> "Solution":
        """The solution whose file content (:meth:`to_bytes`) is ``data``, checked as :meth:`load` checks a
        file (``ValueError`` naming ``name`` otherwise); ``problem`` as in :meth:`load`."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"{name}: expected the bytes of a solution file, got {type(data).__name__}")
        meta, arrays = _read(io.BytesIO(data), name)
        sol = cls(**arrays, **meta)
        if problem is not None:
            sol.attach(problem)
        return sol

    @classmethod
    def load(cls, path: str | os.PathLike, problem: Any = None) -> "Solution":
        """Read a file written by :meth:`save`; ``problem`` (optional) enables :meth:`evaluate` and warm starts on it.

        ``FileNotFoundError`` when there is no such file; ``ValueError`` naming
        the file when it is not an intact solution file, and naming
        ``problem`` when that problem does not match the solution
        (:meth:`attach`).
        """
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path: expected a file name, got {type(path).__name__} {path!r}")
        if not os.path.isfile(path):
            raise FileNotFoundError(f"path: no solution file at {os.fspath(path)!r}")
        meta, arrays = _read(path, f"path: {os.fspath(path)!r}")
        sol = cls(**arrays, **meta)
        if problem is not None:
            sol.attach(problem)
        return sol

    # ------------------------------------------------------------ export
    def to_csv(self, path: str | os.PathLike, order: str = "nominal", dt: float | None = None, overwrite: bool = False) -> None:
        """Write time, ``q``, ``v``, torques and contact forces as CSV in ``order``
        (``"nominal"``, ``"pinocchio"`` or ``"mujoco"``), at the knots or every ``dt`` s
        (:func:`trajopt.export.trajectory_table` documents the columns and frames)."""
        write_csv(self, path, order, dt, overwrite)

    def to_mujoco_keyframes(self, path: str | os.PathLike | None = None, dt: float | None = None, overwrite: bool = False) -> str:
        """MJCF ``<keyframe>`` text (time, qpos, qvel, ctrl in MuJoCo's order) of the knots or
        every ``dt`` s; also written to ``path`` when given (:func:`trajopt.export.mujoco_keyframes`)."""
        if path is not None:
            write_mujoco_keyframes(self, path, dt, overwrite)
        return mujoco_keyframes(self, dt)

    def attach(self, problem: Any) -> "Solution":
        """Attach the problem this solution solves (checks N, sizes and the model). Returns ``self``."""
        want = (self.N, self.states.shape[1], self.controls.shape[1])
        got = (problem.N, problem.nx, problem.nu)
        if want != got:
            raise ValueError(f"problem: expected (N, n, nu) = {want} to match the solution, got {got}")
        other = model_name(problem.model)
        if self.model_name and self.model_name != other:
            raise ValueError(f"problem: the solution was computed for the model {self.model_name!r}, the problem's model is {other!r}")
        self.problem, self._interpolant = problem, None
        return self

    def __eq__(self, other: object) -> bool:
        """Field-by-field equality (arrays compared exactly, NaN equal to NaN)."""
        if not isinstance(other, Solution):
            return NotImplemented
        for f in fields(self):
            if not f.compare:
                continue
            a, b = getattr(self, f.name), getattr(other, f.name)
            if f.name in _ARRAYS:
                if np.shape(a) != np.shape(b) or not np.array_equal(a, b, equal_nan=True):
                    return False
            elif a != b and not (isinstance(a, float) and np.isnan(a) and np.isnan(b)):
                return False
        return True

    def __repr__(self) -> str:
        return f"<Solution {self.summary()}>"

    def summary(self) -> str:
        """One line: status, objective, iterations, times, violation, and where the solve started when not from the guess."""
        return (
            f"{self.problem_name or 'problem'} [{self.transcription}]: {self.status} "
            f"(J = {self.objective:.6g}, {self.iterations} iterations, {1e3 * self.solve_time:.1f} ms: "
            f"{1e3 * self.eval_time:.1f} ms evaluations + {1e3 * self.solver_time:.1f} ms solver, "
            f"max violation {self.max_violation:.2e}{'; started from ' + self.started_from if self.started_from else ''})"
        )


def model_name(model: Any) -> str:
    """How a solution file names its model: class and ``name``, e.g. ``"Go1 go1"``."""
    return f"{type(model).__name__} {getattr(model, 'name', '')}".strip()


#: Types of the scalar fields in a file's metadata (ints are accepted for floats).
_FIELD_TYPES: Dict[str, tuple] = {"str": (str,), "bool": (bool,), "int": (int,), "float": (int, float), "Dict[str, Any]": (dict,), "List[Dict[str, Any]]": (list,)}


def _read(source: str | os.PathLike | io.BytesIO, where: str) -> Tuple[Dict[str, Any], Dict[str, np.ndarray]]:
    """``(metadata, arrays)`` of a solution file (a path or its bytes), checked: its format tag, fields,
    types and array shapes; ``ValueError`` naming ``where`` when the file is truncated, of another format or edited."""
    try:
        archive = np.load(source, allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as err:
        reason = "" if "pickle" in str(err) else f": {err}"  # numpy takes any other file for a pickle, which is never read
        raise ValueError(f"{where} is not a trajopt solution file (not a numpy .npz archive{reason})") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise ValueError(f"{where} is not a trajopt solution file (it holds one numpy array, not an .npz archive)")
    with archive:
        try:
            if "metadata" not in archive.files:
                raise ValueError("no metadata entry")
            meta = json.loads(str(archive["metadata"]))
            if not isinstance(meta, dict) or meta.pop("format", None) != FILE_FORMAT:
                raise ValueError(f"its format tag is not {FILE_FORMAT!r}")
            missing = [name for name in _ARRAYS if name not in archive.files]
            if missing:
                raise ValueError(f"arrays {missing} are missing")
            arrays = {name: archive[name] for name in _ARRAYS}
        except (ValueError, OSError, EOFError, KeyError, zipfile.BadZipFile) as err:
            raise ValueError(f"{where} is not an intact trajopt solution file ({err})") from None
    _check_fields(meta, where)
    _check_arrays(arrays, where)
    return meta, arrays


def _check_fields(meta: Dict[str, Any], where: str) -> None:
    """Every scalar field present once, of its declared type."""
    declared = {f.name: f for f in fields(Solution) if f.init and f.name not in _ARRAYS and f.name != "problem"}
    unknown = sorted(set(meta) - set(declared))
    missing = sorted(n for n, f in declared.items() if n not in meta and f.default is MISSING and f.default_factory is MISSING)
    if unknown or missing:
        raise ValueError(f"{where} is not an intact trajopt solution file (unknown fields {unknown}, missing fields {missing})")
    for name, value in meta.items():
        types = _FIELD_TYPES.get(str(declared[name].type), (object,))
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise ValueError(f"{where} is not an intact trajopt solution file (field {name!r}: expected {declared[name].type}, got {value!r})")


def _check_arrays(arrays: Dict[str, np.ndarray], where: str) -> None:
    """Real arrays of mutually consistent shapes: N knots, N - 1 intervals, primal and ``lam_x`` alike."""
    for name, value in arrays.items():
        if value.dtype.kind not in "fiu":
            raise ValueError(f"{where} is not an intact trajopt solution file (array {name!r} holds {value.dtype}, expected floats)")
        arrays[name] = value.astype(float, copy=False)
    N = arrays["times"].shape[0] if arrays["times"].ndim == 1 else -1
    expected = {
        "times": (N,),
        "states": (N, arrays["states"].shape[-1]),
        "controls": (N, arrays["controls"].shape[-1]),
        "intervals": (N - 1, arrays["intervals"].shape[-1]),
        "knot_violation": (N,),
        "primal": arrays["lam_x"].shape[:1],
        "lam_x": arrays["primal"].shape[:1],
        "lam_g": arrays["lam_g"].shape[:1],
    }
    wrong = {name: arrays[name].shape for name, shape in expected.items() if N < 2 or arrays[name].shape != shape}
    if wrong:
        raise ValueError(f"{where} is not an intact trajopt solution file (inconsistent array shapes {wrong} for N = {N})")
