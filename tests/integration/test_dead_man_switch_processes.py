"""The dead-man switch with real processes: a collector and two workers inserting into SQLite, and
nobody asking for the run's status (as after a `kill -9` of the CLI on Kubernetes, where nothing
else would stop them). Within the heartbeat timeout the collector fails the run, the workers stop
and the database sees no more inserts. With the CLI alive, the same short timeout never trips."""

from __future__ import annotations

import http.client
import json
import os
import sqlite3
import subprocess
import sys
import time

import pytest

from iotdb_bench.cli.run.platforms.local import free_port
from iotdb_bench.simulator.spec import RunSpec
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.slow
HEARTBEAT_S = 3.0
# The watchdog looks at most once a second, a worker hears of it with its next progress report (1 s)
# and exits after its current batch; the rest is room for a machine busy with other tests.
STOP_MARGIN_S = 5.0


def _get(port: int, path: str) -> tuple[int, dict]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    connection.request("GET", path)
    response = connection.getresponse()
    return response.status, json.loads(response.read() or b"null")


def _count(database) -> int:
    with sqlite3.connect(database, timeout=10) as db:
        return db.execute("SELECT count(*) FROM events").fetchone()[0]


def test_nobody_asking_for_the_status_stops_the_run(tmp_path):
    database = tmp_path / "bench.sqlite3"
    spec = RunSpec(run_id="run-deadman", task="insert", target="sqlite", module="sqlite", connection={"path": str(database)},
                   workers=2, num_inserts=50_000_000, batch=100, heartbeat_timeout=HEARTBEAT_S)
    spec_path = tmp_path / "spec.json"
    spec.dump(spec_path)
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}

    def start(*args: str, log: str) -> subprocess.Popen:
        with open(tmp_path / log, "wb") as output:
            return subprocess.Popen([sys.executable, "-m", "iotdb_bench.simulator", *args, "--spec", str(spec_path)], cwd=REPO_ROOT, env=env,
                                    stdout=output, stderr=subprocess.STDOUT)

    collector = start("collector", "--port", str(port), log="collector.log")
    workers = [start("worker", "--index", str(i), "--collector", f"http://127.0.0.1:{port}", log=f"worker-{i}.log") for i in range(2)]
    try:
        # Follow the run as the CLI does (each /status request is a heartbeat) until events are stored.
        deadline = time.monotonic() + 60
        while True:
            try:
                code, status = _get(port, "/status")
            except OSError:
                code, status = 0, {}
            if code == 200 and status["phase"] == "running" and status["events"] > 0 and database.exists() and _count(database) > 0:
                break
            assert time.monotonic() < deadline, f"the run did not start: {status}"
            time.sleep(0.2)
        silent_since = time.monotonic()

        # From now on only /health (the readiness probe's endpoint, not a heartbeat) is asked.
        while _get(port, "/health")[1]["phase"] != "failed":
            assert time.monotonic() - silent_since < HEARTBEAT_S + 2, "the collector did not notice the silence"
            time.sleep(0.1)
        tripped_after = time.monotonic() - silent_since
        assert tripped_after >= HEARTBEAT_S
        code, answer = _get(port, "/report")
        assert code == 409 and answer["detail"].startswith("run abandoned")
        for process in workers:
            process.wait(timeout=HEARTBEAT_S + STOP_MARGIN_S - tripped_after + 2)
        stopped_after = time.monotonic() - silent_since
        assert [process.returncode for process in workers] == [1, 1]
        assert stopped_after < HEARTBEAT_S + STOP_MARGIN_S
        for index in range(2):
            log = (tmp_path / f"worker-{index}.log").read_text()
            assert "the collector stopped the run: run abandoned: the CLI has not asked for the run's status" in log
        counted = _count(database)
        time.sleep(2.0)
        assert _count(database) == counted > 0  # no more inserts
        # It stays a heartbeat timeout, answering "failed" to any worker that comes back, then ends by
        # itself: nothing of a run whose CLI is gone keeps running.
        assert collector.wait(timeout=HEARTBEAT_S + STOP_MARGIN_S) == 0
        assert "nobody has asked about it for 3 s: the collector ends" in (tmp_path / "collector.log").read_text()
    finally:
        for process in [collector, *workers]:
            process.kill()
            process.wait()


def test_a_short_heartbeat_timeout_does_not_trip_while_the_cli_follows(cli):
    result = cli("insert", "--target", "sqlite", "-w", "2", "-r", "1", "--num-inserts", "40000", "--batch", "100", "--heartbeat-timeout", "1")
    assert result.code == 0, result.stderr
    assert result.results()["spec"]["heartbeat_timeout"] == 1
