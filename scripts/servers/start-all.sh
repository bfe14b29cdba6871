#!/usr/bin/env bash
# Usage: start-all.sh [NAME...]   NAME in: postgres mariadb cassandra elasticsearch opensearch influxdb
#                                          questdb iotdb clickhouse victoriametrics berkeleydb timescaledb
# (default: all). First one apt-get install of every missing Debian package the chosen servers need
# (dpkg allows one apt at a time), then every start script at once, each output line prefixed with
# [NAME]; each server is reused when already running. Keeps going after a failure, prints a summary,
# and exits non-zero if any server failed. IOTBENCH_PARALLEL=N starts at most N at a time (default:
# all at once). IOTBENCH_PACKAGES_ONLY=1 stops after the apt-get step (scripts/test.sh then runs other
# apt users, such as the local Kubernetes build, beside the starts).
set -euo pipefail
SERVER_NAME="start-all"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
source "$HERE/lib.sh"

ALL=(postgres mariadb cassandra elasticsearch opensearch influxdb questdb iotdb clickhouse victoriametrics berkeleydb timescaledb)
IOTBENCH_PARALLEL="${IOTBENCH_PARALLEL:-0}"
names=("$@")
(( ${#names[@]} )) || names=("${ALL[@]}")

# script_of NAME: start-NAME.sh, or install-NAME.sh for the embedded ones (nothing to start).
script_of() {
    if [[ -x "$HERE/start-$1.sh" ]]; then echo "$HERE/start-$1.sh"
    elif [[ -x "$HERE/install-$1.sh" ]]; then echo "$HERE/install-$1.sh"
    else return 1
    fi
}
for n in "${names[@]}"; do
    script_of "$n" >/dev/null || die "unknown server '$n' (known: ${ALL[*]})"
done

# debian_packages NAME: the Debian packages that server's script would apt-get install on this machine
# (the same conditions as in the scripts; apt_install skips those already installed).
debian_packages() {
    local java=(openjdk-17-jdk-headless maven)
    case "$1" in
        postgres)
            [[ -x "/usr/lib/postgresql/${PG_VERSION:-15}/bin/postgres" ]] && command -v pg_ctlcluster >/dev/null 2>&1 \
                || echo postgresql postgresql-client ;;
        mariadb)
            command -v mariadbd >/dev/null 2>&1 || [[ -x /usr/sbin/mariadbd ]] || echo mariadb-server
            echo mariadb-client ;;
        cassandra) echo "${java[@]}" ;;
        elasticsearch|opensearch) echo "${java[@]}" unzip curl ;;
        questdb) echo "${java[@]}" curl postgresql-client ;;
        iotdb) echo "${java[@]}" ;;
        influxdb)
            command -v go >/dev/null 2>&1 || [[ -x /usr/local/go/bin/go ]] || echo golang-go git ca-certificates ;;
        clickhouse) echo clickhouse-server clickhouse-client curl ;;
        victoriametrics) echo victoria-metrics curl ;;
        berkeleydb) echo libdb5.3-dev gcc ;;
        # What vendor/timescaledb/build.sh needs (it would apt-get them itself); the dev package may
        # upgrade postgresql-15 on disk, which is why packages come before any server starts.
        timescaledb) echo postgresql-15 postgresql-server-dev-15 cmake gcc make libssl-dev ;;
    esac
}

# Java and Maven count only where no java/mvn is on PATH (a JDK from elsewhere is fine).
packages=()
for n in "${names[@]}"; do
    for p in $(debian_packages "$n"); do
        case "$p" in
            openjdk-17-jdk-headless) command -v java >/dev/null 2>&1 && command -v javac >/dev/null 2>&1 && continue ;;
            maven) command -v mvn >/dev/null 2>&1 && continue ;;
            curl|unzip|gcc|git|make|cmake) command -v "$p" >/dev/null 2>&1 && continue ;;
        esac
        [[ " ${packages[*]} " == *" $p "* ]] || packages+=("$p")
    done
done
if (( ${#packages[@]} )); then
    t0=$(date +%s)
    apt_install "${packages[@]}"
    log "Debian packages ready in $(( $(date +%s) - t0 ))s"
fi
[[ "${IOTBENCH_PACKAGES_ONLY:-}" == 1 ]] && exit 0

# --- start them, in parallel ----------------------------------------------------------------------
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
run_one() {
    local n=$1 t0 rc=0
    t0=$(date +%s)
    # pipefail: the pipeline's status is the script's (sed does not fail)
    "$(script_of "$n")" </dev/null 2>&1 | sed -u "s/^/[$n] /" >&2 || rc=$?
    echo "$rc $(( $(date +%s) - t0 ))" >"$results/$n"
}
running=0
for n in "${names[@]}"; do
    if (( IOTBENCH_PARALLEL > 0 && running >= IOTBENCH_PARALLEL )); then
        wait -n || true
        running=$(( running - 1 ))
    fi
    run_one "$n" &
    running=$(( running + 1 ))
done
wait

declare -A where=(
    [postgres]="127.0.0.1:5432 (user postgres / \$PGPASSWORD, default postgres)"
    [mariadb]="127.0.0.1:3306 (user bench / \$MYSQL_PASSWORD, default bench; db bench)"
    [cassandra]="127.0.0.1:9042 (CQL, no auth)"
    [elasticsearch]="http://127.0.0.1:${ES_PORT:-9200} (no security)"
    [opensearch]="http://127.0.0.1:${OPENSEARCH_PORT:-9201} (no security)"
    [influxdb]="http://127.0.0.1:${INFLUXDB_PORT:-8086} (no auth; db bench)"
    [questdb]="http://127.0.0.1:${QUESTDB_HTTP_PORT:-9000} (ILP/HTTP, REST); PG wire 127.0.0.1:${QUESTDB_PG_PORT:-8812} (admin/quest, db qdb)"
    [iotdb]="127.0.0.1:${IOTDB_PORT:-6667} (Session RPC, root/root)"
    [clickhouse]="native 127.0.0.1:${CLICKHOUSE_PORT:-19000}, HTTP 127.0.0.1:${CLICKHOUSE_HTTP_PORT:-18123} (user default, no password)"
    [victoriametrics]="http://127.0.0.1:${VICTORIAMETRICS_PORT:-8428}"
    [berkeleydb]="embedded: libdb5.3-dev installed (pip: BERKELEYDB_DIR=/usr)"
    [timescaledb]="127.0.0.1:${TIMESCALEDB_PORT:-5433} (PostgreSQL 15 + TimescaleDB, Apache build; user postgres / \$PGPASSWORD)"
)
failed=0
{
    echo "===== servers ====="
    for n in "${names[@]}"; do
        read -r rc took <"$results/$n" 2>/dev/null || { rc=1; took="?"; }
        if (( rc == 0 )); then status=ok; else status=FAILED; failed=1; fi
        printf '%-16s %-7s %4ss  %s\n' "$n" "$status" "$took" "${where[$n]}"
    done
    echo "state/logs: $IOTBENCH_STATE   cache: $IOTBENCH_CACHE   total: $(elapsed)s"
} >&2
exit "$failed"
