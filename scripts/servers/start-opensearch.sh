#!/usr/bin/env bash
# Usage: start-opensearch.sh [VERSION [HTTP_PORT]]        (default 2.19.1 9201)
# Start OpenSearch (integ-test zip from Maven Central, cached) as a single node on 127.0.0.1,
# no security plugin, 512 MB heap, run as a non-root user; transport port = HTTP_PORT + 100.
# Env: SEARCH_HEAP (512m), IOTBENCH_USER (iotbench), IOTBENCH_CACHE, IOTBENCH_STATE, IOTBENCH_TIMEOUT.
set -euo pipefail
SERVER_NAME=opensearch
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=search-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/search-lib.sh"
start_search opensearch "${1:-${OPENSEARCH_VERSION:-2.19.1}}" "${2:-${OPENSEARCH_PORT:-9201}}"
