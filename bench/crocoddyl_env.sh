#!/usr/bin/env bash
# Create (once) the benchmark-only virtual environment of the crocoddyl peer: bench/.venv-crocoddyl.
#
# crocoddyl is built against pinocchio 3: `pip install pin crocoddyl` resolves to pin 4 +
# crocoddyl 3.2.1, a broken pair (segfaults when building a problem). The pins below give
# crocoddyl 3.2.0 + pin 3.9 (+ example-robot-data). The project's own environment never sees
# crocoddyl; bench/go1_trot.py runs bench/crocoddyl_trot.py with this venv's python.
#
# Idempotent: an environment that already imports crocoddyl and pinocchio < 4 is kept.
#     bash bench/crocoddyl_env.sh            # prints the venv's python on its last line
# Environment: PYTHON (interpreter that creates the venv, default python3),
# CROCODDYL_VENV (where, default bench/.venv-crocoddyl).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${CROCODDYL_VENV:-$here/.venv-crocoddyl}"
py="$venv/bin/python"
check='import crocoddyl, pinocchio; assert int(pinocchio.__version__.split(".")[0]) < 4, pinocchio.__version__'

if [ -x "$py" ] && "$py" -c "$check" 2>/dev/null; then
    echo "$py"
    exit 0
fi
echo "creating the crocoddyl benchmark environment in $venv" >&2
"${PYTHON:-python3}" -m venv "$venv"
"$py" -m pip install --quiet --disable-pip-version-check "pin<4" crocoddyl "cmeel-urdfdom<5" "cmeel-tinyxml2<11" >&2
"$py" -c "$check"
echo "$py"
