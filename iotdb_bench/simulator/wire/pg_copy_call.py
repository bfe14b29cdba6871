"""One COPY FROM STDIN statement in autocommit, sent through psycopg's libpq wrapper (`psycopg.pq`,
the driver's documented low-level API) instead of its cursor and Copy objects.

Per batch of 1000 events, psycopg's high-level COPY path costs the client about twice the CPU of the
libpq calls themselves (its generator-based protocol steps, cursor and result objects); through
`psycopg.pq` the client's CPU per COPY is that of a C driver (measured against psycopg2 by
benchmarks/postgres_overhead.py and docs/performance.md). The connection must be idle in
autocommit: the statement is its own transaction, committed by the server, and the connection is
idle again afterwards, so psycopg's own objects keep working. Waiting is done with `select`, which
releases the GIL (the worker's progress thread keeps running).
"""

from __future__ import annotations

import select
from collections.abc import Callable


def copy_in(connection, statement: bytes, data: bytes | memoryview, while_waiting: Callable[[], None] = lambda: None) -> None:
    """Send `data` with the COPY `statement`; `while_waiting` runs once the data is on the wire, while
    the server stores it. Raises the driver's error for the server's error (its SQLSTATE kept)."""
    from psycopg import pq

    pgconn = connection.pgconn
    pgconn.send_query(statement)  # the wrapper raises the driver's error when libpq refuses
    _flush(pgconn)
    started = _next_result(pgconn)
    if started is None or started.status != pq.ExecStatus.COPY_IN:
        _drain(pgconn)
        raise _error(connection, started)
    _put(pgconn, pgconn.put_copy_data, data)
    _put(pgconn, pgconn.put_copy_end)
    _flush(pgconn)
    while_waiting()
    finished = _next_result(pgconn)
    _drain(pgconn)
    if finished is None or finished.status != pq.ExecStatus.COMMAND_OK:
        raise _error(connection, finished)


def _put(pgconn, call: Callable[..., int], *data: bytes | memoryview) -> None:
    """put_copy_data / put_copy_end: 1 queued, 0 the output buffer is full (wait, retry); the wrapper
    raises the driver's error when libpq fails."""
    while call(*data) == 0:
        select.select([], [pgconn.socket], [])


def _flush(pgconn) -> None:
    while pgconn.flush() == 1:
        readable, _, _ = select.select([pgconn.socket], [pgconn.socket], [])
        if readable:  # the server wrote meanwhile (a notice): read it, or the socket stays readable
            pgconn.consume_input()


def _next_result(pgconn):
    """The next result, read once the socket is readable, as psycopg waits: `is_busy` parses what
    libpq holds already; reading before waiting would cost a failed TLS read per wait."""
    while pgconn.is_busy():
        select.select([pgconn.socket], [], [])
        pgconn.consume_input()
    return pgconn.get_result()


def _drain(pgconn) -> None:
    while _next_result(pgconn) is not None:
        pass


def _error(connection, result):
    from psycopg import errors

    if result is None:
        return errors.OperationalError(connection.pgconn.get_error_message() or "the server sent no result for COPY")
    return errors.error_from_result(result, encoding=connection.info.encoding)
