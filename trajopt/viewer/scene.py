"""What the viewer shows of a :class:`~trajopt.Solution`, as plain arrays (no viewer library).

:func:`solution_scene` samples the solution with :meth:`Solution.evaluate`,
i.e. the interpolation the transcription assumes between knots, at every
knot and ``samples_per_interval - 1`` times inside each interval (at least
``min_fps`` samples per second), and turns it into a :class:`Scene`:

- ``bodies``: triangle meshes with a world pose per sample. A multibody
  model (Go1, Go2, G1, wheeled biped, hand, manipulator, any
  :class:`models.MultibodyModel`) shows its visuals
  (:func:`~.visuals.robot_visuals`, poses from pinocchio's forward
  kinematics); a :class:`models.RigidBody` its body: a quadrotor as a hub, two
  arms and four rotor discs at the model's ``arm_length``, any other rigid
  body as the box of uniform density with its mass and principal inertias
  (edges ``a^2 = 6 (J_yy + J_zz - J_xx) / m`` and cyclic; at least 5 % of
  the longest, for a flat body), with body axes; a point-mass chain
  (pendulum, double pendulum, acrobot, cartpole, double cartpole:
  :class:`models.PointMassChain`) as rods along its chain
  (:meth:`models.PointMassChain.chain_points`), a ball per point mass
  (radius as the cube root of its mass), a cart as a box on its rail along
  y, the fixed pivot of a pendulum as a small ball;
- ``arrows``: for a legged problem the contact forces (WORLD frame) at the
  contact points, ``force_scale`` metres per newton (default: the robot's
  weight is 1.5 times as long as the initial base height), coloured by the friction
  ratio ``rho`` (the pyramid's ``max(|f_x|, |f_y|) / (mu f_z)`` or the cone's
  ``|f_t| / (mu f_z)``, as the problem imposes it; ``rho = 1`` is the edge):
  green at 0, yellow at 0.5, red at 1 and beyond (:func:`friction_color`).
  For a quadrotor, the rotor thrusts ``kf u_i`` along body +z at the rotors,
  coloured by ``u_i / u_max`` when the model bounds ``u``;
- ``paths``: the base path (floating base or rigid body), the kinematics
  bodies' paths (fixed base), or the path of a chain's last mass;
- ``markers``: the footholds (each stance foot's position at its first stance
  knot, from the solution);
- ``ground``: a plane at the footholds' height (legged), below the motion
  (rigid bodies), none for a fixed base or a point-mass chain;
- ``terrain``: for a legged problem on a terrain (``terrain=``, other than
  the flat ground), its solids as a mesh (:mod:`.terrain_mesh`), in place of
  the ground.

Times are seconds from 0; positions world frame [m]; poses 4x4 homogeneous
transforms (body to world).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import numpy as np

from models.model import GRAVITY
from models.multibody_model import MultibodyModel
from models.planar_chain import PointMassChain
from models.quadrotor import Quadrotor
from models.rigid_body import RigidBody

from ..legged import LeggedProblem
from ..plotting.stick_figure import sample_held
from ..solution import Solution
from . import shapes
from .shapes import MAX_FACES, TriangleMesh
from .terrain_mesh import terrain_mesh
from .visuals import robot_visuals, visual_poses

#: Colours (RGBA).
BODY_COLOR = (0.75, 0.75, 0.78, 1.0)
PATH_COLOR = (0.10, 0.30, 0.85, 1.0)
FOOTHOLD_COLOR = (0.95, 0.45, 0.05, 1.0)
GROUND_COLOR = (0.86, 0.87, 0.84, 1.0)
THRUST_COLOR = (0.85, 0.15, 0.15, 1.0)
#: Default force arrows: the robot's weight is this many initial base heights long.
WEIGHT_ARROW = 1.5
#: Thickness of the box drawn for a flat rigid body, as a fraction of its longest edge.
MIN_THICKNESS = 0.05
#: Point-mass chains: rod radius and ball radius (the heaviest mass) per longest link, and colours.
POINT_MASS_ROD, POINT_MASS_BALL = 0.025, 0.09
MASS_COLOR = (0.20, 0.35, 0.75, 1.0)
CART_COLOR = (0.35, 0.35, 0.40, 1.0)
RAIL_COLOR = (0.25, 0.25, 0.25, 1.0)
#: Green -> yellow -> red, at friction ratios 0, 0.5, 1.
FRICTION_COLORS = np.array([[0.10, 0.75, 0.20], [0.95, 0.80, 0.05], [0.90, 0.10, 0.10]])


@dataclass(eq=False)
class Body:
    """A mesh and its world pose (K, 4, 4) at each sample time; ``visible`` (K,) hides it at the samples where it is False."""

    name: str
    mesh: TriangleMesh
    poses: np.ndarray
    visible: Optional[np.ndarray] = None


@dataclass(eq=False)
class Arrows:
    """Arrows from ``tails`` (K, n, 3) along ``vectors`` (K, n, 3) [m, already scaled], coloured
    ``colors`` (K, n, 3); a zero vector hides its arrow. ``label`` says what they show."""

    names: list[str]
    tails: np.ndarray
    vectors: np.ndarray
    colors: np.ndarray
    radius: float
    label: str


@dataclass(eq=False)
class Scene:
    """Everything the viewer draws, sampled at ``times`` (s): the bodies' meshes and world poses,
    the force arrows, paths (e.g. the base path), markers (footholds), the ground and a camera hint."""

    times: np.ndarray
    bodies: list[Body]
    title: str = ""
    arrows: Optional[Arrows] = None
    paths: list[tuple[str, np.ndarray, tuple]] = field(default_factory=list)
    markers: list[tuple[str, np.ndarray, float, tuple]] = field(default_factory=list)
    ground: Optional[tuple[np.ndarray, float, float]] = None  # (centre xy, edge length, height z)
    terrain: Optional[TriangleMesh] = None  # a legged problem's terrain (drawn instead of the ground)
    size: float = 1.0  # a length that frames the robot [m]
    camera_direction: Optional[np.ndarray] = None  # from the motion toward the camera (world); None: front left, above

    @property
    def duration(self) -> float:
        """Length of the motion (s): the last sample time."""
        return float(self.times[-1])

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """World bounding box (lo, hi) of the bodies' origins, paths and markers over the motion."""
        points = [b.poses[:, :3, 3] for b in self.bodies] + [p for _, p, _ in self.paths] + [m for _, m, _, _ in self.markers]
        stacked = np.concatenate([p.reshape(-1, 3) for p in points if p.size])
        return stacked.min(axis=0), stacked.max(axis=0)


def sample_times(solution: Solution, samples_per_interval: int = 4, min_fps: float = 30.0) -> np.ndarray:
    """Times (s) from 0 to ``tf``: the knots and ``samples_per_interval - 1`` evenly spaced points between
    each two (more where needed for at least ``min_fps`` samples per second)."""
    if samples_per_interval < 1:
        raise ValueError(f"samples_per_interval: expected an integer >= 1, got {samples_per_interval}")
    intervals = solution.N - 1
    per = max(int(samples_per_interval), int(np.ceil(min_fps * solution.tf / intervals)))
    return np.linspace(0.0, solution.tf, intervals * per + 1)


def friction_ratio(forces: np.ndarray, mu: float, friction: str) -> np.ndarray:
    """``rho`` (...,) of WORLD-frame forces (..., 3): the pyramid's or cone's tangential/normal ratio over ``mu``.

    Zero where the normal force is not positive and the force vanishes; ``inf``
    for a tangential force without normal force.
    """
    ft = np.abs(forces[..., :2]).max(axis=-1) if friction == "pyramid" else np.linalg.norm(forces[..., :2], axis=-1)
    fz = forces[..., 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.where(fz > 0, ft / (mu * np.where(fz > 0, fz, 1.0)), np.where(ft > 0, np.inf, 0.0))
    return rho


def friction_color(rho: np.ndarray) -> np.ndarray:
    """RGB (..., 3) of friction ratios ``rho``: green 0, yellow 0.5, red >= 1 (linear between)."""
    r = np.clip(np.nan_to_num(np.asarray(rho, dtype=float), posinf=1.0), 0.0, 1.0)[..., None]
    low = FRICTION_COLORS[0] + (FRICTION_COLORS[1] - FRICTION_COLORS[0]) * np.clip(2 * r, 0, 1)
    high = FRICTION_COLORS[1] + (FRICTION_COLORS[2] - FRICTION_COLORS[1]) * np.clip(2 * r - 1, 0, 1)
    return np.where(r <= 0.5, low, high)


def multibody_bodies(model: MultibodyModel, X: np.ndarray, max_faces: Optional[int]) -> list[Body]:
    """The visuals of a multibody model (:func:`~.visuals.robot_visuals`) posed at the states ``X`` (K, nx)."""
    visuals = robot_visuals(model, max_faces)
    poses = visual_poses(model.pin_model, visuals, X[:, : model.nq])
    return [Body(v.name, v.mesh, poses[:, i]) for i, v in enumerate(visuals)]


def mesh_radius(bodies: Sequence[Body]) -> float:
    """Radius of the robot at the first sample: largest distance of a vertex from the bodies' centroid."""
    points = np.concatenate([b.mesh.vertices @ b.poses[0, :3, :3].T + b.poses[0, :3, 3] for b in bodies])
    return float(np.linalg.norm(points - points.mean(axis=0), axis=1).max())


def _feet(robot: Any, X: np.ndarray) -> np.ndarray:
    return np.array([np.asarray(robot.kinematics(x), dtype=float).reshape(robot.nc, 3) for x in X])


def _footholds(problem: LeggedProblem, solution: Solution) -> np.ndarray:
    """Where each stance phase begins: the foot's position (from the solution) at its first stance knot."""
    stance = problem.solution_schedule(solution).stance
    feet = _feet(problem.robot, solution.states)
    starts = stance & ~np.vstack([np.zeros((1, stance.shape[1]), bool), stance[:-1]])
    return feet[starts]


def _legged_scene(solution: Solution, problem: LeggedProblem, t: np.ndarray, X: np.ndarray, U: np.ndarray, force_scale: Optional[float], max_faces: Optional[int]) -> Scene:
    robot = problem.robot
    bodies = multibody_bodies(robot, X, max_faces)
    feet = _feet(robot, X)
    forces = problem.contact_forces(X, U, knots=problem.knot_index(t, solution.times))
    stance = sample_held(solution.times, problem.solution_schedule(solution).stance, t)
    forces = np.where(stance[..., None], forces, 0.0)
    if force_scale is None:
        force_scale = WEIGHT_ARROW * max(float(problem.x0[2]), 0.1) / (problem.mass * GRAVITY)
    rho = friction_ratio(forces, robot.mu, problem.friction)
    holds = _footholds(problem, solution)
    ground_z = float(holds[:, 2].min()) if holds.size else 0.0
    radius = mesh_radius(bodies)
    scene = Scene(t, bodies, size=radius)
    scene.arrows = Arrows(list(problem.schedule.foot_names), feet, force_scale * forces, friction_color(rho), 0.04 * radius, f"contact forces ({force_scale * 100:.3g} cm/N; color: friction ratio, {problem.friction}, mu = {robot.mu:g})")
    scene.paths.append(("base_path", X[:, :3], PATH_COLOR))
    scene.markers.append(("footholds", holds, 0.06 * radius, FOOTHOLD_COLOR))
    scene.ground = _ground_around(scene, ground_z)
    if problem.terrain_plan is not None:
        centre, edge, _ = scene.ground
        scene.terrain, scene.ground = terrain_mesh(problem.terrain, centre, edge), None
    return scene


def _ground_around(scene: Scene, z: float) -> tuple[np.ndarray, float, float]:
    lo, hi = scene.bounds()
    centre = 0.5 * (lo[:2] + hi[:2])
    return centre, float(np.max(hi[:2] - lo[:2]) + 4 * scene.size), z


def quadrotor_mesh(model: Quadrotor) -> TriangleMesh:
    """A "+" quadrotor in its body frame: hub, arms along x and y, rotor discs at ``(+-L, 0)``, ``(0, +-L)``."""
    L = model.arm_length
    arm = shapes.cylinder(0.06 * L, 2 * L, BODY_COLOR)
    along_x = np.array([[0, 0, 1, 0], [0, 1, 0, 0], [-1, 0, 0, 0], [0, 0, 0, 1]], dtype=float)
    along_y = np.array([[1, 0, 0, 0], [0, 0, -1, 0], [0, 1, 0, 0], [0, 0, 0, 1]], dtype=float)
    parts = [shapes.box((0.5 * L, 0.5 * L, 0.2 * L), (0.25, 0.25, 0.28, 1.0)), arm.transformed(along_x), arm.transformed(along_y)]
    for x, y in model_rotor_positions(model)[:, :2]:
        T = np.eye(4)
        T[:3, 3] = (x, y, 0.08 * L)
        parts.append(shapes.cylinder(0.4 * L, 0.03 * L, (0.15, 0.35, 0.75, 0.85)).transformed(T))
    return shapes.merge(parts)


def model_rotor_positions(model: Quadrotor) -> np.ndarray:
    """Body-frame rotor positions (4, 3) of :class:`models.Quadrotor` (its docstring's order)."""
    L = model.arm_length
    return np.array([[L, 0, 0], [0, L, 0], [-L, 0, 0], [0, -L, 0]], dtype=float)


def inertia_box(mass: float, inertia: np.ndarray) -> np.ndarray:
    """Edges (3,) (m) of the uniform box with ``mass`` (kg) and the diagonal of ``inertia`` (kg m^2): how
    the viewer draws a rigid body that has no mesh."""
    J = np.diag(np.asarray(inertia, dtype=float))
    squares = 6.0 * (J.sum() - 2 * J) / mass
    if (squares < -1e-12 * squares.max()).any() or squares.max() <= 0:
        raise ValueError(f"inertia: diagonal {J} violates the triangle inequality of a rigid body")
    # a flat body (J_zz = J_xx + J_yy, e.g. diag(1, 2, 3)) gets a plate 5 % as thick as it is long
    return np.sqrt(np.maximum(squares, (MIN_THICKNESS**2) * squares.max()))


def _rigid_body_scene(model: RigidBody, t: np.ndarray, X: np.ndarray, U: np.ndarray) -> Scene:
    parts = [model.parse_state(x, renorm=True) for x in X]
    positions = np.array([p[0] for p in parts], dtype=float)
    rotations = np.array([np.asarray(p[1].as_matrix(), dtype=float) for p in parts])
    poses = np.tile(np.eye(4), (len(t), 1, 1))
    poses[:, :3, :3], poses[:, :3, 3] = rotations, positions
    if isinstance(model, Quadrotor):
        mesh, size = quadrotor_mesh(model), 1.4 * model.arm_length
    else:
        edges = inertia_box(model.mass(X[0], U[0]), model.inertia(X[0], U[0]))
        mesh, size = shapes.box(edges, BODY_COLOR), 0.5 * float(np.linalg.norm(edges))
    bodies = [Body("body", mesh, poses)]
    axes_length = 1.3 * size
    for axis, color in zip(range(3), ((0.9, 0.1, 0.1, 1.0), (0.1, 0.7, 0.1, 1.0), (0.1, 0.2, 0.9, 1.0))):
        T = np.eye(4)
        T[:3, :3] = np.roll(np.eye(3), axis - 2, axis=1)  # local z onto body axis
        T[:3, 3] = 0.5 * axes_length * np.eye(3)[axis]
        bodies.append(Body(f"axis_{'xyz'[axis]}", shapes.cylinder(0.015 * size, axes_length, color).transformed(T), poses))
    scene = Scene(t, bodies, size=size)
    if isinstance(model, Quadrotor):
        rotors = model_rotor_positions(model)
        tails = positions[:, None, :] + np.einsum("kij,nj->kni", rotations, rotors)
        thrust = model.kf * U[:, :4]
        scale = 2.0 * model.arm_length / max(float(model.mass(X[0], U[0])) * model.gravity / 4, 1e-9)
        vectors = scale * thrust[..., None] * rotations[:, None, :, 2]
        if np.isfinite(model.u_max) and model.u_max > 0:
            colors = friction_color(U[:, :4] / model.u_max)
        else:
            colors = np.broadcast_to(np.asarray(THRUST_COLOR[:3]), (len(t), 4, 3)).copy()
        scene.arrows = Arrows([f"rotor{i + 1}" for i in range(4)], tails, vectors, colors, 0.05 * model.arm_length, f"rotor thrusts ({100 * scale:.3g} cm/N)")
    scene.paths.append(("path", positions, PATH_COLOR))
    lo, _ = scene.bounds()
    scene.ground = _ground_around(scene, min(0.0, float(lo[2])) - 1.5 * size)
    return scene


def _point_mass_scene(model: PointMassChain, t: np.ndarray, X: np.ndarray) -> Scene:
    """Pendulums and cartpoles: rods along the chain, a ball per point mass (a box for a cart on its rail), the pivot."""
    chains = np.array([model.chain_points(x[: model.nv]) for x in X])  # (K, n, 3)
    lengths = np.linalg.norm(np.diff(chains[0], axis=0), axis=1)
    size = float(lengths.max())
    masses = np.asarray(model.masses, dtype=float)
    bodies = []
    for i, length in enumerate(lengths):
        start, end = chains[:, i], chains[:, i + 1]
        poses = np.tile(np.eye(4), (len(t), 1, 1))
        poses[:, :3, :3] = shapes.z_onto(end - start)
        poses[:, :3, 3] = 0.5 * (start + end)
        bodies.append(Body(f"link_{i + 1}", shapes.capsule(POINT_MASS_ROD * size, float(length), BODY_COLOR), poses))
    first_mass = 0 if model.has_cart else 1
    for k, mass in enumerate(masses):
        poses = np.tile(np.eye(4), (len(t), 1, 1))
        poses[:, :3, 3] = chains[:, first_mass + k]
        if model.has_cart and k == 0:
            mesh = shapes.box((0.25 * size, 0.4 * size, 0.2 * size), CART_COLOR)
        else:
            mesh = shapes.sphere(POINT_MASS_BALL * size * (mass / masses.max()) ** (1 / 3), MASS_COLOR)
        bodies.append(Body(f"mass_{k + 1}", mesh, poses))
    if model.has_cart:
        y = chains[:, 0, 1]
        rail = np.tile(np.eye(4), (len(t), 1, 1))
        rail[:, :3, 3] = (0.0, 0.5 * (y.min() + y.max()), -0.12 * size)
        bodies.append(Body("rail", shapes.box((0.05 * size, float(np.ptp(y)) + size, 0.04 * size), RAIL_COLOR), rail))
    else:
        bodies.append(Body("pivot", shapes.sphere(1.5 * POINT_MASS_ROD * size, RAIL_COLOR), np.tile(np.eye(4), (len(t), 1, 1))))
    scene = Scene(t, bodies, size=size)
    scene.paths.append(("tip_path", chains[:, -1], PATH_COLOR))
    return scene


def check_viewable(problem: Any) -> None:
    """Raise ``ValueError`` unless :func:`solution_scene` can draw ``problem``'s model."""
    model = problem.model
    if not isinstance(problem, LeggedProblem) and not isinstance(model, (MultibodyModel, RigidBody, PointMassChain)):
        raise ValueError(
            f"no 3D view for model {type(model).__name__}: the viewer draws multibody models (models.MultibodyModel, "
            "legged problems), rigid bodies (models.RigidBody) and the point-mass chains (pendulums, cartpoles: models.PointMassChain)"
        )


def solution_scene(
    solution: Solution,
    samples_per_interval: int = 4,
    min_fps: float = 30.0,
    force_scale: Optional[float] = None,
    max_faces: Optional[int] = MAX_FACES,
) -> Scene:
    """The :class:`Scene` that draws ``solution``: its robot's meshes posed by pinocchio at samples of
    :meth:`~trajopt.Solution.evaluate`, contact forces as arrows (``force_scale`` m/N), footholds,
    the base path and the ground. ``samples_per_interval`` and ``min_fps`` set the sampling,
    ``max_faces`` the triangle budget per mesh part. Needs the solution's problem attached."""
    if not isinstance(solution, Solution):
        raise ValueError(f"solution: expected a trajopt.Solution, got {type(solution).__name__}")
    problem = solution.problem
    if problem is None:
        raise ValueError("solution: no problem attached; load it with problems.load_solution(path) or Solution.load(path, problem=...)")
    check_viewable(problem)
    if force_scale is not None and not (np.isfinite(force_scale) and force_scale > 0):
        raise ValueError(f"force_scale: expected a positive length per newton [m/N], got {force_scale!r}")
    t = sample_times(solution, samples_per_interval, min_fps)
    X, U = solution.evaluate(t)
    if isinstance(problem, LeggedProblem):
        scene = _legged_scene(solution, problem, t, X, U, force_scale, max_faces)
    elif isinstance(problem.model, RigidBody):
        scene = _rigid_body_scene(problem.model, t, X, U)
    elif isinstance(problem.model, PointMassChain):
        scene = _point_mass_scene(problem.model, t, X)
    else:
        model = problem.model
        bodies = multibody_bodies(model, X, max_faces)
        scene = Scene(t, bodies, size=mesh_radius(bodies))
        if model.pin_model.nq > model.pin_model.nv:  # floating base
            scene.paths.append(("base_path", X[:, :3], PATH_COLOR))
            scene.ground = _ground_around(scene, float(scene.bounds()[0][2]) - scene.size)
        if model.nc:
            for name, path in zip(model.kinematics_bodies, np.moveaxis(_feet(model, X), 1, 0)):
                scene.paths.append((f"{name}_path", path, PATH_COLOR))
    scene.title = f"{solution.problem_name or 'problem'}: {solution.status}, tf = {solution.tf:.3g} s, N = {solution.N} ({solution.transcription})"
    return scene
