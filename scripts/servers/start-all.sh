#!/usr/bin/env bash
# Usage: start-all.sh [NAME...]   NAME in: postgres mariadb cassandra elasticsearch opensearch influxdb
# (default: all). Starts them one after another (each is reused when already running), keeps going
# after a failure, prints a summary, and exits non-zero if any server failed.
set -euo pipefail
SERVER_NAME="start-all"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
source "$HERE/lib.sh"

ALL=(postgres mariadb cassandra elasticsearch opensearch influxdb)
names=("$@")
(( ${#names[@]} )) || names=("${ALL[@]}")
for n in "${names[@]}"; do
    [[ -x "$HERE/start-$n.sh" ]] || die "unknown server '$n' (known: ${ALL[*]})"
done

declare -A status took
failed=0
for n in "${names[@]}"; do
    t0=$(date +%s)
    if "$HERE/start-$n.sh"; then status[$n]=ok; else status[$n]=FAILED; failed=1; fi
    took[$n]=$(( $(date +%s) - t0 ))
done

declare -A where=(
    [postgres]="127.0.0.1:5432 (user postgres / \$PGPASSWORD, default postgres)"
    [mariadb]="127.0.0.1:3306 (user bench / \$MYSQL_PASSWORD, default bench; db bench)"
    [cassandra]="127.0.0.1:9042 (CQL, no auth)"
    [elasticsearch]="http://127.0.0.1:${ES_PORT:-9200} (no security)"
    [opensearch]="http://127.0.0.1:${OPENSEARCH_PORT:-9201} (no security)"
    [influxdb]="http://127.0.0.1:${INFLUXDB_PORT:-8086} (no auth; db bench)"
)
{
    echo "===== servers ====="
    for n in "${names[@]}"; do
        printf '%-14s %-7s %4ss  %s\n' "$n" "${status[$n]}" "${took[$n]}" "${where[$n]}"
    done
    echo "state/logs: $IOTBENCH_STATE   cache: $IOTBENCH_CACHE"
} >&2
exit "$failed"
