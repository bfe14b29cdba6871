#!/usr/bin/env bash
# Build (once, cached) and start a real TimescaleDB: the Apache-2 build of TimescaleDB 2.28.3 from
# the vendored source in the shared folder beside the repository (vendor/timescaledb/, whose build.sh
# installs it into a private copy of Debian's PostgreSQL 15 tree), as its own server on port 5433
# with its own data dir, reachable from any IPv4 address with a password (pods of a local
# Kubernetes cluster can use it), and check a real login over TCP and the extension.
#
# The Apache build has hypertables and time_bucket; compression, continuous aggregates,
# time_bucket_gapfill and retention policies are Timescale-License code it leaves out.
#
# Env: TIMESCALEDB_PORT (5433); PGPASSWORD (default postgres) password of user postgres;
#      TIMESCALEDB_MAX_CONNECTIONS (200); IOTBENCH_SHARED (the shared folder, default: beside the
#      repository); TIMESCALEDB_SOURCE (default $IOTBENCH_SHARED/vendor/timescaledb);
#      IOTBENCH_CACHE, IOTBENCH_STATE, IOTBENCH_TIMEOUT (see lib.sh).
set -euo pipefail
SERVER_NAME=timescaledb
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
source "$HERE/lib.sh"

PGPASSWORD="${PGPASSWORD:-postgres}"
TIMESCALEDB_PORT="${TIMESCALEDB_PORT:-5433}"
TIMESCALEDB_MAX_CONNECTIONS="${TIMESCALEDB_MAX_CONNECTIONS:-200}"
IOTBENCH_SHARED="${IOTBENCH_SHARED:-$(dirname "$(dirname "$(dirname "$HERE")")")/shared}"
TIMESCALEDB_SOURCE="${TIMESCALEDB_SOURCE:-$IOTBENCH_SHARED/vendor/timescaledb}"
export PGPASSWORD

BUILD_SH="$TIMESCALEDB_SOURCE/build.sh"
[[ -f "$BUILD_SH" ]] || die "no TimescaleDB source at $TIMESCALEDB_SOURCE (build.sh missing); set IOTBENCH_SHARED or TIMESCALEDB_SOURCE"
TIMESCALEDB_VERSION=$(sed -n 's/^VERSION=\([0-9.]*\)$/\1/p' "$BUILD_SH")
[[ -n "$TIMESCALEDB_VERSION" ]] || die "cannot read VERSION= from $BUILD_SH"
# The cache key is the folder's version; build.sh itself rebuilds when the tarball's checksum or
# Debian's postgresql-15 version changes (its TREE/.built-from).
BUILD_DIR="$IOTBENCH_CACHE/timescaledb-$TIMESCALEDB_VERSION"
TREE="$BUILD_DIR/pgtree"

STATE_DIR="$IOTBENCH_STATE/timescaledb-$TIMESCALEDB_PORT"
DATA="$STATE_DIR/data"
PIDFILE="$STATE_DIR/postgres.pid"
SERVER_LOG="$STATE_DIR/timescaledb.log"
mkdir -p "$STATE_DIR"
server_lock "timescaledb-$TIMESCALEDB_PORT"

# --- build (cached) ------------------------------------------------------------------------------
# build.sh would apt-get install its packages itself; installing them here first keeps to one apt at
# a time (apt_install's lock). postgresql-server-dev-15 may upgrade postgresql-15 on disk.
apt_install postgresql-15 postgresql-server-dev-15 cmake gcc make libssl-dev
build() {
    local t0 bin
    t0=$(date +%s)
    [[ -f "$TREE/.built-from" ]] || log "building TimescaleDB $TIMESCALEDB_VERSION (Apache-2 part) from $TIMESCALEDB_SOURCE into $TREE (cold: about a minute)"
    bin=$(bash "$BUILD_SH" "$TREE" 2>"$BUILD_DIR.log") || { SERVER_LOG="$BUILD_DIR.log"; die "building TimescaleDB $TIMESCALEDB_VERSION with $BUILD_SH failed"; }
    bin=$(tail -n 1 <<<"$bin")
    rm -rf "$BUILD_DIR/src"   # the sources and objects (build.sh checks only TREE)
    (( $(date +%s) - t0 < 2 )) || log "built in $(( $(date +%s) - t0 ))s"
    echo "$bin"
}
mkdir -p "$BUILD_DIR"
BIN=$(with_lock "timescaledb-$TIMESCALEDB_VERSION" build) || exit 1   # build() said why
[[ -x "$BIN/postgres" && -x "$BIN/initdb" && -x "$BIN/psql" ]] || die "the TimescaleDB build gave no PostgreSQL binaries in '$BIN'"
BUILT_FROM=$(cat "$TREE/.built-from")

as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }
peer_psql() { as_postgres "$BIN/psql" -h "$STATE_DIR" -p "$TIMESCALEDB_PORT" -U postgres -d postgres -X -q -v ON_ERROR_STOP=1 "$@"; }

# --- configuration -------------------------------------------------------------------------------
write_config() {
    cat >"$DATA/iotbench.conf" <<EOF
# written by scripts/servers/start-timescaledb.sh
listen_addresses = '*'
port = $TIMESCALEDB_PORT
unix_socket_directories = '$STATE_DIR'
max_connections = $TIMESCALEDB_MAX_CONNECTIONS
shared_preload_libraries = 'timescaledb'
timescaledb.telemetry_level = off
EOF
    cat >"$DATA/pg_hba.conf" <<EOF
# written by scripts/servers/start-timescaledb.sh
local   all   all                 peer
host    all   all   127.0.0.1/32  scram-sha-256
host    all   all   ::1/128       scram-sha-256
host    all   all   0.0.0.0/0     scram-sha-256
EOF
    chown postgres:postgres "$DATA/iotbench.conf" "$DATA/pg_hba.conf"
    grep -qxF "include 'iotbench.conf'" "$DATA/postgresql.conf" || echo "include 'iotbench.conf'" >>"$DATA/postgresql.conf"
}
conf_sum() { { cat "$DATA/iotbench.conf" "$DATA/pg_hba.conf" 2>/dev/null; echo "$BUILT_FROM"; } | md5sum; }

if [[ ! -f "$DATA/PG_VERSION" ]]; then
    log "initdb $DATA"
    rm -rf "$DATA"
    install -d -o postgres -g postgres -m 700 "$DATA"
    chown postgres:postgres "$STATE_DIR"   # unix socket and lock file
    as_postgres "$BIN/initdb" -D "$DATA" -U postgres --auth-local=peer --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 \
        >"$STATE_DIR/initdb.log" 2>&1 </dev/null 8>&- || { SERVER_LOG="$STATE_DIR/initdb.log"; die "initdb failed"; }
fi
before=$(cat "$STATE_DIR/started-with" 2>/dev/null || true)
write_config
after=$(conf_sum)

# --- start (or restart when the configuration or the build changed) ------------------------------
if pid_alive "$PIDFILE" && [[ "$before" != "$after" ]]; then
    log "configuration or build changed: restarting"
    stop_pidfile "$PIDFILE" "TimescaleDB"
fi
if pid_alive "$PIDFILE"; then
    log "TimescaleDB already running (pid $(cat "$PIDFILE")): reusing it"
    WAIT_PID=$(cat "$PIDFILE")
else
    port_open 127.0.0.1 "$TIMESCALEDB_PORT" && die "port $TIMESCALEDB_PORT is taken by something that is not this TimescaleDB"
    rm -f "$DATA/postmaster.pid"   # left by a server that was killed (the port is free)
    log "starting PostgreSQL with TimescaleDB on port $TIMESCALEDB_PORT (log: $SERVER_LOG)"
    start_bg "$SERVER_LOG" "$PIDFILE" setpriv --reuid=postgres --regid=postgres --init-groups "$BIN/postgres" -D "$DATA"
    echo "$after" >"$STATE_DIR/started-with"
fi
wait_until "$IOTBENCH_TIMEOUT" "local socket login" peer_psql -tAc 'select 1'

# --- password (psql variable, so any characters are safe) and the extension -----------------------
printf '%s\n' "ALTER USER postgres PASSWORD :'pw';" | peer_psql -v pw="$PGPASSWORD" >/dev/null \
    || die "could not set the password of user postgres"
peer_psql -c 'CREATE EXTENSION IF NOT EXISTS timescaledb' >/dev/null 2>&1 || die "CREATE EXTENSION timescaledb failed"

# --- verify over TCP with the password ------------------------------------------------------------
tcp() { "$BIN/psql" "host=$1 port=$TIMESCALEDB_PORT user=postgres dbname=postgres connect_timeout=5" -X -tA "${@:2}"; }
tcp_login() { tcp 127.0.0.1 -c 'select 1' | grep -qx 1; }
wait_until "$IOTBENCH_TIMEOUT" "psql login over TCP 127.0.0.1:$TIMESCALEDB_PORT" tcp_login
extversion=$(tcp 127.0.0.1 -c "select extversion from pg_extension where extname = 'timescaledb'")
[[ "$extversion" == "$TIMESCALEDB_VERSION" ]] || die "extension timescaledb is '$extversion', expected $TIMESCALEDB_VERSION"
license=$(tcp 127.0.0.1 -c 'show timescaledb.license')
telemetry=$(tcp 127.0.0.1 -c 'show timescaledb.telemetry_level')
[[ "$telemetry" == off ]] || die "timescaledb.telemetry_level is '$telemetry', expected off"
ext_ip=$(first_non_loopback_ipv4 || true)
if [[ -n "$ext_ip" ]]; then
    tcp "$ext_ip" -c 'select 1' >/dev/null 2>&1 || die "TimescaleDB does not accept password logins on $ext_ip:$TIMESCALEDB_PORT"
fi
version=$(tcp 127.0.0.1 -c 'show server_version')
log "ready: PostgreSQL $version with TimescaleDB $extversion (license $license) on 127.0.0.1:$TIMESCALEDB_PORT${ext_ip:+ and $ext_ip:$TIMESCALEDB_PORT} (user postgres) in $(elapsed)s"
