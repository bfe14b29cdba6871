"""Ctrl-C, --timeout, a dying worker and a killed CLI: clear outcome, nothing left running."""

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, processes_with_env

pytestmark = pytest.mark.slow
LONG_RUN = ["insert", "--target", "sqlite", "-w", "2", "-r", "1", "--num-inserts", "50000000"]


def start_cli(tmp_path, args, tag):
    return subprocess.Popen(
        [sys.executable, str(REPO_ROOT / "run.py"), *args], cwd=tmp_path, env={**os.environ, "IOTB_TEST_TAG": tag},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def wait_until_running(tmp_path, workers=2, limit=60.0):
    """Until every worker process exists and rows are being written (SQLite's WAL file appeared)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        started = len(list(tmp_path.glob("results/*/logs/*/worker-*.log"))) == workers
        if started and (tmp_path / "iotdb-bench.sqlite3-wal").exists():
            time.sleep(1.0)
            return
        time.sleep(0.1)
    pytest.fail("the run did not start")


def start_running(tmp_path):
    """The long run, started and inserting; returns the CLI process and the tag its children carry."""
    tag = uuid.uuid4().hex
    process = start_cli(tmp_path, LONG_RUN, tag)
    wait_until_running(tmp_path)
    return process, tag


def assert_nothing_left(tag, limit=10.0):
    deadline = time.monotonic() + limit
    while processes_with_env(tag) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_with_env(tag) == []


def test_ctrl_c_stops_everything(tmp_path):
    process, tag = start_running(tmp_path)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert_nothing_left(tag)
    document = next(tmp_path.glob("results/*/results.json")).read_text()
    assert '"status": "interrupted"' in document


def test_sigterm_is_handled_like_ctrl_c(tmp_path):
    process, tag = start_running(tmp_path)
    process.terminate()
    process.communicate(timeout=30)
    assert process.returncode == 130
    assert_nothing_left(tag)


def test_timeout_fails_the_run_and_stops_everything(tmp_path):
    tag = uuid.uuid4().hex
    process = start_cli(tmp_path, [*LONG_RUN, "--timeout", "4"], tag)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 1
    assert "did not finish within --timeout 4 s" in stderr and "Traceback" not in stderr
    assert_nothing_left(tag)


def test_a_killed_worker_fails_the_run(tmp_path):
    process, tag = start_running(tmp_path)
    workers = [pid for pid in processes_with_env(tag) if b"iotdb_bench.simulator worker" in Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")]
    assert len(workers) == 2
    os.kill(workers[1], signal.SIGKILL)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 1
    assert "exited with code -9" in stderr and "worker-" in stderr
    assert_nothing_left(tag)


def test_killing_the_cli_takes_its_children_along(tmp_path):
    process, tag = start_running(tmp_path)
    process.kill()
    process.communicate(timeout=30)
    assert_nothing_left(tag)
