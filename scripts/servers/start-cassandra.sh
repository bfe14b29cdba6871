#!/usr/bin/env bash
# Start a single-node Apache Cassandra 5.0.6 (jars from Maven Central, cached) on 127.0.0.1:9042,
# 512 MB heap, no authentication, then check a real CQL query.
#
# Env: CASSANDRA_VERSION (5.0.6), CASSANDRA_PORT (9042), CASSANDRA_HEAP (512m);
#      IOTBENCH_CACHE, IOTBENCH_STATE, IOTBENCH_TIMEOUT (see lib.sh).
# Other ports (loopback): storage 7000, JMX 7199.
set -euo pipefail
SERVER_NAME=cassandra
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CASSANDRA_VERSION="${CASSANDRA_VERSION:-5.0.6}"
CASSANDRA_PORT="${CASSANDRA_PORT:-9042}"
CASSANDRA_HEAP="${CASSANDRA_HEAP:-512m}"

LIB_DIR="$IOTBENCH_CACHE/cassandra-$CASSANDRA_VERSION/lib"
STATE_DIR="$IOTBENCH_STATE/cassandra-$CASSANDRA_PORT"
CONF_DIR="$STATE_DIR/conf"
DATA_DIR="$STATE_DIR/data"
PIDFILE="$STATE_DIR/cassandra.pid"
SERVER_LOG="$STATE_DIR/cassandra.log"
mkdir -p "$STATE_DIR"
server_lock "cassandra-$CASSANDRA_PORT"

# A real CQL request: native protocol v4 STARTUP + QUERY "SELECT release_version FROM system.local",
# with the Python standard library only (prints the version). With cassandra-driver importable, the
# same query is also run through the driver.
cql_check() {
    command -v python3 >/dev/null 2>&1 || { port_open 127.0.0.1 "$CASSANDRA_PORT"; return; }
    python3 - "$CASSANDRA_PORT" <<'PY'
import re, socket, struct, sys
port = int(sys.argv[1])
def frame(stream, op, body):
    return struct.pack(">BBhBI", 4, 0, stream, op, len(body)) + body
def recv(s):
    hdr = b""
    while len(hdr) < 9:
        c = s.recv(9 - len(hdr))
        if not c: raise SystemExit("connection closed")
        hdr += c
    _, _, _, op, n = struct.unpack(">BBhBI", hdr)
    body = b""
    while len(body) < n:
        c = s.recv(n - len(body))
        if not c: raise SystemExit("connection closed")
        body += c
    return op, body
def string(x): x = x.encode(); return struct.pack(">H", len(x)) + x
s = socket.create_connection(("127.0.0.1", port), timeout=10)
s.sendall(frame(1, 0x01, struct.pack(">H", 1) + string("CQL_VERSION") + string("3.0.0")))
op, body = recv(s)
if op != 0x02: raise SystemExit("STARTUP answered opcode %#x %r" % (op, body[:200]))
q = b"SELECT release_version FROM system.local"
s.sendall(frame(2, 0x07, struct.pack(">I", len(q)) + q + struct.pack(">HB", 0x0001, 0)))
op, body = recv(s)
if op != 0x08: raise SystemExit("QUERY answered opcode %#x %r" % (op, body[:200]))
m = re.search(rb"\d+\.\d+\.\d+[\w.-]*", body)
version = m.group(0).decode() if m else "?"
try:
    from cassandra.cluster import Cluster
except Exception:
    pass
else:
    cluster = Cluster(["127.0.0.1"], port=port, connect_timeout=10)
    try:
        row = cluster.connect().execute("SELECT release_version FROM system.local", timeout=10).one()
        version = row.release_version + " (cassandra-driver ok)"
    finally:
        cluster.shutdown()
print(version)
PY
}

fetch_jars() {
    [[ -f "$LIB_DIR/.complete" ]] && return 0
    need_mvn
    log "downloading cassandra-all $CASSANDRA_VERSION and its runtime dependencies to $LIB_DIR"
    local tmp
    tmp=$(mktemp -d)
    cat >"$tmp/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>iotbench</groupId><artifactId>cassandra-fetch</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.cassandra</groupId><artifactId>cassandra-all</artifactId>
      <version>$CASSANDRA_VERSION</version>
    </dependency>
  </dependencies>
</project>
EOF
    rm -rf "$LIB_DIR.tmp"
    (cd "$tmp" && mvn_locked dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$LIB_DIR.tmp") \
        >"$STATE_DIR/fetch.log" 2>&1 || { SERVER_LOG="$STATE_DIR/fetch.log"; rm -rf "$tmp"; die "mvn dependency:copy-dependencies failed"; }
    rm -rf "$tmp" "$LIB_DIR"
    mv "$LIB_DIR.tmp" "$LIB_DIR"
    touch "$LIB_DIR/.complete"
    log "$(ls "$LIB_DIR" | wc -l) jars, $(du -sh "$LIB_DIR" | cut -f1)"
}

write_config() {
    mkdir -p "$CONF_DIR" "$DATA_DIR"/{data,commitlog,saved_caches,hints,cdc_raw}
    cat >"$CONF_DIR/cassandra.yaml" <<EOF
# written by scripts/servers/start-cassandra.sh: single node for tests
cluster_name: iotbench
num_tokens: 16
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
data_file_directories:
  - $DATA_DIR/data
commitlog_directory: $DATA_DIR/commitlog
saved_caches_directory: $DATA_DIR/saved_caches
hints_directory: $DATA_DIR/hints
cdc_raw_directory: $DATA_DIR/cdc_raw
auto_snapshot: false
commitlog_sync: periodic
commitlog_sync_period: 10000ms
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "127.0.0.1:7000"
listen_address: 127.0.0.1
rpc_address: 127.0.0.1
storage_port: 7000
native_transport_port: $CASSANDRA_PORT
start_native_transport: true
endpoint_snitch: SimpleSnitch
authenticator: AllowAllAuthenticator
authorizer: AllowAllAuthorizer
auto_bootstrap: false
batch_size_warn_threshold: 1000KiB
batch_size_fail_threshold: 5000KiB
unlogged_batch_across_partitions_warn_threshold: 1000
write_request_timeout: 10000ms
read_request_timeout: 10000ms
range_request_timeout: 20000ms
counter_write_request_timeout: 10000ms
request_timeout: 20000ms
EOF
    cat >"$CONF_DIR/logback.xml" <<'EOF'
<configuration scan="false">
  <appender name="STDOUT" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%-5level [%thread] %date{ISO8601} %F:%L - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="STDOUT"/></root>
  <logger name="org.apache.cassandra" level="INFO"/>
  <logger name="com.datastax" level="WARN"/>
</configuration>
EOF
}

start_cassandra() {
    local java_home jamm
    java_home=$(need_java)
    jamm=$(ls "$LIB_DIR"/jamm-*.jar 2>/dev/null | head -n1)
    [[ -n "$jamm" ]] || die "no jamm jar in $LIB_DIR"
    local opts=(
        -Xms"$CASSANDRA_HEAP" -Xmx"$CASSANDRA_HEAP" -Xss256k
        -XX:+UseG1GC -XX:+ParallelRefProcEnabled -XX:MaxTenuringThreshold=1 -XX:G1HeapRegionSize=16m
        -XX:G1RSetUpdatingPauseTimePercent=5 -XX:MaxGCPauseMillis=300 -XX:InitiatingHeapOccupancyPercent=70
        -XX:+UseThreadPriorities -XX:+PerfDisableSharedMem -XX:+CrashOnOutOfMemoryError
        -Djdk.attach.allowAttachSelf=true
        --add-exports java.base/jdk.internal.misc=ALL-UNNAMED
        --add-exports java.base/jdk.internal.ref=ALL-UNNAMED
        --add-exports java.base/sun.nio.ch=ALL-UNNAMED
        --add-exports java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED
        --add-exports java.rmi/sun.rmi.registry=ALL-UNNAMED
        --add-exports java.rmi/sun.rmi.server=ALL-UNNAMED
        --add-exports java.sql/java.sql=ALL-UNNAMED
        --add-exports java.base/java.lang.ref=ALL-UNNAMED
        --add-exports jdk.unsupported/sun.misc=ALL-UNNAMED
        --add-exports jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED
        --add-exports jdk.attach/sun.tools.attach=ALL-UNNAMED
        --add-opens java.base/java.lang.module=ALL-UNNAMED
        --add-opens java.base/jdk.internal.loader=ALL-UNNAMED
        --add-opens java.base/jdk.internal.ref=ALL-UNNAMED
        --add-opens java.base/jdk.internal.reflect=ALL-UNNAMED
        --add-opens java.base/jdk.internal.math=ALL-UNNAMED
        --add-opens java.base/jdk.internal.module=ALL-UNNAMED
        --add-opens java.base/jdk.internal.util.jar=ALL-UNNAMED
        --add-opens jdk.management/com.sun.management.internal=ALL-UNNAMED
        --add-opens java.base/sun.nio.ch=ALL-UNNAMED
        --add-opens java.base/java.io=ALL-UNNAMED
        --add-opens java.base/java.nio=ALL-UNNAMED
        --add-opens java.base/java.lang.reflect=ALL-UNNAMED
        --add-opens jdk.compiler/com.sun.tools.javac=ALL-UNNAMED
        --add-opens java.base/java.lang=ALL-UNNAMED
        --add-opens java.base/java.util=ALL-UNNAMED
        --add-opens java.base/java.util.concurrent=ALL-UNNAMED
        --add-opens java.base/java.util.concurrent.atomic=ALL-UNNAMED
        -Dio.netty.tryReflectionSetAccessible=true
        -Dio.netty.allocator.useCacheForAllThreads=true -Dio.netty.allocator.maxOrder=11
        -javaagent:"$jamm"
        -Dcassandra.config="file://$CONF_DIR/cassandra.yaml"
        -Dlogback.configurationFile="file://$CONF_DIR/logback.xml"
        -Dcassandra.storagedir="$DATA_DIR"
        -Dcassandra.logdir="$STATE_DIR/logs"
        -Dcassandra-foreground=yes
        -Dcassandra.jmx.local.port=7199
        -Dcassandra.skip_wait_for_gossip_to_settle=0
        -Dcassandra.ring_delay_ms=1000
        -Dcassandra.initial_token_allocation_ms=0
        -cp "$CONF_DIR:$LIB_DIR/*"
        org.apache.cassandra.service.CassandraDaemon
    )
    mkdir -p "$STATE_DIR/logs"
    : >"$SERVER_LOG"
    log "starting Cassandra $CASSANDRA_VERSION (heap $CASSANDRA_HEAP, log: $SERVER_LOG)"
    start_bg "$SERVER_LOG" "$PIDFILE" "$java_home/bin/java" "${opts[@]}"
}

log_says_ready() { grep -q "Starting listening for CQL clients" "$SERVER_LOG"; }

if pid_alive "$PIDFILE"; then
    log "Cassandra already running (pid $(cat "$PIDFILE")): reusing it"
    WAIT_PID=$(cat "$PIDFILE")
elif port_open 127.0.0.1 "$CASSANDRA_PORT"; then
    if v=$(cql_check 2>/dev/null); then
        log "a Cassandra $v already answers CQL on 127.0.0.1:$CASSANDRA_PORT: reusing it"
        exit 0
    fi
    die "port $CASSANDRA_PORT is taken by something that does not answer CQL"
else
    for p in 7000 7199; do
        port_open 127.0.0.1 "$p" && die "port $p (Cassandra storage/JMX) is already taken"
    done
    with_lock "cassandra-$CASSANDRA_VERSION" fetch_jars
    write_config
    start_cassandra
fi

[[ -n "${WAIT_PID:-}" ]] && wait_until "$IOTBENCH_TIMEOUT" "log line 'Starting listening for CQL clients'" log_says_ready
wait_until 60 "CQL query on 127.0.0.1:$CASSANDRA_PORT" cql_check
version=$(cql_check) || die "CQL check failed"
log "ready: Cassandra $version on 127.0.0.1:$CASSANDRA_PORT in $(elapsed)s"
