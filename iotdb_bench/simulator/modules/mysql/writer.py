"""The mysql module's write path: statements rendered to SQL text while preparing (every value is a
generated number, timestamp or fixed-alphabet id, so no escaping is needed and a timed call is only
the round trips), a batch as single-row INSERTs or values lists under one COMMIT, single INSERTs in
autocommit or in the --commit-interval transaction; deadlocks and lock wait timeouts are retried.
A batch's rows are written with NumPy (simulator/wire/text_rows.py), without a Python step per event:
PyMySQL takes the statements as bytes and sends them as they are."""

from __future__ import annotations

import numpy as np

from iotdb_bench.simulator.modules.base import DatabaseModule, WriterRole
from iotdb_bench.simulator.modules.mysql.options import MysqlRole
from iotdb_bench.simulator.retry import Retry
from iotdb_bench.simulator.spec import PrimaryKey
from iotdb_bench.simulator.wire import text_rows
from iotdb_bench.simulator.workload.events import EventBatch

# ER_LOCK_DEADLOCK and ER_LOCK_WAIT_TIMEOUT: the transaction can simply be run again.
RETRYABLE_ERRORS = {1213, 1205}
# Well below every server's default max_allowed_packet (MariaDB 16 MiB, MySQL 64 MiB).
MAX_STATEMENT_BYTES = 1 << 20
# Each row of a batch's text ends so: the rows joined are a values list, and split there, single rows
# (no generated value holds a comma or a line break).
_ROW_END = b",\n"


class MysqlWriter(MysqlRole, WriterRole):
    def __init__(self, module: DatabaseModule):
        super().__init__(module)
        self.retry: Retry = Retry(self.options.max_retries, _is_retryable)
        self._with_key = self.spec.primary_key is PrimaryKey.client
        # Each table's INSERT: the same columns for all, except TSBS's measurements (quoted: devops' `reads` is a keyword).
        quote = "`" if self.spec.tsbs else ""
        self._heads = {table: f"INSERT INTO {table} ({', '.join(f'{quote}{name}{quote}' for name in layout.names + (('id',) if self._with_key else ()))}) "
                              "VALUES ".encode() for table, layout in self.layouts.items()}

    def prepare_batch(self, batch: EventBatch) -> list[bytes]:
        statements: list[bytes] = []
        for table, part in self.per_table(batch):
            head = self._heads[table]
            rows = self._rows(table, part)
            if self.options.chosen_batch_mode == "values":
                statements += _multi_row_statements(head, rows)
            else:
                statements += [head + row for row in _single_rows(rows)]
        return statements

    @property
    def batches_in_autocommit(self) -> bool:
        """Values lists into one table: a batch is mostly one statement, which autocommit commits on
        the server, without the COMMIT round trip (the connection is opened in autocommit)."""
        return bool(self.spec.batch) and self.options.chosen_batch_mode == "values" and len(self.spec.table_names) == 1

    def insert_batch(self, prepared: list[bytes]) -> None:
        conn = self.module.conn
        if len(prepared) == 1 and conn.get_autocommit():
            [statement] = prepared

            def one_statement() -> None:
                with conn.cursor() as cursor:
                    cursor.execute(statement)

            self.retry.call(one_statement)  # a statement that failed was rolled back by the server
            return

        def transaction() -> None:
            if conn.get_autocommit():
                conn.begin()  # a batch is one transaction, even in autocommit
            with conn.cursor() as cursor:
                for statement in prepared:
                    cursor.execute(statement)
            conn.commit()

        self.retry.call(transaction, before_retry=conn.rollback)

    def prepare_single(self, batch: EventBatch) -> list[bytes]:
        return [self._heads[table] + row for table, row in self.rows_per_table(batch, lambda table, part: _single_rows(self._rows(table, part)))]

    def insert_single(self, statement: bytes) -> None:
        conn = self.module.conn

        def call() -> None:
            with conn.cursor() as cursor:
                cursor.execute(statement)

        if self.spec.commit_interval_s:
            call()  # inside the --commit-interval transaction: a failed statement spoils it, nothing to retry
        else:
            self.retry.call(call)

    def commit(self) -> None:
        self.module.conn.commit()

    def _rows(self, table: str, batch: EventBatch) -> np.ndarray:
        """One `(...)` SQL tuple per event and _ROW_END, as rows of text_rows; the values need no
        escaping (see the module docstring); TSBS's IoT nulls as NULL."""
        columns = [text_rows.constant("(")]
        for position, column in enumerate(self.layouts[table].columns):
            if position:
                columns.append(text_rows.constant(","))
            if column.kind == "timestamp":
                columns += [text_rows.constant("'"), text_rows.datetimes(batch.timestamp_ms), text_rows.constant("'")]
            else:
                columns += text_rows.value(column.kind, column.values(batch), quote="'", nulls=column.nulls(batch) if column.nullable else None)
        if self._with_key:
            columns += [text_rows.constant(",'"), text_rows.fixed(batch.client_key), text_rows.constant("'")]
        columns.append(text_rows.constant(")" + _ROW_END.decode()))
        return text_rows.text_rows(columns, len(batch))


def _is_retryable(error: BaseException) -> bool:
    """Deadlocks and lock wait timeouts: the transaction can simply run again."""
    import pymysql

    return isinstance(error, pymysql.err.OperationalError) and error.args[0] in RETRYABLE_ERRORS


def _single_rows(rows: np.ndarray) -> list[bytes]:
    return text_rows.compact(rows).split(_ROW_END)[:-1]


def _multi_row_statements(head: bytes, rows: np.ndarray) -> list[bytes]:
    """Multi-row INSERTs, each kept under MAX_STATEMENT_BYTES (rows are at most rows.shape[1] bytes)."""
    per_statement = max(1, (MAX_STATEMENT_BYTES - len(head)) // max(1, rows.shape[1]))
    return [head + text_rows.compact(rows[first : first + per_statement])[: -len(_ROW_END)]
            for first in range(0, len(rows), per_statement)]
