"""scripts/kwok.sh start with a fake kwok binary (a shell script in a cache folder of the test's own):
a controller that says nothing is asked for its stacks, ended and started once more; one that fails
twice ends the script with one line saying both times; and without go and without a binary, the
build path says what is missing. The real controller's start is exercised by every KWOK test on the
local cluster; these are the paths a healthy cluster never takes."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import psutil
import pytest

from tests.conftest import REPO_ROOT

SCRIPT = REPO_ROOT / "scripts" / "kwok.sh"
VERSION = "v0.0.0-fake"

# Silent the first time (until SIGQUIT, when it prints a Go-like stack and exits 2, as Go does);
# started from then on ("Watch nodes", then waits under the binary's name as the real one would); or
# failing at once every time.
FAKE_KWOK = r"""#!/usr/bin/env bash
folder=$(dirname "$0")
SILENT='
import signal, sys, time
def dump(*_):
    print("goroutine 1 [IO wait]:\nsigs.k8s.io/kwok/pkg/kwok/cmd.waitForReady(...)\n\t/x/root.go:478\n\ngoroutine 2 [idle]:", flush=True)
    sys.exit(2)
signal.signal(signal.SIGQUIT, dump)
time.sleep(60)
'
starts=$(( $(cat "$folder/starts" 2>/dev/null || echo 0) + 1 ))
echo "$starts" >"$folder/starts"
case "$(cat "$folder/mode")" in
    silent-once)
        if [[ $starts -eq 1 ]]; then   # Python: a shell cannot trap the SIGQUIT its background start ignores
            exec python3 -c "$SILENT"
        fi
        echo '{"msg":"Watch nodes"}'
        exec -a "$0" sleep 60 ;;
    exits)
        echo '{"level":"ERROR","msg":"Failed to list nodes"}'
        exit 1 ;;
esac
"""


@pytest.fixture
def fake(tmp_path: Path):
    cache = tmp_path / "cache"
    binary = cache / f"kwok-{VERSION}" / "bin" / "kwok"
    binary.parent.mkdir(parents=True)
    binary.write_text(FAKE_KWOK)
    binary.chmod(0o755)
    (binary.parent.parent / "stages.yaml").write_text("---\n")
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\n")
    state = tmp_path / "state"
    env = {**os.environ, "IOTBENCH_CACHE": str(cache), "KWOK_VERSION": VERSION, "KWOK_STATE": str(state),
           "KUBECONFIG": str(kubeconfig), "KWOK_FIRST_START_S": "1"}

    def run(command: str, mode: str | None = None, **changes: str) -> subprocess.CompletedProcess:
        if mode:
            (binary.parent / "mode").write_text(mode)
        return subprocess.run(["bash", str(SCRIPT), command], env={**env, **changes}, capture_output=True, text=True, timeout=120)

    yield run, binary, state
    run("stop")
    assert not [p for p in psutil.process_iter(["cmdline"]) if str(binary) in " ".join(p.info["cmdline"] or [])]


def test_a_fake_kwok_silent_at_first_is_asked_for_its_stacks_and_started_once_more(fake):
    run, binary, state = fake
    done = run("start", "silent-once")
    assert done.returncode == 0, done.stderr
    said = done.stderr
    assert "it printed nothing within 1 s" in said and "starting it once more" in said
    assert "goroutine 1 [IO wait]: sigs.k8s.io/kwok/pkg/kwok/cmd.waitForReady(...)" in said  # where it waited, on one line
    assert "goroutine 2" not in said
    assert "waitForReady" in (state / "kwok-failed-1.log").read_text()
    pid = int(done.stdout.split()[-1])
    assert run("status").stdout.split() == [str(pid)]
    assert (binary.parent / "starts").read_text().strip() == "2"
    assert run("stop").returncode == 0  # it waits for the end (SIGKILL after 5 s)
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_a_fake_kwok_that_fails_twice_ends_the_start_with_one_line_saying_both_times(fake):
    run, binary, _ = fake
    done = run("start", "exits")
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if "ERROR:" in line]
    assert len(errors) == 1, done.stderr
    assert "kwok did not start twice; the second time it exited:" in errors[0]
    assert errors[0].count("Failed to list nodes") == 2 and "the first time it exited:" in errors[0]
    assert (binary.parent / "starts").read_text().strip() == "2"


def test_without_go_and_without_a_binary_the_build_says_what_is_missing(fake, tmp_path):
    run, binary, _ = fake
    shutil.rmtree(binary.parent)
    # The tools the script uses, without go: a PATH of links to them alone.
    tools = tmp_path / "tools"
    tools.mkdir()
    for name in ("bash", "mkdir", "flock", "date", "printf", "cat", "dirname"):
        found = shutil.which(name)
        if found:
            (tools / name).symlink_to(found)
    done = run("start", PATH=str(tools))
    assert done.returncode == 1
    assert "go not found on PATH (kwok is built with go install)" in done.stderr
    assert not binary.exists()
