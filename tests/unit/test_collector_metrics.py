"""The collector's Prometheus metrics: the latency counts the workers send (read from their
HdrHistograms and from lists of durations), and what a scrape of the collector shows, parsed with
prometheus-client's own parser of the text format: names and labels by Prometheus' conventions,
every worker's counters from zero, the last figures of each worker and its result's at the end."""

from __future__ import annotations

import re
import time

import pytest
from hdrh.histogram import HdrHistogram
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from iotdb_bench.simulator.collector.metrics import FINAL_SCRAPE_WAIT_S, RunMetrics
from iotdb_bench.simulator.collector.service import Collector
from iotdb_bench.simulator.measurement import live_figures
from iotdb_bench.simulator.measurement.query_latency import QueryLatencyRecorder
from iotdb_bench.simulator.measurement.stats import CallRecorder, new_histogram
from iotdb_bench.simulator.protocol import (
    LATENCY_BUCKETS_S,
    LatencyCounts,
    LiveFigures,
    QueryProgress,
    WorkerFailure,
    WorkerProgress,
    WorkerResult,
)
from iotdb_bench.simulator.spec import RunSpec

# Prometheus' conventions: one prefix, snake case, base units in the name, counters ending in _total.
NAME = re.compile(r"^iotbench_[a-z][a-z0-9_]*[a-z0-9]$")
UNITS = ("_seconds", "_events", "_events_total", "_total", "_info", "_events_per_second")
BOUNDED_LABELS = {"run_id", "worker", "query", "phase", "target", "module", "task"}


def _bucket_index(seconds: float) -> int:
    return next(i for i, bound in enumerate(LATENCY_BUCKETS_S) if seconds <= bound)


# -- latency counts ----------------------------------------------------------------------------

def test_counts_of_a_histogram_are_cumulative_per_bound_and_keep_the_exact_sum():
    histogram = new_histogram()
    micros = [5, 10, 11, 99, 100, 1_000, 1_001, 250_000, 90_000_000]  # 90 s: beyond the last bound, only in +Inf
    for value in micros:
        histogram.record_value(value)
    counts = live_figures.of_histogram(histogram, sum_s=12.5)
    expected = [sum(1 for value in micros if value <= round(bound * 1e6)) for bound in LATENCY_BUCKETS_S]
    assert counts.buckets == expected
    assert counts.count == len(micros) and counts.sum_s == 12.5
    assert counts.buckets[-1] == len(micros) - 1


def test_a_decoded_histogram_gives_the_same_counts():
    histogram = new_histogram()
    for value in (3, 40, 700, 7_000, 70_000):
        histogram.record_value(value, 10)
    decoded = HdrHistogram.decode(histogram.encode())  # its counts array may end early
    assert live_figures.of_histogram(decoded, 1.0) == live_figures.of_histogram(histogram, 1.0)


def test_counts_of_durations_and_of_two_phases_added():
    runs = live_figures.of_seconds([0.2, 0.0004, 3.0])
    assert runs.count == 3 and runs.sum_s == pytest.approx(3.2004)
    assert runs.buckets[_bucket_index(0.0004)] == 1 and runs.buckets[_bucket_index(0.2)] == 2 and runs.buckets[-1] == 3
    both = live_figures.added([runs, LatencyCounts(), live_figures.of_seconds([0.2])])
    assert both.count == 4 and both.buckets[_bucket_index(0.2)] == 3
    assert live_figures.of_seconds([]) == LatencyCounts()


def test_a_recorders_counts_agree_with_its_calls():
    recorder = CallRecorder(common_start=time.time())
    for seconds in (0.001, 0.002, 0.5):
        recorder.record(100, seconds, time.time())
    counts = recorder.latency_counts()
    assert counts.count == recorder.calls == 3
    assert counts.sum_s == pytest.approx(recorder.db_seconds)
    assert counts.buckets[_bucket_index(0.002)] == 2


def test_a_query_clients_counts_add_up_both_phases_and_count_its_failures():
    recorder = QueryLatencyRecorder(["count-events"])
    recorder.record("count-events", "ingest", 0.03)
    recorder.record("count-events", "idle", 0.01)
    recorder.error("count-events", "timeout")
    recorder.error("count-events", "timeout")  # the same message is kept once, but counted twice
    live = recorder.live()["count-events"]
    assert live.latency.count == 2 and live.latency.sum_s == pytest.approx(0.04) and live.errors == 2
    assert recorder.errors["count-events"] == ["timeout"]


# -- what a scrape shows ------------------------------------------------------------------------

def _collector(workers: int = 3, **fields) -> Collector:
    return Collector(RunSpec(run_id="run-m1", task="insert", target="pg", module="null", workers=workers, num_inserts=1000,
                             batch=100, **fields))


def _scrape(metrics: RunMetrics) -> dict[str, dict[tuple, float]]:
    """Every sample, by name, then by its labels (sorted (name, value) pairs)."""
    registry = CollectorRegistry()
    registry.register(metrics)
    samples: dict[str, dict[tuple, float]] = {}
    for family in text_string_to_metric_families(generate_latest(registry).decode()):
        for sample in family.samples:
            samples.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return samples


def _of(samples: dict, name: str, **labels: str) -> float:
    return samples[name][tuple(sorted({"run_id": "run-m1", **labels}.items()))]


def _live(calls: list[float], retries: int = 0, **fields) -> LiveFigures:
    return LiveFigures(latency=live_figures.of_seconds(calls), retries=retries, **fields)


def test_names_and_labels_follow_prometheus_conventions():
    collector = _collector(rate=1000.0, duration_s=10.0)
    collector.state.start_at = time.time()
    collector.record_progress(WorkerProgress(worker=0, events=5, live=_live([0.001], behind_s=0.0, max_lag_s=0.01,
                                                                             queries={"count-events": QueryProgress()})))
    registry = CollectorRegistry()
    registry.register(RunMetrics(collector.state))
    families = list(text_string_to_metric_families(generate_latest(registry).decode()))
    assert {family.name for family in families} >= {
        "iotbench_run_info", "iotbench_run_phase", "iotbench_events", "iotbench_call_duration_seconds", "iotbench_schedule_lag_seconds",
        "iotbench_query_duration_seconds", "iotbench_errors", "iotbench_retries", "iotbench_prefill_events", "iotbench_workers",
        "iotbench_target_events_per_second", "iotbench_timed_phase_start_timestamp_seconds"}
    for family in families:
        assert family.documentation, family.name
        for sample in family.samples:
            assert NAME.match(sample.name), sample.name
            assert set(sample.labels) - {"le"} <= BOUNDED_LABELS, sample.name
            if family.type == "counter":
                assert sample.name.endswith("_total") or sample.name.endswith("_created"), sample.name
            if family.type == "histogram":
                assert family.name.endswith("_seconds"), family.name
            if family.type == "gauge" and family.name not in ("iotbench_workers", "iotbench_workers_ready", "iotbench_workers_finished",
                                                              "iotbench_run_phase", "iotbench_planned_events"):
                assert family.name.endswith(UNITS), family.name


def test_every_worker_starts_at_zero_and_shows_its_last_report():
    collector = _collector()
    samples = _scrape(RunMetrics(collector.state))
    assert _of(samples, "iotbench_run_phase", phase="preparing") == 1.0 and _of(samples, "iotbench_run_phase", phase="done") == 0.0
    assert _of(samples, "iotbench_run_info", target="pg", module="null", task="insert") == 1.0
    for worker in ("0", "1", "2"):
        assert _of(samples, "iotbench_events_total", worker=worker) == 0.0
        assert _of(samples, "iotbench_call_duration_seconds_count", worker=worker) == 0.0
        assert _of(samples, "iotbench_call_duration_seconds_bucket", worker=worker, le="+Inf") == 0.0
    assert "iotbench_schedule_lag_seconds" not in samples  # closed loop: no schedule
    assert _of(samples, "iotbench_planned_events") == 3000.0

    collector.record_progress(WorkerProgress(worker=1, events=300, prefilled=50, live=_live([0.001, 0.002, 0.2], retries=2)))
    samples = _scrape(RunMetrics(collector.state))
    assert _of(samples, "iotbench_events_total", worker="1") == 300.0
    assert _of(samples, "iotbench_prefill_events_total", worker="1") == 50.0
    assert _of(samples, "iotbench_retries_total", worker="1") == 2.0
    assert _of(samples, "iotbench_call_duration_seconds_count", worker="1") == 3.0
    assert _of(samples, "iotbench_call_duration_seconds_sum", worker="1") == pytest.approx(0.203)
    assert _of(samples, "iotbench_call_duration_seconds_bucket", worker="1", le="0.0025") == 2.0
    assert _of(samples, "iotbench_call_duration_seconds_bucket", worker="1", le="0.25") == 3.0
    assert _of(samples, "iotbench_events_total", worker="0") == 0.0


def test_a_result_sets_the_final_figures_and_a_late_report_does_not_set_them_back():
    collector = _collector(workers=2)  # one result of two: the run goes on
    collector.state.phase, collector.state.start_at = "running", time.time()
    collector.record_progress(WorkerProgress(worker=0, events=100, live=_live([0.001])))
    final = _live([0.001, 0.001, 0.003], retries=1)
    collector.record_result(WorkerResult(worker=0, started_at=time.time(), finished_at=time.time(), events=300, calls=3, live=final))
    collector.record_progress(WorkerProgress(worker=0, events=200, live=_live([0.001, 0.001])))  # sent before the result
    samples = _scrape(RunMetrics(collector.state))
    assert _of(samples, "iotbench_events_total", worker="0") == 300.0
    assert _of(samples, "iotbench_call_duration_seconds_count", worker="0") == 3.0
    assert _of(samples, "iotbench_retries_total", worker="0") == 1.0
    assert _of(samples, "iotbench_workers_finished") == 1.0


def test_errors_count_failed_queries_and_the_failure_of_a_worker():
    collector = _collector(workers=2)
    queries = {"count-events": QueryProgress(latency=live_figures.of_seconds([0.5, 0.7]), errors=0),
               "newest-per-device": QueryProgress(errors=1)}
    collector.record_progress(WorkerProgress(worker=0, events=0, live=LiveFigures(errors=1, queries=queries)))
    collector.record_failure(WorkerFailure(worker=1, error="connection reset"))
    samples = _scrape(RunMetrics(collector.state))
    assert _of(samples, "iotbench_errors_total", worker="0") == 1.0
    assert _of(samples, "iotbench_errors_total", worker="1") == 1.0
    assert _of(samples, "iotbench_query_errors_total", worker="0", query="newest-per-device") == 1.0
    assert _of(samples, "iotbench_query_duration_seconds_count", worker="0", query="count-events") == 2.0
    assert _of(samples, "iotbench_query_duration_seconds_sum", worker="0", query="count-events") == pytest.approx(1.2)
    assert _of(samples, "iotbench_run_phase", phase="failed") == 1.0


def test_a_stopped_collector_waits_only_for_a_scraper_that_comes_soon_and_has_not_read_the_end():
    metrics = RunMetrics(_collector().state)
    assert metrics.next_scrape_in() is None  # never scraped: nobody to wait for
    list(metrics.collect())
    assert metrics.next_scrape_in() == 0.0  # scraped once: when next is not known, so it is waited for
    now = time.monotonic()
    metrics.scraped_at = [now - 30.0, now]  # every 30 s: too far apart to wait for
    assert metrics.next_scrape_in() > FINAL_SCRAPE_WAIT_S
    metrics.wait_for_final_scrape()  # returns at once
    metrics.state.phase = "done"
    list(metrics.collect())  # a scrape after the end...
    assert not metrics.final_scraped.is_set()
    metrics.sent()  # ...once its answer has gone out
    assert metrics.final_scraped.is_set()
    metrics.wait_for_final_scrape()  # nothing left to wait for


def test_a_final_answer_sent_too_late_for_the_scrapers_timeout_does_not_count_as_read():
    metrics = RunMetrics(_collector().state)
    metrics.state.phase = "done"
    metrics.arrived("1")  # a scraper every second: it gives up on an answer after 1 s
    list(metrics.collect())
    metrics._scrape.arrived -= 0.8  # the answer leaves 0.8 s after the request came: maybe dropped
    metrics.sent()
    assert not metrics.final_scraped.is_set()
    metrics.arrived("1")  # the next scrape, answered at once
    list(metrics.collect())
    metrics.sent()
    assert metrics.final_scraped.is_set()


def test_a_scrape_that_names_no_timeout_counts_once_its_answer_is_sent():
    metrics = RunMetrics(_collector().state)
    metrics.state.phase = "done"
    for header in (None, "not a number"):
        metrics.final_scraped.clear()
        metrics.arrived(header)
        list(metrics.collect())
        metrics._scrape.arrived -= 30.0
        metrics.sent()
        assert metrics.final_scraped.is_set(), header


def test_every_metric_the_dashboard_asks_for_is_one_the_collector_serves():
    from tests.scraper import dashboard_queries

    collector = _collector(rate=1000.0, duration_s=10.0, query_workers=1)
    collector.state.start_at = time.time()
    collector.record_progress(WorkerProgress(worker=0, events=1, live=_live([0.001], behind_s=0.0, max_lag_s=0.0)))
    registry = CollectorRegistry()
    registry.register(RunMetrics(collector.state))
    served = {sample.name for family in text_string_to_metric_families(generate_latest(registry).decode()) for sample in family.samples}
    served.add("process_cpu_seconds_total")  # the process collector's, registered beside the run's (collector/metrics.py)
    asked = {name for query in dashboard_queries() for name in re.findall(r"\b(?:iotbench|process)_[a-z_]+\b", query.expr)}
    assert asked and asked <= served, asked - served


def test_the_wait_for_a_final_scrape_ends_before_either_platform_kills_the_collector():
    from iotdb_bench.cli.run.platforms.local import REPO_ROOT, STOP_GRACE_S

    job = (REPO_ROOT / "iotdb_bench" / "deployment" / "templates" / "collector-job.yaml").read_text()
    [grace] = (int(line.split(":")[1]) for line in job.splitlines() if "terminationGracePeriodSeconds" in line)
    assert min(STOP_GRACE_S, grace) > FINAL_SCRAPE_WAIT_S
