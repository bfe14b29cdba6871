#!/usr/bin/env bash
# Install what the PyPI package `berkeleydb` (Python bindings, built from its sdist: there are no
# wheels) needs to build and run: Debian's Berkeley DB 5.3 headers and library (libdb5.3-dev) and a C
# compiler. BerkeleyDB is embedded: there is no server to start.
#
# Must run BEFORE `pip install` of a requirements file that lists berkeleydb (scripts/test.sh).
# berkeleydb's setup finds /usr/include/db.h by itself; exporting BERKELEYDB_DIR=/usr (as
# scripts/test.sh does) pins that choice. Berkeley DB >= 6 would need
# YES_I_HAVE_THE_RIGHT_TO_USE_THIS_BERKELEY_DB_VERSION (AGPL); 5.3 does not.
#
# Env: IOTBENCH_STATE (see lib.sh; apt's output goes to $IOTBENCH_STATE/apt.log).
set -euo pipefail
SERVER_NAME=berkeleydb
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

apt_install libdb5.3-dev gcc
command -v gcc >/dev/null 2>&1 || die "gcc is not on PATH although the package is installed"

header=/usr/include/db.h
[[ -f "$header" ]] || die "$header is missing although libdb5.3-dev is installed"
major=$(awk '$2 == "DB_VERSION_MAJOR" {print $3}' "$header")
minor=$(awk '$2 == "DB_VERSION_MINOR" {print $3}' "$header")
[[ "$major.$minor" == 5.3 ]] || die "$header is Berkeley DB $major.$minor, expected 5.3"
libdir=$(dirname "$(readlink -f "$(gcc -print-file-name=libdb.so)")")
[[ -e "$libdir/libdb.so" ]] || die "the linker does not find libdb.so (gcc -print-file-name=libdb.so)"

# Python's own headers: a Python built without them cannot build any C extension.
if command -v python3 >/dev/null 2>&1; then
    pyinc=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
    if [[ ! -f "$pyinc/Python.h" && "$(readlink -f "$(command -v python3)")" == /usr/bin/python3* ]]; then
        apt_install python3-dev
    fi
    [[ -f "$pyinc/Python.h" ]] || die "no $pyinc/Python.h: this python3 cannot build C extensions such as berkeleydb"
fi
log "ready: Berkeley DB $major.$minor headers in /usr/include, library in $libdir (pip: BERKELEYDB_DIR=/usr) in $(elapsed)s"
