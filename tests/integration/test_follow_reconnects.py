"""The follower's side of a dropped connection, with real processes: a collector and two workers
inserting into SQLite, followed through a TCP relay the test cuts (tests/tcp_link.py), as the CLI
follows a Kubernetes run through its port-forward. Cut for less than the heartbeat timeout, the
follower reconnects, says so, and the run completes with a passing count check; cut for longer, the
run stops by its dead-man switch and the follower says why."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import time

import pytest

from iotdb_bench.cli.errors import RunFailed
from iotdb_bench.cli.run.platforms import Notice
from iotdb_bench.cli.run.platforms.follow import Deadline, Patience, follow_run, wait_for_collector
from iotdb_bench.cli.run.platforms.local import free_port
from iotdb_bench.simulator.collector_client import CollectorClient
from iotdb_bench.simulator.spec import RunSpec
from tests.conftest import REPO_ROOT
from tests.tcp_link import TcpLink

pytestmark = pytest.mark.slow
HEARTBEAT_S = 4.0


@pytest.fixture
def run(tmp_path):
    """start(duration): a collector and two workers of a --duration run on SQLite; yields the start function."""
    started: list[subprocess.Popen] = []

    def start(duration_s: float) -> tuple[int, RunSpec]:
        spec = RunSpec(run_id="run-reconnect", task="insert", target="sqlite", module="sqlite",
                       connection={"path": str(tmp_path / "bench.sqlite3")}, workers=2, duration_s=duration_s, batch=100,
                       heartbeat_timeout=HEARTBEAT_S)
        spec.dump(tmp_path / "spec.json")
        port = free_port()
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
        roles = [("collector", "--port", str(port))] + [("worker", "--index", str(i), "--collector", f"http://127.0.0.1:{port}") for i in range(2)]
        for index, role in enumerate(roles):
            with open(tmp_path / f"process-{index}.log", "wb") as output:
                started.append(subprocess.Popen([sys.executable, "-m", "iotdb_bench.simulator", *role, "--spec", str(tmp_path / "spec.json")],
                                                cwd=REPO_ROOT, env=env, stdout=output, stderr=subprocess.STDOUT))
        return port, spec

    yield start
    for process in started:
        process.kill()
        process.wait()


def follow_with_cut(port: int, cut_after_s: float, cut_for_s: float) -> tuple[list, BaseException | object]:
    link = TcpLink(("127.0.0.1", port))
    seen: list = []
    http = CollectorClient(f"http://127.0.0.1:{link.port}", get_attempts=3)
    wait_for_collector(http, Deadline(60), lambda: None)
    seen.append(time.monotonic())  # following from here

    def cut() -> None:
        time.sleep(cut_after_s)
        link.cut()
        time.sleep(cut_for_s)
        link.restore()

    threading.Thread(target=cut, daemon=True).start()
    try:
        outcome = follow_run(http, Deadline(120), seen.append, lambda: None, HEARTBEAT_S, Patience(HEARTBEAT_S, lambda: "cut by the test"))
    except RunFailed as failure:
        outcome = failure
    finally:
        link.close()
    return seen, outcome


def test_a_cut_shorter_than_the_heartbeat_is_survived_with_a_passing_count(run, tmp_path):
    port, _ = run(duration_s=6)
    seen, report = follow_with_cut(port, cut_after_s=3, cut_for_s=HEARTBEAT_S / 2)
    assert not isinstance(report, BaseException), report
    notices = [item.text for item in seen if isinstance(item, Notice)]
    assert notices and all(text.startswith("reconnecting to the collector (") and text.endswith(": cut by the test)") for text in notices)
    check = report.verification
    assert check.ok and check.counted == check.expected == report.figures.events > 0
    with sqlite3.connect(tmp_path / "bench.sqlite3") as db:
        assert db.execute("SELECT count(*) FROM events").fetchone()[0] == report.figures.events


def test_a_cut_longer_than_the_heartbeat_stops_the_run_and_says_why(run):
    port, _ = run(duration_s=30)
    seen, failure = follow_with_cut(port, cut_after_s=3, cut_for_s=HEARTBEAT_S + 6)
    following_s = time.monotonic() - seen[0]
    assert isinstance(failure, RunFailed)
    assert str(failure).startswith("lost contact with the collector for ")
    assert str(failure).endswith(f"(cut by the test), longer than the heartbeat timeout ({HEARTBEAT_S:g} s): the run stops by its dead-man switch")
    assert 3 + HEARTBEAT_S <= following_s < 3 + HEARTBEAT_S + 4  # given up at the heartbeat timeout, not much later
