"""The questdb module's schema and counting over the PostgreSQL wire protocol: WAL tables with the
run's designated timestamp and partitioning (and DEDUP keys when asked), or TSBS's (tsbs.py), counts, the wait until
acknowledged rows are visible, and table_storage()'s rows and sizes."""

from __future__ import annotations

from typing import Any

from iotdb_bench.simulator.modules.base import SchemaRole, count_until
from iotdb_bench.simulator.modules.questdb import tsbs
from iotdb_bench.simulator.modules.questdb.options import COLUMN_TYPES, QuestdbRole
from iotdb_bench.simulator.report import IngestionWait
from iotdb_bench.simulator.spec import PrimaryKey
from iotdb_bench.simulator.wire.pg_values import first_value


class QuestdbSchema(QuestdbRole, SchemaRole):
    def setup(self) -> None:
        for table in self.spec.table_names:
            if self.spec.clean:
                self.module.conn.execute(f"DROP TABLE IF EXISTS {table}")
            self.module.conn.execute(self.create_table_statement(table))

    def create_table_statement(self, table: str) -> str:
        if self.spec.tsbs:
            return tsbs.create_table(self.spec.shape, table, self.options.partition_by, self.options.dedup)
        columns = [f"{column.name} {COLUMN_TYPES[column.kind]}" for column in self.layout.columns]
        keys = [column.name for column in self.layout.columns if column.kind in ("timestamp", "device", "sensor")]
        if self.spec.primary_key is PrimaryKey.client:
            columns.append("id VARCHAR")
            keys.append("id")
        statement = (f"CREATE TABLE IF NOT EXISTS {table} ({', '.join(columns)}) TIMESTAMP(timestamp) "
                     f"PARTITION BY {self.options.partition_by} WAL")
        if self.options.dedup:
            statement += f" DEDUP UPSERT KEYS({', '.join(keys)})"
        return statement

    def server_version(self) -> str:
        # build() answers "Build Information: QuestDB 9.2.2, JDK ..., Commit Hash ..."
        return str(first_value(self.module.conn, "SELECT build()")).removeprefix("Build Information: ")

    def count(self) -> int:
        return sum(int(first_value(self.module.conn, f"SELECT count() FROM {table}")) for table in self.spec.table_names)

    def wait_for_count(self, expected: int, run_ended_at: float) -> IngestionWait:
        """Rows acknowledged by ILP are visible once QuestDB has applied its write-ahead log: count until
        they all are (bounded), and say how long that took after the run."""
        return count_until(self.count, expected, run_ended_at, self.options.commit_wait_s, self.options.commit_poll_s)

    def server_counters(self) -> dict[str, int] | None:
        """Rows of the run's tables as QuestDB's table_storage() reports them (its transaction files, not a scan)."""
        return {"rows": sum(row[0] for row in self._table_storage("rowCount"))}

    def storage_bytes(self) -> int | None:
        return sum(int(row[0]) for row in self._table_storage("diskSize"))

    def _table_storage(self, column: str) -> list[tuple[Any, ...]]:
        return self.module.conn.execute(
            f"SELECT {column} FROM table_storage() WHERE tableName IN ({', '.join(['%s'] * len(self.spec.table_names))})",
            self.spec.table_names).fetchall()
