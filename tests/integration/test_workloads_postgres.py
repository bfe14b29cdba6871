"""Every workload option end to end through the CLI against the real PostgreSQL, with the data
checked in the database: shapes (binary COPY of a variable text included), measurements, devices and
sensors, orders, late data, --duration, --commit-interval, --tables N, key order through
primary_key_constraint and synchronous_commit through session_statements. Runs in a database of
its own so other suites' tables are never touched."""

from __future__ import annotations

import pytest

from tests.conftest import dedicated_database, pg_connect

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

DATABASE = "iotbench_workloads"


@pytest.fixture
def pg(pg_env):
    env = dedicated_database(pg_env, DATABASE)
    with pg_connect(env) as conn:
        conn.execute("DROP TABLE IF EXISTS " + ", ".join(["events"] + [f"events{t}" for t in range(64)]))
    return env


def insert(cli, env, *args: str):
    result = cli("insert", "--target", "postgresql-local", "-r", "1", *args, env=env)
    assert result.code == 0, result.stderr
    return result


def rows(env, statement: str) -> list[tuple]:
    with pg_connect(env) as conn:
        return conn.execute(statement).fetchall()


def columns(env, table: str = "events") -> list[tuple[str, str]]:
    return rows(env, "SELECT column_name, data_type FROM information_schema.columns "
                     f"WHERE table_name = '{table}' ORDER BY ordinal_position")


@pytest.mark.parametrize("mode", [["--batch", "500"], ["--batch", "500", "--extra-option", "batch_mode=values"], []],
                         ids=["copy", "values", "single"])
@pytest.mark.parametrize("shape", ["slim", "light", "large"])
def test_shapes_in_every_insert_mode(cli, pg, shape, mode):
    result = insert(cli, pg, "-w", "2", "--num-inserts", "1000", "--schema", shape, *mode)
    result.verified_reports([2000])
    expected = {
        "slim": [("timestamp", "timestamp with time zone"), ("value", "integer")],
        "light": [("id", "bigint"), ("timestamp", "timestamp with time zone"), ("val1", "smallint"), ("val2", "smallint")],
        "large": [("id", "bigint"), ("timestamp", "timestamp with time zone"), ("text", "character varying"),
                  *[(f"i{i}", "integer") for i in range(1, 9)]],
    }[shape]
    assert columns(pg) == expected
    indices = {row[0] for row in rows(pg, "SELECT indexname FROM pg_indexes WHERE tablename = 'events'")}
    assert indices == {"slim": set(), "light": {"events_pkey", "events_val1"}, "large": {"events_pkey"}}[shape]
    assert rows(pg, "SELECT count(*) FROM events") == [(2000,)]
    if shape == "large":  # binary COPY of a variable text: lengths as generated, nothing padded
        shortest, longest, average, padded = rows(pg, "SELECT min(length(text)), max(length(text)), avg(length(text)), "
                                                      "count(*) FILTER (WHERE text LIKE '% ' OR position(chr(1) in text) > 0) FROM events")[0]
        assert shortest >= 1 and longest <= 200 and 80 < average < 120 and padded == 0
    if shape == "light":
        assert rows(pg, "SELECT min(val1) >= 1000, max(val1) <= 3000 FROM events") == [(True, True)]


def test_measurements_sensors_devices_random_order_late_data(cli, pg):
    result = insert(cli, pg, "-w", "2", "--num-inserts", "20000", "--batch", "1000", "--measurements", "4", "--sensors", "3",
                    "--devices", "5", "--order", "random", "--out-of-order", "0.05", "--max-lateness", "10")
    result.verified_reports([40000])
    assert [name for name, _ in columns(pg)] == ["id", "timestamp", "device_id", "sensor", "sequence_number", "temperature", "m1", "m2", "m3"]
    assert rows(pg, "SELECT count(DISTINCT device_id), count(DISTINCT (device_id, sensor)) FROM events") == [(5, 15)]
    # Per worker: every sequence number once; late events measured in arrival (id) order.
    measured = rows(pg, """
        SELECT worker, count(*), count(DISTINCT sequence_number), max(sequence_number), avg(late::int), max(lateness_ms)
        FROM (SELECT substr(device_id, 1, 7) AS worker, sequence_number,
                     timestamp < newest AS late, extract(epoch FROM newest - timestamp) * 1000 AS lateness_ms
              FROM (SELECT *, max(timestamp) OVER (PARTITION BY substr(device_id, 1, 7) ORDER BY id
                                                   ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS newest FROM events) arrival) flagged
        GROUP BY worker ORDER BY worker""")
    for worker, (name, count, distinct, highest, fraction, lateness) in zip(("w000000", "w000001"), measured):
        assert (name, count, distinct, highest) == (worker, 20000, 20000, 19999)
        assert float(fraction) == pytest.approx(0.05, rel=0.01)
        assert 0 < lateness <= 10_000
    figures = result.results()["runs"][0]["report"]["figures"]
    assert figures["values_per_event"] == 4 and figures["values_throughput"] == pytest.approx(4 * figures["throughput"])


def test_burst_order_and_sixteen_tables(cli, pg):
    result = insert(cli, pg, "-w", "4", "--num-inserts", "4000", "--batch", "1000", "--tables", "16", "--order", "burst",
                    "--burst", "10", "--devices-per-worker", "32")
    result.verified_reports([16000])
    per_table = [rows(pg, f"SELECT count(*), count(DISTINCT device_id), bool_and(right(device_id, 6)::int % 16 = {t}) "
                          f"FROM events{t}")[0] for t in range(16)]
    assert sum(count for count, _, _ in per_table) == 16000
    assert all(count == 1000 and devices == 8 and placed for count, devices, placed in per_table)  # 2 devices per worker and table
    assert not rows(pg, "SELECT 1 FROM pg_tables WHERE tablename = 'events16'")
    runs = rows(pg, "SELECT count(*) FROM (SELECT device_id, lag(device_id) OVER (ORDER BY id) AS previous FROM events0 "
                    "WHERE device_id LIKE 'w000000%') changes WHERE device_id IS DISTINCT FROM previous")
    assert runs == [(250 // 10,)]  # worker 0's 250 events here: a change of device per burst of 10


def test_duration_with_prefill_and_runs_that_continue_the_streams(cli, pg):
    result = cli("insert", "--target", "postgresql-local", "-w", "2", "-r", "2", "--duration", "2", "--batch", "500",
                 "--prefill", "2000", "--primary-key", "client", "--no-clean", "--out-of-order", "0.1", "--max-lateness", "2", env=pg)
    assert result.code == 0, result.stderr
    first, second = (run["report"] for run in result.results()["runs"])
    for report in (first, second):
        assert 2.0 <= report["figures"]["duration_s"] < 3.5 and report["verification"]["ok"]
        assert report["verification"]["prefilled"] == 2000
    assert second["verification"]["count_before"] == first["verification"]["counted"]
    assert second["spec"]["stream_offset"] == max(worker["stream_end"] for worker in first["workers"])
    assert rows(pg, "SELECT count(*), count(DISTINCT id) FROM events") == [(second["verification"]["counted"],) * 2]


def test_commit_interval_and_synchronous_commit_off(cli, pg):
    result = insert(cli, pg, "-w", "2", "--duration", "2", "--commit-interval", "0.5",
                    "--extra-option", "session_statements=SET synchronous_commit = off")
    report = result.results()["runs"][0]["report"]
    assert report["insert_mode"] == "single inserts, commit every 0.5 s" and report["verification"]["ok"]
    events, calls = report["figures"]["events"], report["figures"]["latency"]["calls"]
    assert rows(pg, "SELECT count(*) FROM events") == [(events,)]
    assert 2 * 2 <= calls - events <= 2 * 8  # commits: every 0.5 s and at the end, per worker


@pytest.mark.parametrize("key", ["device_id, sensor, timestamp", "timestamp, device_id, sensor"], ids=["clustered", "sorted"])
def test_key_order_with_primary_key_constraint(cli, pg, key):
    result = insert(cli, pg, "-w", "2", "--num-inserts", "3000", "--batch", "1000", "--sensors", "2", "--order", "random",
                    "--primary-key", "none", "--extra-option", f"primary_key_constraint=PRIMARY KEY ({key})")
    result.verified_reports([6000])
    definition = rows(pg, "SELECT pg_get_indexdef(indexrelid) FROM pg_index WHERE indrelid = 'events'::regclass AND indisprimary")[0][0]
    assert definition.replace('"', "").endswith(f"({key})")
