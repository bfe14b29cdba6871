"""A query whose answers are empty measures little: the executions that returned no row are counted,
their share is a figure of the queries' table (shown only when some answer was empty) and a flagged
finding of the run's and of compare's views."""

from __future__ import annotations

from iotdb_bench.cli.report import markdown
from iotdb_bench.cli.results import compared, findings, summary
from iotdb_bench.cli.results.document import Environment, ResultsDocument, RunRecord
from iotdb_bench.cli.results.tables.sections import compared_sections, document_sections
from iotdb_bench.simulator.measurement.stats import query_figures
from iotdb_bench.simulator.protocol import QueryRuns, WorkerResult
from iotdb_bench.simulator.report import RunReport
from iotdb_bench.simulator.spec import RunSpec


def document(empty_by_worker: list[int]) -> ResultsDocument:
    """device-downsample by two workers, 4 executions each, `empty_by_worker` of them without a row."""
    spec = RunSpec(run_id="run-1", task="query", target="postgresql", module="postgres", workers=2, queries=("device-downsample",))
    runs = [QueryRuns(seconds=[0.002] * 4, rows=0 if empty == 4 else 7, answer="ok", empty=empty, check_s=0.25) for empty in empty_by_worker]
    report = RunReport(run_id="run-1", task="query", spec=spec, start_at=0.0,
                       workers=[WorkerResult(worker=i, started_at=0.0, finished_at=1.0, queries={"device-downsample": one}) for i, one in enumerate(runs)],
                       queries={"device-downsample": query_figures(runs)})
    found = ResultsDocument(task="query", target="postgresql", platform="local", environment=Environment(), spec=spec, worker_counts=[2],
                            runs=[RunRecord(label="2 workers", workers=2, run=1, report=report)])
    summary.summarise(found)
    return found


def test_empty_answers_are_a_share_of_the_executions_and_a_flag():
    found = document([4, 2])
    row = found.queries[0]
    assert (row.executions, row.empty, row.empty_share, row.check_s) == (8, 6, 0.75, 0.5)
    [flag] = findings.of_kind(findings.document_findings(found), "empty-answers")
    assert flag.flag and flag.sentence().startswith("query device-downsample at 2 workers: 75% of the executions returned no row")
    table = markdown.table(next(section for section in document_sections(found) if section.name == "queries"))
    assert "| Empty answers (no row) |" in table and "| 75% |" in table
    compared_found = compared.compare([("folder", found)])
    assert "| 75% |" in markdown.table(next(section for section in compared_sections(compared_found) if section.name == "queries"))
    assert findings.of_kind(findings.compared_findings(compared_found), "empty-answers")


def test_answers_with_rows_add_no_column_and_no_flag():
    found = document([0, 0])
    assert found.queries[0].empty_share == 0.0
    assert not findings.of_kind(findings.document_findings(found), "empty-answers")
    assert "Empty" not in markdown.table(next(section for section in document_sections(found) if section.name == "queries"))
