"""What every CSV file of the tool must be, checked against results.json: the catalogue's columns, and
cells that read back exactly the saved values."""

from __future__ import annotations

import csv

from iotdb_bench.cli.report import csv_files


def read_csv(path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="") as handle:
        reader = csv.DictReader(handle)
        return list(reader.fieldnames or []), list(reader)


def json_at(data, path: str):
    for part in path.split("."):
        if data is None:
            return None
        data = [item[part] for item in data] if isinstance(data, list) else data[part]
    return data


def expected_cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return "; ".join(expected_cell(item) for item in value)
    return repr(value) if isinstance(value, float) else str(value)


def names(tables, compared=False) -> list[str]:
    return [csv_files.column_name(column) for column in csv_files.columns(tables, compared)]


def assert_round_trip(header, rows, saved_rows) -> None:
    """Every path column's cell is the saved value, numbers exactly (no separator, unit or rounding)."""
    assert len(rows) == len(saved_rows) > 0
    for row, saved in zip(rows, saved_rows):
        for column in header:
            value = json_at(saved, column)
            assert row[column] == expected_cell(value), column
            if isinstance(value, float):
                assert float(row[column]) == value, column
            elif isinstance(value, int) and not isinstance(value, bool):
                assert int(row[column]) == value, column
