#!/usr/bin/env bash
# Usage: start-elasticsearch.sh [VERSION [HTTP_PORT]]     (default 8.19.4 9200; e.g. 7.17.29 9202)
# Start Elasticsearch (integ-test zip from Maven Central, cached) as a single node on 127.0.0.1,
# security off, 512 MB heap, run as a non-root user; transport port = HTTP_PORT + 100.
# Env: SEARCH_HEAP (512m), IOTBENCH_USER (iotbench), IOTBENCH_CACHE, IOTBENCH_STATE, IOTBENCH_TIMEOUT.
set -euo pipefail
SERVER_NAME=elasticsearch
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=search-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/search-lib.sh"
start_search elasticsearch "${1:-${ES_VERSION:-8.19.4}}" "${2:-${ES_PORT:-9200}}"
