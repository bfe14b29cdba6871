"""The timescaledb module's SQL on the real local PostgreSQL, with TimescaleDB itself FAKED.

TimescaleDB cannot be installed here (no Debian package for PostgreSQL 15 in the reachable
archives, no PyPI route). So `create_hypertable` is a test-only plpgsql stand-in in its own schema:
it records every call's arguments and enforces the one rule of the real function that shapes the
module's schema (unique indexes must contain the time column); `time_bucket(interval, timestamptz)`
is a stand-in too (the device-downsample query uses it). Everything else (COPY, values lists,
verification, queries and their answer checks, scans) runs for real on PostgreSQL.
"""

from __future__ import annotations

import datetime as dt

import pytest

from iotdb_bench.simulator.events import EVENT_INTERVAL_MS, TIME_ORIGIN_MS
from iotdb_bench.simulator.modules import timescaledb
from iotdb_bench.simulator.spec import RunSpec
from tests.conftest import dedicated_database, downsample_minutes, pg_connect, rows_per_query

pytestmark = pytest.mark.postgres

DATABASE = "iotbench_timescale_fake"

CONFIG = """\
platform: local
targets:
  timescaledb-fake:
    module: timescaledb
    platform: local
    connection_string: "host=${PGHOST} port=${PGPORT} dbname=${PGDATABASE} user=${PGUSER}"
    password: "${PGPASSWORD}"
    create_extension: false
    session_statements: "SET search_path = public, fake_timescaledb"
  timescaledb-real:
    module: timescaledb
    platform: local
    connection_string: "host=${PGHOST} port=${PGPORT} dbname=${PGDATABASE} user=${PGUSER}"
    password: "${PGPASSWORD}"
"""

# A stand-in with the real function's parameter names (named arguments must match).
FAKE_TIMESCALEDB = """
CREATE SCHEMA IF NOT EXISTS fake_timescaledb;
DROP TABLE IF EXISTS fake_timescaledb.calls;
CREATE TABLE fake_timescaledb.calls (relation text, time_column_name name, chunk_time_interval interval, if_not_exists boolean);
CREATE OR REPLACE FUNCTION fake_timescaledb.create_hypertable(
    relation regclass, time_column_name name, chunk_time_interval interval DEFAULT NULL, if_not_exists boolean DEFAULT FALSE
) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (
        SELECT 1 FROM pg_index i WHERE i.indrelid = relation AND i.indisunique AND NOT EXISTS (
            SELECT 1 FROM pg_attribute a WHERE a.attrelid = relation AND a.attnum = ANY (i.indkey) AND a.attname = time_column_name))
    THEN
        RAISE EXCEPTION 'cannot create a unique index without the column "%" (used in partitioning)', time_column_name;
    END IF;
    INSERT INTO fake_timescaledb.calls VALUES (relation::text, time_column_name, chunk_time_interval, if_not_exists);
    RETURN TRUE;
END $$;
CREATE OR REPLACE FUNCTION fake_timescaledb.time_bucket(bucket_width interval, ts timestamptz) RETURNS timestamptz
LANGUAGE sql IMMUTABLE AS $$
    SELECT to_timestamp(floor(extract(epoch FROM ts) / extract(epoch FROM bucket_width)) * extract(epoch FROM bucket_width))
$$;
"""


@pytest.fixture
def timescale(pg_env, tmp_path):
    env = dedicated_database(pg_env, DATABASE)
    with pg_connect(env) as conn:
        conn.execute(FAKE_TIMESCALEDB)
    (tmp_path / "config.yaml").write_text(CONFIG)
    return env


def sql(env, statement: str) -> list[tuple]:
    with pg_connect(env, DATABASE) as conn:
        cursor = conn.execute(statement)
        return cursor.fetchall() if cursor.description else []


def run(cli, env, task: str, *args: str, target: str = "timescaledb-fake"):
    return cli(task, "--config", "config.yaml", "--target", target, "-r", "1", *args, env=env, timeout=300)


def test_timescaledb_sql_on_postgres_with_fake_create_hypertable(cli, timescale):
    result = run(cli, timescale, "insert", "-w", "2", "--num-inserts", "300", "--batch", "100", "--tables", "multiple",
                 "--extra-option", "chunk_interval=6 hours")
    assert result.code == 0, result.stderr
    assert result.results()["runs"][0]["report"]["verification"]["counted"] == 600
    calls = sql(timescale, "SELECT relation, time_column_name, chunk_time_interval, if_not_exists FROM fake_timescaledb.calls ORDER BY 1")
    assert calls == [(f"events{t}", "timestamp", dt.timedelta(hours=6), True) for t in range(4)]
    # The default key contains the partitioning column, as TimescaleDB requires.
    primary_key = sql(timescale, "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
                                 "AND a.attnum = ANY (i.indkey) WHERE i.indrelid = 'events0'::regclass AND i.indisprimary ORDER BY 1")
    assert primary_key == [("id",), ("timestamp",)]


def test_timescaledb_fake_hypertable_rejects_a_key_without_the_time_column(cli, timescale):
    # Proves the fake enforces the rule the module's default key exists for.
    result = run(cli, timescale, "insert", "-w", "1", "--num-inserts", "10", "--batch", "10",
                 "--extra-option", "primary_key_constraint=PRIMARY KEY (id)")
    assert result.code != 0
    assert 'cannot create a unique index without the column "timestamp"' in result.stderr


@pytest.mark.parametrize("restart", [False, True])
def test_timescaledb_fake_steps_restart_or_continue_timestamps(cli, timescale, restart):
    result = run(cli, timescale, "insert", "-w", "2", "--num-inserts", "100", "--batch", "50", "--steps", "3",
                 "--primary-key", "client", "--extra-option", f"restart_timestamps_each_step={str(restart).lower()}")
    assert result.code == 0, result.stderr
    assert [r["report"]["verification"]["counted"] for r in result.results()["runs"]] == [200, 400, 600]
    (first, last, distinct, keys), = sql(timescale, "SELECT min(timestamp), max(timestamp), count(DISTINCT timestamp), "
                                                   "count(DISTINCT id) FROM events")
    origin = dt.datetime.fromtimestamp(TIME_ORIGIN_MS / 1000, dt.UTC)
    assert first == origin and keys == 600
    events_per_worker = 300 if not restart else 100  # per-worker clock: each step starts over when restarting
    assert last == origin + dt.timedelta(milliseconds=(events_per_worker - 1) * EVENT_INTERVAL_MS)
    assert distinct == events_per_worker
    # The expected answers were kept of the events as stored (restarted timestamps included).
    queries = run(cli, timescale, "query", "--queries", "count-events,newest-per-device,device-downsample")
    assert queries.query_rows() == {"count-events": 1, "newest-per-device": 20, "device-downsample": downsample_minutes(events_per_worker)}
    scan = run(cli, timescale, "scan", "-w", "2")
    assert scan.code == 0, scan.stderr
    assert scan.results()["scans"][0]["check"] == "ok" and scan.results()["scans"][0]["rows"] == 600


def test_timescaledb_fake_single_inserts_and_queries(cli, timescale):
    assert run(cli, timescale, "insert", "-w", "2", "--num-inserts", "60", "--devices-per-worker", "3",
               "--extra-option", "create_indices=true").code == 0
    result = run(cli, timescale, "query")
    assert result.code == 0, result.stderr
    assert result.query_rows() == rows_per_query(6)  # every answer checked and right, device-downsample with time_bucket
    spec = RunSpec(run_id="t", task="query", target="timescaledb-fake", module="timescaledb", workers=1)
    assert "SELECT time_bucket('1 minute', timestamp) AS minute" in timescaledb.Module(spec).downsample_statement()


def test_timescaledb_missing_extension_is_a_clear_error(cli, timescale):
    # The real PostgreSQL here has no TimescaleDB: the module tries to install it and says why it cannot.
    result = run(cli, timescale, "insert", "-w", "1", "--num-inserts", "10", target="timescaledb-real")
    assert result.code != 0
    assert f"TimescaleDB is not available on the PostgreSQL server at {timescale['PGHOST']}:{timescale['PGPORT']}" in result.stderr
    assert "Traceback" not in result.stderr


def test_timescaledb_bad_chunk_interval_is_a_usage_error(cli, timescale):
    result = run(cli, timescale, "insert", "-w", "1", "--extra-option", "chunk_interval=soon")
    assert result.code == 2
    assert "chunk_interval 'soon' is not an interval" in result.stderr
