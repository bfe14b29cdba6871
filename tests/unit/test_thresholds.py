"""Thresholds (cli/results/thresholds.py): the grammar, the check of a threshold's figure against the
run's task and queries, the judgement on every row (k6's rule), the typed verdicts through results.json,
and the views that show them. The CLI's exit codes: tests/integration/test_thresholds_sqlite.py."""

from __future__ import annotations

import csv

import pytest
from rich.console import Console

from iotdb_bench.cli.report import csv_files, tables
from iotdb_bench.cli.results import findings, results_files, summary, thresholds
from iotdb_bench.cli.results.compared import compare
from iotdb_bench.cli.results.document import QueryRow, ThresholdVerdict
from iotdb_bench.cli.results.tables import sections
from iotdb_bench.cli.results.tables.sections import TERMINAL
from iotdb_bench.simulator.spec import QUERY_NAMES
from tests import factories
from tests.conftest import REPO_ROOT


def printed(renderable, width: int) -> list[str]:
    console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(renderable)
    return console.export_text().splitlines()


def two_worker_counts(ok: bool = True):
    """A document of 1 worker at 1,000 inserts/s (p99 5 ms) and 2 workers at 3,000 inserts/s (p99 9 ms)."""
    return factories.document([(1, factories.insert_report([1000], 1.0, workers=1, p99_ms=5.0, ok=ok)),
                               (2, factories.insert_report([3000], 1.0, workers=2, p99_ms=9.0, ok=ok))])


def judged(document, *expressions: str) -> list[ThresholdVerdict]:
    return [thresholds.judge(thresholds.parse(expression), document) for expression in expressions]


@pytest.mark.parametrize(("text", "figure", "query", "operator", "limit"), [
    ("inserts_per_s>=100000", "inserts_per_s", None, ">=", 100000.0),
    (" p99_ms <= 20 ", "p99_ms", None, "<=", 20.0),
    ("query.device-downsample.p95_ms<50", "p95_ms", "device-downsample", "<", 50.0),
    ("query.single-groupby-1-1-1.avg_ms<0.5", "avg_ms", "single-groupby-1-1-1", "<", 0.5),
    ("count_check==ok", "count_check", None, "==", "ok"),
    ("check!='FAILED'", "check", None, "!=", "FAILED"),
    ("cv<=10%", "cv", None, "<=", 0.1),
    ("retries==0", "retries", None, "==", 0.0),
])
def test_the_grammar(text, figure, query, operator, limit):
    threshold = thresholds.parse(text)
    assert (threshold.figure, threshold.query, threshold.operator, threshold.limit) == (figure, query, operator, limit)
    assert threshold.expression == text.strip() == str(threshold)


@pytest.mark.parametrize("text", ["inserts_per_s=>1", "inserts_per_s", "inserts_per_s>=", ">=5", "p99 ms<=5", "query..avg_ms<1"])
def test_what_is_no_threshold(text):
    with pytest.raises(ValueError, match="is not a threshold"):
        thresholds.parse(text)


@pytest.mark.parametrize(("text", "task", "fields", "problem"), [
    ("inserts_per_sec>=1", "insert", {}, "no figure 'inserts_per_sec' in an insert run (known: inserts_per_s, values_per_s,"),
    ("rows_per_s>1", "query", {}, "no figure 'rows_per_s' in a query run (known: avg_ms,"),
    ("count_check>=1", "insert", {}, "'count_check' is a check: compare its words with == or !="),
    ("count_check<ok", "insert", {}, "'count_check' is a check"),
    ("p99_ms<=fast", "insert", {}, "'p99_ms' is a number: the limit must be a number, not 'fast'"),
    ("query.nope.avg_ms<1", "query", {}, "the run has no query 'nope' (its queries: count-events,"),
    ("query.count-events.avg_ms<1", "scan", {}, "a scan run has no queries"),
    ("query.count-events.p99_ms<1", "insert", {}, "an insert run has query figures only with query clients (--query-workers)"),
    ("query.count-events.p95_ms<1", "insert", {"query_workers": 1}, "no figure 'p95_ms' in a query of an insert run (known: p50_ms, p99_ms,"),
])
def test_a_figure_the_run_does_not_have_is_named_with_the_known_ones(text, task, fields, problem):
    found = thresholds.problem(thresholds.parse(text), factories.spec(task=task, **fields))
    assert found is not None and found.startswith(problem), found


@pytest.mark.parametrize(("text", "task", "fields"), [
    ("inserts_per_s>=1", "insert", {}), ("count_check==ok", "insert", {}), ("db_cpu_s_per_million<3", "insert", {}),
    ("query.device-downsample.p95_ms<50", "query", {}), ("query.temperature-stats.latency_s<=1", "query", {}),  # a study's name too
    ("answer==ok", "query", {}), ("avg_ms<5", "query", {}), ("rows_per_s>=1", "scan", {}), ("check==ok", "scan", {}),
    ("query.count-events.p99_ms<100", "insert", {"query_workers": 2}),
])
def test_every_task_s_figures_and_the_study_s_names(text, task, fields):
    assert thresholds.problem(thresholds.parse(text), factories.spec(task=task, **fields)) is None


def test_every_name_names_one_figure_of_its_task():
    """A name two figures of one task share would judge one of them silently."""
    for figures in [*thresholds.FIGURES.values(), *thresholds.QUERY_FIGURES.values()]:
        names = [name for figure in figures for name in figure.names]
        assert len(names) == len(set(names)), sorted(name for name in names if names.count(name) > 1)


def test_every_row_must_pass():
    document = two_worker_counts()
    at_least, at_most, between = judged(document, "inserts_per_s>=2000", "p99_ms<=10", "inserts_per_s<3000")
    assert [(row.where, row.value, row.passed) for row in at_least.rows] == [("1 worker", 1000.0, False), ("2 workers", 3000.0, True)]
    assert at_least.passed is False and thresholds.because(at_least) == "1 worker: 1,000"
    assert at_most.passed is True and [row.shown for row in at_most.rows] == ["5.00", "9.00"]
    assert between.passed is False and thresholds.because(between) == "2 workers: 3,000"  # strictly less


def test_checks_are_compared_by_their_words():
    [passed] = judged(two_worker_counts(), "count_check==OK")
    [failed] = judged(two_worker_counts(ok=False), "count_check==ok")
    assert passed.passed is True
    assert failed.passed is False and [row.value for row in failed.rows] == ["FAILED", "FAILED"]


def test_a_figure_not_measured_fails():
    """Rows without resource figures: no evidence, no pass."""
    [verdict] = judged(two_worker_counts(), "db_cpu_s_per_million<1000")
    assert verdict.passed is False and {row.value for row in verdict.rows} == {None}
    assert thresholds.because(verdict) == "1 worker: not measured; 2 workers: not measured"


def test_a_single_run_has_no_cv_to_judge_and_several_runs_have():
    [single] = judged(two_worker_counts(), "cv<=10%")
    assert single.passed is False and single.rows[0].shown == "-"
    spread = factories.document([(1, factories.insert_report([1000], 1.0, throughput=value)) for value in (1000.0, 1100.0, 1050.0)])
    [several] = judged(spread, "cv<=10%")
    assert several.passed is True and 0 < several.rows[0].value < 0.1


def test_query_thresholds_judge_that_query_s_rows_and_plain_ones_every_query():
    document = factories.document([], task="query")
    document.queries = [QueryRow(workers=workers, query=name, executions=5, min_s=0.001, avg_s=0.002 * (index + 1), max_s=0.1, p95_s=0.05,
                                 rows=1, answer="ok") for workers in (1, 2) for index, name in enumerate(QUERY_NAMES)]
    one, every, answers = judged(document, "query.count-events.avg_ms<3", "avg_ms<5", "answer==ok")
    assert [(row.query, row.workers) for row in one.rows] == [("count-events", 1), ("count-events", 2)] and one.passed
    assert len(every.rows) == 2 * len(QUERY_NAMES) and not every.passed
    assert {row.query for row in every.rows if not row.passed} == set(QUERY_NAMES[2:])
    assert answers.passed and len(answers.rows) == 2 * len(QUERY_NAMES)


def test_a_run_without_rows_fails_every_threshold():
    [verdict] = judged(factories.document([]), "inserts_per_s>=1")
    assert verdict.passed is False and verdict.rows == [] and "no row to judge" in (verdict.problem or "")


def test_verdicts_go_through_results_json_and_are_judged_again_on_reading(tmp_path):
    document = two_worker_counts()
    document.thresholds = [ThresholdVerdict(threshold=thresholds.parse("inserts_per_s>=2000"))]  # as launch() begins a document
    summary.summarise(document)
    assert document.thresholds[0].passed is False
    results_files.save(tmp_path, document)
    read = results_files.read(tmp_path)
    assert read.thresholds == document.thresholds
    assert thresholds.failure(read.thresholds) == "1 of 1 threshold failed: inserts_per_s>=2000 (1 worker: 1,000)"


def test_the_section_comes_last_with_its_csv_file_and_a_flag_for_the_pages(tmp_path):
    document = two_worker_counts()
    document.thresholds = judged(document, "inserts_per_s>=2000", "count_check==ok")
    found = sections.document_sections(document)
    assert found[-1].name == "thresholds" and found[-1].title == "Thresholds: 1 of 2 FAILED"
    csv_files.write_sections(tmp_path, found)
    with (tmp_path / "thresholds.csv").open() as handle:
        lines = list(csv.DictReader(handle))
    assert [(line["threshold.expression"], line["passed"], line["rows.value"]) for line in lines] == [
        ("inserts_per_s>=2000", "False", "1000.0; 3000.0"), ("count_check==ok", "True", "ok; ok")]
    flags = findings.flags(findings.document_findings(document))
    assert "threshold inserts_per_s>=2000: FAILED: 1 worker: 1,000" in flags


def test_no_threshold_no_section_no_file(tmp_path):
    document = two_worker_counts()
    found = sections.document_sections(document)
    assert "thresholds" not in [section.name for section in found]
    csv_files.write_sections(tmp_path, found)
    assert not (tmp_path / "thresholds.csv").exists()


@pytest.mark.parametrize("width", [80, 100, 120])
def test_the_table_fits_the_terminal_with_long_query_names(width):
    document = factories.document([], task="query")
    document.queries = [QueryRow(workers=1, query=name, executions=5, min_s=0.001, avg_s=0.002, max_s=0.1, p95_s=0.05, rows=1, answer="ok")
                        for name in QUERY_NAMES]
    document.thresholds = judged(document, "answer==ok", "query.temperature-stats-per-device.latency_s<=0.0001")
    section = sections.document_sections(document)[-1]
    assert section.shown_in(TERMINAL)
    lines = printed(tables.section_table(section), width)
    assert max(len(line) for line in lines) <= width and not any("…" in line for line in lines)
    text = "\n".join(lines)
    assert "query.temperature-stats-per-device.latency_s<=0.0001" in text  # the key, whole
    assert text.count("FAILED") == 3  # the heading, the verdict and its row


def test_docs_list_every_threshold_name():
    written = (REPO_ROOT / "docs" / "thresholds.md").read_text()
    for figures in [*thresholds.FIGURES.values(), *thresholds.QUERY_FIGURES.values()]:
        for figure in figures:
            for name in figure.names:
                assert f"`{name}`" in written, name


def test_a_compared_table_names_each_verdict_s_source():
    document = two_worker_counts()
    document.thresholds = judged(document, "inserts_per_s>=2000")
    found = [section for section in sections.compared_sections(compare([("folder-a", document)])) if section.name == "thresholds"]
    assert [(row.source, row.database, row.passed) for row in found[0].rows] == [("folder-a", "sqlite", False)]
