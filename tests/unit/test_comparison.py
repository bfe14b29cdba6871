"""The comparison table's rows on known saved documents: query cells, failures, unstable marks, variants."""

from iotdb_bench.cli.report import comparison
from iotdb_bench.cli.results.document import Environment, ResultsDocument, RunRecord
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


def test_query_cells_failures_unstable_and_variants():
    document = query_document({
        "count-events": ([2.0, 2.0, 2.0], []),
        "temperature-stats": ([1.0, 2.0, 3.0], []),  # CV 50%: marked
        "newest-per-device": ([], ["temporary file size exceeds temp_file_limit"]),
        "newest-per-device (loose index scan)": ([0.08, 0.08], []),
        "device-downsample": ([0.5, 0.5], []),
    }, wrong=("device-downsample",))
    rows, detail = comparison.query_rows([("folder", document)])
    cells = rows[0].cells
    assert cells["count-events"] == "2"
    assert cells["temperature-stats"] == "2*"
    assert cells["newest-per-device"] == "failure"
    assert cells["temperature-min-max"] == "-"  # not run
    columns = comparison.query_columns(rows)
    assert columns[-1] == "newest-per-device (loose index scan)" and len(columns) == 7
    markdown = comparison.query_markdown(detail)
    assert "| postgresql | folder | 1 | temperature-stats | 2,000 | 3,000 | 50.0% unstable | ok | - |" in markdown
    assert "| postgresql | folder | 1 | device-downsample | 500 | 500 | 0.0% | WRONG | - |" in markdown
    assert "| newest-per-device | - | - | - | ok | temporary file size exceeds temp_file_limit |" in markdown
    by_query = {row.query: row for row in detail}
    assert by_query["newest-per-device"].errors.startswith("temporary file size")
    assert by_query["temperature-stats"].unstable is True and by_query["count-events"].unstable is False
    assert (by_query["device-downsample"].answer, by_query["device-downsample"].answer_detail) == ("wrong", "count is 1, expected 2")
