#!/usr/bin/env bash
# Build the simulator image into the local single-node Kubernetes (../shared/k8s-local), without a
# Docker engine: the cached Debian python3 root filesystem + the simulator's dependencies + iotdb_bench/simulator/,
# loaded straight into the cluster's containerd. Same contract as iotdb_bench/simulator/Dockerfile: entrypoint
# `python3 -m iotdb_bench.simulator`, the role as argument, user 10001, nothing written at run time.
#
#   scripts/k8s-image.sh [NAME:TAG]
#
# NAME:TAG defaults to $IOTBENCH_IMAGE, else ghcr.io/iotdb-bench/simulator:<simulator version> (the
# image config.yaml names, so the default config finds it with pull policy IfNotPresent).
# Env: K8S_LOCAL (folder of the k8s-local scripts, default <repo>/../shared/k8s-local),
#      IOTBENCH_CACHE (default /var/cache/iotbench): the dependencies are installed once per
#      content of iotdb_bench/simulator/requirements.txt and reused from $IOTBENCH_CACHE/k8s-image/.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
K8S_LOCAL=${K8S_LOCAL:-$(dirname "$repo")/shared/k8s-local}
IOTBENCH_CACHE=${IOTBENCH_CACHE:-/var/cache/iotbench}
PYTHON=${PYTHON:-python3}
t0=$(date +%s)
log() { printf '[k8s-image +%ss] %s\n' "$(( $(date +%s) - t0 ))" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[[ -x "$K8S_LOCAL/load-image" ]] || die "no k8s-local scripts in $K8S_LOCAL (set K8S_LOCAL)"
version=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$repo/iotdb_bench/simulator/__init__.py")
[[ -n "$version" ]] || die "cannot read __version__ from iotdb_bench/simulator/__init__.py"
image=${1:-${IOTBENCH_IMAGE:-ghcr.io/iotdb-bench/simulator:$version}}
[[ "$image" == *:* && "$image" != *:latest ]] || die "image '$image' needs a tag other than latest"

base=$("$K8S_LOCAL/load-image" --python-base)
[[ -x "$base/usr/bin/python3" ]] || die "no python3 in the base root filesystem $base"
# The wheels must match the image's interpreter, not necessarily the one running this script.
py_tag=$(chroot "$base" /usr/bin/python3 -c 'import sys; print(f"{sys.version_info[0]}{sys.version_info[1]}")')

# --- dependencies: one cached folder per requirements content and interpreter -----------------------
requirements="$repo/iotdb_bench/simulator/requirements.txt"
key=$(cat "$requirements" <(echo "cp$py_tag") | sha256sum | cut -c1-16)
deps_cache="$IOTBENCH_CACHE/k8s-image/deps-$key"
mkdir -p "$IOTBENCH_CACHE/k8s-image"
exec 9>"$IOTBENCH_CACHE/k8s-image/lock"
flock 9
if [[ ! -d "$deps_cache" ]]; then
    log "installing the simulator's dependencies for cp$py_tag into $deps_cache"
    partial="$deps_cache.partial"
    rm -rf "$partial"
    # The interpreter itself, not a version manager's shim: pyenv's runs `pyenv rehash` after any
    # `-m pip install`, which waits 60 s on a lock file a killed pip left behind and then fails the build.
    interpreter=$("$PYTHON" -c 'import sys; print(sys.executable)') || die "no $PYTHON"
    "$interpreter" -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-warn-script-location \
        --target "$partial" --only-binary=:all: --implementation cp --python-version "$py_tag" --abi "cp$py_tag" \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        --platform manylinux1_x86_64 -r "$requirements" \
        || die "pip could not install $requirements for cp$py_tag"
    mv "$partial" "$deps_cache"
    # Older dependency sets (earlier requirements) are not needed any more.
    find "$IOTBENCH_CACHE/k8s-image" -mindepth 1 -maxdepth 1 -name 'deps-*' ! -name "deps-$key" -exec rm -rf {} +
else
    log "reusing the dependencies in $deps_cache"
fi
flock -u 9

# --- root filesystem ------------------------------------------------------------------------------
root=$(mktemp -d /tmp/iotbench-image.XXXXXX)
trap 'rm -rf "$root"' EXIT
cp -a "$base/." "$root"
mkdir -p "$root/opt/app"
cp -a "$deps_cache" "$root/opt/app/deps"
tar -C "$repo" --exclude=__pycache__ --exclude='*.pyc' --exclude=Dockerfile --exclude=.dockerignore -cf - iotdb_bench/__init__.py iotdb_bench/simulator \
    | tar -C "$root/opt/app" -xf -
# The root filesystem is read-only in the pods: compile the bytecode now, with the image's python.
chroot "$root" /usr/bin/python3 -m compileall -q -j 0 /opt/app >/dev/null || die "compileall failed"
chmod -R a+rX "$root/opt/app"

# The commit the image is built from, recorded with every run's figures (the image has no .git).
commit=$(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)
if [[ "$commit" != unknown ]] && [[ -n "$(git -C "$repo" status --porcelain --untracked-files=no 2>/dev/null)" ]]; then
    commit="$commit-modified"
fi

log "loading $image"
"$K8S_LOCAL/load-image" "$root" "$image" \
    --entrypoint '["python3", "-m", "iotdb_bench.simulator"]' --workdir /opt/app --user 10001:10001 \
    --env PYTHONPATH=/opt/app/deps:/opt/app --env PYTHONUNBUFFERED=1 --env PYTHONDONTWRITEBYTECODE=1 --env HOME=/tmp --env "IOTBENCH_COMMIT=$commit"
log "image $image ready in the local cluster"
echo "$image"
