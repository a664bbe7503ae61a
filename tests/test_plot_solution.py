"""Solution-level plots and animations (trajopt.plotting.solution) on solved problems.

Each figure is checked for its panels (titles, number of axes, a 3D axes for
rigid bodies) and the data it draws; files for being written, their frame
count (GIF) and the overwrite guard; unsupported models and solutions without
a problem for their error messages.
"""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

import problems  # noqa: E402
from lie import MRP, QuatState, UnitQuaternion, axis_angle_to_quat  # noqa: E402
from models.planar_chain import Pendulum  # noqa: E402
from models.torque_body import TorqueBody  # noqa: E402
from trajopt import GoalConstraint, Problem, QuadraticCost, Solution, solve  # noqa: E402
from trajopt.plotting.solution import animate_solution, control_groups, plot_solution, state_panels  # noqa: E402


@pytest.fixture(scope="module")
def pendulum():
    return solve(problems.get("pendulum", N=21))


@pytest.fixture(scope="module")
def quadrotor():
    return solve(problems.get("quadrotor", N=21))


@pytest.fixture(scope="module")
def trot():
    return solve(problems.get("go1-trot"))


def titles(fig) -> list[str]:
    return [ax.get_title(loc="left") or ax.get_title() for ax in fig.axes]


def test_pendulum_page(pendulum, tmp_path):
    fig = plot_solution(pendulum, tmp_path / "p.png")
    assert titles(fig) == [
        "coordinates q = x[0:1]",
        "velocities qd = x[1:2]",
        "controls u[0] (dashed red: bounds)",
        f"max constraint violation per knot (largest {pendulum.max_violation:.2e})",
    ]
    assert "pendulum (hermite_simpson, N = 21" in fig._suptitle.get_text() and "Solve_Succeeded" in fig._suptitle.get_text()
    # states drawn densely, as Hermite-Simpson interpolates them; the ends are the knots' ends
    angle = fig.axes[0].get_lines()[0]
    assert len(angle.get_xdata()) > 10 * pendulum.N
    assert np.allclose(angle.get_ydata()[[0, -1]], pendulum.states[[0, -1], 0], atol=1e-9)
    # the torque bounds +-5 N m are drawn
    bounds = [line.get_ydata() for line in fig.axes[2].get_lines()[1:]]
    assert sorted(float(b[0]) for b in bounds) == [-5.0, 5.0]
    with Image.open(tmp_path / "p.png") as image:
        assert image.format == "PNG"
    with pytest.raises(FileExistsError, match="exists"):
        plot_solution(pendulum, tmp_path / "p.png")
    plot_solution(pendulum, tmp_path / "p.png", overwrite=True)


def test_rigid_body_page_has_named_parts_and_3d_path(quadrotor):
    fig = plot_solution(quadrotor)
    t = titles(fig)
    assert t[0] == "trajectory (world frame)" and fig.axes[0].name == "3d"
    assert t[1:5] == [
        "position r (world frame) [m]",
        "attitude (UnitQuaternion) as ZYX Euler angles [deg]",
        "velocity v (world frame) [m/s]",
        "angular velocity w (body frame) [rad/s]",
    ]
    assert t[5] == "controls u[0:4] (dashed red: bounds)"  # the rotors share their bounds [0, u_max]
    assert len(fig.axes) == 7
    assert [line.get_label() for line in fig.axes[1].get_lines()] == ["x", "y", "z"]


def test_mrp_rigid_body_attitude_as_euler_angles():
    model = TorqueBody(rotation=MRP, u_max=2.0)
    x0 = model.build_state(np.zeros(3), np.array([1.0, 0, 0, 0]), np.zeros(3), np.zeros(3))
    xf = model.build_state(np.zeros(3), axis_angle_to_quat(np.array([0.0, 0.0, np.pi / 2])), np.zeros(3), np.zeros(3))
    problem = Problem(model, N=11, tf=4.0, x0=x0, name="mrp-slew")
    problem.add_cost(QuadraticCost(model, np.zeros(model.error_dim), np.ones(3), x_ref=xf))
    problem.add_constraint(GoalConstraint(model, xf))
    solution = solve(problem)
    assert solution.success
    fig = plot_solution(solution)
    attitude = fig.axes[2]
    assert attitude.get_title(loc="left") == "attitude (MRP) as ZYX Euler angles [deg]"
    yaw = attitude.get_lines()[0].get_ydata()
    assert abs(yaw[0]) < 1e-6 and abs(yaw[-1] - 90.0) < 1e-4


def test_legged_page_is_the_legged_summary(trot, tmp_path):
    fig = plot_solution(trot, tmp_path / "trot.pdf")
    shown = titles(fig)
    for title in ("base position (world)", "joint torques / limits (dashed red: +-1)", "vertical contact forces (world)", "foot heights", "gait diagram (bars: stance)"):
        assert title in shown
    assert (tmp_path / "trot.pdf").read_bytes().startswith(b"%PDF")


def test_state_panels_of_other_models():
    class Layout:  # any model with a LieState: [v3, q, v2, q, v3]
        state_dim = 16

        def lie_state(self):
            return QuatState(16, (3, 9))

    panels = state_panels(Layout())
    assert [(p[1].start, p[1].stop, p[2]) for p in panels] == [(0, 3, None), (3, 7, UnitQuaternion), (7, 9, None), (9, 13, UnitQuaternion), (13, 16, None)]
    assert [p[1] for p in state_panels(Pendulum())] == [slice(0, 1), slice(1, 2)]


def test_control_groups_share_identical_bounds():
    lower = np.array([[0.0, -1.0, 0.0, -1.0]] * 3)
    upper = np.array([[1.0, 1.0, 1.0, 1.0]] * 3)
    upper[2, 3] = 2.0  # u[3] differs at one knot
    assert control_groups(lower, upper) == [[0, 2], [1], [3]]


def test_animate_quadrotor_frames(quadrotor, tmp_path):
    path = animate_solution(quadrotor, tmp_path / "q.gif", fps=4)
    with Image.open(path) as gif:
        assert gif.n_frames == 21  # 0, 0.25, ..., 5 s
    with pytest.raises(FileExistsError, match="exists"):
        animate_solution(quadrotor, path, fps=4)


def test_animate_errors(pendulum, quadrotor, tmp_path):
    with pytest.raises(ValueError, match="no animation for model Pendulum"):
        animate_solution(pendulum, tmp_path / "p.gif")
    with pytest.raises(ValueError, match="fps: 0.1 frames per second give a single frame"):
        animate_solution(quadrotor, tmp_path / "q.gif", fps=0.1)
    quadrotor.save(tmp_path / "q.npz")
    loaded = Solution.load(tmp_path / "q.npz")
    with pytest.raises(ValueError, match="no problem attached; pass problem= to Solution.load"):
        plot_solution(loaded)
    with pytest.raises(ValueError, match="solution: expected a trajopt.Solution, got dict"):
        animate_solution({}, tmp_path / "x.gif")
    assert not (tmp_path / "p.gif").exists() and not (tmp_path / "q.gif").exists()
