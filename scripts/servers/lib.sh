# shellcheck shell=bash
# Shared helpers for scripts/servers/start-*.sh. Source it, do not run it.
#
# Environment:
#   IOTBENCH_CACHE   slow downloads/builds (jars, zips, binaries)   default /var/cache/iotbench
#   IOTBENCH_STATE   data dirs, logs, pid files of running servers  default /tmp/iotbench-servers
#   IOTBENCH_TIMEOUT seconds a server may take to become ready       default 180
#   IOTBENCH_USER    non-root user that runs Elasticsearch/OpenSearch default iotbench
#   IOTBENCH_KEEP_ON_FAILURE=1  do not stop a server that failed to become ready
#   IOTBENCH_M2      Maven local repository used by these scripts     default $IOTBENCH_CACHE/m2

IOTBENCH_CACHE="${IOTBENCH_CACHE:-/var/cache/iotbench}"
IOTBENCH_STATE="${IOTBENCH_STATE:-/tmp/iotbench-servers}"
IOTBENCH_TIMEOUT="${IOTBENCH_TIMEOUT:-180}"
IOTBENCH_USER="${IOTBENCH_USER:-iotbench}"
IOTBENCH_M2="${IOTBENCH_M2:-$IOTBENCH_CACHE/m2}"
export IOTBENCH_CACHE IOTBENCH_STATE IOTBENCH_TIMEOUT IOTBENCH_USER IOTBENCH_M2

mkdir -p "$IOTBENCH_CACHE" "$IOTBENCH_STATE"

# Name used in log lines; each script sets SERVER_NAME before sourcing (or after).
SERVER_NAME="${SERVER_NAME:-servers}"
# Log file shown by die(); each script sets it once it knows it.
SERVER_LOG="${SERVER_LOG:-}"
_IOTBENCH_T0=$(date +%s)
# Pid files of the servers this run started (start_bg), stopped again by die().
STARTED_PIDFILES=()

log() {
    printf '[%s %s +%ss] %s\n' "$(date +%H:%M:%S)" "$SERVER_NAME" "$(( $(date +%s) - _IOTBENCH_T0 ))" "$*" >&2
}

# die MESSAGE: print the message and the last 30 lines of $SERVER_LOG, exit 1.
die() {
    log "ERROR: $*"
    if [[ -n "$SERVER_LOG" && -f "$SERVER_LOG" ]]; then
        echo "----- last 30 lines of $SERVER_LOG -----" >&2
        tail -n 30 "$SERVER_LOG" >&2 || true
        echo "-----" >&2
    fi
    # A server this very run started but that never became ready is stopped, so that nothing
    # half-started keeps its ports and memory (IOTBENCH_KEEP_ON_FAILURE=1 keeps it for debugging).
    # Several processes (IoTDB's ConfigNode and DataNode) are stopped newest first.
    if [[ "${IOTBENCH_KEEP_ON_FAILURE:-0}" != 1 ]]; then
        local i
        for (( i = ${#STARTED_PIDFILES[@]} - 1; i >= 0; i-- )); do
            pid_alive "${STARTED_PIDFILES[i]}" && stop_pidfile "${STARTED_PIDFILES[i]}" "the server this run started"
        done
    fi
    exit 1
}

# Any unexpected failing command: say which one (set -e alone exits silently).
# shellcheck disable=SC2154
trap 'rc=$?; die "unexpected failure (exit $rc) at ${BASH_SOURCE[0]##*/}:$LINENO: $BASH_COMMAND"' ERR

elapsed() { echo $(( $(date +%s) - _IOTBENCH_T0 )); }

# wait_until TIMEOUT DESCRIPTION CMD [ARGS...]: run CMD every second until it succeeds.
# Dies after TIMEOUT seconds. If $WAIT_PID is set and that process dies, fails at once.
wait_until() {
    local timeout=$1 desc=$2; shift 2
    local start now
    start=$(date +%s)
    if "$@" >/dev/null 2>&1; then
        log "$desc: ok"
        return 0
    fi
    log "waiting for $desc (up to ${timeout}s)"
    while true; do
        if "$@" >/dev/null 2>&1; then
            log "$desc: ok after $(( $(date +%s) - start ))s"
            return 0
        fi
        if [[ -n "${WAIT_PID:-}" ]] && ! kill -0 "$WAIT_PID" 2>/dev/null; then
            die "server process $WAIT_PID exited while waiting for $desc"
        fi
        now=$(date +%s)
        if (( now - start >= timeout )); then
            die "timed out after ${timeout}s waiting for $desc"
        fi
        sleep 1
    done
}

# port_open HOST PORT: true if something accepts TCP connections there.
port_open() {
    timeout 3 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null
}

# wait_for_port HOST PORT [TIMEOUT]
wait_for_port() {
    wait_until "${3:-$IOTBENCH_TIMEOUT}" "port $1:$2" port_open "$1" "$2"
}

# pid_alive PIDFILE: true if the file names a live process started by these scripts (its command
# line mentions the state dir, so a recycled pid is never mistaken for our server).
pid_alive() {
    local pid
    [[ -f "$1" ]] || return 1
    pid=$(cat "$1" 2>/dev/null) || return 1
    [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$IOTBENCH_STATE"
}

# stop_pidfile PIDFILE [NAME]: TERM the process (and its process group, as start_bg makes it a
# session leader), wait up to 60 s, then KILL.
stop_pidfile() {
    local pidfile=$1 name=${2:-$1} pid
    if ! pid_alive "$pidfile"; then
        rm -f "$pidfile"
        return 0
    fi
    pid=$(cat "$pidfile")
    log "stopping $name (pid $pid)"
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 60); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 1
    done
    if kill -0 "$pid" 2>/dev/null; then
        log "$name did not stop after 60s, killing it"
        kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$pidfile"
}

# start_bg LOGFILE PIDFILE CMD [ARGS...]: start CMD detached (own session), output to LOGFILE.
start_bg() {
    local logfile=$1 pidfile=$2; shift 2
    mkdir -p "$(dirname "$logfile")" "$(dirname "$pidfile")"
    setsid "$@" >>"$logfile" 2>&1 </dev/null 8>&- &
    echo $! >"$pidfile"
    WAIT_PID=$!
    STARTED_PIDFILES+=("$pidfile")
}

# with_lock NAME CMD [ARGS...]: run CMD holding an exclusive lock (parallel runs share the cache).
# Re-entrant: a CMD (or a script it runs) that asks again for a lock this process tree already holds
# runs at once instead of waiting on itself (the lock names held are in IOTBENCH_HELD_LOCKS).
with_lock() {
    local name=$1; shift
    if [[ " ${IOTBENCH_HELD_LOCKS:-} " == *" $name "* ]]; then
        "$@"
        return
    fi
    mkdir -p "$IOTBENCH_CACHE/locks"
    (
        flock -w 1800 9 || { echo "could not lock $name within 1800 s ($IOTBENCH_CACHE/locks/$name.lock)" >&2; exit 1; }
        export IOTBENCH_HELD_LOCKS="${IOTBENCH_HELD_LOCKS:-} $name"
        "$@"
    ) 9>"$IOTBENCH_CACHE/locks/$name.lock"
}

# server_lock NAME: serialise concurrent start scripts for the same server (held until exit on fd 8;
# start_bg closes fd 8 so the server itself never holds the lock).
server_lock() {
    mkdir -p "$IOTBENCH_STATE/locks"
    exec 8>"$IOTBENCH_STATE/locks/$1.lock"
    flock -w "$IOTBENCH_TIMEOUT" 8 || die "another start of $1 still holds $IOTBENCH_STATE/locks/$1.lock"
}

# apt_missing PKG...: print the packages that dpkg does not list as installed.
apt_missing() {
    local p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || echo "$p"
    done
}

# apt_install PKG...: install the Debian packages that are missing. One apt/dpkg at a time: every
# caller takes the lock `apt` (with_lock; start scripts may run in parallel; two apt-get at once
# fail on dpkg's lock), and apt-get itself waits for a foreign holder of dpkg's lock. `apt-get update`
# runs at most once an hour (stamp $IOTBENCH_STATE/apt-updated). Services must not be started by a
# package's postinst (our scripts start their own instance): without /usr/sbin/policy-rc.d, one that
# denies every start is put there for the duration of the install.
apt_install() {
    [[ -n "$(apt_missing "$@")" ]] || return 0
    with_lock apt _apt_install_missing "$@"
}

_apt_install_missing() {
    local missing
    missing=$(apt_missing "$@")   # another script may have installed them while this one waited
    # shellcheck disable=SC2086
    [[ -z "$missing" ]] || _apt_get_install $missing
}

_apt_get_install() {
    local apt_log="$IOTBENCH_STATE/apt.log" stamp="$IOTBENCH_STATE/apt-updated" policy=/usr/sbin/policy-rc.d made_policy=0 rc=0
    export DEBIAN_FRONTEND=noninteractive
    log "apt-get install $*"
    if [[ -z "$(find "$stamp" -mmin -60 2>/dev/null)" ]]; then
        if apt-get update -q -o DPkg::Lock::Timeout=600 >>"$apt_log" 2>&1 8>&- 9>&-; then
            touch "$stamp"
        else
            log "warning: apt-get update failed (see $apt_log)"
        fi
    fi
    if [[ ! -e "$policy" ]]; then
        printf '#!/bin/sh\n# iotbench scripts/servers/lib.sh: no service starts during its apt-get install\nexit 101\n' >"$policy"
        chmod 755 "$policy"
        made_policy=1
    fi
    apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=600 "$@" >>"$apt_log" 2>&1 8>&- 9>&- || rc=$?
    (( made_policy )) && rm -f "$policy"
    if (( rc )); then
        SERVER_LOG="$apt_log"
        die "apt-get install $* failed (exit $rc)"
    fi
}

# need_java: make sure java 17+ is available, print its home (JAVA_HOME).
need_java() {
    if ! command -v java >/dev/null 2>&1; then
        apt_install openjdk-17-jdk-headless
    fi
    local home
    home=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
    echo "$home"
}

need_mvn() {
    need_java >/dev/null
    command -v mvn >/dev/null 2>&1 || apt_install maven
}

# mvn_locked ARGS...: mvn -q -B on $IOTBENCH_M2, one at a time (Maven 3.8 does not lock its local
# repository, and parallel start scripts share it and its plugins).
mvn_locked() {
    need_mvn
    with_lock m2 mvn -q -B -Dmaven.repo.local="$IOTBENCH_M2" "$@"
}

# mvn_get GROUP:ARTIFACT:VERSION[:PACKAGING[:CLASSIFIER]]: fetch one artifact into ~/.m2, print its path.
mvn_get() {
    local coords=$1 g a v p c path
    IFS=: read -r g a v p c <<<"$coords"
    p=${p:-jar}
    path="$IOTBENCH_M2/${g//./\/}/$a/$v/$a-$v${c:+-$c}.$p"
    if [[ ! -s "$path" ]]; then
        need_mvn
        log "mvn dependency:get $coords"
        mvn_locked dependency:get -Dartifact="$coords" -Dtransitive=false >>"$IOTBENCH_STATE/mvn.log" 2>&1 \
            || { SERVER_LOG="$IOTBENCH_STATE/mvn.log"; die "mvn dependency:get $coords failed"; }
    fi
    [[ -s "$path" ]] || die "artifact $coords not found at $path"
    echo "$path"
}

# ensure_user NAME: create a system user (for servers that refuse to run as root).
ensure_user() {
    id "$1" >/dev/null 2>&1 && return 0
    log "creating user $1"
    useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$1" 2>/dev/null \
        || useradd -r -M -s /bin/false "$1" \
        || die "could not create user $1"
}

# first_non_loopback_ipv4: the machine's first non-loopback IPv4 address (for pods/containers).
first_non_loopback_ipv4() {
    hostname -I 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$' | grep -v '^127\.' | head -n1
}
