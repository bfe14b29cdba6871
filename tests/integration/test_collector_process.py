"""The collector process on its own: it stops at once and quietly when told to (the CLI stops it with
SIGTERM after every run, and Kubernetes stops its pod the same way)."""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
import sys
import time

import pytest

from iotdb_bench.cli.run.platforms.local import free_port
from iotdb_bench.simulator.spec import RunSpec
from tests.conftest import REPO_ROOT


def _answers(port: int) -> bool:
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        connection.request("GET", "/status")
        return connection.getresponse().status == 200
    except OSError:
        return False


@pytest.mark.parametrize("signal_number, exit_code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_the_collector_exits_promptly_and_without_a_traceback_on_a_signal(tmp_path, signal_number, exit_code):
    spec_path = tmp_path / "spec.json"
    RunSpec(run_id="r", task="insert", target="null", module="null", workers=1, num_inserts=10, batch=10).dump(spec_path)
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "iotdb_bench.simulator", "collector", "--spec", str(spec_path), "--port", str(port)],
                               cwd=REPO_ROOT, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    try:
        deadline = time.monotonic() + 30
        while not _answers(port):
            assert process.poll() is None and time.monotonic() < deadline, "the collector did not come up"
            time.sleep(0.05)
        process.send_signal(signal_number)
        assert process.wait(timeout=5) == exit_code
        assert "Traceback" not in process.stderr.read()
        assert not _answers(port)
    finally:
        process.kill()
        process.wait()
