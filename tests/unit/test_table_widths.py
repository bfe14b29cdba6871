"""Every command's tables at 80 columns, rendered from typed documents with the widest cells a run
shows (long target, query and insert-mode names, unstable spreads, flags, unchecked answers), without a
server: no line wider than the terminal, no table cut at its right edge, no figure or name cut.

insert, query, scan, mixed (queries under ingest, --compare-idle, --visibility), open loop (--rate),
fill-level steps, --find-max-rate, compare of all of them, a study and its dry run; the runs' tables
with and without --details. tests/integration/test_terminal_widths.py does the same on real runs.
"""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from iotdb_bench.cli import study_file
from iotdb_bench.cli.report import comparison, render, study_report
from iotdb_bench.cli.report.tables import FittedTable
from iotdb_bench.cli.results import compared, summary
from iotdb_bench.cli.results.document import QueryUnderIngestRow, ResultsDocument, ScanRow
from iotdb_bench.cli.results.rate_search import MaxRateSearch, RateStep
from iotdb_bench.cli.results.study import ranking
from iotdb_bench.cli.results.study.document import CellRecord, StudyDocument
from iotdb_bench.cli.results.tables.study_catalogue import PlannedCell
from iotdb_bench.simulator.measurement import stats
from iotdb_bench.simulator.spec import QUERY_NAMES
from tests import factories
from tests.unit.test_comparison import query_document
from tests.unit.test_open_loop_parts import open_loop_report

WIDTH = 80
TARGET = "postgresql-local"
MODE = "single-row INSERTs in one transaction, size 500"
EDGES = "┃│┓┐┫┤┩┛┘"  # the characters a table's line ends with when it is whole


class Recording(Console):
    """A terminal of WIDTH columns that keeps what was printed."""

    def __init__(self) -> None:
        super().__init__(width=WIDTH, record=True, file=io.StringIO())
        self.printed: list[object] = []

    def print(self, *objects, **options) -> None:
        self.printed += objects
        super().print(*objects, **options)


def inserts(**options) -> ResultsDocument:
    reports = [(workers, factories.insert_report([400 * workers], 0.4 + run / 10, throughput=9_000_000.0 * workers * (1 + run / 5),
                                                 workers=workers, counters=(0, 400 * workers), insert_mode=MODE))
               for workers in (1, 2, 4, 16) for run in range(3)]
    built = factories.document(reports, target=TARGET, **options)
    for row in built.inserts:
        row.count_check = "not applicable"
    return built


def steps() -> ResultsDocument:
    return factories.document([(1, factories.insert_report([2000], 0.5, level=level, insert_mode=MODE)) for level in (0, 2000, 4000)],
                              steps=3, target=TARGET)


def open_loop() -> ResultsDocument:
    return factories.document([(4, open_loop_report(200_000, sustained=False)), (4, open_loop_report(9_000))], target=TARGET)


def mixed() -> ResultsDocument:
    built = inserts()
    built.queries_under_ingest = [QueryUnderIngestRow(workers=16, query_workers=4, query=name, runs=3, executions=123_456, p50_ms=1234.5,
                                                      p99_ms=98765.4, max_ms=99999.0, idle_executions=12, idle_p50_ms=1111.1,
                                                      idle_p99_ms=2222.2, slowdown=1.11, errors=["statement timeout"] if index else [])
                                  for index, name in enumerate(QUERY_NAMES)]
    for row in built.inserts:
        row.query_workers, row.throughput_without_queries = 4, stats.spread([12_345_678.0, 13_000_000.0])
        row.visibility_p50_ms, row.visibility_p99_ms, row.visibility_max_ms, row.visibility_unseen = 4.27, 1234.5, 98765.4, 12
    return built


def max_rate() -> ResultsDocument:
    built = factories.document([(1, open_loop_report(rate)) for rate in (1000.0, 2000.0, 4000.0)], target=TARGET)
    built.max_rate = MaxRateSearch(latency_p99_ms=50.0, step_s=1.0, finished=True, answer=3875.0, steps=[
        RateStep(run_id=f"run-{rate:.0f}", target_rate=rate, achieved_rate=rate * 0.99, response_p50_ms=0.1, response_p99_ms=1972.2,
                 service_p99_ms=12.5, sustained=rate < 4000, passed=rate < 3000) for rate in (1000.0, 2000.0, 4000.0, 3000.0, 3500.0, 3875.0)])
    return built


def queries() -> ResultsDocument:
    names = [*QUERY_NAMES, "newest-per-device (loose index scan)"]
    built = query_document({name: ([0.000012, 12.5, 3.0], ["canceling statement due to statement timeout"] if index == 2 else [])
                            for index, name in enumerate(names)}, target=TARGET, wrong=(QUERY_NAMES[0],))
    summary.summarise(built)
    for row in built.queries[1:]:
        row.answer, row.answer_detail = "not checked", "--visibility wrote 1 marker events that the record does not account for"
    return built


def scans() -> ResultsDocument:
    built = factories.document([], task="scan", target=TARGET)
    built.scans = [ScanRow(workers=workers, runs=2, devices=100_000, rows=4_000_001, rows_per_s=stats.spread([1e6 / 3, 2e6 / 7]),
                           window_min=12_345.6, window_avg=234_567.8, window_max=3_456_789.0, page_p50_ms=1.06, page_p99_ms=1234.5,
                           page_max_ms=98765.4, check="order ok, counts not checked",
                           problem="counts not checked: --visibility wrote 1 marker events that the record does not account for")
                   for workers in (1, 16)]
    return built


DOCUMENTS = {"insert": inserts, "steps": steps, "open loop": open_loop, "mixed": mixed, "find-max-rate": max_rate, "query": queries,
             "scan": scans}


def assert_whole(console: Recording, what: str) -> None:
    """No line wider than the terminal, no table cut at its right edge, and every cell of every table
    whole: a figure or a name on one line, words (which wrap between them) each whole."""
    text = console.export_text()
    lines = text.splitlines()
    assert all(len(line) <= WIDTH for line in lines), f"{what}: a line wider than {WIDTH}: {max(lines, key=len)!r}"
    cut = [line for line in lines if line[:1] in "┏┃┡│└" and line.rstrip()[-1:] not in EDGES]
    assert not cut, f"{what}: a table cut at the terminal's edge: {cut[0]!r}"
    assert "…" not in text, f"{what}: a cell cut short"
    tables = [printed for printed in console.printed if isinstance(printed, FittedTable)]
    assert tables, f"{what}: no table printed"
    for table in tables:
        for cells in table.rendered.rows:
            for figure, cell in zip(table.rendered.figures, cells, strict=True):
                if figure.text and not figure.key:
                    assert all(word in text for word in cell.split()), f"{what}: {figure.header} {cell!r} cut"
                else:
                    assert any(cell in line for line in lines), f"{what}: {figure.header} {cell!r} not whole on a line"


@pytest.mark.parametrize("details", [False, True], ids=["default", "details"])
@pytest.mark.parametrize("name", list(DOCUMENTS))
def test_every_run_commands_tables_fit_80_columns_whole(monkeypatch, tmp_path, name, details):
    console = Recording()
    monkeypatch.setattr(render, "console", console)
    render.show(DOCUMENTS[name](), tmp_path, details)
    assert_whole(console, f"{name}{' --details' if details else ''}")


def test_compare_of_every_kind_of_run_fits_80_columns_whole(monkeypatch, tmp_path):
    console = Recording()
    monkeypatch.setattr(comparison, "console", console)
    sources = [(f"20261129T0612{index:02d}Z-{TARGET}-{name.replace(' ', '-')}", build()) for index, (name, build) in enumerate(DOCUMENTS.items())]
    comparison.write(compared.compare(sources), tmp_path)
    assert_whole(console, "compare")
    assert {"Inserts across runs", "Queries under ingest", "Visibility lag", "Queries across runs", "Scans across runs"} <= {
        table.rendered.title for table in console.printed if isinstance(table, FittedTable)}


STUDY = """
name: widths
targets: [sqlite, postgresql-local]
workers: [1, 16]
workloads:
  - name: copy
    insert: {num-inserts: 1000, batch: 500}
  - name: queries
    query: {queries: [count-events, temperature-stats-per-device]}
    workers: [1]
"""


def test_a_studys_tables_and_its_dry_run_fit_80_columns_whole(tmp_path):
    (tmp_path / "study.yaml").write_text(STUDY)
    study = study_file.load(tmp_path / "study.yaml")
    cells = []
    for target in ("sqlite", TARGET):
        for workers in (1, 16):
            built = inserts()
            cells.append(CellRecord(key=f"{target}-{workers}", index=len(cells), target=target, database=target, workload="copy", task="insert",
                                    workers=workers, runs=3, args=[], status="ok", inserts=[row for row in built.inserts if row.workers == workers]))
        cells.append(CellRecord(key=f"{target}-q", index=len(cells), target=target, database=target, workload="queries", task="query", workers=1,
                                runs=3, args=[], status="failed" if target == "sqlite" else "ok", error="the collector did not answer in 30 s",
                                queries=queries().queries))
    found = ranking.rankings(study, cells)
    document = StudyDocument(name=study.name, file="study.yaml", file_sha256="0" * 64, cells=cells, rankings=found,
                             scores=ranking.scores(study, found), score_formula=ranking.SCORE_FORMULA)
    console = Recording()
    for table in study_report.terminal_tables(document):
        console.print(table)
    assert_whole(console, "study")
    plan = Recording()
    plan.print(study_report.plan_table([PlannedCell(number=cell.index + 1, target=cell.target, workload=cell.workload, workers=cell.workers,
                                                    runs=cell.runs, state="not supported: insert mode copy is not one of this module's",
                                                    estimate="1.5 h", command=f"python run.py insert --batch 500 --num-inserts 31250000 "
                                                    f"--extra-option create_indices=true -w {cell.workers} -r 3 --target {cell.target}")
                                        for cell in cells], "Study widths: 6 cells in results/study-widths"))
    assert_whole(plan, "study --dry-run")
