#!/usr/bin/env bash
# Start Debian's PostgreSQL cluster (default 15/main) on port 5432, reachable from any IPv4 address
# with a password (so pods of a local Kubernetes cluster can use it), and check a real login over TCP.
#
# Env: PGPASSWORD (default postgres) password of user postgres; PG_VERSION (15); PG_CLUSTER (main);
#      PG_MAX_CONNECTIONS (200); IOTBENCH_STATE, IOTBENCH_TIMEOUT (see lib.sh).
set -euo pipefail
SERVER_NAME=postgres
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PGPASSWORD="${PGPASSWORD:-postgres}"
PG_VERSION="${PG_VERSION:-15}"
PG_CLUSTER="${PG_CLUSTER:-main}"
PG_MAX_CONNECTIONS="${PG_MAX_CONNECTIONS:-200}"
export PGPASSWORD

STATE_DIR="$IOTBENCH_STATE/postgres"
mkdir -p "$STATE_DIR"
server_lock "postgres-$PG_VERSION-$PG_CLUSTER"
ETC="/etc/postgresql/$PG_VERSION/$PG_CLUSTER"
SYS_LOG="/var/log/postgresql/postgresql-$PG_VERSION-$PG_CLUSTER.log"
SERVER_LOG="$STATE_DIR/postgresql-$PG_VERSION-$PG_CLUSTER.log"
ln -sfn "$SYS_LOG" "$SERVER_LOG"   # the cluster logs to /var/log/postgresql; link it into the state dir

# --- install -------------------------------------------------------------------------------------
if ! command -v pg_ctlcluster >/dev/null 2>&1 || [[ ! -x "/usr/lib/postgresql/$PG_VERSION/bin/postgres" ]]; then
    apt_install postgresql postgresql-client
fi
[[ -x "/usr/lib/postgresql/$PG_VERSION/bin/postgres" ]] \
    || die "PostgreSQL $PG_VERSION is not installed (apt installed: $(ls /usr/lib/postgresql 2>/dev/null | tr '\n' ' '))"
if [[ ! -f "$ETC/postgresql.conf" ]]; then
    log "creating cluster $PG_VERSION/$PG_CLUSTER"
    pg_createcluster "$PG_VERSION" "$PG_CLUSTER" >"$STATE_DIR/createcluster.log" 2>&1 \
        || { SERVER_LOG="$STATE_DIR/createcluster.log"; die "pg_createcluster failed"; }
fi

# --- configure -----------------------------------------------------------------------------------
conf_sum() { cat "$ETC/conf.d/iotbench.conf" "$ETC/pg_hba.conf" 2>/dev/null | md5sum || true; }
before=$(conf_sum)
mkdir -p "$ETC/conf.d"
grep -qE "^\s*include_dir\s*=\s*'conf.d'" "$ETC/postgresql.conf" \
    || echo "include_dir = 'conf.d'" >>"$ETC/postgresql.conf"
cat >"$ETC/conf.d/iotbench.conf" <<EOF
# written by scripts/servers/start-postgres.sh
listen_addresses = '*'
max_connections = $PG_MAX_CONNECTIONS
EOF
chown postgres:postgres "$ETC/conf.d/iotbench.conf"
HBA_LINE="host    all             all             0.0.0.0/0               md5    # iotbench"
grep -qF "$HBA_LINE" "$ETC/pg_hba.conf" || echo "$HBA_LINE" >>"$ETC/pg_hba.conf"
after=$(conf_sum)

# --- start (or restart if the config changed) ----------------------------------------------------
cluster_online() { pg_lsclusters -h 2>/dev/null | awk -v v="$PG_VERSION" -v c="$PG_CLUSTER" '$1==v && $2==c {print $4}' | grep -q online; }
PG_PORT=$(pg_lsclusters -h | awk -v v="$PG_VERSION" -v c="$PG_CLUSTER" '$1==v && $2==c {print $3}')
PG_PORT=${PG_PORT:-5432}

if cluster_online; then
    if [[ "$before" != "$after" ]]; then
        log "config changed: restarting cluster $PG_VERSION/$PG_CLUSTER"
        pg_ctlcluster --skip-systemctl-redirect "$PG_VERSION" "$PG_CLUSTER" restart >&2 8>&- || die "restart failed"
    else
        log "cluster $PG_VERSION/$PG_CLUSTER already running: reusing it"
    fi
else
    if port_open 127.0.0.1 "$PG_PORT"; then
        die "port $PG_PORT is taken by something that is not cluster $PG_VERSION/$PG_CLUSTER"
    fi
    log "starting cluster $PG_VERSION/$PG_CLUSTER"
    pg_ctlcluster --skip-systemctl-redirect "$PG_VERSION" "$PG_CLUSTER" start >&2 8>&- || die "pg_ctlcluster start failed"
fi

peer_psql() { runuser -u postgres -- psql -p "$PG_PORT" -X -q -v ON_ERROR_STOP=1 "$@"; }
wait_until "$IOTBENCH_TIMEOUT" "local socket login" peer_psql -tAc 'select 1'

# --- password (psql variable, so any characters are safe) ---------------------------------------
printf '%s\n' "ALTER USER postgres PASSWORD :'pw';" | peer_psql -v pw="$PGPASSWORD" >/dev/null \
    || die "could not set the password of user postgres"

# --- verify over TCP with the password ------------------------------------------------------------
tcp_login() { psql "host=127.0.0.1 port=$PG_PORT user=postgres dbname=postgres connect_timeout=5" -X -tAc 'select 1' | grep -qx 1; }
wait_until "$IOTBENCH_TIMEOUT" "psql login over TCP 127.0.0.1:$PG_PORT" tcp_login
maxc=$(psql "host=127.0.0.1 port=$PG_PORT user=postgres dbname=postgres" -X -tAc 'show max_connections')
(( maxc >= PG_MAX_CONNECTIONS )) || die "max_connections is $maxc, expected >= $PG_MAX_CONNECTIONS"
ext_ip=$(first_non_loopback_ipv4 || true)
if [[ -n "$ext_ip" ]]; then
    psql "host=$ext_ip port=$PG_PORT user=postgres dbname=postgres connect_timeout=5" -X -tAc 'select 1' >/dev/null 2>&1 \
        || die "PostgreSQL does not accept password logins on $ext_ip:$PG_PORT"
fi
version=$(psql "host=127.0.0.1 port=$PG_PORT user=postgres dbname=postgres" -X -tAc 'show server_version')
log "ready: PostgreSQL $version on 127.0.0.1:$PG_PORT${ext_ip:+ and $ext_ip:$PG_PORT} (user postgres, max_connections $maxc) in $(elapsed)s"
