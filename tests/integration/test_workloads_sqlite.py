"""Every workload option end to end through the CLI against SQLite, with the data checked in the
database itself: shapes, measurements, devices and sensors, orders, late data, --duration,
--commit-interval, --tables N, the durability settings, and the refusals."""

from __future__ import annotations

import itertools
import sqlite3

import pytest

pytestmark = pytest.mark.slow


def db(result) -> sqlite3.Connection:
    return sqlite3.connect(result.cwd / "iotdb-bench.sqlite3")


def rows(result, statement: str) -> list[tuple]:
    with db(result) as conn:
        return conn.execute(statement).fetchall()


def columns(result, table: str = "events") -> list[tuple[str, str]]:
    return [(row[1], row[2]) for row in rows(result, f"PRAGMA table_info({table})")]


def insert(cli, *args: str):
    result = cli("insert", "--target", "sqlite", "-r", "1", *args)
    assert result.code == 0, result.stderr
    return result


def late_fraction(result, worker_prefix: str) -> float:
    """Measured in the database: events stored (in id order, the arrival order) after an event of the
    same worker with a later timestamp."""
    times = [row[0] for row in rows(result, f"SELECT timestamp FROM events WHERE device_id LIKE '{worker_prefix}%' ORDER BY id")]
    newest, late = times[0], 0
    for time in times[1:]:
        late += time < newest
        newest = max(newest, time)
    return late / len(times)


@pytest.mark.parametrize(("shape", "expected_columns", "index"), [
    ("slim", [("timestamp", "INTEGER"), ("value", "INTEGER")], None),
    ("light", [("id", "INTEGER"), ("timestamp", "INTEGER"), ("val1", "INTEGER"), ("val2", "INTEGER")], "val1"),
    ("large", [("id", "INTEGER"), ("timestamp", "INTEGER"), ("text", "TEXT"), *[(f"i{i}", "INTEGER") for i in range(1, 9)]], None),
])
def test_shapes(cli, shape, expected_columns, index):
    result = insert(cli, "-w", "2", "--num-inserts", "1500", "--batch", "500", "--schema", shape)
    assert columns(result) == expected_columns
    indices = [row[0] for row in rows(result, "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events' AND sql IS NOT NULL")]
    assert indices == ([f"CREATE INDEX events_{index} ON events ({index})"] if index else [])
    assert rows(result, "SELECT count(*) FROM events") == [(3000,)]
    report = result.verified_reports([3000])[0]
    assert report["figures"]["values_per_event"] == {"slim": 1, "light": 2, "large": 9}[shape]
    if shape == "large":
        shortest, longest, average = rows(result, "SELECT min(length(text)), max(length(text)), avg(length(text)) FROM events")[0]
        assert shortest >= 1 and longest <= 200 and 80 < average < 120
    if shape != "slim":
        assert rows(result, "SELECT count(DISTINCT id) FROM events") == [(3000,)]


def test_measurements_are_columns_and_values_per_second_beside_rows(cli):
    result = insert(cli, "-w", "2", "--num-inserts", "2000", "--batch", "1000", "--measurements", "4")
    assert [name for name, _ in columns(result)][-4:] == ["temperature", "m1", "m2", "m3"]
    assert rows(result, "SELECT count(*), count(DISTINCT m3) > 100 FROM events") == [(4000, 1)]
    figures = result.verified_reports([4000])[0]["figures"]
    assert figures["values_per_event"] == 4
    assert figures["values_throughput"] == pytest.approx(4 * figures["throughput"])
    row = result.results()["inserts"][0]
    assert row["values_per_row"] == 4 and row["values_throughput"]["avg"] == pytest.approx(4 * row["throughput"]["avg"])
    assert "Values/s" in result.stdout and f"{row['values_throughput']['avg']:,.0f}" in result.stdout


def test_devices_of_all_workers_and_sensors(cli):
    result = insert(cli, "-w", "3", "--num-inserts", "2100", "--batch", "700", "--devices", "7", "--sensors", "3")
    assert rows(result, "SELECT count(*), count(DISTINCT device_id), count(DISTINCT device_id || '/' || sensor) FROM events") == [(6300, 7, 21)]
    per_worker = rows(result, "SELECT substr(device_id, 1, 7), count(DISTINCT device_id) FROM events GROUP BY 1 ORDER BY 1")
    assert per_worker == [("w000000", 3), ("w000001", 2), ("w000002", 2)]
    # round-robin over series: every (device, sensor) of a worker reports equally often
    assert rows(result, "SELECT count(DISTINCT n) FROM (SELECT device_id, sensor, count(*) AS n FROM events "
                        "WHERE device_id LIKE 'w000001%' GROUP BY 1, 2)") == [(1,)]


def test_random_and_burst_orders(cli):
    random = insert(cli, "-w", "1", "--num-inserts", "5000", "--batch", "1000", "--order", "random", "--devices-per-worker", "5")
    times = [row[0] for row in rows(random, "SELECT timestamp FROM events ORDER BY id")]
    assert times == sorted(times)  # timestamps still rise
    devices = [row[0] for row in rows(random, "SELECT device_id FROM events ORDER BY id")]
    assert sum(a == b for a, b in itertools.pairwise(devices)) > 500  # not taking turns: repeats happen (about 1 in 5)
    counts = [row[0] for row in rows(random, "SELECT count(*) FROM events GROUP BY device_id")]
    assert len(counts) == 5 and len(set(counts)) > 1 and all(900 < n < 1100 for n in counts)

    burst = insert(cli, "-w", "1", "--num-inserts", "600", "--batch", "100", "--order", "burst", "--burst", "4", "--devices-per-worker", "3")
    devices = [row[0] for row in rows(burst, "SELECT device_id FROM events ORDER BY id")]
    assert devices[:12] == [f"w000000-d00000{d}" for d in (0, 1, 2) for _ in range(4)]
    for device in range(3):  # each device's readings in order, one every 3 intervals
        times = [row[0] for row in rows(burst, f"SELECT timestamp FROM events WHERE device_id = 'w000000-d00000{device}' ORDER BY id")]
        assert all(b - a == 300 for a, b in itertools.pairwise(times))


def test_late_events_keep_their_sequence_numbers(cli):
    result = insert(cli, "-w", "2", "--num-inserts", "20000", "--batch", "1000", "--out-of-order", "0.1", "--max-lateness", "5")
    result.verified_reports([40000])
    for worker in ("w000000", "w000001"):
        assert late_fraction(result, worker) == pytest.approx(0.1, rel=0.01)
        sequences = rows(result, f"SELECT count(*), count(DISTINCT sequence_number), min(sequence_number), max(sequence_number) "
                                 f"FROM events WHERE device_id LIKE '{worker}%'")
        assert sequences == [(20000, 20000, 0, 19999)]  # complete: late events were sent, later
    lateness = rows(result, "SELECT max(newest - timestamp) FROM (SELECT timestamp, max(timestamp) OVER (PARTITION BY substr(device_id, 1, 7) "
                            "ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS newest FROM events)")[0][0]
    assert 4000 < lateness <= 5000


def test_duration_ends_every_worker_at_the_common_end_and_the_next_step_continues(cli):
    result = insert(cli, "-w", "2", "--duration", "2", "--batch", "200", "--steps", "2", "--primary-key", "client",
                    "--out-of-order", "0.05", "--max-lateness", "1")
    runs = result.results()["runs"]
    total = 0
    for run in runs:
        report = run["report"]
        figures = report["figures"]
        assert 2.0 <= figures["duration_s"] < 3.5
        assert all(2.0 <= w["finished_at"] - report["start_at"] < 3.5 for w in report["workers"])
        assert report["verification"]["ok"]
        total += figures["events"]
    assert rows(result, "SELECT count(*), count(DISTINCT id) FROM events") == [(total, total)]  # the second step repeated nothing
    second_start = runs[1]["report"]["spec"]["stream_offset"]
    assert second_start == max(w["stream_end"] for w in runs[0]["report"]["workers"])
    assert "Fill level (step: 2 s)" in result.stdout


def test_commit_interval_groups_single_inserts(cli):
    result = insert(cli, "-w", "2", "--duration", "2", "--commit-interval", "0.5")
    report = result.results()["runs"][0]["report"]
    assert report["insert_mode"] == "single inserts, commit every 0.5 s"
    events, calls = report["figures"]["events"], report["figures"]["latency"]["calls"]
    assert report["verification"]["ok"] and rows(result, "SELECT count(*) FROM events") == [(events,)]
    assert 2 * 2 <= calls - events <= 2 * 8  # each worker commits every 0.5 s (and once at the end)


def test_any_number_of_tables_each_device_in_one(cli):
    result = insert(cli, "-w", "2", "--num-inserts", "3000", "--batch", "1000", "--tables", "7", "--devices-per-worker", "10")
    per_table = [rows(result, f"SELECT count(*) FROM events{t}")[0][0] for t in range(7)]
    assert sum(per_table) == 6000 and all(per_table)
    for table in range(7):
        devices = {int(row[0][-6:]) for row in rows(result, f"SELECT DISTINCT device_id FROM events{table}")}
        assert devices and all(device % 7 == table for device in devices)
    assert not rows(result, "SELECT name FROM sqlite_master WHERE name = 'events7'")


def test_durability_settings_and_prefill_with_a_workload(cli):
    result = insert(cli, "-w", "2", "--num-inserts", "1000", "--batch", "500", "--prefill", "3001", "--order", "random",
                    "--out-of-order", "0.2", "--extra-option", "synchronous=off", "--extra-option", "journal_mode=off")
    result.verified_reports([5001])
    assert result.results()["spec"]["extra"] == {"synchronous": "off", "journal_mode": "off"}
    assert "synchronous=off, journal_mode=off" in " ".join(result.stdout.split())  # the title wraps at the table's width
    per_worker = rows(result, "SELECT substr(device_id, 1, 7), count(DISTINCT sequence_number), max(sequence_number) FROM events GROUP BY 1")
    assert per_worker == [("w000000", 2501, 2500), ("w000001", 2500, 2499)]  # prefill share then the timed phase, all there


@pytest.mark.parametrize(("args", "message"), [
    (["--batch", "10", "--commit-interval", "1"], "--commit-interval commits single inserts"),
    (["--schema", "slim", "--primary-key", "client"], "--schema slim has no key column"),
    (["--order", "burst", "--out-of-order", "0.1"], "--out-of-order applies to --order round-robin and random"),
    (["--duration", "5", "--num-inserts", "10"], "--duration and --num-inserts"),
    (["--tables", "65"], "not a number of tables from 1 to 64"),
    (["--schema", "light", "--measurements", "3"], "--measurements applies to --schema events"),
    (["--burst", "5"], "--burst applies to --order burst"),
    (["--max-lateness", "5"], "--max-lateness applies to late events"),
    (["-w", "1,4", "--devices", "3"], "fewer than the 4 workers"),
    (["-w", "4,1", "--devices", "2000000"], "more than 999,999 devices with 1 worker;"),
    (["--schema", "slim", "--extra-option", "create_indices=true"], "create_indices (on temperature and device_id) needs --schema events"),
])
def test_options_that_cannot_go_together_are_refused_before_anything_runs(cli, args, message):
    result = cli("insert", "--target", "sqlite", *args)
    assert result.code == 2 and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert not result.results_folders() and not (result.cwd / "iotdb-bench.sqlite3").exists()
