"""The postgres module's write path: a batch as one binary COPY (in autocommit into one table, through
the driver's libpq wrapper), as values lists or as pipelined single-row INSERTs, each committed on its
own; single INSERTs in autocommit or in the --commit-interval transaction; retries of serialisation
failures, deadlocks and CockroachDB's restart errors."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from iotdb_bench.simulator.modules.base import DatabaseModule, WriterRole
from iotdb_bench.simulator.modules.postgres.options import PostgresRole
from iotdb_bench.simulator.retry import Retry
from iotdb_bench.simulator.spec import PrimaryKey
from iotdb_bench.simulator.wire import sql as sql_common
from iotdb_bench.simulator.wire.pg_copy import CopyRowEncoder
from iotdb_bench.simulator.wire.pg_copy_call import copy_in
from iotdb_bench.simulator.workload.events import EventBatch

if TYPE_CHECKING:
    from psycopg import Cursor
    from psycopg.rows import TupleRow


# A row's parameters, in the table's column order.
Row = tuple[Any, ...]

# SQLSTATEs worth retrying: serialization_failure, deadlock_detected.
RETRYABLE_SQLSTATES = {"40001", "40P01"}
MAX_BIND_PARAMETERS = 65_535


class PostgresWriter(PostgresRole, WriterRole):
    def __init__(self, module: DatabaseModule):
        super().__init__(module)
        self.retry: Retry = Retry(self.options.max_retries, _is_retryable)
        self._with_key = self.spec.primary_key is PrimaryKey.client
        # Each table's columns and COPY encoder: the same for all, except TSBS's measurements.
        self._columns = {table: layout.names + (("id",) if self._with_key else ()) for table, layout in self.layouts.items()}
        self._copy_rows = {table: CopyRowEncoder(layout, self._with_key) for table, layout in self.layouts.items()}
        self._copy_statements = {
            table: f"COPY {table} ({', '.join(columns)}) FROM STDIN (FORMAT BINARY)" for table, columns in self._columns.items()
        }
        self._copy_statement_bytes = {table: statement.encode() for table, statement in self._copy_statements.items()}
        self._single_statements = {table: sql_common.insert_statement(table, columns, 1, "%s") for table, columns in self._columns.items()}

    @cached_property
    def one_copy_per_batch(self) -> bool:
        """A batch is one COPY statement (into the one table), which commits by itself in autocommit.
        Decided once (the options and the spec do not change): it is asked before every batch."""
        return self.options.chosen_batch_mode == "copy" and len(self.spec.table_names) == 1

    def prepare_batch(self, batch: EventBatch) -> Any:
        if self.options.chosen_batch_mode == "copy":
            return [(table, self._copy_rows[table].encode(part)) for table, part in self.per_table(batch)]
        return [(table, self._row_params(table, part)) for table, part in self.per_table(batch)]

    def prepare_batches(self, chunk: EventBatch, size: int) -> list[Any]:
        if self.one_copy_per_batch:  # the chunk's rows encoded at once, cut into one COPY buffer per batch
            # stored_events: the events as this module writes them (TimescaleDB restarts their timestamps)
            [table] = self.spec.table_names
            return self._copy_rows[table].prepared_for_one_table(table, self.stored_events(chunk), size)
        return super().prepare_batches(chunk, size)

    def insert_batch(self, prepared: Any) -> None:
        conn = self.module.conn
        if self.one_copy_per_batch and conn.autocommit:
            [(table, buffer)] = prepared
            statement, while_waiting = self._copy_statement_bytes[table], self.hooks.while_waiting
            self.retry.call(lambda: copy_in(conn, statement, buffer, while_waiting))
            return
        inserts: dict[str, Callable[[Cursor[TupleRow], str, Any], None]] = {
            "copy": self._copy, "values": self._values_lists, "transaction": self._transaction}
        insert = inserts[self.options.chosen_batch_mode]

        def transaction() -> None:
            with conn.cursor() as cursor:
                for table, payload in prepared:
                    insert(cursor, table, payload)
            if not conn.autocommit:
                conn.commit()

        self.retry.call(transaction, before_retry=conn.rollback)

    def prepare_single(self, batch: EventBatch) -> list[tuple[str, Row]]:
        return self.rows_per_table(batch, self._row_params)

    def insert_single(self, item: tuple[str, Row]) -> None:
        table, row = item
        statement, conn = self._single_statements[table], self.module.conn
        if conn.autocommit:
            self.retry.call(lambda: conn.execute(statement, row))
        else:  # inside the --commit-interval transaction: a failed statement spoils it, nothing to retry
            conn.execute(statement, row)

    def commit(self) -> None:
        self.module.conn.commit()

    def _row_params(self, table: str, batch: EventBatch) -> list[Row]:
        return self.layouts[table].python_rows(batch, timestamp=_datetimes, key=batch.client_key if self._with_key else None)

    def _copy(self, cursor: Cursor[TupleRow], table: str, buffer: bytes) -> None:
        with cursor.copy(self._copy_statements[table]) as copy:
            copy.write(buffer)
            self.hooks.while_waiting()

    def _values_lists(self, cursor: Cursor[TupleRow], table: str, rows: list[Row]) -> None:
        columns = self._columns[table]
        per_statement = MAX_BIND_PARAMETERS // len(columns)
        for first in range(0, len(rows), per_statement):
            chunk = rows[first : first + per_statement]
            statement = sql_common.insert_statement(table, columns, len(chunk), "%s")
            cursor.execute(statement, [value for row in chunk for value in row])

    def _transaction(self, cursor: Cursor[TupleRow], table: str, rows: list[Row]) -> None:
        cursor.executemany(self._single_statements[table], rows)


def _datetimes(timestamp_ms: np.ndarray) -> list[Any]:
    times: list[Any] = timestamp_ms.astype("datetime64[ms]").tolist()
    return times


def _is_retryable(error: BaseException) -> bool:
    """Serialisation failures, deadlocks and CockroachDB's restart errors: the transaction can run again."""
    import psycopg

    if not isinstance(error, psycopg.Error):
        return False
    message = str(error)
    return (
        getattr(error, "sqlstate", None) in RETRYABLE_SQLSTATES
        or "restart transaction" in message
        or "TransactionRetryWithProtoRefreshError" in message
    )
