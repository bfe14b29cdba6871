#!/usr/bin/env bash
# Debian's Chromium for the tests that open the HTML reports in a real headless browser.
# Installed once (apt, under the servers' apt lock: other scripts may run apt at the same time);
# prints the browser's path on its last line.
#
#   scripts/install-chromium.sh
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SERVER_NAME=chromium
# shellcheck source=servers/lib.sh
source "$repo/scripts/servers/lib.sh"

apt_install chromium
browser=$(command -v chromium || true)
[[ -x "$browser" ]] || die "the chromium package is installed but no chromium is on PATH"
echo "$browser"
