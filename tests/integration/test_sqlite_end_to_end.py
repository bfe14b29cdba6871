"""The CLI end to end on the local platform against SQLite: figures, saved files, row counts."""

import csv
import json
import sqlite3

import pytest

from iotdb_bench.cli.results.tables import catalogue
from tests.csv_checks import assert_round_trip, names, read_csv

pytestmark = pytest.mark.slow


def table_count(folder, table="events"):
    with sqlite3.connect(folder / "iotdb-bench.sqlite3") as db:
        return db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_default_insert_prints_table_and_saves_files(cli):
    result = cli("insert", "--target", "sqlite", "-w", "1,2", "-r", "2", "--num-inserts", "1500")
    assert result.code == 0, result.stderr
    assert "Workers" in result.stdout and "Inserts/s" in result.stdout.replace("inserts/s", "Inserts/s")
    document = result.results()
    assert document["status"] == "ok"
    assert [r["workers"] for r in document["runs"]] == [1, 1, 2, 2]
    for run in document["runs"]:
        report = run["report"]
        assert report["verification"]["ok"] is True
        assert report["verification"]["counted"] == run["workers"] * 1500
        figures = report["figures"]
        assert figures["events"] == run["workers"] * 1500
        assert figures["latency"]["calls"] == run["workers"] * 1500  # single inserts: one call per event
        assert sum(figures["per_second"]) == figures["events"]
        assert figures["throughput"] > 0 and 0 <= figures["client_overhead"] < 1
    summary = document["inserts"]
    assert [row["workers"] for row in summary] == [1, 2]
    assert summary[0]["throughput"]["n"] == 2
    with (result.results_folders()[-1] / "summary.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [row["workers"] for row in rows] == ["1", "2"]
    assert float(rows[1]["throughput.avg"]) == pytest.approx(summary[1]["throughput"]["avg"])
    header, rows = read_csv(result.results_folders()[-1] / "summary.csv")  # every figure of the catalogue, numbers exactly
    assert header == names((catalogue.INSERTS, catalogue.VISIBILITY))
    assert_round_trip(header, rows, summary)
    # the table on screen shows the same average as the file
    assert f"{summary[1]['throughput']['avg']:,.0f}" in result.stdout
    assert table_count(result.cwd) == 2 * 1500  # the last run cleaned and inserted 2 x 1500


def test_batch_multiple_tables_client_keys(cli):
    result = cli("insert", "--target", "sqlite", "-w", "2", "-r", "1", "--num-inserts", "4000", "--batch", "500",
                 "--tables", "multiple", "--primary-key", "client")
    assert result.code == 0, result.stderr
    report = result.results()["runs"][0]["report"]
    assert report["figures"]["latency"]["calls"] == 2 * 8
    assert sum(table_count(result.cwd, f"events{i}") for i in range(4)) == 8000
    with sqlite3.connect(result.cwd / "iotdb-bench.sqlite3") as db:
        assert db.execute("SELECT count(DISTINCT id) FROM events2").fetchone()[0] == table_count(result.cwd, "events2")


def test_prefill_and_no_clean_accumulate(cli):
    first = cli("insert", "--target", "sqlite", "-w", "2", "-r", "1", "--num-inserts", "1000", "--batch", "100", "--prefill", "3001")
    assert first.code == 0, first.stderr
    check = first.results()["runs"][0]["report"]["verification"]
    assert (check["count_before"], check["prefilled"], check["inserted"], check["counted"]) == (0, 3001, 2000, 5001)
    second = cli("insert", "--target", "sqlite", "-w", "1", "-r", "2", "--num-inserts", "500", "--batch", "100", "--no-clean")
    assert second.code == 0, second.stderr
    runs = second.results()["runs"]
    assert [r["report"]["verification"]["count_before"] for r in runs] == [5001, 5501]
    assert table_count(second.cwd) == 6001


def test_steps_report_fill_levels(cli):
    result = cli("insert", "--target", "sqlite", "-w", "2", "-r", "1", "--num-inserts", "1000", "--batch", "250", "--steps", "3")
    assert result.code == 0, result.stderr
    summary = result.results()["inserts"]
    assert [row["level"] for row in summary] == [0, 2000, 4000]
    assert "Level" in result.stdout and "4,000" in result.stdout
    assert table_count(result.cwd) == 6000


def test_query_after_insert(cli):
    assert cli("insert", "--target", "sqlite", "-w", "2", "-r", "1", "--num-inserts", "2000", "--batch", "1000",
               "--devices-per-worker", "5", "--extra-option", "create_indices=true").code == 0
    result = cli("query", "--target", "sqlite", "-w", "2", "-r", "3")
    assert result.code == 0, result.stderr
    by_name = {row["query"]: row for row in result.results()["queries"]}
    assert by_name["count-events"]["rows"] == 1
    assert by_name["temperature-stats-per-device"]["rows"] == 10  # 2 workers x 5 devices
    assert by_name["newest-per-device"]["rows"] == 10
    assert all(row["executions"] == 6 and not row["errors"] for row in by_name.values())
    assert "newest-per-device" in result.stdout


def test_query_subset(cli):
    assert cli("insert", "--target", "sqlite", "-w", "1", "-r", "1", "--num-inserts", "100").code == 0
    result = cli("query", "--target", "sqlite", "-r", "1", "--queries", "count-events")
    assert result.code == 0, result.stderr
    assert [row["query"] for row in result.results()["queries"]] == ["count-events"]


def test_same_seed_same_data(cli, tmp_path):
    def fingerprint():
        with sqlite3.connect(tmp_path / "iotdb-bench.sqlite3") as db:
            return db.execute("SELECT round(sum(temperature), 4), count(*), min(device_id), max(timestamp) FROM events").fetchone()

    assert cli("insert", "--target", "sqlite", "-w", "2", "-r", "1", "--num-inserts", "700", "--batch", "64", "--seed", "9").code == 0
    first = fingerprint()
    assert cli("insert", "--target", "sqlite", "-w", "2", "-r", "1", "--num-inserts", "700", "--batch", "300", "--seed", "9").code == 0
    assert fingerprint() == first
    assert cli("insert", "--target", "sqlite", "-w", "2", "-r", "1", "--num-inserts", "700", "--seed", "10").code == 0
    assert fingerprint() != first


def test_output_folder_option(cli, tmp_path):
    result = cli("insert", "--target", "sqlite", "-w", "1", "-r", "1", "--num-inserts", "100", "--output", "elsewhere")
    assert result.code == 0, result.stderr
    folders = list((tmp_path / "elsewhere").glob("*-sqlite-insert"))
    assert len(folders) == 1
    assert json.loads((folders[0] / "results.json").read_text())["spec"]["target"] == "sqlite"


def test_query_variant_not_offered_is_recorded_as_an_error(cli):
    assert cli("insert", "--target", "sqlite", "-w", "1", "-r", "1", "--num-inserts", "100").code == 0
    result = cli("query", "--target", "sqlite", "-r", "1", "--queries", "count-events,newest-per-device (loose index scan)")
    assert result.code == 0, result.stderr
    by_name = {row["query"]: row for row in result.results()["queries"]}
    assert by_name["count-events"]["rows"] == 1 and not by_name["count-events"]["errors"]
    assert by_name["newest-per-device (loose index scan)"]["errors"] == [
        "module 'sqlite' does not offer the query 'newest-per-device (loose index scan)'"]


def test_default_table_fits_a_100_column_terminal(cli):
    result = cli("insert", "--target", "sqlite", "-w", "1,4", "-r", "2", "--num-inserts", "500", env={"COLUMNS": "100"})
    assert result.code == 0, result.stderr
    table = [line for line in result.stdout.splitlines() if line[:1] in "┏┃┡│└"]
    assert table and all(len(line) <= 100 for line in table), "\n".join(table)
    [header] = [line for line in table if line.startswith("┃")]  # one block, one header line: nothing wrapped
    assert all(name in header for name in ("Workers", "Runs", "Inserts/s", "Min–Max", "CV", "p99 ms", "Count check"))
    assert "…" not in result.stdout  # no figure cut short
    averages = [row["throughput"]["avg"] for row in result.results()["inserts"]]
    assert all(f"{value:,.0f}" in result.stdout for value in averages)


def test_pregenerated_batches_store_the_same_events_and_answer_every_query(cli, tmp_path):
    """--pregenerate makes the timed phase's batches before the start: the same events are stored (the
    fingerprint of a run without it), after a prefill too, every query's answer is checked and right,
    and the report's conditions say the figures leave out making the events."""
    def fingerprint():
        with sqlite3.connect(tmp_path / "iotdb-bench.sqlite3") as db:
            return db.execute("SELECT round(sum(temperature), 4), count(*), min(device_id), max(timestamp) FROM events").fetchone()

    run = ["insert", "--target", "sqlite", "-w", "2", "-r", "1", "--num-inserts", "3000", "--batch", "250", "--seed", "9"]
    assert cli(*run).code == 0
    generated_during = fingerprint()
    pregenerated = cli(*run, "--pregenerate")
    assert pregenerated.code == 0, pregenerated.stderr
    assert fingerprint() == generated_during
    [report] = [r["report"] for r in pregenerated.results()["runs"]]
    assert report["spec"]["pregenerate"] is True and report["verification"]["ok"] is True
    assert all(worker["pregenerated_bytes"] > 0 for worker in report["workers"]), report["workers"]
    assert "batches pre-generated before the timed phase" in " ".join(pregenerated.stdout.split())

    with_prefill = cli(*run, "--pregenerate", "--prefill", "400")
    assert with_prefill.code == 0, with_prefill.stderr
    assert fingerprint()[1] == 2 * 3000 + 400
    queried = cli("query", "--target", "sqlite", "-r", "1")
    assert queried.query_rows()["count-events"] == 1  # every answer checked against the replayed tally and right


@pytest.mark.parametrize("options, says", [
    (["--num-inserts", "100"], "--pregenerate needs an insert run with --batch and --num-inserts"),
    (["--batch", "10", "--duration", "2"], "--pregenerate needs an insert run with --batch and --num-inserts"),
])
def test_pregenerate_without_a_known_number_of_batches_is_one_line(cli, options, says):
    result = cli("insert", "--target", "sqlite", "-w", "1", "-r", "1", "--pregenerate", *options)
    assert result.code == 2 and "Traceback" not in result.stderr, result.stderr
    assert says in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
