"""Compared query rows on known saved documents: the documents' own rows, the spread of the executions, failures,
WRONG answers and unstable marks in the tables and the flags."""

from iotdb_bench.cli.report import markdown
from iotdb_bench.cli.results import compared, findings, summary
from iotdb_bench.cli.results.document import Environment, QueryRow, ResultsDocument, RunRecord
from iotdb_bench.cli.results.tables.sections import compared_sections
from iotdb_bench.simulator.measurement.stats import query_figures
from iotdb_bench.simulator.protocol import QueryRuns, WorkerResult
from iotdb_bench.simulator.report import RunReport
from iotdb_bench.simulator.spec import RunSpec


def query_document(queries, target="postgresql", wrong=()):
    spec = RunSpec(run_id="run-1", task="query", target=target, module="postgres", workers=1, queries=tuple(queries))
    runs = {name: QueryRuns(seconds=seconds, rows=20 if seconds else None, error=errors[0] if errors else None,
                            answer="wrong" if name in wrong else "ok", answer_detail="count is 1, expected 2" if name in wrong else None)
            for name, (seconds, errors) in queries.items()}
    worker = WorkerResult(worker=0, started_at=0.0, finished_at=1.0, queries=runs)
    report = RunReport(run_id="run-1", task="query", spec=spec, start_at=0.0, workers=[worker],
                       queries={name: query_figures([one]) for name, one in runs.items()})
    return ResultsDocument(task="query", target=target, platform="local", environment=Environment(), spec=spec, worker_counts=[1],
                           runs=[RunRecord(label="1 workers", workers=1, run=1, report=report)])


def test_compared_query_rows_are_the_documents_rows_with_the_spread_of_their_executions():
    document = query_document({
        "count-events": ([2.0, 2.0, 2.0], []),
        "temperature-stats": ([1.0, 2.0, 3.0], []),  # CV 50%: marked
        "newest-per-device": ([], ["temporary file size exceeds temp_file_limit"]),
        "newest-per-device (loose index scan)": ([0.08, 0.08], []),
        "device-downsample": ([0.5, 0.5], []),
    }, wrong=("device-downsample",))
    summary.summarise(document)
    rows = compared.compare([("folder", document)]).queries
    assert [row.model_dump(include=set(QueryRow.model_fields) | set(QueryRow.model_computed_fields)) for row in rows] == [row.model_dump() for row in document.queries]
    written = markdown.table(next(section for section in compared_sections(compared.compare([("folder", document)])) if section.name == "queries"))
    assert "| postgresql | folder | 1 | temperature-stats | 2,000 | 3,000 | 50.0% unstable | ok | - |" in written
    assert "| postgresql | folder | 1 | device-downsample | 500 | 500 | 0.0% | WRONG | - |" in written
    assert "| newest-per-device | - | - | - | ok | temporary file size exceeds temp_file_limit |" in written
    by_query = {row.query: row for row in rows}
    assert by_query["newest-per-device"].errors == ["temporary file size exceeds temp_file_limit"]
    assert by_query["temperature-stats"].unstable is True and by_query["count-events"].unstable is False
    assert (by_query["device-downsample"].answer, by_query["device-downsample"].answer_detail) == ("wrong", "count is 1, expected 2")
    flags = findings.flags(findings.compared_findings(compared.compare([("folder", document)])))
    assert "postgresql (folder), query device-downsample: WRONG answer: count is 1, expected 2" in flags
    assert "postgresql (folder), query temperature-stats: unstable executions (CV 50.0%)" in flags
