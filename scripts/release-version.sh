#!/usr/bin/env bash
# The version of a release: iotdb_bench/simulator/__init__.py's __version__, the one source of the version.
#
#   scripts/release-version.sh [TAG]
#
# Prints the version. With TAG (the pushed git tag), exits 1 unless TAG is "v" + the version.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
version=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$repo/iotdb_bench/simulator/__init__.py")
if [[ ! "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
    echo "error: iotdb_bench/simulator/__init__.py must set __version__ = \"X.Y.Z\" (found '${version}')" >&2
    exit 1
fi
if [[ $# -gt 0 && "$1" != "v$version" ]]; then
    echo "error: tag '$1' is not the version in iotdb_bench/simulator/__init__.py: tag v$version, or change __version__ (and Chart.yaml, config.yaml, CHANGELOG.md)" >&2
    exit 1
fi
echo "$version"
