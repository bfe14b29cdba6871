"""The CSV files take their columns from the catalogue: a figure added to it is in every CSV of its rows,
and every cell reads back exactly the number results.json holds."""

from __future__ import annotations

import dataclasses
import json

import pytest
from click.testing import CliRunner

from iotdb_bench.cli.commands.saved_results import compare
from iotdb_bench.cli.report import csv_files
from iotdb_bench.cli.results import results_files, summary
from iotdb_bench.cli.results.document import Environment, QueryUnderIngestRow, ResultsDocument, ScanRow
from iotdb_bench.cli.results.rate_search import MaxRateSearch, RateStep
from iotdb_bench.cli.results.tables import catalogue
from iotdb_bench.cli.results.tables.catalogue import Figure
from iotdb_bench.cli.results.tables.sections import document_sections
from iotdb_bench.simulator.measurement import stats
from tests import factories
from tests.conftest import REPO_ROOT
from tests.csv_checks import assert_round_trip, names, read_csv
from tests.unit.test_comparison import query_document

INSERT_TABLES = (catalogue.INSERTS, catalogue.VISIBILITY)  # an insert row's figures: summary.csv and inserts.csv


def save(folder, document: ResultsDocument) -> None:
    """A results folder as a command leaves it: results.json and the CSV file of every section."""
    results_files.save(folder, document)
    csv_files.write_sections(folder, document_sections(document))


def insert_document() -> ResultsDocument:
    """Two worker counts, two runs each, with figures that are not round in binary (1/3, 0.1), and a
    --find-max-rate search."""
    reports = [(1, factories.insert_report([1000, 1000], 2 / 3, p99_ms=0.1, counters=(0, 2000))),
               (1, factories.insert_report([1000, 1001], 0.7, p99_ms=0.3, counters=(0, 2001))),
               (2, factories.insert_report([2000, 1999], 1 / 3, workers=2, counters=(0, 3999))),
               (2, factories.insert_report([2000, 2000], 0.35, workers=2, counters=(0, 4000)))]
    document = factories.document(reports)
    document.max_rate = MaxRateSearch(latency_p99_ms=10.0, step_s=5.0, finished=True, answer=1000.0, steps=[
        RateStep(run_id="run-1", target_rate=1000.0, achieved_rate=2000 / 3, response_p50_ms=0.1, response_p99_ms=3.3,
                 service_p99_ms=1.1, sustained=True, passed=True)])
    return document


def saved_document(task: str) -> ResultsDocument:
    """A document of each task whose summary rows are set as a run would have left them."""
    if task == "insert":
        return insert_document()
    if task == "query":
        document = query_document({"count-events": ([0.001, 0.1 / 3], []), "temperature-stats": ([], ["timeout"])})
        summary.summarise(document)
        return document
    document = ResultsDocument(task="scan", target="sqlite", platform="local", status="ok", environment=Environment(),
                               spec=factories.spec(task="scan"), worker_counts=[2])
    document.scans = [ScanRow(workers=2, runs=2, devices=20, rows=4000, rows_per_s=stats.spread([1e6 / 3, 2e6 / 7]),
                              window_min=None, page_p50_ms=0.1, page_p99_ms=0.7, page_max_ms=1.25, check="ok")]
    return document


@pytest.mark.parametrize(("task", "tables", "key"), [
    ("insert", (catalogue.INSERTS, catalogue.VISIBILITY), "inserts"),
    ("query", (catalogue.QUERIES,), "queries"),
    ("scan", (catalogue.SCANS,), "scans"),
])
def test_summary_csv_is_the_catalogues_columns_and_round_trips_results_json(tmp_path, task, tables, key):
    save(tmp_path, saved_document(task))
    header, rows = read_csv(tmp_path / "summary.csv")
    assert header == names(tables)
    assert "database" not in header and "source" not in header  # a compared row's columns only in compare's files
    assert_round_trip(header, rows, json.loads((tmp_path / "results.json").read_text())[key])


def test_runs_and_rate_steps_csv_are_their_catalogues_and_round_trip(tmp_path):
    save(tmp_path, insert_document())
    saved = json.loads((tmp_path / "results.json").read_text())
    header, rows = read_csv(tmp_path / "runs.csv")
    assert header == names((catalogue.EVERY_RUN,)) and [row["label"] for row in rows] == [run["label"] for run in saved["runs"]]
    assert_round_trip(header, rows, saved["runs"])
    header, rows = read_csv(tmp_path / "rate-steps.csv")
    assert header == names((catalogue.RATE_STEPS,)) and [row["number"] for row in rows] == ["1"]
    assert_round_trip(header[1:], rows, saved["max_rate"]["steps"])


def test_cells_are_plain_numbers_in_the_unit_the_name_gives(tmp_path):
    document = insert_document()
    save(tmp_path, document)
    _, rows = read_csv(tmp_path / "summary.csv")
    first = document.inserts[0]
    assert float(rows[0]["throughput.avg"]) == first.throughput.avg and "," not in rows[0]["throughput.avg"]
    assert float(rows[0]["p99_ms.avg"]) == pytest.approx(0.2)  # milliseconds, the mean of 0.1 and 0.3, no "ms"
    assert float(rows[0]["start_skew_s"]) == 0.002  # seconds as the name says (the table shows "2" ms)
    assert rows[0]["resources.db_cpu_s_per_million"] == ""  # not measured: empty, never "n/m" or "-"
    assert rows[0]["throughput.unstable"] in ("True", "False")


def test_a_figure_without_csv_columns_is_refused():
    with pytest.raises(ValueError, match="names no CSV column"):
        Figure("New figure", lambda row: "1")


def _with_fake_figure(monkeypatch, name: str) -> str:
    """The catalogue `name` with one more figure, shown nowhere by default: its column must still be in the CSV."""
    table = getattr(catalogue, name)
    column = f"fake_{name.lower()}_ms"
    fake = Figure("Fake", lambda row: "1.5", catalogue.MORE, csv=((column, lambda row: 1.5),))
    monkeypatch.setattr(catalogue, name, dataclasses.replace(table, figures=(*table.figures, fake)))
    return column


@pytest.mark.parametrize(("name", "task", "file"), [
    ("INSERTS", "insert", "summary.csv"),
    ("VISIBILITY", "insert", "summary.csv"),
    ("QUERIES", "query", "summary.csv"),
    ("SCANS", "scan", "summary.csv"),
    ("UNDER_INGEST", "insert", "queries-under-ingest.csv"),
    ("CROSSCHECKS", "insert", "crosscheck.csv"),
    ("EVERY_RUN", "insert", "runs.csv"),
    ("RATE_STEPS", "insert", "rate-steps.csv"),
])
def test_a_figure_added_to_the_catalogue_is_in_the_run_csv(tmp_path, monkeypatch, name, task, file):
    column = _with_fake_figure(monkeypatch, name)
    document = saved_document(task)
    document.queries_under_ingest = [QueryUnderIngestRow(workers=1, query_workers=1, query="count-events", runs=1, executions=3, p50_ms=0.5)]
    save(tmp_path, document)
    header, rows = read_csv(tmp_path / file)
    assert column in header and rows and {row[column] for row in rows} == {"1.5"}


@pytest.mark.parametrize(("name", "file"), [("INSERTS", "inserts.csv"), ("VISIBILITY", "inserts.csv"), ("QUERIES", "queries.csv")])
def test_a_figure_added_to_the_catalogue_is_in_compares_csv(tmp_path, monkeypatch, name, file):
    column = _with_fake_figure(monkeypatch, name)
    for folder, task in (("inserts", "insert"), ("queries", "query")):
        (tmp_path / folder).mkdir()
        save(tmp_path / folder, saved_document(task))
    result = CliRunner().invoke(compare, [str(tmp_path / "inserts"), str(tmp_path / "queries"), "--output", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    header, rows = read_csv(tmp_path / "out" / file)
    assert column in header and rows and {row[column] for row in rows} == {"1.5"}


def test_compares_csv_names_each_rows_source_and_round_trips_its_results_json(tmp_path):
    for folder, task in (("inserts", "insert"), ("queries", "query")):
        (tmp_path / folder).mkdir()
        save(tmp_path / folder, saved_document(task))
    result = CliRunner().invoke(compare, [str(tmp_path / "inserts"), str(tmp_path / "queries"), "--output", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output

    header, rows = read_csv(tmp_path / "out" / "inserts.csv")
    assert header == names(INSERT_TABLES, compared=True) and header[:4] == ["database", "differs", "source", "workers"]
    assert {row["source"] for row in rows} == {"inserts"} and {row["database"] for row in rows} == {"sqlite"}
    saved = json.loads((tmp_path / "inserts" / "results.json").read_text())["inserts"]
    own = [column for column in header if column not in ("database", "differs", "source", "primary_key", "crosscheck", "status", "workload")]
    assert_round_trip(own, rows, saved)

    header, rows = read_csv(tmp_path / "out" / "queries.csv")
    assert header == names((catalogue.QUERIES,), compared=True)
    assert {row["source"] for row in rows} == {"queries"}
    by_query = {row["query"]: row for row in rows}
    saved = {row["query"]: row for row in json.loads((tmp_path / "queries" / "results.json").read_text())["queries"]}
    assert float(by_query["count-events"]["avg_s"]) == saved["count-events"]["avg_s"]  # seconds, exactly
    assert by_query["temperature-stats"]["avg_s"] == "" and by_query["temperature-stats"]["errors"] == "timeout"


def test_docs_name_every_column_of_every_csv_file():
    """docs/csv-files.md lists each file's columns in the files' order: a figure added to the catalogue
    without a line in the docs fails here."""
    sections = {
        "`summary.csv` of an insert run, `inserts.csv` of compare": INSERT_TABLES,
        "`summary.csv` of a query run, `queries.csv` of compare": (catalogue.QUERIES,),
        "`summary.csv` of a scan run, `scans.csv` of compare": (catalogue.SCANS,),
        "`queries-under-ingest.csv` (insert runs with `--query-workers`, and compare)": (catalogue.UNDER_INGEST,),
        "`crosscheck.csv` of an insert run": (catalogue.CROSSCHECKS,),
        "`runs.csv` of an insert run": (catalogue.EVERY_RUN,),
        "`rate-steps.csv` of `--find-max-rate`": (catalogue.RATE_STEPS,),
        "`thresholds.csv` (runs with `--threshold`, and compare)": (catalogue.THRESHOLDS,),
    }
    documented: dict[str, list[str]] = {}
    for part in (REPO_ROOT / "docs" / "csv-files.md").read_text().split("\n### ")[1:]:
        title, _, body = part.partition("\n")
        documented[title] = [line.split("`")[1] for line in body.splitlines() if line.startswith("| `")]
    assert documented == {title: names(tables, compared=True) for title, tables in sections.items()}


def test_compares_insert_csv_names_the_conditions_a_row_differs_in(tmp_path):
    for folder, batch in (("batch-1000", 1000), ("batch-100", 100)):
        document = insert_document()
        document.spec = document.spec.model_copy(update={"batch": batch})
        (tmp_path / folder).mkdir()
        save(tmp_path / folder, document)
    result = CliRunner().invoke(compare, [str(tmp_path / "batch-1000"), str(tmp_path / "batch-100"), "--output", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    _, rows = read_csv(tmp_path / "out" / "inserts.csv")
    # the first folder's batch is the usual one on a tie: the other folder's rows are marked
    assert [(row["source"], row["differs"]) for row in rows] == [("batch-1000", ""), ("batch-1000", ""),
                                                                 ("batch-100", "batch 100 (others: 1000)"), ("batch-100", "batch 100 (others: 1000)")]
