#!/usr/bin/env bash
# Prints the path of a virtual environment made from the project's requirements files alone, creating
# it first when missing: $IOTBENCH_CACHE/venv-<hash of the requirements files and the interpreter>.
# It never sees the system interpreter's packages, so a package installed there by hand cannot hide
# a missing requirement; it is reused while the requirements files are unchanged.
#   scripts/venv.sh            (PYTHON=python3, IOTBENCH_CACHE=/var/cache/iotbench)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYTHON=${PYTHON:-python3}
IOTBENCH_CACHE=${IOTBENCH_CACHE:-/var/cache/iotbench}
# Every requirements file requirements-dev.txt may include (-r), so that a change to any of them makes a new one.
requirements=("$repo"/requirements*.txt "$repo"/iotdb_bench/*/requirements.txt)
key=$(cat "${requirements[@]}" <("$PYTHON" -c 'import sys; print(sys.version)') | sha256sum | cut -c1-16)
venv="$IOTBENCH_CACHE/venv-$key"
mkdir -p "$IOTBENCH_CACHE"
exec 9>"$IOTBENCH_CACHE/venv.lock"
flock 9
if [[ ! -f "$venv/.complete" ]]; then
    rm -rf "$venv"
    echo "creating the test environment $venv" >&2
    "$PYTHON" -m venv "$venv"
    # berkeleydb builds against Debian's libdb5.3-dev (installed by scripts/servers/).
    BERKELEYDB_DIR=${BERKELEYDB_DIR:-/usr} "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        -r "$repo/requirements-dev.txt" >&2 || { rm -rf "$venv"; echo "installing the requirements failed" >&2; exit 1; }
    touch "$venv/.complete"
fi
echo "$venv"
