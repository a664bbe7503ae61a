"""The numerical backends behind one seam: :func:`solve`, :class:`NlpSolver` and the registry :data:`SOLVERS`.

Everything that turns a transcribed :class:`trajopt.nlp.NLP` into numbers
lives here; the modelling layer (problem, costs, constraints, transcriptions,
solution) sits one level up and imports nothing from this package. Modules:

- :mod:`~trajopt.solvers.settings`: :class:`SolverSettings`, how a problem is
  solved, as one frozen object checked where it is built;
- :mod:`~trajopt.solvers.registry`: :func:`solve`, :func:`build_solver` and the
  backends by name (:data:`SOLVERS`, :func:`solver_class`);
- :mod:`~trajopt.solvers.base`: :class:`NlpSolver`, what every backend
  shares (transcription, derivatives, starting point, result, the options
  merge) and the capabilities a backend declares;
- :mod:`~trajopt.solvers.ipopt`, :mod:`~trajopt.solvers.fatrop`,
  :mod:`~trajopt.solvers.sqp`, :mod:`~trajopt.solvers.rti`: the four backends
  (IPOPT with MUMPS; fatrop; ``sqpmethod`` with HPIPM; one real-time iteration
  with HPIPM);
- :mod:`~trajopt.solvers.derivatives`: gradient, constraint Jacobian and
  Hessian of the Lagrangian assembled from per-stage derivatives (VM or
  compiled C);
- :mod:`~trajopt.solvers.stage_layout`: the stage form fatrop and HPIPM read;
- :mod:`~trajopt.solvers.options`: option checks and CasADi's error text;
- :mod:`~trajopt.solvers.watchdog`, :mod:`~trajopt.solvers.interrupt`,
  :mod:`~trajopt.solvers.blas`: a wall-time limit for calls that cannot stop
  themselves, Ctrl-C, and CasADi's OpenBLAS on one thread.

A backend is built once per problem structure (``IpoptSolver(problem)``, or
through :func:`solve`) and solved again as often as needed: every numeric
datum of the problem (``x0``, cost references, constraint bounds and
parameters, ``dynamics_params``) is read at each :meth:`NlpSolver.solve`, so a
receding-horizon controller changes the data and re-solves without rebuilding.
A change of structure (``N``, free time or free ``x0``, the set of costs and
constraints, a constraint's knots) raises ``ValueError``: build a new solver.

Warm starts
-----------
:meth:`NlpSolver.solve` starts from one of

- ``warm_start=solution``, a :class:`~trajopt.Solution` of the same problem
  structure: primal-dual when its transcription, ``N`` and the sizes of its
  primal and multiplier vectors match the built NLP (the point ``primal`` as
  it is, ``lam_x`` for the variable bounds, ``lam_g`` for the rows), else its
  trajectory re-sampled at the new knots as a primal guess only;
- ``initial_guess=w``, a decision vector in the NLP's layout, primal only, or
  primal-dual with ``multipliers=(lam_x, lam_g)`` (a shifted guess of a
  receding horizon, ``trajopt.mpc``);
- neither: the problem's initial guess (:meth:`trajopt.Problem.initial_guess`).

What each backend takes of a primal-dual start:

============  =================================  ===========================================
backend       primal                             multipliers
============  =================================  ===========================================
``ipopt``     ``x0``                             ``lam_x`` and ``lam_g``, with IPOPT's warm-start
                                                 options (:data:`WARM_START_OPTIONS`: bound
                                                 pushes 1e-9, ``mu_init`` 1e-9)
``fatrop``    ``x0``                             none (CasADi's fatrop interface reads no
                                                 initial multipliers); the same options as cold
``sqp``       ``x0``                             ``lam_x`` and ``lam_g``, as ``sqpmethod``'s first
                                                 multiplier estimate (no other option changes)
``rti``       ``x0``, the step's linearization   ``lam_g`` for an exact Hessian; none with the
              point                              Gauss-Newton one (it reads no multipliers)
============  =================================  ===========================================

A backend's :attr:`NlpSolver.takes_multipliers` says whether it reads them.

Layouts a shifted guess must respect (a receding horizon moves every knot
one place earlier and appends a new last knot):

- the decision vector ``w`` is stage-ordered (:mod:`trajopt.nlp`): build it
  with ``nlp.pack(states (N, n), controls (N, nu), intervals (N - 1, nz) or
  None, tf)`` rather than by slicing; states must lie on the manifold (unit
  quaternions), and missing interval variables are filled by the
  transcription's own guess;
- with tangent-chart knots (``chart=True``) ``w`` holds perturbations of
  the chart centres: re-centre the charts on the shifted states first
  (``nlp.recentre(states)``, then ``pack`` gives ``d = 0``);
- ``x_0`` is fixed by the problem's ``x0`` (equal variable bounds, read at
  the solve): set ``problem.x0`` to the measured state; the guess's first
  knot need not equal it;
- multipliers are in the NLP's order: ``lam_x`` like ``w`` (``nlp.var_stage``
  gives each entry's stage), ``lam_g`` like ``g`` (``nlp.row_stage`` each
  row's stage). Shifting them is valid when every stage has the same rows
  (the same constraints at every knot); where the structure differs from
  stage to stage (a gait's contact switches move along the horizon) the rows
  of a stage are not those of its neighbour, and the multipliers of the
  shifted guess should be zero for the rows that changed.
"""
from .base import NlpSolver
from .fatrop import FatropSolver
from .interrupt import SolveInterrupted
from .ipopt import DEFAULT_IPOPT_OPTIONS, WARM_START_OPTIONS, IpoptSolver
from .registry import SOLVERS, build_solver, solve, solver_class
from .rti import RtiSolver
from .settings import BASE_DEFAULTS, SolverSettings
from .sqp import SqpSolver

__all__ = [
    "BASE_DEFAULTS",
    "DEFAULT_IPOPT_OPTIONS",
    "FatropSolver",
    "IpoptSolver",
    "NlpSolver",
    "RtiSolver",
    "SOLVERS",
    "SolveInterrupted",
    "SolverSettings",
    "SqpSolver",
    "WARM_START_OPTIONS",
    "build_solver",
    "solve",
    "solver_class",
]
