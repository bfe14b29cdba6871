"""MetricsQL durations against the real VictoriaMetrics: a window of a length its parser cuts short by a
millisecond (2076160 ms, the last partial hour of a double-groupby-1 window that answered WRONG) reaches
its first sample only as the module writes it."""

from __future__ import annotations

import os
import uuid

import httpx
import pytest

from iotdb_bench.simulator.modules.victoriametrics.durations import metricsql_ms

pytestmark = pytest.mark.victoriametrics

URL = os.environ.get("VICTORIAMETRICS_URL", "http://127.0.0.1:8428")
START_S = 1451649600  # 2016-01-01T12:00:00Z, a sample here and 10 s later
CUT_SHORT_MS = 2076160  # 2076160 x 0.001 x 1000 = 2076159.9999999998


@pytest.fixture(scope="module")
def metric():
    name = f"durations_probe_{uuid.uuid4().hex[:8]}"
    lines = "".join(f"{name} value=1 {(START_S + step) * 10**9}\n" for step in (0, 10))
    httpx.post(f"{URL}/write", content=lines, timeout=30).raise_for_status()
    httpx.get(f"{URL}/internal/force_flush", timeout=30).raise_for_status()
    yield name
    httpx.post(f"{URL}/api/v1/admin/tsdb/delete_series", data={"match[]": name}, timeout=30).raise_for_status()


def count(metric: str, window: str, at_ms: int, offset: str = "") -> int:
    query = f"count_over_time({metric}_value[{window}]{f' offset {offset}' if offset else ''})"
    answer = httpx.get(f"{URL}/api/v1/query", params={"query": query, "time": f"{at_ms / 1000:.3f}", "nocache": "1"}, timeout=30)
    answer.raise_for_status()
    return sum(int(one["value"][1]) for one in answer.json()["data"]["result"])


def test_a_window_the_parser_cuts_short_reaches_its_first_sample_as_written(metric):
    # (end - 2076160 ms, end] starts 1 ms before the first sample: it holds both samples.
    end_ms = START_S * 1000 + CUT_SHORT_MS - 1
    assert count(metric, f"{CUT_SHORT_MS}ms", end_ms) == 1  # VictoriaMetrics' own reading: 1 ms short, the first sample left out
    assert count(metric, metricsql_ms(CUT_SHORT_MS), end_ms) == 2
    # The same window as the module's partial buckets write it: evaluated at its start, offset to its end.
    assert count(metric, metricsql_ms(CUT_SHORT_MS), START_S * 1000, offset=metricsql_ms(-(CUT_SHORT_MS - 1))) == 2
    # Whole seconds stay whole seconds; a window just short of the first sample still leaves it out.
    assert count(metric, metricsql_ms(CUT_SHORT_MS - 1), end_ms) == 1
    assert metricsql_ms(3_600_000) == "3600s" and metricsql_ms(-60_000) == "-60s"
