#!/usr/bin/env bash
# Start Debian's ClickHouse server with a config of its own under the state dir, on loopback, then
# check a real query with clickhouse-client (native protocol) and over HTTP.
#
# Debian bookworm ships ClickHouse 18.16.1 (from 2018): no DateTime64, LowCardinality only with the
# setting allow_experimental_low_cardinality_type=1, MergeTree without FINAL. The package's own
# service is never started (lib.sh's apt_install keeps postinst from starting services); our server
# runs as root with its own data dir.
#
# Ports (127.0.0.1 only): native protocol 19000 (ClickHouse's default 9000 is QuestDB's HTTP port),
# HTTP 18123, interserver 19009 (9009 is QuestDB's ILP/TCP). User default, no password. Time zone UTC.
#
# Env: CLICKHOUSE_PORT (19000, native), CLICKHOUSE_HTTP_PORT (18123), CLICKHOUSE_INTERSERVER_PORT
#      (19009); IOTBENCH_STATE, IOTBENCH_TIMEOUT (see lib.sh).
set -euo pipefail
SERVER_NAME=clickhouse
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CLICKHOUSE_PORT="${CLICKHOUSE_PORT:-19000}"
CLICKHOUSE_HTTP_PORT="${CLICKHOUSE_HTTP_PORT:-18123}"
CLICKHOUSE_INTERSERVER_PORT="${CLICKHOUSE_INTERSERVER_PORT:-19009}"

STATE_DIR="$IOTBENCH_STATE/clickhouse-$CLICKHOUSE_PORT"
DATA_DIR="$STATE_DIR/data"
PIDFILE="$STATE_DIR/clickhouse.pid"
SERVER_LOG="$STATE_DIR/clickhouse-server.log"
mkdir -p "$STATE_DIR"
server_lock "clickhouse-$CLICKHOUSE_PORT"

apt_install clickhouse-server clickhouse-client curl
CLICKHOUSE_SERVER=/usr/sbin/clickhouse-server
[[ -x "$CLICKHOUSE_SERVER" ]] || die "$CLICKHOUSE_SERVER is missing although clickhouse-server is installed"

native_query() {
    clickhouse-client --host 127.0.0.1 --port "$CLICKHOUSE_PORT" --connect_timeout 5 -q 'SELECT version()' 2>/dev/null | grep .
}
http_query() {
    curl -fsS -m 5 "http://127.0.0.1:$CLICKHOUSE_HTTP_PORT/?query=SELECT%2041%2B1" 2>/dev/null | grep -qx 42
}

write_config() {
    mkdir -p "$DATA_DIR" "$STATE_DIR/tmp" "$STATE_DIR/user_files" "$STATE_DIR/format_schemas"
    cat >"$STATE_DIR/config.xml" <<EOF
<?xml version="1.0"?>
<!-- written by scripts/servers/start-clickhouse.sh -->
<yandex>
    <logger>
        <level>information</level>
        <log>$SERVER_LOG</log>
        <errorlog>$STATE_DIR/clickhouse-server.err.log</errorlog>
        <size>100M</size>
        <count>2</count>
    </logger>
    <listen_host>127.0.0.1</listen_host>
    <tcp_port>$CLICKHOUSE_PORT</tcp_port>
    <http_port>$CLICKHOUSE_HTTP_PORT</http_port>
    <interserver_http_port>$CLICKHOUSE_INTERSERVER_PORT</interserver_http_port>
    <max_connections>4096</max_connections>
    <keep_alive_timeout>3</keep_alive_timeout>
    <max_concurrent_queries>100</max_concurrent_queries>
    <uncompressed_cache_size>268435456</uncompressed_cache_size>
    <mark_cache_size>268435456</mark_cache_size>
    <path>$DATA_DIR/</path>
    <tmp_path>$STATE_DIR/tmp/</tmp_path>
    <user_files_path>$STATE_DIR/user_files/</user_files_path>
    <format_schema_path>$STATE_DIR/format_schemas/</format_schema_path>
    <users_config>$STATE_DIR/users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <timezone>UTC</timezone>
    <mlock_executable>false</mlock_executable>
    <builtin_dictionaries_reload_interval>3600</builtin_dictionaries_reload_interval>
    <max_session_timeout>3600</max_session_timeout>
    <default_session_timeout>60</default_session_timeout>
</yandex>
EOF
    cat >"$STATE_DIR/users.xml" <<'EOF'
<?xml version="1.0"?>
<!-- written by scripts/servers/start-clickhouse.sh: user default, no password, loopback only -->
<yandex>
    <profiles>
        <default>
            <max_memory_usage>2000000000</max_memory_usage>
            <use_uncompressed_cache>0</use_uncompressed_cache>
            <load_balancing>random</load_balancing>
        </default>
    </profiles>
    <users>
        <default>
            <password></password>
            <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
    </users>
    <quotas>
        <default>
            <interval>
                <duration>3600</duration>
                <queries>0</queries><errors>0</errors><result_rows>0</result_rows>
                <read_rows>0</read_rows><execution_time>0</execution_time>
            </interval>
        </default>
    </quotas>
</yandex>
EOF
}

if pid_alive "$PIDFILE"; then
    log "clickhouse-server already running (pid $(cat "$PIDFILE")): reusing it"
    WAIT_PID=$(cat "$PIDFILE")
elif v=$(native_query); then
    log "a ClickHouse $v already answers on 127.0.0.1:$CLICKHOUSE_PORT: reusing it"
else
    for p in "$CLICKHOUSE_PORT" "$CLICKHOUSE_HTTP_PORT" "$CLICKHOUSE_INTERSERVER_PORT"; do
        port_open 127.0.0.1 "$p" && die "port $p is already taken by something that is not this ClickHouse"
    done
    write_config
    log "starting clickhouse-server $(dpkg-query -W -f='${Version}' clickhouse-server) (log: $SERVER_LOG)"
    # Its own stdout/stderr (before the logger is set up) go next to the server log.
    start_bg "$STATE_DIR/clickhouse-stdout.log" "$PIDFILE" "$CLICKHOUSE_SERVER" --config-file="$STATE_DIR/config.xml"
fi

wait_until "$IOTBENCH_TIMEOUT" "SELECT version() over the native protocol 127.0.0.1:$CLICKHOUSE_PORT" native_query
wait_until 60 "query over HTTP 127.0.0.1:$CLICKHOUSE_HTTP_PORT" http_query
log "ready: ClickHouse $(native_query) native 127.0.0.1:$CLICKHOUSE_PORT, HTTP 127.0.0.1:$CLICKHOUSE_HTTP_PORT (user default, no password) in $(elapsed)s"
