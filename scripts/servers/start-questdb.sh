#!/usr/bin/env bash
# Start QuestDB 9.2.2 (the single jar from Maven Central, cached) on loopback, then check a real SQL
# query over HTTP, the ILP-over-HTTP ping and a query over the PostgreSQL wire protocol.
#
# Ports (all bound to 127.0.0.1 by server.conf):
#   http.net.bind.to      9000  REST (/exec), web console, ILP over HTTP (/write, /api/v2/write, /ping)
#   pg.net.bind.to        8812  PostgreSQL wire protocol (user admin, password quest, database qdb)
#   line.tcp.net.bind.to  9009  ILP over TCP
#   http.min.net.bind.to  9003  minimal HTTP server (health check)
# UDP ILP and telemetry are off.
#
# Env: QUESTDB_VERSION (9.2.2), QUESTDB_HTTP_PORT (9000), QUESTDB_PG_PORT (8812),
#      QUESTDB_ILP_PORT (9009), QUESTDB_MIN_HTTP_PORT (9003), QUESTDB_HEAP (512m, -Xmx; QuestDB keeps
#      its data off-heap); IOTBENCH_CACHE, IOTBENCH_STATE, IOTBENCH_TIMEOUT (see lib.sh).
set -euo pipefail
SERVER_NAME=questdb
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

QUESTDB_VERSION="${QUESTDB_VERSION:-9.2.2}"
QUESTDB_HTTP_PORT="${QUESTDB_HTTP_PORT:-9000}"
QUESTDB_PG_PORT="${QUESTDB_PG_PORT:-8812}"
QUESTDB_ILP_PORT="${QUESTDB_ILP_PORT:-9009}"
QUESTDB_MIN_HTTP_PORT="${QUESTDB_MIN_HTTP_PORT:-9003}"
QUESTDB_HEAP="${QUESTDB_HEAP:-512m}"

STATE_DIR="$IOTBENCH_STATE/questdb-$QUESTDB_HTTP_PORT"
ROOT_DIR="$STATE_DIR/root"   # QuestDB's -d folder: conf/, db/, public/ (web console), import/
PIDFILE="$STATE_DIR/questdb.pid"
SERVER_LOG="$STATE_DIR/questdb.log"
URL="http://127.0.0.1:$QUESTDB_HTTP_PORT"
mkdir -p "$STATE_DIR"
server_lock "questdb-$QUESTDB_HTTP_PORT"

# A real SQL query over REST; prints "QuestDB 9.2.2, JDK ..." (the build string).
rest_build() {
    curl -fsS -m 5 -G "$URL/exec" --data-urlencode "query=select build()" 2>/dev/null \
        | grep -o 'QuestDB [0-9][0-9.]*' | head -n1 | grep .
}
# ILP over HTTP answers /ping with 204.
ilp_ping() { [[ "$(curl -sS -m 5 -o /dev/null -w '%{http_code}' "$URL/ping" 2>/dev/null)" == 204 ]]; }
# A query over the PostgreSQL wire protocol with the default credentials.
pg_query() {
    PGPASSWORD=quest psql "host=127.0.0.1 port=$QUESTDB_PG_PORT user=admin dbname=qdb connect_timeout=5" \
        -X -tAc 'select 41 + 1' 2>/dev/null | grep -qx 42
}

command -v curl >/dev/null 2>&1 || apt_install curl
command -v psql >/dev/null 2>&1 || apt_install postgresql-client

if pid_alive "$PIDFILE"; then
    log "QuestDB already running (pid $(cat "$PIDFILE")): reusing it"
    WAIT_PID=$(cat "$PIDFILE")
elif v=$(rest_build); then
    log "a $v already answers on $URL: reusing it"
else
    for p in "$QUESTDB_HTTP_PORT" "$QUESTDB_PG_PORT" "$QUESTDB_ILP_PORT" "$QUESTDB_MIN_HTTP_PORT"; do
        port_open 127.0.0.1 "$p" && die "port $p is already taken by something that is not this QuestDB"
    done
    java_home=$(need_java)
    jar=$(mvn_get "org.questdb:questdb:$QUESTDB_VERSION")
    mkdir -p "$ROOT_DIR/conf"
    cat >"$ROOT_DIR/conf/server.conf" <<EOF
# written by scripts/servers/start-questdb.sh
http.net.bind.to=127.0.0.1:$QUESTDB_HTTP_PORT
http.min.net.bind.to=127.0.0.1:$QUESTDB_MIN_HTTP_PORT
pg.net.bind.to=127.0.0.1:$QUESTDB_PG_PORT
line.tcp.net.bind.to=127.0.0.1:$QUESTDB_ILP_PORT
line.udp.enabled=false
telemetry.enabled=false
EOF
    : >"$SERVER_LOG"
    log "starting QuestDB $QUESTDB_VERSION (heap $QUESTDB_HEAP, log: $SERVER_LOG)"
    start_bg "$SERVER_LOG" "$PIDFILE" "$java_home/bin/java" -Xms64m -Xmx"$QUESTDB_HEAP" -XX:+UseParallelGC \
        -p "$jar" -m io.questdb/io.questdb.ServerMain -d "$ROOT_DIR"
fi

wait_until "$IOTBENCH_TIMEOUT" "SQL over REST $URL/exec" rest_build
wait_until 60 "ILP over HTTP $URL/ping" ilp_ping
wait_until 60 "SQL over PG wire 127.0.0.1:$QUESTDB_PG_PORT" pg_query
log "ready: $(rest_build) on $URL (ILP/HTTP + REST), PG wire 127.0.0.1:$QUESTDB_PG_PORT (admin/quest, db qdb), ILP/TCP 127.0.0.1:$QUESTDB_ILP_PORT in $(elapsed)s"
