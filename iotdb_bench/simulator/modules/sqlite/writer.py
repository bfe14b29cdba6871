"""The sqlite module's write path: a batch in one BEGIN IMMEDIATE transaction (single-row INSERTs
through executemany, or values lists), single INSERTs in autocommit or in the --commit-interval
transaction, which holds the write lock until the worker commits it."""

from __future__ import annotations

from typing import Any

from iotdb_bench.simulator.modules.base import DatabaseModule, WriterRole
from iotdb_bench.simulator.modules.sqlite.options import MAX_VARIABLES, SqliteRole
from iotdb_bench.simulator.spec import PrimaryKey
from iotdb_bench.simulator.wire import sql as sql_common
from iotdb_bench.simulator.workload.events import EventBatch


class SqliteWriter(SqliteRole, WriterRole):
    def __init__(self, module: DatabaseModule):
        super().__init__(module)
        self._in_transaction = False
        self._with_key = self.spec.primary_key is PrimaryKey.client
        # Each table's columns: the same for all, except TSBS's measurements.
        self._columns = {table: layout.names + (("id",) if self._with_key else ()) for table, layout in self.layouts.items()}
        self._single_statements = {table: sql_common.insert_statement(table, columns, 1, "?") for table, columns in self._columns.items()}

    def prepare_batch(self, batch: EventBatch) -> Any:
        return [(table, self._rows(table, part)) for table, part in self.per_table(batch)]

    def _rows(self, table: str, batch: EventBatch) -> list[tuple[Any, ...]]:
        return self.layouts[table].python_rows(batch, key=batch.client_key if self._with_key else None)

    def insert_batch(self, prepared: Any) -> None:
        conn = self.module.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            for table, rows in prepared:
                if self.options.use_values_lists:
                    self._values_lists(table, rows)
                else:
                    conn.executemany(self._single_statements[table], rows)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _values_lists(self, table: str, rows: list[tuple[Any, ...]]) -> None:
        columns = self._columns[table]
        per_statement = MAX_VARIABLES // len(columns)
        for first in range(0, len(rows), per_statement):
            chunk = rows[first : first + per_statement]
            statement = sql_common.insert_statement(table, columns, len(chunk), "?")
            self.module.conn.execute(statement, [value for row in chunk for value in row])

    def prepare_single(self, batch: EventBatch) -> list[tuple[str, tuple[Any, ...]]]:
        return self.rows_per_table(batch, self._rows)

    def insert_single(self, item: tuple[str, tuple[Any, ...]]) -> None:
        table, row = item
        if self.spec.commit_interval_s and not self._in_transaction:
            self.module.conn.execute("BEGIN IMMEDIATE")  # waits (busy timeout) while another worker's transaction is open
            self._in_transaction = True
        self.module.conn.execute(self._single_statements[table], row)

    def commit(self) -> None:
        if self._in_transaction:
            self.module.conn.execute("COMMIT")
            self._in_transaction = False
