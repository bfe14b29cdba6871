"""The timescaledb module against a real TimescaleDB: the Apache-2 build of TimescaleDB 2.28.3 on
PostgreSQL 15 that scripts/servers/start-timescaledb.sh builds from the vendored source and runs on
port 5433. Runs use the shipped `timescaledb-local` target, in a database of their own; what the
server holds (hypertables, their dimensions and chunks, sizes, the license) is read over the test's
own connection, never taken from the tool's report."""

from __future__ import annotations

import datetime as dt

import pytest

from iotdb_bench.simulator.modules import timescaledb
from iotdb_bench.simulator.spec import RunSpec
from iotdb_bench.simulator.workload.events import EVENT_INTERVAL_MS, TIME_ORIGIN_MS
from tests.conftest import dedicated_database, downsample_minutes, pg_connect, pg_env_or_fail, rows_per_query, timescaledb_env

pytestmark = pytest.mark.timescaledb

DATABASE = "iotbench_timescaledb"
VERSION = "2.28.3"  # the vendored source's (../shared/vendor/timescaledb/build.sh)


@pytest.fixture
def timescale():
    """PG* settings of the suite's database on the real TimescaleDB; fails (never skips) when it is not reachable."""
    return dedicated_database(pg_env_or_fail(timescaledb_env(), "timescaledb"), DATABASE)


def sql(env, statement: str, *params) -> list[tuple]:
    with pg_connect(env, DATABASE) as conn:
        cursor = conn.execute(statement, params or None)
        return cursor.fetchall() if cursor.description else []


def run(cli, env, task: str, *args: str):
    """The CLI on the shipped `timescaledb-local` target, pointed at the suite's database."""
    target_env = {"TIMESCALEDB_HOST": env["PGHOST"], "TIMESCALEDB_PORT": env["PGPORT"], "TIMESCALEDB_DATABASE": DATABASE,
                  "PGPASSWORD": env["PGPASSWORD"], "PGUSER": env["PGUSER"]}
    return cli(task, "--target", "timescaledb-local", "-r", "1", *args, env=target_env, timeout=300)


def hypertables(env) -> dict[str, tuple]:
    """name -> (time column, chunk interval, chunks) as TimescaleDB's catalog views report them."""
    rows = sql(env, "SELECT h.hypertable_name, d.column_name, d.time_interval, h.num_chunks FROM timescaledb_information.hypertables h "
                    "JOIN timescaledb_information.dimensions d USING (hypertable_schema, hypertable_name) WHERE h.hypertable_schema = 'public'")
    return {name: (column, interval, chunks) for name, column, interval, chunks in rows}


def test_the_module_installs_the_extension_of_the_apache_build_in_a_fresh_database(cli, timescale):
    with pg_connect(timescale, "postgres") as conn:
        conn.execute("DROP DATABASE IF EXISTS iotbench_timescaledb_fresh")
        conn.execute("CREATE DATABASE iotbench_timescaledb_fresh")
    fresh = {**timescale, "PGDATABASE": "iotbench_timescaledb_fresh"}
    result = cli("insert", "--target", "timescaledb-local", "-w", "1", "-r", "1", "--num-inserts", "100", "--batch", "100", timeout=300,
                 env={"TIMESCALEDB_HOST": fresh["PGHOST"], "TIMESCALEDB_PORT": fresh["PGPORT"], "TIMESCALEDB_DATABASE": fresh["PGDATABASE"]})
    result.verified_reports([100])
    with pg_connect(fresh) as conn:
        # The license and telemetry settings exist once the extension is loaded in the database.
        row = conn.execute("SELECT (SELECT extversion FROM pg_extension WHERE extname = 'timescaledb'), "
                           "current_setting('timescaledb.license'), current_setting('timescaledb.telemetry_level'), "
                           "(SELECT count(*) FROM timescaledb_information.hypertables WHERE hypertable_name = 'events')").fetchone()
    assert row == (VERSION, "apache", "off", 1)


def test_copy_batches_into_two_hypertables_with_their_size_as_storage(cli, timescale):
    # 1000 events per worker, 100 ms apart: 100 s of events, two one-minute chunks per table.
    result = run(cli, timescale, "insert", "-w", "2", "--num-inserts", "1000", "--batch", "500", "--tables", "2",
                 "--extra-option", "chunk_interval=1 minute")
    [report] = result.verified_reports([2000])
    assert report["spec"]["batch"] == 500
    assert hypertables(timescale) == {"events0": ("timestamp", dt.timedelta(minutes=1), 2), "events1": ("timestamp", dt.timedelta(minutes=1), 2)}
    assert sql(timescale, "SELECT sum(n) FROM (SELECT count(*) AS n FROM events0 UNION ALL SELECT count(*) FROM events1) t") == [(2000,)]
    # The default key holds the partitioning column, as TimescaleDB requires of unique indexes.
    primary_key = sql(timescale, "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
                                 "AND a.attnum = ANY (i.indkey) WHERE i.indrelid = 'events0'::regclass AND i.indisprimary ORDER BY 1")
    assert primary_key == [("id",), ("timestamp",)]
    # Storage is every chunk's: hypertable_size, not the (empty) parent tables.
    [(sizes, parents)] = sql(timescale, "SELECT hypertable_size('events0') + hypertable_size('events1'), "
                                        "pg_total_relation_size('events0') + pg_total_relation_size('events1')")
    assert report["server"]["storage_bytes"] == sizes > parents > 0
    # The server's own count of inserted rows is the chunks' (the parents hold none).
    server = report["server"]
    assert server["counters_at_end"]["rows_inserted"] - server["counters_at_start"]["rows_inserted"] == 2000
    assert sizes > 2000 * 40  # at least the rows' timestamps, device ids and values
    [(extension,)] = sql(timescale, "SELECT extversion FROM pg_extension WHERE extname = 'timescaledb'")
    assert report["conditions"]["server_version"].endswith(f"; TimescaleDB {extension}") and extension == VERSION


def test_single_inserts_every_query_with_time_bucket_and_a_scan(cli, timescale):
    result = run(cli, timescale, "insert", "-w", "2", "--num-inserts", "60", "--devices-per-worker", "3", "--extra-option", "create_indices=true")
    [report] = result.verified_reports([120])
    assert report["spec"]["batch"] == 0
    assert set(hypertables(timescale)) == {"events"}
    queries = run(cli, timescale, "query")
    assert queries.query_rows() == rows_per_query(6)  # every answer checked and right, device-downsample included
    spec = RunSpec(run_id="t", task="query", target="timescaledb-local", module="timescaledb", workers=1)
    assert "SELECT time_bucket('1 minute', timestamp) AS minute" in timescaledb.Module(spec).reader.downsample_statement()
    scan = run(cli, timescale, "scan", "-w", "2")
    assert scan.code == 0, scan.stderr
    assert scan.results()["scans"][0]["check"] == "ok" and scan.results()["scans"][0]["rows"] == 120


@pytest.mark.parametrize("restart", [False, True], ids=["increasing", "restarted"])
def test_steps_write_new_chunks_or_refill_the_first_ones(cli, timescale, restart):
    # 100 events per worker and step, 100 ms apart: each step's events span 10 s, one 10-second chunk.
    result = run(cli, timescale, "insert", "-w", "2", "--num-inserts", "100", "--batch", "50", "--steps", "2", "--primary-key", "client",
                 "--extra-option", "chunk_interval=10 seconds", "--extra-option", f"restart_timestamps_each_step={str(restart).lower()}")
    result.verified_reports([200, 400])
    events_per_worker = 100 if restart else 200
    assert hypertables(timescale) == {"events": ("timestamp", dt.timedelta(seconds=10), 1 if restart else 2)}
    (first, last, distinct, keys), = sql(timescale, "SELECT min(timestamp), max(timestamp), count(DISTINCT timestamp), count(DISTINCT id) FROM events")
    origin = dt.datetime.fromtimestamp(TIME_ORIGIN_MS / 1000, dt.UTC)
    assert (first, keys, distinct) == (origin, 400, events_per_worker)
    assert last == origin + dt.timedelta(milliseconds=(events_per_worker - 1) * EVENT_INTERVAL_MS)
    # The expected answers were kept of the events as stored (restarted timestamps included).
    queries = run(cli, timescale, "query", "--queries", "count-events,newest-per-device,device-downsample")
    assert queries.query_rows() == {"count-events": 1, "newest-per-device": 20, "device-downsample": downsample_minutes(events_per_worker)}
    scan = run(cli, timescale, "scan", "-w", "2")
    assert scan.code == 0, scan.stderr
    assert scan.results()["scans"][0]["check"] == "ok" and scan.results()["scans"][0]["rows"] == 400


@pytest.mark.slow
def test_visibility_markers_are_seen_in_the_hypertable(cli, timescale):
    result = run(cli, timescale, "insert", "-w", "1", "--duration", "3", "--batch", "200", "--visibility")
    assert result.code == 0, result.stderr
    [run_] = result.results()["runs"]
    check, lag = run_["report"]["verification"], run_["report"]["visibility"]
    assert check["ok"] and check["counted"] == check["expected"] == check["count_before"] + check["inserted"] + check["markers"]
    assert lag["markers"] >= 3 and lag["seen"] == lag["markers"] == check["markers"] and lag["error"] is None
    assert lag["lag"]["p50_ms"] is not None and lag["lag"]["p50_ms"] < 1000  # visible at commit
    assert sql(timescale, "SELECT count(*) FROM events") == [(check["counted"],)]


def test_compression_is_refused_in_one_line_on_the_apache_build(cli, timescale):
    sql(timescale, "CREATE EXTENSION IF NOT EXISTS timescaledb")  # its settings exist once it is loaded in the database
    [(license_name,)] = sql(timescale, "SHOW timescaledb.license")
    assert license_name == "apache"
    result = run(cli, timescale, "insert", "-w", "1", "--num-inserts", "10", "--extra-option", "compression_policy=1 hour")
    assert result.code == 1
    assert "compression_policy (native compression) needs the Timescale-License build of TimescaleDB; the server at " \
           f"{timescale['PGHOST']}:{timescale['PGPORT']} runs timescaledb.license = apache" in result.stderr
    assert "Traceback" not in result.stderr and "license" not in result.stdout
    assert len([line for line in result.stderr.splitlines() if "license" in line]) == 1
    # Refused before any table was made.
    assert sql(timescale, "SELECT to_regclass('events')") == [(None,)]


def test_a_key_without_the_time_column_is_refused_by_timescaledb(cli, timescale):
    result = run(cli, timescale, "insert", "-w", "1", "--num-inserts", "10", "--batch", "10", "--extra-option", "primary_key_constraint=PRIMARY KEY (id)")
    assert result.code != 0
    assert 'cannot create a unique index without the column "timestamp"' in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(("option", "message"), [("chunk_interval=soon", "chunk_interval 'soon' is not an interval"),
                                                 ("compression_policy=later", "compression_policy 'later' is not an interval")])
def test_bad_intervals_are_usage_errors(cli, timescale, option, message):
    result = run(cli, timescale, "insert", "-w", "1", "--extra-option", option)
    assert result.code == 2
    assert message in result.stderr


@pytest.mark.postgres
def test_a_postgresql_without_timescaledb_is_a_clear_error(cli, pg_env):
    # The PostgreSQL on 5432 has no TimescaleDB: the module tries to install it and says why it cannot.
    env = dedicated_database(pg_env, "iotbench_no_timescaledb")
    result = cli("insert", "--target", "timescaledb-local", "-w", "1", "-r", "1", "--num-inserts", "10", timeout=300,
                 env={"TIMESCALEDB_HOST": env["PGHOST"], "TIMESCALEDB_PORT": env["PGPORT"], "TIMESCALEDB_DATABASE": "iotbench_no_timescaledb"})
    assert result.code != 0
    assert f"TimescaleDB is not available on the PostgreSQL server at {env['PGHOST']}:{env['PGPORT']}" in result.stderr
    assert "Traceback" not in result.stderr
