"""
The 3D viewer
=============

:func:`trajopt.viewer.export_html` writes one self-contained HTML file that
replays a solution in any browser, with no Python running: the robot's
meshes (from ``example-robot-data``), the contact forces as arrows coloured
by their friction ratio (green 0, yellow 0.5, red at the edge of the
friction cone), the footholds, the base path and the ground. It needs the
``viz`` extra (meshcat, trimesh, fast-simplification).

The viewer samples :meth:`trajopt.Solution.evaluate`, the interpolation the
transcription assumes between knots, not only the knots: what you see
between two knots is what the optimizer's constraints held.
"""

import problems
from trajopt import solve
from trajopt.viewer import export_html, solution_scene

solution = solve(problems.get("go1-trot"), print_level=0)
print(solution.summary())

scene = solution_scene(solution)
print(f"{len(scene.times)} samples over {scene.duration:.2f} s; {len(scene.bodies)} meshes; arrows: {scene.arrows.label}")

# %%
# Write the page
# --------------
#
# The page below is the file this call wrote, shown in a frame. Open it on
# its own page for the full window; "Open Controls" (top right) has
# play/pause, the time slider and the playback speed (1x real time down to
# 0.1x), and the motion loops.

path = export_html(solution, "go1_trot_viewer.html")
print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB)")

# %%
# A link to a moment
# ------------------
#
# A fragment ``#t=SECONDS`` at the end of the page's address pauses the
# motion at that time: a link to a moment of the plan that you can send to
# someone, or type into the address bar later. For example, the trot at
# mid-swing of the first diagonal pair, and at the touchdown:
#
# - `go1_trot_viewer.html#t=0.16 <go1_trot_viewer.html#t=0.16>`_
# - `go1_trot_viewer.html#t=0.3 <go1_trot_viewer.html#t=0.3>`_
#
# The same works on the file opened from a disk
# (``file:///.../trot.html#t=0.16``).
#
# From the command line and live
# ------------------------------
#
# ``trajopt solve go1-trot --html trot.html`` writes the same page;
# ``--view`` serves the solution live from a meshcat server until Ctrl-C and
# prints its address (a browser is opened where a display exists), and
# ``trajopt view solution.npz`` does it for a file saved with ``--save``. In
# Python, ``trajopt.viewer.show(solution)`` starts the live viewer and
# returns it (its ``url``).
#
# The viewer draws every model of the toolkit: the multibody robots (Go1,
# Go2, the G1 humanoid, the wheeled biped, the hand, the manipulator), the
# rigid bodies (the quadrotor with its rotor thrusts) and the classic models
# (pendulums, acrobot, cartpoles). A quadrotor flip:

flip = solve(problems.get("quadrotor-flip"), print_level=0)
print(flip.summary())
export_html(flip, "quadrotor_flip_viewer.html")
