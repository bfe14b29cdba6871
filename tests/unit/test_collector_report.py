"""What the collector's report holds for many workers: every worker's figures always, each worker's
per-second series only while they stay small (their sum is always in the figures); histograms merged
as the results arrive, each once."""

from __future__ import annotations

import time

import pytest
from fastapi import HTTPException

from iotdb_bench.simulator.collector import report_assembly
from iotdb_bench.simulator.collector.service import Collector
from iotdb_bench.simulator.measurement.stats import CallRecorder
from iotdb_bench.simulator.protocol import WorkerHello, WorkerResult
from iotdb_bench.simulator.report import RunReport
from iotdb_bench.simulator.spec import RunSpec


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
    monkeypatch.setattr(report_assembly, "WORKER_SERIES_BUDGET", 20)  # 4 workers x 5 s
    report = finished_run(4, series_s)
    assert report.worker_series is kept
    assert [worker.per_second for worker in report.workers] == ([[w + 1] * series_s for w in range(4)] if kept else [[]] * 4)
    # Every worker's own figures and the summed series stay either way.
    assert [(worker.worker, worker.events, worker.calls) for worker in report.workers] == [(w, (w + 1) * series_s, series_s) for w in range(4)]
    assert report.figures.per_second == [1 + 2 + 3 + 4] * series_s


def test_a_result_posted_twice_is_merged_once_and_a_broken_histogram_is_refused():
    collector = Collector(RunSpec(run_id="twice", task="insert", target="null", module="null", workers=2))
    recorder = CallRecorder(0.0)
    for _ in range(7):
        recorder.record(10, 0.001, 0.5)
    result = WorkerResult(worker=0, started_at=0.0, finished_at=1.0, events=70, calls=7, histogram=recorder.encoded_histogram(),
                          per_second=[70])
    collector.record_result(result)
    collector.record_result(result)  # sent again after a dropped connection
    assert collector.state.totals.histogram.get_total_count() == 7 and collector.state.totals.windows.values == [70]
    with pytest.raises(HTTPException) as refused:
        collector.record_result(result.model_copy(update={"worker": 1, "histogram": "not a histogram"}))
    assert refused.value.status_code == 400 and "worker 1's histogram cannot be decoded" in refused.value.detail
    assert 1 not in collector.state.results
