#!/usr/bin/env bash
# Start Apache IoTDB 2.0.1-beta as a 1C1D standalone (one ConfigNode, one DataNode; jars from Maven
# Central, cached), client RPC on 127.0.0.1:6667, then check a real Session query (Java client).
#
# Why 2.0.1-beta: it is the only 2.0.x for which Maven Central serves iotdb-server, iotdb-confignode
# and their parent iotdb-core together (2.0.10 has iotdb-server but not iotdb-core:2.0.10, the other
# 2.0.x have no iotdb-confignode). It has both the tree model and the table model.
#
# Ports (fixed by iotdb-system.properties): client RPC 6667 (dn_rpc_port); internal 10710 (ConfigNode),
# 10720 (ConfigNode consensus), 10730 (DataNode internal), 10740 (MPP data exchange), 10750/10760
# (schema/data region consensus). All addresses in the config are 127.0.0.1, but IoTDB 2.0.1-beta binds
# its Thrift and Ratis sockets on every interface anyway (it logs "listening on ip 127.0.0.1").
# User root, password root. REST, MQTT and the metrics reporters stay off (their defaults).
#
# Env: IOTDB_VERSION (2.0.1-beta), IOTDB_PORT (6667), IOTDB_CONFIGNODE_HEAP (256m),
#      IOTDB_DATANODE_HEAP (512m), IOTDB_DATANODE_DIRECT (256m, direct/off-heap memory);
#      IOTBENCH_CACHE, IOTBENCH_STATE, IOTBENCH_TIMEOUT (see lib.sh).
set -euo pipefail
SERVER_NAME=iotdb
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

IOTDB_VERSION="${IOTDB_VERSION:-2.0.1-beta}"
IOTDB_PORT="${IOTDB_PORT:-6667}"
IOTDB_CONFIGNODE_HEAP="${IOTDB_CONFIGNODE_HEAP:-256m}"
IOTDB_DATANODE_HEAP="${IOTDB_DATANODE_HEAP:-512m}"
IOTDB_DATANODE_DIRECT="${IOTDB_DATANODE_DIRECT:-256m}"
INTERNAL_PORTS=(10710 10720 10730 10740 10750 10760)

CACHE_DIR="$IOTBENCH_CACHE/iotdb-$IOTDB_VERSION"
LIB_DIR="$CACHE_DIR/lib"
CHECK_DIR="$CACHE_DIR/check"
STATE_DIR="$IOTBENCH_STATE/iotdb-$IOTDB_PORT"
CONF_DIR="$STATE_DIR/conf"
DATA_DIR="$STATE_DIR/data"
CN_PIDFILE="$STATE_DIR/confignode.pid"
DN_PIDFILE="$STATE_DIR/datanode.pid"
CN_LOG="$STATE_DIR/confignode.log"
DN_LOG="$STATE_DIR/datanode.log"
SERVER_LOG="$DN_LOG"
mkdir -p "$STATE_DIR"
server_lock "iotdb-$IOTDB_PORT"

fetch_jars() {
    [[ -f "$LIB_DIR/.complete" ]] && return 0
    log "downloading iotdb-server and iotdb-confignode $IOTDB_VERSION and their runtime dependencies to $LIB_DIR"
    local tmp
    tmp=$(mktemp -d)
    cat >"$tmp/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>iotbench</groupId><artifactId>iotdb-fetch</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.iotdb</groupId><artifactId>iotdb-server</artifactId><version>$IOTDB_VERSION</version></dependency>
    <dependency><groupId>org.apache.iotdb</groupId><artifactId>iotdb-confignode</artifactId><version>$IOTDB_VERSION</version></dependency>
  </dependencies>
</project>
EOF
    rm -rf "$LIB_DIR.tmp"
    mkdir -p "$CACHE_DIR"
    (cd "$tmp" && mvn_locked dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$LIB_DIR.tmp") \
        >"$STATE_DIR/fetch.log" 2>&1 || { SERVER_LOG="$STATE_DIR/fetch.log"; rm -rf "$tmp"; die "mvn dependency:copy-dependencies failed"; }
    rm -rf "$tmp" "$LIB_DIR"
    mv "$LIB_DIR.tmp" "$LIB_DIR"
    touch "$LIB_DIR/.complete"
    log "$(ls "$LIB_DIR" | wc -l) jars, $(du -sh "$LIB_DIR" | cut -f1)"
}

# The readiness check is a real client: IoTDB's own Java Session (iotdb-session is among the server's
# jars) runs "show version" and "show cluster"; compiled once into the cache.
build_check() {
    [[ -f "$CHECK_DIR/IotdbCheck.class" ]] && return 0
    local java_home
    java_home=$(need_java)
    [[ -x "$java_home/bin/javac" ]] || apt_install openjdk-17-jdk-headless
    mkdir -p "$CHECK_DIR.tmp"
    cat >"$CHECK_DIR.tmp/IotdbCheck.java" <<'EOF'
import org.apache.iotdb.isession.SessionDataSet;
import org.apache.iotdb.session.Session;

/** Prints "VERSION NODES" when every node of the cluster is Running; exits 1 otherwise. */
public class IotdbCheck {
  public static void main(String[] args) throws Exception {
    Session session = new Session.Builder().host(args[0]).port(Integer.parseInt(args[1]))
        .username("root").password("root").build();
    session.open(false);
    try {
      String version;
      try (SessionDataSet ds = session.executeQueryStatement("show version")) {
        version = ds.next().getFields().get(0).getStringValue();
      }
      int nodes = 0;
      try (SessionDataSet ds = session.executeQueryStatement("show cluster")) {
        int status = ds.getColumnNames().indexOf("Status");
        while (ds.hasNext()) {
          String s = ds.next().getFields().get(status).getStringValue();
          if (!"Running".equals(s)) { System.out.println("node status " + s); System.exit(1); }
          nodes++;
        }
      }
      System.out.println(version + " " + nodes);
    } finally {
      session.close();
    }
  }
}
EOF
    "$java_home/bin/javac" -nowarn -cp "$LIB_DIR/*" -d "$CHECK_DIR.tmp" "$CHECK_DIR.tmp/IotdbCheck.java" >"$STATE_DIR/check-build.log" 2>&1 \
        || { SERVER_LOG="$STATE_DIR/check-build.log"; die "could not compile the IoTDB client check"; }
    rm -rf "$CHECK_DIR"
    mv "$CHECK_DIR.tmp" "$CHECK_DIR"
}

write_config() {
    mkdir -p "$CONF_DIR" "$DATA_DIR" "$STATE_DIR/logs"
    cat >"$CONF_DIR/iotdb-system.properties" <<EOF
# written by scripts/servers/start-iotdb.sh: 1 ConfigNode + 1 DataNode on loopback
cn_seed_config_node=127.0.0.1:10710
dn_seed_config_node=127.0.0.1:10710
cn_internal_address=127.0.0.1
cn_internal_port=10710
cn_consensus_port=10720
dn_rpc_address=127.0.0.1
dn_rpc_port=$IOTDB_PORT
dn_internal_address=127.0.0.1
dn_internal_port=10730
dn_mpp_data_exchange_port=10740
dn_schema_region_consensus_port=10750
dn_data_region_consensus_port=10760
schema_replication_factor=1
data_replication_factor=1
cn_system_dir=$DATA_DIR/confignode/system
cn_consensus_dir=$DATA_DIR/confignode/consensus
cn_pipe_receiver_file_dir=$DATA_DIR/confignode/system/pipe/receiver
dn_system_dir=$DATA_DIR/datanode/system
dn_data_dirs=$DATA_DIR/datanode/data
dn_consensus_dir=$DATA_DIR/datanode/consensus
dn_wal_dirs=$DATA_DIR/datanode/wal
dn_tracing_dir=$DATA_DIR/datanode/tracing
dn_sync_dir=$DATA_DIR/datanode/sync
sort_tmp_dir=$DATA_DIR/datanode/tmp
dn_pipe_receiver_file_dirs=$DATA_DIR/datanode/system/pipe/receiver
# Each data region's write-ahead log buffer comes out of the DataNode's direct memory (32 MiB by
# default): with 256 MiB, databases left by earlier runs (the iotdb-local target's, the contract
# tests') took every region a new database needs ("no available DataRegionGroup").
wal_buffer_size_in_byte=8388608
# The ConfigNode samples the DataNode's load, with the data regions' sizes that SHOW REGIONS reports
# (the module's storage figure), every 10th heartbeat: 10 s at the default 1,000 ms, which every
# insert run of the test suite waited out after its FLUSH; every 2 s here.
heartbeat_interval_in_ms=200
EOF
    cat >"$CONF_DIR/logback.xml" <<'EOF'
<configuration scan="false">
  <appender name="STDOUT" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%d{ISO8601} %-5level [%thread] %logger{30} - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="STDOUT"/></root>
</configuration>
EOF
    cat >"$CONF_DIR/logback-check.xml" <<'EOF'
<configuration scan="false">
  <appender name="STDERR" class="ch.qos.logback.core.ConsoleAppender">
    <target>System.err</target>
    <encoder><pattern>%-5level %logger{30} - %msg%n</pattern></encoder>
  </appender>
  <root level="WARN"><appender-ref ref="STDERR"/></root>
</configuration>
EOF
}

# start_node PIDFILE LOG HEAP DIRECT MAIN_CLASS
start_node() {
    local pidfile=$1 logfile=$2 heap=$3 direct=$4 main=$5 java_home
    java_home=$(need_java)
    local opts=(
        -Xms"$heap" -Xmx"$heap" -XX:MaxDirectMemorySize="$direct" -DOFF_HEAP_MEMORY="${direct^^}"
        -Xss512k -XX:+CrashOnOutOfMemoryError -Dsun.jnu.encoding=UTF-8 -Dfile.encoding=UTF-8
        --add-opens=java.base/java.util.concurrent=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED
        --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED
        --add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED
        -Dlogback.configurationFile="$CONF_DIR/logback.xml"
        -DIOTDB_HOME="$STATE_DIR" -DIOTDB_DATA_HOME="$STATE_DIR" -DIOTDB_CONF="$CONF_DIR"
        -DCONFIGNODE_HOME="$STATE_DIR" -DCONFIGNODE_DATA_HOME="$STATE_DIR" -DCONFIGNODE_CONF="$CONF_DIR"
        -DTSFILE_HOME="$STATE_DIR" -DTSFILE_CONF="$CONF_DIR"
        -DIOTDB_LOG_DIR="$STATE_DIR/logs" -DCONFIGNODE_LOGS="$STATE_DIR/logs" -Diotdb-foreground=yes
        -cp "$LIB_DIR/*" "$main" -s
    )
    : >"$logfile"
    cd "$STATE_DIR"   # the nodes resolve a few relative paths (ext/) against the working directory
    start_bg "$logfile" "$pidfile" "$java_home/bin/java" "${opts[@]}"
}

client_check() {
    "$(need_java)/bin/java" -Xmx64m -Dlogback.configurationFile="$CONF_DIR/logback-check.xml" \
        -cp "$CHECK_DIR:$LIB_DIR/*" IotdbCheck 127.0.0.1 "$IOTDB_PORT" 2>/dev/null
}
cn_ready() { grep -qE "IoTDB-ConfigNode has successfully (started|restarted)" "$CN_LOG"; }
dn_ready() { grep -q "IoTDB DataNode is set up successfully" "$DN_LOG"; }

# A pair started with another configuration (an earlier version of this script) is restarted with this one.
config_sum() { md5sum <"$CONF_DIR/iotdb-system.properties"; }
if pid_alive "$DN_PIDFILE" && pid_alive "$CN_PIDFILE"; then
    started_with=$(cat "$STATE_DIR/started-with" 2>/dev/null || true)
    write_config
    if [[ "$started_with" != "$(config_sum)" ]]; then
        log "configuration changed: restarting IoTDB"
        stop_pidfile "$DN_PIDFILE" "the IoTDB DataNode"
        stop_pidfile "$CN_PIDFILE" "the IoTDB ConfigNode"
    fi
fi
if pid_alive "$DN_PIDFILE" && pid_alive "$CN_PIDFILE"; then
    log "IoTDB already running (ConfigNode pid $(cat "$CN_PIDFILE"), DataNode pid $(cat "$DN_PIDFILE")): reusing it"
    with_lock "iotdb-$IOTDB_VERSION" fetch_jars
    with_lock "iotdb-$IOTDB_VERSION" build_check
elif port_open 127.0.0.1 "$IOTDB_PORT"; then
    with_lock "iotdb-$IOTDB_VERSION" fetch_jars
    with_lock "iotdb-$IOTDB_VERSION" build_check
    write_config
    if out=$(client_check); then
        log "an IoTDB ${out%% *} already answers on 127.0.0.1:$IOTDB_PORT: reusing it"
        exit 0
    fi
    die "port $IOTDB_PORT is taken by something that does not answer as IoTDB"
else
    # A half-running pair (one node died) is restarted as a whole.
    stop_pidfile "$DN_PIDFILE" "the IoTDB DataNode left without its ConfigNode"
    stop_pidfile "$CN_PIDFILE" "the IoTDB ConfigNode left without its DataNode"
    for p in "${INTERNAL_PORTS[@]}"; do
        port_open 127.0.0.1 "$p" && die "port $p (IoTDB internal) is already taken"
    done
    with_lock "iotdb-$IOTDB_VERSION" fetch_jars
    with_lock "iotdb-$IOTDB_VERSION" build_check
    write_config
    log "starting the ConfigNode (heap $IOTDB_CONFIGNODE_HEAP, log: $CN_LOG)"
    SERVER_LOG="$CN_LOG"
    start_node "$CN_PIDFILE" "$CN_LOG" "$IOTDB_CONFIGNODE_HEAP" 128m org.apache.iotdb.confignode.service.ConfigNode
    wait_until "$IOTBENCH_TIMEOUT" "ConfigNode log line 'has successfully (re)started'" cn_ready
    log "starting the DataNode (heap $IOTDB_DATANODE_HEAP, direct $IOTDB_DATANODE_DIRECT, log: $DN_LOG)"
    SERVER_LOG="$DN_LOG"
    start_node "$DN_PIDFILE" "$DN_LOG" "$IOTDB_DATANODE_HEAP" "$IOTDB_DATANODE_DIRECT" org.apache.iotdb.db.service.DataNode
    wait_until "$IOTBENCH_TIMEOUT" "DataNode log line 'is set up successfully'" dn_ready
    config_sum >"$STATE_DIR/started-with"
fi

CHECK_OUT=""
remember_check() { CHECK_OUT=$(client_check); }   # runs in this shell: wait_until keeps CHECK_OUT
wait_until 60 "Session query on 127.0.0.1:$IOTDB_PORT (show version, show cluster)" remember_check
log "ready: IoTDB ${CHECK_OUT%% *} (${CHECK_OUT##* } nodes Running) on 127.0.0.1:$IOTDB_PORT (user root/root) in $(elapsed)s"
