"""The CLI follows a run with long polls of the collector's /status (cli/run/platforms/follow.py): a
request that names the phase and the number of finished workers it last saw is held until either
changes, or for its wait. So the CLI asks about once a second inside the timed phase (CPU the
database would otherwise lose), and still sees the start and each finished worker at once.
Against a real collector process (the null target), driven by hand through its worker endpoints."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from iotdb_bench.cli.run.platforms.local import free_port
from iotdb_bench.simulator.collector_client import CollectorClient, CollectorError
from iotdb_bench.simulator.protocol import WorkerHello, WorkerResult
from iotdb_bench.simulator.spec import RunSpec
from tests.conftest import REPO_ROOT


@contextlib.contextmanager
def _collector(tmp_path, workers: int, heartbeat_timeout: float) -> Iterator[CollectorClient]:
    """A real collector process of the null target, in its waiting phase."""
    spec_path = tmp_path / "spec.json"
    RunSpec(run_id="r", task="insert", target="null", module="null", workers=workers, num_inserts=10, batch=10,
            heartbeat_timeout=heartbeat_timeout).dump(spec_path)
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "iotdb_bench.simulator", "collector", "--spec", str(spec_path), "--port", str(port)],
                               cwd=REPO_ROOT, stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    client = CollectorClient(f"http://127.0.0.1:{port}")
    try:
        deadline = time.monotonic() + 30
        while _status(client).get("phase") != "waiting":
            assert process.poll() is None and time.monotonic() < deadline, "the collector did not come up"
            time.sleep(0.05)
        yield client
    finally:
        process.kill()
        process.wait()


@pytest.fixture
def collector(tmp_path) -> Iterator[CollectorClient]:
    with _collector(tmp_path, workers=2, heartbeat_timeout=60) as client:
        yield client


def _status(client: CollectorClient, query: str = "") -> dict:
    try:
        code, body = client.get("/status" + query)
    except CollectorError:
        return {}
    return json.loads(body) if code == 200 else {}


def _held(client: CollectorClient, query: str) -> tuple[dict, float]:
    started = time.monotonic()
    status = _status(client, query)
    return status, time.monotonic() - started


def _in_background(client: CollectorClient, query: str) -> tuple[threading.Thread, dict]:
    answer: dict = {}
    thread = threading.Thread(target=lambda: answer.update(zip(("status", "held_s"), _held(client, query))))
    thread.start()
    time.sleep(0.3)  # the request is held by now
    return thread, answer


def test_a_status_request_is_held_until_the_phase_or_the_finished_count_changes(collector):
    status, held_s = _held(collector, "")
    assert status["phase"] == "waiting" and held_s < 0.5  # no wait asked: answered at once

    status, held_s = _held(collector, "?phase=waiting&finished=0&wait_s=1.5")
    assert status["phase"] == "waiting" and 1.3 <= held_s < 3.0  # nothing changed: held for the wait

    status, held_s = _held(collector, "?phase=preparing&finished=0&wait_s=5")
    assert status["phase"] == "waiting" and held_s < 0.5  # the caller is behind: answered at once

    # The start: a held request returns as soon as the last worker is ready and the start is published.
    thread, answer = _in_background(collector, "?phase=waiting&finished=0&wait_s=5")
    for worker in (0, 1):
        collector.post("/register", WorkerHello(worker=worker))
    other = threading.Thread(target=collector.post, args=("/ready", WorkerHello(worker=1)))  # held until the start
    other.start()
    signal = collector.post("/ready", WorkerHello(worker=0))
    other.join(10)
    thread.join(10)
    assert answer["status"]["phase"] == "running" and answer["held_s"] < 2.0
    assert json.loads(signal)["start_at"] == answer["status"]["start_at"]

    # Each worker's end: a held request returns when a result arrives (the run goes on), not after its wait.
    thread, answer = _in_background(collector, "?phase=running&finished=0&wait_s=5")
    now = time.time()
    collector.post("/result", WorkerResult(worker=0, started_at=now - 1, finished_at=now, events=10, calls=1))
    thread.join(10)
    assert (answer["status"]["phase"], answer["status"]["finished"]) == ("running", 1) and answer["held_s"] < 2.0


def test_a_held_request_never_outlasts_a_quarter_of_the_heartbeat_timeout(tmp_path):
    """The dead-man switch counts the CLI silent from its last request: a held one must not trip it."""
    with _collector(tmp_path, workers=1, heartbeat_timeout=2) as client:
        for _ in range(8):  # 4+ s of held requests: the run is never abandoned
            status, held_s = _held(client, "?phase=waiting&finished=0&wait_s=5")
            assert status["phase"] == "waiting" and 0.3 <= held_s < 1.0
