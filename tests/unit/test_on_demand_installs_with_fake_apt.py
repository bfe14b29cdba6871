"""The on-demand install paths of the scripts, taken as on a fresh machine, with a fake apt.

A fresh machine takes paths a prepared one never does: once a lock taken twice on such a path hung CI
for an hour (with_lock apt + apt_install). Here dpkg-query and apt-get are fakes on PATH (the real
apt-get would change this machine), so every package reads as missing and each script runs its install
path for real: its locks, its order, its checks. A hang fails the test through its timeout.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIB = ROOT / "scripts" / "servers" / "lib.sh"

FAKE_DPKG_QUERY = """#!/bin/sh
# fake dpkg-query: a package is installed once the fake apt-get has installed it
pkg=$(eval echo \\${$#})
grep -qx "$pkg" "$FAKE_APT_STATE/installed" 2>/dev/null && printf 'install ok installed' && exit 0
exit 1
"""
FAKE_APT_GET = """#!/bin/sh
# fake apt-get: records its calls; `install` marks the packages installed and puts a program of each
# package's name on PATH
echo "$*" >> "$FAKE_APT_STATE/calls"
[ "$1" = update ] || [ "$2" = update ] && exit 0
for arg in "$@"; do
  case "$arg" in -*|install|Dpkg::*|DPkg::*) ;; *)
    echo "$arg" >> "$FAKE_APT_STATE/installed"
    printf '#!/bin/sh\\nexit 0\\n' > "$FAKE_APT_STATE/bin/$arg"; chmod +x "$FAKE_APT_STATE/bin/$arg" ;;
  esac
done
"""


@pytest.fixture
def fake_apt(tmp_path):
    state = tmp_path / "apt"
    (state / "bin").mkdir(parents=True)
    for name, text in (("dpkg-query", FAKE_DPKG_QUERY), ("apt-get", FAKE_APT_GET)):
        (state / "bin" / name).write_text(text)
        (state / "bin" / name).chmod(0o755)
    # Only the fake's bin and the basic tools: chromium, shellcheck and the rest are absent.
    basics = tmp_path / "basics"
    basics.mkdir()
    for tool in ("bash", "sh", "cat", "date", "dirname", "basename", "mkdir", "rm", "flock", "grep", "sed", "tr", "printf",
                 "chmod", "touch", "find", "head", "tail", "sort", "mktemp", "readlink", "sleep", "seq", "env", "id", "cut"):
        path = subprocess.run(["bash", "-c", f"command -v {tool}"], capture_output=True, text=True).stdout.strip()
        if path.startswith("/"):
            (basics / tool).symlink_to(path)
    env = {"PATH": f"{state / 'bin'}:{basics}", "FAKE_APT_STATE": str(state), "HOME": str(tmp_path),
           "IOTBENCH_CACHE": str(tmp_path / "cache"), "IOTBENCH_STATE": str(tmp_path / "state")}

    def calls() -> list[str]:
        file = state / "calls"
        return file.read_text().splitlines() if file.exists() else []

    return env, calls


def bash(script: str, env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=timeout)


def test_apt_install_inside_the_apt_lock_does_not_wait_on_itself(fake_apt):
    """The shape of the bug that hung CI: the lock held, then apt_install asks for it again."""
    env, calls = fake_apt
    done = bash(f"set -euo pipefail; source {LIB}; with_lock apt apt_install shellcheck; with_lock apt with_lock apt true", env, timeout=30)
    assert done.returncode == 0, done.stderr
    assert [c for c in calls() if " install " in f" {c} "] == ["install -y -q --no-install-recommends -o DPkg::Lock::Timeout=600 shellcheck"]


def test_two_scripts_installing_at_once_take_turns(fake_apt):
    """The lock still excludes another process: two apt_install at once both finish, one apt-get each."""
    env, calls = fake_apt
    script = f"source {LIB}; apt_install pkg-$0"
    first = subprocess.Popen(["bash", "-c", script, "a"], env=env, stderr=subprocess.PIPE, text=True)
    second = subprocess.Popen(["bash", "-c", script, "b"], env=env, stderr=subprocess.PIPE, text=True)
    assert first.wait(timeout=30) == 0 and second.wait(timeout=30) == 0
    assert sorted(c.split()[-1] for c in calls() if c.startswith("install")) == ["pkg-a", "pkg-b"]


def test_chromium_install_path(fake_apt):
    env, calls = fake_apt
    done = bash(f"bash {ROOT / 'scripts' / 'install-chromium.sh'}", env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("/chromium")
    assert [c.split()[-1] for c in calls() if c.startswith("install")] == ["chromium"]


def test_every_servers_packages_in_one_apt_call(fake_apt):
    """start-all.sh's package step on a machine with none of them (java, mvn and go absent too)."""
    env, calls = fake_apt
    done = bash(f"IOTBENCH_PACKAGES_ONLY=1 bash {ROOT / 'scripts' / 'servers' / 'start-all.sh'}", {**env, "PG_VERSION": "0"}, timeout=120)
    assert done.returncode == 0, done.stderr
    installs = [c for c in calls() if c.startswith("install")]
    assert len(installs) == 1, installs
    for package in ("postgresql", "mariadb-client", "openjdk-17-jdk-headless", "maven", "clickhouse-server", "victoria-metrics",
                    "libdb5.3-dev", "postgresql-server-dev-15", "cmake", "make", "libssl-dev"):
        assert package in installs[0].split(), (package, installs[0])



START_TIMESCALEDB = ROOT / "scripts" / "servers" / "start-timescaledb.sh"


def test_timescaledb_without_its_vendored_source_says_where_it_looked(fake_apt, tmp_path):
    env, calls = fake_apt
    done = bash(f"bash {START_TIMESCALEDB}", {**env, "IOTBENCH_SHARED": str(tmp_path / "nowhere")})
    assert done.returncode == 1
    assert f"no TimescaleDB source at {tmp_path / 'nowhere'}/vendor/timescaledb (build.sh missing); set IOTBENCH_SHARED or TIMESCALEDB_SOURCE" in done.stderr
    assert calls() == []


def test_timescaledb_build_installs_its_packages_first_and_a_failed_build_says_why(fake_apt, tmp_path):
    """Packages through our apt lock before build.sh runs (which would apt-get by itself); the build's
    cache folder is named after the vendored version; a failing build is one error line and its log."""
    env, calls = fake_apt
    vendor = tmp_path / "shared" / "vendor" / "timescaledb"
    vendor.mkdir(parents=True)
    (vendor / "build.sh").write_text('VERSION=9.9.9\necho "build tree: $1" >&2\necho "compiler exploded" >&2\nexit 1\n')
    done = bash(f"bash {START_TIMESCALEDB}", {**env, "IOTBENCH_SHARED": str(tmp_path / "shared")})
    assert done.returncode == 1
    assert f"ERROR: building TimescaleDB 9.9.9 with {vendor / 'build.sh'} failed" in done.stderr
    assert f"build tree: {tmp_path / 'cache' / 'timescaledb-9.9.9' / 'pgtree'}" in done.stderr and "compiler exploded" in done.stderr
    assert done.stderr.count("ERROR:") == 1 and "unexpected failure" not in done.stderr
    installs = [c for c in calls() if c.startswith("install")]
    assert len(installs) == 1 and installs[0].split()[-6:] == ["postgresql-15", "postgresql-server-dev-15", "cmake", "gcc", "make", "libssl-dev"]
    assert not list((tmp_path / "state").glob("timescaledb-*/*.pid"))
