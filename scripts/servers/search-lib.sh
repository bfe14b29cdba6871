# shellcheck shell=bash
# Shared by start-elasticsearch.sh and start-opensearch.sh: fetch the "integ-test-zip" distribution
# from Maven Central (cached), install a copy in the state dir owned by a non-root user, start it as
# a single node on 127.0.0.1 with security off and a 512 MB heap, and wait for /_cluster/health.
#
# Note: the integ-test zips carry only the core modules (aggregations, bulk, search work; painless,
# ingest, reindex do not). On the Elasticsearch 8 zip `GET /` answers 405: use /_cluster/health.

# start_search FLAVOR VERSION HTTP_PORT    (FLAVOR = elasticsearch | opensearch)
# Transport port = HTTP_PORT + 100. Env: SEARCH_HEAP (512m).
start_search() {
    local flavor=$1 version=$2 port=$3
    local tport=$(( port + 100 )) heap="${SEARCH_HEAP:-512m}" group prefix
    case "$flavor" in
        elasticsearch) group=org.elasticsearch.distribution.integ-test-zip; prefix=ES ;;
        opensearch)    group=org.opensearch.distribution.integ-test-zip; prefix=OPENSEARCH ;;
        *) die "unknown flavor $flavor" ;;
    esac
    [[ "$port" =~ ^[0-9]+$ ]] || die "bad port '$port'"
    local dist="$IOTBENCH_CACHE/$flavor-$version"          # pristine unzipped distribution
    local state="$IOTBENCH_STATE/$flavor-$port"
    local home="$state/home" pidfile="$state/$flavor.pid"
    local url="http://127.0.0.1:$port" cluster="iotbench-$flavor-$port"
    SERVER_LOG="$state/$flavor.log"
    mkdir -p "$state"
    server_lock "$flavor-$port"

    health() { curl -fsS -m 10 "$url/_cluster/health?wait_for_status=yellow&timeout=5s" 2>/dev/null; }
    node_version() {
        curl -fsS -m 10 "$url/_nodes/_local?filter_path=nodes.*.version" 2>/dev/null \
            | grep -oE '"version" *: *"[^"]+"' | head -n1 | sed -E 's/.*"([^"]+)"$/\1/'
    }

    # shellcheck disable=SC2317  # called through with_lock
    _fetch_dist() {
        [[ -f "$dist/.complete" ]] && return 0
        local zip tmp
        zip=$(mvn_get "$group:$flavor:$version:zip")
        log "unzipping $(basename "$zip") to $dist"
        tmp=$(mktemp -d "$IOTBENCH_CACHE/.unzip.XXXXXX")
        unzip -q "$zip" -d "$tmp" || { rm -rf "$tmp"; die "unzip $zip failed"; }
        rm -rf "$dist"
        mv "$tmp/$flavor-$version" "$dist" || die "unexpected layout in $zip"
        rm -rf "$tmp"
        touch "$dist/.complete"
    }

    if pid_alive "$pidfile"; then
        log "$flavor already running (pid $(cat "$pidfile")): reusing it"
        # shellcheck disable=SC2034  # read by wait_until
        WAIT_PID=$(cat "$pidfile")
    elif health >/dev/null; then
        local v
        v=$(node_version)
        [[ "$v" == "$version" ]] || die "port $port already serves a search cluster of version '${v:-?}', not $flavor $version"
        log "a $flavor $v already answers on $url: reusing it"
    else
        port_open 127.0.0.1 "$port" && die "port $port is taken by something that is not $flavor"
        port_open 127.0.0.1 "$tport" && die "transport port $tport is already taken"
        command -v unzip >/dev/null 2>&1 || apt_install unzip
        command -v curl >/dev/null 2>&1 || apt_install curl
        local java_home
        java_home=$(need_java)
        with_lock "$flavor-$version" _fetch_dist
        ensure_user "$IOTBENCH_USER"

        # (Re)install the copy in the state dir when missing or of another version; data survive.
        if [[ ! -f "$home/.iotbench-version" || "$(cat "$home/.iotbench-version")" != "$version" ]]; then
            log "installing $flavor $version in $home"
            rm -rf "$home" "$state/data"
            cp -a "$dist" "$home"
            echo "$version" >"$home/.iotbench-version"
        fi
        mkdir -p "$state/data" "$state/logs" "$state/tmp"
        local yml="$home/config/$flavor.yml"
        cp "$dist/config/$flavor.yml" "$yml"
        {
            echo ""
            echo "# added by scripts/servers/start-$flavor.sh"
            echo "cluster.name: $cluster"
            echo "node.name: node-$port"
            echo "discovery.type: single-node"
            echo "network.host: 127.0.0.1"
            echo "http.port: $port"
            echo "transport.port: $tport"
            echo "path.data: $state/data"
            echo "path.logs: $state/logs"
            echo "cluster.routing.allocation.disk.threshold_enabled: false"
            echo "action.destructive_requires_name: false"
            # Only the default distribution has the x-pack security module; the setting is unknown elsewhere.
            if [[ "$flavor" == elasticsearch ]] && ls -d "$home"/modules/x-pack-security* >/dev/null 2>&1; then
                echo "xpack.security.enabled: false"
            fi
        } >>"$yml"
        chown -R "$IOTBENCH_USER:" "$state"
        chmod 755 "$IOTBENCH_STATE"

        : >"$SERVER_LOG"; chown "$IOTBENCH_USER:" "$SERVER_LOG"
        log "starting $flavor $version on $url (transport $tport, heap $heap, user $IOTBENCH_USER, log: $SERVER_LOG)"
        start_bg "$SERVER_LOG" "$pidfile" setpriv --reuid="$IOTBENCH_USER" --regid="$(id -g "$IOTBENCH_USER")" --init-groups \
            env HOME="$state" "${prefix}_JAVA_HOME=$java_home" JAVA_HOME="$java_home" \
                "${prefix}_JAVA_OPTS=-Xms$heap -Xmx$heap" "${prefix}_TMPDIR=$state/tmp" \
                "$home/bin/$flavor"
    fi

    wait_until "$IOTBENCH_TIMEOUT" "GET $url/_cluster/health (yellow or green)" health
    local v
    v=$(node_version)
    [[ "$v" == "$version" ]] || die "$url runs version '${v:-?}', expected $version"
    log "ready: $flavor $v on $url, cluster $(health | grep -oE '"cluster_name":"[^"]*"' | cut -d'"' -f4), status $(health | grep -oE '"status":"[^"]*"' | cut -d'"' -f4) in $(elapsed)s"
}
