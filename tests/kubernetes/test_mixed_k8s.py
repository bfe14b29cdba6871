"""A mixed run with the visibility probe on the real cluster: the query clients are extra pods of the
worker Job (their role is in the spec), their latency under ingest and idle comes back merged, the
probe runs in the collector pod, the count check stays exact, and nothing is left behind."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.kubernetes, pytest.mark.slow]


def test_query_clients_are_pods_of_the_run_and_their_figures_come_back(cluster, tmp_path):
    from tests.conftest import run_cli

    args = ["insert", "--config", str(cluster.config), "--target", "postgresql", "--platform", "kubernetes", "-w", "2", "-r", "1",
            "--batch", "1000", "--duration", "4", "--prefill", "20000", "--query-workers", "2", "--queries", "count-events,temperature-stats",
            "--visibility"]
    result = run_cli(args, tmp_path, env=cluster.env, timeout=400)
    assert result.code == 0, result.stderr
    [run] = result.results()["runs"]
    report = run["report"]
    check = report["verification"]
    assert check["ok"] and check["counted"] == check["expected"] == check["count_before"] + 20_000 + check["inserted"] + check["markers"]
    for name, figures in report["queries_under_ingest"].items():
        assert figures["under_ingest"]["calls"] > 0 and figures["idle"]["calls"] == 6 and not figures["errors"], name
    lag = report["visibility"]
    assert lag["markers"] > 0 and lag["seen"] == lag["markers"] and lag["lag"]["p50_ms"] < 100
    # Four pods of the worker Job: the two workers and the two query clients, each with its log.
    logs = result.results_folders()[-1] / "logs" / report["run_id"]
    assert sorted(path.name for path in logs.iterdir()) == ["collector.log", *(f"worker-{i}.log" for i in range(4))]
    assert "queries under ingest" in (logs / "worker-3.log").read_text()
    assert [worker["worker"] for worker in report["workers"]] == [0, 1]
    cluster.assert_nothing_left()
