"""The catalogue of figures and the terminal's layout of it: every figure renders from typed rows, a
table fits any width by splitting into blocks that repeat the row's keys, nothing is cut to "…", and a
single run shows no spread."""

from __future__ import annotations

import pytest
from rich.console import Console

from iotdb_bench.cli.report import markdown, tables
from iotdb_bench.cli.results import compared
from iotdb_bench.cli.results.document import QueryRow
from iotdb_bench.cli.results.tables import catalogue, formats, sections
from iotdb_bench.simulator.spec import QUERY_NAMES
from tests import factories


def printed(renderable, width: int) -> list[str]:
    console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(renderable)
    return console.export_text().splitlines()


def _inserts(runs_per_count: int = 3):
    throughputs = [9_000_000.0 + i * 1_000_000 for i in range(runs_per_count)]
    return factories.document([(16, factories.insert_report([1000], 1.0, throughput=value, workers=16)) for value in throughputs]
                              + [(1, factories.insert_report([1000], 1.0, throughput=value, workers=1)) for value in throughputs]).inserts


@pytest.mark.parametrize("width", [80, 100, 120])
def test_details_split_into_blocks_that_fit_and_keep_every_figure_whole(width):
    rows = _inserts()
    table = tables.fitted(catalogue.INSERTS, rows, catalogue.DETAILS, title="a title long enough to wrap " * 3)
    lines = printed(table, width)
    assert max(len(line) for line in lines) <= width and not any("…" in line for line in lines)
    text = "\n".join(lines)
    for cells in table.rendered.rows:
        for cell in cells:
            assert cell in text, cell  # every cell whole on one line
    headers = [line for line in lines if line.startswith("┃ Workers")]
    assert len(headers) > 1  # split into blocks, each led by the key column


def test_query_names_never_cut_and_times_in_milliseconds_at_80_columns():
    rows = [QueryRow(workers=16, query=name, executions=10, min_s=0.00001, avg_s=0.000012, max_s=12.5, p95_s=0.5, rows=1)
            for name in QUERY_NAMES]
    lines = printed(tables.fitted(catalogue.QUERIES, rows, catalogue.DEFAULT), 80)
    assert max(len(line) for line in lines) <= 80 and not any("…" in line for line in lines)
    for name in QUERY_NAMES:
        assert any(f" {name} " in line for line in lines), name
    assert any("0.012" in line for line in lines)  # 0.000012 s = 0.012 ms, not 0.0000


def test_a_single_run_shows_no_spread_and_is_never_unstable():
    [row] = _inserts(1)[:1]
    assert row.throughput.n == 1
    assert formats.cv(row.throughput) == "-" and formats.min_max(row.throughput) == "-" and not formats.unstable(row.throughput)


def test_every_figure_of_every_catalogue_renders_for_insert_and_compare_rows():
    rows = compared.compare([("folder-a", factories.document([(2, factories.insert_report([500, 500], 1.0, workers=2))]))])
    rendered = catalogue.render(catalogue.INSERTS, rows.inserts, catalogue.DETAILS, compared=True)
    assert [figure.header for figure in rendered.figures][:3] == ["Database", "Source", "Workers"]
    assert rendered.rows[0][1] == "folder-a"
    assert all(isinstance(cell, str) and cell for cell in rendered.rows[0])
    written = markdown.table(sections.compared_sections(rows)[0])
    assert "| Source (results folder) |" in written and "| folder-a |" in written


def test_words_for_counts():
    assert formats.workers(1) == "1 worker" and formats.workers(2) == "2 workers"
    assert formats.plural(1, "query client") == "1 query client"
    assert formats.ms(0.00042) == "0.00042" and formats.ms(3.14159) == "3.14" and formats.ms(1234.5) == "1,234"
