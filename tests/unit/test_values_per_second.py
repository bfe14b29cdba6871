"""Values/s (data points) beside rows/s: in the run's figures, the rows across runs, the tables and
the files; older reports without them still read."""

from __future__ import annotations

from rich.console import Console

from iotdb_bench.cli.report import tables
from iotdb_bench.cli.results.document import ResultsDocument
from iotdb_bench.simulator.measurement.stats import InsertRunFigures, insert_figures
from iotdb_bench.simulator.protocol import WorkerResult
from tests.factories import document, insert_report, section


def with_values(report, values_per_event: int):
    figures = report.figures.model_copy(update={"values_per_event": values_per_event,
                                                "values_throughput": report.figures.throughput * values_per_event})
    return report.model_copy(update={"figures": figures})


def width(table) -> int:
    """The widest line of the table printed on a 100-column terminal."""
    console = Console(width=100, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(table)
    return max(len(line) for line in console.export_text().splitlines())


def test_values_throughput_is_rows_per_second_times_values_per_event():
    results = [WorkerResult(worker=w, started_at=0.0, finished_at=2.0, events=1000) for w in range(2)]
    figures = insert_figures(0.0, results, values_per_event=10)
    assert figures.throughput == 1000.0 and figures.values_throughput == 10_000.0 and figures.values_per_event == 10


def test_reports_saved_before_values_existed_read_as_one_value_per_event():
    saved = insert_report([500, 500], 2.0).figures.model_dump()
    del saved["values_per_event"], saved["values_throughput"]
    figures = InsertRunFigures.model_validate(saved)
    assert (figures.values_per_event, figures.values_throughput) == (1, figures.throughput)


def test_default_table_shows_values_per_second_only_for_several_values_and_fits_100_columns():
    big = [with_values(insert_report([9_000_000] * 10, 10.0, throughput=12_345_678.0 + i), 10) for i in range(3)]
    built = document([(16, report) for report in big])
    rows = built.inserts
    assert rows[0].values_per_row == 10 and rows[0].values_throughput.avg == 10 * rows[0].throughput.avg
    table = tables.section_table(section(built, "inserts"))
    headers = [figure.header for figure in table.rendered.figures]
    assert "Values/s" in headers and width(table) <= 100
    single = tables.section_table(section(document([(16, insert_report([9_000_000] * 10, 10.0, throughput=12_345_678.0))]), "inserts"))
    headers = [figure.header for figure in single.rendered.figures]
    assert "Values/s" not in headers and "Min–Max" in headers and width(single) <= 100
    built.steps, built.spec = 2, built.spec.model_copy(update={"duration_s": 2.0})
    steps = tables.section_table(section(built, "inserts"))
    assert "Values/s" in [figure.header for figure in steps.rendered.figures] and steps.rendered.title == "Fill level (step: 2 s)"


def test_values_survive_the_results_file():
    saved = document([(4, with_values(insert_report([1000, 1000], 2.0), 4))])
    again = ResultsDocument.model_validate_json(saved.model_dump_json())
    assert again.inserts[0].values_throughput.avg == 4 * again.inserts[0].throughput.avg
    assert again.runs[0].report.figures.values_per_event == 4
