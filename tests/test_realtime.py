"""trajopt.mpc.process_plant and trajopt.mpc.realtime: the plant on the wall clock in another process, the loop
against it."""
from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import problems
from trajopt.mpc.process_plant import ProcessPlant
from trajopt.mpc.realtime import run_realtime_loop
from trajopt.mpc.tasks import mpc_task

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def tracked():
    """The quadrotor tracking its figure eight for 1.5 s against its plant in another process."""
    task = mpc_task(problems.get("quadrotor-track"))
    mpc = task.controller(mode="rti")
    plant = ProcessPlant("quadrotor-track", {}, task.problem.model.state_dim, 1e-3)
    try:
        result = run_realtime_loop(mpc, plant, 1.5, 50.0)
    finally:
        plant.close()
    return task, plant, result


def test_the_loop_ticks_on_the_plants_clock(tracked):
    """Every tick reads the state the plant had at a multiple of the period (its own step's time), the plan goes out,
    and the plant reports each plan's latency from the state's publication to the plan's arrival."""
    task, plant, result = tracked
    period = 1.0 / 50.0
    times = np.array([r.t for r in result.log])
    assert not result.fell and not result.interrupted and times[0] == 0.0
    assert np.allclose(times / period, np.round(times / period), atol=1e-6) and np.all(np.diff(times) > 0)
    assert len(times) >= 40 and times[-1] <= 1.5 + 1e-9  # ticks the controller overran are skipped, never taken late
    assert len(plant.latencies) == len(result.log)
    assert all(0 < seconds < 1.0 for _, seconds in plant.latencies)
    assert [t for t, _ in plant.latencies] == pytest.approx(times.tolist())


def test_the_real_plant_tracks_the_reference(tracked):
    task, _, result = tracked
    error = np.linalg.norm(result.states[:, :3] - task.reference(result.times)[:, :3], axis=1)
    assert error.max() < 0.05


def test_read_at_waits_for_the_plant_and_returns_that_step():
    """Before its first plan the plant holds still at its initial state; ``read_at`` of a time it has not reached fails
    after the timeout instead of returning another step's state."""
    task = mpc_task(problems.get("quadrotor-track"))
    plant = ProcessPlant("quadrotor-track", {}, task.problem.model.state_dim, 1e-3)
    try:
        t, x = plant.read_at(0.0)
        assert t == 0.0 and np.array_equal(x, task.x0)
        with pytest.raises(RuntimeError, match="no state at t = 0.500 s within 0.2 s"):
            plant.read_at(0.5, timeout=0.2)
    finally:
        plant.close()


def test_cli_realtime_run_and_its_refusals(tmp_path):
    log = tmp_path / "run.csv"
    run = subprocess.run([sys.executable, "-m", "trajopt.cli", "mpc", "quadrotor-track", "--realtime", "--duration", "1", "--log", str(log)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "measurement to plan at the plant (across the process boundary): p50" in run.stdout
    rows = list(csv.DictReader(log.open()))
    assert len(rows) >= 25 and float(rows[-1]["t"]) <= 1.0 + 1e-9
    refused = subprocess.run([sys.executable, "-m", "trajopt.cli", "mpc", "go1-trot", "--realtime", "--push", "6,90,1"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert refused.returncode == 2 and "--push: the emulated loop's option" in refused.stderr
