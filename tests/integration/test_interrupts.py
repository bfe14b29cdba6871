"""Ctrl-C, --timeout, a dying worker and a killed CLI: clear outcome, nothing left running."""

import json
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


def test_a_cli_killed_at_90_percent_leaves_90_percent_of_the_figures_marked_incomplete(tmp_path):
    """results.json is written again as each step ends: kill -9 during the last of ten steps leaves the
    nine finished, and every view of the folder says the invocation is incomplete."""
    tag = uuid.uuid4().hex
    process = start_cli(tmp_path, ["insert", "--target", "sqlite", "-w", "1", "-r", "1", "--steps", "10", "--duration", "1", "--batch", "100"], tag)
    deadline = time.monotonic() + 240
    results = None
    while results is None or len(json.loads(results.read_text())["runs"]) < 9:
        assert process.poll() is None and time.monotonic() < deadline, "the steps did not get to the tenth"
        results = next(tmp_path.glob("results/*/results.json"), None)
        time.sleep(0.1)
    process.kill()
    process.communicate(timeout=30)
    assert_nothing_left(tag)
    saved = json.loads(results.read_text())
    assert saved["status"] == "running" and saved["planned_runs"] == 10
    assert [run["step"] for run in saved["runs"]] == list(range(1, 10))
    assert [row["step"] for row in saved["inserts"]] == list(range(1, 10))
    series = (results.parent / "series.csv").read_text().splitlines()
    assert {line.split(",")[0] for line in series[1:]} == {f"step {step}/10" for step in range(1, 10)}
    shown = subprocess.run([sys.executable, str(REPO_ROOT / "run.py"), "report", str(results.parent)], cwd=tmp_path,
                           capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})
    assert shown.returncode == 0, shown.stderr
    assert "Incomplete: the invocation did not end" in shown.stdout and "9 of 10 planned runs finished" in shown.stdout
    assert "incomplete" in (results.parent / "report.html").read_text()
