"""The terminal's view of the catalogue (cli/results/tables/catalogue.py): tables that fit the terminal.

A table is laid out when it is printed, for the width it is printed at: the columns that fit go side
by side; the rest follow in further blocks that repeat the columns naming the row (workers, query,
database), so no figure is ever cut, wrapped or truncated, at 80 columns as at 200. The caption
(abbreviations explained once, then the conditions) is wrapped between words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from iotdb_bench.cli.results.tables import catalogue, formats
from iotdb_bench.cli.results.tables.catalogue import COMPARE, DEFAULT, DETAILS, Catalogue, Figure, Rendered
from iotdb_bench.cli.results.tables.sections import Section

MIN_TEXT_WIDTH = 12  # a column of words narrower than this wraps into too many lines
MIN_FOLD = 8  # a column of words squeezed by its keys is never narrower than this


@dataclass
class FittedTable:
    """A rendered table that splits its columns into blocks to fit the width it is printed at."""

    rendered: Rendered
    caption: str = ""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        figures, rows = self.rendered.figures, self.rendered.rows
        yield Text(self.rendered.title, style="bold")
        minimums = [_min_width(figure, [row[i] for row in rows]) for i, figure in enumerate(figures)]
        for block in _blocks(figures, minimums, width):
            table = Table(box=box.HEAVY_HEAD, expand=False)
            floors = _floors(figures, minimums, block, width)
            widths = _widths([figures[index] for index in block], [[row[index] for row in rows] for index in block],
                             [floors[index] for index in block], width - len(block) - 1)
            for index, fixed in zip(block, widths, strict=True):
                figure = figures[index]
                table.add_column(figure.header, justify="left" if figure.text else "right", no_wrap=not figure.text or figure.key,
                                 min_width=floors[index], width=fixed, overflow="fold")
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


def _floors(figures: list[Figure], minimums: list[int], block: list[int], width: int) -> dict[int, int]:
    """The narrowest each column of a block may be: its minimum, except a column of words beside keys that
    leave it less room than its longest word, which then folds that word (MIN_FOLD at the least)."""
    room = width - _used([index for index in block if figures[index].key], minimums) - 3
    return {index: min(minimums[index], max(room, MIN_FOLD)) if figures[index].text and not figures[index].key else minimums[index]
            for index in block}


def _widths(figures: list[Figure], cells: list[list[str]], minimums: list[int], room: int) -> list[int | None]:
    """The widths of the columns of words in a block too wide for `room` (None: as wide as they need).

    rich narrows such a table by shrinking its widest columns of words in turn, but not below the
    longest word of each, so a column of long words can push it past the width. This shrinks them the
    same way, each only down to its minimum (the blocks leave room for every minimum)."""
    padding = 2
    widths = [max([cell_len(figure.header), *(cell_len(cell) for cell in column)]) + padding for figure, column in zip(figures, cells, strict=True)]
    floors = [minimum + padding for minimum in minimums]
    wrapping = [figure.text and not figure.key for figure in figures]
    excess = sum(widths) - room
    if excess <= 0 or not any(wrapping):
        return [None] * len(figures)
    while excess > 0:
        shrinkable = [index for index, width in enumerate(widths) if wrapping[index] and width > floors[index]]
        if not shrinkable:
            break
        widest = max(widths[index] for index in shrinkable)
        second = max((width for index, width in enumerate(widths) if wrapping[index] and width < widest), default=0)
        ratios = [1 if index in shrinkable and widths[index] == widest else 0 for index in range(len(widths))]
        limits = [min(excess, widest - second, widths[index] - floors[index]) for index in range(len(widths))]
        widths = _reduce(excess, ratios, limits, widths)
        excess = sum(widths) - room
    return [width - padding if wrapping[index] else None for index, width in enumerate(widths)]


def _reduce(total: int, ratios: list[int], limits: list[int], values: list[int]) -> list[int]:
    """`total` taken from the values in proportion to the ratios, none losing more than its limit
    (rich's own division of a reduction, so a table rich fits alone comes out the same)."""
    ratios = [ratio if limit > 0 else 0 for ratio, limit in zip(ratios, limits, strict=True)]
    remaining, shares = total, sum(ratios)
    result = []
    for ratio, limit, value in zip(ratios, limits, values, strict=True):
        if ratio and shares > 0:
            taken = min(limit, round(ratio * remaining / shares))
            result.append(value - taken)
            remaining -= taken
            shares -= ratio
        else:
            result.append(value)
    return result


def _blocks(figures: list[Figure], widths: list[int], width: int) -> list[list[int]]:
    """Columns in order, as many per block as fit `width` (each column costs its width + 3: padding
    and a rule), every block led by the key columns. Where the keys leave a column no room, the first
    block leads with every key and the others with the keys that name the row without the spare ones
    (a compared row's database: its numbered source names it)."""
    keys = [index for index, figure in enumerate(figures) if figure.key]
    others = [index for index, figure in enumerate(figures) if not figure.key]
    blocks = _packed(keys, others, widths, width)
    if not others or all(_used(block, widths) <= width for block in blocks):
        return blocks
    naming = [index for index in keys if not figures[index].spare]
    first = _packed(keys, others, widths, width)[0] if _used(keys, widths) + widths[others[0]] + 3 <= width else sorted(keys)
    rest = [index for index in others if index not in first]
    return [first, *(_packed(naming, rest, widths, width) if rest else [])]


def _packed(keys: list[int], others: list[int], widths: list[int], width: int) -> list[list[int]]:
    base = _used(keys, widths)
    blocks: list[list[int]] = []
    current: list[int] = []
    used = base
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


def _used(columns: list[int], widths: list[int]) -> int:
    """The width a block of these columns takes: each its width + padding + a rule, and the last rule."""
    return 1 + sum(widths[index] + 3 for index in columns)


def fitted(table: Catalogue, rows: Sequence[Any], level: str, compared: bool = False, title: str | None = None,
           caption: str | None = None) -> FittedTable:
    return FittedTable(catalogue.render(table, rows, level, compared, title, caption))


def section_table(section: Section, details: bool = False, under: str = "") -> FittedTable:
    """A section as the terminal shows it: its default figures, or every one with --details; compared
    rows name their results folders by number (a folder's name would take half of an 80-column
    terminal) with the legend under the table; `under`: what follows the caption (the conditions)."""
    terminal = section.terminal
    rows, legend = _numbered_sources(section.rows) if section.compared else (list(section.rows), "")
    level = COMPARE if section.compared else DETAILS if details and terminal.detailed else DEFAULT
    words = section.caption if terminal.words is None else " ".join(filter(None, [terminal.words, "" if details else terminal.hint]))
    table = fitted(section.table, rows, level, section.compared, terminal.heading or section.heading, words)
    table.rendered.caption = " ".join(filter(None, [legend, table.rendered.caption, terminal.after]))
    differences = difference_lines(section.marked)
    if differences:
        under = "\n".join([under, "Measured under other conditions than the other rows:", *differences])
    table.caption = under
    return table


def difference_lines(rows: Sequence[Any]) -> list[str]:
    """The compared rows marked † and the conditions they differ in (the legend of the †)."""
    return [f"† {row.database} ({row.source}, {formats.workers(row.workers)}): {'; '.join(row.differs)}" for row in rows if row.differs]


def _numbered_sources(rows: Sequence[Any]) -> tuple[list[Any], str]:
    """Rows whose source folder is a number, and the line that names each number's folder."""
    numbers = {source: str(index) for index, source in enumerate(dict.fromkeys(row.source for row in rows), 1)}
    legend = "Source: " + "; ".join(f"{number} = {source}" for source, number in numbers.items()) + "."
    return [row.model_copy(update={"source": numbers[row.source]}) for row in rows], legend
