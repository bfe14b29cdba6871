"""The clickhouse module's schema and counting: the database, one MergeTree table per run table in
the server's dialect (or TSBS's tags table and one per measurement, tsbs.py), counts, the active parts' size, and the wait for rows buffered by async
inserts that did not wait for them."""

from __future__ import annotations

from iotdb_bench.simulator.modules.base import SchemaRole, count_until
from iotdb_bench.simulator.modules.clickhouse.options import ClickhouseRole
from iotdb_bench.simulator.report import IngestionWait

# Rows buffered by async inserts without waiting are written within async_insert_busy_timeout_ms
# (200 ms by default); the count check waits this long at most.
ASYNC_INSERT_COUNT_LIMIT_S = 60.0


class ClickhouseSchema(ClickhouseRole, SchemaRole):
    def setup(self) -> None:
        execute = self.module.execute
        execute(f"CREATE DATABASE IF NOT EXISTS {self.options.database}")
        if self.spec.tsbs:
            self._setup_tsbs()
            return
        for qualified in self.module.tables.values():
            if self.spec.clean:
                execute(f"DROP TABLE IF EXISTS {qualified}")
            execute(self.module.server_dialect.create_table(qualified, self.layout))

    def _setup_tsbs(self) -> None:
        """TSBS's tables, and the tags of every host the table lacks (a MergeTree keeps duplicates): the
        run's rows refer to them by tags_id."""
        execute, tables = self.module.execute, self.module.tsbs_tables
        for table in (*tables.measurements.values(), tables.tags) if self.spec.clean else ():
            execute(f"DROP TABLE IF EXISTS {table}")
        for statement in tables.create_statements(self.module.server_dialect):
            execute(statement)
        found = execute(f"SELECT id FROM {tables.tags}", columnar=True)
        stored = set(found[0].tolist()) if found else set()
        missing = [host_id for host_id in range(1, self.spec.all_devices + 1) if host_id not in stored]
        if missing:
            execute(*tables.tag_insert(self.spec.seed, missing), columnar=True)

    def server_version(self) -> str:
        return f"ClickHouse {self.module.execute('SELECT version()')[0][0]}"

    def count(self) -> int:
        return sum(int(self.module.execute(f"SELECT count() FROM {qualified}", columnar=True)[0][0]) for qualified in self.module.tables.values())

    def storage_bytes(self) -> int | None:
        names = ", ".join(f"'{table}'" for table in self.module.tables)
        rows = self.module.execute("SELECT sum(bytes_on_disk) FROM system.parts WHERE active AND database = %(database)s "
                                   f"AND table IN ({names})", {"database": self.options.database}, columnar=True)
        return int(rows[0][0])

    def wait_for_count(self, expected: int, run_ended_at: float) -> IngestionWait | None:
        if not (self.options.async_insert and not self.options.wait_for_async_insert):
            return None
        return count_until(self.count, expected, run_ended_at, limit_s=ASYNC_INSERT_COUNT_LIMIT_S, poll_s=0.1)
