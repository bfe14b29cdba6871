"""Query files end to end through the CLI: the starter file in one study over SQLite, PostgreSQL,
TimescaleDB, MariaDB, QuestDB and ClickHouse (real servers), every answer agreed; then one target's
data changed behind the tool's back and the difference named with the targets and the first differing
row; and bad query files (a syntax error, a missing language, an unknown parameter) refused in one
line, exit 2, nothing run and nothing left behind."""

from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path

import pytest

from tests.conftest import dedicated_database, pg_connect, pg_env_or_fail, postgres_env, run_cli, timescaledb_env

DATABASE = "iotbench_queryfile"
CLICKHOUSE = (os.environ.get("CLICKHOUSE_HOST", "127.0.0.1"), int(os.environ.get("CLICKHOUSE_PORT", "19000")))

CONFIG = """\
platform: local
targets:
  sqlite: {{module: sqlite, platform: local, path: {folder}/data.sqlite3}}
  postgresql-local: {{module: postgres, platform: local, connection_string: "host={pg[PGHOST]} port={pg[PGPORT]} dbname={database} user={pg[PGUSER]}", password: "${{PGPASSWORD}}"}}
  timescaledb-local: {{module: timescaledb, platform: local, connection_string: "host={ts[PGHOST]} port={ts[PGPORT]} dbname={database} user={ts[PGUSER]}", password: "${{PGPASSWORD}}"}}
  mariadb: {{module: mysql, platform: local, host: "${{MYSQL_HOST:-127.0.0.1}}", port: "${{MYSQL_PORT:-3306}}", user: "${{MYSQL_USER:-bench}}", database: "${{MYSQL_DATABASE:-bench}}", password: "${{MYSQL_PASSWORD:-bench}}"}}
  questdb-local: {{module: questdb, platform: local, host: "${{QUESTDB_HOST:-127.0.0.1}}", http_port: "${{QUESTDB_HTTP_PORT:-9000}}", pg_port: "${{QUESTDB_PG_PORT:-8812}}", password: "${{QUESTDB_PASSWORD:-quest}}"}}
  clickhouse-local: {{module: clickhouse, platform: local, host: {clickhouse[0]}, port: {clickhouse[1]}, user: default, database: {database}}}
"""

STUDY = """\
name: starter
targets: [sqlite, postgresql-local, timescaledb-local, mariadb, questdb-local, clickhouse-local]
workers: [2]
runs: 1
workloads:
  - name: load
    insert: {num-inserts: 1500, batch: 500, devices-per-worker: 5}
  - name: starter
    query: {query-file: starter}
    runs: 2
"""
STARTER = ["last-value-per-device", "day-downsampling", "devices-over-limit", "readings-per-gateway"]


@pytest.fixture
def six_targets(tmp_path):
    """The config of the six targets, each in a database of this suite's where the server has several
    (QuestDB and MariaDB: the servers' own, shared with their suites); the environment the CLI needs."""
    pg = dedicated_database(pg_env_or_fail(), DATABASE)
    ts = dedicated_database(pg_env_or_fail(timescaledb_env(), "timescaledb"), DATABASE)
    (tmp_path / "config.yaml").write_text(CONFIG.format(folder=tmp_path, pg=pg, ts=ts, database=DATABASE, clickhouse=CLICKHOUSE))
    return {**os.environ, "PGPASSWORD": postgres_env()["PGPASSWORD"], "MYSQL_PASSWORD": os.environ.get("MYSQL_PASSWORD", "bench")}


def study_json(folder: Path) -> dict:
    return json.loads((folder / "study.json").read_text())


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.timescaledb
@pytest.mark.mysql
@pytest.mark.questdb
@pytest.mark.clickhouse
@pytest.mark.xdist_group("questdb")  # QuestDB's and MariaDB's tables are their suites' (the others are this suite's own)
def test_starter_file_agrees_on_six_databases_and_a_changed_row_is_named(tmp_path, six_targets):
    (tmp_path / "study.yaml").write_text(STUDY)
    folder = tmp_path / "results" / "study-starter"
    done = run_cli(["study", "study.yaml", "--config", "config.yaml"], tmp_path, env=six_targets)
    assert done.code == 0, done.stderr + done.stdout[-3000:]
    document = study_json(folder)
    verdicts = {row["query"]: row["verdict"] for row in document["agreements"]}
    assert verdicts == dict.fromkeys(STARTER, "agreed (6 targets)")
    assert "Answers across targets of starter" in done.stdout and "agreed (6 targets)" in done.stdout
    for ranked in (r for r in document["rankings"] if r["workload"] == "starter"):
        assert [row["check"] for row in ranked["rows"]] == ["agreed"] * 6 and all(row["rank"] for row in ranked["rows"])
    query_cells = [cell for cell in document["cells"] if cell["workload"] == "starter"]
    for cell in query_cells:  # every execution's answer kept: digest and first rows, the same on every target
        answers = {row["query"]: [(a["parameters"], a["digest"]) for a in row["answers"]] for row in cell["queries"]}
        assert answers == {row["query"]: [(a["parameters"], a["digest"]) for a in row["answers"]] for row in query_cells[0]["queries"]}
        assert all(row["answer"] == "not checked" for row in cell["queries"])
    page = (folder / "report.html").read_text()
    assert "Answers across targets" in page and "agreed (6 targets)" in page
    assert "| starter | last-value-per-device |" in (folder / "study.md").read_text()

    # PostgreSQL's newest reading of the first device changed behind the tool's back: its answers to
    # the last value per device differ from the five others', and the study says where.
    with pg_connect(postgres_env(), DATABASE) as conn:
        conn.execute("UPDATE events SET temperature = 99.5 WHERE device_id = 'w000000-d000000' AND timestamp = "
                     "(SELECT max(timestamp) FROM events WHERE device_id = 'w000000-d000000')")
    again = run_cli(["study", "study.yaml", "--config", "config.yaml", "--set", "workloads.starter.runs=3"], tmp_path, env=six_targets)
    assert again.code == 1, again.stdout[-3000:]
    error = again.stderr.strip().splitlines()[-1]
    assert error.startswith("error: answers differ across targets: starter · last-value-per-device: DIFFERENT: sqlite, timescaledb-local, "
                            "mariadb, questdb-local, clickhouse-local vs postgresql-local: row 1: ('w000000-d000000', "), error
    assert re.search(r"row 1: \('w000000-d000000', '(?P<time>[-0-9T:.]+Z)', (?P<value>[0-9.]+)\) vs \('w000000-d000000', '(?P=time)', 99\.5\)", error), error
    verdicts = {row["query"]: row["verdict"] for row in study_json(folder)["agreements"]}
    # The highest reading per gateway and the devices over the limit see the changed reading too (the
    # windows are longer than the data); the downsampling only when it draws that device.
    assert verdicts["readings-per-gateway"].startswith("DIFFERENT: sqlite, timescaledb-local, mariadb, questdb-local, clickhouse-local vs postgresql-local")
    assert verdicts["devices-over-limit"].startswith("DIFFERENT: sqlite, timescaledb-local, mariadb, questdb-local, clickhouse-local vs postgresql-local")
    last = next(r for r in study_json(folder)["rankings"] if r["workload"] == "starter" and r["query"] == "last-value-per-device")
    assert {row["check"] for row in last["rows"]} == {"DIFFERENT"} and not any(row["rank"] for row in last["rows"])


BROKEN = """\
queries:
  - name: newest
    columns: [device, {time: time}]
    text:
      sql: SELECT device_id, max(timestamp) FROM events GROUP BY device_id
  - name: broken
    text:
      sql/sqlite: SELEC count(*) FROM events
"""
QUESTDB_ONLY = """\
queries:
  - name: latest
    text:
      sql/questdb: SELECT * FROM events LATEST ON timestamp PARTITION BY device_id
"""
UNKNOWN_PARAMETER = """\
queries:
  - name: per-device
    parameters: {device: device}
    text:
      sql: SELECT count(*) FROM events WHERE device_id = '{{ devise }}'
"""


@pytest.fixture
def sqlite_data(cli, tmp_path):
    done = cli("insert", "--target", "sqlite", "-w", "1", "-r", "1", "--num-inserts", "500", "--batch", "100", "--output", "inserted")
    assert done.code == 0, done.stderr
    return tmp_path


def results_folders(folder: Path) -> list[Path]:
    return sorted(path for path in (folder / "results").glob("*") if path.is_dir()) if (folder / "results").exists() else []


def test_a_text_the_database_refuses_is_one_line_before_any_query_runs(cli, sqlite_data):
    (sqlite_data / "broken.yaml").write_text(BROKEN)
    done = cli("query", "--target", "sqlite", "--query-file", "broken.yaml")
    assert done.code == 2
    assert done.stderr.strip().splitlines() == [
        "error: query broken on target sqlite: the database refuses its sql/sqlite text: near \"SELEC\": syntax error"], done.stderr
    assert results_folders(sqlite_data) == []  # nothing was timed: no results folder
    fine = cli("query", "--target", "sqlite", "--query-file", "broken.yaml", "--queries", "newest", "-r", "1")
    assert fine.code == 0, fine.stderr
    [results] = results_folders(sqlite_data)
    row = json.loads((results / "results.json").read_text())["queries"][0]
    assert (row["query"], row["rows"], row["answer"]) == ("newest", 10, "not checked")
    [kept] = row["answers"]
    assert kept["rows"] == 10 and kept["first_rows"][0] == ["w000000-d000000", "2026-01-01T00:00:49.000Z"]
    assert kept["digest"] in (results / "report.html").read_text() and kept["digest"] in (results / "answers.csv").read_text()


def test_a_query_without_a_text_for_the_target_and_an_unknown_parameter_are_refused_before_anything_runs(cli, sqlite_data):
    (sqlite_data / "questdb.yaml").write_text(QUESTDB_ONLY)
    done = cli("query", "--target", "sqlite", "--query-file", "questdb.yaml")
    assert done.code == 2
    assert done.stderr.strip().splitlines() == [
        "error: query latest has no text for target sqlite: module 'sqlite' reads sql/sqlite or sql (questdb.yaml)"]
    (sqlite_data / "unknown.yaml").write_text(UNKNOWN_PARAMETER)
    done = cli("query", "--target", "sqlite", "--query-file", "unknown.yaml")
    assert done.code == 2
    assert done.stderr.strip().splitlines() == [
        "error: invalid query file unknown.yaml: queries.per-device: text.sql: {{ devise }} is not a "
        "parameter of the query (its parameters: device)"]
    assert results_folders(sqlite_data) == []
    # In a study, before its first cell: the cell is checked by its command as the file is read.
    (sqlite_data / "study.yaml").write_text("name: lang\ntargets: [sqlite]\nworkloads:\n  - {name: load, insert: {num-inserts: 100}}\n"
                                            "  - {name: mine, query: {query-file: questdb.yaml}}\n")
    done = cli("study", "study.yaml")
    assert done.code == 2
    assert done.stderr.strip().splitlines() == [
        f"error: invalid study file study.yaml: workloads.mine (query) on target sqlite: query latest has no text for target sqlite: "
        f"module 'sqlite' reads sql/sqlite or sql ({sqlite_data / 'questdb.yaml'})"]
    assert not (sqlite_data / "results" / "study-lang").exists()


CASSANDRA_CONFIG = """\
platform: local
targets:
  sqlite: {{module: sqlite, platform: local, path: {folder}/data.sqlite3}}
  cassandra-local: {{module: cassandra, platform: local, contact_points: "${{CASSANDRA_HOST:-127.0.0.1}}", port: "${{CASSANDRA_PORT:-9042}}", keyspace: {keyspace}}}
"""


@pytest.mark.slow
@pytest.mark.cassandra
def test_cql_texts_agree_with_sql_and_a_query_cql_cannot_ask_is_left_out_with_its_reason(tmp_path):
    from cassandra.cluster import Cluster

    keyspace = f"iotbench_queryfile_{os.getpid()}"
    (tmp_path / "config.yaml").write_text(CASSANDRA_CONFIG.format(folder=tmp_path, keyspace=keyspace))
    try:
        for target in ("sqlite", "cassandra-local"):
            done = run_cli(["insert", "--target", target, "--config", "config.yaml", "-w", "2", "-r", "1", "--num-inserts", "1000",
                            "--batch", "250", "--devices-per-worker", "5", "--output", "inserted"], tmp_path)
            assert done.code == 0, done.stderr
            done = run_cli(["query", "--target", target, "--config", "config.yaml", "--query-file", "starter", "-w", "2", "-r", "2",
                            "--output", target], tmp_path)
            assert done.code == 0, done.stderr
        assert ("warning: query readings-per-gateway is not asked on target cassandra-local: CQL has no joins (a Cassandra application "
                "keeps the metadata in the readings' rows, or joins in the client)") in done.stderr
        compared = run_cli(["compare", *(str(path) for path in sorted(tmp_path.glob("*/*-query"))), "--output", "compared"], tmp_path)
        assert compared.code == 0, compared.stderr
        rows = {(row["database"], row["query"]): row["agreement"] for row in csv.DictReader((tmp_path / "compared" / "queries.csv").open())}
        assert rows == {**{(target, query): "agreed (2 targets)" for target in ("sqlite", "cassandra-local") for query in STARTER[:3]},
                        ("sqlite", "readings-per-gateway"): "not checked: answered by one target only"}
    finally:
        cluster = Cluster([os.environ.get("CASSANDRA_HOST", "127.0.0.1")], port=int(os.environ.get("CASSANDRA_PORT", "9042")))
        cluster.connect().execute(f"DROP KEYSPACE IF EXISTS {keyspace}", timeout=120)
        cluster.shutdown()
