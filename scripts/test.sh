#!/usr/bin/env bash
# Installs what the test suites need, starts the real database servers on loopback, runs every test.
# Usage: bash scripts/test.sh [pytest arguments]   (e.g. -m "not kubernetes", or a test path: then one
#        plain pytest run once everything is up, as before)
# Slow downloads and builds are cached under /var/cache (servers, Kubernetes, helm): a second run is fast.
#
# Phases, as much side by side as they can be on 2 cores:
#   packages   every apt-get install first (dpkg takes one at a time; the cluster's build runs apt too)
#   cluster    in the background from then on: the local Kubernetes (cold: a 15-minute compile), the
#              simulator image and KWOK; beside it TSBS's tools (scripts/tsbs.sh; cold: 1-2 minutes of go build,
#              warm: nothing), which the tests comparing the tool's TSBS data with TSBS's generator run
#   servers    the database servers, while the test environment (venv) is made beside them
#   tests      the suites that need no cluster, in parallel (pytest-xdist; the tests of one server in one
#              process, one after another: tests/conftest.py), from as soon as the servers are up, at a lower
#              priority than the cluster's build; the cluster's suites beside them from as soon as the cluster is up
# Each phase's time is printed at the end. IOTBENCH_TEST_JOBS=N sets pytest-xdist's processes (default 3).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
export PGPASSWORD=${PGPASSWORD:-postgres} MYSQL_PASSWORD=${MYSQL_PASSWORD:-bench}
export K8S_LOCAL=${K8S_LOCAL:-$(dirname "$repo")/shared/k8s-local}
jobs=${IOTBENCH_TEST_JOBS:-3}
t0=$(date +%s)
phases=()
phase_start=$t0
step() { printf '\n==== %s (%s, +%ss)\n' "$1" "$(date -u +%H:%M:%S)" "$(( $(date +%s) - t0 ))" >&2; }
# done_phase NAME [START]: record how long NAME took (from START, default the last step's start).
done_phase() { phases+=("$(printf '%-44s %5ss' "$1" "$(( $(date +%s) - ${2:-$phase_start} ))")"); phase_start=$(date +%s); }
print_phases() {
    {
        echo; echo "==== phase times"
        printf '%s\n' "${phases[@]}"
        printf '%-44s %5ss\n' "total" "$(( $(date +%s) - t0 ))"
    } >&2
}

# wait_background PID_VARIABLE LOG START NAME: wait for a step started in the background (the variable is
# cleared), record its phase; when it failed, show its log and return 1.
wait_background() {
    local -n pid_of=$1
    [ -n "$pid_of" ] || return 0
    local code=0
    wait "$pid_of" || code=$?
    pid_of=""
    done_phase "$4 (in the background)" "$3"
    if [ "$code" -ne 0 ]; then cat "$2" >&2; return 1; fi
}

step "Debian packages of the servers and the browser (dpkg takes one apt-get at a time)"
IOTBENCH_PACKAGES_ONLY=1 scripts/servers/start-all.sh
scripts/install-chromium.sh >/dev/null    # the headless browser of tests/integration/test_html_report.py
done_phase "packages"

# The local Kubernetes (built once into /var/cache/k8s-local; cold, a 15-minute compile), then the
# simulator image and KWOK, all in the background while the servers start and the first tests run.
export PATH=${K8S_LOCAL_CACHE:-/var/cache/k8s-local}/bin:$PATH   # helm (shared/k8s-local/env.sh: K8S_LOCAL_CACHE)
cluster_log=$(mktemp)
image_file=$(mktemp)   # the image k8s-image.sh built from this tree: the cluster's tests use it (IOTBENCH_TEST_IMAGE)
cluster_pid=""
started_cluster=""
cluster_t0=$(date +%s)
bring_up_cluster() {
    if ! KUBECONFIG=/tmp/k8s-local/kubeconfig kubectl get --raw /readyz >/dev/null 2>&1; then
        # A cluster of an earlier session that was never stopped leaves mounts that make `up` fail.
        if grep -q " /tmp/k8s-local/" /proc/mounts; then "$K8S_LOCAL/down" >/dev/null 2>&1 || true; fi
        "$K8S_LOCAL/up" || { echo "the local Kubernetes did not come up" >&2; return 1; }
    fi
    export KUBECONFIG=/tmp/k8s-local/kubeconfig
    scripts/k8s-image.sh >"$image_file" || { echo "the simulator image was not built" >&2; return 1; }
    scripts/kwok.sh build || { echo "KWOK was not built" >&2; return 1; }   # simulated nodes (cold: 3-5 minutes, cached)
}
if [ ! -x "$K8S_LOCAL/up" ]; then
    echo "k8s-local not found at $K8S_LOCAL (set K8S_LOCAL): the chart and kubernetes tests will fail" >&2
else
    KUBECONFIG=/tmp/k8s-local/kubeconfig kubectl get --raw /readyz >/dev/null 2>&1 || started_cluster=1
    bring_up_cluster >"$cluster_log" 2>&1 &
    cluster_pid=$!
fi
# TSBS's tools, built from the vendored source beside the repository (cached under /var/cache): the
# tests that compare with TSBS's generator find them through TSBS_BIN instead of skipping.
tsbs_log=$(mktemp)
tsbs_t0=$(date +%s)
scripts/tsbs.sh >"$tsbs_log" 2>&1 &
tsbs_pid=$!
wait_for_tsbs() {
    wait_background tsbs_pid "$tsbs_log" "$tsbs_t0" "TSBS's tools" || { echo "TSBS's tools were not built (scripts/tsbs.sh)" >&2; return 1; }
    TSBS_BIN=$(tail -n 1 "$tsbs_log")
    export TSBS_BIN
}
venv_log=$(mktemp)
venv_pid=""
cleanup() {
    local code=$?
    # Every step runs whatever the one before did: under the `set -e` of the script's end, a `kill` of a
    # process already reaped ended the trap with 1 and CI failed with every test passed.
    set +e
    [ -n "$venv_pid" ] && kill "$venv_pid" 2>/dev/null
    [ -n "${first_pid:-}" ] && kill "$first_pid" 2>/dev/null
    scripts/kwok.sh stop 2>/dev/null
    [ -n "$cluster_pid" ] && kill "$cluster_pid" 2>/dev/null
    [ -n "$tsbs_pid" ] && kill "$tsbs_pid" 2>/dev/null
    # Stop the cluster again when this script started it (CI's machine stays clean).
    [ -n "$started_cluster" ] && "$K8S_LOCAL/down" >&2
    rm -f "$cluster_log" "$venv_log" "$image_file" "$tsbs_log"
    print_phases
    exit "$code"
}
trap cleanup EXIT

step "database servers, and beside them the test environment (a virtual environment made from the requirements files alone)"
venv_t0=$(date +%s)
scripts/venv.sh >"$venv_log" 2>&1 &
venv_pid=$!
servers_t0=$(date +%s)
scripts/servers/start-all.sh
done_phase "servers" "$servers_t0"
if ! wait "$venv_pid"; then venv_pid=""; cat "$venv_log" >&2; echo "the test environment was not made" >&2; exit 1; fi
venv_pid=""
done_phase "test environment (beside the servers)" "$venv_t0"
venv=$(tail -n 1 "$venv_log")
python="$venv/bin/python"

step "lint"
"$python" -m ruff check .
# Types, strict on the module contract (pyproject.toml's [tool.mypy]): about 15 s cold; the cache
# beside the test environment (kept while the requirements do not change) makes a warm run under a second.
"$python" -m mypy --cache-dir "$venv/mypy-cache"
done_phase "lint"

wait_for_cluster() {
    [ -n "$cluster_pid" ] || return 0
    wait_background cluster_pid "$cluster_log" "$cluster_t0" "cluster, image and KWOK" || return 1
    tail -n 3 "$cluster_log" >&2
    IOTBENCH_TEST_IMAGE=$(tail -n 1 "$image_file")
    export IOTBENCH_TEST_IMAGE
}

# pytest's exit code 5 (nothing collected) is a failure for the whole run, but not for one half of it.
# run_pytest NICENESS ARGS...: a function, not `nice ... pytest &` itself: bash starts a background
# command with SIGINT ignored, and the CLIs the tests start would inherit that (the Ctrl-C tests
# failed); a function's commands keep it.
run_pytest() {
    local niceness=$1 code=0
    shift
    nice -n "$niceness" "$python" -m pytest "$@" || code=$?
    return "$code"
}

wait_for_tsbs || exit 1
set +e
if [ "$#" -gt 0 ]; then
    step "cluster (for the tests asked for)"
    wait_for_cluster || exit 1
    step "tests"
    run_pytest 0 --durations=25 "$@"
    code=$?
    done_phase "tests"
    [ "$code" -eq 5 ] && { echo "pytest collected no test" >&2; exit 1; }
    exit "$code"
fi

step "tests without the cluster ($jobs processes), and the cluster's tests as soon as it is up"
# The first half writes to a file (shown when it ends) so the two never interleave on the terminal.
first_log=$(mktemp)
times_dir=$(mktemp -d)   # JUnit XML of both halves: the seconds per test file, printed at the end
first_t0=$(date +%s)
# At a lower priority: on a cold machine the cluster's 15-minute compile runs beside them, and it is the
# longer path (the cluster's tests only start after it); warm, the cluster's timed tests go first.
run_pytest 10 -m "not cluster" -n "$jobs" --dist loadgroup --durations=40 -v --junitxml="$times_dir/first.xml" >"$first_log" 2>&1 &
first_pid=$!
if wait_for_cluster; then
    step "the cluster's tests (beside the others)"
    second_t0=$(date +%s)
    run_pytest 0 -m cluster --durations=30 --junitxml="$times_dir/cluster.xml"
    second=$?
    done_phase "tests on the cluster" "$second_t0"
else
    second=1
    cluster_failure=$(tail -n 5 "$cluster_log")   # repeated at the end: the log above scrolls out of a tail
fi
wait "$first_pid"
first=$?
done_phase "tests without the cluster" "$first_t0"
step "tests without the cluster: their output"
cat "$first_log"
rm -f "$first_log"
"$python" scripts/test_times.py "$times_dir"/*.xml >&2
rm -rf "$times_dir"
set -e
if [ -n "${cluster_failure:-}" ]; then   # an `if`: a false `[ ] &&` would end the script under set -e
    printf '==== the cluster did not come up (its log is above); its last lines:\n%s\n' "$cluster_failure" >&2
fi
echo "tests without the cluster: exit $first; on the cluster: exit $second" >&2
[ "$first" -eq 0 ] && [ "$second" -eq 0 ]
