#!/usr/bin/env bash
# Smoke test of the Kubernetes platform on any cluster: a PostgreSQL for the runs, a small insert and a
# query benchmark with the CLI, their results checked, and no benchmark release or object left behind.
# .github/workflows/k8s-smoke.yaml runs it on minikube; tests/kubernetes/test_k8s_smoke.py runs it on
# the local cluster on every test run.
#
#   scripts/k8s-smoke.sh [IMAGE]
#
# IMAGE (default $IOTBENCH_IMAGE): the simulator image, NAME:TAG; the nodes must have it or be able to
#   pull it (config.yaml's pull policy, IfNotPresent).
# Env:
#   KUBECONFIG        the cluster, read by kubectl and helm (both on PATH)
#   SMOKE_NAMESPACE   namespace of the database and the runs (default: default); created if missing, and
#                     then deleted at the end
#   SMOKE_POSTGRES    a PostgreSQL the pods can reach, as a libpq connection string without the password
#                     ("host=10.0.0.5 port=5432 dbname=smoke user=smoke"), the password in PGPASSWORD.
#                     Unset: PostgreSQL is installed in the namespace from POSTGRESQL_CHART with
#                     dbinstall/postgresql-values.yaml (its image is pulled) on the nodes labelled
#                     iotdb-bench/role=database (every node is labelled if none is), and removed at the end
#   SMOKE_OUTPUT      folder for the results (default: results); each call writes SMOKE_OUTPUT/smoke-<UTC time>/
#   SMOKE_KEEP=1      leave the database, the Secret, the labels and the namespace (for debugging)
#   PYTHON            a Python with requirements.txt installed (default python3)
#   POSTGRESQL_CHART, POSTGRESQL_CHART_VERSION   the chart of the in-cluster PostgreSQL
#
# Either way the pods get the password from the Secret iotdb-bench-postgresql that this script creates
# (config.yaml's existing_secret); the CLI runs without it. On failure: the reason, then the nodes and
# the namespace's objects, events and benchmark pod logs; exit 1 (2 for wrong usage).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORKERS=2
NUM_INSERTS=20000
BATCH=1000
QUERY_RUNS=2
SECRET=iotdb-bench-postgresql
RELEASE=postgres
t0=$(date +%s)

log() { printf '[k8s-smoke +%ss] %s\n' "$(( $(date +%s) - t0 ))" "$*" >&2; }
fail() {
    if [[ "${GITHUB_ACTIONS:-}" == true ]]; then echo "::error::$*"; fi
    log "ERROR: $*"
    exit 1
}
usage_error() { echo "error: $*" >&2; exit 2; }

image=${1:-${IOTBENCH_IMAGE:-}}
[[ -n "$image" ]] || usage_error "no image: pass NAME:TAG or set IOTBENCH_IMAGE (scripts/k8s-smoke.sh [IMAGE])"
namespace=${SMOKE_NAMESPACE:-default}
external=${SMOKE_POSTGRES:-}
PYTHON=${PYTHON:-python3}
chart=${POSTGRESQL_CHART:-oci://registry-1.docker.io/bitnamicharts/postgresql}
chart_version=${POSTGRESQL_CHART_VERSION:-16.6.0}
for tool in kubectl helm "$PYTHON"; do
    command -v "$tool" >/dev/null 2>&1 || usage_error "$tool not found on PATH"
done
[[ -z "$external" || -n "${PGPASSWORD:-}" ]] || usage_error "SMOKE_POSTGRES is set: give its password in PGPASSWORD"
mkdir -p "${SMOKE_OUTPUT:-results}"
output="$(cd "${SMOKE_OUTPUT:-results}" && pwd)/smoke-$(date -u +%Y%m%dT%H%M%SZ)"

# --- what this script created, removed again at the end ---------------------------------------------
work=$(mktemp -d)
created_namespace="" created_secret="" installed_database="" labelled_nodes=()

diagnostics() {
    [[ "${GITHUB_ACTIONS:-}" == true ]] && echo "::group::diagnostics"
    log "diagnostics"
    kubectl get nodes -o wide
    kubectl get all,configmaps,secrets,pvc -n "$namespace" -o wide
    kubectl get events -n "$namespace" --sort-by=.lastTimestamp | tail -n 100
    local pod
    for pod in $(kubectl get pods -n "$namespace" -l app.kubernetes.io/part-of=iotdb-bench -o name); do
        kubectl describe -n "$namespace" "$pod"
        kubectl logs -n "$namespace" "$pod" --all-containers --tail=200
    done
    [[ -n "$installed_database" ]] && kubectl logs -n "$namespace" "statefulset/$RELEASE-postgresql" --tail=100
    [[ "${GITHUB_ACTIONS:-}" == true ]] && echo "::endgroup::"
}

cleanup() {
    log "removing what the smoke test created"
    if [[ -n "$installed_database" ]]; then
        helm uninstall "$RELEASE" -n "$namespace" --wait --timeout 5m
        kubectl delete pvc -n "$namespace" -l "app.kubernetes.io/instance=$RELEASE" --ignore-not-found
    fi
    [[ -n "$created_secret" ]] && kubectl delete secret "$SECRET" -n "$namespace" --ignore-not-found
    local node
    for node in "${labelled_nodes[@]}"; do kubectl label "$node" iotdb-bench/role-; done
    [[ -n "$created_namespace" ]] && kubectl delete namespace "$namespace" --timeout 120s
}

finish() {
    local code=$?
    set +e
    trap - EXIT INT TERM
    (( code == 0 )) || diagnostics >&2 2>&1
    if [[ "${SMOKE_KEEP:-}" == 1 ]]; then
        log "SMOKE_KEEP=1: leaving the database, Secret $SECRET and namespace $namespace"
    else
        cleanup >&2 2>&1
    fi
    rm -rf "$work"
    (( code == 0 )) && log "smoke test passed; results in $output"
    exit "$code"
}
trap finish EXIT
trap 'exit 130' INT TERM

# --- preflight ------------------------------------------------------------------------------------
kubectl get --raw /readyz >/dev/null || fail "the cluster is not ready (KUBECONFIG=${KUBECONFIG:-~/.kube/config})"
"$PYTHON" "$repo/run.py" --version >/dev/null || fail "$PYTHON cannot run the CLI: pip install -r requirements.txt"
log "image $image, namespace $namespace, database ${external:+external: }${external:-in-cluster PostgreSQL ($chart $chart_version)}"

if ! kubectl get namespace "$namespace" >/dev/null 2>&1; then
    created_namespace=1
    kubectl create namespace "$namespace" >/dev/null
fi
kubectl get secret "$SECRET" -n "$namespace" >/dev/null 2>&1 \
    && fail "Secret $SECRET already exists in namespace $namespace: delete it or choose another SMOKE_NAMESPACE"

# --- the database's password, in a Secret only (never on a command line) ---------------------------
if [[ -z "$external" ]]; then
    PGPASSWORD=$("$PYTHON" -c 'import secrets; print(secrets.token_hex(24))')
    [[ "${GITHUB_ACTIONS:-}" == true ]] && echo "::add-mask::$PGPASSWORD"
fi
(umask 077 && printf 'PGPASSWORD=%s\n' "$PGPASSWORD" >"$work/secret.env")
created_secret=1
kubectl create secret generic "$SECRET" -n "$namespace" --from-env-file="$work/secret.env" >/dev/null
rm -f "$work/secret.env"

# --- the database -----------------------------------------------------------------------------------
if [[ -z "$external" ]]; then
    helm status "$RELEASE" -n "$namespace" >/dev/null 2>&1 \
        && fail "a helm release $RELEASE already exists in namespace $namespace: uninstall it or choose another SMOKE_NAMESPACE"
    # dbinstall/ pins databases to nodes labelled iotdb-bench/role=database; on a cluster without such a
    # node (minikube's single node) every node gets the label, and loses it again at the end.
    if [[ -z "$(kubectl get nodes -l iotdb-bench/role=database -o name)" ]]; then
        mapfile -t labelled_nodes < <(kubectl get nodes -o name)
        kubectl label "${labelled_nodes[@]}" iotdb-bench/role=database >/dev/null
    fi
    log "installing PostgreSQL ($RELEASE)"
    installed_database=1
    helm install "$RELEASE" "$chart" --version "$chart_version" -n "$namespace" \
        -f "$repo/dbinstall/postgresql-values.yaml" \
        --set primary.persistence.size=2Gi \
        --set primary.resources.requests.cpu=250m \
        --set primary.resources.requests.memory=512Mi \
        --set primary.resources.limits.cpu=1 \
        --set primary.resources.limits.memory=1Gi \
        --wait --timeout 10m >/dev/null \
        || fail "helm install of PostgreSQL failed"
fi

# --- config: config.yaml's postgresql target, in this namespace, on this database ------------------
"$PYTHON" - "$repo/iotdb_bench/config.yaml" "$work/config.yaml" "$namespace" "$external" <<'PY' || fail "cannot write the smoke test's config"
import sys

import yaml

source, destination, namespace, external = sys.argv[1:]
with open(source) as file:
    config = yaml.safe_load(file)
target = config["targets"]["postgresql"]
if external:
    target["connection_string"] = f"{external} connect_timeout=10"
else:
    # config.yaml describes dbinstall's PostgreSQL in namespace default: the same service, in ours.
    service = "postgres-postgresql.default.svc.cluster.local"
    if service not in target["connection_string"]:
        sys.exit(f"config.yaml's postgresql target no longer names {service}: {target['connection_string']}")
    target["connection_string"] = target["connection_string"].replace(service, f"postgres-postgresql.{namespace}.svc.cluster.local")
config["namespace"] = namespace
with open(destination, "w") as file:
    yaml.safe_dump(config, file, sort_keys=False)
PY

# --- the runs ---------------------------------------------------------------------------------------
bench() {
    local task=$1; shift
    log "python run.py $task $*"
    # Without PGPASSWORD: the pods must get it from the Secret.
    (cd "$work" && env -u PGPASSWORD IOTBENCH_IMAGE="$image" "$PYTHON" "$repo/run.py" "$task" --config "$work/config.yaml" \
        --target postgresql --platform kubernetes --output "$output/$task" "$@") \
        || fail "python run.py $task failed (exit $?)"
}

check_results() {
    "$PYTHON" - "$1" "$output/$1" "$WORKERS" "$NUM_INSERTS" "$QUERY_RUNS" <<'PY' || fail "the $1 run's results are wrong"
import json
import sys
from pathlib import Path

task, folder, workers, num_inserts, query_runs = sys.argv[1], Path(sys.argv[2]), *map(int, sys.argv[3:])
saved = sorted(folder.glob("*/results.json"))
if len(saved) != 1:
    sys.exit(f"{task}: expected one results.json under {folder}, found {len(saved)}")
document = json.loads(saved[0].read_text())
if document.get("status") != "ok" or document.get("platform") != "kubernetes" or len(document.get("runs", [])) != 1:
    sys.exit(f"{task}: status {document.get('status')!r}, platform {document.get('platform')!r}, {len(document.get('runs', []))} runs")
report = document["runs"][0]["report"]
logs = sorted(path.name for path in (saved[0].parent / "logs" / report["run_id"]).glob("*.log"))
pods = ["collector.log", *(f"worker-{index}.log" for index in range(workers if task == "insert" else 1))]
if logs != pods:
    sys.exit(f"{task}: pod logs {logs}, expected {pods}")
if task == "insert":
    check = report["verification"]
    expected = workers * num_inserts
    if not (check["ok"] and check["inserted"] == expected and check["count_before"] == 0 and check["counted"] == expected):
        sys.exit(f"{task}: count check {check}, expected {expected} events in an empty table")
    print(f"insert ok: {check['counted']} events counted in the database; {saved[0]}")
else:
    queries = report["queries"]
    names = {"count-events", "temperature-min-max", "temperature-stats", "temperature-stats-per-device", "newest-per-device",
             "device-downsample"}
    if set(queries) != names:
        sys.exit(f"{task}: queries {sorted(queries)}, expected {sorted(names)}")
    wrong = {name: figures for name, figures in queries.items()
             if figures["executions"] != query_runs or figures["errors"] or figures.get("answer") != "ok"}
    if wrong or queries["count-events"]["rows"] != 1:
        sys.exit(f"{task}: queries without {query_runs} clean executions and checked answers: {wrong or queries['count-events']}")
    print(f"query ok: {len(queries)} queries x {query_runs} executions; {saved[0]}")
PY
}

bench insert -w "$WORKERS" -r 1 --num-inserts "$NUM_INSERTS" --batch "$BATCH"
check_results insert
bench query -w 1 -r "$QUERY_RUNS"
check_results query

# --- nothing of the runs left -------------------------------------------------------------------------
left=$(helm list -n "$namespace" -a -q | grep iotdb-bench || true)
[[ -z "$left" ]] || fail "benchmark releases left in namespace $namespace: $left"
# Objects of an uninstalled release may take a moment to go.
for _ in $(seq 60); do
    left=$(kubectl get pods,jobs,services,configmaps,secrets -n "$namespace" -l iotdb-bench/run-id -o name)
    [[ -z "$left" ]] && break
    sleep 2
done
[[ -z "$left" ]] || fail "benchmark objects still in namespace $namespace two minutes after the runs: $(echo "$left" | tr '\n' ' ')"
log "no benchmark release or object left in namespace $namespace"
