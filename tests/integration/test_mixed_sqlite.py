"""Mixed workload and visibility lag end to end on SQLite (local platform): query clients beside the
workers, their latency under ingest and idle, open-loop queries, the probe's markers in the count
check, and the one-line refusals of options that do not go together."""

from __future__ import annotations

import sqlite3

import pytest

from iotdb_bench.cli.results.tables import catalogue
from iotdb_bench.simulator.collector.visibility import PROBE_INDEX
from iotdb_bench.simulator.spec import TSBS_IOT_QUERIES
from tests.csv_checks import assert_round_trip, names, read_csv
from tests.tsbs_story import SMALL_IOT_DATA, SMALL_IOT_HOURS

pytestmark = pytest.mark.slow

PROBE_DEVICE = f"w{PROBE_INDEX:06d}-d000000"


def assert_one_line_error(result, code: int, *fragments: str) -> None:
    assert result.code == code, (result.code, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr + result.stdout
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and all(fragment in lines[0] for fragment in fragments), result.stderr


def insert(cli, *args: str):
    return cli("insert", "--target", "sqlite", "-r", "1", "--extra-option", "path=mixed.sqlite3", *args, timeout=300)


@pytest.mark.plots
def test_query_clients_of_a_count_run_stop_with_the_inserts_and_markers_count_exactly(cli, tmp_path):
    result = insert(cli, "-w", "2", "--batch", "100", "--num-inserts", "20000", "--prefill", "5000", "--query-workers", "2",
                    "--queries", "count-events,temperature-stats", "--visibility")
    [report] = result.verified_reports([45000 + result.results()["runs"][0]["report"]["verification"]["markers"]])
    mixed = report["queries_under_ingest"]
    assert set(mixed) == {"count-events", "temperature-stats"}
    for figures in mixed.values():
        assert figures["under_ingest"]["calls"] > 0 and not figures["errors"]
        assert figures["idle"]["calls"] == 2 * 3  # every client runs each query --runs' default 3 times on the idle data
    # The query clients' results are not workers' results: the insert figures hold the two workers only.
    assert [worker["worker"] for worker in report["workers"]] == [0, 1]
    visibility = report["visibility"]
    assert visibility["markers"] > 0 and visibility["seen"] == visibility["markers"] and visibility["unseen"] == 0
    with sqlite3.connect(tmp_path / "mixed.sqlite3") as conn:
        stored = conn.execute("SELECT count(*) FROM events WHERE device_id = ?", (PROBE_DEVICE,)).fetchone()[0]
    assert stored == visibility["markers"] == report["verification"]["markers"]
    assert "Queries under ingest" in result.stdout and "Visibility lag" in result.stdout
    assert (result.results_folders()[-1] / "visibility-lag.png").is_file()
    assert "Visibility lag" in (result.results_folders()[-1] / "report.html").read_text()


def test_tsbs_iot_types_run_under_ingest_by_default_beside_the_trucks_being_written(cli):
    """A mixed run of TSBS's IoT data: without --queries the clients run the use case's 13 types,
    their parameters drawn from the trucks and times being written; none fails on the data in flux."""
    result = insert(cli, "--schema", "tsbs-iot", "--devices", str(SMALL_IOT_DATA.hosts), "--time-range", f"{SMALL_IOT_HOURS}h",
                    "-w", "1", "--batch", "500", "--query-workers", "1")
    [report] = result.verified_reports([SMALL_IOT_DATA.rows])
    mixed = report["queries_under_ingest"]
    assert set(mixed) == set(TSBS_IOT_QUERIES)
    for name, figures in mixed.items():
        assert not figures["errors"], (name, figures["errors"])
        assert figures["idle"]["calls"] == 3, name
    assert sum(figures["under_ingest"]["calls"] for figures in mixed.values()) > 0


def test_open_loop_queries_follow_the_rate_of_all_clients_together(cli):
    result = insert(cli, "-w", "1", "--batch", "100", "--duration", "4", "--query-workers", "2", "--queries", "count-events",
                    "--query-rate", "5")
    assert result.code == 0, result.stderr
    [run] = result.results()["runs"]
    # 5 per second for 4 s, the two clients together; a start due at the very end may or may not make it.
    assert 17 <= run["report"]["queries_under_ingest"]["count-events"]["under_ingest"]["calls"] <= 21


@pytest.mark.plots
def test_compare_idle_runs_each_count_again_without_query_clients(cli, tmp_path):
    result = insert(cli, "-w", "1", "--batch", "100", "--duration", "2", "--query-workers", "1", "--queries", "count-events", "--compare-idle")
    assert result.code == 0, result.stderr
    document = result.results()
    assert [run["without_queries"] for run in document["runs"]] == [False, True]
    assert document["runs"][1]["report"]["spec"]["query_workers"] == 0 and not document["runs"][1]["report"]["queries_under_ingest"]
    [row] = document["inserts"]
    assert row["query_workers"] == 1 and row["runs"] == 1
    assert row["throughput_without_queries"]["avg"] == document["runs"][1]["report"]["figures"]["throughput"]
    assert [q["query"] for q in document["queries_under_ingest"]] == ["count-events"]
    assert "without them" in " ".join(result.stdout.split()) and "first queries run on empty tables" in result.stderr
    folder = result.results_folders()[-1]
    assert {"queries-under-ingest.png", "queries-under-ingest.csv"} <= {path.name for path in folder.iterdir()}
    compared = cli("compare", str(folder), "--output", "compared")
    assert compared.code == 0, compared.stderr
    markdown = (tmp_path / "compared" / "compare.md").read_text()
    assert "## Queries under ingest" in markdown and "## Inserts with and without queries" in markdown
    header, rows = read_csv(tmp_path / "compared" / "queries-under-ingest.csv")
    assert header == names((catalogue.UNDER_INGEST,), compared=True)
    assert [row["query"] for row in rows] == ["count-events"] and {row["source"] for row in rows} == {folder.name}
    assert_round_trip([name for name in header if name not in ("database", "source")], rows, document["queries_under_ingest"])
    header, rows = read_csv(tmp_path / "compared" / "inserts.csv")
    assert float(rows[0]["throughput_without_queries.avg"]) == row["throughput_without_queries"]["avg"]
    page = (folder / "report.html").read_text()
    assert "Queries under ingest" in page and "Inserts/s without the query clients (--compare-idle)" in page
    assert "Queries under ingest" in (tmp_path / "compared" / "compare.html").read_text()


@pytest.mark.parametrize(("args", "fragments"), [
    (["query", "--target", "sqlite", "--query-workers", "2"], ["--query-workers"]),
    (["insert", "--target", "sqlite", "--query-workers", "2", "--queries", "count-events,fastest"], ["--queries", "fastest"]),
    (["insert", "--target", "sqlite", "--queries", "count-events"], ["--queries applies to query clients"]),
    (["insert", "--target", "sqlite", "--query-rate", "3"], ["--query-rate applies to query clients"]),
    (["insert", "--target", "sqlite", "--compare-idle"], ["--compare-idle applies to query clients"]),
    (["insert", "--target", "null", "--visibility"], ["module 'null' does not support --visibility"]),
    (["insert", "--target", "sqlite", "--visibility", "--schema", "slim"], ["--visibility needs --schema events"]),
    (["insert", "--target", "sqlite", "-w", "1", "-r", "1", "--steps", "2", "--query-workers", "1", "--compare-idle"], ["--compare-idle", "--steps"]),
])
def test_options_that_do_not_go_together_are_refused_in_one_line(cli, args, fragments):
    assert_one_line_error(cli(*args), 2, *fragments)
