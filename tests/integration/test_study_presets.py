"""The shipped study presets (iotdb_bench/studies/) at a reduced size on this machine's servers: each runs
to the end, every cell's check passes, and the tables and the score the seed asks for are there."""

from __future__ import annotations

import json
import os

import pytest

from tests.conftest import dedicated_database, run_cli

pytestmark = pytest.mark.slow

COST = "cost: {per_hour: 0.192, currency: USD}"


def run_preset(tmp_path, env, *args):
    result = run_cli(["study", *args], tmp_path, env={**os.environ, **env}, timeout=900)
    assert result.code == 0, result.stderr
    name = args[0]
    folder = tmp_path / "results" / f"study-{name}"
    document = json.loads((folder / "study.json").read_text())
    assert document["status"] == "complete"
    assert (folder / "report.html").is_file()
    return document, (folder / "study.md").read_text()


def ranking(document, workload, figure=None, query=None):
    return next(r for r in document["rankings"] if r["workload"] == workload and (figure is None or r["figure"] == figure)
                and r["query"] == query)


@pytest.mark.postgres
def test_seed_001_insert_modes_and_the_five_queries(tmp_path, pg_env):
    env = dedicated_database(pg_env, "iotbench_seed001")
    document, markdown = run_preset(tmp_path, env, "seed-001", "--targets", "sqlite,postgresql-local", "--scale", "0.001",
                                    "--set", "workers=[1]", "--set", "runs=1", "--set", "workloads.fill.workers=[2]")
    statuses = {(c["target"], c["workload"]): c["status"] for c in document["cells"]}
    assert statuses[("postgresql-local", "transaction")] == "ok" and statuses[("sqlite", "transaction")] == "not supported"
    modes = {c["workload"]: c["inserts"][0]["insert_mode"] for c in document["cells"] if c["target"] == "postgresql-local" and c["inserts"]}
    assert "COPY" in modes["batch"] and "values" in modes["values-lists"] and "single" in modes["single"]
    for query in ("count-events", "temperature-min-max", "temperature-stats", "temperature-stats-per-device", "newest-per-device"):
        table = ranking(document, "queries", query=query)
        assert [row["check"] for row in table["rows"]] == ["ok", "ok"] and all(row["rank"] for row in table["rows"])
    assert "## Inserts/s by target, workload and worker count" in markdown and "| postgresql-local | values-lists |" in markdown
    # the transaction mode is PostgreSQL's alone: the default score leaves it out and both targets have a score
    assert all(item["score"] is not None for item in document["scores"])
    assert not any(term["workload"] == "transaction" for term in document["scores"][0]["terms"])


@pytest.mark.postgres
def test_seed_002_strategies_and_shapes_with_storage_cpu_and_memory(tmp_path, pg_env):
    env = dedicated_database(pg_env, "iotbench_seed002")
    document, markdown = run_preset(tmp_path, env, "seed-002", "--targets", "postgresql", "--scale", "0.002")
    cells = {c["workload"]: c for c in document["cells"]}
    assert len(cells) == 9 and all(c["status"] == "ok" for c in cells.values())
    assert cells["sharded-light"]["workers"] == 4 and "--tables" in cells["sharded-light"]["args"]
    assert "commit every 1 s" in cells["transaction-large"]["inserts"][0]["insert_mode"]
    for cell in cells.values():
        resources = cell["inserts"][0]["resources"]
        assert resources["storage_bytes_per_event"] > 0 and resources["db_cpu_s_per_million"] > 0 and resources["db_memory_peak_bytes"] > 0
        assert cell["inserts"][0]["throughput"]["avg"] > 0
    assert ranking(document, "transaction-light", "storage_bytes_per_event")["rows"][0]["rank"] == 1
    assert document["scores"][0]["score"] == pytest.approx(100.0)
    assert "transaction-light Storage B/ev" in markdown and "transaction-light DB peak MB" in markdown  # the score's inputs, named as their tables head them


@pytest.mark.postgres
@pytest.mark.questdb
@pytest.mark.xdist_group("questdb")  # its own PostgreSQL database, but QuestDB's tables are the questdb suite's
def test_seed_003_points_single_groupby_storage_cost_and_score(tmp_path, pg_env):
    """Seed 003 reduced (--scale 0.0001: an hour of TSBS's cpu-only data from 8 hosts, 1 execution per
    worker): its four figures and the score for two databases that store TSBS's data here."""
    env = dedicated_database(pg_env, "iotbench_seed003")
    targets = f"targets=[{{name: questdb-local, {COST}}}, {{name: postgresql-local, {COST}}}]"
    document, markdown = run_preset(tmp_path, env, "seed-003", "--scale", "0.0001", "--set", "workers=[2]", "--set", targets)
    cells = {c["key"]: c for c in document["cells"]}
    assert {c["status"] for c in cells.values()} == {"ok"}
    ingest = ranking(document, "ingest", "values_per_s")
    for row in ingest["rows"]:  # points/s: ten values per row of TSBS's cpu-only data
        assert row["value"] == pytest.approx(cells[row["cell"]]["inserts"][0]["throughput"]["avg"] * 10)
    latency = ranking(document, "single-groupby", "latency_s", "single-groupby-1-1-1")
    assert [row["check"] for row in latency["rows"]] == ["ok", "ok"]  # every execution's answer recomputed and checked
    per_cost = ranking(document, "single-groupby", "queries_per_cost", "single-groupby-1-1-1")
    for row in per_cost["rows"]:  # queries one dollar buys: workers / mean seconds x 3600 / price per hour
        query = next(q for q in cells[row["cell"]]["queries"] if q["query"] == "single-groupby-1-1-1")
        assert row["value"] == pytest.approx(2 / query["avg_s"] * 3600 / 0.192)
    storage = ranking(document, "ingest", "storage_bytes_per_event")
    assert storage["rows"][0]["rank"] == 1 and all(row["value"] > 0 for row in storage["rows"])
    scores = document["scores"]
    assert scores[0]["rank"] == 1 and scores[0]["score"] <= 100 and all(len(item["terms"]) == 4 for item in scores)
    assert "Formula: score = 100 x exp" in markdown


@pytest.mark.postgres
@pytest.mark.berkeleydb
def test_seed_004_inserts_and_checked_scans_device_first_and_time_first(tmp_path, pg_env):
    env = dedicated_database(pg_env, "iotbench_seed004")
    document, markdown = run_preset(tmp_path, env, "seed-004", "--scale", "0.001", "--set", "workloads.insert.insert.devices=200")
    scans = ranking(document, "scan", "rows_per_s")
    assert len(scans["rows"]) == 6 and all(row["check"] == "ok" and row["rank"] for row in scans["rows"])
    modes = {c["target"]: c["inserts"][0]["insert_mode"] for c in document["cells"] if c["task"] == "insert"}
    assert "device-first keys" in modes["berkeleydb-device-first"] and "time-first keys" in modes["berkeleydb-time-first"]
    for cell in document["cells"]:
        if cell["task"] == "scan":
            assert cell["scans"][0]["rows"] == 4000 and cell["scans"][0]["check"] == "ok"
    assert "| sqlite-time-first |" in markdown and "Win = each worker's rate over every 10,000 rows" in markdown  # the scans table
