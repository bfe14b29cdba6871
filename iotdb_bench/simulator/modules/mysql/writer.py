"""The mysql module's write path: statements rendered to SQL text while preparing (every value is a
generated number, timestamp or fixed-alphabet id, so no escaping is needed and a timed call is only
the round trips), a batch as single-row INSERTs or values lists under one COMMIT, single INSERTs in
autocommit or in the --commit-interval transaction; deadlocks and lock wait timeouts are retried."""

from __future__ import annotations

import numpy as np

from iotdb_bench.simulator.events import EventBatch
from iotdb_bench.simulator.modules.base import DatabaseModule, Role, WriterRole
from iotdb_bench.simulator.modules.mysql.options import MysqlOptions
from iotdb_bench.simulator.retry import Retry
from iotdb_bench.simulator.spec import PrimaryKey

# ER_LOCK_DEADLOCK and ER_LOCK_WAIT_TIMEOUT: the transaction can simply be run again.
RETRYABLE_ERRORS = {1213, 1205}
# Well below every server's default max_allowed_packet (MariaDB 16 MiB, MySQL 64 MiB).
MAX_STATEMENT_BYTES = 1 << 20
# How a value of each kind is written in SQL text: quoted, or as Python writes the number.
_LITERALS = {"timestamp": "'{}'", "device": "'{}'", "text": "'{}'", "float": "{!r}"}


class MysqlWriter(Role, WriterRole):
    options: MysqlOptions

    def __init__(self, module: DatabaseModule):
        super().__init__(module)
        self.retry = Retry(self.options.max_retries, _is_retryable)
        self._with_key = self.spec.primary_key is PrimaryKey.client
        columns = self.layout.names + (("id",) if self._with_key else ())
        self._insert_head = "INSERT INTO {table} (" + ", ".join(columns) + ") VALUES "
        literals = [_LITERALS.get(column.kind, "{}") for column in self.layout.columns] + (["'{}'"] if self._with_key else [])
        self._row_format = "(" + ",".join(literals) + ")"

    def prepare_batch(self, batch: EventBatch) -> list[str]:
        statements: list[str] = []
        for table, part in self.per_table(batch):
            head = self._insert_head.format(table=table)
            values = self._values(part)
            if self.options.chosen_batch_mode == "values":
                statements += _multi_row_statements(head, values)
            else:
                statements += [head + row for row in values]
        return statements

    @property
    def batches_in_autocommit(self) -> bool:
        """Values lists into one table: a batch is mostly one statement, which autocommit commits on
        the server, without the COMMIT round trip (the connection is opened in autocommit)."""
        return bool(self.spec.batch) and self.options.chosen_batch_mode == "values" and len(self.spec.table_names) == 1

    def insert_batch(self, prepared: list[str]) -> None:
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

    def prepare_single(self, batch: EventBatch) -> list[str]:
        heads = {table: self._insert_head.format(table=table) for table in self.spec.table_names}
        return [heads[table] + row for table, row in zip(self.table_of_each(batch), self._values(batch))]

    def insert_single(self, statement: str) -> None:
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

    def _values(self, batch: EventBatch) -> list[str]:
        """One `(...)` SQL tuple per event; the values need no escaping (see the module docstring)."""
        rows = self.layout.python_rows(batch, timestamp=_datetimes, key=batch.client_key if self._with_key else None)
        return [self._row_format.format(*row) for row in rows]


def _datetimes(timestamp_ms: np.ndarray) -> list[str]:
    return np.datetime_as_string(timestamp_ms.astype("datetime64[ms]")).tolist()


def _is_retryable(error: BaseException) -> bool:
    """Deadlocks and lock wait timeouts: the transaction can simply run again."""
    import pymysql

    return isinstance(error, pymysql.err.OperationalError) and error.args[0] in RETRYABLE_ERRORS


def _multi_row_statements(head: str, values: list[str]) -> list[str]:
    """Multi-row INSERTs, each kept under MAX_STATEMENT_BYTES."""
    statements, chunk, size = [], [], len(head)
    for row in values:
        if chunk and size + len(row) + 1 > MAX_STATEMENT_BYTES:
            statements.append(head + ",".join(chunk))
            chunk, size = [], len(head)
        chunk.append(row)
        size += len(row) + 1
    if chunk:
        statements.append(head + ",".join(chunk))
    return statements
