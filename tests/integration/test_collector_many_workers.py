"""The collector process with many workers at once: 200 simulated workers speaking the real protocol
through the project's client (registration, the barrier, progress, results with histograms and
per-second series), all concurrently. Not timed (benchmarks/collector_scale.py measures): these check
that nothing is lost and that a worker at the barrier is answered when the start is published
instead of asking again and again."""

from __future__ import annotations

import os
import random
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from iotdb_bench.cli.run.platforms.local import free_port
from iotdb_bench.simulator.collector_client import CollectorClient, CollectorError
from iotdb_bench.simulator.measurement.stats import new_histogram
from iotdb_bench.simulator.protocol import Status, WorkerFailure, WorkerProgress, WorkerResult
from iotdb_bench.simulator.report import RunReport
from iotdb_bench.simulator.spec import RunSpec
from tests.conftest import REPO_ROOT

WORKERS = 200
RUN_ID = "many"
SERIES_S = 5
CALLS = 50


class CountingClient(CollectorClient):
    """The workers' client, counting how often it asked to start."""

    def __init__(self, url: str, worker: int):
        super().__init__(url, worker, run_id=RUN_ID)
        self.ready_asks = 0

    def post(self, path: str, payload) -> bytes:
        if path == "/ready":
            self.ready_asks += 1
        return super().post(path, payload)


@pytest.fixture
def collector(tmp_path) -> Iterator:
    """Start a collector process for a spec: `url = collector(workers)`; `open_files` lowers the soft
    limit of open files it starts with (as many shells and container runtimes set 1,024)."""
    processes = []

    def start(workers: int, open_files: int | None = None) -> str:
        spec_path = tmp_path / "spec.json"
        RunSpec(run_id=RUN_ID, task="insert", target="null", module="null", workers=workers, num_inserts=CALLS * 10, batch=10).dump(spec_path)
        port = free_port()
        processes.append(subprocess.Popen(
            [sys.executable, "-m", "iotdb_bench.simulator", "collector", "--spec", str(spec_path), "--port", str(port)],
            cwd=REPO_ROOT, stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
            preexec_fn=None if open_files is None else lambda: _lower_open_files(open_files),
        ))
        return f"http://127.0.0.1:{port}"

    yield start
    for process in processes:
        process.terminate()
        process.wait(10)


def _lower_open_files(soft: int) -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def histogram_of(worker: int) -> str:
    generator = random.Random(worker)
    histogram = new_histogram()
    for _ in range(CALLS):
        histogram.record_value(max(1, int(generator.lognormvariate(7.0, 0.6))))
    return histogram.encode().decode("ascii")


def simulated_worker(url: str, index: int, out: dict) -> None:
    client = CountingClient(url, index)
    client.register()
    signal = client.wait_for_start()
    out["start_at"], out["ready_asks"] = signal.start_at, client.ready_asks
    time.sleep(max(0.0, signal.start_at - time.time()))
    started = time.time()
    client.post("/progress", WorkerProgress(worker=index, events=CALLS * 5))
    per_second = [index + second for second in range(SERIES_S)]
    client.post("/result", WorkerResult(
        worker=index, started_at=started, finished_at=time.time(), events=sum(per_second), calls=CALLS,
        db_seconds=0.01, histogram=histogram_of(index), per_second=per_second,
    ))


def report_of(url: str, timeout_s: float = 120) -> RunReport:
    client = CollectorClient(url)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            status, body = client.get("/report")
        except CollectorError:  # not listening yet
            status = None
        if status == 200:
            return RunReport.model_validate_json(body)
        time.sleep(0.1)
    raise AssertionError(f"no report within {timeout_s} s: {client.get('/status')}")


def test_200_concurrent_workers_register_start_together_and_every_result_is_in_the_report(collector):
    # 200 connections at once, from a collector started with room for only 128 open files: it raises
    # its own limit, as it must for 1,000 workers under the common default of 1,024.
    url = collector(WORKERS, open_files=128)
    outcomes = [{} for _ in range(WORKERS)]
    threads = [threading.Thread(target=simulated_worker, args=(url, index, outcomes[index]), daemon=True) for index in range(WORKERS)]
    for thread in threads:
        thread.start()
    report = report_of(url)
    for thread in threads:
        thread.join(30)

    assert {outcome.get("start_at") for outcome in outcomes} == {report.start_at}  # one common start, known to all
    # Each worker waited at the barrier in one held request (a second at most, if it asked just as a
    # hold ran out); asking every few milliseconds instead costs a large run its collector.
    assert max(outcome["ready_asks"] for outcome in outcomes) <= 2
    assert [worker.worker for worker in report.workers] == list(range(WORKERS))
    figures = report.figures
    assert figures.workers == WORKERS
    assert figures.events == sum(index * SERIES_S + sum(range(SERIES_S)) for index in range(WORKERS))
    assert figures.latency.calls == WORKERS * CALLS  # every histogram merged
    assert figures.per_second == [sum(index + second for index in range(WORKERS)) for second in range(SERIES_S)]
    assert report.worker_series and all(worker.per_second == [worker.worker + s for s in range(SERIES_S)] for worker in report.workers)


def test_another_runs_worker_is_refused_and_counts_for_nothing(collector):
    """Two local runs that drew one port, or a worker of an earlier release: a worker of another run
    that reaches this collector fails at once with the reason, and nothing it sends is counted."""
    url = collector(1)
    stray = CollectorClient(url, 0, run_id="run-other")
    with pytest.raises(CollectorError) as refused:
        stray.register()
    assert refused.value.status == 409
    assert "this collector serves run many, not run run-other" in str(refused.value)
    with pytest.raises(CollectorError):
        stray.post("/result", WorkerResult(worker=0, started_at=time.time(), finished_at=time.time(), events=3000, calls=3))
    status = Status.model_validate_json(CollectorClient(url, run_id=RUN_ID).get("/status")[1])
    assert (status.registered, status.finished, status.events) == (0, 0, 0)
    simulated_worker(url, 0, {})  # this run's own worker, sending its run id, is taken
    assert report_of(url).figures.latency.calls == CALLS


def test_a_failure_answers_the_workers_waiting_at_the_barrier_at_once(collector):
    url = collector(3)
    waiting = CollectorClient(url, 0)
    waiting.register()
    answer: dict = {}
    thread = threading.Thread(target=lambda: answer.update(signal=waiting.wait_for_start(), at=time.monotonic()), daemon=True)
    thread.start()
    time.sleep(0.5)  # worker 0 is held at the barrier, the others never come
    assert thread.is_alive()
    failed_at = time.monotonic()
    CollectorClient(url, 1).post("/failure", WorkerFailure(worker=1, error="the database said no"))
    thread.join(5)
    assert answer["signal"].phase == "failed" and answer["signal"].start_at is None
    assert answer["at"] - failed_at < 2.0  # not at the end of the hold (10 s)

