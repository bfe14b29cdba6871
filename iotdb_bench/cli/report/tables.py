"""The terminal's view of the catalogue (cli/report/catalogue.py): tables that fit the terminal.

A table is laid out when it is printed, for the width it is printed at: the columns that fit go side
by side; the rest follow in further blocks that repeat the columns naming the row (workers, query,
database), so no figure is ever cut, wrapped or truncated, at 80 columns as at 200. The caption
(abbreviations explained once, then the conditions) is wrapped between words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from types import SimpleNamespace

from rich import box
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from iotdb_bench.cli.report import catalogue
from iotdb_bench.cli.report.catalogue import COMPARE, DEFAULT, DETAILS, Figure, Rendered
from iotdb_bench.cli.report.comparison import CompareInsertRow, CompareQueryDetail, CompareScanRow
from iotdb_bench.cli.results.crosscheck import CrossCheck
from iotdb_bench.cli.results.document import InsertRow, QueryRow, QueryUnderIngestRow, ScanRow
from iotdb_bench.cli.results.rate_search import MaxRateSearch

MIN_TEXT_WIDTH = 12  # a column of words narrower than this wraps into too many lines


@dataclass
class FittedTable:
    """A rendered table that splits its columns into blocks to fit the width it is printed at."""

    rendered: Rendered
    caption: str = ""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        figures, rows = self.rendered.figures, self.rendered.rows
        keys = [index for index, figure in enumerate(figures) if figure.key]
        others = [index for index, figure in enumerate(figures) if not figure.key]
        yield Text(self.rendered.title, style="bold")
        for block in _blocks(keys, others, [_min_width(figure, [row[i] for row in rows]) for i, figure in enumerate(figures)], width):
            table = Table(box=box.HEAVY_HEAD, expand=False)
            for index in block:
                figure = figures[index]
                cells = [row[index] for row in rows]
                minimum = _min_width(figure, cells)
                table.add_column(figure.header, justify="left" if figure.text else "right", no_wrap=not figure.text or figure.key,
                                 min_width=minimum, overflow="fold")
            for row in rows:
                table.add_row(*(row[index] for index in block))
            yield table
        caption = " ".join(filter(None, [self.rendered.caption]))
        if caption:
            yield Text(caption, style="dim")
        if self.caption:
            yield Text(self.caption, style="dim")


def _min_width(figure: Figure, cells: Sequence[str]) -> int:
    """A figure's cells, and the columns naming the row, whole on one line; any other column of words at
    least its longest word (names are never cut), wrapping between words."""
    if not figure.text or figure.key:  # a figure, or what names the row, whole on one line
        return max([len(figure.header), *(len(cell) for cell in cells)])
    header_word = max((len(word) for word in figure.header.split()), default=0)
    longest_word = max([header_word, *(len(word) for cell in cells for word in cell.split())])
    longest_cell = max([header_word, *(len(cell) for cell in cells)])
    return max(longest_word, min(longest_cell, MIN_TEXT_WIDTH))


def _blocks(keys: list[int], others: list[int], widths: list[int], width: int) -> list[list[int]]:
    """Columns in order, as many per block as fit `width` (each column costs its width + 3: padding
    and a rule), every block led by the key columns."""
    base = 1 + sum(widths[index] + 3 for index in keys)
    blocks, current, used = [], [], base
    for index in others:
        cost = widths[index] + 3
        if current and used + cost > width:
            blocks.append(current)
            current, used = [], base
        current.append(index)
        used += cost
    if current or not blocks:
        blocks.append(current)
    return [sorted(keys + block) for block in blocks]


def fitted(table: catalogue.Catalogue, rows: Sequence, level: str, compared: bool = False, title: str | None = None,
           caption: str | None = None) -> FittedTable:
    return FittedTable(catalogue.render(table, rows, level, compared, title, caption))


def insert_table(rows: list[InsertRow], title: str, details: bool = False) -> FittedTable:
    """Inserts per worker count (or fill-level step, or target rate): the default figures, or every one;
    a flagged row's reasons under it."""
    hint = "" if details else " --details: every figure."
    return fitted(catalogue.INSERTS, rows, DETAILS if details else DEFAULT, title=title,
                  caption=" ".join([*flag_notes(rows), ("Latency per database call." + hint).strip()]))


def flag_notes(rows: list[InsertRow]) -> list[str]:
    return [f"{catalogue.FLAG_MARK} {row.workers} worker{'' if row.workers == 1 else 's'}: {flag.text}." for row in rows for flag in row.flags]


def steps_table(rows: list[InsertRow], step: str, details: bool = False) -> FittedTable:
    return fitted(catalogue.INSERTS, rows, DETAILS if details else DEFAULT, title=f"Fill level (step: {step})",
                  caption="Storage B/ev (--details) = data size after the step / events stored.")


def query_table(rows: list[QueryRow], title: str, details: bool = False) -> FittedTable:
    return fitted(catalogue.QUERIES, rows, DETAILS if details else DEFAULT, title=title)


def scan_table(rows: list[ScanRow], title: str, details: bool = False) -> FittedTable:
    return fitted(catalogue.SCANS, rows, DETAILS if details else DEFAULT, title=title)


def query_under_ingest_table(rows: list[QueryUnderIngestRow], databases: bool = False) -> FittedTable:
    if databases:
        return _compared(catalogue.UNDER_INGEST, rows, "Queries under ingest")
    return fitted(catalogue.UNDER_INGEST, rows, DEFAULT, title="Queries under ingest")


def visibility_table(rows: list[InsertRow], compared: bool = False) -> FittedTable:
    lags = [row for row in rows if row.visibility_unseen is not None]
    return _compared(catalogue.VISIBILITY, lags) if compared else fitted(catalogue.VISIBILITY, lags, DEFAULT)


def crosscheck_table(rows: list[CrossCheck], details: bool = True) -> FittedTable:
    return fitted(catalogue.CROSSCHECKS, rows, DETAILS if details else DEFAULT, title="Database-side cross-check")


def rate_steps(search: MaxRateSearch) -> list[SimpleNamespace]:
    """The search's steps, numbered."""
    return [SimpleNamespace(number=number, **step.model_dump()) for number, step in enumerate(search.steps, 1)]


def rate_search_table(search: MaxRateSearch) -> FittedTable:
    """--find-max-rate: every rate tried, in order, and whether it passed."""
    return fitted(catalogue.RATE_STEPS, rate_steps(search), DEFAULT,
                  title=f"Highest sustainable rate: response-time p99 <= {search.latency_p99_ms:g} ms, {search.step_s:g} s per rate")


def _numbered_sources(rows: Sequence) -> tuple[list, str]:
    """Rows whose source folder is a number (a folder's name would take half of an 80-column terminal),
    and the line that names each number's folder."""
    numbers = {source: str(index) for index, source in enumerate(dict.fromkeys(row.source for row in rows), 1)}
    legend = "Source: " + "; ".join(f"{number} = {source}" for source, number in numbers.items()) + "."
    return [row.model_copy(update={"source": numbers[row.source]}) for row in rows], legend


def _compared(table: catalogue.Catalogue, rows: Sequence, title: str | None = None, caption: str = "") -> FittedTable:
    numbered, legend = _numbered_sources(rows)
    fitted_table = fitted(table, numbered, COMPARE, compared=True, title=title)
    fitted_table.rendered.caption = " ".join(filter(None, [legend, fitted_table.rendered.caption, caption]))
    return fitted_table


def compare_insert_table(rows: list[CompareInsertRow]) -> FittedTable:
    return _compared(catalogue.INSERTS, rows, "Inserts across runs",
                     "Client shares, memory and every other figure: compare.html (expand Every other figure) and inserts.csv.")


def compare_query_table(rows: list[CompareQueryDetail]) -> FittedTable:
    return _compared(catalogue.COMPARED_QUERIES, rows)


def compare_scan_table(rows: list[CompareScanRow]) -> FittedTable:
    return _compared(catalogue.SCANS, rows, "Scans across runs")
