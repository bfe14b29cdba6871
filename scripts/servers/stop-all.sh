#!/usr/bin/env bash
# Usage: stop-all.sh [NAME...]   NAME in: postgres mariadb cassandra elasticsearch opensearch influxdb
#                                         questdb iotdb clickhouse victoriametrics timescaledb (berkeleydb: nothing runs)
# or NAME-PORT for one instance, e.g. elasticsearch-9202 (default: all). Stops the servers started by the start-*.sh scripts, found by their pid files in the
# state dir ($IOTBENCH_STATE); PostgreSQL (Debian's cluster) is stopped with pg_ctlcluster.
set -euo pipefail
SERVER_NAME=stop-all
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ALL=(postgres mariadb cassandra elasticsearch opensearch influxdb questdb iotdb clickhouse victoriametrics timescaledb)
names=("$@")
(( ${#names[@]} )) || names=("${ALL[@]}")

for n in "${names[@]}"; do
    case "$n" in
        postgres)
            v="${PG_VERSION:-15}" c="${PG_CLUSTER:-main}"
            if command -v pg_lsclusters >/dev/null 2>&1 \
                && pg_lsclusters -h 2>/dev/null | awk -v v="$v" -v c="$c" '$1==v && $2==c {print $4}' | grep -q online; then
                log "stopping PostgreSQL cluster $v/$c"
                pg_ctlcluster --skip-systemctl-redirect "$v" "$c" stop -m fast >&2 || log "warning: pg_ctlcluster stop failed"
            fi
            ;;
        berkeleydb) ;;   # embedded: installed only, nothing runs
        mariadb|cassandra|elasticsearch|opensearch|influxdb|questdb|iotdb|clickhouse|victoriametrics|timescaledb|\
        mariadb-*|cassandra-*|elasticsearch-*|opensearch-*|influxdb-*|questdb-*|iotdb-*|clickhouse-*|victoriametrics-*|timescaledb-*)
            # "elasticsearch" = every instance; "elasticsearch-9202" = only the one on that port.
            shopt -s nullglob
            if [[ "$n" == *-* ]]; then pidfiles=("$IOTBENCH_STATE/$n"/*.pid); else pidfiles=("$IOTBENCH_STATE/$n"-*/*.pid); fi
            # Reverse name order: IoTDB's datanode.pid must stop before its confignode.pid.
            for (( i = ${#pidfiles[@]} - 1; i >= 0; i-- )); do
                pidfile=${pidfiles[i]}
                [[ "$pidfile" == */mariadbd.server.pid ]] && continue   # written by mariadbd itself
                stop_pidfile "$pidfile" "$n ($(basename "$(dirname "$pidfile")"))"
            done
            shopt -u nullglob
            ;;
        *) die "unknown server '$n' (known: ${ALL[*]})" ;;
    esac
done
log "done"
