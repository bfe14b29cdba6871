"""A value read over PostgreSQL's wire protocol (psycopg), for the modules that speak it (postgres,
timescaledb, questdb): the first column of the one row an aggregate or a function always returns."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from psycopg import Connection, Cursor
    from psycopg.rows import TupleRow


class NoRow(Exception):
    """A statement that always returns a row returned none."""


def first_value(source: Connection[TupleRow] | Cursor[TupleRow], statement: str, params: tuple[Any, ...] | None = None) -> Any:
    """The first column of the first row of `statement` (a count, a size, a version...), run on a
    connection or a cursor."""
    row = source.execute(statement, params).fetchone()
    if row is None:
        raise NoRow(f"the server returned no row for {statement}")
    return row[0]
