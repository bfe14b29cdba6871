"""The read side end to end on SQLite: scans, the sixth query, every answer checked, and the record of
expected answers across runs, steps, prefill and cleaning."""

from __future__ import annotations

import json
import sqlite3

import pytest

from iotdb_bench.cli.results.tables import catalogue
from tests.conftest import downsample_minutes, rows_per_query
from tests.csv_checks import assert_round_trip, names, read_csv
from tests.read_side import assert_scan_ok, check_read_side

pytestmark = pytest.mark.slow


def sql(folder, statement: str, params=()) -> list[tuple]:
    with sqlite3.connect(folder / "iotdb-bench.sqlite3") as db:
        return db.execute(statement, params).fetchall()


def test_scan_and_answers_then_a_change_and_a_deletion_behind_the_tools_back(cli, tmp_path):
    assert cli("insert", "--target", "sqlite", "-w", "2", "-r", "1", "--num-inserts", "3000", "--batch", "500").code == 0

    def change(device, value):
        sql(tmp_path, "UPDATE events SET temperature = ? WHERE rowid = (SELECT rowid FROM events WHERE device_id = ? "
                      "ORDER BY timestamp LIMIT 1)", (value, device))

    def delete(device):
        sql(tmp_path, "DELETE FROM events WHERE rowid = (SELECT rowid FROM events WHERE device_id = ? ORDER BY timestamp DESC LIMIT 1)",
            (device,))

    check_read_side(lambda *args: cli(args[0], "--target", "sqlite", "-r", "1", *args[1:]), change, delete, 3000)


@pytest.mark.plots
def test_readings_stored_out_of_order_scan_in_order(cli, tmp_path):
    assert cli("insert", "--target", "sqlite", "-w", "1", "-r", "1", "--num-inserts", "2000", "--batch", "1000").code == 0
    # One device's readings written again newest first: new row ids run against their timestamps.
    sql(tmp_path, "CREATE TABLE moved AS SELECT timestamp, device_id, sequence_number, temperature FROM events WHERE device_id = 'w000000-d000003'")
    sql(tmp_path, "DELETE FROM events WHERE device_id = 'w000000-d000003'")
    sql(tmp_path, "INSERT INTO events (timestamp, device_id, sequence_number, temperature) SELECT * FROM moved ORDER BY timestamp DESC")
    stored = [ts for (ts,) in sql(tmp_path, "SELECT timestamp FROM events WHERE device_id = 'w000000-d000003' ORDER BY rowid")]
    assert stored == sorted(stored, reverse=True) and len(stored) == 200
    scanned = cli("scan", "--target", "sqlite", "-r", "2", "--page-size", "64")
    scan = assert_scan_ok(scanned, 2000, 10)
    assert scan["runs"] == 2 and scan["rows_per_s"]["n"] == 2 and scan["page_p50_ms"] > 0
    scan_folder = scanned.results_folders()[-1]
    assert (scan_folder / "rows-scanned-per-second.png").exists() and "Rows/s" in scanned.stdout
    queried = cli("query", "--target", "sqlite", "-r", "1")
    assert queried.query_rows() == rows_per_query(10, downsample_minutes(2000))
    # Saved scans and checked answers are shown again and compared like inserts and queries.
    again = cli("report", str(scan_folder))
    assert again.code == 0 and "Win min" in again.stdout and "Report written" in again.stdout
    compared = cli("compare", str(scan_folder), str(queried.results_folders()[-1]), "--output", "compared")
    assert compared.code == 0, compared.stderr
    assert "## Scans" in (tmp_path / "compared" / "compare.md").read_text()
    header, rows = read_csv(tmp_path / "compared" / "scans.csv")
    assert header == names((catalogue.SCANS,), compared=True) and {row["source"] for row in rows} == {scan_folder.name}
    saved = json.loads((scan_folder / "results.json").read_text())["scans"]
    assert_round_trip([name for name in header if name not in ("database", "differs", "source", "status")], rows, saved)
    header, rows = read_csv(scan_folder / "summary.csv")
    assert header == names((catalogue.SCANS,))
    assert_round_trip(header, rows, saved)
    page = (tmp_path / "compared" / "compare.html").read_text()
    assert "Scans across runs" in page and "Mean window rate" in page and f"{scan['rows']:,}" in page
    assert "Mean window rate" in (scan_folder / "report.html").read_text()


def test_answers_stay_exact_across_prefill_steps_and_no_clean_runs(cli):
    steps = cli("insert", "--target", "sqlite", "-w", "2", "-r", "1", "--num-inserts", "1500", "--batch", "500", "--steps", "3")
    assert steps.code == 0, steps.stderr
    assert steps.results()["runs"][-1]["report"]["expected_record"] == "record saved: 20 devices, 9,000 events over 3 insert run(s)"
    more = cli("insert", "--target", "sqlite", "-w", "3", "-r", "1", "--num-inserts", "1000", "--batch", "500", "--prefill", "3000",
               "--no-clean")
    assert more.code == 0, more.stderr
    # 3 workers now: worker 2's devices are new; workers 0 and 1 wrote their first 2,000 events again.
    assert cli("query", "--target", "sqlite", "-r", "1").query_rows() == rows_per_query(30, downsample_minutes(4500))
    assert_scan_ok(cli("scan", "--target", "sqlite", "-w", "3", "-r", "1"), 9000 + 6000, 30)


def test_data_the_tool_did_not_record_is_not_checked(cli, tmp_path):
    assert cli("insert", "--target", "sqlite", "-w", "1", "-r", "1", "--num-inserts", "500").code == 0
    sql(tmp_path, "DELETE FROM iotbench_expected")  # as if another tool had written the events
    result = cli("query", "--target", "sqlite", "-r", "1")
    assert result.code == 0, result.stderr
    assert {verdict for verdict, _ in result.answers().values()} == {"not checked"}
    assert "Answers not checked: no record of what the tool inserted" in result.stdout
    scan = cli("scan", "--target", "sqlite", "-r", "1")
    assert scan.code == 0 and scan.results()["scans"][0]["check"] == "order ok, counts not checked"
    # A --no-clean insert on top of them cannot vouch for the rows before it either; --clean starts over.
    assert cli("insert", "--target", "sqlite", "-w", "1", "-r", "1", "--num-inserts", "500", "--no-clean").code == 0
    unchecked = cli("query", "--target", "sqlite", "-r", "1").answers()["count-events"]
    assert unchecked == ("not checked", "the tables held 500 events before the tool's first recorded insert (written by something else)")
    assert cli("insert", "--target", "sqlite", "-w", "1", "-r", "1", "--num-inserts", "500").code == 0
    assert cli("query", "--target", "sqlite", "-r", "1").query_rows()["count-events"] == 1


def test_the_null_target_checks_nothing_and_says_so(cli):
    assert cli("insert", "--target", "null", "--platform", "local", "-w", "1", "-r", "1", "--num-inserts", "1000", "--batch", "100").code == 0
    result = cli("query", "--target", "null", "--platform", "local", "-r", "1")
    assert result.code == 0, result.stderr
    assert {verdict for verdict, _ in result.answers().values()} == {"not checked"}
    scan = cli("scan", "--target", "null", "--platform", "local", "-r", "1")
    assert scan.code == 0 and scan.results()["scans"][0]["rows"] == 0


def test_query_and_scan_read_the_tables_of_the_recorded_insert(cli, tmp_path):
    inserted = cli("insert", "--target", "sqlite", "-w", "2", "-r", "1", "--num-inserts", "2000", "--batch", "500", "--tables", "4")
    assert inserted.code == 0, inserted.stderr
    assert [table for (table,) in sql(tmp_path, "SELECT name FROM sqlite_master WHERE name LIKE 'events%' AND type = 'table'")] == [
        "events0", "events1", "events2", "events3"]
    answers = cli("query", "--target", "sqlite", "-r", "1").answers()
    assert set(answers) == {"count-events", "temperature-min-max", "temperature-stats", "temperature-stats-per-device",
                            "newest-per-device", "device-downsample"}
    assert {verdict for verdict, _ in answers.values()} == {"ok"}, answers
    assert_scan_ok(cli("scan", "--target", "sqlite", "-w", "2", "-r", "1"), 4000, 20)
    # A row changed in one of the four tables is seen.
    sql(tmp_path, "UPDATE events2 SET temperature = 99.5 WHERE rowid = 1")
    changed = cli("query", "--target", "sqlite", "-r", "1", "--queries", "temperature-min-max")
    assert changed.code == 1 and changed.answers()["temperature-min-max"][0] == "wrong"


def test_query_and_scan_refuse_data_of_a_workload_they_cannot_read(cli):
    assert cli("insert", "--target", "sqlite", "-w", "1", "-r", "1", "--num-inserts", "500", "--schema", "light").code == 0
    for command in ("query", "scan"):
        refused = cli(command, "--target", "sqlite", "-r", "1")
        assert refused.code == 1
        lines = refused.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in refused.stderr, refused.stderr
        assert f"{command} refused: the data in events was written with --schema light, --measurements 1, --sensors 1" in lines[0]
        assert "worker 0 failed" not in lines[0]  # a refusal is the module's answer, not a worker's crash
