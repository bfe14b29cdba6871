#!/usr/bin/env bash
# Build a PostgreSQL image into the local single-node Kubernetes (../shared/k8s-local) from Debian's
# packages, without a Docker engine or an image pull: the cached Debian bookworm root filesystem,
# PostgreSQL 15 installed into it with apt-get (in a chroot), and an entrypoint that makes a fresh
# cluster in /var/lib/postgresql/data (an emptyDir) and runs the server in the foreground, listening
# on every address, password authentication with $POSTGRES_PASSWORD. Used by the tests that run a
# database inside the cluster (resource sampling of database pods).
#
#   scripts/k8s-postgres-image.sh [NAME:TAG]      (default local.test/iotbench-postgres:15)
#
# The root filesystem with PostgreSQL is cached in $IOTBENCH_CACHE/k8s-postgres-rootfs (rebuilt when
# this script changes); prints the image name on its last line.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
K8S_LOCAL=${K8S_LOCAL:-$(dirname "$repo")/shared/k8s-local}
IOTBENCH_CACHE=${IOTBENCH_CACHE:-/var/cache/iotbench}
image=${1:-local.test/iotbench-postgres:15}
t0=$(date +%s)
log() { printf '[k8s-postgres-image +%ss] %s\n' "$(( $(date +%s) - t0 ))" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[[ -x "$K8S_LOCAL/load-image" ]] || die "no k8s-local scripts in $K8S_LOCAL (set K8S_LOCAL)"
key=$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-16)
cached="$IOTBENCH_CACHE/k8s-postgres-rootfs-$key"
mkdir -p "$IOTBENCH_CACHE"
exec 9>"$IOTBENCH_CACHE/k8s-postgres-rootfs.lock"
flock 9
if [[ ! -f "$cached/.complete" ]]; then
    base=$("$K8S_LOCAL/load-image" --python-base)
    partial="$cached.partial"
    rm -rf "$partial"
    cp -a "$base/." "$partial"
    mounted=""
    cleanup() { [[ -n "$mounted" ]] && umount "$partial/proc" 2>/dev/null; true; }
    trap cleanup EXIT
    mount -t proc proc "$partial/proc" && mounted=1
    cp /etc/resolv.conf "$partial/etc/resolv.conf"
    # No service starts inside the chroot, and no default cluster: the entrypoint makes its own.
    printf '#!/bin/sh\nexit 101\n' > "$partial/usr/sbin/policy-rc.d"
    chmod +x "$partial/usr/sbin/policy-rc.d"
    mkdir -p "$partial/etc/postgresql-common"
    echo "create_main_cluster = false" > "$partial/etc/postgresql-common/createcluster.conf"
    log "installing postgresql-15 from Debian's packages into the root filesystem"
    chroot "$partial" /usr/bin/env DEBIAN_FRONTEND=noninteractive apt-get -qq update >&2 || die "apt-get update failed in the chroot"
    chroot "$partial" /usr/bin/env DEBIAN_FRONTEND=noninteractive apt-get -qq install -y --no-install-recommends postgresql-15 >&2 \
        || die "apt-get install postgresql-15 failed in the chroot"
    chroot "$partial" apt-get clean
    rm -rf "$partial/var/lib/apt/lists/"* "$partial/usr/sbin/policy-rc.d"
    umount "$partial/proc" && mounted=""
    cat > "$partial/usr/local/bin/postgres-entrypoint" <<'EOF'
#!/bin/sh
# A fresh cluster in $PGDATA, every address, password authentication, the server in the foreground.
set -eu
: "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}"
PGDATA=${PGDATA:-/var/lib/postgresql/data}
bin=/usr/lib/postgresql/15/bin
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    printf '%s\n' "$POSTGRES_PASSWORD" > /tmp/pwfile
    "$bin/initdb" -D "$PGDATA" -U postgres --pwfile=/tmp/pwfile --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    rm -f /tmp/pwfile
    echo "host all all 0.0.0.0/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
fi
exec "$bin/postgres" -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories=/tmp
EOF
    chmod 755 "$partial/usr/local/bin/postgres-entrypoint"
    touch "$partial/.complete"
    mv "$partial" "$cached"
    trap - EXIT
    find "$IOTBENCH_CACHE" -maxdepth 1 -name 'k8s-postgres-rootfs-*' ! -name "k8s-postgres-rootfs-$key" -exec rm -rf {} +
else
    log "reusing $cached"
fi
uid=$(chroot "$cached" id -u postgres)
flock -u 9
log "loading $image"
"$K8S_LOCAL/load-image" "$cached" "$image" --cmd '["/usr/local/bin/postgres-entrypoint"]' --user "$uid" \
    --env PGDATA=/var/lib/postgresql/data >&2
log "image $image ready in the local cluster"
echo "$image"
