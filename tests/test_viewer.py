"""The 3D viewer without a browser: visual placements against pinocchio, the scene, meshcat commands, files, CLI."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pinocchio as pin
import pytest
from scipy.spatial import cKDTree

import problems
from models import Go1, Go2, Hand, Manipulator
from models.robot_data import robot_data_dir
from trajopt.cli import main
from trajopt.legged import LeggedProblem
from trajopt.sim.pin_numerics import PinNumerics
from trajopt.viewer import MissingExtraError, export_html, solution_scene
from trajopt.viewer.meshcat_scene import ROOT, encode, scene_commands
from trajopt.viewer.scene import friction_color, friction_ratio, inertia_box, sample_times
from trajopt.viewer.shapes import load_mesh_file
from trajopt.viewer.visuals import geometry_model_visuals, robot_visuals, visual_poses

from .viewer_helpers import go1_trot, quadrotor, session_dir

umsgpack = pytest.importorskip("umsgpack")


def _random_configurations(pin_model: pin.Model, count: int, seed: int) -> np.ndarray:
    """Pinocchio configurations (count, nq) within +-1 of every bounded coordinate (unit quaternions)."""
    np.random.seed(seed)
    pin.seed(seed)
    lo, hi = -np.ones(pin_model.nq), np.ones(pin_model.nq)
    return np.array([pin.randomConfiguration(pin_model, lo, hi) for _ in range(count)])


@pytest.mark.parametrize("robot", [Go1, Go2], ids=["go1", "go2"])
def test_urdf_visual_placements_match_pinocchio(robot):
    """Our URDF reading places every visual where pinocchio's buildGeomFromUrdf + updateGeometryPlacements does."""
    model = robot()
    visuals = {v.name: v for v in robot_visuals(model)}
    geom = pin.buildGeomFromUrdf(model.pin_model, model.urdf_path, pin.GeometryType.VISUAL, package_dirs=[str(robot_data_dir().parent.parent)])
    assert sorted(visuals) == sorted(o.name for o in geom.geometryObjects)
    data, gdata = model.pin_model.createData(), geom.createData()
    numerics = PinNumerics(model.pin_model)
    names = [o.name for o in geom.geometryObjects]
    for q in _random_configurations(model.pin_model, 3, seed=4):
        pin.updateGeometryPlacements(model.pin_model, data, geom, gdata, q)
        ours = visual_poses(model.pin_model, [visuals[n] for n in names], numerics.from_pinocchio(q))[0]
        for j, name in enumerate(names):
            np.testing.assert_allclose(ours[j], gdata.oMg[j].homogeneous, atol=1e-12, err_msg=name)
            np.testing.assert_allclose(visuals[name].mesh.color[:3].max() <= 1.0, True)


@pytest.mark.parametrize("robot", [Hand, Manipulator], ids=["hand", "manipulator"])
def test_geometry_model_visuals_match_pinocchio(robot):
    model = robot()
    visuals = geometry_model_visuals(model.geometry_model)
    gdata, data = model.geometry_model.createData(), model.pin_model.createData()
    for q in _random_configurations(model.pin_model, 2, seed=1):
        pin.updateGeometryPlacements(model.pin_model, data, model.geometry_model, gdata, q)
        ours = visual_poses(model.pin_model, visuals, q)[0]
        for j in range(len(visuals)):
            np.testing.assert_allclose(ours[j], gdata.oMg[j].homogeneous, atol=1e-12)


def test_mesh_file_is_decimated_and_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("TRAJOPT_CACHE", str(tmp_path))
    trunk = robot_data_dir() / "go1_description/meshes/trunk.dae"
    full = load_mesh_file(trunk, max_faces=None)
    assert len(full.faces) == 351394  # the file's own triangle count
    small = load_mesh_file(trunk, max_faces=6000)
    assert len(small.faces) < 0.1 * len(full.faces)
    # decimation keeps the shape: same bounding box to 2 mm
    np.testing.assert_allclose(small.vertices.min(axis=0), full.vertices.min(axis=0), atol=2e-3)
    np.testing.assert_allclose(small.vertices.max(axis=0), full.vertices.max(axis=0), atol=2e-3)
    # and the surface: 99 % of the decimated vertices lie within 2 mm of the file's (measured 1.5 mm
    # after clustering on a 0.49 mm grid and quadric collapse; the worst vertex is 16 mm off)
    distance, _ = cKDTree(full.vertices).query(small.vertices)
    assert np.percentile(distance, 99) <= 2e-3
    assert len(list((tmp_path / "meshes").glob("*.npz"))) == 2
    again = load_mesh_file(trunk, max_faces=6000)
    np.testing.assert_array_equal(again.faces, small.faces)
    with pytest.raises(FileNotFoundError, match="mesh: no such file"):
        load_mesh_file(tmp_path / "missing.dae")


def test_collada_file_pycollada_cannot_read_comes_through_coal(tmp_path, monkeypatch):
    """ANYmal B's foot: trimesh (pycollada) finds no triangles; coal's assimp loader reads all of them."""
    import coal

    monkeypatch.setenv("TRAJOPT_CACHE", str(tmp_path))
    foot = robot_data_dir() / "anymal_b_simple_description/meshes/foot/anymal_foot.dae"
    mesh = load_mesh_file(foot, scale=(2.0, 2.0, 2.0), max_faces=None)
    reference = coal.MeshLoader().load(str(foot), np.full(3, 2.0))
    assert len(mesh.faces) == reference.num_tris > 0
    np.testing.assert_allclose(mesh.vertices, np.asarray(reference.vertices()), atol=1e-6)


def test_friction_ratio_and_color():
    f = np.array([[3.0, -4.0, 10.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 7.0, 10.0]])
    np.testing.assert_allclose(friction_ratio(f, 0.5, "cone"), [1.0, 0.0, np.inf, 1.4])
    np.testing.assert_allclose(friction_ratio(f, 0.5, "pyramid"), [0.8, 0.0, np.inf, 1.4])
    colors = friction_color(np.array([0.0, 0.5, 1.0, 3.0, np.inf]))
    np.testing.assert_allclose(colors[0], [0.10, 0.75, 0.20])
    np.testing.assert_allclose(colors[1], [0.95, 0.80, 0.05])
    np.testing.assert_allclose(colors[2:], [[0.90, 0.10, 0.10]] * 3)


def test_inertia_box_has_the_inertia():
    edges = inertia_box(2.0, np.diag([1.0, 2.0, 2.5]))
    a2, b2, c2 = edges**2
    np.testing.assert_allclose(2.0 / 12 * np.array([b2 + c2, a2 + c2, a2 + b2]), [1.0, 2.0, 2.5], rtol=1e-12)
    flat = inertia_box(2.0, np.diag([1.0, 2.0, 3.0]))  # rigid-body-slew's plate: zero thickness, drawn 5 % thick
    np.testing.assert_allclose(flat, [np.sqrt(12.0), np.sqrt(6.0), 0.05 * np.sqrt(12.0)], rtol=1e-12)
    with pytest.raises(ValueError, match="triangle inequality"):
        inertia_box(1.0, np.diag([1.0, 1.0, 3.0]))


def test_go1_scene_follows_the_solution():
    """Bodies at every knot sit where pinocchio puts the knot state's visuals; forces, footholds, ground."""
    solution = go1_trot()
    problem: LeggedProblem = solution.problem
    scene = solution_scene(solution)
    t = sample_times(solution)
    np.testing.assert_allclose(scene.times, t)
    per = (len(t) - 1) // (solution.N - 1)
    knots = np.arange(0, len(t), per)
    np.testing.assert_allclose(t[knots], solution.times, atol=1e-12)
    visuals = robot_visuals(problem.robot)
    expected = visual_poses(problem.robot.pin_model, visuals, solution.states[:, : problem.robot.nq])
    got = np.stack([b.poses for b in scene.bodies], axis=1)[knots]
    np.testing.assert_allclose(got, expected, atol=1e-9)
    # between knots the bodies follow Solution.evaluate (not a linear blend of knots)
    X, _ = solution.evaluate(t[1:per])
    mid = visual_poses(problem.robot.pin_model, visuals, X[:, : problem.robot.nq])
    np.testing.assert_allclose(np.stack([b.poses for b in scene.bodies], axis=1)[1:per], mid, atol=1e-9)
    # arrows: the WORLD-frame stance forces at the feet, scaled; nothing in swing
    forces = np.stack([solution.controls[:, problem.foot_force_slice(i)] for i in range(4)], axis=1)
    stance = problem.schedule.stance
    scale = 1.5 * problem.x0[2] / (problem.mass * 9.81)
    np.testing.assert_allclose(scene.arrows.vectors[knots], scale * np.where(stance[..., None], forces, 0.0), atol=1e-12)
    feet = np.array([np.asarray(problem.robot.kinematics(x)).reshape(4, 3) for x in solution.states])
    np.testing.assert_allclose(scene.arrows.tails[knots], feet, atol=1e-12)
    swing = ~stance
    assert np.all(scene.arrows.vectors[knots][swing] == 0)
    # one foothold per stance phase, on the ground
    phases = int((stance & ~np.vstack([np.zeros((1, 4), bool), stance[:-1]])).sum())
    holds = dict((n, p) for n, p, _, _ in scene.markers)["footholds"]
    assert holds.shape == (phases, 3)
    assert scene.ground[2] == pytest.approx(holds[:, 2].min())
    np.testing.assert_allclose(dict((n, p) for n, p, _ in scene.paths)["base_path"], solution.evaluate(t)[0][:, :3])


def test_meshcat_commands_send_meshes_once_and_poses_as_tracks():
    scene = solution_scene(go1_trot())
    commands = scene_commands(scene)
    objects = [c for c in commands if c["type"] == "set_object"]
    body_paths = {f"{ROOT}/{b.name}" for b in scene.bodies}
    assert body_paths <= {c["path"] for c in objects}
    assert len([c for c in objects if c["path"] in body_paths]) == len(scene.bodies)
    (animation,) = [c for c in commands if c["type"] == "set_animation"]
    assert commands[-1] is animation and animation["options"]["repetitions"] == float("inf")
    clips = {a["path"]: a["clip"] for a in animation["animations"]}
    body = scene.bodies[3]
    tracks = {t["name"]: t for t in clips[f"{ROOT}/{body.name}/<object>"]["tracks"]}
    times = np.frombuffer(tracks[".position"]["times"].data, dtype=np.float32)
    np.testing.assert_allclose(times, scene.times, atol=1e-6)
    positions = np.frombuffer(tracks[".position"]["values"].data, dtype=np.float32).reshape(-1, 3)
    np.testing.assert_allclose(positions, body.poses[:, :3, 3], atol=1e-6)
    xyzw = np.frombuffer(tracks[".quaternion"]["values"].data, dtype=np.float32).reshape(-1, 4)
    R = np.array([pin.Quaternion(q[3], q[0], q[1], q[2]).toRotationMatrix() for q in xyzw.astype(float)])
    np.testing.assert_allclose(R, body.poses[:, :3, :3], atol=1e-6)
    arrow = clips[f"{ROOT}/arrows/FL_foot/shaft/<object>"]
    assert {t["name"] for t in arrow["tracks"]} == {".position", ".quaternion", ".scale", ".material.color"}
    for command in commands:
        assert umsgpack.unpackb(encode(command))["type"] == command["type"]


def test_export_html_of_the_go1_trot_is_small(tmp_path):
    path = export_html(go1_trot(), tmp_path / "trot.html")
    size = path.stat().st_size
    assert 1e6 < size < 10e6, size  # meshcat's viewer (0.85 MB) and the meshes, well under 10 MB
    text = path.read_text()
    assert "MeshCat.Viewer" in text and "go1-trot" in text
    with pytest.raises(FileExistsError, match="overwrite=True"):
        export_html(go1_trot(), path)
    assert path.stat().st_size == size
    export_html(go1_trot(), path, overwrite=True)
    assert not list(tmp_path.glob(".*tmp"))


def test_quadrotor_scene_has_body_thrusts_and_path():
    solution = quadrotor()
    scene = solution_scene(solution)
    model = solution.problem.model
    assert [b.name for b in scene.bodies] == ["body", "axis_x", "axis_y", "axis_z"]
    X, U = solution.evaluate(scene.times)
    np.testing.assert_allclose(scene.bodies[0].poses[:, :3, 3], X[:, :3], atol=1e-12)
    thrust = np.linalg.norm(scene.arrows.vectors, axis=-1)
    np.testing.assert_allclose(thrust / thrust.max(), model.kf * U[:, :4] / (model.kf * U[:, :4]).max(), atol=1e-12)
    assert scene.ground[2] < X[:, 2].min()


def test_viewer_rejects_what_it_cannot_draw():
    kinodynamic = problems.get("go1-trot-kinodynamic")  # the pendulum it refused before issue 27 is drawn now
    from trajopt.viewer import check_viewable

    with pytest.raises(ValueError, match="no 3D view for model FloatingBaseModel"):
        check_viewable(kinodynamic)
    with pytest.raises(ValueError, match="no problem attached"):
        solution = go1_trot()
        detached = type(solution).load(_saved_trot())
        solution_scene(detached)


def _saved_trot():
    path = session_dir() / "trot.npz"
    if not path.exists():
        go1_trot().save(path)
    return path


def test_cli_view_writes_html_from_a_saved_solution(tmp_path, capsys):
    out = tmp_path / "view.html"
    assert main(["view", str(_saved_trot()), "--html", str(out)]) == 0
    assert out.stat().st_size > 1e6
    assert main(["view", str(_saved_trot()), "--html", str(out)]) == 2
    assert "--html: " in capsys.readouterr().err
    assert main(["view", str(tmp_path / "none.npz")]) == 2
    assert "no solution file" in capsys.readouterr().err


def test_cli_checks_viewer_options_before_solving(tmp_path, capsys):
    assert main(["solve", "go1-trot-kinodynamic", "--view"]) == 2
    assert "no 3D view for model FloatingBaseModel" in capsys.readouterr().err
    assert main(["solve", "go1-trot", "--html", str(tmp_path / "x.png")]) == 2
    assert "unknown extension" in capsys.readouterr().err
    assert main(["solve", "go1-trot", "--force-scale", "0.01"]) == 2


def test_live_viewer_close_stops_its_server_and_releases_its_pipes():
    """close() ends the meshcat server it started and closes the server's stdout and stderr pipes (they leaked)."""
    from trajopt.viewer.live import LiveViewer

    viewer = LiveViewer()
    server = viewer.server
    assert server.poll() is None and not server.stdout.closed and not server.stderr.closed
    viewer.close()
    assert server.returncode is not None, "the server still runs after close()"
    assert server.stdout.closed and server.stderr.closed, "close() left the server's output pipes open"


def _listening(port: int) -> set:
    """The local addresses of the TCP sockets listening on ``port``, from the kernel's socket table (IPv4 and IPv6)."""
    import ipaddress

    found = set()
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        for line in open(table).read().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if int(hex_port, 16) == port and state == "0A":  # 0A: LISTEN
                raw = bytes.fromhex(address)
                words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))  # each 32-bit word in host order
                found.add(str(ipaddress.ip_address(words)))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads Linux's socket table")
def test_the_viewer_listens_on_the_loopback_address_only():
    """meshcat's own server opened its web port on every interface (0.0.0.0); ours listens where it is told,
    127.0.0.1 by default, for the browser's web port and for Python's ZeroMQ port."""
    from trajopt.viewer.live import LiveViewer

    viewer = LiveViewer()
    try:
        web_port = int(viewer.url.split(":")[2].split("/")[0])
        zmq_port = int(viewer.visualizer.window.zmq_url.rsplit(":", 1)[1])
        assert _listening(web_port) == {"127.0.0.1"} and _listening(zmq_port) == {"127.0.0.1"}
    finally:
        viewer.close()


def test_missing_extra_is_one_line_naming_it():
    """With meshcat unimportable, the CLI prints one line naming the viz extra, exit code 2, no traceback."""
    code = "import sys; sys.modules['meshcat'] = None; from trajopt.cli import main; sys.exit(main(['solve', 'go1-trot', '--view']))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install -e \".[viz]\"" in lines[0] and "'viz' extra" in lines[0], run.stderr
    with pytest.raises(MissingExtraError, match="viz"):
        from trajopt.viewer.extra import require_viz

        sys.modules["definitely_not_installed_viz_module"] = None
        try:
            require_viz("definitely_not_installed_viz_module")
        finally:
            del sys.modules["definitely_not_installed_viz_module"]
