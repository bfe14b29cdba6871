#!/usr/bin/env bash
# Start Debian's MariaDB server (installed with apt if missing) with its own datadir under the state
# dir, on 127.0.0.1:3306, with database "bench" and user "bench" (all privileges on bench.*), and
# check a real login over TCP.
#
# Env: MYSQL_PASSWORD (default bench), MYSQL_USER (bench), MYSQL_DATABASE (bench), MYSQL_PORT (3306),
#      MYSQL_MAX_CONNECTIONS (300); IOTBENCH_STATE, IOTBENCH_TIMEOUT (see lib.sh).
set -euo pipefail
SERVER_NAME=mariadb
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

MYSQL_PASSWORD="${MYSQL_PASSWORD:-bench}"
MYSQL_USER="${MYSQL_USER:-bench}"
MYSQL_DATABASE="${MYSQL_DATABASE:-bench}"
MYSQL_PORT="${MYSQL_PORT:-3306}"
MYSQL_MAX_CONNECTIONS="${MYSQL_MAX_CONNECTIONS:-300}"

STATE_DIR="$IOTBENCH_STATE/mariadb-$MYSQL_PORT"
DATADIR="$STATE_DIR/data"
SOCKET="$STATE_DIR/mariadb.sock"
PIDFILE="$STATE_DIR/mariadbd.pid"
SERVER_LOG="$STATE_DIR/mariadbd.log"
mkdir -p "$STATE_DIR"
server_lock "mariadb-$MYSQL_PORT"

if ! command -v mariadbd >/dev/null 2>&1 && [[ ! -x /usr/sbin/mariadbd ]]; then
    apt_install mariadb-server mariadb-client
    # Where apt's postinst starts the system service (no policy-rc.d), stop it: it would hold port 3306.
    if [[ -x /etc/init.d/mariadb ]] && pgrep -x mariadbd >/dev/null 2>&1; then
        log "stopping the system mariadb service that apt started"
        /etc/init.d/mariadb stop >&2 || true
    fi
fi
command -v mariadb >/dev/null 2>&1 || apt_install mariadb-client
MARIADBD=$(command -v mariadbd || echo /usr/sbin/mariadbd)

# Login as the bench user over TCP (the real client check).
bench_login() {
    MYSQL_PWD="$MYSQL_PASSWORD" mariadb --protocol=TCP -h 127.0.0.1 -P "$MYSQL_PORT" -u "$MYSQL_USER" \
        --connect-timeout=5 -N -B -e 'SELECT 1' "$MYSQL_DATABASE" 2>/dev/null | grep -qx 1
}
# Root over our unix socket (root has no password in our own datadir).
root_sql() { mariadb --protocol=SOCKET -S "$SOCKET" -u root -N -B "$@"; }
root_ping() { root_sql -e 'SELECT 1' | grep -qx 1; }

if pid_alive "$PIDFILE"; then
    log "mariadbd already running (pid $(cat "$PIDFILE")): reusing it"
    WAIT_PID=$(cat "$PIDFILE")
elif port_open 127.0.0.1 "$MYSQL_PORT"; then
    if bench_login; then
        log "a server on 127.0.0.1:$MYSQL_PORT already accepts user $MYSQL_USER: reusing it"
        log "ready: $(MYSQL_PWD="$MYSQL_PASSWORD" mariadb --protocol=TCP -h 127.0.0.1 -P "$MYSQL_PORT" -u "$MYSQL_USER" -N -B -e 'SELECT VERSION()') on 127.0.0.1:$MYSQL_PORT in $(elapsed)s"
        exit 0
    fi
    die "port $MYSQL_PORT is taken by a server that did not start from this script and refuses user $MYSQL_USER (stop it, e.g. 'service mariadb stop')"
else
    if [[ ! -d "$DATADIR/mysql" ]]; then
        log "initialising datadir $DATADIR"
        rm -rf "$DATADIR"; mkdir -p "$DATADIR"
        mariadb-install-db --no-defaults --user=root --datadir="$DATADIR" \
            --auth-root-authentication-method=normal --skip-test-db >"$STATE_DIR/install-db.log" 2>&1 \
            || { SERVER_LOG="$STATE_DIR/install-db.log"; die "mariadb-install-db failed"; }
    fi
    log "starting mariadbd on 127.0.0.1:$MYSQL_PORT (log: $SERVER_LOG)"
    start_bg "$SERVER_LOG" "$PIDFILE" "$MARIADBD" --no-defaults --user=root \
        --datadir="$DATADIR" --socket="$SOCKET" --pid-file="$STATE_DIR/mariadbd.server.pid" \
        --port="$MYSQL_PORT" --bind-address=127.0.0.1 --skip-log-bin --skip-name-resolve \
        --log-error="$SERVER_LOG" --max-connections="$MYSQL_MAX_CONNECTIONS" \
        --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci \
        --innodb-buffer-pool-size=256M --max-allowed-packet=256M
fi

wait_until "$IOTBENCH_TIMEOUT" "root login on $SOCKET" root_ping

# SQL string literal: double the quotes and backslashes.
sql_str() { local s=${1//\\/\\\\}; s=${s//\'/\'\'}; printf "'%s'" "$s"; }
PW=$(sql_str "$MYSQL_PASSWORD")
root_sql <<EOF || die "could not create database $MYSQL_DATABASE / user $MYSQL_USER"
CREATE DATABASE IF NOT EXISTS \`$MYSQL_DATABASE\`;
CREATE USER IF NOT EXISTS '$MYSQL_USER'@'127.0.0.1' IDENTIFIED BY $PW;
CREATE USER IF NOT EXISTS '$MYSQL_USER'@'localhost' IDENTIFIED BY $PW;
ALTER USER '$MYSQL_USER'@'127.0.0.1' IDENTIFIED BY $PW;
ALTER USER '$MYSQL_USER'@'localhost' IDENTIFIED BY $PW;
GRANT ALL PRIVILEGES ON \`$MYSQL_DATABASE\`.* TO '$MYSQL_USER'@'127.0.0.1';
GRANT ALL PRIVILEGES ON \`$MYSQL_DATABASE\`.* TO '$MYSQL_USER'@'localhost';
FLUSH PRIVILEGES;
EOF

wait_until "$IOTBENCH_TIMEOUT" "login as $MYSQL_USER over TCP 127.0.0.1:$MYSQL_PORT" bench_login
version=$(root_sql -e 'SELECT VERSION()')
log "ready: MariaDB $version on 127.0.0.1:$MYSQL_PORT (user $MYSQL_USER, db $MYSQL_DATABASE, socket $SOCKET) in $(elapsed)s"
