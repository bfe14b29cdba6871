"""Aggregation maths on known inputs."""

import sys

import pytest

from iotdb_bench.simulator.measurement import stats
from iotdb_bench.simulator.protocol import QueryRuns, WorkerResult


def recorded(common_start, calls):
    """A worker result built through the real recorder from (events, seconds, ended_at) calls."""
    recorder = stats.CallRecorder(common_start)
    for events, seconds, ended_at in calls:
        recorder.record(events, seconds, ended_at)
    return recorder


def result(worker, started, finished, recorder):
    return WorkerResult(
        worker=worker, started_at=started, finished_at=finished, events=recorder.events, calls=recorder.calls,
        db_seconds=recorder.db_seconds, histogram=recorder.encoded_histogram(), per_second=recorder.windows.values,
    )


def test_insert_figures_on_known_inputs():
    start = 1000.0
    a = recorded(start, [(1000, 0.010, 1000.5), (1000, 0.020, 1001.2)])
    b = recorded(start, [(1000, 0.030, 1003.9)])
    figures = stats.insert_figures(start, [result(0, 1000.0, 1002.0, a), result(1, 1000.1, 1004.0, b)])
    assert figures.events == 3000
    assert figures.duration_s == pytest.approx(4.0)
    assert figures.throughput == pytest.approx(750.0)  # 3000 / (1004 - 1000)
    assert figures.seed_formula_throughput == pytest.approx(3000 / ((2.0 + 3.9) / 2))
    assert figures.per_second == [1000, 1000, 0, 1000]
    assert figures.start_skew_s == pytest.approx(0.1)
    assert figures.client_overhead == pytest.approx(1 - 0.060 / 5.9)
    assert figures.latency.calls == 3
    assert figures.latency.p50_ms == pytest.approx(20.0, rel=0.01)
    assert figures.latency.max_ms == pytest.approx(30.0, rel=0.01)


def test_latency_percentiles_from_merged_histograms():
    one = recorded(0, [(1, (i + 1) / 1e6 * 1000, 0) for i in range(50)])  # 1..50 ms
    two = recorded(0, [(1, (i + 51) / 1e6 * 1000, 0) for i in range(50)])  # 51..100 ms
    latency = stats.merge_latency([one.encoded_histogram(), two.encoded_histogram()])
    assert latency.calls == 100
    assert latency.p50_ms == pytest.approx(50, rel=0.01)
    assert latency.p95_ms == pytest.approx(95, rel=0.01)
    assert latency.p99_ms == pytest.approx(99, rel=0.01)
    assert latency.max_ms == pytest.approx(100, rel=0.01)
    assert latency.mean_ms == pytest.approx(50.5, rel=0.01)


def test_query_figures_cold_warm_and_errors():
    figures = stats.query_figures([
        QueryRuns(seconds=[4.0, 1.0, 1.0], rows=10),
        QueryRuns(seconds=[2.0, 2.0], rows=10),
        QueryRuns(seconds=[], error="boom"),
    ])
    assert figures.executions == 5
    assert (figures.min_s, figures.max_s) == (1.0, 4.0)
    assert figures.avg_s == pytest.approx(2.0)
    assert figures.p50_s == 2.0  # the median of 1, 1, 2, 2, 4: the slow one moves the average, not it
    assert figures.cold_avg_s == pytest.approx(3.0)
    assert figures.warm_avg_s == pytest.approx(4.0 / 3)
    assert figures.rows == 10
    assert figures.errors == ["boom"]


def test_percentile_interpolates():
    assert stats.percentile([1, 2, 3, 4, 5], 50) == 3
    assert stats.percentile([1, 2, 3, 4], 95) == pytest.approx(3.85)


def test_spread_across_runs():
    s = stats.spread([90.0, 100.0, 110.0])
    assert (s.min, s.avg, s.max) == (90.0, 100.0, 110.0)
    assert s.stdev == pytest.approx(10.0)
    assert s.cv == pytest.approx(0.10)
    assert s.ci95_low == pytest.approx(100 - 4.303 * 10 / 3**0.5)
    assert not s.unstable
    assert stats.spread([50.0, 150.0]).unstable
    assert stats.spread([7.0]).stdev == 0.0


def test_recorder_takes_in_calls_recorded_while_another_thread_reads():
    """The worker records on its loop while the progress reporter reads: no call lost or counted twice."""
    import threading

    recorder = stats.CallRecorder(0.0)
    calls = 60_000
    done = threading.Event()
    seen = []

    def progress_reader():
        while not done.is_set():
            seen.append(recorder.events)
            recorder.interval_p99_ms()

    reader = threading.Thread(target=progress_reader)
    switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # the threads take turns as often as they can: races show
    try:
        reader.start()
        for call in range(calls):
            recorder.record(1 + call % 3, 0.001, call / 10_000)
    finally:
        done.set()
        reader.join()
        sys.setswitchinterval(switch_interval)
    expected_events = sum(1 + call % 3 for call in range(calls))
    assert (recorder.events, recorder.calls) == (expected_events, calls)
    assert sum(recorder.windows.values) == expected_events and len(recorder.windows.values) == 6
    assert recorder.histogram.get_total_count() == calls
    assert seen == sorted(seen) and len(seen) > 1  # the reader saw the count grow, never shrink


def test_recorder_nobody_reads_keeps_few_calls_waiting():
    recorder = stats.CallRecorder(0.0)
    for _ in range(stats.CallRecorder.TAKE_IN_AFTER * 3 + 5):
        recorder.record(1, 0.001, 0.5)
    assert len(recorder._waiting) < stats.CallRecorder.TAKE_IN_AFTER
    assert recorder.calls == stats.CallRecorder.TAKE_IN_AFTER * 3 + 5


def test_interval_p99_covers_the_calls_since_it_was_last_asked():
    recorder = stats.CallRecorder(0.0)
    assert recorder.interval_p99_ms() is None
    for ms in range(1, 101):
        recorder.record(1, ms / 1000, 0.5)
    assert recorder.interval_p99_ms() == pytest.approx(99.0)
    assert recorder.interval_p99_ms() is None  # nothing new since
    recorder.record(1, 0.005, 0.7)
    assert recorder.events == 101  # another reader's take-in does not lose the interval's calls
    assert recorder.interval_p99_ms() == pytest.approx(5.0)


def test_interval_p99_keeps_the_latest_calls_when_nobody_asks():
    recorder = stats.CallRecorder(0.0)
    for _ in range(stats.CallRecorder.INTERVAL_KEPT * 2):
        recorder.record(1, 0.001, 0.5)
    recorder.record(1, 9.0, 0.5)
    assert len(recorder._interval_seconds) <= stats.CallRecorder.INTERVAL_KEPT + stats.CallRecorder.TAKE_IN_AFTER
    assert recorder.interval_p99_ms() == pytest.approx(1.0)
