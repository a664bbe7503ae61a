"""meshcat (what trajopt.viewer uses) against viser on the Go1 trot: start time, correctness, export size.

Run: ``python bench/viewer_libraries.py`` (needs the ``viz`` extra; viser and
yourdfpy are measured when installed: ``pip install viser yourdfpy``).
Prints, in one run on this machine:

- meshcat: server start (``meshcat.Visualizer()``, a subprocess), our scene
  from the solution (warm mesh cache) and sending it, and the size of our
  self-contained HTML export;
- viser: server start, loading the Go1 through ``viser.extras.ViserUrdf``
  (yourdfpy + trimesh, a ``package://`` resolver), the largest link-pose error
  of yourdfpy's forward kinematics against pinocchio's with and without the
  joint-name mapping, and the size of a ``.viser`` recording of the same
  motion (one ``update_cfg`` per sample) plus viser's client build, which the
  recording needs (served over HTTP) to play.

Ratios are viser / meshcat in the same run.
"""
from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pinocchio as pin

import problems
from models.robot_data import robot_data_dir
from trajopt import solve
from trajopt.sim.pin_numerics import PinNumerics
from trajopt.viewer import export_html, solution_scene
from trajopt.viewer.live import LiveViewer


def measure_meshcat(solution) -> dict:
    t0 = time.perf_counter()
    viewer = LiveViewer()
    t1 = time.perf_counter()
    scene = solution_scene(solution)
    t2 = time.perf_counter()
    viewer.display(scene)
    t3 = time.perf_counter()
    viewer.close()
    with tempfile.TemporaryDirectory() as folder:
        size = export_html(solution, Path(folder) / "trot.html").stat().st_size
    return {"start": t1 - t0, "scene": t2 - t1, "send": t3 - t2, "export_bytes": size, "samples": len(scene.times)}


def measure_viser(solution) -> dict | None:
    if importlib.util.find_spec("viser") is None or importlib.util.find_spec("yourdfpy") is None:
        return None
    import viser
    import yourdfpy
    from viser.extras import ViserUrdf

    robot = solution.problem.robot
    share = robot_data_dir().parent.parent

    def resolve(fname: str) -> str:
        return str(share / fname[len("package://") :]) if fname.startswith("package://") else fname

    t0 = time.perf_counter()
    server = viser.ViserServer(port=8090 + os.getpid() % 500, verbose=False)
    t1 = time.perf_counter()
    urdf = yourdfpy.URDF.load(robot.urdf_path, filename_handler=resolve, load_meshes=True)
    viser_urdf = ViserUrdf(server, urdf, root_node_name="/go1")
    t2 = time.perf_counter()

    # correctness: yourdfpy's link poses (base fixed at the origin) against pinocchio's, one random configuration
    names = list(viser_urdf.get_actuated_joint_names())
    ours = list(robot.pin_model.names[2:])  # pinocchio's joint order after the free flyer
    q_joints = np.random.default_rng(0).uniform(-0.5, 0.5, len(ours))
    mapped = np.array([q_joints[ours.index(n)] for n in names])
    q = np.r_[0, 0, 0, 1.0, 0, 0, 0, q_joints]
    data = robot.pin_model.createData()
    pin.framesForwardKinematics(robot.pin_model, data, PinNumerics(robot.pin_model).to_pinocchio(q))
    trunk = data.oMf[robot.pin_model.getFrameId("trunk", pin.BODY)].homogeneous

    def link_error(cfg: np.ndarray) -> float:
        urdf.update_cfg(cfg)
        errors = []
        for link in urdf.link_map:
            if robot.pin_model.existFrame(link, pin.BODY):
                ours_T = np.linalg.inv(trunk) @ data.oMf[robot.pin_model.getFrameId(link, pin.BODY)].homogeneous
                errors.append(np.abs(urdf.get_transform(link, "trunk") - ours_T).max())
        return float(max(errors))

    mapped_error, unmapped_error = link_error(mapped), link_error(q_joints)

    # the recording of the motion: base pose and joints per sample
    t = solution_scene(solution).times
    X, _ = solution.evaluate(t)
    serializer = server.get_scene_serializer()
    frame = server.scene.add_frame("/go1", show_axes=False)
    for k in range(len(t)):
        frame.position = X[k, :3]
        frame.wxyz = X[k, 3:7] / np.linalg.norm(X[k, 3:7])
        viser_urdf.update_cfg(np.array([X[k, 7:19][ours.index(n)] for n in names]))
        serializer.insert_sleep(float(t[1] - t[0]))
    recording = len(serializer.serialize())
    client = sum(f.stat().st_size for f in (Path(viser.__file__).parent / "client" / "build").rglob("*") if f.is_file())
    server.stop()
    return {
        "start": t1 - t0,
        "scene": t2 - t1,
        "mapped_error": mapped_error,
        "unmapped_error": unmapped_error,
        "recording_bytes": recording,
        "client_bytes": client,
        "first_joint": names[0],
    }


def main() -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        solution = solve(problems.get("go1-trot"), print_level=0)
    with tempfile.TemporaryDirectory() as cache:  # a first view reads and decimates the meshes
        saved, os.environ["TRAJOPT_CACHE"] = os.environ.get("TRAJOPT_CACHE"), cache
        t0 = time.perf_counter()
        solution_scene(solution)
        cold = time.perf_counter() - t0
        if saved is None:
            del os.environ["TRAJOPT_CACHE"]
        else:
            os.environ["TRAJOPT_CACHE"] = saved
    solution_scene(solution)  # fill the real mesh cache
    mc = measure_meshcat(solution)
    print(f"our Go1 scene with an empty mesh cache (read + decimate the meshes once): {cold:.2f} s")
    print(f"meshcat 0.3.2: server start {mc['start']:.2f} s, scene {mc['scene']:.2f} s ({mc['samples']} samples), send {mc['send']:.2f} s; "
          f"self-contained HTML {mc['export_bytes'] / 1e6:.2f} MB")
    vs = measure_viser(solution)
    if vs is None:
        print("viser: not installed (pip install viser yourdfpy)")
        return
    print(f"viser: server start {vs['start']:.2f} s, ViserUrdf(Go1) load {vs['scene']:.2f} s; "
          f"link poses vs pinocchio: {vs['mapped_error']:.1e} m with the joint-name mapping, {vs['unmapped_error']:.1e} without "
          f"(yourdfpy's first joint: {vs['first_joint']}); recording {vs['recording_bytes'] / 1e6:.2f} MB + client build {vs['client_bytes'] / 1e6:.2f} MB (served over HTTP)")
    print(f"viser / meshcat: start {vs['start'] / mc['start']:.2f}, robot load {vs['scene'] / (mc['scene'] + mc['send']):.2f}, "
          f"export {(vs['recording_bytes'] + vs['client_bytes']) / mc['export_bytes']:.2f}")


if __name__ == "__main__":
    main()
