"""The read side against the real PostgreSQL: scans through a server-side cursor, the sixth query,
every answer checked and compared by hand with SQL, and rows changed behind the tool's back.
Runs in its own database so other suites' `events` tables are never touched."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.conftest import dedicated_database, downsample_minutes, pg_connect, rows_per_query
from tests.read_side import assert_scan_ok, check_read_side

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

DATABASE = "iotbench_read_side"


@pytest.fixture
def pg(pg_env):
    return dedicated_database(pg_env, DATABASE)


def sql(env, statement: str, params=None) -> list[tuple]:
    with pg_connect(env, DATABASE) as conn:
        cursor = conn.execute(statement, params)
        return cursor.fetchall() if cursor.description else []


def run(cli, env):
    return lambda task, *args: cli(task, "--target", "postgresql-local", "-r", "1", *args, env=env, timeout=300)


def test_postgres_scan_and_answers_then_a_change_and_a_deletion_behind_the_tools_back(cli, pg):
    assert run(cli, pg)("insert", "-w", "2", "--num-inserts", "3000", "--batch", "1000").code == 0
    # The record is a table of the tool's own beside the data: readable by hand.
    (record,), = sql(pg, "SELECT record::jsonb -> 'expected' -> 'devices' -> 'count' FROM iotbench_expected WHERE tables = 'last-insert'")
    assert record == [300] * 20

    def change(device, value):
        sql(pg, "UPDATE events SET temperature = %s WHERE ctid = (SELECT ctid FROM events WHERE device_id = %s ORDER BY timestamp LIMIT 1)",
            (value, device))

    def delete(device):
        sql(pg, "DELETE FROM events WHERE ctid = (SELECT ctid FROM events WHERE device_id = %s ORDER BY timestamp DESC LIMIT 1)", (device,))

    check_read_side(run(cli, pg), change, delete, 3000)


def test_postgres_answers_equal_what_sql_by_hand_returns(cli, pg):
    assert run(cli, pg)("insert", "-w", "2", "--num-inserts", "2000", "--batch", "500", "--prefill", "1000").code == 0
    result = run(cli, pg)("query", "--queries", "device-downsample,newest-per-device (loose index scan)")
    assert result.query_rows() == {"device-downsample": downsample_minutes(2500), "newest-per-device (loose index scan)": 20}
    by_hand = sql(pg, "SELECT date_trunc('minute', timestamp), min(temperature), avg(temperature), max(temperature), count(*) FROM events "
                      "WHERE device_id = 'w000000-d000000' AND timestamp < '2026-01-01T01:00:00Z' GROUP BY 1 ORDER BY 1")
    assert by_hand[0][0] == dt.datetime(2026, 1, 1, tzinfo=dt.UTC) and [row[4] for row in by_hand] == [60] * 4 + [10]
    assert len(by_hand) == result.query_rows()["device-downsample"]


def test_postgres_readings_stored_out_of_order_scan_in_order(cli, pg):
    assert run(cli, pg)("insert", "-w", "1", "--num-inserts", "2000", "--batch", "1000").code == 0
    # One device's readings written again newest first: the heap now holds them in reverse time order.
    sql(pg, "WITH moved AS (DELETE FROM events WHERE device_id = 'w000000-d000004' RETURNING timestamp, device_id, sequence_number, temperature) "
            "INSERT INTO events (timestamp, device_id, sequence_number, temperature) SELECT * FROM moved ORDER BY timestamp DESC")
    stored = [ts for (ts,) in sql(pg, "SELECT timestamp FROM events WHERE device_id = 'w000000-d000004' ORDER BY ctid")]
    assert stored == sorted(stored, reverse=True) and len(stored) == 200
    scan = assert_scan_ok(run(cli, pg)("scan", "-w", "2", "--page-size", "50"), 2000, 10)
    assert scan["page_p50_ms"] > 0 and scan["window_min"] is None  # 1,000 rows per worker: no 10,000-row window
    assert run(cli, pg)("query").query_rows() == rows_per_query(10, downsample_minutes(2000))


def test_postgres_query_and_scan_read_the_tables_of_an_insert_with_tables_4(cli, pg):
    assert run(cli, pg)("insert", "-w", "2", "--num-inserts", "2000", "--batch", "500", "--tables", "4").code == 0
    counts = [sql(pg, f"SELECT count(*) FROM events{i}")[0][0] for i in range(4)]
    assert sum(counts) == 4000 and all(counts)
    answers = run(cli, pg)("query", "-w", "2").answers()
    assert len(answers) == 6 and {verdict for verdict, _ in answers.values()} == {"ok"}, answers
    assert_scan_ok(run(cli, pg)("scan", "-w", "2"), 4000, 20)
