#!/usr/bin/env bash
# Installs what the test suites need, starts the real database servers on loopback, runs every test.
# Usage: bash scripts/test.sh [pytest arguments]   (e.g. -m "not kubernetes", or a test path)
# Slow downloads and builds are cached under /var/cache (servers, Kubernetes, helm): a second run is fast.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
export PGPASSWORD=${PGPASSWORD:-postgres} MYSQL_PASSWORD=${MYSQL_PASSWORD:-bench}
export K8S_LOCAL=${K8S_LOCAL:-$(dirname "$repo")/shared/k8s-local}
step() { printf '\n==== %s (%s)\n' "$1" "$(date -u +%H:%M:%S)" >&2; }

step "Debian packages of the servers (dpkg takes one apt-get at a time)"
IOTBENCH_PACKAGES_ONLY=1 scripts/servers/start-all.sh
scripts/install-chromium.sh >/dev/null    # the headless browser of tests/integration/test_html_report.py

# The local Kubernetes (built once into /var/cache/k8s-local; cold, a 15-minute compile) comes up in
# the background while the servers start and the test environment is made.
export PATH=/var/cache/k8s-local/bin:$PATH
cluster_log=$(mktemp)
cluster_pid=""
started_cluster=""
if [ ! -x "$K8S_LOCAL/up" ]; then
    echo "k8s-local not found at $K8S_LOCAL (set K8S_LOCAL): the chart and kubernetes tests will fail" >&2
elif ! KUBECONFIG=/tmp/k8s-local/kubeconfig kubectl get --raw /readyz >/dev/null 2>&1; then
    # A cluster of an earlier session that was never stopped leaves mounts that make `up` fail.
    if grep -q " /tmp/k8s-local/" /proc/mounts; then "$K8S_LOCAL/down" >/dev/null 2>&1 || true; fi
    "$K8S_LOCAL/up" >"$cluster_log" 2>&1 &
    cluster_pid=$!
    started_cluster=1
fi
# Stop the cluster again when this script started it (CI's machine stays clean).
trap 'scripts/kwok.sh stop 2>/dev/null; [ -n "$cluster_pid" ] && kill "$cluster_pid" 2>/dev/null; [ -n "$started_cluster" ] && "$K8S_LOCAL/down" >&2; rm -f "$cluster_log"' EXIT

step "database servers"
scripts/servers/start-all.sh

step "test environment (a virtual environment made from the requirements files alone)"
venv=$(scripts/venv.sh)
python="$venv/bin/python"

step "local Kubernetes and the simulator image"
if [ -n "$cluster_pid" ]; then
    if ! wait "$cluster_pid"; then
        cat "$cluster_log" >&2
        echo "the local Kubernetes did not come up" >&2
        exit 1
    fi
    cluster_pid=""
    tail -n 3 "$cluster_log" >&2
fi
if [ -x "$K8S_LOCAL/up" ]; then
    export KUBECONFIG=/tmp/k8s-local/kubeconfig
    scripts/k8s-image.sh >&2
    scripts/kwok.sh build >&2    # simulated nodes for tests/kubernetes/*_kwok.py (cold: 3-5 minutes, cached)
fi

step "lint"
"$python" -m ruff check .

step "tests"
set +e
"$python" -m pytest "$@"
code=$?
set -e
[ "$code" -eq 5 ] && { echo "pytest collected no test" >&2; exit 1; }
exit "$code"
