"""The clickhouse module's write path: a batch as one INSERT whose rows travel as NumPy columns, one
block per table (TSBS's rows: its measurement tables' columns, tsbs.py); a single insert as a one-row INSERT."""

from __future__ import annotations

import numpy as np

from iotdb_bench.simulator.modules.base import DatabaseModule, WriterRole
from iotdb_bench.simulator.modules.clickhouse.options import ClickhouseRole
from iotdb_bench.simulator.workload.events import EventBatch


class ClickhouseWriter(ClickhouseRole, WriterRole):
    def __init__(self, module: DatabaseModule):
        super().__init__(module)
        self._inserts = {table: f"INSERT INTO {qualified} ({', '.join(self.layout.names)}) VALUES" for table, qualified in self.module.tables.items()}
        if self.spec.tsbs:
            self._inserts = {table: self.module.tsbs_tables.row_insert(table) for table in self.module.tables}

    def prepare_batch(self, batch: EventBatch) -> list[tuple[str, list[np.ndarray]]]:
        return [(self._inserts[table], self._columns(table, part)) for table, part in self.per_table(batch)]

    def insert_batch(self, prepared: list[tuple[str, list[np.ndarray]]]) -> None:
        for statement, columns in prepared:
            self.module.execute(statement, columns, columnar=True)

    def prepare_single(self, batch: EventBatch) -> list[tuple[str, list[np.ndarray]]]:
        """One one-row INSERT per event, in the batch's order (a --duration run may stop between two)."""

        def one_row_each(table: str, part: EventBatch) -> list[list[np.ndarray]]:
            columns = self._columns(table, part)
            return [[column[i : i + 1] for column in columns] for i in range(len(part))]

        return [(self._inserts[table], columns) for table, columns in self.rows_per_table(batch, one_row_each)]

    def _columns(self, table: str, batch: EventBatch) -> list[np.ndarray]:
        """The table's columns in INSERT order; timestamps as epoch ms, which is also how DateTime64(3)
        takes them (the driver writes integers as the column's raw ticks)."""
        if self.spec.tsbs:
            return self.module.tsbs_tables.row_columns(table, batch)
        return [column.values(batch) for column in self.layout.columns]

    def insert_single(self, item: tuple[str, list[np.ndarray]]) -> None:
        statement, columns = item
        self.module.execute(statement, columns, columnar=True)
