"""Contact-plan checks shared by the legged tests (full dynamics and kinodynamic)."""
import numpy as np

from trajopt.legged import swing_apex_knots

TOL = 1e-6  # acceptance tolerance of the gait issues (IPOPT converges to 1e-8)


def check_contact_plan(problem, feet: np.ndarray, forces: np.ndarray) -> None:
    """At every knot: stance feet on their footholds, swing feet above the ground and
    at the apex mid-swing, zero force in swing, unilateral force and friction pyramid
    in stance. ``feet`` (N, nc, 3) world foot positions, ``forces`` (N, nc, 3)."""
    robot, sched, st = problem.robot, problem.schedule, problem.schedule.stance
    assert np.abs(feet[st] - problem.footholds[st]).max() < TOL
    assert feet[~st][:, 2].min(initial=0.0) >= -TOL
    for i in range(robot.nc):
        for k in swing_apex_knots(sched, i):
            assert feet[k, i, 2] >= problem.footholds[k, i, 2] + problem.swing_apex - TOL
    assert np.abs(forces[~st]).max(initial=0.0) < TOL
    fx, fy, fz = forces[st].T
    assert fz.min() >= -TOL
    assert (robot.mu * fz - np.abs(fx)).min() >= -TOL and (robot.mu * fz - np.abs(fy)).min() >= -TOL
