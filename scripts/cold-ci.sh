#!/usr/bin/env bash
# Runs CI's command (.ci/run) as on a machine that never ran the project, to measure a cold run:
# every cache the scripts fill (server downloads and builds, Maven, the local Kubernetes' binaries and
# images, KWOK, the simulator image's packages, the test environment, pip's and Go's caches) points
# into one new empty folder, removed again at the end. The servers' data and the cluster's state are
# new too. What stays warm: Debian packages already installed (apt-get has no such switch; CI's record
# of a fresh machine gives them 0.4 minutes).
# Usage: bash scripts/cold-ci.sh            (no server or local cluster of this project may be running)
# Env:   IOTBENCH_COLD_ROOT (default a new folder under /var/tmp), IOTBENCH_COLD_KEEP=1 keeps it.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if ss -ltn 2>/dev/null | grep -qE ':(5432|9200|9042|8086) '; then
    echo "a database server is already running here: stop it first (scripts/servers/stop-all.sh)" >&2
    exit 2
fi
root=${IOTBENCH_COLD_ROOT:-$(mktemp -d /var/tmp/iotbench-cold.XXXXXX)}
mkdir -p "$root"
chmod 755 "$root"   # mktemp's 0700 would lock out the servers' own users (Elasticsearch, OpenSearch, postgres)
export IOTBENCH_CACHE=$root/iotbench IOTBENCH_STATE=$root/servers K8S_LOCAL_CACHE=$root/k8s-local
export GOMODCACHE=$root/go/mod GOCACHE=$root/go/build GOPATH=$root/go PIP_CACHE_DIR=$root/pip
cleanup() {
    local code=$?
    set +e
    # The servers of this run live in the folder: stop them (by their pid files, then anything left
    # that runs from the folder) before it goes.
    bash "$repo/scripts/servers/stop-all.sh" >/dev/null 2>&1
    pkill -f "$root/" 2>/dev/null; sleep 2; pkill -9 -f "$root/" 2>/dev/null
    if [ -z "${IOTBENCH_COLD_KEEP:-}" ]; then
        # Go's module cache is read-only by design: make it writable to remove it.
        chmod -R u+w "$root" 2>/dev/null
        rm -rf "$root" 2>/dev/null || { sleep 5; rm -rf "$root"; }
    fi
    exit "$code"
}
trap cleanup EXIT
echo "cold caches under $root" >&2
bash "$repo/.ci/run"
