"""Values read over PostgreSQL's wire protocol (psycopg), for the modules that speak it (postgres,
timescaledb, questdb): the first column of the one row an aggregate or a function always returns,
and a query's answer decoded after its timed call."""

from __future__ import annotations

from collections.abc import Callable
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


def received(cursor: Cursor[TupleRow]) -> Callable[[], list[TupleRow]]:
    """The rows of the statement `cursor` has run, decoded when called. A client-side cursor's
    `execute` returns once the whole answer has arrived (libpq holds it); `fetchall` only decodes it
    into Python values, which the timed call leaves out (simulator/checks/answers.py)."""

    def decode() -> list[TupleRow]:
        with cursor:
            return cursor.fetchall()

    return decode
