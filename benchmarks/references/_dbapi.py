"""What the references over a DB-API driver (psycopg2, PyMySQL) share: counting through one
connection opened at the first count (the runner counts right after the last write), and dropping
their table."""

from __future__ import annotations

from collections.abc import Callable


def counter(connect: Callable, table: str) -> Callable[[], int]:
    opened = []

    def count() -> int:
        if not opened:
            opened.append(connect())
        with opened[0].cursor() as cursor:
            cursor.execute(f"SELECT count(*) FROM {table}")
            return int(cursor.fetchone()[0])

    return count


def drop_table(connect: Callable, table: str) -> None:
    connection = connect()
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {table}")
    connection.close()
