"""
Getting started
===============

Install the toolkit with its optional integrations (3D viewer, MuJoCo, Dask
sweeps) into a fresh virtual environment, then solve, plot, animate and
export a 3D replay of a Unitree Go1 trot. From a clone of the repository,
this is the README's first command (about a minute on 2 cores, most of it
installing):

.. code-block:: bash

    python3 -m venv .venv && . .venv/bin/activate && pip install -e ".[tests,viz,mujoco,batch,logs]" && trajopt solve go1-trot --plot trot.png --animate trot.gif --html trot.html

and its second runs the test suite inside that environment:

.. code-block:: bash

    . .venv/bin/activate && python -m pytest -q

Nothing is downloaded at run time: the robots' URDFs and meshes come from the
``example-robot-data`` wheel that the install brings.

To build this documentation as well, install the ``docs`` extra and run
Sphinx from the repository root (the build runs every tutorial; see
:doc:`/building_docs`):

.. code-block:: bash

    pip install -e ".[tests,viz,mujoco,batch,logs,docs]" && python -m sphinx -W -b html docs docs/_build/html

What the solve command does
---------------------------

``trajopt solve go1-trot`` builds the registered problem ``go1-trot`` (one
trot cycle of the Go1: 31 knots of 0.02 s, full rigid-body dynamics, point
contacts with friction pyramids, the URDF's torque limits), solves it with
IPOPT, prints IPOPT's iteration log and a report, and writes the three files
it was asked for. Below, the same command runs through
:func:`trajopt.cli.main`, the function behind the ``trajopt`` executable, as
this page is built; IPOPT's log goes to the terminal of the build, the report
is printed here.
"""

from trajopt.cli import main

status = main(["solve", "go1-trot", "--plot", "trot.png", "--animate", "trot.gif", "--html", "trot.html"])
print("exit status", status)

# %%
# What it produced
# ----------------
#
# The report gives the solver's status, the iterations, the objective, the
# largest constraint violation, the times, where the base started and ended,
# and the gait as a text diagram (``#`` stance, ``-`` swing; one column per
# knot). The exit status is 0 when IPOPT succeeded, 1 when it failed (the
# files are still written, from the last iterate), 2 for a usage error.
#
# The three files, in the order shown above under the code:
#
# ``trot.png``
#     one summary page: base position and orientation, joint angles and
#     torques against their limits, contact forces with the friction limit,
#     foot heights, and the gait diagram.
# ``trot.gif``
#     the motion as a stick figure from the side and from above, with the
#     contact forces.
# ``trot.html``
#     a self-contained 3D replay (3.0 MB) that runs in any browser with no
#     Python: the Go1's meshes, the contact forces as arrows coloured by
#     their friction ratio, the footholds and the base path. "Open Controls"
#     has play/pause, the time slider and the playback speed; the
#     :doc:`viewer tutorial </auto_tutorials/plot_06_viewer>` links to a
#     chosen moment with ``#t=SECONDS``.
#
# Where to go next: :doc:`/conventions` says what the numbers in a state
# mean, and :doc:`the tutorials </auto_tutorials/index>` show each main use
# in a script you can run. Every registered problem is listed by
# ``trajopt list`` (:doc:`/cli`).
