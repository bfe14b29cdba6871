"""The query clients' latency histograms of a mixed run: recorded per query and phase, merged across
clients (and pods) like the insert latencies."""

from __future__ import annotations

import pytest

from iotdb_bench.simulator.measurement.query_latency import QueryLatencyRecorder, merge_query_latencies
from iotdb_bench.simulator.spec import RunSpec


def client(samples: dict[str, dict[str, list[float]]], errors: dict[str, list[str]] | None = None):
    """The payload one query client posts: `samples[name][phase]` in seconds."""
    recorder = QueryLatencyRecorder(samples)
    for name, phases in samples.items():
        for phase, seconds in phases.items():
            for value in seconds:
                recorder.record(name, phase, value)
    for name, messages in (errors or {}).items():
        for message in messages:
            recorder.error(name, message)
    return recorder.payload()


def test_histograms_of_several_clients_merge_per_query_and_phase():
    # Client A: 99 fast executions under ingest; client B: one slow one. The merged p99 is A's, the max B's.
    a = client({"count-events": {"ingest": [0.010] * 99, "idle": [0.004, 0.006]}})
    b = client({"count-events": {"ingest": [2.0], "idle": [0.005]}})
    merged = merge_query_latencies([a, b], ["count-events"])["count-events"]
    assert merged.under_ingest.calls == 100 and merged.idle.calls == 3
    assert merged.under_ingest.p50_ms == pytest.approx(10.0, rel=1e-3)
    assert merged.under_ingest.p99_ms == pytest.approx(10.0, rel=1e-3)
    assert merged.under_ingest.max_ms == pytest.approx(2000.0, rel=1e-3)
    assert merged.idle.p50_ms == pytest.approx(5.0, rel=1e-3) and merged.idle.max_ms == pytest.approx(6.0, rel=1e-3)
    assert merged.slowdown == pytest.approx(2.0, rel=1e-2)


def test_merge_is_the_same_whichever_client_holds_the_samples():
    samples = [0.001 * (i + 1) for i in range(200)]
    one = merge_query_latencies([client({"q": {"ingest": samples}})], ["q"])["q"]
    split = merge_query_latencies([client({"q": {"ingest": samples[::2]}}), client({"q": {"ingest": samples[1::2]}})], ["q"])["q"]
    assert one.under_ingest == split.under_ingest
    assert split.under_ingest.p50_ms == pytest.approx(100.0, rel=2e-3)


def test_a_query_no_client_could_run_keeps_its_errors_and_no_latency():
    a = client({"newest-per-device": {}}, {"newest-per-device": ["timeout", "timeout", "reset"]})
    b = client({"newest-per-device": {}}, {"newest-per-device": ["reset"]})
    merged = merge_query_latencies([a, b], ["newest-per-device", "count-events"])
    assert merged["newest-per-device"].under_ingest is None and merged["newest-per-device"].idle is None
    assert merged["newest-per-device"].errors == ["timeout", "reset"]
    assert merged["count-events"].under_ingest is None and merged["newest-per-device"].slowdown is None


def test_query_clients_come_after_the_workers():
    spec = RunSpec(run_id="r", task="insert", target="t", module="sqlite", workers=3, query_workers=2)
    assert spec.processes == 5
    assert [spec.role_of(i) for i in range(5)] == ["worker"] * 3 + ["query-client"] * 2
    assert RunSpec(run_id="r", task="query", target="t", module="sqlite", workers=2).role_of(1) == "worker"


@pytest.mark.parametrize(("fields", "problem"), [
    ({"task": "query", "query_workers": 1}, "apply to insert runs"),
    ({"task": "query", "visibility": True}, "apply to insert runs"),
    ({"task": "insert", "query_rate": 5.0}, "--query-rate needs --query-workers"),
])
def test_spec_refuses_mixed_options_that_do_not_apply(fields, problem):
    with pytest.raises(ValueError, match=problem):
        RunSpec(run_id="r", target="t", module="sqlite", workers=1, **fields)
