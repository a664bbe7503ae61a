"""trajopt.mpc.log_writers: the per-tick log written as the run goes (CSV, Parquet, MCAP for Foxglove), and kept
when the run is interrupted."""
from __future__ import annotations

import csv
import json
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

import problems
from trajopt.mpc.log import LOG_COLUMNS, log_columns
from trajopt.mpc.log_writers import CsvTickLog, open_tick_log, write_log
from trajopt.mpc.loop import run_closed_loop
from trajopt.mpc.tasks import mpc_task

from .interruptible import default_sigint

ROOT = Path(__file__).resolve().parents[1]


def _track(duration: float = 0.6, **loop):
    task = mpc_task(problems.get("quadrotor-track"))
    return task, run_closed_loop(task.controller(mode="rti"), task.plant(), duration, 50.0, delay="tick", **loop)


def test_the_streamed_csv_is_the_finished_runs_log(tmp_path):
    """Rows written tick by tick during the run equal the log of the finished run (``write_log``), cell for cell."""
    task = mpc_task(problems.get("quadrotor-track"))
    streamed = open_tick_log(tmp_path / "streamed.csv", task.problem.model)
    result = run_closed_loop(task.controller(mode="rti"), task.plant(), 0.6, 50.0, delay="tick", on_tick=streamed.write)
    streamed.close(result.fell, result.interrupted)
    write_log(result, task.problem.model, tmp_path / "whole.csv")
    text = (tmp_path / "streamed.csv").read_text()
    assert text == (tmp_path / "whole.csv").read_text() and not (tmp_path / "streamed.csv.partial").exists()
    rows = list(csv.DictReader(text.splitlines()))
    assert len(rows) == len(result.log) == 30 and list(rows[0]) == list(LOG_COLUMNS)  # the first plan, then ticks at 0.02 .. 0.58 s
    assert all(r["interrupted"] == "false" and r["fallen"] == "false" for r in rows)
    assert [float(r["violation"]) for r in rows] == pytest.approx([r.violation for r in result.log], rel=1e-15)


def test_an_interrupted_run_keeps_every_tick_it_ran(tmp_path):
    """Ctrl-C (here raised by the progress callback at t = 1 s) stops the loop; the result and the log hold the ticks
    before it, the last one marked ``interrupted``."""

    def interrupt(t, log):
        raise KeyboardInterrupt

    task = mpc_task(problems.get("quadrotor-track"))
    log = open_tick_log(tmp_path / "run.csv", task.problem.model)
    result = run_closed_loop(task.controller(mode="rti"), task.plant(), 5.0, 50.0, delay="tick", progress=interrupt, on_tick=log.write)
    log.close(result.fell, result.interrupted)
    assert result.interrupted and not result.fell and len(result.log) == len(result.ticks) == 50  # the first plan, ticks at 0.02 .. 0.98 s
    rows = list(csv.DictReader((tmp_path / "run.csv").open()))
    assert len(rows) == 50 and rows[-1]["interrupted"] == "true" and all(r["interrupted"] == "false" for r in rows[:-1])
    assert log_columns(result, task.problem.model)["interrupted"].tolist() == [False] * 49 + [True]


def test_a_killed_run_leaves_the_rows_it_wrote(tmp_path):
    """Rows are flushed as they are written: a process that dies before closing leaves them in ``<file>.partial``
    (all but the last tick, which waits for the run's end)."""
    task, result = _track()
    log = CsvTickLog(tmp_path / "run.csv", task.problem.model)
    for record, timing in zip(result.log[:10], result.ticks[:10]):
        log.write(record, timing, None)
    partial = (tmp_path / "run.csv.partial").read_text().splitlines()
    assert len(partial) == 1 + 9 and not (tmp_path / "run.csv").exists()


def test_cli_ctrl_c_exits_130_with_its_log(tmp_path):
    """A real SIGINT to ``trajopt mpc``: exit status 130, the log written with every tick up to it."""
    path = tmp_path / "run.csv"
    command = [sys.executable, "-m", "trajopt.cli", "mpc", "quadrotor-track", "--duration", "60", "--log", str(path)]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)  # as from a terminal
    for line in proc.stdout:  # the first progress line: the loop runs
        if line.startswith("t ="):
            break
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    rows = list(csv.DictReader(path.open()))
    assert len(rows) >= 50 and rows[-1]["interrupted"] == "true" and "interrupted at t =" in out
    assert float(rows[-1]["t"]) < 60.0


@pytest.fixture(scope="module")
def stand_mcap(tmp_path_factory):
    """A go1-stand run of 0.3 s in the KKT plant, logged as MCAP."""
    path = tmp_path_factory.mktemp("mcap") / "stand.mcap"
    task = mpc_task(problems.get("go1-stand"))
    log = open_tick_log(path, task.problem.model)
    result = run_closed_loop(task.controller(mode="rti"), task.plant(sim="own"), 0.3, 50.0, delay="tick", on_tick=log.write)
    log.close(result.fell, result.interrupted)
    return path, task, result


def test_mcap_log_reads_back_with_foxgloves_schemas(stand_mcap):
    """Every tick's messages on every topic, each on its Foxglove schema (the controller's rows as JSON with a JSON
    schema), stamped with the tick's simulated time."""
    from mcap.reader import make_reader

    path, task, result = stand_mcap
    with path.open("rb") as handle:
        reader = make_reader(handle)
        summary = reader.get_summary()
        schemas = {c.topic: summary.schemas[c.schema_id].name for c in summary.channels.values()}
        messages = list(reader.iter_messages())
    assert schemas == {
        "/tf": "foxglove.FrameTransforms", "/joint_states": "foxglove.JointStates", "/contact_forces": "foxglove.SceneUpdate",
        "/plan/base_path": "foxglove.PosesInFrame", "/controller": "trajopt.TickLog",
    }  # fmt: skip
    ticks = len(result.log)
    assert Counter(channel.topic for _, channel, _ in messages) == {topic: ticks for topic in schemas}
    rows = [json.loads(m.data) for _, c, m in messages if c.topic == "/controller"]
    assert [r["t"] for r in rows] == pytest.approx([r.t for r in result.log], abs=1e-12)
    assert sorted({m.log_time for _, _, m in messages}) == [int(round(r.t * 1e9)) for r in result.log]


def test_mcap_messages_match_pinocchio_and_the_plan(stand_mcap):
    """The transforms are pinocchio's link placements of the measured state, the joint states its joints, the arrows
    the plan's contact forces (their sum the robot's weight, standing), the base path the plan's base positions."""
    from mcap.reader import make_reader
    from mcap_protobuf.decoder import DecoderFactory

    path, task, result = stand_mcap
    robot = task.problem.model.robot
    record = result.log[-1]
    with path.open("rb") as handle:
        last = {}
        for _, channel, message, decoded in make_reader(handle, decoder_factories=[DecoderFactory()]).iter_decoded_messages(topics=["/tf", "/joint_states", "/contact_forces"]):
            last[channel.topic] = decoded
    q = robot.change_order(record.state[: robot.nq], "nominal", "pinocchio")
    data = robot.pin_model.createData()
    pin.framesForwardKinematics(robot.pin_model, data, q)
    transforms = {tf.child_frame_id: tf for tf in last["/tf"].transforms}
    calf = data.oMf[robot.pin_model.getFrameId("FL_calf")]
    got = transforms["FL_calf"]
    np.testing.assert_allclose([got.translation.x, got.translation.y, got.translation.z], calf.translation, rtol=0, atol=1e-12)
    np.testing.assert_allclose([got.rotation.x, got.rotation.y, got.rotation.z, got.rotation.w], pin.Quaternion(calf.rotation).coeffs(), rtol=0, atol=1e-12)
    joints = last["/joint_states"].joints
    assert [j.name for j in joints] == list(robot.joint_names)
    np.testing.assert_allclose([j.position for j in joints], record.state[7 : robot.nq], rtol=0, atol=0)
    arrows = last["/contact_forces"].entities[0].arrows
    assert len(arrows) == 4
    assert sum(a.shaft_length for a in arrows) / 1e-3 == pytest.approx(robot.mass * 9.81, rel=0.05)
