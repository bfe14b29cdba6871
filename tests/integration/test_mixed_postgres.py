"""Mixed workload and visibility lag against the real PostgreSQL, in a database of its own: query
latencies under ingest and idle, the visibility lag of a database that makes a write visible when it
commits (near zero), exact count checks with the markers counted in, and --compare-idle."""

from __future__ import annotations

import pytest

from iotdb_bench.simulator.collector.visibility import PROBE_INDEX
from tests.conftest import dedicated_database, pg_connect

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

DATABASE = "iotbench_mixed"
QUERIES = ("temperature-stats", "newest-per-device")


@pytest.fixture
def pg(pg_env):
    return dedicated_database(pg_env, DATABASE)


def test_mixed_run_reports_query_latency_under_ingest_and_idle_and_near_zero_visibility_lag(cli, pg):
    result = cli("insert", "--target", "postgresql-local", "-w", "2", "-r", "1", "--batch", "1000", "--duration", "5",
                 "--prefill", "50000", "--query-workers", "2", "--queries", ",".join(QUERIES), "--visibility", "--compare-idle",
                 env=pg, timeout=300)
    assert result.code == 0, result.stderr
    document = result.results()
    mixed, alone = (run["report"] for run in document["runs"])
    for report in (mixed, alone):
        check = report["verification"]
        assert check["ok"] and check["counted"] == check["expected"] == check["count_before"] + 50_000 + check["inserted"] + check["markers"]

    assert set(mixed["queries_under_ingest"]) == set(QUERIES)
    for name, figures in mixed["queries_under_ingest"].items():
        assert not figures["errors"], (name, figures["errors"])
        assert figures["under_ingest"]["calls"] >= 2, name
        assert figures["idle"]["calls"] == 6, name  # 2 clients x 3 executions on the idle data
        assert 0 < figures["under_ingest"]["p50_ms"] <= figures["under_ingest"]["max_ms"]
    rows = {row["query"]: row for row in document["queries_under_ingest"]}
    assert set(rows) == set(QUERIES) and all(row["idle_p50_ms"] > 0 for row in rows.values())

    lag = mixed["visibility"]
    assert lag["markers"] >= 10 and lag["seen"] == lag["markers"] and lag["unseen"] == 0 and lag["error"] is None
    assert lag["lag"]["p50_ms"] < 50, lag  # visible at commit: about one write call
    with pg_connect(pg) as conn:
        markers = conn.execute("SELECT count(*) FROM events WHERE device_id = %s", (f"w{PROBE_INDEX:06d}-d000000",)).fetchone()[0]
    # The table holds the markers of both runs (the twin run ran with --visibility too, on clean tables: only its own).
    assert markers == alone["visibility"]["markers"]

    [row] = document["inserts"]
    assert row["visibility_p50_ms"] == pytest.approx(lag["lag"]["p50_ms"]) and row["visibility_unseen"] == 0
    assert row["throughput_without_queries"]["avg"] == alone["figures"]["throughput"] > 0
    assert "Queries under ingest" in result.stdout and "Visibility lag" in result.stdout
