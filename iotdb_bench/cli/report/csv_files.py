"""CSV files: the rows of a table for machines, their columns taken from the catalogue.

Every figure of the catalogues (cli/results/tables/catalogue.py) names its CSV columns; a file takes all of
them, at every level, in the catalogue's order (a compared row's columns, Database and Source, only in
compare's files), so its header is the same whatever the rows hold and a figure added to the
catalogue is in every file of its rows. A cell is the typed value itself: numbers as Python writes them
(they read back exactly), in the unit the column's name gives (`p99_ms.avg`, `avg_s`, a share as a
fraction); an empty cell for a figure not measured; lists joined with "; ".
"""

from __future__ import annotations

import csv
import enum
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from iotdb_bench.cli.results.tables.catalogue import Catalogue, Column
from iotdb_bench.cli.results.tables.sections import CSV, Section

LIST_SEPARATOR = "; "


def column_name(column: Column) -> str:
    return column if isinstance(column, str) else column[0]


def columns(tables: Sequence[Catalogue], compared: bool = False) -> list[Column]:
    """Every CSV column of the tables' figures, each once, in order."""
    found: dict[str, Column] = {}
    for table in tables:
        for figure in table.figures:
            if figure.compare_only and not compared:
                continue
            for column in figure.csv:
                found.setdefault(column_name(column), column)
    return list(found.values())


def value(row: Any, column: Column) -> Any:
    """The column's value in a row: a dotted path through its fields (across a list, each item's), or computed."""
    if not isinstance(column, str):
        return column[1](row)
    found = row
    for part in column.split("."):
        if found is None:
            return None
        found = [getattr(item, part) for item in found] if isinstance(found, list) else getattr(found, part)
    return found


def cell(found: Any) -> str:
    if found is None:
        return ""
    if isinstance(found, enum.Enum):
        return cell(found.value)
    if isinstance(found, bool | int | str):
        return str(found)
    if isinstance(found, float):
        return repr(found)  # the shortest text that reads back as the same float
    if isinstance(found, list | tuple):
        return LIST_SEPARATOR.join(cell(item) for item in found)
    raise TypeError(f"a CSV cell holds a number, words or a list of them, not {type(found).__name__}")


def write_sections(folder: Path, sections: Sequence[Section]) -> None:
    """The CSV file of every section that has one (cli/results/tables/sections.py), even without a row."""
    for section in sections:
        if section.csv and section.shown_in(CSV):
            write(folder / section.csv, (section.table, *section.csv_tables), section.rows, section.compared)


def write(path: Path, tables: Catalogue | Sequence[Catalogue], rows: Sequence[Any], compared: bool = False) -> None:
    """One line per row, headed by the columns of the tables' figures."""
    chosen = columns([tables] if isinstance(tables, Catalogue) else tables, compared)
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([column_name(column) for column in chosen])
        writer.writerows([cell(value(row, column)) for column in chosen] for row in rows)
