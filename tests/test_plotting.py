"""Plotting and animation (trajopt.plotting) on synthetic numpy data.

Figures are checked for their number of axes and the data they draw, files
for being written (PNG/SVG/PDF, GIF/MP4) and for the overwrite guard. The
stick-figure segments are checked against pinocchio's joint and frame
placements on Go1 (absolute tolerance 1e-12 m: the same pinocchio call).
"""
from __future__ import annotations

import sysconfig
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pinocchio  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from lie import euler_zyx_to_quat  # noqa: E402
from trajopt.plotting import (  # noqa: E402
    animate_rigid_body,
    animate_stick_figure,
    plot_base,
    plot_constraint_violation,
    plot_contact_forces,
    plot_controls,
    plot_foot_heights,
    plot_gait_diagram,
    plot_joints,
    plot_legged_summary,
    plot_states,
    plot_trajectory_3d,
    save_figure,
    stick_segments,
)
from trajopt.plotting.animation import frame_times, slerp_quaternions  # noqa: E402
from trajopt.plotting.legged import stance_intervals  # noqa: E402

GO1_URDF = Path(sysconfig.get_paths()["purelib"], "cmeel.prefix/share/example-robot-data/robots/go1_description/urdf/go1.urdf")
FEET = ["FL_foot", "FR_foot", "RL_foot", "RR_foot"]
N = 21


@pytest.fixture
def times():
    return np.linspace(0.0, 1.0, N)


@pytest.fixture
def euler(times):
    """(yaw, pitch, roll) [rad]; roll passes pi (unwrapped in the plot)."""
    return np.column_stack([1.2 * times, 0.3 * np.sin(3 * times), 4.0 * times])


@pytest.fixture
def quats(euler):
    return np.array([euler_zyx_to_quat(e) for e in euler])


@pytest.fixture
def positions(times):
    return np.column_stack([np.cos(times), np.sin(times), 0.5 * times])


@pytest.fixture
def legged(times):
    """Synthetic trot data for 4 feet and 12 joints (not a physical motion)."""
    stance = np.zeros((N, 4), dtype=bool)
    first_pair = (times * 4) % 1.0 < 0.5
    stance[:, [0, 3]] = first_pair[:, None]
    stance[:, [1, 2]] = ~first_pair[:, None]
    forces = np.zeros((N, 4, 3))
    forces[:, :, 2] = 60.0 * stance
    feet = np.zeros((N, 4, 3))
    feet[:, :, 0] = times[:, None] * 0.4 + np.array([0.2, 0.2, -0.2, -0.2])
    feet[:, :, 1] = np.array([0.13, -0.13, 0.13, -0.13])
    feet[:, :, 2] = 0.06 * ~stance
    base_pos = np.column_stack([0.4 * times, np.zeros(N), 0.3 * np.ones(N)])
    base_quat = np.array([euler_zyx_to_quat([0.2 * t, 0.05, 0.0]) for t in times])
    base_vel = np.column_stack([0.4 * np.ones(N), np.zeros((N, 4)), 0.2 * np.ones(N)])
    q_joints = np.tile([0.0, 0.8, -1.6], (N, 4)) + 0.2 * np.sin(6 * times)[:, None]
    tau = 10.0 * np.cos(np.arange(12)[None, :] + 5 * times[:-1, None])
    return dict(stance=stance, forces=forces, feet=feet, base_pos=base_pos, base_quat=base_quat, base_vel=base_vel, q_joints=q_joints, tau=tau)


def state_trajectory(positions, quats):
    return np.hstack([positions, quats, np.ones((N, 3)), np.zeros((N, 3))])


# ------------------------------------------------------------ saving figures


@pytest.mark.parametrize("ext", ["png", "svg", "pdf", "PNG"])
def test_save_figure_writes_by_extension(tmp_path, ext):
    fig = plt.figure()
    target = tmp_path / "missing" / "dir" / f"fig.{ext}"
    assert save_figure(fig, target) is fig
    assert target.stat().st_size > 0


def test_save_figure_refuses_to_overwrite(tmp_path):
    target = tmp_path / "fig.png"
    save_figure(plt.figure(), target)
    with pytest.raises(FileExistsError, match="overwrite=True"):
        save_figure(plt.figure(), target)
    save_figure(plt.figure(), target, overwrite=True)


def test_save_figure_rejects_unknown_extension(tmp_path):
    with pytest.raises(ValueError, match=r"unknown extension '\.jpg'.*\.png, \.pdf, \.svg"):
        save_figure(plt.figure(), tmp_path / "fig.jpg")
    assert not (tmp_path / "fig.jpg").exists()


def test_plot_refuses_to_overwrite(tmp_path, times):
    target = tmp_path / "u.svg"
    plot_controls(times, np.ones((N, 2)), path=target)
    with pytest.raises(FileExistsError):
        plot_controls(times, np.ones((N, 2)), path=target)
    plot_controls(times, np.ones((N, 2)), path=target, overwrite=True)


# --------------------------------------------------------------------- states


def test_plot_states_groups_and_euler(tmp_path, times, positions, quats, euler):
    x = state_trajectory(positions, quats)
    fig = plot_states(times, x, quaternion_slices=(slice(3, 7),), path=tmp_path / "x.pdf")
    assert (tmp_path / "x.pdf").stat().st_size > 0
    # groups x[0:3], quaternion x[3:7], its Euler angles, x[7:13]
    assert len(fig.axes) == 4
    euler_ax = fig.axes[2]
    drawn = np.column_stack([line.get_ydata() for line in euler_ax.get_lines()])
    np.testing.assert_allclose(drawn, np.degrees(euler), atol=1e-9)
    assert "deg" in euler_ax.get_ylabel()


def test_plot_states_custom_groups_and_labels(times, positions, quats):
    x = state_trajectory(positions, quats)
    names = ["x", "y", "z", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "wx", "wy", "wz"]
    groups = [("position [m]", slice(0, 3)), ("attitude", slice(3, 7)), ("velocity [m/s]", slice(7, 10)), ("angular velocity [rad/s]", slice(10, 13))]
    fig = plot_states(times, x, labels=names, quaternion_slices=(slice(3, 7),), groups=groups)
    assert len(fig.axes) == 5
    assert [ax.get_title(loc="left") for ax in fig.axes][:2] == ["position [m]", "attitude"]
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["x", "y", "z"]


def test_plot_states_input_errors(times, positions, quats):
    x = state_trajectory(positions, quats)
    with pytest.raises(ValueError, match=r"states: expected shape \(21, nx\), got \(20, 13\)"):
        plot_states(times, x[:-1])
    with pytest.raises(ValueError, match="quaternion_slices.*4 components"):
        plot_states(times, x, quaternion_slices=(slice(3, 6),))
    bad = x.copy()
    bad[5, 3:7] *= 1.01
    with pytest.raises(ValueError, match="unit quaternion"):
        plot_states(times, bad, quaternion_slices=(slice(3, 7),))
    with pytest.raises(ValueError, match="times"):
        plot_states(times[::-1], x)


# ------------------------------------------------------------------- controls


def test_plot_controls_limits_and_steps(tmp_path, times):
    u = np.column_stack([np.sin(times[:-1]), np.cos(times[:-1]), times[:-1]])
    fig = plot_controls(times, u, labels=["a", "b", "c"], lower=-1.0, upper=[1.0, np.inf, 2.0], path=tmp_path / "u.png")
    assert len(fig.axes) == 3
    limit_lines = [len(ax.get_lines()) - 1 for ax in fig.axes]
    assert limit_lines == [2, 1, 2]  # infinite limits are not drawn
    assert fig.axes[0].get_lines()[0].get_drawstyle() == "steps-post"


def test_plot_controls_grid_for_many_inputs(times):
    fig = plot_controls(times, np.zeros((N, 12)))
    assert len(fig.axes) == 12


def test_plot_constraint_violation_floor(tmp_path, times):
    v = 10.0 ** -np.linspace(2, 12, N)
    v[4] = 0.0
    fig = plot_constraint_violation(times, v, path=tmp_path / "v.svg")
    (ax,) = fig.axes
    assert ax.get_yscale() == "log"
    markers = ax.get_lines()[0].get_ydata()
    assert markers[4] == 1e-16 and markers[0] == pytest.approx(1e-2)
    fig = plot_constraint_violation(times, v[:-1])  # per interval, at midpoints
    assert fig.axes[0].get_lines()[0].get_xdata()[0] == pytest.approx(0.5 * (times[0] + times[1]))


# --------------------------------------------------------------------- 3D


def test_plot_trajectory_3d(tmp_path, positions, quats):
    fig = plot_trajectory_3d(positions, quats, every=5, path=tmp_path / "p.png")
    (ax,) = fig.axes
    assert ax.name == "3d"
    spans = [np.ptp(lim) for lim in (ax.get_xlim(), ax.get_ylim(), ax.get_zlim())]
    np.testing.assert_allclose(spans, spans[0])
    assert len(plot_trajectory_3d(positions).axes) == 1
    with pytest.raises(ValueError, match="every"):
        plot_trajectory_3d(positions, quats, every=0)


# ------------------------------------------------------------------ animation


def test_frame_times_and_slerp():
    t = frame_times(np.array([0.0, 0.1, 0.2]), fps=10)
    np.testing.assert_allclose(t, [0.0, 0.1, 0.2])
    q0, q1 = np.array([1.0, 0, 0, 0]), euler_zyx_to_quat([np.pi / 2, 0, 0])
    mid = slerp_quaternions(np.array([0.0, 1.0]), np.array([q0, q1]), np.array([0.5]))[0]
    np.testing.assert_allclose(mid, euler_zyx_to_quat([np.pi / 4, 0, 0]), atol=1e-12)
    mid_flipped = slerp_quaternions(np.array([0.0, 1.0]), np.array([q0, -q1]), np.array([0.5]))[0]
    np.testing.assert_allclose(mid_flipped * np.sign(mid_flipped[0]), mid, atol=1e-12)  # shortest path


def test_animate_rigid_body_gif_and_mp4(tmp_path, positions, quats):
    t = np.linspace(0.0, 0.2, N)  # 0.2 s at 25 fps: 6 frames
    gif = animate_rigid_body(t, positions, quats, tmp_path / "anim" / "rb.gif", fps=25)
    with Image.open(gif) as im:
        assert im.n_frames == 6 and im.info["duration"] == 40
    mp4 = animate_rigid_body(t, positions, quats, tmp_path / "rb.mp4", fps=15)
    data = mp4.read_bytes()
    assert len(data) > 0 and data[4:8] == b"ftyp"
    with pytest.raises(FileExistsError):
        animate_rigid_body(t, positions, quats, gif, fps=15)
    with pytest.raises(ValueError, match="extension"):
        animate_rigid_body(t, positions, quats, tmp_path / "rb.avi", fps=15)


# --------------------------------------------------------------------- legged


def test_stance_intervals():
    t = np.arange(6.0)
    assert stance_intervals(t, np.array([1, 1, 0, 0, 1, 1], bool)) == [(0.0, 2.0), (4.0, 5.0)]
    assert stance_intervals(t[:6], np.array([0, 1, 0, 0, 1], bool)) == [(1.0, 2.0), (4.0, 5.0)]


def test_legged_plots(tmp_path, times, legged):
    d = legged
    names = [f"j{i}" for i in range(12)]
    fig = plot_base(times, d["base_pos"], d["base_quat"], d["base_vel"], path=tmp_path / "base.png")
    assert len(fig.axes) == 4
    fig = plot_joints(times, d["q_joints"], d["tau"], -1.0, np.full(12, 1.0), 23.7, names, path=tmp_path / "joints.png")
    assert len(fig.axes) == 24
    fig = plot_contact_forces(times, d["forces"], d["stance"], FEET, path=tmp_path / "forces.png")
    assert len(fig.axes) == 4
    fig = plot_foot_heights(times, d["feet"], d["stance"], FEET, path=tmp_path / "heights.svg")
    assert len(fig.axes) == 4
    fig = plot_gait_diagram(times, d["stance"], FEET, path=tmp_path / "gait.pdf")
    assert len(fig.axes) == 1
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == FEET[::-1]
    args = (times, d["base_pos"], d["base_quat"], d["base_vel"], d["q_joints"], d["tau"], 23.7, d["forces"], d["stance"], d["feet"], FEET)
    assert len(plot_legged_summary(*args, path=tmp_path / "summary.png").axes) == 9
    assert len(plot_legged_summary(*args, joint_names=names).axes) == 10
    for name in ("base", "joints", "forces", "summary"):
        assert (tmp_path / f"{name}.png").stat().st_size > 0


def test_legged_input_errors(times, legged):
    with pytest.raises(ValueError, match="foot_names: expected 4 names"):
        plot_gait_diagram(times, legged["stance"], FEET[:3])
    with pytest.raises(ValueError, match=r"forces: expected shape \(21, nfeet, 3\)"):
        plot_contact_forces(times, legged["forces"][:, :, :2], legged["stance"], FEET)
    with pytest.raises(ValueError, match=r"stance: expected shape \(21, 4\)"):
        plot_foot_heights(times, legged["feet"], legged["stance"][:, :3], FEET)


@pytest.fixture(scope="module")
def go1():
    return pinocchio.buildModelFromUrdf(str(GO1_URDF), pinocchio.JointModelFreeFlyer())


def random_configurations(model, count, seed=0):
    """Configurations in OUR order (base quaternion [qw, qx, qy, qz]) and pinocchio's."""
    rng = np.random.default_rng(seed)
    ours, pins = [], []
    for _ in range(count):
        q_pin = pinocchio.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq))
        q_pin[3:7] = rng.normal(size=4)
        q_pin[3:7] /= np.linalg.norm(q_pin[3:7])
        q = q_pin.copy()
        q[3:7] = q_pin[[6, 3, 4, 5]]
        ours.append(q)
        pins.append(q_pin)
    return np.array(ours), pins


def test_stick_segments_match_pinocchio(go1):
    qs, pins = random_configurations(go1, 3)
    seg = stick_segments(go1, qs)
    # 12 joint-to-parent links (root to hips, hips to thighs, thighs to calves) + 4 calves to feet
    assert seg.shape == (3, 16, 2, 3)
    data = go1.createData()
    for k, q_pin in enumerate(pins):
        pinocchio.forwardKinematics(go1, data, q_pin)
        pinocchio.updateFramePlacements(go1, data)
        joint_pairs = [(go1.parents[i], i) for i in range(2, go1.njoints)]
        for s, (parent, child) in enumerate(joint_pairs):
            np.testing.assert_allclose(seg[k, s, 0], data.oMi[parent].translation, atol=1e-12)
            np.testing.assert_allclose(seg[k, s, 1], data.oMi[child].translation, atol=1e-12)
        feet = np.array([data.oMf[go1.getFrameId(f)].translation for f in FEET])
        np.testing.assert_allclose(seg[k, 12:, 1], feet, atol=1e-12)


def test_stick_segments_frame_pairs_and_errors(go1):
    qs, pins = random_configurations(go1, 1, seed=1)
    seg = stick_segments(go1, qs, frame_pairs=[("base", "FL_foot")])
    data = go1.createData()
    pinocchio.framesForwardKinematics(go1, data, pins[0])
    np.testing.assert_allclose(seg[0, 0, 1], data.oMf[go1.getFrameId("FL_foot")].translation, atol=1e-12)
    with pytest.raises(ValueError, match="no frame named 'nose'"):
        stick_segments(go1, qs, frame_pairs=[("base", "nose")])
    bad = qs.copy()
    bad[0, 3:7] *= 2.0
    with pytest.raises(ValueError, match=r"q_list\[0\]\[3:7\].*unit quaternion"):
        stick_segments(go1, bad)


def test_animate_stick_figure(tmp_path, go1, legged):
    n = 4
    t = np.linspace(0.0, 0.3, n)  # 0.3 s at 10 fps: 4 frames
    qs, _ = random_configurations(go1, n, seed=2)
    seg = stick_segments(go1, qs)
    gif = animate_stick_figure(t, seg, legged["feet"][:n], legged["forces"][: n - 1], legged["stance"][:n], tmp_path / "go1.gif", fps=10)
    with Image.open(gif) as im:
        assert im.n_frames == 4
    mp4 = animate_stick_figure(t, seg, legged["feet"][:n], None, legged["stance"][:n], tmp_path / "go1.mp4", fps=10)
    assert mp4.stat().st_size > 0
    with pytest.raises(FileExistsError):
        animate_stick_figure(t, seg, legged["feet"][:n], None, legged["stance"][:n], gif, fps=10)
