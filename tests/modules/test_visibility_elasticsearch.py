"""--visibility against the real Elasticsearch: a write is acknowledged before searches can see it,
and the lag the probe measures sits around the index's refresh interval (1 s). The count check stays
exact with the markers counted in."""

from __future__ import annotations

import os

import httpx
import pytest

from iotdb_bench.simulator.collector.visibility import PROBE_INDEX

pytestmark = [pytest.mark.elasticsearch, pytest.mark.slow]

URL = os.environ.get("ELASTICSEARCH_URL", "http://127.0.0.1:9200")
# Indices of their own (events0..events2), so the other Elasticsearch suites' `events` is not touched.
CONFIG = f"""\
platform: local
targets:
  search:
    module: elasticsearch
    hosts: {URL}
    replicas: 0
    refresh_interval: 1s
"""


@pytest.fixture
def search(tmp_path):
    try:
        httpx.get(f"{URL}/_cluster/health", timeout=10).raise_for_status()
    except httpx.HTTPError as error:
        pytest.fail(f"Elasticsearch is not reachable at {URL} ({error}); start it with scripts/servers/start-elasticsearch.sh")
    (tmp_path / "config.yaml").write_text(CONFIG)


def test_visibility_lag_is_about_the_refresh_interval(cli, search):
    result = cli("insert", "--config", "config.yaml", "--target", "search", "--platform", "local", "-w", "2", "-r", "1",
                 "--batch", "1000", "--duration", "8", "--tables", "3", "--visibility", timeout=300)
    assert result.code == 0, result.stderr
    [run] = result.results()["runs"]
    report = run["report"]
    check = report["verification"]
    assert check["ok"] and check["counted"] == check["expected"] == check["count_before"] + check["inserted"] + check["markers"]
    lag = report["visibility"]
    assert lag["markers"] >= 3 and lag["seen"] == lag["markers"] == check["markers"] and lag["error"] is None
    # Visible at the next refresh, 1 s apart: half a second on average, plus the write; never forced by the probe.
    assert 300 <= lag["lag"]["p50_ms"] <= 2000, lag
    assert lag["lag"]["p50_ms"] > lag["acknowledged"]["p50_ms"]
    httpx.post(f"{URL}/events0/_refresh", timeout=30).raise_for_status()
    found = httpx.post(f"{URL}/events0/_count", json={"query": {"term": {"device_id": f"w{PROBE_INDEX:06d}-d000000"}}}, timeout=30)
    assert found.json()["count"] == lag["markers"]
