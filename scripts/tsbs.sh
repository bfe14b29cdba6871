#!/usr/bin/env bash
# TSBS's tools (tsbs_generate_data and the rest), for the tests that compare the tool's TSBS data with
# TSBS's own generator (tests/unit/test_tsbs_generator.py, test_tsbs_iot.py: they skip without it).
# Built once from the vendored source beside the repository (shared/vendor/tsbs/build.sh: `go build`
# with modules from the Go module proxy), cached under /var/cache; prints the bin folder on its last line.
# Cold: about 1-2 minutes on 2 cores (the module downloads included); warm: a look at two files.
#
#   scripts/tsbs.sh
#
# Env: IOTBENCH_SHARED (the shared folder, default: beside the repository), TSBS_CACHE (default
#      /var/cache/tsbs-37fced7, build.sh's own default; the Go modules go under it too).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
shared=${IOTBENCH_SHARED:-$(dirname "$repo")/shared}
cache=${TSBS_CACHE:-/var/cache/tsbs-37fced7}
build="$shared/vendor/tsbs/build.sh"
die() { echo "scripts/tsbs.sh: $*" >&2; exit 1; }
built() { [[ -x "$cache/bin/tsbs_generate_data" && -x "$cache/bin/tsbs_run_queries_clickhouse" ]]; }   # build.sh's last two

if built; then
    echo "$cache/bin"
    exit 0
fi
[[ -f "$build" ]] || die "no TSBS source at $shared/vendor/tsbs (build.sh missing); set IOTBENCH_SHARED"
command -v go >/dev/null || die "go not found on PATH (TSBS is built with go build, its modules from the Go module proxy)"
mkdir -p "$(dirname "$cache")"
# One build at a time (build.sh starts from an empty source folder): a second caller waits, then finds it built.
exec 9>"$cache.lock"
flock -w 1800 9 || die "another build of TSBS still holds $cache.lock"
if ! built; then
    echo "scripts/tsbs.sh: building TSBS into $cache with $(go version | cut -d' ' -f3)" >&2
    bash "$build" "$cache" >/dev/null || die "$build $cache failed (its output is above)"
    built || die "$build $cache ended without $cache/bin/tsbs_generate_data"
fi
echo "$cache/bin"
