"""
Close the loop: model-predictive control in a plant
===================================================

A plan is computed once; a robot that gets pushed, carries a payload or
meets a slippery floor needs a controller that re-plans from what it
measures. :mod:`trajopt.mpc` turns a registered problem into a
receding-horizon controller (:class:`~trajopt.mpc.MPC`): at every tick it
solves a short horizon from the measured state, and the plant (a simulator
it does not own) runs the first part of that plan, with Riccati feedback
gains between ticks, until the next plan arrives. ``trajopt mpc NAME`` does
it from the command line; the Python API below does the same step by step.

This page runs a quadrotor tracking a figure-eight in our own simulator
(seconds), and shows the Go1 trotting in MuJoCo, which is executed only in
the full build of this page: the legged horizon compiles to C first, which
takes minutes.
"""

import os

import problems
from trajopt.cli import main

# the documentation's CI build sets TRAJOPT_DOCS_QUICK=1: shorter runs, and the Go1 in MuJoCo is skipped
QUICK = os.environ.get("TRAJOPT_DOCS_QUICK") == "1"
DURATION = 4.0 if QUICK else 8.0

# %%
# From the command line
# ---------------------
#
# ``quadrotor-track`` is the problem "fly one lap of a figure-eight 2 m
# across at 1 m height in 4 s" (``trajopt solve quadrotor-track`` plans it
# once). ``trajopt mpc`` makes it a 1 s horizon (21 knots) whose references
# follow the figure-eight from each tick's time, re-solved at 50 Hz by one
# real-time iteration per tick (``--mode rti``: one Gauss-Newton SQP step,
# its QP solved by HPIPM), and runs it in our simulator (RK4 at 1 ms). Each
# plan reaches the plant after the time its solve took (``--delay
# measured``). A push of 1 N s along +y (90 degrees) at t = 2 s, over 0.1 s,
# is a disturbance the controller does not know about. It prints one line
# per simulated second, a summary, and writes the per-tick log, the figure
# and a 3D replay of the plant's motion with the push as a red arrow (press
# play; ``#t=2.05`` at the end of its address shows the moment of the push).

status = main([
    "mpc", "quadrotor-track", "--duration", str(DURATION), "--push", "1,90,2",
    "--log", "track.csv", "--plot", "track.png", "--html", "track.html", "--overwrite",
])  # fmt: skip
print("exit status", status)

# %%
# In the figure: the base position and velocity against the reference
# (dashed), the push shaded red, every tick's compute time against the
# 20 ms deadline, and the applied plans' largest control relative to its
# bound. The exit status is 0 without a fall, 3 when a legged robot fell.
#
# The same in Python
# ------------------
#
# :func:`~trajopt.mpc.tasks.mpc_task` builds what a closed loop needs of a
# problem (:class:`~trajopt.mpc.tasks.MPCTask`): the horizon problem and its
# per-tick update (here: the references from the tick's time on), the
# plant's initial state, a plant factory and the reference for the tracking
# error. ``task.controller(...)`` is the :class:`~trajopt.mpc.MPC`, with the
# mode, solver and time budget of a tick.

from trajopt.mpc.disturbances import Push
from trajopt.mpc.loop import run_closed_loop
from trajopt.mpc.report import loop_statistics, summary
from trajopt.mpc.tasks import mpc_task

task = mpc_task(problems.get("quadrotor-track"), horizon=1.0)
print(task.problem.name, "horizon", task.problem.tf, "s,", task.problem.N, "knots")
mpc = task.controller(mode="rti")
plant = task.plant()  # our simulator: RK4 of the same model at 1 ms
push = Push(impulse=1.0, angle=90.0, start=2.0)  # N s, degrees from +x, s
result = run_closed_loop(mpc, plant, duration=DURATION, rate=50.0, disturbances=[push])
stats = loop_statistics(result, task.problem.model, task.reference)
print(summary(stats, result.rate))

# %%
# :func:`~trajopt.mpc.loop.run_closed_loop` first converges the plan at the
# initial state (:meth:`~trajopt.mpc.MPC.reset`, before the clock starts),
# then steps the plant at its own 1 ms: a tick every 20 ms measures the state
# and starts a solve, whose plan is applied from the moment it arrives
# (its feedback law is indexed by absolute time, so a late plan is still
# applied at the right place). The result holds the plant's states,
# controls and forces at every plant step and one
# :class:`~trajopt.mpc.TickRecord` per tick.
#
# The per-tick log
# ----------------
#
# :func:`~trajopt.mpc.log.log_columns` makes the log a table, one row per
# tick: the measurement time, compute and solve time (s, wall), iterations
# (and HPIPM's interior-point iterations of a real-time iteration's QP),
# the solver's status, whether the tick failed or was late, the objective,
# the applied plan's constraint violation, the measured base position and
# WORLD velocity, and when the plan reached the plant.
# :func:`~trajopt.mpc.log_writers.write_log` writes it as CSV, Parquet or MCAP (for Foxglove).

import numpy as np

from trajopt.mpc.log import log_columns
from trajopt.mpc.log_writers import write_log

columns = log_columns(result, task.problem.model)
print(len(columns["t"]), "ticks; columns:", ", ".join(columns))
for k in (0, 1, 2, len(columns["t"]) - 1):
    print(
        f"t = {columns['t'][k]:5.2f} s  compute {1e3 * columns['compute_time'][k]:5.1f} ms  "
        f"iterations {columns['iterations'][k]} (QP {columns['qp_iterations'][k]})  {columns['status'][k]}  "
        f"base ({columns['base_x'][k]:+.3f}, {columns['base_y'][k]:+.3f}, {columns['base_z'][k]:.3f}) m"
    )
write_log(result, task.problem.model, "track_python.parquet", overwrite=True)
errors = np.linalg.norm(result.states[:, :3] - task.reference(result.times)[:, :3], axis=1)
print(f"largest position error {100 * errors.max():.1f} cm, at t = {result.times[errors.argmax()]:.2f} s (the push starts at {push.start:g} s)")

# %%
# One real-time iteration against a converged solve
# -------------------------------------------------
#
# ``mode="converged"`` solves each tick's horizon to convergence (IPOPT,
# warm-started from the previous plan) instead of one SQP step. Its ticks
# take several times as long, beyond the 20 ms period here: with plans applied
# when their solve ends (``delay="measured"``, the default) they would arrive
# late, and how late depends on the machine. To compare the two controllers'
# plans alone, both runs below apply each plan one tick after its measurement
# (``delay="tick"``), whatever its solve took.

runs = {mode: run_closed_loop(task.controller(mode=mode), task.plant(), duration=DURATION, rate=50.0, delay="tick", disturbances=[push]) for mode in ("rti", "converged")}
for name, run in runs.items():
    s = loop_statistics(run, task.problem.model, task.reference)
    print(f"{name:9s}: tick p50 {1e3 * s.p50:5.1f} ms, p99 {1e3 * s.p99:5.1f} ms, deadline misses {s.deadline_misses}; position RMS {100 * s.tracking_rms:.2f} cm; failed {s.failed}")

# %%
# The figure of the run, as ``--plot`` draws it:

from trajopt.plotting.mpc import plot_closed_loop

plot_closed_loop(result, task, path="track_python.png", overwrite=True)

# %%
# A Go1 trotting in MuJoCo
# ------------------------
#
# A legged problem becomes a receding horizon of the robot's gait
# (:class:`~trajopt.mpc.legged.LeggedMPC`: 0.4 s scaled to the legs, full
# rigid-body dynamics with point contacts), commanded by a velocity in its
# heading frame (``--vx`` forward, ``--vy`` to the left, m/s; ``--yaw-rate``,
# rad/s), and runs by default in MuJoCo with MuJoCo's own soft contacts and
# the URDF's foot spheres, joint damping and friction (``--contact
# matched``: the stiff contacts of ``trajopt verify``; ``--sim own``: our
# rigid-contact KKT plant, no MuJoCo needed). Its first run compiles the
# horizon's functions to C (minutes; cached afterwards), which is why the
# short build of this page does not run it. It needs the ``mujoco`` extra.
# Its ticks take 20-30 ms on a loaded two-core machine, about the 50 Hz
# period, so the plans are applied one tick late (``--delay tick``) to make
# the page's run independent of the machine; on a machine fast enough for
# the default ``--delay measured`` the command is the same without it.
#
# The Python equivalent is ``mpc_task(problems.get("go1-trot"),
# commands=Command(vx=0.3))`` (:class:`~trajopt.mpc.commands.Command`), then
# ``task.plant()`` and ``task.controller()`` as above.

go1_duration = "4"
if QUICK:
    print("the short build skips: trajopt mpc go1-trot --vx 0.3 --delay tick --duration", go1_duration)
else:
    status = main([
        "mpc", "go1-trot", "--vx", "0.3", "--delay", "tick", "--duration", go1_duration,
        "--plot", "go1_trot_mpc.png", "--html", "go1_trot_mpc.html", "--overwrite",
    ])  # fmt: skip
    print("exit status", status)

# %%
# Its figure adds the base path and footholds seen from above, and the gait
# diagram of the applied plans; the friction panel shows the standing feet's
# largest ratio ``max(|f_x|, |f_y|) / (mu f_z)`` (1 on the pyramid's edge).
# ``trajopt mpc --help`` (:doc:`/cli`) lists the other disturbances
# (``--payload``, ``--mu``, ``--latency``, ``--noise``) and time-varying
# commands and gait schedules (``--command FILE``, ``--gait-schedule``).
