"""What the collector's report holds for many workers: every worker's figures always, each worker's
per-second series only while they stay small (their sum is always in the figures)."""

from __future__ import annotations

import time

import pytest

from simulator import collector as collector_module
from simulator.collector import Collector
from simulator.protocol import WorkerHello, WorkerResult
from simulator.report import RunReport
from simulator.spec import RunSpec


def finished_run(workers: int, series_s: int) -> RunReport:
    """A null run driven through the collector's protocol steps (no HTTP), one result per worker."""
    collector = Collector(RunSpec(run_id="budget", task="insert", target="null", module="null", workers=workers))
    collector.prepare()
    for worker in range(workers):
        collector.register(WorkerHello(worker=worker))
        collector.mark_ready(WorkerHello(worker=worker))
    state = collector.state
    deadline = time.monotonic() + 10
    while state.start_at is None:  # published by a background thread once the counters are read
        assert time.monotonic() < deadline and state.phase != "failed", state.error
        time.sleep(0.01)
    for worker in range(workers):
        series = [worker + 1] * series_s
        collector.record_result(WorkerResult(worker=worker, started_at=state.start_at, finished_at=state.start_at + series_s,
                                             events=sum(series), calls=series_s, per_second=series))
    while state.report is None:
        assert time.monotonic() < deadline and state.phase != "failed", state.error
        time.sleep(0.01)
    return state.report


@pytest.mark.parametrize("series_s, kept", [(5, True), (6, False)])
def test_each_workers_series_is_kept_only_within_the_budget(monkeypatch, series_s, kept):
    monkeypatch.setattr(collector_module, "WORKER_SERIES_BUDGET", 20)  # 4 workers x 5 s
    report = finished_run(4, series_s)
    assert report.worker_series is kept
    assert [worker.per_second for worker in report.workers] == ([[w + 1] * series_s for w in range(4)] if kept else [[]] * 4)
    # Every worker's own figures and the summed series stay either way.
    assert [(worker.worker, worker.events, worker.calls) for worker in report.workers] == [(w, (w + 1) * series_s, series_s) for w in range(4)]
    assert report.figures.per_second == [1 + 2 + 3 + 4] * series_s
