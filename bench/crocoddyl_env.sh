#!/usr/bin/env bash
# Create (once) the benchmark-only virtual environment of the peers of bench/go1_trot.py:
# crocoddyl (FDDP, BoxFDDP) and mim-solvers (SolverCSQP) in ONE environment, bench/.venv-crocoddyl.
#
# The newest wheels do not load together (`pip install pin crocoddyl mim-solvers` gives pin 4 with
# a crocoddyl built against pinocchio 3: segfaults when building a problem), so every package is
# pinned to a set that works: pinocchio 3.8.0, crocoddyl 3.1.0, mim-solvers 0.2.0,
# example-robot-data 4.4.0. The project's own environment never sees them; bench/go1_trot.py runs
# bench/crocoddyl_peers.py with this venv's python.
#
# Idempotent: an environment whose versions are these is kept; any other is rebuilt from scratch.
#     bash bench/crocoddyl_env.sh            # prints the venv's python on its last line
# Environment: PYTHON (interpreter that creates the venv, default python3),
# CROCODDYL_VENV (where, default bench/.venv-crocoddyl).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${CROCODDYL_VENV:-$here/.venv-crocoddyl}"
py="$venv/bin/python"
packages=(
    pin==3.8.0 libpinocchio==3.8.0 crocoddyl==3.1.0 libcrocoddyl==3.1.0
    mim-solvers==0.2.0 libmim-solvers==0.2.0
    example-robot-data==4.4.0 example-robot-data-loaders==4.4.0
    "cmeel-urdfdom<5" "cmeel-tinyxml2<11"
)
# pinocchio before crocoddyl before mim_solvers: importing mim_solvers first cannot find its boost libraries.
check='
import pinocchio, crocoddyl, mim_solvers
from importlib.metadata import version
found = {n: version(n) for n in ("pin", "crocoddyl", "mim-solvers")}
assert found == {"pin": "3.8.0", "crocoddyl": "3.1.0", "mim-solvers": "0.2.0"}, found
'

if [ -x "$py" ] && "$py" -c "$check" 2>/dev/null; then
    echo "$py"
    exit 0
fi
echo "creating the crocoddyl + mim-solvers benchmark environment in $venv" >&2
"${PYTHON:-python3}" -m venv --clear "$venv"
"$py" -m pip install --quiet --disable-pip-version-check "${packages[@]}" >&2
"$py" -c "$check"
echo "$py"
