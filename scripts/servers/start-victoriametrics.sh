#!/usr/bin/env bash
# Start Debian's VictoriaMetrics (single node, 1.79.x) on 127.0.0.1:8428 with its data under the state
# dir, then check a real PromQL query. The package's own service is never started (see apt_install).
#
# Flags and why:
#   -retentionPeriod 100y        the default (1 month) silently drops samples older than now-1 month,
#                                and the benchmark's events start at 2026-01-01
#   -search.latencyOffset 0s     the default (30s) hides the newest 30 s of samples from queries
#   -search.disableCache         the rollup cache may keep answering from before a backfill
#   -memory.allowedPercent 10    caches stay small next to the other servers (default 60 %)
#
# Env: VICTORIAMETRICS_PORT (8428); IOTBENCH_STATE, IOTBENCH_TIMEOUT (see lib.sh).
set -euo pipefail
SERVER_NAME=victoriametrics
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

VICTORIAMETRICS_PORT="${VICTORIAMETRICS_PORT:-8428}"
STATE_DIR="$IOTBENCH_STATE/victoriametrics-$VICTORIAMETRICS_PORT"
PIDFILE="$STATE_DIR/victoria-metrics.pid"
SERVER_LOG="$STATE_DIR/victoria-metrics.log"
URL="http://127.0.0.1:$VICTORIAMETRICS_PORT"
mkdir -p "$STATE_DIR"
server_lock "victoriametrics-$VICTORIAMETRICS_PORT"

apt_install victoria-metrics curl
VM=/usr/bin/victoria-metrics
[[ -x "$VM" ]] || die "$VM is missing although victoria-metrics is installed"

health_ok() { [[ "$(curl -fsS -m 5 "$URL/health" 2>/dev/null)" == OK ]]; }
# A real PromQL query through the query engine.
query_ok() { curl -fsS -m 5 "$URL/api/v1/query?query=vector(42)" 2>/dev/null | grep -q '"status":"success".*"42"'; }

if pid_alive "$PIDFILE"; then
    log "victoria-metrics already running (pid $(cat "$PIDFILE")): reusing it"
    WAIT_PID=$(cat "$PIDFILE")
elif health_ok; then
    log "a VictoriaMetrics already answers on $URL: reusing it"
else
    port_open 127.0.0.1 "$VICTORIAMETRICS_PORT" && die "port $VICTORIAMETRICS_PORT is taken by something that is not VictoriaMetrics"
    mkdir -p "$STATE_DIR/data"
    log "starting victoria-metrics $(dpkg-query -W -f='${Version}' victoria-metrics) (log: $SERVER_LOG)"
    start_bg "$SERVER_LOG" "$PIDFILE" "$VM" -storageDataPath "$STATE_DIR/data" \
        -httpListenAddr "127.0.0.1:$VICTORIAMETRICS_PORT" -retentionPeriod 100y -search.latencyOffset 0s \
        -search.disableCache -memory.allowedPercent 10 -loggerLevel WARN
fi

wait_until "$IOTBENCH_TIMEOUT" "GET $URL/health" health_ok
wait_until 60 "PromQL query on $URL/api/v1/query" query_ok
log "ready: VictoriaMetrics $(dpkg-query -W -f='${Version}' victoria-metrics) on $URL in $(elapsed)s"
