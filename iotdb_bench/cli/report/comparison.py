"""`compare`'s views of saved runs, every one iterating the comparison's sections
(cli/results/tables/sections.py): the terminal's tables, the CSV files, compare.md, the plot and compare.html."""

from __future__ import annotations

from pathlib import Path

from iotdb_bench.cli.report import csv_files, html_report, markdown, plots, tables
from iotdb_bench.cli.results.compared import Compared
from iotdb_bench.cli.results.tables import sections
from iotdb_bench.cli.results.tables.sections import TERMINAL
from iotdb_bench.cli.terminal import console

MARKDOWN = "compare.md"


def write(compared: Compared, output: Path) -> Path:
    """The tables on the terminal and every file in `output`; returns compare.html."""
    found = sections.compared_sections(compared)
    for section in found:
        if section.shown_in(TERMINAL):
            console.print(tables.section_table(section))
    csv_files.write_sections(output, found)
    (output / MARKDOWN).write_text(markdown.compare(compared))
    drawn = [plots.comparison(compared, output / "compare.png")] if plots.wanted() else []
    return html_report.write_compare(output, compared, drawn)
