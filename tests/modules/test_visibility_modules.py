"""--visibility's marker look-up on the other real servers: MariaDB (batches and single inserts),
Cassandra, InfluxDB 1.8, ClickHouse and QuestDB. Each run's markers are all seen, the count check holds exactly
with the markers counted in; the lag of the databases that make a write visible when they acknowledge
it stays small, QuestDB's shows its asynchronous WAL apply. Keyspace, database and tables of their own."""

from __future__ import annotations

import os

import pytest

pytestmark = pytest.mark.slow

CONFIG = f"""\
platform: local
targets:
  influx:
    module: influxdb
    url: {os.environ.get("INFLUXDB_URL", "http://127.0.0.1:8086")}
    token: "-"
    org: "-"
    bucket: iotbench_visibility/autogen
  cassandra:
    module: cassandra
    contact_points: 127.0.0.1
    port: 9042
    keyspace: iotbench_visibility
    replication_factor: 1
  clickhouse:
    module: clickhouse
    host: 127.0.0.1
    port: 19000
    user: default
    database: iotbench_visibility
  questdb:
    module: questdb
    host: 127.0.0.1
  mariadb:
    module: mysql
    host: 127.0.0.1
    port: 3306
    user: bench
    database: bench
    password: "${{MYSQL_PASSWORD}}"
"""


def visibility_run(cli, tmp_path, target: str, *args: str) -> dict:
    (tmp_path / "config.yaml").write_text(CONFIG)
    result = cli("insert", "--config", "config.yaml", "--target", target, "-w", "1", "-r", "1", "--duration", "3", "--visibility", *args,
                 env={"MYSQL_PASSWORD": os.environ.get("MYSQL_PASSWORD", "bench")}, timeout=300)
    assert result.code == 0, result.stderr
    [run] = result.results()["runs"]
    report = run["report"]
    check, lag = report["verification"], report["visibility"]
    assert check["ok"] and check["counted"] == check["expected"] == check["count_before"] + check["inserted"] + check["markers"]
    assert lag["markers"] >= 5 and lag["seen"] == lag["markers"] == check["markers"] and lag["error"] is None
    return lag


@pytest.mark.mysql
@pytest.mark.parametrize("mode", [["--batch", "500"], []], ids=["batch", "single"])
def test_mariadb_markers_are_visible_at_commit(cli, tmp_path, mode):
    # Seven tables (events0..events6): not the `events` of the other MariaDB suites.
    lag = visibility_run(cli, tmp_path, "mariadb", "--tables", "7", *mode)
    assert lag["lag"]["p50_ms"] < 100


@pytest.mark.cassandra
def test_cassandra_markers_are_found_by_their_whole_key(cli, tmp_path):
    lag = visibility_run(cli, tmp_path, "cassandra", "--batch", "500")
    assert lag["lag"]["p50_ms"] < 100


@pytest.mark.influxdb
def test_influxdb_markers_are_found_in_their_own_millisecond(cli, tmp_path):
    lag = visibility_run(cli, tmp_path, "influx", "--batch", "500")
    assert lag["lag"]["p50_ms"] < 200


@pytest.mark.questdb
def test_questdb_markers_become_visible_after_the_acknowledgement(cli, tmp_path):
    # Five tables (events0..events4): not those of the QuestDB suite.
    lag = visibility_run(cli, tmp_path, "questdb", "--batch", "500", "--tables", "5")
    # The HTTP answer comes when the rows are in the write-ahead log; queries see them once it is applied.
    assert lag["lag"]["p50_ms"] >= lag["acknowledged"]["p50_ms"] and lag["lag"]["p50_ms"] < 5000


@pytest.mark.clickhouse
def test_clickhouse_markers_are_visible_when_the_insert_returns(cli, tmp_path):
    lag = visibility_run(cli, tmp_path, "clickhouse", "--batch", "500")
    assert lag["lag"]["p50_ms"] < 200
