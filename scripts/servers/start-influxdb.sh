#!/usr/bin/env bash
# Build (once, cached) and start InfluxDB 1.8.10 on 127.0.0.1:8086 with Flux enabled and auth
# disabled, then create database "bench". Clients: 1.x HTTP API, or influxdb-client with
# token="user:pass", org="-", bucket="bench/autogen".
#
# Env: INFLUXDB_VERSION (1.8.10), INFLUXDB_PORT (8086), INFLUXDB_DB (bench);
#      IOTBENCH_CACHE, IOTBENCH_STATE, IOTBENCH_TIMEOUT (see lib.sh).
set -euo pipefail
SERVER_NAME=influxdb
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

INFLUXDB_VERSION="${INFLUXDB_VERSION:-1.8.10}"
INFLUXDB_PORT="${INFLUXDB_PORT:-8086}"
INFLUXDB_DB="${INFLUXDB_DB:-bench}"
RPC_PORT=$(( INFLUXDB_PORT + 2 ))   # backup/restore RPC port (8088 by default)

BIN_DIR="$IOTBENCH_CACHE/influxdb-$INFLUXDB_VERSION/bin"
INFLUXD="$BIN_DIR/influxd"
STATE_DIR="$IOTBENCH_STATE/influxdb-$INFLUXDB_PORT"
PIDFILE="$STATE_DIR/influxd.pid"
SERVER_LOG="$STATE_DIR/influxd.log"
CONF="$STATE_DIR/influxdb.conf"
URL="http://127.0.0.1:$INFLUXDB_PORT"
mkdir -p "$STATE_DIR"
server_lock "influxdb-$INFLUXDB_PORT"

ping_ok() { curl -fsS -o /dev/null -m 5 "$URL/ping" 2>/dev/null; }
influx_version() { curl -fsS -m 5 -D - -o /dev/null "$URL/ping" | tr -d '\r' | awk -F': ' 'tolower($1)=="x-influxdb-version"{print $2}'; }

build_influxd() {
    [[ -x "$INFLUXD" ]] && return 0
    if ! command -v go >/dev/null 2>&1; then
        if [[ -x /usr/local/go/bin/go ]]; then
            export PATH="$PATH:/usr/local/go/bin"
        else
            apt_install golang-go git ca-certificates
        fi
    fi
    log "building influxd $INFLUXDB_VERSION with $(go version | awk '{print $3}') (1-3 min, cached in $BIN_DIR)"
    # Private module and build caches (~800 MB), deleted after a successful build: only the binary
    # (~50 MB) is kept, so the cache dir stays small. A failed build keeps them for the retry.
    local gotmp="$IOTBENCH_CACHE/influxdb-$INFLUXDB_VERSION/gobuild"
    mkdir -p "$BIN_DIR" "$gotmp"
    GOBIN="$BIN_DIR.tmp" GOFLAGS="${GOFLAGS:--buildvcs=false}" GOMODCACHE="$gotmp/mod" GOCACHE="$gotmp/cache" \
        go install -ldflags "-s -w -X main.version=$INFLUXDB_VERSION -X main.branch=1.8 -X main.commit=v$INFLUXDB_VERSION" \
        "github.com/influxdata/influxdb/cmd/influxd@v$INFLUXDB_VERSION" >"$STATE_DIR/build.log" 2>&1 \
        || { SERVER_LOG="$STATE_DIR/build.log"; die "go install influxd@v$INFLUXDB_VERSION failed"; }
    mv "$BIN_DIR.tmp/influxd" "$INFLUXD"
    rm -rf "$BIN_DIR.tmp"
    chmod -R u+w "$gotmp" && rm -rf "$gotmp"   # the module cache is read-only
    log "built $INFLUXD"
}

if pid_alive "$PIDFILE"; then
    log "influxd already running (pid $(cat "$PIDFILE")): reusing it"
    WAIT_PID=$(cat "$PIDFILE")
elif ping_ok; then
    log "an InfluxDB $(influx_version) already answers on $URL: reusing it"
else
    port_open 127.0.0.1 "$INFLUXDB_PORT" && die "port $INFLUXDB_PORT is taken by something that is not InfluxDB"
    with_lock "influxdb-$INFLUXDB_VERSION" build_influxd
    mkdir -p "$STATE_DIR/meta" "$STATE_DIR/data" "$STATE_DIR/wal"
    cat >"$CONF" <<EOF
# written by scripts/servers/start-influxdb.sh
reporting-disabled = true
bind-address = "127.0.0.1:$RPC_PORT"

[meta]
  dir = "$STATE_DIR/meta"

[data]
  dir = "$STATE_DIR/data"
  wal-dir = "$STATE_DIR/wal"
  query-log-enabled = false

[http]
  enabled = true
  bind-address = "127.0.0.1:$INFLUXDB_PORT"
  auth-enabled = false
  flux-enabled = true
  log-enabled = false
  max-body-size = 0

[logging]
  level = "warn"
EOF
    log "starting influxd (log: $SERVER_LOG)"
    start_bg "$SERVER_LOG" "$PIDFILE" "$INFLUXD" -config "$CONF"
fi

wait_until "$IOTBENCH_TIMEOUT" "GET $URL/ping" ping_ok

# Create the database (idempotent in InfluxQL) and check it is listed.
curl -fsS -m 30 -XPOST "$URL/query" --data-urlencode "q=CREATE DATABASE \"$INFLUXDB_DB\"" >/dev/null \
    || die "CREATE DATABASE $INFLUXDB_DB failed"
curl -fsS -m 30 -G "$URL/query" --data-urlencode "q=SHOW DATABASES" | grep -q "\"$INFLUXDB_DB\"" \
    || die "database $INFLUXDB_DB is not listed by SHOW DATABASES"
# Flux must be enabled (influxdb-client queries use it).
flux_out=$(curl -sS -m 30 -XPOST "$URL/api/v2/query" -H 'Content-Type: application/vnd.flux' -H 'Accept: application/csv' \
    --data 'buckets()' 2>&1) || die "Flux query endpoint failed: $flux_out"
grep -q "$INFLUXDB_DB/autogen" <<<"$flux_out" || die "Flux query did not list $INFLUXDB_DB/autogen: $flux_out"

log "ready: InfluxDB $(influx_version) on $URL (db $INFLUXDB_DB, Flux on, no auth) in $(elapsed)s"
